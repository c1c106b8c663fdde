"""systemd calendar events, compared with ``systemd-analyze calendar`` itself."""
import datetime as dt
import os
import re
import shutil
import subprocess

import pytest

from jobsafe.calendar import next_elapses, parse_calendar
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
# the inputs of systemd's own src/test/test-calendarspec.c (test_one, test_next), and cases
# where jobsafe and systemd-analyze disagreed before (issue 16)
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
]
#: firings within a second: jobsafe counts whole seconds (a job's interval is never shorter
#: than one), so only the acceptance and the normalised form are compared
SUB_SECOND = ["*-*-* 00:00:59/0.5", "*-*-* 00:00:00.0000005", "*-*-* 00:00:00/0.000001"]
INVALID = ["Fri..Mon 01:00", "*-*-* 25:00", "*-13-01", "Funday 01:00", "*-*-* 12:60", "every day", "*-*-32",
           # systemd's test-calendarspec.c rejects these
           "test", " utc", "7", "121212:1:2", "2000-03-05.23 00:00:00", "2000-03-05 00:00.1:00",
           "00:00:00/0.00000001", "00:00:00.0..00.9", "2016~11-22", "*-*~5/5",
           # and systemd-analyze these (jobsafe accepted them before)
           "*~29", "*-*~29", "20/4:00", "00:00/60", "*/4:00", "*:*/15", "23/1:00", "*:59/1",
           "*-*-31/1", "*-12/1-1", "*-*~01/1", "uTc", "*-*-* 00:00:01..01.5",
           "*-*-* 00:00:00/0.0000004"]
BASE = "2027-01-01 00:00:00 UTC"
ANALYZE = shutil.which("systemd-analyze")


def systemd_reading(expression, iterations=5):
    proc = subprocess.run([ANALYZE, "calendar", f"--base-time={BASE}",
                           f"--iterations={iterations}", expression],
                          capture_output=True, text=True, env={**os.environ, "TZ": "UTC"},
                          timeout=30)
    if proc.returncode != 0:
        return None, []
    normalized = re.search(r"Normalized form: (.*)", proc.stdout).group(1).strip()
    elapses = re.findall(r"(?:Next elapse|Iter\. #\d+): \w+ (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC",
                         proc.stdout)
    return normalized, elapses


def jobsafe_reading(expression, iterations=5):
    spec = parse_calendar(expression)
    base = dt.datetime(2027, 1, 1, tzinfo=dt.timezone.utc)
    return spec.normalized(), [t.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
                               for t in next_elapses(spec, base, iterations)]


def test_at_least_sixty_expressions():
    assert len(set(EXPRESSIONS)) >= 60


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze not installed")
@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_matches_systemd_analyze(expression):
    expected = systemd_reading(expression)
    assert expected[0] is not None, f"systemd rejects {expression!r}"
    assert jobsafe_reading(expression) == expected


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze not installed")
@pytest.mark.parametrize("expression", SUB_SECOND)
def test_sub_second_expressions_read_as_systemd_reads_them(expression):
    assert parse_calendar(expression).normalized() == systemd_reading(expression)[0]


@pytest.mark.parametrize("expression", INVALID)
def test_invalid_expressions_are_rejected(expression):
    with pytest.raises(ScheduleError):
        parse_calendar(expression)
    if ANALYZE is not None:
        assert systemd_reading(expression)[0] is None


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
