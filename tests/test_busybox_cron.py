"""busybox's crond dialect, compared with busybox's crond itself (Debian's busybox-static,
which prints what its parser read in each field): the recorded answers of
``tests/golden/busybox_crond.json`` always, the live crond where it is unpacked."""
import json

import pytest

from jobsafe.busybox_cron import FIELDS, read_field, read_fields
from jobsafe.sources.crontab import parse_crontab
from oracles import busybox

CASES = json.loads(busybox.GOLDEN.read_text())["cases"]


#: crond's struct keeps the arrays as day-of-week, month, hour, day-of-month, minute: a
#: negative index written to one (month 0, a number that wraps) lands in the one before
_SPILLS_INTO = {4: 3, 3: 1, 1: 2, 2: 0}  # field -> the field whose writes land in it


def _agrees(schedule: str, answer: list[str]) -> bool:
    """Each field: the values crond printed (its own, and what the next array in the struct
    spilled into it before it was printed), or a parse error where it logged one."""
    readings = [read_field(text, size, offset, names)
                for text, (_, size, offset, names) in zip(schedule.split(), FIELDS)]
    for index, (reading, seen) in enumerate(zip(readings, answer)):
        if seen == "error":
            if not reading.error:
                return False
            continue
        values = set(reading.values)
        source = _SPILLS_INTO.get(index)
        if source is not None and source < index:  # (parsed, so spilled, before printing)
            size = FIELDS[index][1]
            values |= {size + i for i in readings[source].spilled if size + i >= 0}
        if reading.error or values != {i for i, bit in enumerate(seen) if bit == "1"}:
            return False
    return len(answer) == 5


def test_the_cases_cover_the_suites():
    assert len(CASES) >= 1500
    assert {"cronsim/croniter tests", "robfig/cron tests", "busybox cases"} <= \
        {c["source"] for c in CASES}


@pytest.mark.parametrize("source", sorted({c["source"] for c in CASES}))
def test_jobsafe_reads_each_field_as_busybox_does(source):
    wrong = [c["schedule"] for c in CASES if c["source"] == source
             and not _agrees(c["schedule"], c["fields"])]
    assert not wrong, wrong[:10]


@pytest.mark.skipif(not busybox.available(), reason="busybox-static not unpacked, or not root")
def test_the_recorded_answers_are_busyboxs():
    sample = CASES[::4]
    assert busybox.ask([c["schedule"] for c in sample]) == [c["fields"] for c in sample]


@pytest.mark.parametrize("schedule, expression, errors", [
    ("0 0 * * 7", "0 0 * * *", 1),          # the fill loop never reaches 7: every day
    ("60 * * * *", "* * * * *", 1),
    ("5/15 * * * *", "5 * * * *", 0),       # a step after one value steps over it alone
    ("0 0 * * Monday", "0 0 * * 1", 1),     # three letters read, the rest an error
    ("0 0 */2 * *", "0 0 2,4,6,8,10,12,14,16,18,20,22,24,26,28,30 * *", 0),  # from index 0
    ("0 0 1 * 1", "0 0 1 * 1", 0),          # both restricted: either day
    ("0 0 1-31 * 1", "0 0 " + ",".join(map(str, range(1, 32))) + " * 1", 0),  # not "*"
    ("0 0 1 0,5 1", "0 0 1 5 1,6", 0),      # month 0 is index -1: Saturday, in the struct
    ("4294967290 0 1 * *", None, 0),        # a minute that wraps to -6: day 26, no minute
])
def test_what_a_line_runs_on(schedule, expression, errors):
    reading = read_fields(schedule.split())
    assert (reading.expression, len(reading.errors)) == (expression, errors)


def test_a_crontab_under_etc_crontabs_runs_as_busybox_reads_it():
    result = parse_crontab("root", "0 0 * * 7 /srv/backup.sh\n1#2 * * * * /srv/x.sh\n"
                           "@daily /srv/y.sh\n", False, dialect="busybox")
    weekly = result.entries[0]
    assert weekly.schedule.runs_per_day == 1.0 and weekly.schedule.misread
    # a '#' starts a comment anywhere: the line is too short, crond skips it
    assert result.entries[1].never_runs is not None


def test_crond_reads_no_cron_tz():
    (entry,) = parse_crontab("root", "CRON_TZ=Europe/Berlin\n30 2 * * * /srv/x.sh\n", False,
                             dialect="busybox").entries
    assert entry.schedule.timezone is None

