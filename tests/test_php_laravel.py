"""Laravel's frequency methods build the expressions Laravel builds: the cases of
``laravel/framework``'s own ``tests/Console/Scheduling/FrequencyTest.php``, ported one to
one, plus the scheduler's other spellings (facade, typed parameter, class constants)."""
import pytest

from jobsafe.sources.php.laravel import cache_store, scheduled_tasks
from jobsafe.sources.php.syntax import parse

# (chain after `$schedule->command('php foo')`, the expression Laravel's test asserts)
FREQUENCY_TEST = [
    ("", "* * * * *"),
    ("->everyMinute()", "* * * * *"),
    ("->everyTwoMinutes()", "*/2 * * * *"),
    ("->everyThreeMinutes()", "*/3 * * * *"),
    ("->everyFourMinutes()", "*/4 * * * *"),
    ("->everyFiveMinutes()", "*/5 * * * *"),
    ("->everyTenMinutes()", "*/10 * * * *"),
    ("->everyFifteenMinutes()", "*/15 * * * *"),
    ("->everyThirtyMinutes()", "*/30 * * * *"),
    ("->daily()", "0 0 * * *"),
    ("->dailyAt('13:08')", "8 13 * * *"),
    ("->twiceDaily(3, 15)", "0 3,15 * * *"),
    ("->twiceDailyAt(3, 15, 5)", "5 3,15 * * *"),
    ("->weekly()", "0 0 * * 0"),
    ("->weeklyOn(1, '8:00')", "0 8 * * 1"),
    ("->everyFiveMinutes()->hourly()", "0 * * * *"),
    ("->hourlyAt(37)", "37 * * * *"),
    ("->hourlyAt('*/10')", "*/10 * * * *"),
    ("->hourlyAt([15, 30, 45])", "15,30,45 * * * *"),
    ("->everyOddHour()", "0 1-23/2 * * *"),
    ("->everyTwoHours()", "0 */2 * * *"),
    ("->everyThreeHours()", "0 */3 * * *"),
    ("->everyFourHours()", "0 */4 * * *"),
    ("->everySixHours()", "0 */6 * * *"),
    ("->everyOddHour(37)", "37 1-23/2 * * *"),
    ("->everyTwoHours(37)", "37 */2 * * *"),
    ("->everySixHours('*/10')", "*/10 */6 * * *"),
    ("->everyThreeHours([15, 30, 45])", "15,30,45 */3 * * *"),
    ("->monthly()", "0 0 1 * *"),
    ("->monthlyOn(4, '15:00')", "0 15 4 * *"),
    ("->twiceMonthly(1, 16)", "0 0 1,16 * *"),
    ("->twiceMonthly(1, 16, '1:30')", "30 1 1,16 * *"),
    ("->monthlyOn(4, '15:15')", "15 15 4 * *"),
    ("->weekdays()->daily()", "0 0 * * 1-5"),
    ("->weekdays()->hourly()", "0 * * * 1-5"),
    ("->weekdays()", "* * * * 1-5"),
    ("->weekends()", "* * * * 6,0"),
    ("->sundays()", "* * * * 0"),
    ("->mondays()", "* * * * 1"),
    ("->tuesdays()", "* * * * 2"),
    ("->wednesdays()", "* * * * 3"),
    ("->thursdays()", "* * * * 4"),
    ("->fridays()", "* * * * 5"),
    ("->saturdays()", "* * * * 6"),
    ("->quarterly()", "0 0 1 1-12/3 *"),
    ("->yearly()", "0 0 1 1 *"),
    ("->yearlyOn(4, 5, '15:08')", "8 15 5 4 *"),
    ("->mondays()->yearlyOn(7, '*', '09:01')", "1 9 * 7 1"),
    ("->tuesdays()->yearlyOn(7, 20, '09:01')", "1 9 20 7 2"),
    # beyond Laravel's test: constants, days(), cron(), and the methods that filter only
    ("->days([Schedule::MONDAY, Schedule::FRIDAY])->at('7:30')", "30 7 * * 1,5"),
    ("->cron('15 2 * * *')->withoutOverlapping()->onOneServer()", "15 2 * * *"),
    ("->hourly()->between('8:00', '17:00')->environments(['production'])", "0 * * * *"),
]


def tasks(code):
    return scheduled_tasks(parse("Kernel.php", "<?php\n" + code))


@pytest.mark.parametrize("chain,expected", FREQUENCY_TEST)
def test_frequency_methods_build_laravels_expression(chain, expected):
    [task] = tasks(f"$schedule->command('php foo'){chain};")
    assert task.expression == expected


def test_seconds_repeat_inside_the_minute():
    [task] = tasks("$schedule->job(new Poll)->everyTenSeconds();")
    assert (task.expression, task.repeat_seconds) == ("* * * * *", 10)


def test_last_day_of_month_is_every_months_last_day():
    # Laravel writes the current month's last day, read again at each schedule:run
    [task] = tasks("$schedule->command('close')->lastDayOfMonth('23:00');")
    assert task.expression == "0 23 L * *"


def test_an_argument_not_known_statically_leaves_the_schedule_unknown():
    [task] = tasks("$schedule->command('sync')->dailyAt(config('sync.time'));")
    assert task.expression is None


@pytest.mark.parametrize("code", [
    "$schedule->command('a:b')->hourly();",
    "Schedule::command('a:b')->hourly();",
    "use Illuminate\\Support\\Facades\\Schedule as S;\nS::command('a:b')->hourly();",
    "function (Schedule $s) { $s->command('a:b')->hourly(); };",
    "class K { protected function schedule(Schedule $sched): void {\n"
    "  $sched->command('a:b')\n      ->hourly(); } }",
])
def test_the_scheduler_spelled_every_way_gives_the_same_task(code):
    [task] = tasks(code)
    assert (task.kind, task.what, task.expression) == ("command", "a:b", "0 * * * *")


def test_not_a_scheduler_is_not_a_task():
    assert tasks("$queue->command('a:b')->hourly();\nArtisan::call('a:b');") == []


@pytest.mark.parametrize("config,env,driver,scope", [
    ("'default' => env('CACHE_DRIVER', 'file'),", None, "file", "host"),
    ("'default' => env('CACHE_STORE', 'database'),", "CACHE_STORE=redis\n", "redis", "cluster"),
    ("'default' => env('CACHE_DRIVER', 'file'),", "CACHE_DRIVER=array\n", "array", "process"),
    ("'default' => 'memcached',", None, "memcached", "cluster"),
    (None, "CACHE_STORE=file\n", "file", "host"),
])
def test_the_cache_store_decides_where_mutexes_live(config, env, driver, scope):
    store = cache_store(("config/cache.php", config) if config else None,
                        (".env.example", env) if env else None)
    assert (store.driver, store.scope) == (driver, scope)


def test_a_task_kept_in_a_variable_is_configured_by_later_statements():
    [fixed, switched] = tasks("""
        $a = $schedule->command('a:b')->withoutOverlapping();
        $a->everyTenMinutes();
        $fetch = $schedule->command('fetch')->withoutOverlapping(30);
        switch (config('fetch.frequency')) {
            case 'hourly': $fetch->hourly(); break;
            default: $fetch->everyFiveMinutes();
        }
    """)
    assert (fixed.expression, fixed.has("withoutOverlapping")) == ("*/10 * * * *", True)
    # which case runs is decided at run time: the schedule is set, but not known
    assert switched.expression is None and switched.has("withoutOverlapping")


@pytest.mark.parametrize("code", [
    "$t = $schedule->command('sync');\n$x = match ($f) { 'hourly' => $t->hourly(), "
    "default => $t->daily() };",
    "$t = $schedule->command('sync');\n$t->{$config['schedule']}();",
    "$schedule->command('sync')->{$frequency}();",
])
def test_a_frequency_chosen_at_run_time_is_set_but_unknown(code):
    [task] = tasks(code)
    assert task.expression is None


def test_a_task_that_is_always_skipped_is_not_a_task():
    assert tasks("$schedule->command('probe')->skip(fn () => true)->everyMinute();\n"
                 "$schedule->command('off')->when(false);") == []


def test_tasks_in_a_group_take_its_attributes():
    found = tasks("""
        Schedule::daily()->onOneServer()->group(function () {
            Schedule::command('queue:prune-batches');
            Schedule::command('queue:prune-failed')->at('04:00');
        });
        Schedule::command('outside');
    """)
    assert [(t.what, t.expression, t.has("onOneServer")) for t in found] == [
        ("queue:prune-batches", "0 0 * * *", True), ("queue:prune-failed", "0 4 * * *", True),
        ("outside", "* * * * *", False)]
