"""Daylight saving in the schedule arithmetic: the shortest interval and the runs per day
follow what the runtime does on the days the clocks change.

Debian's cron (cron.c's main loop, Vixie's): after the spring change a fixed-time entry's
firings in the skipped hour are caught up one after another (a 10-second pause after each
run) at the first minute after the change; in the repeated autumn hour it runs once.
A wildcard entry (minute or hour field beginning with ``*``) is not caught up and runs in
both repeated hours. systemd skips a time that does not exist and elapses once at a repeated
one (the first) — compared here with ``systemd-analyze calendar`` (live where it is
installed, its recorded answers where it is not).
"""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import pytest
from conftest import run_analysis
from oracles import CalendarQuery, SystemdOracle

from jobsafe.calendar import parse_calendar
from jobsafe.schedule import (calendar_schedule, change_days, changed_times, cron_firings,
                              cron_schedule, real_firings)

UTC = dt.timezone.utc


def at(*args) -> float:
    return dt.datetime(*args, tzinfo=UTC).timestamp()


def day(*args) -> int:
    return dt.date(*args).toordinal()


def hm(hour: int, minute: int = 0) -> int:
    return hour * 3600 + minute * 60


def test_the_changed_local_times_of_concrete_days():
    assert changed_times(day(2026, 3, 29), "Europe/Berlin") == (hm(2), hm(3), True)
    assert changed_times(day(2026, 10, 25), "Europe/Berlin") == (hm(2), hm(3), False)
    assert changed_times(day(2026, 3, 8), "America/New_York") == (hm(2), hm(3), True)
    assert changed_times(day(2026, 11, 1), "America/New_York") == (hm(1), hm(2), False)
    # Lord Howe Island changes by half an hour
    assert changed_times(day(2026, 10, 4), "Australia/Lord_Howe") == (hm(2), hm(2, 30), True)
    assert changed_times(day(2026, 3, 30), "Europe/Berlin") is None
    assert changed_times(day(2026, 3, 29), "Asia/Tokyo") is None


def test_debian_runs_a_skipped_fixed_time_right_after_the_change():
    """A daily 02:30 Europe/Berlin job runs at 03:00 CEST (01:00 UTC) on the spring day."""
    spring = day(2026, 3, 29)
    assert real_firings(spring, (hm(2, 30),), "Europe/Berlin", "cron", False) == \
        ([at(2026, 3, 29, 1, 0)], True)
    # systemd skips it; a wildcard entry of cron is not caught up
    assert real_firings(spring, (hm(2, 30),), "Europe/Berlin", "systemd", False) == ([], True)
    assert real_firings(spring, (hm(2, 30),), "Europe/Berlin", "cron", True) == ([], True)
    # New York: 02:30 EST does not exist on 8 March 2026; caught up at 03:00 EDT (07:00 UTC)
    assert real_firings(day(2026, 3, 8), (hm(2, 30),), "America/New_York", "cron", False) == \
        ([at(2026, 3, 8, 7, 0)], True)


def test_debian_catches_up_several_firings_ten_seconds_apart():
    spring = day(2026, 3, 29)
    # 02:00 and 02:30 skipped; 03:00 is reached by the same catch-up loop
    times, shifted = real_firings(spring, (hm(2), hm(2, 30), hm(3), hm(4)), "Europe/Berlin",
                                  "cron", False)
    assert shifted and times == [at(2026, 3, 29, 1, 0), at(2026, 3, 29, 1, 0, 10),
                                 at(2026, 3, 29, 1, 0, 20), at(2026, 3, 29, 2, 0)]
    # the loop stops when the real minute is over: six runs at most
    every_minute = tuple(hm(2, m) for m in range(60))
    assert len(real_firings(spring, every_minute, "Europe/Berlin", "cron", False)[0]) == 6


def test_the_repeated_hour_once_for_fixed_time_and_systemd_twice_for_wildcards():
    autumn = day(2026, 10, 25)
    hourly = tuple(hm(h) for h in range(24))
    wild, _ = real_firings(autumn, hourly, "Europe/Berlin", "cron", True)
    fixed, _ = real_firings(autumn, hourly, "Europe/Berlin", "cron", False)
    systemd, _ = real_firings(autumn, hourly, "Europe/Berlin", "systemd", False)
    assert len(wild) == 25 and at(2026, 10, 25, 0) in wild and at(2026, 10, 25, 1) in wild
    assert len(fixed) == 24 and at(2026, 10, 25, 1) not in fixed
    assert systemd == fixed


def _spring_days(zone: str) -> int:
    return sum(1 for o in change_days(zone) if changed_times(o, zone)[2])


def test_shortest_interval_and_runs_per_day_follow_the_runtime():
    zone = "Europe/Berlin"
    span = cron_firings("30 2 * * *").span_days
    springs = _spring_days(zone)
    assert springs >= 4
    daily = cron_schedule("30 2 * * *", "30 2 * * *", zone, runtime="cron")
    # 02:30 CET the day before (01:30 UTC), 03:00 CEST (01:00 UTC), 02:30 CEST (00:30 UTC)
    assert (daily.min_interval_seconds, daily.runs_per_day) == (23 * 3600 + 1800, 1.0)
    assert cron_schedule("30 2 * * *", "30 2 * * *", zone).min_interval_seconds == 86400
    timer = calendar_schedule(("*-*-* 02:30:00 Europe/Berlin",), "x")
    assert timer.min_interval_seconds == 86400
    assert timer.runs_per_day == round((span - springs) / span, 4)
    # an hourly wildcard entry: skipped once in spring, run twice in autumn, 1 h apart
    hourly = cron_schedule("0 * * * *", "0 * * * *", zone, runtime="cron")
    assert (hourly.min_interval_seconds, hourly.runs_per_day) == (3600, 24.0)
    # hourly written as fixed times: the skipped 02:00 is caught up 10 s before 03:00's run
    fixed = cron_schedule("0 0-23 * * *", "0 0-23 * * *", zone, runtime="cron")
    assert fixed.min_interval_seconds == 10
    assert fixed.runs_per_day == 24.0
    assert cron_schedule("15 2,3 * * *", "15 2,3 * * *", zone,
                         runtime="cron").min_interval_seconds == 900
    # systemd: an hourly timer runs 02:00 once in autumn (2 h to 03:00), skips it in spring
    timer = calendar_schedule(("hourly Europe/Berlin",), "x")
    assert timer.min_interval_seconds == 3600
    assert timer.runs_per_day == round((24 * span - springs) / span, 4)


@pytest.mark.parametrize("zone", ["UTC", "Asia/Tokyo", "Not/AZone"])
def test_zones_without_changes_keep_the_wall_clock(zone):
    schedule = cron_schedule("30 2 * * *", "30 2 * * *", zone, runtime="cron")
    assert (schedule.min_interval_seconds, schedule.runs_per_day) == (86400, 1.0)


def test_times_away_from_the_change_are_not_touched():
    for expr in ("0 12 * * *", "30 1 * * *", "0 4 * * *", "*/5 * * * *"):
        wall = cron_schedule(expr, expr, "Europe/Berlin")
        dst = cron_schedule(expr, expr, "Europe/Berlin", runtime="cron")
        assert (wall.min_interval_seconds, wall.runs_per_day) == \
            (dst.min_interval_seconds, dst.runs_per_day), expr


def test_bounded_for_every_second_and_every_minute():
    import time
    start = time.perf_counter()
    for expr in ("* * * * *", "0-59 0-23 * * *"):
        cron_schedule(expr, expr, "Europe/Berlin", runtime="cron")
    calendar_schedule(("*:*:0/1 Europe/Berlin",), "x")
    assert time.perf_counter() - start < 2.0


def test_a_crontab_with_cron_tz_gets_the_arithmetic(write_tree):
    root = write_tree({"etc/cron.d/jobs": (
        "CRON_TZ=Europe/Berlin\n"
        "30 2 * * * root /usr/local/bin/nightly\n"
        "0,30 2 * * * root /usr/local/bin/twice\n"
        "*/15 2 * * * root /usr/local/bin/wild\n")})
    analysis = run_analysis(root)
    jobs = {job.command.split("/")[-1]: job.schedule for job in analysis.project.jobs}
    assert jobs["nightly"].min_interval_seconds == 23 * 3600 + 1800
    assert jobs["twice"].min_interval_seconds == 10
    assert jobs["wild"].min_interval_seconds == 900 and jobs["wild"].runs_per_day == 4.0
    messages = {f.message for f in analysis.findings if f.rule == "JOB112"}
    assert any("wildcard job" in m and "both repeated hours" in m for m in messages)
    assert any("one after another right after the spring change (10 s apart)" in m
               for m in messages)


# -- systemd: systemd-analyze calendar as the oracle (live or recorded: tests/oracles/) -----

#: (expression, zone) pairs whose change days are compared
DST_CASES = [
    ("*-*-* 02:30:00", "Europe/Berlin"), ("hourly", "Europe/Berlin"),
    ("*-*-* 02,03:15:00", "Europe/Berlin"), ("*-*-* *:00/20:00", "Europe/Berlin"),
    ("*-*-* 01:30:00", "America/New_York"), ("*-*-* 02:10:00", "America/New_York"),
    ("*-*-* 02:15:00", "Australia/Lord_Howe"), ("*-*-* 01:45:00", "Australia/Lord_Howe"),
]
#: the year whose change days are compared: fixed, so the questions (and their recorded
#: answers) stay the same whatever year the tests run in
YEAR = 2027
_ITERATIONS = 3 * 72 + 30


def _change_days(zone: str) -> list[int]:
    """Ordinals of the days of YEAR on which the zone's UTC offset changes."""
    tz = ZoneInfo(zone)
    first = dt.date(YEAR, 1, 1)
    days = [first + dt.timedelta(days=i) for i in range(366)]
    return [d.toordinal() for d in days if d.year == YEAR and
            dt.datetime.combine(d, dt.time(), tz).utcoffset() !=
            dt.datetime.combine(d + dt.timedelta(days=1), dt.time(), tz).utcoffset()]


def _first_day(ordinal: int) -> dt.date:
    return dt.date.fromordinal(ordinal - 1)


def _query(expression: str, zone: str, ordinal: int) -> CalendarQuery:
    """systemd-analyze is asked from two days before the change."""
    base = dt.datetime.combine(_first_day(ordinal), dt.time(), UTC) - dt.timedelta(days=1)
    return CalendarQuery(f"{expression} {zone}", f"{base:%Y-%m-%d %H:%M:%S} UTC", _ITERATIONS)


#: every question this module asks systemd-analyze (scripts/record_oracles.py records them)
QUERIES = [_query(expression, zone, ordinal) for expression, zone in DST_CASES
           for ordinal in _change_days(zone)]


@pytest.fixture(scope="module")
def systemd():
    return SystemdOracle(QUERIES)


def _timestamps(elapses: tuple[str, ...]) -> list[float]:
    return [dt.datetime.strptime(e, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()
            for e in elapses]


@pytest.mark.parametrize("expression,zone", DST_CASES)
def test_systemd_change_days_as_systemd_analyze_computes_them(expression, zone, systemd):
    spec = f"{expression} {zone}"
    firings = calendar_schedule((spec,), spec)
    reading = parse_calendar(spec)
    assert len(_change_days(zone)) == 2
    for ordinal in _change_days(zone):
        ours: list[float] = []
        for near in (ordinal - 1, ordinal, ordinal + 1):
            seconds = reading.day_seconds() if reading.matches_day(dt.date.fromordinal(near)) \
                else ()
            ours += real_firings(near, seconds, zone, "systemd", False)[0]
        first = _first_day(ordinal)
        theirs = _timestamps(systemd.answer(_query(expression, zone, ordinal)).elapses)
        low = dt.datetime.combine(first, dt.time(), dt.timezone.utc).timestamp() + 14 * 3600
        high = low + 2 * 86400 - 28 * 3600
        window = sorted(t for t in ours if low <= t < high)
        assert window == [t for t in theirs if low <= t < high], (spec, first)
    assert firings.min_interval_seconds is not None
