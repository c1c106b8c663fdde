"""The PHP front end on the spellings real applications use: each hazard written several
ways (a helper, a repository's return value, a getter, a facade alias, a property that
holds the scheduler) must give the same finding, and the look-alikes none."""
import textwrap

import pytest

from conftest import run_analysis


def write(root, files):
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


#: a schedule that runs the Charge class of the key tests (keys are judged where a job
#: reaches the call)
SCHEDULED_CHARGE = {"routes/console.php": "<?php\nuse App\\Console\\Commands\\Charge;\n"
                                          "Schedule::job(new Charge)->hourly()"
                                          "->withoutOverlapping(50);\n"}


def findings(root, files):
    analysis = run_analysis(write(root, files))
    assert not analysis.internal_errors
    return sorted((f.span.path, f.span.line, f.rule) for f in analysis.findings)


def jobs(root, files):
    analysis = run_analysis(write(root, files))
    assert not analysis.internal_errors
    return [j for j in analysis.project.jobs if j.source == "laravel"]


# -- the incident's key, spelled five ways: always JOB402 at the Stripe call

CHARGE = """
<?php
namespace App\\Console\\Commands;

use Stripe\\StripeClient;
use App\\Models\\Invoice;

class Charge
{{
    public function __construct(private StripeClient $stripe) {{}}

    public function handle(): void
    {{
{body}
    }}
{extra}
}}
"""

FRESH_KEYS = {
    "direct": ("$invoice = Invoice::create(['amount' => 5]);\n"
               "$this->stripe->charges->create(['amount' => 5], "
               "['idempotency_key' => 'inv-' . $invoice->id]);", "", 14),
    "through a helper's parameter": (
        "$invoice = Invoice::create(['amount' => 5]);\n$this->pay($invoice);",
        "    private function pay($inv): void\n    {\n"
        "        $this->stripe->charges->create(['amount' => 5], "
        "['idempotency_key' => \"inv-{$inv->id}\"]);\n    }", 18),
    "through a getter": ("$invoice = Invoice::create(['amount' => 5]);\n"
                         "$key = sprintf('inv-%s', $invoice->getId());\n"
                         "$this->stripe->charges->create(['amount' => 5], "
                         "['idempotency_key' => $key]);", "", 15),
    "saved with new and save()": ("$invoice = new Invoice();\n$invoice->save();\n"
                                  "$this->stripe->charges->create(['amount' => 5], "
                                  "['idempotency_key' => md5($invoice->id)]);", "", 15),
    "returned by a project method": (
        "$invoice = $this->open();\n"
        "$this->stripe->charges->create(['amount' => 5], ['idempotency_key' => $invoice->id]);",
        "    private function open()\n    {\n        return Invoice::create([]);\n    }", 14),
}


@pytest.mark.parametrize("spelling", sorted(FRESH_KEYS))
def test_a_key_from_a_record_created_in_the_run_is_job402_however_spelled(tmp_path, spelling):
    body, extra, line = FRESH_KEYS[spelling]
    code = CHARGE.format(body=textwrap.indent(body, " " * 8), extra=extra)
    found = findings(tmp_path, {"app/Console/Commands/Charge.php": code, **SCHEDULED_CHARGE})
    assert found == [("app/Console/Commands/Charge.php", line, "JOB402")]


@pytest.mark.parametrize("value", ["uniqid('ch', true)", "(string) Str::uuid()", "time()",
                                   "bin2hex(random_bytes(8))", "Uuid::uuid4()->toString()"])
def test_a_per_run_key_is_job401(tmp_path, value):
    body = f"$key = {value};\n$this->stripe->paymentIntents->create([], " \
           "['idempotency_key' => 'pi-' . $key]);"
    code = CHARGE.format(body=textwrap.indent(body, " " * 8), extra="")
    files = {"Charge.php": code, **SCHEDULED_CHARGE}
    assert [r for _, _, r in findings(tmp_path, files)] == ["JOB401"]


@pytest.mark.parametrize("body,rules", [
    ("$this->stripe->charges->create(['amount' => 5]);", ["JOB403"]),
    ("\\Stripe\\Refund::create(['charge' => $id]);", ["JOB403"]),
    ("$this->stripe->charges->create(['amount' => 5], "
     "['idempotency_key' => \"sub-{$sub->id}-{$period}\"]);", []),
    ("$this->stripe->customers->create(['email' => $e]);", []),
    ("$this->charges->create(['amount' => 5]);", []),  # a project repository, not Stripe
])
def test_stripe_calls_without_a_key(tmp_path, body, rules):
    code = CHARGE.format(body=textwrap.indent(body, " " * 8), extra="")
    assert [r for _, _, r in findings(tmp_path, {"Charge.php": code, **SCHEDULED_CHARGE})] \
        == rules


def test_a_payment_call_no_job_reaches_is_not_judged(tmp_path):
    """A refund a user clicks in the web UI is not a job's side effect."""
    body = "$this->stripe->refunds->create(['charge' => $id]);"
    code = CHARGE.format(body=textwrap.indent(body, " " * 8), extra="")
    assert findings(tmp_path, {"Charge.php": code}) == []


# -- Laravel's cache lock, spelled through the facade, an alias, the helper, a store

@pytest.mark.parametrize("acquire", [
    "Cache::lock('import', 0)->get()",
    "\\Illuminate\\Support\\Facades\\Cache::lock('import')->get()",
    "cache()->lock('import')->get()",
    "Cache::store('redis')->lock('import', 0)->get()",
])
def test_a_cache_lock_without_expiry_is_job206(tmp_path, acquire):
    code = f"""
    <?php
    use Illuminate\\Support\\Facades\\Cache;

    function import_feed() {{
        if (!{acquire}) {{
            return;
        }}
        work();
    }}
    """
    assert [r for _, _, r in findings(tmp_path, {"import.php": code})] == ["JOB206"]


def test_exit_skips_finally_in_php_but_not_a_shutdown_function(tmp_path):
    code = """
    <?php
    function run_locked($lock) {
        $lock = Cache::lock('a', 60);
        if (!$lock->get()) { return; }
        try {
            exit(1);
        } finally {
            $lock->release();
        }
    }
    function run_safe($pdo) {
        if (!$pdo->query("SELECT GET_LOCK('b', 0)")->fetchColumn()) { return; }
        register_shutdown_function(function () use ($pdo) {
            $pdo->query("SELECT RELEASE_LOCK('b')");
        });
        exit(0);
    }
    """
    assert findings(tmp_path, {"locks.php": code}) == [("locks.php", 6, "JOB204")]


@pytest.mark.parametrize("sql,rules", [
    ("SELECT GET_LOCK('sync', -1)", ["JOB102", "JOB104"]),
    ("SELECT GET_LOCK('sync', 0)", ["JOB104"]),
    ("SELECT GET_LOCK(:id, :timeout)", ["JOB104"]),  # a bound parameter: not known to block
    ("SELECT pg_advisory_lock(42)", ["JOB102", "JOB104"]),
])
def test_database_locks_in_a_cron_script(tmp_path, sql, rules):
    """The lock guards the job (no JOB101), holds it while a run hangs (JOB104: no time
    limit), and a blocking one makes runs queue (JOB102)."""
    files = {"bin/sync.php": f'<?php\nif (!$pdo->query("{sql}")->fetchColumn()) {{ exit(0); }}\n'
                             'sync_all();\n',
             "crontab": "*/5 * * * * php /srv/bin/sync.php\n"}
    assert [r for _, _, r in findings(tmp_path, files)] == rules


@pytest.mark.parametrize("call, rules", [
    ('$pdo->query("SELECT GET_LOCK(\'sync\', 0)");', ["JOB104", "JOB215"]),
    ('DB::statement("SELECT pg_try_advisory_lock(7)");', ["JOB104", "JOB215"]),
    ('$got = $pdo->query("SELECT GET_LOCK(\'sync\', 0)")->fetchColumn();\n'
     'if (!$got) { exit(0); }', ["JOB104"]),
])
def test_a_try_lock_whose_query_result_is_thrown_away_is_job215(tmp_path, call, rules):
    files = {"bin/sync.php": f"<?php\n{call}\nsync_all();\n",
             "crontab": "*/5 * * * * php /srv/bin/sync.php\n"}
    assert sorted(r for _, _, r in findings(tmp_path, files)) == rules


@pytest.mark.parametrize("create", ["touch($lockFile)", "file_put_contents($lockFile, getmypid())",
                                    "fwrite(fopen($lockFile, 'w'), getmypid())"])
def test_a_lock_file_tested_then_created_is_job201(tmp_path, create):
    code = f"""
    <?php
    $lockFile = '/tmp/report.lock';
    if (file_exists($lockFile)) {{
        exit(0);
    }}
    {create};
    build_report();
    unlink($lockFile);
    """
    assert "JOB201" in [r for _, _, r in findings(tmp_path, {"report.php": code})]


# -- the scheduler, however the Kernel holds it

@pytest.mark.parametrize("kernel", [
    "$schedule->command('a:b')->everyFiveMinutes();",
    "$this->scheduleInstance = $schedule;\n$this->scheduleInstance->command('a:b')"
    "->everyFiveMinutes();",
    "app(Schedule::class)->command('a:b')->everyFiveMinutes();",
])
def test_the_scheduler_held_anywhere_gives_the_task(tmp_path, kernel):
    code = f"""
    <?php
    namespace App\\Console;
    use Illuminate\\Console\\Scheduling\\Schedule;
    class Kernel {{
        protected function schedule(Schedule $schedule): void {{
    {textwrap.indent(kernel, " " * 8)}
        }}
    }}
    """
    [task] = jobs(tmp_path, {"app/Console/Kernel.php": code})
    assert task.schedule.cron == "*/5 * * * *"


def test_an_apps_own_schedule_class_is_not_laravels(tmp_path):
    code = """
    <?php
    use App\\Console\\Scheduling\\Schedule;
    Schedule::command('reminders:send', 'daily');
    """
    assert jobs(tmp_path, {"routes/console.php": code}) == []


def test_tasks_in_two_branches_of_one_if_are_not_duplicates(tmp_path):
    code = """
    <?php
    class Kernel {
        protected function schedule($schedule) {
            if (isDev()) {
                $schedule->command('sync:all')->everyMinute()->withoutOverlapping(1);
            } else {
                $schedule->command('sync:all')->everyFiveMinutes()->withoutOverlapping(4);
            }
            $schedule->command('sync:all')->everyTenMinutes()->withoutOverlapping(9);
        }
    }
    """
    files = {"Kernel.php": code, "Sync.php": "<?php\nclass Sync { protected $signature = "
             "'sync:all'; public function handle() {} }\n"}
    # the third declaration runs beside whichever branch is taken
    assert [(line, rule) for _, line, rule in findings(tmp_path, files)] == [(9, "JOB106")]


def test_a_queued_job_is_guarded_by_its_own_middleware_not_the_tasks_mutex(tmp_path):
    kernel = """
    <?php
    use App\\Jobs\\Plain;
    use App\\Jobs\\Unique;
    class Kernel {
        protected function schedule($schedule) {
            $schedule->job(new Plain)->everyMinute()->withoutOverlapping();
            $schedule->job(new Unique)->everyMinute();
        }
    }
    """
    plain = """
    <?php
    namespace App\\Jobs;
    use Illuminate\\Contracts\\Queue\\ShouldQueue;
    class Plain implements ShouldQueue { public function handle() {} }
    """
    unique = """
    <?php
    namespace App\\Jobs;
    use Illuminate\\Contracts\\Queue\\ShouldQueue;
    use Illuminate\\Queue\\Middleware\\WithoutOverlapping;
    class Unique implements ShouldQueue {
        public function middleware() { return [(new WithoutOverlapping('u'))->expireAfter(60)]; }
        public function handle() {}
    }
    """
    found = findings(tmp_path, {"Kernel.php": kernel, "app/Jobs/Plain.php": plain,
                                "app/Jobs/Unique.php": unique})
    # the dispatch's 24 h mutex is no JOB205: it is held for the dispatch only
    assert found == [("Kernel.php", 6, "JOB101")]


@pytest.mark.parametrize("line", [
    "*/5 * * * * php -d memory_limit=2G /srv/bin/console app:sync",
    "*/5 * * * * /srv/bin/console -e prod app:sync",
    "*/5 * * * * /srv/bin/console --env=prod app:sync --verbose",
])
@pytest.mark.parametrize("declared", [
    "#[AsCommand(name: 'app:sync')]\nclass Sync {",
    "#[AsCommand(description: 'Sync', name: 'app:sync')]\nclass Sync {",
    "class Sync {\n    const NAME = 'app:sync';\n"
    "    protected function configure() { $this->setName(self::NAME); }",
])
def test_bin_console_resolves_to_the_command_class(tmp_path, line, declared):
    command = f"""<?php
{declared}
    protected function execute($in, $out) {{
        $fp = fopen('/tmp/sync.lock', 'c');
        flock($fp, LOCK_EX);
        return 0;
    }}
}}
"""
    files = {"crontab": line + "\n", "bin/console": "#!/usr/bin/env php\n<?php\n",
             "src/Command/Sync.php": command}
    found = findings(tmp_path, files)
    # the class's blocking flock is found: JOB102 at it, JOB104 for the job (no timeout)
    assert ("src/Command/Sync.php", found[-1][1], "JOB102") in found
    assert ("crontab", 1, "JOB104") in found


def test_a_syntax_error_in_code_a_job_runs_is_job900_elsewhere_a_clean_skip(tmp_path):
    files = {"crontab": "*/5 * * * * timeout 4m php /srv/bin/run.php\n",
             "bin/run.php": "<?php\nif ($x {\n  work();\n",
             "lib/unused.php": "<?php\nfunction ( {\n"}
    assert [(p, r) for p, _, r in findings(tmp_path, files)] == [("bin/run.php", "JOB900"),
                                                                ("crontab", "JOB101")]


def test_the_dispatcher_line_is_not_a_job_its_tasks_are(tmp_path):
    files = {"crontab": "* * * * * cd /srv/app && php artisan schedule:run >> /dev/null 2>&1\n",
             "artisan": "#!/usr/bin/env php\n<?php\n",
             "app/Console/Kernel.php": "<?php\nclass Kernel { protected function schedule($schedule)"
                                       " { $schedule->command('inspire')->hourly(); } }\n"}
    analysis = run_analysis(write(tmp_path, files))
    assert analysis.findings == []  # inspire is the framework's command, not the project's
    [dispatcher] = [j for j in analysis.project.jobs if j.source == "cron"]
    assert [t.role for t in dispatcher.targets] == ["dispatch"]


@pytest.mark.parametrize("claim,rules", [
    ("Cache::add('cleanup', true, 1800)", []),
    ("Cache::add('cleanup', true)", ["JOB206"]),  # kept until forgotten
    ("cache()->add('cleanup', true, 2 * 86400)", ["JOB205"]),
])
def test_cache_add_as_a_try_lock(tmp_path, claim, rules):
    code = f"""
    <?php
    function cleanup() {{
        if (!{claim}) {{
            return;
        }}
        try {{
            work();
        }} finally {{
            Cache::forget('cleanup');
        }}
    }}
    """
    assert [r for _, _, r in findings(tmp_path, {"cleanup.php": code})] == rules


@pytest.mark.parametrize("text,seconds", [("5 minutes", 300), ("1 minute", 60), ("60 seconds", 60),
                                          ("12 hours", 43200), ("1 day", 86400), ("PT5M", 300),
                                          ("P1D", 86400), ("3600", 3600), ("next monday", None)])
def test_symfony_frequencies(text, seconds):
    from jobsafe.sources.php.symfony import every_seconds
    assert every_seconds(text) == seconds


@pytest.mark.parametrize("declaration", [
    "#[AsSchedule]\nclass S implements ScheduleProviderInterface {\n"
    "    public function getSchedule(): Schedule {\n        $s = new Schedule();\n"
    "        $s->add(RecurringMessage::every('10 minutes', new Sync()));\n        return $s;\n    }\n}",
    "#[AsSchedule('default')]\nclass S {\n    public function getSchedule(): Schedule {\n"
    "        return (new Schedule())->with(RecurringMessage::every(frequency: '10 minutes', "
    "message: new Sync()));\n    }\n}",
    "#[AsPeriodicTask(frequency: '10 minutes')]\nclass Sync {\n    public function __invoke() {}\n}",
    "#[AsCronTask('*/10 * * * *')]\nclass Sync {\n    public function __invoke() {}\n}",
])
def test_a_symfony_recurring_task_spelled_every_way(tmp_path, declaration):
    [job] = [j for j in run_analysis(write(tmp_path, {"src/S.php": "<?php\n" + declaration}))
             .project.jobs if j.source == "symfony"]
    assert job.schedule.min_interval_seconds == 600


def test_a_script_copied_under_another_name_is_followed_to_the_command(tmp_path):
    """humansis' spelling: the crontab runs /usr/bin/cron-script, which a Dockerfile copied
    from docker/cron-script.sh; the script runs bin/console from the app's folder."""
    files = {
        "docker/crontab": "*/5 * * * * www-data /usr/bin/cron-script\n",
        "docker/cron-script.sh": "#!/bin/sh\ncd /var/www/html\nphp bin/console app:sync\n",
        "Dockerfile": "FROM php:8.3\nCOPY . /var/www/html\n"
                      "COPY docker/cron-script.sh /usr/bin/cron-script\n"
                      "COPY docker/crontab /etc/cron.d/app\n",
        "bin/console": "#!/usr/bin/env php\n<?php\n",
        "src/Command/Sync.php": "<?php\n#[AsCommand(name: 'app:sync')]\nclass Sync {\n"
                                "    protected function execute($in, $out) {\n"
                                "        $fp = fopen('/tmp/sync.lock', 'c');\n"
                                "        flock($fp, LOCK_EX);\n        return 0;\n    }\n}\n",
    }
    assert findings(tmp_path, files) == [("docker/crontab", 1, "JOB104"),
                                         ("src/Command/Sync.php", 6, "JOB102")]


@pytest.mark.parametrize("helper,rules", [
    # mautic's spelling: a helper flocks around reading and writing a PID file
    ("$fp = fopen($this->pidFile, 'c+');\nflock($fp, LOCK_EX);\n$pid = fgets($fp);\n"
     "fwrite($fp, getmypid());\nflock($fp, LOCK_UN);\nreturn true;", ["JOB101"]),
    # a lock helper around the work it is given: the guard of the run
    ("$fp = fopen('/tmp/job.lock', 'c');\nflock($fp, LOCK_EX);\n$work();\n"
     "flock($fp, LOCK_UN);\nreturn true;", ["JOB102", "JOB104"]),
])
def test_a_flock_critical_section_in_a_helper_is_not_the_runs_guard(tmp_path, helper, rules):
    command = f"""<?php
#[AsCommand(name: 'app:run')]
class Run {{
    protected function execute($in, $out) {{
        $this->locked(function () {{ work(); }});
        return 0;
    }}
    private function locked($work) {{
{textwrap.indent(helper, " " * 8)}
    }}
}}
"""
    files = {"crontab": "*/5 * * * * /srv/bin/console app:run\n",
             "bin/console": "#!/usr/bin/env php\n<?php\n", "src/Run.php": command}
    assert sorted(r for _, _, r in findings(tmp_path, files)) == rules


@pytest.mark.parametrize("chain,rules", [("->weekends()", ["JOB111"]),
                                         ("->mondays()->days([1, 3])", ["JOB111"]),
                                         ("->weekends()->at('02:00')", []),
                                         ("->hourly()->weekdays()", [])])
def test_days_without_a_time_run_every_minute(tmp_path, chain, rules):
    code = f"<?php\n$schedule->command('backup:run'){chain};\n"
    assert [r for _, _, r in findings(tmp_path, {"routes/console.php": code})] == rules


def test_a_mutex_in_the_array_store_keeps_nothing_out(tmp_path):
    files = {"routes/console.php": "<?php\n$schedule->command('sms:send')->everyMinute()"
                                   "->withoutOverlapping(10);\n",
             ".env_example": "CACHE_DRIVER=array\n",
             "app/Sms.php": "<?php\nclass Sms { protected $signature = 'sms:send';\n"
                            "public function handle() {} }\n"}
    analysis = run_analysis(write(tmp_path, files))
    assert [(f.rule, "array" in f.message) for f in analysis.findings] == [("JOB101", True)]


def test_a_command_named_by_its_class_is_the_same_work_as_its_crontab_line(tmp_path):
    files = {"crontab": "0 0 * * * cd /srv && php artisan p:egg:check-updates\n",
             "artisan": "#!/usr/bin/env php\n<?php\n",
             "app/Console/Kernel.php": "<?php\nuse App\\Console\\Commands\\CheckEggs;\n"
                                       "$schedule->command(CheckEggs::class)->daily()"
                                       "->withoutOverlapping(60);\n",
             "app/Console/Commands/CheckEggs.php":
                 "<?php\nnamespace App\\Console\\Commands;\nclass CheckEggs {\n"
                 "    protected $signature = 'p:egg:check-updates';\n"
                 "    public function handle() {}\n}\n"}
    # JOB106 at the later entry in path order, the Kernel's task as the earlier one (the
    # crontab line has no guard of its own: JOB101)
    assert findings(tmp_path, files) == [("crontab", 1, "JOB101"), ("crontab", 1, "JOB106")]


def test_a_queued_job_dispatched_by_the_command_is_followed(tmp_path):
    files = {"routes/console.php": "<?php\n$schedule->command('bill:auto')->hourly()"
                                   "->withoutOverlapping(50);\n",
             "app/Commands/AutoBillCron.php": "<?php\nuse App\\Jobs\\AutoBill;\nclass AutoBillCron {\n"
                                              "  protected $signature = 'bill:auto';\n"
                                              "  public function handle() { AutoBill::dispatch($this->due()); }\n}\n",
             "app/Jobs/AutoBill.php": "<?php\nnamespace App\\Jobs;\nclass AutoBill {\n"
                                      "  public function handle() {\n"
                                      "    \\Stripe\\PaymentIntent::create(['amount' => 5], "
                                      "['idempotency_key' => uniqid('st', true)]);\n  }\n}\n"}
    analysis = run_analysis(write(tmp_path, files))
    [finding] = analysis.findings
    assert (finding.rule, finding.job) == ("JOB401", "laravel:routes/console.php:2")


@pytest.mark.parametrize("code,rules", [
    # never forgotten: a throttle that expires (coolify), not a lock
    ("if (!Cache::add('cleanup', true, 1800)) { return; }\nwork();", []),
    # forgotten only when the work fails: the exception path is covered
    ("if (!Cache::add('cleanup', true, 1800)) { return; }\n"
     "try { work(); } catch (\\Throwable $e) { Cache::forget('cleanup'); throw $e; }", []),
    ("if (!Cache::add('cleanup', true, 1800)) { return; }\nwork();\nCache::forget('cleanup');",
     ["JOB203"]),
])
def test_cache_add_claims_throttles_and_releases(tmp_path, code, rules):
    text = "<?php\nfunction cleanup() {\n" + textwrap.indent(code, "    ") + "\n}\n"
    assert [r for _, _, r in findings(tmp_path, {"cleanup.php": text})] == rules


def test_a_database_store_lock_without_seconds_expires_after_a_day(tmp_path):
    files = {"job.php": "<?php\nfunction sync() {\n    $lock = Cache::lock('sync');\n"
                        "    if (!$lock->get()) { return; }\n    try { work(); } finally "
                        "{ $lock->release(); }\n}\n",
             "config/cache.php": "<?php\nreturn ['default' => env('CACHE_STORE', 'database')];\n"}
    assert [r for _, _, r in findings(tmp_path, files)] == ["JOB205"]


def test_an_expiry_assigned_in_the_argument_is_read(tmp_path):
    code = ("<?php\nclass K {\n    const MAX = 30;\n    protected function schedule($schedule) {\n"
            "        $schedule->command('fetch')->everyFiveMinutes()"
            "->withoutOverlapping($expiresAt = self::MAX);\n    }\n}\n")
    [task] = jobs(tmp_path, {"app/Console/Kernel.php": code})
    assert task.locks[0].ttl_seconds == 1800


def test_a_client_from_the_container_is_a_stripe_client(tmp_path):
    body = ("$stripe = app(StripeClient::class);\n"
            "$stripe->paymentIntents->create(['amount' => 5]);")
    code = CHARGE.format(body=textwrap.indent(body, " " * 8), extra="")
    assert [r for _, _, r in findings(tmp_path, {"Charge.php": code, **SCHEDULED_CHARGE})] \
        == ["JOB403"]


def test_tasks_in_a_helper_called_from_the_other_branch_are_not_duplicates(tmp_path):
    """coolify's spelling: the else branch calls $this->pullImages(), which schedules the
    production variant of a task the if branch schedules for development."""
    code = """
    <?php
    class Kernel {
        protected function schedule($schedule) {
            if (isDev()) {
                $schedule->command('images:pull')->everyMinute()->withoutOverlapping(1);
            } else {
                $this->pullImages($schedule);
            }
        }
        private function pullImages($schedule) {
            $schedule->command('images:pull')->everyTenMinutes()->withoutOverlapping(9);
        }
    }
    """
    files = {"Kernel.php": code, "Pull.php": "<?php\nclass Pull { protected $signature = "
             "'images:pull'; public function handle() {} }\n"}
    assert findings(tmp_path, files) == []


@pytest.mark.parametrize("attribute,interval", [
    ("#[AsCronTask(expression: '#hourly')]", 3600),
    ("#[AsCronTask('# # * * *')]", 86400),
    ("#[AsCronTask('*/5 * * * *', schedule: 'maintenance')]", 300),
])
def test_symfony_hashed_cron_and_named_schedules(tmp_path, attribute, interval):
    code = f"<?php\nuse Symfony\\Component\\Scheduler\\Attribute\\AsCronTask;\n{attribute}\n" \
           "class Sweep {\n    public function __invoke() {}\n}\n"
    analysis = run_analysis(write(tmp_path, {"src/Sweep.php": code}))
    assert not analysis.findings
    [job] = [j for j in analysis.project.jobs if j.source == "symfony"]
    assert job.schedule.min_interval_seconds == interval


def test_an_apps_own_cron_attribute_is_not_symfonys_and_two_attributes_two_tasks(tmp_path):
    own = "<?php\nuse Tourze\\Symfony\\CronJob\\Attribute\\AsCronTask;\n#[AsCronTask('* * * * *')]\n" \
          "class A { public function __invoke() {} }\n"
    two = "<?php\nuse Symfony\\Component\\Scheduler\\Attribute\\AsCronTask;\n" \
          "#[AsCronTask('0 1 * * *')]\n#[AsCronTask('0 13 * * *')]\n" \
          "class B { public function __invoke() {} }\n"
    analysis = run_analysis(write(tmp_path, {"A.php": own, "B.php": two}))
    assert sorted(j.schedule.cron for j in analysis.project.jobs) == ["0 1 * * *", "0 13 * * *"]


def test_a_cron_expression_built_by_code_is_set_but_unknown(tmp_path):
    code = ("<?php\n#[AsSchedule]\nclass S {\n    public function getSchedule(): Schedule {\n"
            "        $s = new Schedule();\n        foreach ($this->tasks() as $expression => $m) {\n"
            "            $s->add(RecurringMessage::cron($expression, $m));\n        }\n"
            "        return $s;\n    }\n}\n")
    analysis = run_analysis(write(tmp_path, {"S.php": code}))
    assert analysis.findings == []
    assert [j.schedule.kind for j in analysis.project.jobs] == ["templated"]


@pytest.mark.parametrize("timeout,rules", [("", ["JOB101"]), ("public $timeout = 120;", []),
                                           ("public $timeout = 7200;", ["JOB101"])])
def test_a_queued_jobs_timeout_under_the_interval_cannot_overlap(tmp_path, timeout, rules):
    files = {"routes/console.php": "<?php\nuse App\\Jobs\\Warn;\n"
                                   "Schedule::job(new Warn)->hourly();\n",
             "app/Jobs/Warn.php": "<?php\nnamespace App\\Jobs;\n"
                                  "use Illuminate\\Contracts\\Queue\\ShouldQueue;\n"
                                  f"class Warn implements ShouldQueue {{ {timeout}\n"
                                  "    public function handle() {} }\n"}
    assert [r for _, _, r in findings(tmp_path, files)] == rules


def test_a_key_on_a_read_is_not_judged(tmp_path):
    body = ("\\Stripe\\PaymentIntent::retrieve($id, ['idempotency_key' => uniqid()]);")
    code = CHARGE.format(body=textwrap.indent(body, " " * 8), extra="")
    assert findings(tmp_path, {"Charge.php": code, **SCHEDULED_CHARGE}) == []


def test_commands_named_by_code_are_not_duplicates(tmp_path):
    code = ("<?php\nforeach ($modules as $config) {\n"
            "    Schedule::command($config['command'])->hourly();\n}\n"
            "foreach ($plugins as $config) {\n    Schedule::command($config['command'])->hourly();\n}\n")
    assert findings(tmp_path, {"routes/console.php": code}) == []


def test_a_claim_forgotten_only_when_the_work_fails_is_a_throttle(tmp_path):
    code = ("<?php\nfunction cleanup() {\n    if (!Cache::add('cleanup', true, 1800)) { return; }\n"
            "    try {\n        work();\n    } catch (\\Throwable $e) {\n"
            "        Cache::forget('cleanup');\n        throw $e;\n    }\n}\n")
    assert findings(tmp_path, {"cleanup.php": code}) == []


def test_a_named_stores_driver_comes_from_the_configuration(tmp_path):
    files = {"job.php": "<?php\nfunction route() {\n    $lock = cache()->store('lock')->lock('tr');\n"
                        "    if (!$lock->get()) { return; }\n    try { work(); } finally "
                        "{ $lock->release(); }\n}\n",
             "config/cache.php": "<?php\nreturn ['default' => 'redis', 'stores' => [\n"
                                 "    'lock' => ['driver' => 'database', 'table' => 'locks'],\n]];\n"}
    assert [r for _, _, r in findings(tmp_path, files)] == ["JOB205"]  # a day, not forever


def test_a_skip_probe_written_over_several_lines_is_not_a_task(tmp_path):
    code = ("<?php\n$schedule->command('queue:work')\n    ->skip(function () {\n"
            "        return true;\n    })\n    ->everyMinute();\n")
    assert jobs(tmp_path, {"app/Console/Kernel.php": code}) == []


def test_a_message_dispatched_by_a_scheduled_command_reaches_its_handler(tmp_path):
    """stripe-mirakl-connector's spelling: the cron command dispatches a message; its
    handler makes the transfer."""
    files = {
        "crontab": "*/5 * * * * timeout 4m /srv/bin/console connector:dispatch:transfers\n",
        "bin/console": "#!/usr/bin/env php\n<?php\n",
        "src/Command/Dispatch.php": "<?php\nuse App\\Message\\ProcessTransfer;\n"
            "use Symfony\\Component\\Messenger\\MessageBusInterface;\n"
            "#[AsCommand(name: 'connector:dispatch:transfers')]\nclass Dispatch {\n"
            "    public function __construct(private MessageBusInterface $bus) {}\n"
            "    protected function execute($in, $out) {\n"
            "        $this->bus->dispatch(new ProcessTransfer(42));\n        return 0;\n    }\n}\n",
        "src/Handler/ProcessTransferHandler.php": "<?php\nuse App\\Message\\ProcessTransfer;\n"
            "#[AsMessageHandler]\nclass ProcessTransferHandler {\n"
            "    public function __invoke(ProcessTransfer $message) {\n"
            "        \\Stripe\\Transfer::create(['amount' => 5]);\n    }\n}\n",
    }
    assert findings(tmp_path, files) == [("crontab", 1, "JOB101"),
                                         ("src/Handler/ProcessTransferHandler.php", 6, "JOB403")]


def test_a_loop_around_a_waiting_get_lock_is_no_retry_storm(tmp_path):
    code = ("<?php\nfunction write_rrd($db, $id) {\n"
            "    while (!$db->query(\"SELECT GET_LOCK('boost.ds.$id', 1)\")) { usleep(1000); }\n"
            "    update($id);\n}\n")
    assert [r for _, _, r in findings(tmp_path, {"boost.php": code})] == []


def test_the_dispatcher_line_is_the_dispatcher_even_when_artisan_is_not_found(tmp_path):
    files = {"Dockerfile": "FROM php:8.3\nRUN echo '* * * * * root php /srv/www/artisan "
                           "schedule:run' >> /etc/crontab\n",
             "app/Console/Kernel.php": "<?php\n$schedule->command('inspire')->hourly();\n"}
    analysis = run_analysis(write(tmp_path, files))
    assert analysis.findings == []
    [line] = [j for j in analysis.project.jobs if j.source == "cron"]
    assert [t.role for t in line.targets] == ["dispatch"]


@pytest.mark.parametrize("code", [
    # dokuwiki's io_lock: a wait that gives up after 3 s treats the lock as stale
    "$t = time();\ndo {\n    if ((time() - $t) > 3) break;\n    $locked = @mkdir($lockDir);\n"
    "    usleep(50);\n} while ($locked === false);\ntry { work(); } finally { @rmdir($lockDir); }",
    # dokuwiki's indexer: removing a stale lock inside the retry loop is not its release
    "while (!@mkdir($lockDir)) {\n    usleep(50);\n    if (time() - @filemtime($lockDir) > 300) {\n"
    "        @rmdir($lockDir);\n    }\n}\ntry { work(); } finally { @rmdir($lockDir); }",
])
def test_lock_directories_with_their_stale_handling(tmp_path, code):
    text = "<?php\nfunction locked($lockDir) {\n" + textwrap.indent(code, "    ") + "\n}\n"
    analysis = run_analysis(write(tmp_path, {"io.php": text}))
    assert [lock.kind for lock in analysis.project.code_locks] == ["lock-dir"]
    assert analysis.findings == []


def test_a_lock_directory_with_no_stale_handling_is_job202(tmp_path):
    text = ("<?php\nfunction locked($lockDir) {\n    if (!@mkdir($lockDir)) { return; }\n"
            "    try { work(); } finally { @rmdir($lockDir); }\n}\n")
    assert findings(tmp_path, {"io.php": text}) == [("io.php", 3, "JOB202")]


@pytest.mark.parametrize("services,rules", [
    # hyvor/relay: the lock factory is wired to a PostgreSqlStore: one lock for every copy
    ("<?php\nuse Symfony\\Component\\Lock\\Store\\PostgreSqlStore;\n"
     "$services->set(LockFactory::class)->args([service(PostgreSqlStore::class)]);\n", []),
    (None, ["JOB107", "JOB301"]),  # the default store (semaphore or flock): the host's
])
def test_a_locked_schedule_takes_its_store_from_the_service_configuration(tmp_path, services,
                                                                          rules):
    files = {"src/S.php": "<?php\n#[AsSchedule]\nclass S {\n"
                          "    public function __construct(private LockFactory $locks) {}\n"
                          "    public function getSchedule(): Schedule {\n"
                          "        return (new Schedule())->add(RecurringMessage::every('1 hour', "
                          "new Sync()))->lock($this->locks->createLock('s'));\n    }\n}\n",
             "compose.yaml": "services:\n  worker:\n    build: .\n    command: bin/console "
                             "messenger:consume scheduler_default\n    deploy:\n      replicas: 2\n",
             "Dockerfile": "FROM php:8.3\n"}
    if services:
        files["config/services.php"] = services
    assert [r for _, _, r in findings(tmp_path, files)] == rules


def test_tasks_through_an_apps_class_that_forwards_to_the_scheduler(tmp_path):
    """monica's spelling: routes/console.php calls the app's own Schedule class, whose
    __callStatic passes each call on to Laravel's facade behind a when() gate: the tasks
    are Laravel's, their time decided by the app's code."""
    wrapper = ("<?php\nnamespace App\\Console\\Scheduling;\n"
               "use Illuminate\\Support\\Facades\\Schedule as ScheduleFacade;\nclass Schedule {\n"
               "    public static function __callStatic(string $method, array $args): void {\n"
               "        $command = array_shift($args);\n"
               "        ScheduleFacade::$method($command)->when(fn () => true);\n    }\n}\n")
    routes = ("<?php\nuse App\\Console\\Scheduling\\Schedule;\n"
              "Schedule::command('model:prune', 'daily');\nSchedule::job(Sync::class, 'minutes', 1);\n")
    found = jobs(tmp_path, {"app/Console/Scheduling/Schedule.php": wrapper,
                            "routes/console.php": routes})
    assert [(j.command, j.schedule.kind, j.schedule.text) for j in found] == [
        ("command: model:prune", "templated",
         "daily through App\\Console\\Scheduling\\Schedule"),
        ("job: Sync::class", "templated", "minutes, 1 through App\\Console\\Scheduling\\Schedule")]


def test_a_lock_file_tested_by_the_caller_and_created_by_a_helper(tmp_path):
    """mobicoop's spelling: the caller tests the running file, a helper creates it and
    keeps its pointer in a property, another helper removes it."""
    code = ("<?php\nclass Territories {\n    private const RUNNING_FILE = 'link.running';\n"
            "    public function link() {\n"
            "        if (file_exists($this->tmp.self::RUNNING_FILE)) { return false; }\n"
            "        $this->createRunningFile();\n        work();\n"
            "        return $this->closeRunningFile();\n    }\n"
            "    private function createRunningFile() {\n"
            "        $this->fp = fopen($this->tmp.self::RUNNING_FILE, 'w');\n    }\n"
            "    private function closeRunningFile() {\n"
            "        return fclose($this->fp) && unlink($this->tmp.self::RUNNING_FILE);\n    }\n}\n")
    assert findings(tmp_path, {"Territories.php": code}) == [
        ("Territories.php", 5, "JOB201"), ("Territories.php", 11, "JOB202")]


@pytest.mark.parametrize("checker", [
    # another class (another job) reads the age of the same file and clears it
    ("<?php\nclass Checker {\n    private const RUNNING = 'link.running';\n"
     "    public function check($limit) {\n"
     "        if (filemtime($this->dir.self::RUNNING) < $limit) {\n"
     "            unlink($this->dir.self::RUNNING);\n        }\n    }\n}\n"),
    # a plain script, the name as a literal ending a directory
    "<?php\nif (time() - filemtime('/var/tmp/link.running') > 86400) { unlink('/var/tmp/link.running'); }\n",
])
def test_a_lock_file_whose_age_other_code_checks_has_stale_handling(tmp_path, checker):
    code = ("<?php\nclass Territories {\n    private const RUNNING_FILE = 'link.running';\n"
            "    public function link() {\n"
            "        if (file_exists($this->tmp.self::RUNNING_FILE)) { return false; }\n"
            "        $fp = fopen($this->tmp.self::RUNNING_FILE, 'w');\n        work();\n"
            "        fclose($fp);\n        unlink($this->tmp.self::RUNNING_FILE);\n    }\n}\n")
    assert findings(tmp_path, {"Territories.php": code, "Checker.php": checker}) == [
        ("Territories.php", 5, "JOB201"), ("Territories.php", 9, "JOB203")]
    # the age of another file is no stale handling of this one
    other = checker.replace("link.running", "other.running")
    assert ("Territories.php", 6, "JOB202") in findings(
        tmp_path / "other", {"Territories.php": code, "Checker.php": other})


FRONT_CONTROLLER = {
    "cron.php": ("<?php\nrequire_once __DIR__ . '/lib/bootstrap.php';\n"
                 "$options = getopt('c:');\n"
                 "include_once('modules/lh' . $options['c'] . '.php');\n"),
    "lib/bootstrap.php": "<?php\nini_set('display_errors', 1);\n",
    "modules/lhcron/webhook.php": (
        "<?php\n$fp = fopen('cache/webhook.lock', 'w+');\n"
        "if (!flock($fp, LOCK_EX | LOCK_NB)) { return; }\nprocess_events();\n"
        "flock($fp, LOCK_UN);\n"),
    "modules/lhcron/archive.php": "<?php\narchive_chats();\n",
}


@pytest.mark.parametrize("line, rule", [
    ("php cron.php -s site_admin -c cron/webhook", "JOB104"),  # the module takes a flock
    ("php cron.php --cronjob=cron/webhook", "JOB104"),
    ("php cron.php -c cron/archive", "JOB101"),  # this module takes none
    ("php cron.php -c cron/missing", "JOB101"),  # nothing to follow: no guard seen
])
def test_a_front_controller_includes_the_module_its_command_line_names(tmp_path, line, rule):
    crontab = f"*/5 * * * * www-data cd /srv/app && {line}\n"
    found = findings(tmp_path, {**FRONT_CONTROLLER, "etc/cron.d/app": crontab})
    assert found == [("etc/cron.d/app", 1, rule)]


def test_an_exit_when_the_atomic_creation_failed_is_outside_the_lock(tmp_path):
    """FreshRSS's spelling: ``if (($fp = @fopen($f, 'x')) === false) { die(); }`` exits in
    the branch where this run holds nothing (no JOB204); the same exit after the creation
    succeeded is."""
    refused = ("<?php\n$f = '/tmp/actualize.lock';\n"
               "if (($fp = @fopen($f, 'x')) === false) {\n    die();\n}\nfclose($fp);\n"
               "register_shutdown_function(function () use ($f) { unlink($f); });\n"
               "actualize();\n")
    held = ("<?php\n$f = '/tmp/actualize.lock';\n"
            "if (($fp = @fopen($f, 'x')) !== false) {\n    actualize();\n    die();\n}\n"
            "unlink($f);\n")
    assigned = ("<?php\n$f = '/tmp/actualize.lock';\n$fp = @fopen($f, 'x');\n"
                "if ($fp === false) { exit(0); }\nactualize();\nfclose($fp);\nunlink($f);\n")
    assert "JOB204" not in [r for _, _, r in findings(tmp_path / "a", {"a.php": refused})]
    assert ("a.php", 5, "JOB204") in findings(tmp_path / "b", {"a.php": held})
    assert "JOB204" not in [r for _, _, r in findings(tmp_path / "c", {"a.php": assigned})]


def test_a_static_include_runs_in_the_script(tmp_path):
    """``require __DIR__ . '/lib/lock.php'`` and ``dirname(__FILE__)`` spellings: the
    included file's top-level code is part of the run."""
    lock = ("<?php\n$fp = fopen(dirname(__DIR__) . '/run/sync.lock', 'c');\n"
            "if (!flock($fp, LOCK_EX | LOCK_NB)) { exit(0); }\n")
    for spelling in ("__DIR__ . '/lib/lock.php'", "dirname(__FILE__) . '/lib/lock.php'",
                     "'lib/lock.php'"):
        root = tmp_path / str(abs(hash(spelling)))
        found = findings(root, {"sync.php": f"<?php\nrequire {spelling};\nsync_all();\n",
                                "lib/lock.php": lock,
                                "etc/cron.d/sync": "*/5 * * * * root php /srv/sync.php\n"})
        assert found == [("etc/cron.d/sync", 1, "JOB104")], spelling


def test_an_include_under_a_base_directory_not_known_statically(tmp_path):
    """Cacti's spelling, ``require_once($config['base_path'] . '/lib/poller.php')``: the
    only project file with that path; with two candidates, nothing is followed."""
    lock = "<?php\n$fp = fopen('/run/poll.lock', 'c');\nif (!flock($fp, LOCK_EX | LOCK_NB)) { exit(0); }\n"
    files = {"site/poller.php": "<?php\nrequire_once($config['base_path'] . '/lib/lock.php');\npoll();\n",
             "site/lib/lock.php": lock,
             "etc/cron.d/poller": "*/5 * * * * www-data php /usr/share/app/site/poller.php\n"}
    assert findings(tmp_path / "one", files) == [("etc/cron.d/poller", 1, "JOB104")]
    files["plugins/lib/lock.php"] = "<?php\n"
    assert findings(tmp_path / "two", files) == [("etc/cron.d/poller", 1, "JOB101")]


def test_one_test_before_two_creations_is_one_job201(tmp_path):
    """mailcow's iam-sync: ``file_exists`` then ``fopen(…, 'w')`` and ``fwrite``: one race."""
    code = ("<?php\n$lock_file = '/tmp/iam-sync.lock';\nif (file_exists($lock_file)) { exit; }\n"
            "$h = fopen($lock_file, 'w');\nfwrite($h, getmypid());\nfclose($h);\n"
            "file_put_contents($lock_file, getmypid());\nsync_all();\nunlink($lock_file);\n")
    rules = [(line, r) for _, line, r in findings(tmp_path, {"sync.php": code})]
    assert rules.count((3, "JOB201")) == 1
