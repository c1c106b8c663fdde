"""Kubernetes CronJob schedules, compared with robfig/cron v3 itself (issue 16).

The API server validates a schedule with robfig/cron's ``ParseStandard`` and the CronJob
controller computes firings with its ``Next``. Their answers for every case are recorded in
``tests/golden/robfig_cron.json`` (cases from robfig/cron's, cronsim's, croniter's and
GitHub's workflow-parser's tests, the Debian cases, daylight-saving days in five zones, and
generated schedules); when Go and Debian's golang-github-robfig-cron-dev are installed,
the live library is asked too, and must give the recorded answers.
"""
import datetime as dt
import json
import os
import shutil
import tempfile
from functools import lru_cache
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobsafe.kubernetes_cron import read_schedule
from jobsafe.schedule import impossible_days
from jobsafe.timespec import GO, parse_duration
from oracles import robfig_oracle
from oracles.instants import instants

CASES = json.loads(robfig_oracle.GOLDEN.read_text())["cases"]
HAVE_ORACLE = shutil.which("go") is not None and robfig_oracle.ROBFIG_SOURCE.exists()


def _utc(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def jobsafe_next(expression: str, zone: str, base: dt.datetime, n: int) -> list[str]:
    """The next ``n`` firings after ``base`` of jobsafe's reading, in robfig's format."""
    return [dt.datetime.fromtimestamp(t, dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            for t in instants(expression, zone, base, "every-match", count=n)]


#: Where jobsafe and robfig/cron differ, and why. Lord Howe's clocks change by half an hour:
#: robfig/cron's Next steps through the hours of that day in whole hours of real time, so
#: its search lands half an hour off and it misses firings whose local time exists (a
#: daily job is skipped for a day); jobsafe counts the firings the local times give.
DIFFERENCES = {
    ("0 0 * * *", "Australia/Lord_Howe", "2027-04-03T00:00:00Z"),
    ("*/20 2 * * *", "Australia/Lord_Howe", "2027-04-03T00:00:00Z"),
    ("15 2 * * 0", "Australia/Lord_Howe", "2027-04-03T00:00:00Z"),
    ("0 3 * * *", "Australia/Lord_Howe", "2027-04-03T00:00:00Z"),
    ("30 1 * * *", "Australia/Lord_Howe", "2027-10-02T00:00:00Z"),
    ("0 0 * * *", "Australia/Lord_Howe", "2027-10-02T00:00:00Z"),
    ("0 3 * * *", "Australia/Lord_Howe", "2027-10-02T00:00:00Z"),
}


def _agrees(case: dict) -> bool:
    if case["schedule"].startswith("@every "):  # an interval, read by _go_every
        every = parse_duration(case["schedule"][len("@every "):], GO)
        times = [_utc(case["base"]), *map(_utc, case["next"])]
        return every is not None and (case["error"] is None) and \
            {(b - a).total_seconds() for a, b in zip(times, times[1:])} == {max(1, every)}
    reading = read_schedule(case["schedule"])
    if (reading.refused is not None) != (case["error"] is not None):
        return False
    if reading.refused is not None:
        return True
    expression = reading.expression
    impossible = impossible_days(expression) if expression else None
    if impossible is not None:  # a day no month has (robfig/cron gives up after 5 years)
        expression = impossible[1]
    if expression is None:  # never fires
        return not case["next"]
    found = jobsafe_next(expression, case["zone"], _utc(case["base"]), case["n"])
    if len(case["next"]) < case["n"] and len(found) > len(case["next"]):
        # robfig/cron gives up when nothing fires in the five years after a firing
        last, then = _utc(case["next"][-1]), _utc(found[len(case["next"])])
        return found[:len(case["next"])] == case["next"] and then.year > last.year + 5
    return found == case["next"]


def test_the_recorded_cases_cover_the_suites_and_the_change_days():
    sources = {c["source"] for c in CASES}
    assert {"robfig/cron tests", "cronsim/croniter tests", "GitHub workflow-parser tests",
            "daylight saving", "generated"} <= sources
    assert len(CASES) >= 1500


@pytest.mark.parametrize("source", sorted({c["source"] for c in CASES}))
def test_jobsafe_reads_schedules_as_robfig_cron_does(source):
    cases = [c for c in CASES if c["source"] == source]
    wrong = {(c["schedule"], c["zone"], c["base"]) for c in cases if not _agrees(c)}
    expected = {d for d in DIFFERENCES if d in {(c["schedule"], c["zone"], c["base"])
                                                for c in cases}}
    assert wrong == expected, f"{len(wrong)} of {len(cases)} disagree: {sorted(wrong)[:10]}"


@lru_cache(maxsize=1)
def _live_oracle():
    folder = Path(tempfile.mkdtemp(prefix="robfig-"))
    return robfig_oracle.build(folder)


@pytest.mark.skipif(not HAVE_ORACLE, reason="Go or golang-github-robfig-cron-dev missing")
def test_the_recorded_answers_are_robfig_crons():
    binary = _live_oracle()
    assert binary is not None, "the oracle did not build"
    answers = robfig_oracle.ask(binary, CASES)
    stale = [c["schedule"] for c, a in zip(CASES, answers)
             if (a["error"] is None) != (c["error"] is None) or a["next"] != c["next"]]
    assert not stale, f"re-record tests/golden/robfig_cron.json: {stale[:10]}"


#: the days around 2027's clock changes. Not in zones whose clocks change at midnight
#: (Havana, Santiago): there robfig/cron's hour loop misses that the day changed when
#: midnight is skipped, and fires a day's 01:00 firing again on the next day, which jobsafe
#: does not copy (the recorded cases of those zones agree)
_CHANGE_DAYS = [("UTC", "2027-03-01T00:00:00Z"), ("Europe/Berlin", "2027-03-27T12:00:00Z"),
                ("Europe/Berlin", "2027-10-30T12:00:00Z"),
                ("America/New_York", "2027-03-13T12:00:00Z"),
                ("America/New_York", "2027-11-06T12:00:00Z")]


@pytest.mark.skipif(not HAVE_ORACLE, reason="Go or golang-github-robfig-cron-dev missing")
@settings(max_examples=int(os.environ.get("JOBSAFE_DIALECT_EXAMPLES", "60")), deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(_CHANGE_DAYS))
def test_generated_schedules_agree_with_robfig_cron(rng, where):
    binary = _live_oracle()
    assert binary is not None, "the oracle did not build"
    zone, base = where
    case = {"zone": zone, "base": base, "n": 10, "schedule": robfig_oracle.random_schedule(rng)}
    case.update(robfig_oracle.ask(binary, [case])[0])
    assert _agrees(case), case


def test_a_schedule_robfig_accepts_and_never_fires_is_said_once(write_tree):
    from conftest import run_analysis
    root = write_tree({"cron.yaml": (
        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: c\nspec:\n"
        "  schedule: \"0 0 , * *\"\n  concurrencyPolicy: Forbid\n  jobTemplate:\n    spec:\n"
        "      activeDeadlineSeconds: 60\n      template:\n        spec:\n"
        "          containers:\n            - name: c\n              image: app\n")})
    (found,) = [f for f in run_analysis(root).findings if f.rule == "JOB113"]
    assert str(found.message).count("never fires") == 1 and "Kubernetes accepts" in \
        str(found.message)
