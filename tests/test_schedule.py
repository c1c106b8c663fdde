"""Schedule arithmetic against brute-force iteration with cronsim itself."""
import datetime as dt

import pytest
from cronsim import CronSim

from jobsafe.schedule import (ScheduleError, span_start, cron_schedule, dst_shifted_minutes,
                              coincide, cron_firings)
from jobsafe.timespec import COREUTILS, SYSTEMD, parse_duration

EXPRESSIONS = ["*/5 * * * *", "0 3 * * *", "*/35 * * * *", "0 0 13 * 5", "0 9-17 * * 1-5",
               "15,45 */2 * * *", "0 0 1 * *", "30 4 * * sun", "0 0 * jan,jul mon-fri",
               "0 12 */2 * 1", "59 23 31 * *", "0 0 29 2 *"]


def brute(expr, days):
    start = dt.datetime.combine(span_start(), dt.time())
    end = start + dt.timedelta(days=days)
    times = []
    for t in CronSim(expr, start - dt.timedelta(minutes=1)):
        if t >= end:
            break
        times.append(t)
    return times


@pytest.mark.parametrize("expr", EXPRESSIONS)
def test_matches_brute_force_over_the_span(expr):
    sched = cron_schedule(expr, expr)
    span_days = (dt.date(span_start().year + 4, 1, 1) - span_start()).days
    times = brute(expr, span_days)
    assert sched.runs_per_day == round(len(times) / span_days, 4)
    gaps = [int((b - a).total_seconds()) for a, b in zip(times, times[1:])]
    assert sched.min_interval_seconds == (min(gaps) if gaps else None)


def test_macros_and_dom_dow_or_rule():
    assert cron_schedule("@hourly", "0 * * * *").min_interval_seconds == 3600
    # restricted both: OR -> Fridays and the 13th (more than 52 + 12 runs a year)
    assert cron_schedule("x", "0 0 13 * 5").runs_per_day * 365 > 60
    # Debian: a day-of-month starting with * means AND
    assert cron_schedule("x", "0 0 */2 * 1").runs_per_day * 365 < 30


@pytest.mark.parametrize("bad", ["61 * * * *", "* * * *", "* 25 * * *", "*/0 * * * *",
                                 "? * * * *", "H * * * *", "* * * foo *"])
def test_invalid_expressions(bad):
    with pytest.raises(ScheduleError):
        cron_schedule(bad, bad)


def test_coincidence():
    def together(a, b):
        return coincide(cron_firings(a), cron_firings(b))
    assert together("*/5 * * * *", "*/7 * * * *")
    assert not together("0 8 * * 1-5", "0 10 * * 0,6")
    assert not together("0 8 * * 1-5", "0 8 * * 0,6")


def test_dst_minutes():
    assert min(dst_shifted_minutes("Europe/Berlin")) == 120
    assert max(dst_shifted_minutes("Europe/Berlin")) == 179
    assert 90 in dst_shifted_minutes("America/New_York")  # 01:30 repeats in autumn
    assert 150 in dst_shifted_minutes("America/New_York")  # 02:30 is skipped in spring
    assert dst_shifted_minutes("UTC") == frozenset()
    assert dst_shifted_minutes("Asia/Tokyo") == frozenset()
    assert dst_shifted_minutes("Not/AZone") is None


def test_durations_in_each_dialect():
    """One grammar: coreutils reads one number with a one-letter unit, systemd adds parts."""
    assert parse_duration("90", COREUTILS) == 90
    assert parse_duration("1.5m", COREUTILS) == 90
    assert parse_duration("2h", COREUTILS) == 7200
    assert parse_duration("1d", COREUTILS) == 86400
    assert parse_duration("soon", COREUTILS) is None
    assert parse_duration("5min", COREUTILS) is None  # timeout(1) refuses it
    assert parse_duration("1m 30s", COREUTILS) is None
    assert parse_duration("5min 30s", SYSTEMD) == 330
    assert parse_duration("500ms", SYSTEMD) == 0.5
    assert parse_duration("1h30min", SYSTEMD) == 5400
    assert parse_duration("24h", SYSTEMD) == 86400
    assert parse_duration("", SYSTEMD) is None and parse_duration("5 parsecs", SYSTEMD) is None


def test_the_dst_finding_says_what_each_runtime_does(write_tree):
    """systemd skips a time that does not exist and runs a repeated one once (checked with
    systemd-analyze): only a skipped time is a finding there; cron is told either way."""
    from conftest import run_analysis

    unit = "[Service]\nType=oneshot\nTimeoutStartSec=1h\nExecStart=/bin/true\n"
    root = write_tree({
        "etc/systemd/system/spring.timer": "[Timer]\nOnCalendar=*-*-* 02:30 America/New_York\n",
        "etc/systemd/system/spring.service": unit,
        "etc/systemd/system/autumn.timer": "[Timer]\nOnCalendar=*-*-* 01:30 America/New_York\n",
        "etc/systemd/system/autumn.service": unit,
        "crontab": "CRON_TZ=America/New_York\n30 1 * * * /bin/true\n"})
    found = {f.span.path: f.message for f in run_analysis(root).findings if f.rule == "JOB112"}
    assert set(found) == {"etc/systemd/system/spring.service", "crontab"}
    assert "systemd does not start the job that day" in found["etc/systemd/system/spring.service"]
    assert "the autumn change repeats: cron runs it once" in found["crontab"]


@pytest.mark.parametrize("expr", EXPRESSIONS + ["0 0 29 2 *", "0 0 31 * *", "0 12 * * 0",
                                                "*/1 * * * *", "0 0 1 1 *", "59 23 31 12 *",
                                                "0 */6 1,15 * *", "5 4 * * 6,0"])
def test_one_expression_is_summarised_as_the_general_union_does(expr):
    """The shortcut for one cron expression gives what the day-by-day union gives."""
    from jobsafe.schedule import Firings, _summarize_groups, summarize

    firings = cron_firings(expr)
    assert len(firings.groups) == 1
    assert summarize(firings) == _summarize_groups(firings)
    days, times = firings.groups[0]
    for other in (Firings(((days, ()),), firings.span_days),  # no time of day
                  Firings(((frozenset(), times),), firings.span_days),  # no day comes
                  Firings(((frozenset(sorted(days)[:1]), times),), firings.span_days)):
        assert summarize(other) == _summarize_groups(other)
