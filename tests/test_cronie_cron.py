"""cronie's dialect, compared with cronie's own parser (entry.c compiled by
``tests/oracles/cronie``): the recorded answers of ``tests/golden/cronie_entry.json`` always,
the compiled harness where it is built; then where cronie's reading shows in the model."""
import json
import re

import pytest

from jobsafe.cronie_cron import FIELDS, read_field, read_fields
from jobsafe.sources.crontab import cron_d_name_ok, parse_crontab
from jobsafe.sources.dockerfile import file_dialect, runs_cronie
from oracles import cronie

CASES = json.loads(cronie.GOLDEN.read_text())["cases"]
_SIZES = [(0, 60), (0, 24), (1, 31), (1, 12), (0, 8)]


def _agrees(schedule: str, answer: str) -> bool:
    """jobsafe's reading of the line ``SCHEDULE true`` is cronie's: refused where it refused
    (the crontab reader's verdict), else the same values in every field (a ``~`` item:
    cronie's pick among jobsafe's)."""
    line = schedule.lstrip(" \t")
    if answer == "env" or line.startswith("@"):
        return True  # (environment lines and macros: the crontab reader's own tests)
    result = parse_crontab("crontab", f"{schedule} true\n", system=False, dialect="cronie")
    refused = not result.entries or result.entries[0].never_runs is not None and \
        result.entries[0].never_runs.why == "refused"
    words = [w for w in re.split(r"[ \t]+", line.removeprefix("-")) if w]
    readings = [read_field(text, lo, hi, names) for text, (_, lo, hi, names)
                in zip(words, FIELDS)]
    if answer == "error":  # (a `~` pick may land out of bounds: refused that time)
        return refused or any(r.may_refuse for r in readings)
    if refused:
        return False
    for index, (reading, bits) in enumerate(zip(readings, answer.split())):
        seen = {_SIZES[index][0] + i for i, bit in enumerate(bits) if bit == "1"}
        mine = set(reading.possible if reading.random else reading.values)
        if index == 4 and mine & {0, 7}:
            mine |= {0, 7}  # cronie sets Sunday as both 0 and 7
        if (reading.random and not (seen and seen <= mine)) or \
                (not reading.random and seen != mine):
            return False
    return True


def test_the_cases_cover_cronies_grammar():
    assert len(CASES) >= 1500
    assert sum(c["answer"] not in ("error", "env") for c in CASES) >= 600
    assert {"cronie grammar", "generated (cronie grammar)"} <= {c["source"] for c in CASES}


@pytest.mark.parametrize("source", sorted({c["source"] for c in CASES}))
def test_jobsafe_reads_each_field_as_cronie_does(source):
    wrong = [c["schedule"] for c in CASES if c["source"] == source
             and not _agrees(c["schedule"], c["answer"])]
    assert not wrong, wrong[:10]


@pytest.mark.skipif(not cronie.available(), reason="cronie's harness is not built")
def test_the_recorded_answers_are_cronies():
    sample = [c for c in CASES if "~" not in c["schedule"]]  # (a pick depends on the seed)
    assert cronie.ask([c["schedule"] for c in sample]) == [c["answer"] for c in sample]


@pytest.mark.parametrize("fields, expression", [
    ("0 6 * * Fri-0", "0 6 * * 0,5,6"),     # Sunday as 0 at a range's end
    ("5-0 * * * *", "5,6,7 * * * *"),       # ... in every field
    ("0 0 */2,5 * 1", "0 0 */2 * 1"),       # a leading star kept: it decides the day rule
    ("*/2,5-0 * * * *", "*/2,5,7 * * * *"),
    ("7~29 * * * *", "7 * * * *"),          # one value picked at load: the lowest
    ("0 0 * * sun-MON", "0 0 * * 0,1"),
])
def test_the_expression_computed_with(fields, expression):
    assert read_fields(fields.split()).expression == expression


@pytest.mark.parametrize("fields, why", [
    ("1#2 * * * *", "refused"), ("*/1.5 * * * *", "refused"), ("5/15 * * * *", "refused"),
    ("**/5 * * * *", "refused"), ("*/0 * * * *", "refused"), ("70~80 * * * *", "refused"),
    ("0 0 1 Dec-Jan *", "never"), ("0 23-1 * * *", "never"),
])
def test_what_cronie_refuses_or_never_runs(fields, why):
    reading = read_fields(fields.split())
    assert reading.expression is None
    assert (reading.refused if why == "refused" else reading.never)


def test_a_crontab_read_as_cronie():
    text = ("-*/5 * * * * quiet\n"            # "-": cronie does not log the run
            "0 0 * * * * typo\n"              # a sixth field: refused
            "1#2 * * * * weekly\n"
            "CRON_TZ=Europe/Berlin\n"
            "30 2 * * * berlin\n")
    result = parse_crontab("crontab", text, system=False, dialect="cronie")
    quiet, typo, weekly, berlin = result.entries
    assert quiet.never_runs is None and quiet.schedule.min_interval_seconds == 300
    assert typo.never_runs is not None and typo.never_runs.why == "refused"
    assert weekly.never_runs is not None and "cronie refuses" in weekly.never_runs.text
    # every minute whose time in Berlin matches: twice, an hour apart, on the autumn day
    assert berlin.schedule.dialect == "cronie" and berlin.schedule.timezone == "Europe/Berlin"
    assert berlin.schedule.min_interval_seconds == 3600
    debian = parse_crontab("crontab", "1#2 * * * * weekly\n", system=False).entries[0]
    assert debian.never_runs is None  # Debian's cron ignores the `#2`


@pytest.mark.parametrize("dockerfile, cronie_daemon", [
    ("FROM rockylinux:9\nRUN dnf install -y python3\n", True),
    ("FROM registry.access.redhat.com/ubi9/ubi-minimal\n", True),
    ("FROM alpine:3.20\nRUN apk add --no-cache cronie\n", True),
    ("FROM fedora AS build\nFROM debian:12\nRUN apt-get install -y cron\n", False),
    ("FROM python:3.12-slim\nRUN apt-get update && apt-get install -y cron\n", False),
    ("FROM alpine:3.20\n", False),  # busybox's crond
])
def test_the_daemon_an_image_runs(dockerfile, cronie_daemon):
    assert runs_cronie(dockerfile) is cronie_daemon
    assert file_dialect(False, False, "/etc/cron.d/app", runs_cronie(dockerfile)) == \
        ("cronie" if cronie_daemon else "debian")


@pytest.mark.parametrize("name, debian, cronie_reads", [
    ("backup", True, True), ("backup.cron", False, True), ("app_1-x", True, True),
    (".hidden", False, False), ("backup~", False, False), ("app.rpmsave", False, False),
    ("#draft", False, False),
])
def test_cron_d_names_each_daemon_reads(name, debian, cronie_reads):
    assert cron_d_name_ok(name) is debian
    assert cron_d_name_ok(name, "cronie") is cronie_reads
