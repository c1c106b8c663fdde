"""supercronic's cron dialect, compared with supercronic's own code.

The golden answers (tests/golden/supercronic.json) come from supercronic's crontab reader
and cronexpr, driven as supercronic drives them (tests/oracles/supercronic_oracle.go;
tests/oracles/record_supercronic.py records them): whether it accepts a line, where the
time fields end and the command begins, the first 50 start times from six bases (UTC, and
two minutes before each change of Europe/Berlin and America/New_York), and the runs and
shortest gap on every change day of those zones from 2026 to 2029. jobsafe's reading is
compared with them case by case; where Go and supercronic's source are here
(tests/oracles/supercronic.py), also with the oracle itself, on expressions hypothesis
draws from the dialect's grammar (``JOBSAFE_SUPERCRONIC_EXAMPLES`` batches, 5 by default).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import time
from bisect import bisect_right
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from conftest import run_analysis
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from oracles.supercronic import (BASES, CHANGE_DAYS, COMMAND, DAYS, ZONES, ask, build, decode,
                                 encode, expression)

from jobsafe import schedule as schedule_module
from jobsafe import supercronic_cron as sc
from jobsafe.schedule import changed_times, firings_of
from jobsafe.sources.crontab import parse_crontab
from jobsafe.sources.dockerfile import parse_dockerfile

GOLDEN = json.loads((Path(__file__).parent / "golden" / "supercronic.json").read_text())
SPAN_START = dt.date(2026, 1, 1)  # the golden days: the four years from 2026
SPAN_DAYS = (dt.date(2030, 1, 1) - SPAN_START).days
#: cases where jobsafe and supercronic part, and why (none known)
KNOWN: dict[str, str] = {}


@pytest.fixture
def span_2026(monkeypatch):
    """The arithmetic's four years start in 2026, as the golden days do."""
    for module in (sc, schedule_module):
        monkeypatch.setattr(module, "span_start", lambda: SPAN_START)
    schedule_module.change_days.cache_clear()
    yield
    schedule_module.change_days.cache_clear()


def _base(text: str) -> tuple[str, dt.datetime]:
    zone, local = text.split("@")
    return zone, dt.datetime.fromisoformat(local)


def starts(expr: sc.Expression, zone_name: str, base: dt.datetime, n: int) -> list[int]:
    """The first ``n`` start times after the local time ``base``, from jobsafe's reading:
    its days and seconds, time.Date's instants (``go_instant``) and what supercronic does
    with the firings of a spring day (``spring_day``)."""
    zone = ZoneInfo(zone_name)
    previous = int(base.replace(tzinfo=zone).timestamp())
    seconds = expr.day_seconds()
    out: list[int] = []
    for year in range(base.year, sc.LAST_YEAR + 1):
        first = max(base.date(), dt.date(year, 1, 1))
        for ordinal in sorted(expr.days_between(first, dt.date(year + 1, 1, 1))):
            todo = seconds
            if ordinal == base.toordinal():
                todo = seconds[bisect_right(seconds, base.hour * 3600 + base.minute * 60 +
                                            base.second):]
            changed = changed_times(ordinal, zone_name)
            skipped = next((s for s in seconds if changed and changed[2] and
                            changed[0] <= s < changed[1]), None)
            spring = None
            for second in todo:
                if second == skipped:
                    spring = sc.spring_day(seconds, ordinal, zone, previous)
                if spring is not None and second <= spring.until:
                    if second != spring.first or spring.kept is None:
                        continue
                    previous = spring.kept
                else:
                    previous = sc.go_instant(ordinal, second, zone)
                out.append(previous)
                if len(out) == n:
                    return out
    return out


def _day_search_starts() -> list[dt.datetime]:
    """The wall-clock times the oracle's ``day`` asks Next from when Next finds nothing:
    for each of DAYS, the first instant of the day before (its midnight) less 2, 4, …,
    1024 days (Go's AddDate: that day's midnight as time.Date makes it), the last of them
    twice; then it gives up. The earliest lie in 2023."""
    out = []
    for key in DAYS:
        zone_name, local = _base(key)
        zone = ZoneInfo(zone_name)
        for back in (2 ** k for k in range(1, 11)):
            instant = sc.go_instant(local.toordinal() - 1 - back, 0, zone)
            out.append(dt.datetime.fromtimestamp(instant, zone).replace(tzinfo=None))
    return out


#: where the oracle asks Next from for an expression whose Next finds nothing (only such
#: an expression, with an empty list of seconds, minutes, hours or months, can crash it):
#: each base, then its day search's starts
NOTHING_FOUND_STARTS = [_base(b)[1] for b in BASES] + _day_search_starts()


def read(case: str) -> dict:
    """jobsafe's answer for a golden line, in the golden's terms: a crash when supercronic
    started at one of the times the oracle asks from crashes."""
    reading = sc.read_line(case.lstrip(" \t"))
    if reading.refused is not None:
        return {"ok": False, "error": reading.refused}
    expr = reading.expression
    finds_nothing = not (expr.seconds and expr.minutes and expr.hours and expr.months)
    for start in NOTHING_FOUND_STARTS if finds_nothing else [_base(b)[1] for b in BASES]:
        stopped = sc.never(reading.expression, reading.schedule, start)
        if stopped is not None and stopped[1]:
            return {"ok": False, "crash": stopped[0]}
    return {"ok": True, "schedule": reading.schedule, "command": reading.command,
            "next": [encode(starts(reading.expression, *_base(base), 50)) for base in BASES]}


def disagreements(cases: list[dict]) -> list[tuple[str, str, object, object]]:
    """(case, what, supercronic's, jobsafe's) for each case where they part."""
    out = []
    for case in cases:
        got = read(case["case"])
        if case["ok"] != got["ok"] or ("crash" in case) != ("crash" in got):
            out.append((case["case"], "accepted", case.get("crash") or case.get("error") or
                        "ok", got.get("crash") or got.get("error") or "ok"))
            continue
        if not case["ok"]:
            continue
        if (case["schedule"], case["command"]) != (got["schedule"], got["command"]):
            out.append((case["case"], "fields", (case["schedule"], case["command"]),
                        (got["schedule"], got["command"])))
            continue
        for base, theirs, ours in zip(BASES, case["next"], got["next"]):
            if theirs != ours:
                a, b = decode(theirs), decode(ours)
                i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
                out.append((case["case"], f"start {i} from {base}", a[i:i + 2], b[i:i + 2]))
                break
    return out


def test_lines_read_and_run_as_supercronic_reads_and_runs_them():
    lines = GOLDEN["lines"]
    found = disagreements(lines)
    unexplained = [d for d in found if d[0] not in KNOWN]
    assert not unexplained, "\n".join(map(str, unexplained[:20]))
    assert len(lines) - len(found) >= 0.98 * len(lines)
    # the golden cases cover what they are for
    assert sum(c["ok"] for c in lines) > 250 and sum("crash" in c for c in lines) >= 4
    assert {c["from"] for c in lines} == {"cronexpr_test.go", "cronexpr README", "jobsafe",
                                          "generated"}


def expected_summary(case: dict, expr: sc.Expression, zone: str) -> tuple[int | None, float]:
    """(shortest gap, runs per day) over the four years from 2026 in ``zone``: jobsafe's
    wall-clock days and seconds, with the runs of each change day and the day before as
    supercronic makes them, and the shortest gap next to them where a firing falls in a
    time the change skips or
    repeats (the oracle's; elsewhere the arithmetic is wall-clock time, as for every
    runtime: a day of 23 hours between two midnight runs is not counted)."""
    days = sorted(expr.days_between(SPAN_START, dt.date(2030, 1, 1)))
    seconds = expr.day_seconds()
    runs = len(days) * len(seconds)
    gaps = [expr.shortest_gap(days)]
    matching = set(days)
    for key, (oracle_runs, gap) in zip(GOLDEN["days"], case["days"]):
        day_zone, local = _base(key)
        if day_zone != zone:
            continue
        ordinal = local.toordinal()  # (the oracle counts the day before too)
        runs += oracle_runs - len(seconds) * len({ordinal - 1, ordinal} & matching)
        start, end, _ = changed_times(ordinal, zone)
        if ordinal in matching and any(start <= s < end for s in seconds):
            gaps.append(gap if gap >= 0 else None)
    known = [g for g in gaps if g is not None]
    return (min(known) if known else None), round(runs / SPAN_DAYS, 4)


def test_runs_per_day_and_shortest_interval_follow_supercronic_on_change_days(span_2026):
    checked, found = 0, []
    for case in GOLDEN["lines"]:
        if not case["ok"]:
            continue
        reading = sc.read_line(case["case"])
        for zone in ZONES:
            schedule, never = sc.schedule(reading.schedule, reading.expression, zone)
            if never is not None:
                continue
            checked += 1
            want = expected_summary(case, reading.expression, zone)
            got = (schedule.min_interval_seconds, schedule.runs_per_day)
            if got != want and case["case"] not in KNOWN:
                found.append((case["case"], zone, want, got))
    assert checked > 400
    assert not found, "\n".join(map(str, found[:20]))


def test_crontab_files_are_read_as_supercronic_reads_them():
    found = []
    for case in GOLDEN["files"]:
        result = parse_crontab("crontab", case["case"], False, dialect="supercronic")
        ok = result.refused is None and not result.errors
        if ok != case["ok"]:
            found.append((case["case"], "accepted", case.get("error") or case.get("crash"),
                          result.refused))
            continue
        if not ok:
            continue
        jobs = [[e.schedule.text, e.command] for e in result.entries]
        theirs = [[" ".join(sc.split(s)), c.rstrip()] for s, c in case["jobs"]]
        zone = result.entries[0].schedule.timezone if result.entries else None
        env = result.entries[0].env if result.entries else None
        if jobs != theirs or (result.entries and (
                env != case["environ"] or (zone or "Local") != case["timezone"])):
            found.append((case["case"], "jobs", (case["jobs"], case["timezone"],
                                                 case["environ"]), (jobs, zone, env)))
    assert not found, "\n".join(map(str, found))


def test_no_expression_hangs(span_2026):
    """Reading a line and its schedule in a zone that changes its clocks (the zone's
    change days are computed once for all) is computed, never enumerated: a guard against
    a hang only, far above the few milliseconds each takes (speed is measured outside the
    suite: a shared machine makes a tight bound flaky)."""
    schedule_module.change_days("Europe/Berlin")
    worst = (0.0, "")
    for case in GOLDEN["lines"]:
        best = float("inf")
        for _ in range(3):
            sc.parse.cache_clear()
            sc._firings.cache_clear()
            began = time.perf_counter()
            reading = sc.read_line(case["case"])
            if reading.expression is not None:
                sc.schedule(reading.schedule, reading.expression, "Europe/Berlin")
            best = min(best, time.perf_counter() - began)
        worst = max(worst, (best, case["case"]))
    assert worst[0] < 1.0, worst


# -- the reading in jobsafe's model ------------------------------------------------------


def test_seconds_years_and_the_first_reading_that_parses(span_2026):
    text = "\n".join([
        "*/10 * * * * * * /app/poll",        # seven fields: seconds first
        "0 0 12 * * * 2027 /app/yearly",      # six: years last
        "0 */5 * * * * /app/quartz",          # six: a Quartz line reads as 0 0,5,…,20 * * *
        "0 0 1 1 1 2100 /app/odd",            # 2100 is no year: five fields, then the command
        "@hourly date +%H:%M  >> /tmp/log",   # no `%` rule
    ]) + "\n"
    poll, yearly, quartz, odd, hourly = parse_crontab("c", text, False, dialect="supercronic"
                                                      ).entries
    assert (poll.schedule.text, poll.schedule.min_interval_seconds,
            poll.schedule.runs_per_day) == ("*/10 * * * * * *", 10, 8640)
    assert yearly.schedule.runs_per_day == round(365 / SPAN_DAYS, 4)
    assert (quartz.schedule.min_interval_seconds, quartz.schedule.runs_per_day,
            quartz.command) == (4 * 3600, 5, "/app/quartz")
    assert (odd.schedule.text, odd.command) == ("0 0 1 1 1", "2100 /app/odd")
    assert (hourly.schedule.cron, hourly.command) == ("0 0 * * * * *", "date +%H:%M  >> /tmp/log")
    assert all(e.schedule.dialect == "supercronic" and e.never_runs is None
               for e in (poll, yearly, quartz, odd, hourly))
    assert firings_of(poll.schedule).groups[0][1][:3] == (0, 10, 20)


def test_one_refused_line_stops_supercronic_and_every_job_of_the_file():
    text = "0 * * * * /app/a\n0 0 * * mon-sun /app/b\n0 1 * * * /app/c\n"
    a, b, c = parse_crontab("c", text, False, dialect="supercronic").entries
    assert (b.never_runs.why, b.never_runs.text) == (
        "refused", "supercronic refuses `0 0 * * mon-sun`: invalid interval mon-sun "
                   "(normalized to 1-0)")
    assert a.never_runs.why == c.never_runs.why == "file-refused"
    assert "line 2" in a.never_runs.text
    # a line that is no job at all: a parse error, and the file refused just the same
    result = parse_crontab("c", "0 * * * * /app/a\nFOO=\n", False, dialect="supercronic")
    assert result.errors and "crashes" in result.errors[0].message
    assert result.entries[0].never_runs.why == "file-refused"


def test_the_environment_and_zone_the_file_ends_with_apply_to_every_job(span_2026):
    text = "0 1 * * * /app/a\nCRON_TZ=Asia/Tokyo\nA=1\n30 2 * * * /app/b\n"
    a, b = parse_crontab("c", text, False, dialect="supercronic").entries
    assert a.schedule.timezone == b.schedule.timezone == "Asia/Tokyo"
    assert a.env == b.env == {"CRON_TZ": "Asia/Tokyo", "A": "1"}
    refused = parse_crontab("c", "CRON_TZ=Mars/Base\n0 1 * * * /app/a\n", False,
                            dialect="supercronic")
    assert refused.refused == (1, "unknown time zone Mars/Base")
    # a folder of the zone database is no zone (it raised IsADirectoryError in every dialect)
    for dialect in ("supercronic", "debian"):
        parse_crontab("c", "CRON_TZ=Europe\n30 2 * * * /app/a\n", False, dialect=dialect)


def test_a_line_longer_than_64_kib_refuses_the_file():
    """bufio.Scanner's limit (the oracle: 65 535 bytes are read, 65 536 are not)."""
    for length, refused in ((65535, False), (65536, True)):
        text = "#" + "a" * (length - 1) + "\n0 * * * * /app/a\n"
        result = parse_crontab("c", text, False, dialect="supercronic")
        assert (result.refused is not None) == refused


def test_crashes_and_times_that_never_come(span_2026):
    text = "30-10/5 * * * * /app/crash\n0 0 30 2 * /app/never\n"
    crash, never = parse_crontab("c", text, False, dialect="supercronic").entries
    assert crash.never_runs.why == "refused" and "crashes" in crash.never_runs.text
    assert never.never_runs.why == "never-matches" and "without pause" in never.never_runs.text


def test_an_empty_list_crashes_supercronic_started_before_the_last_point_its_walk_reaches(
        span_2026, monkeypatch):
    """11-2/6 lists no month and 2026-2027/1970 only 2026: started before 2026, supercronic
    crashes at its first nextYear (Go indexes the empty month list); from 2026 on it finds
    nothing and asks again without pause. An empty minute list of a job of 2026 crashes
    until its last hour of the year, 23:00 on 31 December."""
    line = "42-46 2,03-15 ? 7 11-2/6 0,1/1 2026-2027/1970 /usr/local/bin/job --flag"
    reading = sc.read_line(line)
    expr = reading.expression
    assert (expr.months, expr.years) == ((), (2026,))
    assert sc.crashes_before(expr) == dt.datetime(2026, 1, 1)
    why, crashes = sc.never(expr, reading.schedule, dt.datetime(2025, 12, 31, 23, 59, 59))
    assert crashes and "whenever it starts before 2026-01-01 00:00:00" in why
    assert sc.never(expr, reading.schedule, dt.datetime(2026, 1, 1)) == (
        "its month field matches nothing; supercronic finds no next time and asks again "
        "without pause", False)
    (job,) = parse_crontab("c", line + "\n", False, dialect="supercronic").entries
    assert job.never_runs.why == "never-matches"
    monkeypatch.setattr(sc, "span_start", lambda: dt.date(2025, 1, 1))
    (job,) = parse_crontab("c", line + "\n", False, dialect="supercronic").entries
    assert job.never_runs.why == "refused" and "starts before 2026-01-01" in job.never_runs.text
    minutes = sc.read_line("30-10/5 * * * * 2026 /app/a").expression
    assert sc.crashes_before(minutes) == dt.datetime(2026, 12, 31, 23)
    assert [sc.never(minutes, "", dt.datetime(2026, 12, 31, 22, 59, 59))[1],
            sc.never(minutes, "", dt.datetime(2026, 12, 31, 23))[1]] == [True, False]
    every = sc.read_line("* * * * * /app/a").expression
    assert sc.crashes_before(every) is None


def test_a_skipped_fixed_time_runs_late_in_berlin_and_early_in_new_york(span_2026):
    """30 2 * * *: Berlin's 02:30 of 29 March 2026 starts at 03:30 CEST (01:30 UTC); New
    York's of 8 March at 01:30 EST (06:30 UTC), after which supercronic spins until 03:00
    EDT, and the 03:00 firing of `0 1,2,3 * * *` is lost."""
    berlin, new_york = ZoneInfo("Europe/Berlin"), ZoneInfo("America/New_York")
    spring = dt.date(2026, 3, 29).toordinal()
    assert sc.spring_day((9000,), spring, berlin, 0) == sc.SpringDay(
        9000, int(dt.datetime(2026, 3, 29, 1, 30, tzinfo=dt.timezone.utc).timestamp()), 12600)
    march = dt.date(2026, 3, 8).toordinal()
    early = sc.spring_day((9000,), march, new_york, 0)
    assert early.kept == int(dt.datetime(2026, 3, 8, 6, 30, tzinfo=dt.timezone.utc).timestamp())
    one_am = sc.go_instant(march, 3600, new_york)
    assert sc.spring_day((3600, 7200, 10800), march, new_york, one_am) == \
        sc.SpringDay(7200, None, 10800)


# -- which files are read in it ---------------------------------------------------------


def test_a_file_handed_to_supercronic_is_read_in_its_dialect_others_as_before():
    text = "\n".join([
        "FROM alpine",
        "COPY jobs.cron /app/jobs.cron",
        "COPY other.cron /app/other.cron",
        "RUN echo '*/10 * * * * * * /app/poll' >> /app/jobs.cron",
        'CMD ["sh", "-c", "go-crond /app/other.cron & supercronic /app/jobs.cron"]',
    ]) + "\n"
    result = parse_dockerfile("Dockerfile", text)
    dialects = {hint.dest: hint.dialect for hint in result.copies}
    assert dialects == {"/app/jobs.cron": "supercronic", "/app/other.cron": "lenient"}
    (written,) = result.entries
    assert written.schedule.dialect == "supercronic" and written.schedule.text.count(" ") == 6


def test_job113_names_supercronic_and_the_whole_file(write_tree):
    root = write_tree({
        "Dockerfile": "FROM alpine\nCOPY crontab /app/crontab\nCMD [\"supercronic\", "
                      "\"/app/crontab\"]\n",
        "crontab": "*/5 * * * * * * /app/poll.sh\n0 0 * * 1-7 /app/weekly.sh\n",
        "app/poll.sh": "#!/bin/sh\necho poll\n", "app/weekly.sh": "#!/bin/sh\necho w\n"})
    analysis = run_analysis(root)
    (finding,) = [f for f in analysis.findings if f.rule == "JOB113"]
    assert finding.span.line == 2 and "supercronic refuses `0 0 * * 1-7`" in finding.message
    assert "supercronic then stops at start" in finding.message
    poll = next(j for j in analysis.project.jobs if j.span.line == 1)
    assert poll.never_runs.why == "file-refused"


# -- the oracle itself, where Go and supercronic's source are here ----------------------


@pytest.fixture(scope="session")
def oracle(tmp_path_factory):
    binary = build(tmp_path_factory.mktemp("supercronic-oracle"))
    if binary is None:
        pytest.skip("supercronic's oracle cannot be built here (Go and its source)")
    return binary


def test_the_golden_answers_are_supercronics_answers(oracle):
    """The recorded cases of supercronic's own tests, its README and jobsafe's, asked again."""
    cases = [c for c in GOLDEN["lines"] if c["from"] != "generated"]
    answers = ask(oracle, [c["case"] for c in cases], BASES, DAYS)
    for case, answer in zip(cases, answers):
        assert answer["ok"] == case["ok"] and ("panic" in answer) == ("crash" in case), case
        if case["ok"]:
            (job,) = answer["jobs"]
            assert [encode(job["next"][b]) for b in BASES] == case["next"], case["case"]
            assert [[job["days"][d]["runs"], job["days"][d]["gap"]] for d in DAYS] == \
                case["days"], case["case"]


@st.composite
def expressions(draw) -> str:
    return expression(lambda options: draw(st.sampled_from(list(options))))


@settings(max_examples=int(os.environ.get("JOBSAFE_SUPERCRONIC_EXAMPLES", "5")), deadline=None,
          phases=(Phase.explicit, Phase.reuse, Phase.generate),  # (a batch: no shrinking)
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                 HealthCheck.function_scoped_fixture])
@given(batch=st.lists(expressions(), min_size=20, max_size=40))
# the months of 11-2/6 are none and 2026 is its one year: supercronic crashes started
# before 2026, as the oracle's day search is, and finds nothing from 2026 on
@example(batch=["42-46 2,03-15 ? 7 11-2/6 0,1/1 2026-2027/1970"])
def test_drawn_expressions_agree_with_the_oracle(oracle, span_2026, batch):
    lines = [f"{e} {COMMAND}" for e in batch]
    answers = ask(oracle, lines, BASES, DAYS)
    cases = []
    for line, answer in zip(lines, answers):
        case = {"case": line, "ok": answer["ok"]}
        if answer.get("panic"):
            case["crash"] = answer["panic"]
        elif answer["ok"]:
            (job,) = answer["jobs"]
            case.update(schedule=job["schedule"], command=job["command"],
                        next=[encode(job["next"][b]) for b in BASES],
                        days=[[job["days"][d]["runs"], job["days"][d]["gap"]] for d in DAYS])
        cases.append(case)
    found = disagreements(cases)
    assert not found, "\n".join(map(str, found))
    for case in cases:
        if case["ok"]:
            reading = sc.read_line(case["case"])
            for zone in ZONES:
                schedule, never = sc.schedule(reading.schedule, reading.expression, zone)
                if never is None:
                    assert (schedule.min_interval_seconds, schedule.runs_per_day) == \
                        expected_summary(case, reading.expression, zone), (case["case"], zone)


def test_the_change_days_are_the_zones(span_2026):
    assert {zone: [dt.date.fromordinal(o).isoformat() for o in schedule_module.change_days(zone)]
            for zone in ZONES} == CHANGE_DAYS


def test_supercronic_started_by_a_script_reads_a_folder_the_image_copied(write_tree):
    """An s6 service's ``run`` (or an entrypoint) starts supercronic on a file of a folder
    the Dockerfile copies whole: the file is read in supercronic's dialect, and supercronic
    (no -overlapping) never starts a job beside its last run."""
    root = write_tree({
        "Dockerfile": "FROM alpine\nCOPY docker/s6-rc.d /etc/s6-overlay/s6-rc.d\n"
                      "COPY docker/entrypoint.sh /entrypoint.sh\nCOPY . /app\n"
                      "ENTRYPOINT [\"/entrypoint.sh\"]\n",
        "docker/s6-rc.d/cron/run": "#!/command/with-contenv sh\n"
                                   "supercronic /etc/s6-overlay/s6-rc.d/cron/crontab\n",
        "docker/s6-rc.d/cron/crontab": "*/30 * * * * * * timeout 20s /app/poll.sh\n",
        "docker/entrypoint.sh": "#!/bin/sh\n# supercronic /app/old.cron\n"
                                "exec supercronic -overlapping /app/jobs.cron\n",
        "jobs.cron": "0 0 L * * timeout 1h /app/poll.sh\n",
        "poll.sh": "#!/bin/sh\necho poll\n"})
    jobs = {j.span.path: j for j in run_analysis(root).project.jobs}
    s6, entry = jobs["docker/s6-rc.d/cron/crontab"], jobs["jobs.cron"]
    assert (s6.schedule.dialect, s6.schedule.min_interval_seconds) == ("supercronic", 30)
    assert [g.kind for g in s6.guards] == ["supercronic"]
    assert entry.schedule.dialect == "supercronic" and entry.never_runs is None
    assert not entry.guards  # -overlapping


def test_a_change_at_midnight_skips_the_first_hour_of_the_day():
    assert changed_times(dt.date(2026, 9, 6).toordinal(), "America/Santiago") == (0, 3600, True)
    assert changed_times(dt.date(2026, 3, 8).toordinal(), "America/Havana") == (0, 3600, True)
    assert changed_times(dt.date(2026, 4, 4).toordinal(), "America/Santiago") == \
        (82800, 86400, False)
