"""systemd calendar events, compared with ``systemd-analyze calendar`` itself, live where it is
installed and from its recorded answers (tests/golden/systemd_calendar.json) where it is not
(tests/oracles/)."""
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import (CalendarQuery, SystemdOracle, calendar_disagreement, jobsafe_calendar,
                     recorded_calendar, systemd_available, systemd_skips_a_months_start)
from schedule_grammars import calendar_expression

from jobsafe.calendar import parse_calendar
from jobsafe.schedule import ScheduleError, calendar_schedule

EXPRESSIONS = [
    "minutely", "hourly", "daily", "weekly", "monthly", "yearly", "annually", "quarterly",
    "semiannually", "*:0/15", "*:00/10", "*:*:0/20", "*-*-* *:*:00", "*-*-* 00:00:00",
    "Mon..Fri 08:00", "Mon-Fri", "Sat,Sun *-*-* 10:00:00", "Sat,Sun 10:00", "Mon,Tue,Wed 06:30",
    "Tue..Thu,Sat 9..17:00", "Fri *-*-13", "Mon *-*-1..7 03:00", "Sun *-*-* 04:05:06",
    "*-*-1,15 12:00", "*-*-01 00:00", "*-1/2-1 00:00", "*-01,07-01", "*-02~03", "*-*~01 23:00",
    "*-*~01..03", "*-02-29 12:00", "2027-*-* 00:00", "2027..2028-06-01", "2027-01-01 00:00:01",
    "12:00:30", "*-*-* 00/6:00", "*-*-* 0..23/4:00", "*-*-* 06,18:00", "*-*-* 02:30",
    "*-*-* 02:30 Europe/Berlin", "*-*-* 01:30 America/New_York", "Mon 03:00 UTC",
    "*-*-* 23:59:59", "*-12-31 23:59", "*-*-15 00:00", "*-*-31", "*-*-* *:30", "*-*-* *:15,45",
    "*-*-* 9..17:00/30", "Mon..Sun 05:00", "Thu *-*-* 12:00", "Wed..Fri *-*-* 18:45",
    "*-*-10..20 07:00", "*-3..5-* 00:00", "*-*-1/7 08:00", "*-*-* 4:00", "*-*-* 12:00:00",
    "monday 02:00", "*-*-* *:0/5", "*-*-* 08:00:00/30", "Fri,Mon 01:00", "*-*-* 00:00:00 UTC",
]
# the inputs of systemd's own src/test/test-calendarspec.c (test_one, test_next; its test_next
# cases are also asked at their own moment and zone, NEXT below), and cases where jobsafe and
# systemd-analyze disagreed before (issue 16)
EXPRESSIONS += [
    "Sat,Thu,Mon-Wed,Sat-Sun", "Sat,Thu,Mon..Wed,Sat..Sun", "Mon,Sun 12-*-* 2,1:23",
    "Wed *-1", "Wed-Wed,Wed *-1", "Wed..Wed,Wed *-1", "Wed, 17:48",
    "Wed-Sat,Tue 12-10-15 1:2:3", "Wed..Sat,Tue 12-10-15 1:2:3", "*-*-7 0:0:0", "10-15",
    "monday *-12-* 17:00", "Mon,Fri *-*-3,1,2 *:30:45", "12,14,13,12:20,10,30",
    "mon,fri *-1/2-1,3 *:30:45", "03-05 08:05:40", "08:05:40", "05:40",
    "Sat,Sun 12-05 08:05:40", "Sat,Sun 08:05:40", "2003-03-05 05:40", "2003-03-05", "03-05",
    "semi-annually", "*:2/3", "2015-10-25 01:00:00 uTc", "2016-03-27 03:17:00.4200005",
    "2016-03-27 03:17:00/0.42", "9..11,13:00,30", "1..3-1..3 1..3:1..3",
    "00:00:1.125..2.125", "00:00:1.0..3.8", "*-*~1 Utc", "*-*~05,3 ", "*-*~* 00:00:00",
    "Monday", "Monday *-*-*", "*-*-*", "2016-03-27 03:17:00 UTC",
    "2016-03-27 03:17:00.420000001 UTC", "2015-11-13 09:11:23.42",
    "2015-11-13 09:11:23.42/1.77", "Sun 16:00:00", "*-04-31", "2016-02~01 UTC",
    "Mon 2017-05~01..07 UTC", "Mon 2017-05~07/1 UTC",
    "Mon *-05~07/1", "*-*~03/2", "*-*~07/3", "*-*~02/1", "Wed,", "bi-annually", "@1493187147",
    "9-1-1", "70-1-1", "22/1:00", "21/2:00", "*:58/1", "*-*-30/1", "2027/1-1-1",
    "*-*-* 00:00:58/1.5", "*-*-* 05..05:00", "*-*-* 10,10:00",
    # test_one of a later test-calendarspec.c
    "Wednesday,", "2015-10-25 01:00:00 Asia/Vladivostok", "weekly Pacific/Auckland",
    "00:00:01..03", "00:00:01/2,02..03", "*:*:*", "*:*", "12:*", "*:30", "93..00-*-*",
    "00..07-*-*", "*:20..39/5", "00:00:20..40/1", "*~03/1,03..05", "@1493187147 UTC", "@0",
    "@0 UTC", "*:05..05", "*:05..10/6",
    # snapm's tests (a Python reading of calendar events)
    "*:4,30:0..3", "*:4,30:0/1", "*:4,30:0/1,3,5",
    # generated expressions jobsafe read otherwise before: any zone file's name (not only
    # Area/City), @SECONDS with a zone (UTC all the same), two-digit years in lists and
    # ranges and written with four digits, ranges that cannot repeat (a value), every second
    # listed among other seconds ("*"), a range's end past 59 cut to its last step
    "daily CET", "*:* CET", "weekly Etc/GMT+5", "@1800000000 CET", "@1493187147 America/New_York",
    "27,28-*-* 00:00", "0027-01-01", "69-02,1..4/60-*", "16..24/24:*", "*:1..6/60",
    "2026..2026/30-*-* 3,18:*", "*:*:00/1,59,0", "*:*:11..30,47..60/1.77,57", "anually",
]
#: firings within a second: jobsafe counts whole seconds (a job's interval is never shorter
#: than one), so only the acceptance and the normalised form are compared
#: firings within a second: jobsafe counts whole seconds (a job's interval is never shorter
#: than one), so only the acceptance and the normalised form are compared
SUB_SECOND = ["*-*-* 00:00:59/0.5", "*-*-* 00:00:00.0000005", "*-*-* 00:00:00/0.000001",
              # every second listed among firings within a second: systemd writes "*"
              "thu..sun 00:*:42.9,00/1,2.5..24/4", "2027-01-18..21/4  *:*:00..41/0.5,03,0/1"]
INVALID = ["Fri..Mon 01:00", "*-*-* 25:00", "*-13-01", "Funday 01:00", "*-*-* 12:60", "every day", "*-*-32",
           # systemd's test-calendarspec.c rejects these
           "test", " utc", "    ", "", "7", "121212:1:2", "2000-03-05.23 00:00:00",
           "2000-03-05 00:00.1:00", "00:00:00/0.00000001", "00:00:00.0..00.9", "2016~11-22",
           "*-*~5/5", "Monday.. 12:00", "Monday..", "-00:+00/-5", "00:+00/-5",
           "2016- 11- 24 12: 30: 00", "*~29", "*~16..31", "12..1/2-*", "20/4:00", "00:00/60",
           "00:00:2300", "00:00:18446744073709551615", "@88588582097858858",
           # and systemd-analyze these (jobsafe accepted them before)
           "*-*~29", "*/4:00", "*:*/15", "23/1:00", "*:59/1",
           "*-*-31/1", "*-12/1-1", "*-*~01/1", "uTc", "*-*-* 00:00:01..01.5",
           "*-*-* 00:00:00/0.0000004",
           # systemd separates the parts by spaces only, and reads nothing after a time
           "*-15\t*:*", "Mon\t*-*-* 00:00", "*-* 18:51:* ", "daily ", " daily", "daily  UTC",
           "sat *:20 UTC ", "2031-12,12~7.0", "Mon Tue Two 2", "Mondayx", "Mon..Wed..Fri"]


def _at(usec: int) -> str:
    """A ``--base-time`` from the microseconds since the epoch of test-calendarspec.c."""
    return f"@{usec // 1_000_000}.{usec % 1_000_000:06d}"


#: test_next of systemd's test-calendarspec.c: the expression, the zone systemd runs in (its
#: "" is UTC), and the moment after which the next elapse is asked
NEXT = [CalendarQuery(expression, _at(after), 3, tz or "UTC") for expression, tz, after in [
    ("2016-03-27 03:17:00", "", 12345), ("2016-03-27 03:17:00", "CET", 12345),
    ("2016-03-27 03:17:00", "EET", 12345), ("2016-03-27 03:17:00 UTC", "", 12345),
    ("2016-03-27 03:17:00 UTC", "CET", 12345), ("2016-03-27 03:17:00 UTC", "EET", 12345),
    ("2016-03-27 03:17:00.420000001 UTC", "EET", 12345),
    ("2016-03-27 03:17:00.4200005 UTC", "EET", 12345), ("2015-11-13 09:11:23.42", "EET", 12345),
    ("2015-11-13 09:11:23.42/1.77", "EET", 1447398683420000),
    ("Sun 16:00:00", "CET", 1456041600123456), ("*-04-31", "", 12345),
    ("2016-02~01 UTC", "", 12345), ("Mon 2017-05~01..07 UTC", "", 12345),
    ("Mon 2017-05~07/1 UTC", "", 12345), ("*-*-01/5 04:00:00 UTC", "", 1646010000000000),
    ("*-01/7-01 04:00:00 UTC", "", 1664607600000000),
    ("2017-08-06 9,11,13,15,17:00 UTC", "", 1502029800000000),
    ("2017-08-06 9..17/2:00 UTC", "", 1502029800000000),
    ("2016-12-* 3..21/6:00 UTC", "", 1482613200000001),
    ("2017-09-24 03:30:00 Pacific/Auckland", "", 12345),
    ("2017-09-24 02:30:00 Pacific/Auckland", "", 12345),  # does not exist (daylight saving)
    ("2017-04-02 02:30:00 Pacific/Auckland", "", 12345),
    ("2017-04-02 02:30:00 Pacific/Auckland", "", 1491053400000000),  # repeated: once
    ("2017-04-02 03:30:00 Pacific/Auckland", "", 12345),
    ("2017-09-09 20:42:00 Pacific/Auckland", "", 12345),
    ("2017-09-09 20:42:00 Pacific/Auckland", "EET", 12345),
    ("Sun *-*-* 01:00:00 Europe/Dublin", "", 1616412478000000),
]]
#: systemd's search skips the first firings of a month's first day after a repetition of the
#: hours runs past midnight into it (oracles.systemd_skips_a_months_start); jobsafe lists them
SKIPS = [CalendarQuery("01/10:07", "2027-01-31 20:00:00 UTC", 4),
         CalendarQuery("01/10:7 Etc/GMT+5"), CalendarQuery("*-* 0/10:04 America/New_York"),
         CalendarQuery("3/15:41/2,52,44:30..42 Etc/GMT+5"),
         CalendarQuery("*-*-8/15,05,08..27 11..22/30,14:15..40,01,16..48/2 Etc/GMT+5"),
         CalendarQuery("*-*-8/15,5 12:00", "2026-12-31 13:00:00 UTC", 3)]


#: every question this module asks systemd-analyze (scripts/record_oracles.py records them)
QUERIES = [CalendarQuery(e) for e in EXPRESSIONS + SUB_SECOND + INVALID] + NEXT + SKIPS
#: the recorded questions from elsewhere: other projects' tests, generated expressions
RECORDED = sorted((q for q, (_, source) in recorded_calendar().items()
                   if not source.startswith("tests/")), key=lambda q: q.expression)


@pytest.fixture(scope="module")
def systemd():
    return SystemdOracle(QUERIES + RECORDED)


def test_at_least_sixty_expressions():
    assert len(set(EXPRESSIONS)) >= 60


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_matches_systemd_analyze(expression, systemd):
    query = CalendarQuery(expression)
    expected = systemd.answer(query)
    assert expected.normalized is not None, f"systemd rejects {expression!r}"
    assert jobsafe_calendar(query) == expected


@pytest.mark.parametrize("query", NEXT, ids=lambda q: f"{q.expression}@{q.base}/{q.tz}")
def test_next_elapse_as_systemd_computes_it(query, systemd):
    assert calendar_disagreement(query, systemd.answer(query)) is None


@pytest.mark.parametrize("expression", SUB_SECOND)
def test_sub_second_expressions_read_as_systemd_reads_them(expression, systemd):
    assert parse_calendar(expression).normalized() == \
        systemd.answer(CalendarQuery(expression)).normalized


@pytest.mark.parametrize("expression", INVALID)
def test_invalid_expressions_are_rejected(expression, systemd):
    with pytest.raises(ScheduleError):
        parse_calendar(expression)
    assert systemd.answer(CalendarQuery(expression)).rejected


@pytest.mark.parametrize("query", SKIPS, ids=lambda q: q.expression)
def test_systemd_skips_a_months_first_firings_after_a_repetition_overflows(query, systemd):
    answer = systemd.answer(query)
    assert jobsafe_calendar(query).elapses != answer.elapses
    assert systemd_skips_a_months_start(query, answer)
    assert calendar_disagreement(query, answer) is None


@pytest.mark.parametrize("query", RECORDED, ids=lambda q: repr(q.expression))
def test_recorded_expressions_read_as_systemd_reads_them(query, systemd):
    """Other projects' tests and generated expressions, with systemd's recorded answers."""
    assert calendar_disagreement(query, systemd.answer(query)) is None


#: examples per run, each a batch of expressions asked of systemd-analyze at once; a long,
#: random run: JOBSAFE_ORACLE_EXAMPLES=2000 python -m pytest tests/test_calendar.py -k generated
EXAMPLES = int(os.environ.get("JOBSAFE_ORACLE_EXAMPLES", "25"))
DERANDOMIZE = "JOBSAFE_ORACLE_EXAMPLES" not in os.environ


@pytest.mark.skipif(not systemd_available(),
                    reason="systemd-analyze not here: generated expressions need it")
@settings(max_examples=EXAMPLES, deadline=None, derandomize=DERANDOMIZE,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.randoms(use_true_random=False).map(calendar_expression), min_size=1,
                max_size=40))
def test_generated_expressions_read_as_systemd_reads_them(expressions):
    queries = [CalendarQuery(e) for e in expressions]
    oracle = SystemdOracle(queries)
    assert oracle.live is not None
    disagreements = [(q.expression, d) for q in queries
                     if (d := calendar_disagreement(q, oracle.live[q])) is not None]
    assert not disagreements


def test_schedule_arithmetic():
    s = calendar_schedule(("*:0/15",), "*:0/15")
    assert (s.min_interval_seconds, s.runs_per_day) == (900, 96.0)
    s = calendar_schedule(("Mon..Fri 08:00", "Sat,Sun 10:00"), "two lines")
    assert s.min_interval_seconds == 86400 - 2 * 3600 and s.runs_per_day == 1.0
    assert calendar_schedule(("daily",), "daily").fixed_time
    assert not calendar_schedule(("hourly",), "hourly").fixed_time


@pytest.mark.parametrize("expression", ["*-*-* 00:00:00/0.5", "*-*-* 00:00:00/0.000001"])
def test_a_sub_second_repetition_is_computed_not_enumerated(expression):
    """Every whole second of the minute (sub-second firings are counted per second);
    0.000001 s steps were 60 million iterations and hung the analysis."""
    seconds = parse_calendar(expression).day_seconds()
    assert seconds == tuple(range(60))
