"""Debian's cron dialect, compared with Debian's own ``crontab -n`` (issue 16).

The oracle is the ``crontab`` binary of Debian's ``cron`` package (``.ci/run`` downloads and
unpacks it into ``$JOBSAFE_ORACLES``; nothing is installed), run in a private mount namespace
(tests/oracles/). Where it is not, its recorded answers stand in
(tests/golden/debian_crontab.json, written by scripts/record_oracles.py); the dialect's
reading is tested either way.
"""
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracles import (DebianOracle, debian_available,
                     jobsafe_accepts_debian, recorded_debian)
from schedule_grammars import debian_schedule

from jobsafe.debian_cron import read_fields

#: schedules (and whether Debian's cron accepts them), from the issue and cron's manual
CASES = [
    "5/15 * * * *", "0 0/6 * * *", "0 0 L * *", "0 0 1W * *", "@Daily", "@REBOOT", "@daily",
    "@midnight", "@reboot", "0 0 * * Mon-Sun", "0 0 1 Nov-Mar *", "0 0 * * 1#2",
    "0 0 30 2 *", "1,4,5 1-3 * * Wed-Sun", "*/5 * * * *", "0 0 * * 7", "0 0 * * 0-7",
    "0 0 * * SUN", "0 0 * * sun", "0-59/5 * * * *", "60 * * * *", "0 24 * * *", "0 0 0 * *",
    "0 0 * 13 *", "0 0 * * 8", "*/0 * * * *", "0 0 ? * *", "0 0 * * *", "5-1 * * * *",
    "0 0 * JAN-FEB *", "0 0 * * Mon,Tue", "0 0 * * mon-fri/2", "1-59/60 * * * *",
    "0 0 1,15 * 1-5", "*/7 */3 * * *", "0 12 * * 1-5/2", "15 3 1-7 * 1", "0 0 * * Monday",
    "0 0 1 January *", "0 0 31 * *", "@annually", "@yearly", "@monthly", "@weekly", "@hourly",
    "0 0 1 1-12/3 *", "0 0 * * */2", "*/15 9-17 * * mon-fri",
    # separators other than space and tab (a no-break space pasted from a web page)
    "*/5\u00a0* * * *", "0 0\u00a0* * *", "0\u2009* * * *", "0 0 * *\u00a01",
    # numbers as C's atoi reads them (cut to an int: 4294967296 is 0), leading zeros
    "4294967296 * * * *", "0 0 * * 4294967297", "1-4294967298 * * * *", "0 0 4294967296 * *",
    "99999999999999999999 * * * *", "*/4294967296 * * * *", "007 * * * *", "0 0 * * 0007",
    # the examples of cronie's crontab(5) (those Debian's does not have)
    "0-59 * * * *", "* * * * *", "0 0 1 1 *", "0 0 1 * *", "0 0 * * 0", "0 * * * *",
    "30 4 1,15 * 5", "0 8-11 * * *", "1,2,5,9 * * * *", "0-4,8-12 * * * *", "0 0-23/2 * * *",
    "0 */2 * * *",
    # Debian skips the rest of a field after what it reads
    "*-9 * * * *", "1-24-24 * * * *", "*/3/4 * * * *", "33-5,55 * * * *", "0 0 * * 1-2#",
]

#: fields Debian stops reading at a character its parser does not continue with: it runs
#: ``*/1``, ``1-5``
STOPS = ["*/1.5 * * * *", "0 9 * * 1-5;"]
#: every schedule this module asks crontab -n about (scripts/record_oracles.py records them)
SCHEDULES = CASES + STOPS

#: the recorded schedules from elsewhere: chkcrontab's tests, cron's manual, generated ones
RECORDED = sorted(s for s, (_, source) in recorded_debian().items()
                  if not source.startswith("tests/"))


@pytest.fixture(scope="module")
def debian():
    return DebianOracle(SCHEDULES + RECORDED)


@pytest.mark.parametrize("schedule", CASES)
def test_accepts_what_debians_crontab_accepts(schedule, debian):
    assert jobsafe_accepts_debian(schedule) == debian.accepts(schedule)


@pytest.mark.parametrize("schedule", RECORDED, ids=repr)
def test_recorded_schedules_accepted_as_debian_accepts_them(schedule, debian):
    """chkcrontab's test crontabs, the examples of crontab(5), generated schedules."""
    assert jobsafe_accepts_debian(schedule) == debian.accepts(schedule)


#: examples per run, each a batch of schedules asked of crontab -n in one namespace; a long,
#: random run: JOBSAFE_ORACLE_EXAMPLES=2000 python -m pytest tests/test_debian_cron.py -k generated
EXAMPLES = int(os.environ.get("JOBSAFE_ORACLE_EXAMPLES", "25"))
DERANDOMIZE = "JOBSAFE_ORACLE_EXAMPLES" not in os.environ


@pytest.mark.skipif(not debian_available(),
                    reason="Debian's crontab not here: generated schedules need it")
@settings(max_examples=EXAMPLES, deadline=None, derandomize=DERANDOMIZE,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.randoms(use_true_random=False).map(debian_schedule), min_size=1,
                max_size=40))
def test_generated_schedules_accepted_as_debian_accepts_them(schedules):
    oracle = DebianOracle(schedules)
    assert oracle.live is not None
    disagreements = [(s, oracle.live[s]) for s in schedules
                     if jobsafe_accepts_debian(s) != oracle.live[s]]
    assert not disagreements


@pytest.mark.parametrize("schedule", STOPS)
def test_a_field_debian_stops_reading_at_a_character_outside_the_readers_set(schedule, debian):
    assert debian.accepts(schedule) and jobsafe_accepts_debian(schedule)


@pytest.mark.parametrize("fields, reading", [
    ("5/15 * * * *", "refused"),
    ("0 0 * * 1#2", "0 0 * * 1"),              # text after '#' is ignored
    ("0 0 * * Mon-Sun", "never"),              # descending: empty, and the day of month is *
    ("0 0 1 Nov-Mar *", "never"),
    ("1,4,5 1-3 * * Wed-Sun", "never"),        # Wed-Sun is empty; day of month is *
    ("0 0 1 * Wed-Sun", "0 0 1 * *"),          # both restricted, the empty one never fires
    ("0 0 * * 7", "0 0 * * 7"),                 # as written: the libraries read 7 as Sunday too
    # Debian stops reading a field where an item cannot go on (the rest up to a blank is
    # skipped), and an empty descending item of a list matches nothing
    ("1-24-24 * * * *", "1-24 * * * *"), ("** * * * *", "* * * * *"),
    ("*/3/4 2* * * *-7", "*/3 2 * * *"), ("33-5,55 * * * *", "55 * * * *"),
    ("0 0 5-1,*/2 * 1", "0 0 1-31/2 * 1"),      # not written from '*': either day may match
    ("60-10 * * * *", "refused"), ("0 0 0-1 * *", "refused"), ("1-2x * * * *", "refused"),
    ("0 0 * * 1.5", "0 0 * * 1"), ("0 0 4294967296 * *", "refused"),
    ("4294967301 007 * * *", "5 7 * * *"),
])
def test_debian_reads_ranges_steps_and_comments_as_its_parser_does(fields, reading):
    got = read_fields(fields.split())
    if reading == "refused":
        assert got.refused is not None
    elif reading == "never":
        assert got.never is not None and got.expression is None
    else:
        assert got.expression == reading
