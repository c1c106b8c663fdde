"""The audit report: schedules in words, the week, the inventory model, HTML and Markdown."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, run_analysis
from jobsafe.calendar import parse_calendar
from jobsafe.cli import main
from jobsafe.report.audit import build_audit, render_html, render_markdown_inventory
from jobsafe.report.words import calendar_as_cron, describe_cron, in_words
from jobsafe.schedule import calendar_schedule, cron_schedule, week_profile

EXAMPLE = FIXTURES.parents[1] / "examples" / "legacy-billing"


@pytest.mark.parametrize("expr, words", [
    ("*/5 * * * *", "Every 5 minutes"),
    ("30 2 * * 1-5", "At 02:30, Monday through Friday"),
    ("0 0 1 * *", "At 00:00, on day 1 of the month"),
    # cron restarts */35 every hour: :00 and :35, never "every 35 minutes" (JOB111)
    ("*/35 * * * *", "At 0 and 35 minutes past the hour"),
    ("0 */5 * * *", "At 00:00, 05:00, 10:00, 15:00 and 20:00"),
])
def test_cron_expressions_in_words_say_what_cron_does(expr, words):
    assert describe_cron(expr) == words


@pytest.mark.parametrize("calendar, cron", [
    ("daily", "0 0 * * *"),
    ("*:0/10", "*/10 * * * *"),
    ("Mon..Fri 02:30", "30 2 * * MON-FRI"),
    ("Sat,Sun 03:00", "0 3 * * SAT-SUN"),
    ("Mon,Wed 01:00", "0 1 * * MON,WED"),
    ("*-*-* 08..18:05/20", "5-59/20 8-18 * * *"),
    # cron cannot say these: seconds, a year, days from the month's end, day AND weekday
    ("*:*:0/30", None), ("2027-*-* 00:00", None), ("*-*~1 00:00", None),
    ("Mon *-*-1..7 00:00", None),
])
def test_calendar_events_become_cron_only_when_cron_means_the_same(calendar, cron):
    assert calendar_as_cron(parse_calendar(calendar)) == cron


def test_schedules_of_every_kind_in_words():
    assert in_words(cron_schedule("@daily", "0 0 * * *", "Europe/Berlin")) == \
        "At 00:00 (Europe/Berlin)"
    assert in_words(calendar_schedule(("Mon *-*-1..7 00:00",), "x")) == \
        "on calendar Mon *-*-01..07 00:00:00"
    assert in_words(calendar_schedule(("hourly", "Sat 12:30"), "x")) == \
        "Every hour; At 12:30, only on Saturday"


def test_intervals_and_unknown_schedules_in_words():
    from jobsafe.model import Schedule

    assert in_words(Schedule("300.0", "interval", min_interval_seconds=300)) == "Every 5 minutes"
    assert in_words(Schedule("x", "interval", min_interval_seconds=3600)) == "Every hour"
    assert in_words(Schedule("x", "interval", min_interval_seconds=90)) == "Every 90 seconds"
    assert in_words(Schedule("{{ .Values.schedule }}", "templated")) == \
        "set at deploy time (templated)"
    assert in_words(Schedule("crontab(minute=f(x))", "templated")).startswith("computed by code")
    assert in_words(Schedule("@reboot", "reboot")) == "at boot"


def test_week_profile_counts_firings_per_hour_of_the_week():
    weekdays = week_profile(cron_schedule("x", "30 2 * * 1-5"))
    assert sorted(weekdays) == [2, 26, 50, 74, 98]  # 02:00-02:59, Monday to Friday
    assert all(abs(v - 1) < 0.01 for v in weekdays.values())
    monthly = week_profile(cron_schedule("x", "0 0 1 * *"))
    assert sorted(monthly) == [0, 24, 48, 72, 96, 120, 144]  # any weekday, a few weeks a year
    assert abs(sum(monthly.values()) - 12 / 52.18) < 0.01
    assert len(week_profile(cron_schedule("x", "*/5 * * * *"))) == 168


def test_audit_model_of_the_example():
    old = os.getcwd()
    os.chdir(EXAMPLE)
    try:
        audit = build_audit(run_analysis(EXAMPLE))
    finally:
        os.chdir(old)
    assert audit.root == "legacy-billing"
    # the portal's schedule:run line is a crontab job; its task is the Laravel one
    assert dict(audit.by_source) == {"crontab": 8, "systemd timer": 1, "Laravel scheduler": 1}
    concerns = {c.flag: c.count for c in audit.concerns}
    assert concerns["unguarded"] == 2 and concerns["findings"] == 6
    # docker/billing.cron is copied to /etc/cron.d/billing.cron, a name cron skips
    assert concerns["never"] == 1
    by_line = {(r.job.span.path, r.job.span.line): r for r in audit.rows}
    charge = by_line[("deploy/crontab", 6)]
    assert charge.guard is None and "unguarded" in charge.flags
    assert charge.entry == "billing/management/commands/charge_subscriptions.py:handle()"
    assert [v.finding.rule for v in charge.findings] == ["JOB101"]
    excerpt = charge.findings[0].excerpt
    assert any(hit and "*/5" in text for _, text, hit in excerpt)
    # the page offers each fix as the diff that applies it, and counts them
    diff = charge.findings[0].fix_diff
    assert diff.startswith("--- a/deploy/crontab\n+++ b/deploy/crontab\n")
    assert "\n+*/5 * * * * flock -n /var/lock/charge_subscriptions.lock timeout 5m " in diff
    fixable, safe = audit.fixable
    assert fixable == sum(1 for v in audit.findings if v.finding.fix) and 0 <= safe <= fixable
    html = render_html(audit)
    assert 'id="fixable">' in html and "Fix (unsafe): run it under" in html
    reconcile = by_line[("deploy/systemd/reconcile.service", 7)]
    assert reconcile.guard == "redis-key lock:reconcile (cluster)"
    assert reconcile.locks == ["redis-key lock:reconcile (cluster)"]
    never = by_line[("docker/billing.cron", 1)]
    assert never.flags == ["never"] and never.words.startswith("never runs: cron ignores")
    # a flock is spelled alike whether the crontab line or the script takes it
    assert by_line[("deploy/crontab", 15)].guard == "flock -n /var/lock/export.lock (host)"
    assert by_line[("deploy/crontab", 9)].guard == "flock /var/lock/invoices.lock (host, waits)"
    # @reboot and a job that never runs are not on the clock; hourly jobs are beside the week
    assert [r.job.schedule.text for r in audit.off_clock] == ["@reboot", "15 3 * * *"]
    hourly = {audit.rows[i].job.schedule.text for i in audit.hourly}
    assert hourly == {"*/5 * * * *", "*/35 * * * *", "0 * * * *", "* * * * *",
                      "everyTenMinutes()"}
    heat = audit.heat()
    assert heat[0][2] == 2  # 02:15 reconcile and 02:30 invoices, Berlin time


def _hostile_tree(write_tree):
    return write_tree({
        "ops/<i>x</i>/crontab": (
            "*/5 * * * * /srv/app/bin/sync.py --name '<script>alert(1)</script>' "
            "\"</script><img src=x onerror=alert(2)>\"\n"),
        "bin/sync.py": "#!/usr/bin/env python3\nprint('x')  # <b>bold</b>\n",
    })


def test_html_escapes_everything_read_from_the_repository(write_tree):
    root = _hostile_tree(write_tree)
    html = render_html(build_audit(run_analysis(root)))
    assert "<script>alert" not in html and "<img src=x" not in html and "<i>x</i>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<script") == 3  # the two data blocks and the page's own code
    data = re.findall(r'<script type="application/json" id="labels-data">(.*?)</script>', html,
                      re.S)
    assert "ops/<i>x</i>/crontab:1" in json.loads(data[0])[0]


def test_html_is_self_contained():
    html = render_html(build_audit(run_analysis(EXAMPLE)))
    assert "default-src 'none'" in html  # the page may load nothing, even if told to
    assert not re.search(r"<(link|img|iframe|object|embed)[^>]*\b(src|href)=\"(?!data:|#)", html)
    assert not re.search(r"\bsrc=", html.split("<main>")[0] + html.split("</main>")[1])
    assert not re.search(r"@import|url\(", html)
    external = re.findall(r'href="(https?://[^"]+)"', html)
    assert external and all(u.startswith("https://jobsafe.dev/rules/") for u in external)


def test_markdown_inventory_for_a_pull_request(write_tree):
    root = _hostile_tree(write_tree)
    md = render_markdown_inventory(build_audit(run_analysis(root)))
    assert "1 scheduled jobs in" in md and "- **1** no overlap guard" in md
    row = next(line for line in md.splitlines() if line.startswith("| ops/"))
    assert "<script>" not in row and "&lt;script&gt;" in row
    assert row.replace("\\|", "").count("|") == 10  # nine columns, none added by content
    assert "| JOB101 unguarded-job | 1 |" in md


def test_jobs_html_and_audit_commands(tmp_path, monkeypatch):
    monkeypatch.chdir(EXAMPLE)
    out = tmp_path / "jobs.html"
    result = CliRunner().invoke(main, ["jobs", "--format", "html", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text().startswith("<!DOCTYPE html>")
    result = CliRunner().invoke(main, ["audit", "--html", str(tmp_path / "a.html"),
                                       "--markdown", str(tmp_path / "a.md"),
                                       "--json", str(tmp_path / "a.json")])
    assert result.exit_code == 0, result.output  # an audit reports; `check` gates
    assert (tmp_path / "a.html").read_text() == out.read_text()
    assert len(json.loads((tmp_path / "a.json").read_text())["jobs"]) == 10
    assert "wrote the html report of 10 jobs" in result.output
    monkeypatch.chdir(tmp_path)
    (tmp_path / "crontab").write_text("0 3 * * * /bin/true\n")
    assert CliRunner().invoke(main, ["audit"]).exit_code == 0
    assert (tmp_path / "jobsafe-audit.html").exists()
    bad = CliRunner().invoke(main, ["audit", "--html", str(tmp_path / "missing" / "a.html")])
    assert bad.exit_code == 2 and "cannot write" in bad.output


def test_html_is_byte_identical_across_hash_seeds(tmp_path):
    outputs = set()
    for seed in ("0", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "JOBSAFE_CACHE_DIR": str(tmp_path / seed)}
        result = subprocess.run([sys.executable, "-m", "jobsafe", "jobs", "--format", "html",
                                 str(FIXTURES)], capture_output=True, text=True, env=env)
        assert result.returncode == 0, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_progress_is_told_how_reading_advances(write_tree):
    root = write_tree({f"app/m{i}.py": "import fcntl\n" for i in range(3)})
    told = []
    from jobsafe.analysis import analyse
    from jobsafe.config import Settings

    analyse([str(root)], Settings(), [], progress=lambda *a: told.append(a))
    assert told[-1] == ("scanning Python", 3, 3)


def _copies(tmp_path, n):
    """n copies of every fixture repository side by side: a tree of several hundred jobs."""
    for i in range(n):
        shutil.copytree(FIXTURES, tmp_path / f"team{i}", ignore=shutil.ignore_patterns(
            ".jobsafe_cache"))
    return tmp_path


def test_a_report_of_500_jobs_stays_under_2_mb(tmp_path):
    """Under 2 MB for 500 jobs: 4 KB a job, findings, excerpts and fix diffs included (the
    copies of the fixtures hold more than 500 jobs, and more as fixtures are added)."""
    analysis = run_analysis(_copies(tmp_path, 4))
    jobs = len(analysis.project.jobs)
    assert jobs >= 500
    html = render_html(build_audit(analysis))
    assert len(html.encode()) < 4_000 * jobs
