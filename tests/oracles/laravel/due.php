<?php
// The oracle of tests/test_laravel_dst.py: when Laravel's scheduler runs a task with
// ->timezone(ZONE). Every minute `schedule:run` asks Event::expressionPasses(), which is
//     $date = Date::now()->setTimezone($this->timezone);
//     return (new CronExpression($this->expression))->isDue($date->toDateTimeString());
// This script asks dragonmantank/cron-expression (Debian's php-dragonmantank-cron-expression)
// the same question for every minute of a window of real time.
// stdin: lines "ZONE<TAB>FROM(unix seconds)<TAB>TO(unix seconds)<TAB>EXPRESSION";
// stdout: one JSON list per line, the due minutes as unix seconds.
require '/usr/share/php/Cron/autoload.php';
use Cron\CronExpression;

date_default_timezone_set('UTC');
while (($line = fgets(STDIN)) !== false) {
    [$zone, $from, $to, $expression] = explode("\t", rtrim($line, "\n"), 4);
    $cron = new CronExpression($expression);
    $tz = new DateTimeZone($zone);
    $due = [];
    for ($t = (int) $from; $t < (int) $to; $t += 60) {
        $now = (new DateTime('@' . $t))->setTimezone($tz);
        if ($cron->isDue($now->format('Y-m-d H:i:s'))) {
            $due[] = $t;
        }
    }
    echo json_encode($due), "\n";
}
