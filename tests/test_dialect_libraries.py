"""Differential tests: Celery's ``crontab()`` and APScheduler 3's ``CronTrigger`` /
``IntervalTrigger`` as jobsafe reads them from a project, against the libraries themselves.

Each case is a schedule written in a tiny project; jobsafe analyses the project (it never
imports it) and the test builds the same schedule with the installed library. They must agree
on acceptance (the library raises: no job with a schedule, the entry is refused) and on
meaning: the library's own parse (Celery's field sets) over jobsafe's whole span, the next
firings the library computes from several starting points (Celery's ``remaining_estimate``,
APScheduler's ``get_next_fire_time`` in UTC), the runs per day and the shortest interval.

The cases are seeded from the libraries' own suites (celery ``t/unit/app/test_schedules.py``,
APScheduler 3.x ``tests/triggers/test_cron.py`` and ``tests/test_expressions.py``, huey's
``tests/test_crontab.py``) plus spellings projects write, and a hypothesis strategy of field
values. Huey's ``crontab()`` (its own dialect) is compared through its field sets and its
own predicate on minutes spread over the span (it has no next-run function).

Known differences, decided by what a schedule says (never by the case): APScheduler fields
a five-field schedule cannot hold — a restricted ``year`` or ``week``, several ``second``
values that are not one even step on every minute, weekday positions (``1st mon``) mixed
with days of the month in ``day``, or positions whose weekday ``day_of_week`` excludes (the
trigger never fires; jobsafe does not say so) — make the schedule "set, not known" (a job
whose timing jobsafe does not claim), never a wrong one. A single ``second`` is compared to
the minute (jobsafe's schedules hold minutes; the gaps are the same). ``start_date``,
``end_date``, ``jitter`` and ``timezone`` are not compared (the comparison runs in UTC with
no window).
"""
from __future__ import annotations

import datetime as dt
import os
import re
from zoneinfo import ZoneInfo

import pytest
from conftest import run_analysis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsafe.schedule import Firings, firings_of, span_start

celery_schedules = pytest.importorskip("celery.schedules")
aps_cron = pytest.importorskip("apscheduler.triggers.cron")
aps_interval = pytest.importorskip("apscheduler.triggers.interval")
try:
    import huey.api as huey_api
except ImportError:  # (the Celery and APScheduler comparisons run without it)
    huey_api = None

UTC = ZoneInfo("UTC")
#: firings compared from each starting point, and the starting points (days into the span)
FIRINGS = 120
STARTS = (0, 45, 400, 1100)


# -- what jobsafe concluded about one entry --------------------------------------------------

def _read(root, lines: dict[int, int]) -> dict[int, object]:
    """{case index: the Job at its line, or "never" (a job that never runs: its schedule
    never matches), or "refused" (JOB113 or JOB900 there), or None}."""
    analysis = run_analysis(root)
    by_line = {job.span.line: job for job in analysis.project.jobs}
    errors = {f.span.line for f in analysis.findings if f.rule in ("JOB900", "JOB113")}
    out: dict[int, object] = {}
    for index, line in lines.items():
        job = by_line.get(line)
        if job is not None and job.never_runs is None and line not in errors:
            out[index] = job
        elif job is not None and job.never_runs.why == "never-matches":
            out[index] = "never"
        else:
            out[index] = "refused" if (job is not None or line in errors) else None
    return out


def _jobsafe_next(firings: Firings, start: dt.datetime, count: int) -> list[dt.datetime]:
    """The first ``count`` firings at or after ``start`` (naive UTC) over jobsafe's span."""
    ordinals = sorted({o for matching, _ in firings.groups for o in matching
                       if o >= start.date().toordinal()})
    out: list[dt.datetime] = []
    for ordinal in ordinals:
        day = dt.datetime.combine(dt.date.fromordinal(ordinal), dt.time())
        seconds = sorted({s for matching, secs in firings.groups if ordinal in matching
                          for s in secs})
        for second in seconds:
            when = day + dt.timedelta(seconds=second)
            if when >= start:
                out.append(when)
                if len(out) == count:
                    return out
    return out


def _span() -> tuple[dt.datetime, dt.datetime]:
    start = span_start()
    return (dt.datetime.combine(start, dt.time()),
            dt.datetime.combine(dt.date(start.year + 4, 1, 1), dt.time()))


def _summary(times_by_day: dict[dt.date, list[int]], span_days: int) -> tuple[int | None, float]:
    """(shortest gap, runs per day) of firings given as {day: seconds of the day}."""
    ordered = sorted(times_by_day)
    gaps = [b - a for day in ordered for a, b in zip(times_by_day[day], times_by_day[day][1:])]
    gaps += [(d2 - d1).days * 86400 + times_by_day[d2][0] - times_by_day[d1][-1]
             for d1, d2 in zip(ordered, ordered[1:])]
    runs = sum(len(s) for s in times_by_day.values())
    return (min(gaps) if gaps else None), round(runs / span_days, 4)


def _compare_firings(job, library_next, sets=None, starts=STARTS, count=FIRINGS) -> str | None:
    """None when jobsafe's schedule of ``job`` fires as the library does, else why not.
    ``library_next(start, count)`` gives the library's next firings (naive UTC);
    ``sets`` — (minutes, hours, days of month, months, weekdays from Sunday=0) — the
    library's own parse, compared day by day over the whole span."""
    schedule = job.schedule
    first, end = _span()
    firings = firings_of(schedule)
    if firings is None:
        return f"jobsafe has no clock for it ({schedule.kind})"
    if sets is not None:
        minutes, hours, doms, months, dows = sets
        seconds = sorted(h * 3600 + m * 60 for h in hours for m in minutes)
        expected = {}
        day = first.date()
        while day < end.date():
            if day.month in months and day.day in doms and day.isoweekday() % 7 in dows:
                expected[day] = seconds
            day += dt.timedelta(days=1)
        by_signature: dict[frozenset[int], list[int]] = {}
        got_sorted: dict[dt.date, list[int]] = {}
        for ordinal in sorted({o for matching, _ in firings.groups for o in matching}):
            signature = frozenset(i for i, (matching, _) in enumerate(firings.groups)
                                  if ordinal in matching)
            if signature not in by_signature:
                by_signature[signature] = sorted({x for i in signature
                                                  for x in firings.groups[i][1]})
            if by_signature[signature]:
                got_sorted[dt.date.fromordinal(ordinal)] = by_signature[signature]
        if got_sorted != expected:
            wrong = sorted(set(got_sorted) ^ set(expected)) or \
                sorted(d for d in expected if expected[d] != got_sorted.get(d))
            return f"days or times differ from the library's sets (first: {wrong[:1]})"
        interval, per_day = _summary(expected, (end - first).days)
        if (schedule.min_interval_seconds, schedule.runs_per_day) != (interval, per_day):
            return (f"interval/runs per day {schedule.min_interval_seconds}/"
                    f"{schedule.runs_per_day}, library {interval}/{per_day}")
    for offset in starts if library_next is not None else ():
        start = first + dt.timedelta(days=offset)
        theirs = [t for t in library_next(start, count) if t < end]
        ours = _jobsafe_next(firings, start, len(theirs) or 1)
        if theirs != ours[:len(theirs)] or (not theirs and ours):
            return f"from {start:%Y-%m-%d}: library {theirs[:3]}, jobsafe {ours[:3]}"
    return None


# -- Celery -------------------------------------------------------------------------------

#: keyword arguments of ``crontab()`` (or a ``crontab.from_string`` text), from celery's suite
CELERY_CASES: list[dict | str] = [
    # crontab_parser: stars, ranges (wrapping ones too), groups, steps, composites
    {}, {"minute": "*"}, {"minute": "1-10"}, {"hour": "0-20"}, {"minute": "2-10"},
    {"hour": "11-1"}, {"day_of_month": "2-1"}, {"month_of_year": "11-1"},
    {"minute": "1,2,3,4"}, {"minute": "0,15,30,45"}, {"minute": "*/2"}, {"minute": "*/3"},
    {"day_of_month": "*/2"}, {"day_of_month": "*/3"}, {"minute": "2-9/5"},
    {"minute": "2-10/5"}, {"day_of_month": "55-5/3"}, {"minute": "55-5/3"},
    {"minute": "2-11/5,3"}, {"minute": "2-4/3,*/5,0-21/4"}, {"minute": "1-9/2"},
    {"day_of_month": "2-9/5"}, {"day_of_month": "1-9/2"}, {"month_of_year": "*/2"},
    {"month_of_year": "2-12/2"}, {"hour": "*/4"},
    # parse errors
    {"minute": ""}, {"minute": "1,,2"}, {"minute": "*/"}, {"minute": "-20"},
    {"month_of_year": "0"}, {"hour": "12-0"}, {"minute": "61-0"}, {"hour": "24"},
    {"minute": "*/0"}, {"minute": "5/15"}, {"minute": "1-5/"}, {"minute": "a-b"},
    # equality tests and from_string
    {"day_of_week": "1, 2"}, {"day_of_week": "1-2"}, {"day_of_month": "1, 16, 31"},
    {"day_of_month": "*/15"}, "* * * * *", "* * * * SUN", "0 8 5 * *", "0 8 5 *",
    "*/5 1-3 * jan-mar mon-fri", "0  8 * * *",
    # next occurrences
    {"minute": [5, 42]}, {"minute": [5, 10, 15]}, {"minute": [5, 42], "hour": [12, 17]},
    {"minute": [5, 42], "hour": [12]}, {"minute": 30, "hour": 14, "day_of_week": "sat"},
    {"minute": [5, 42], "day_of_week": "mon-fri"},
    {"minute": 30, "hour": 14, "month_of_year": "oct", "day_of_month": 18},
    {"minute": [5, 42], "month_of_year": "nov-dec", "day_of_month": 13},
    {"minute": 30, "hour": 14, "day_of_month": 18}, {"minute": [5, 42], "day_of_month": 29},
    {"minute": 30, "hour": 14, "day_of_week": "mon", "day_of_month": 18},
    {"minute": [5, 42], "day_of_week": "sat", "day_of_month": 29},
    {"minute": [5, 42], "day_of_week": "mon", "day_of_month": 18},
    {"minute": 30, "hour": 14, "day_of_month": 29},
    {"minute": 30, "hour": 14, "day_of_week": "fri", "day_of_month": 29, "month_of_year": 1},
    {"minute": [5, 42], "day_of_week": "wed,thu", "day_of_month": 29,
     "month_of_year": "1,4,7"},
    {"minute": 30, "hour": 14, "day_of_week": "fri", "day_of_month": 29,
     "month_of_year": "1-10"},
    {"minute": [5, 42], "day_of_week": "fri", "day_of_month": 29, "month_of_year": "2-10"},
    {"minute": [5, 42], "day_of_week": "mon", "day_of_month": 18, "month_of_year": "2-10"},
    {"minute": [5, 42], "day_of_week": "mon", "day_of_month": 29, "month_of_year": "2-4"},
    {"minute": [5, 42], "day_of_week": "fri,sat", "day_of_month": 29,
     "month_of_year": "2-10"},
    {"day_of_month": 31, "month_of_year": 4}, {"day_of_month": 30, "month_of_year": 4},
    {"minute": 30, "hour": 14, "day_of_month": 29, "month_of_year": 2},
    {"minute": 0, "hour": 9}, {"minute": 0, "day_of_month": "27-31"},
    {"minute": 40, "hour": 8}, {"minute": 0, "hour": "1,2"}, {"minute": "0,30", "hour": 1},
    # is_due's schedules
    {"minute": "*/15"}, {"minute": 30}, {"hour": 7, "minute": 30},
    {"hour": 7, "minute": 30, "day_of_week": "thursday"},
    {"hour": 7, "minute": 30, "day_of_week": "thursday", "day_of_month": "8-14"},
    {"hour": 22, "day_of_week": "*", "month_of_year": "2", "day_of_month": "26,27,28"},
    {"hour": 7, "minute": 30, "day_of_week": "thursday", "day_of_month": "8-14",
     "month_of_year": 3},
    # field formats and invalid values
    {"minute": "30"}, {"minute": (30, 40, 50)}, {"minute": (30, 40, 50, 51)},
    {"minute": 60}, {"minute": "0-100"}, {"hour": 6}, {"hour": "5"}, {"hour": (4, 8, 12)},
    {"hour": 24}, {"hour": "0-30"}, {"day_of_week": 5}, {"day_of_week": "5"},
    {"day_of_week": "fri"}, {"day_of_week": "tuesday,sunday,fri"},
    {"day_of_week": "mon-fri"}, {"day_of_week": "*/2"}, {"day_of_week": "fooday-barday"},
    {"day_of_week": "1,4,foo"}, {"day_of_week": "7"}, {"day_of_week": "12"},
    {"day_of_month": 5}, {"day_of_month": "5"}, {"day_of_month": "2,4,6"},
    {"day_of_month": "*/5"}, {"day_of_month": 0}, {"day_of_month": "0-10"},
    {"day_of_month": 32}, {"day_of_month": "31,32"}, {"month_of_year": 1},
    {"month_of_year": "1"}, {"month_of_year": "feb"}, {"month_of_year": "Mar"},
    {"month_of_year": "april"}, {"month_of_year": "may,jun,jul"},
    {"month_of_year": "aug-oct"}, {"month_of_year": "2,4,6"}, {"month_of_year": 0},
    {"month_of_year": "0-5"}, {"month_of_year": 13}, {"month_of_year": "12,13"},
    {"month_of_year": "jaan"}, {"month_of_year": "sebtember"},
    {"day_of_month": 30, "month_of_year": 2}, {"day_of_month": "30,31", "month_of_year": "feb"},
    {"day_of_month": 31, "month_of_year": "4,6,9,11"}, {"day_of_month": [], "month_of_year": "*"},
    {"day_of_month": "*", "month_of_year": []}, {"day_of_month": 29, "month_of_year": 2},
    {"day_of_month": "30,31", "month_of_year": "2,3"}, {"day_of_month": 31, "month_of_year": "4-5"},
    {"day_of_month": 31, "month_of_year": "*"},
    # what projects write: names in any case, full names, names in ranges and lists,
    # ranges that wrap, spaces, sets and ranges of numbers
    {"minute": 0, "hour": 3, "day_of_week": "Sunday"}, {"minute": 0, "day_of_week": "sat-mon"},
    {"minute": 0, "hour": 0, "day_of_week": "fri-tue/2"}, {"minute": 0, "day_of_week": "0"},
    {"minute": 0, "day_of_week": "sun,6"}, {"minute": 0, "hour": "22-2"},
    {"minute": 0, "hour": "*/7"}, {"minute": "*/7"}, {"minute": "*/45"}, {"minute": "59-1"},
    {"minute": 0, "day_of_week": "mon, fri"}, {"minute": 0, "day_of_week": "mon ,fri"},
    {"minute": 0, "hour": " 3"}, {"minute": {0, 30}}, {"minute": 0, "hour": range(0, 24, 6)},
    {"minute": 0, "month_of_year": "December"}, {"minute": 0, "month_of_year": "dec-feb"},
    {"minute": 0, "hour": 0, "day_of_month": "L"}, {"minute": 0, "day_of_week": "mar"},
    {"minute": "jan"}, {"minute": 0, "hour": 0, "day_of_month": "1-5/0"},
    {"minute": 0.0}, {"minute": "5.5"}, {"minute": "1_0"}, {"minute": "1-5-9"},
    {"minute": "*/15/2"}, {"minute": "*5"},
]


def _celery_call(case) -> str:
    if isinstance(case, str):
        return f"crontab.from_string({case!r})"
    return "crontab(" + ", ".join(f"{k}={v!r}" for k, v in case.items()) + ")"


def _celery_library(case):
    if isinstance(case, str):
        return celery_schedules.crontab.from_string(case)
    return celery_schedules.crontab(**case)


def _celery_project(root, cases) -> dict[int, int]:
    lines = ["from celery import Celery", "from celery.schedules import crontab", "",
             "app = Celery('proj')", "app.conf.beat_schedule = {"]
    at = {}
    for i, case in enumerate(cases):
        lines.append(f"    't{i}': {{'task': 'proj.tasks.t{i}', 'schedule': {_celery_call(case)}}},")
        at[i] = len(lines)
    lines.append("}")
    (root / "proj").mkdir(exist_ok=True)
    (root / "proj" / "__init__.py").write_text("")
    (root / "proj" / "celery.py").write_text("\n".join(lines) + "\n")
    return at


def _celery_next(schedule):
    app = __import__("celery").Celery(set_as_current=False)
    app.conf.timezone, app.conf.enable_utc = "UTC", True
    schedule.app = app

    def nexts(start: dt.datetime, count: int) -> list[dt.datetime]:
        out: list[dt.datetime] = []
        now = start - dt.timedelta(seconds=1)
        end = _span()[1]
        while len(out) < count:
            schedule.nowfun = lambda now=now: now
            when = now + schedule.remaining_estimate(now)
            if when >= end:
                break
            out.append(when.replace(tzinfo=None))
            now = when
        return out
    return nexts


def celery_verdict(case, got, quick: bool = False) -> str | None:
    """None when jobsafe agrees with Celery on ``case``, else the disagreement (``quick``:
    fewer next firings, from two starting points; the sets are compared all the same)."""
    try:
        schedule = _celery_library(case)
    except Exception as exc:  # ValueError, TypeError, ParseException: beat never starts
        return None if got in ("refused", None) else \
            f"Celery raises {type(exc).__name__} ({exc}); jobsafe read a job"
    if not hasattr(got, "schedule"):
        return f"Celery accepts it; jobsafe: {got}"
    sets = (schedule.minute, schedule.hour, schedule.day_of_month, schedule.month_of_year,
            schedule.day_of_week)
    if quick:
        return _compare_firings(got, _celery_next(schedule), sets, STARTS[::3], 20)
    return _compare_firings(got, _celery_next(schedule), sets)


@pytest.fixture(scope="module")
def celery_read(tmp_path_factory):
    root = tmp_path_factory.mktemp("celery_dialect")
    return _read(root, _celery_project(root, CELERY_CASES))


@pytest.mark.parametrize("index", range(len(CELERY_CASES)),
                         ids=[_celery_call(c)[:60] for c in CELERY_CASES])
def test_celery_crontab_as_celery_reads_it(index, celery_read):
    verdict = celery_verdict(CELERY_CASES[index], celery_read[index])
    assert verdict is None, verdict


# -- APScheduler 3 ------------------------------------------------------------------------

#: (how the project writes it, trigger keyword arguments); "cron" and "interval" are
#: ``add_job(f, kind, **kw)``, "decorator" ``@scheduler.scheduled_job("cron", **kw)``,
#: "object" ``add_job(f, CronTrigger(**kw))``, "crontab" ``CronTrigger.from_crontab(text)``,
#: "interval-object" ``add_job(f, IntervalTrigger(**kw))``
APS_CASES: list[tuple[str, dict | str]] = [
    # tests/triggers/test_cron.py (without year: see the known differences)
    ("cron", {"month": "1/3", "day": "5-13"}), ("cron", {"month": "feb-dec", "hour": "8-10"}),
    ("cron", {"month": "2", "day": "last"}), ("cron", {"month": 2, "hour": 0}),
    ("cron", {"year": "2009,2008"}), ("cron", {"year": "2009/2", "month": "1/3", "day": "5-13"}),
    ("cron", {"month": "2", "hour": "8-10"}), ("cron", {"day": "*"}),
    ("cron", {"month": 1, "day": "6-10", "day_of_week": "2-4"}),
    ("cron", {"month": 1, "day": "6-10", "day_of_week": "0,6"}),
    ("cron", {"month": 1, "day": "4th wed"}), ("cron", {"month": 2, "week": 8}),
    ("cron", {"week": 15, "day_of_week": 2}), ("cron", {"day": "6,8"}),
    ("cron", {"hour": "5-6"}), ("cron", {"day": 30}), ("cron", {"hour": 4}),
    ("cron", {"minute": 30}), ("cron", {"hour": 11, "minute": "*/5"}),
    ("cron", {"hour": 8}), ("cron", {"hour": 1, "minute": 30}), ("cron", {"minute": "*/30"}),
    ("cron", {"minute": "*", "jitter": 5}), ("cron", {"second": "*/10"}),
    ("cron", {"hour": "*", "minute": 30, "second": 15}),
    # tests/test_expressions.py
    ("cron", {"minute": "*"}), ("cron", {"minute": "*/3"}), ("cron", {"minute": "*/0"}),
    ("cron", {"minute": "2-4"}), ("cron", {"minute": "2-6/2"}), ("cron", {"minute": "7"}),
    ("cron", {"minute": "5-3"}), ("cron", {"day_of_week": "WED"}),
    ("cron", {"day_of_week": "TUE-SAT"}), ("cron", {"day": "1st Fri"}),
    ("cron", {"day": "2nd wed"}), ("cron", {"day": "last fri"}), ("cron", {"day": "6th fri"}),
    ("cron", {"day": "1st moh"}), ("cron", {"day_of_week": "moh-fri"}),
    ("cron", {"day_of_week": "mon-fre"}), ("cron", {"day_of_week": "tue-SUN"}),
    ("cron", {"day_of_week": "thu"}), ("cron", {"day": "last"}),
    # the trigger's validation
    ("cron", {"minute": "*/60"}), ("cron", {"minute": "*/59"}), ("cron", {"minute": "50/15"}),
    ("cron", {"minute": "5/15"}), ("cron", {"hour": "0-24"}), ("cron", {"hour": 24}),
    ("cron", {"day": 0}), ("cron", {"day": 32}), ("cron", {"month": 13}),
    ("cron", {"month": "jan-dec/2"}), ("cron", {"day_of_week": 7}), ("cron", {"day_of_week": "*/7"}),
    ("cron", {"day_of_week": "sat-mon"}), ("cron", {"day_of_week": "monday"}),
    ("cron", {"day_of_week": "mon,"}), ("cron", {"minute": "-5"}), ("cron", {"minute": 1.5}),
    ("cron", {"minute": "1 , 2"}), ("cron", {"minute": " 3 "}),
    # what projects write: Monday is 0, names, lists, ranges, steps over weekdays
    ("cron", {"day_of_week": "0-4", "hour": 6}), ("cron", {"day_of_week": 0, "hour": 9}),
    ("cron", {"day_of_week": "6", "hour": 9, "minute": 15}),
    ("cron", {"day_of_week": "*/2", "hour": 1}), ("cron", {"day_of_week": "1-5/2"}),
    ("cron", {"day_of_week": "mon,wed,fri", "hour": "9-17", "minute": "0,30"}),
    ("cron", {"day_of_week": "mon-fri/2"}), ("cron", {"day_of_week": "sun", "hour": 3}),
    ("cron", {"day_of_week": "sat,sun"}), ("cron", {"day": "1-7", "day_of_week": "mon"}),
    ("cron", {"day": "1,15", "day_of_week": "mon-fri", "hour": 12}),
    ("cron", {"day": "last fri", "day_of_week": "fri"}),
    ("cron", {"day": "last fri", "day_of_week": "mon"}), ("cron", {"day": "1st mon,last"}),
    ("cron", {"day": "5th mon"}), ("cron", {"day": "*/10"}), ("cron", {"day": "31"}),
    ("cron", {"day": 31, "month": 4}), ("cron", {"day": 30, "month": 2}),
    ("cron", {"day": "29", "month": "feb"}), ("cron", {"month": "jun-aug", "day": 1}),
    ("cron", {"hour": 2, "minute": 30}), ("cron", {"minute": 0}), ("cron", {"hour": "*/6"}),
    ("cron", {"minute": "*/7"}), ("cron", {"hour": "8-18/3", "minute": 5}),
    ("cron", {"week": "*", "hour": 3}), ("cron", {"year": "*", "minute": "*/20"}),
    ("cron", {}), ("cron", {"second": 30}), ("cron", {"second": "*/15", "minute": 5}),
    ("cron", {"second": "0,30"}), ("cron", {"second": "0,10"}),
    ("cron", {"hour": 3, "start_date": "2020-01-01"}),
    ("decorator", {"hour": 3, "minute": 15}), ("decorator", {"day_of_week": "0-4"}),
    ("object", {"hour": 3, "minute": 15}), ("object", {"day_of_week": "4", "hour": 22}),
    ("object", {"day": "last sun", "hour": 1}),
    ("crontab", "0 3 * * *"), ("crontab", "*/5 * * * *"), ("crontab", "0 9 * * 0-4"),
    ("crontab", "30 6 * * mon-fri"), ("crontab", "0 0 1 * *"), ("crontab", "0 0 * * 7"),
    ("crontab", "0 0 * *"), ("crontab", "0 12 L * *"), ("crontab", "0 0 1-31/7 jan,jul *"),
    ("interval", {"minutes": 5}), ("interval", {"hours": 1, "minutes": 30}),
    ("interval", {"seconds": 30}), ("interval", {"days": 1}), ("interval", {"weeks": 2}),
    ("interval", {}), ("interval", {"minutes": 0}), ("interval", {"seconds": 0.5}),
    ("interval-object", {"minutes": 10}), ("interval-object", {"hours": 6, "jitter": 60}),
]


def _kwargs(kw: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in kw.items())


def _aps_line(how: str, spec) -> str:
    if how == "cron":
        return f"scheduler.add_job(job, 'cron'{', ' if spec else ''}{_kwargs(spec)})"
    if how == "interval":
        return f"scheduler.add_job(job, 'interval'{', ' if spec else ''}{_kwargs(spec)})"
    if how == "object":
        return f"scheduler.add_job(job, CronTrigger({_kwargs(spec)}))"
    if how == "crontab":
        return f"scheduler.add_job(job, trigger=CronTrigger.from_crontab({spec!r}))"
    if how == "interval-object":
        return f"scheduler.add_job(job, IntervalTrigger({_kwargs(spec)}))"
    raise AssertionError(how)


def _aps_project(root, cases) -> dict[int, int]:
    lines = ["from apscheduler.schedulers.blocking import BlockingScheduler",
             "from apscheduler.triggers.cron import CronTrigger",
             "from apscheduler.triggers.interval import IntervalTrigger", "",
             "scheduler = BlockingScheduler()", "", "", "def job():", "    print('tick')", ""]
    at = {}
    decorated = []
    for i, (how, spec) in enumerate(cases):
        if how == "decorator":
            decorated.append((i, spec))
            continue
        lines.append(_aps_line(how, spec))
        at[i] = len(lines)
    for i, spec in decorated:
        lines += ["", "", f"@scheduler.scheduled_job('cron'{', ' if spec else ''}{_kwargs(spec)})"]
        lines.append(f"def job{i}():")
        at[i] = len(lines)
        lines.append("    print('tick')")
    (root / "sched.py").write_text("\n".join(lines) + "\n")
    return at


def _aps_library(how: str, spec):
    spec = {k: v for k, v in spec.items() if k != "jitter"} if isinstance(spec, dict) else spec
    if how in ("cron", "decorator", "object"):  # (jitter delays each run at random)
        return aps_cron.CronTrigger(timezone=UTC, **spec)
    if how == "crontab":
        return aps_cron.CronTrigger.from_crontab(spec, timezone=UTC)
    kw = dict(spec)
    kw.setdefault("start_date", dt.datetime.combine(span_start(), dt.time(), UTC))
    return aps_interval.IntervalTrigger(timezone=UTC, **kw)


def _aps_next(trigger):
    """The trigger's next firings, to the minute when it fires at one second of the minute
    (jobsafe's schedules hold minutes; the gaps are the same)."""
    seconds = str(trigger.fields[7]) if hasattr(trigger, "fields") else "*"
    to_minute = seconds.isdigit()

    def nexts(start: dt.datetime, count: int) -> list[dt.datetime]:
        out: list[dt.datetime] = []
        now = start.replace(tzinfo=UTC)
        previous = None
        end = _span()[1].replace(tzinfo=UTC)
        while len(out) < count:
            when = trigger.get_next_fire_time(previous, now)
            if when is None or when >= end:
                break
            out.append(when.astimezone(UTC).replace(tzinfo=None,
                                                    second=0 if to_minute else when.second))
            previous = now = when
        return out
    return nexts


#: a date on which each CronTrigger field has a given value (2004 has 53 ISO weeks)
_PROBES = {
    "year": lambda v: dt.datetime(v, 1, 1), "month": lambda v: dt.datetime(2001, v, 1),
    "day": lambda v: dt.datetime(2001, 1, v),
    "week": lambda v: dt.datetime.combine(dt.date.fromisocalendar(2004, v, 1), dt.time()),
    "day_of_week": lambda v: dt.datetime(2001, 1, 1 + v),  # 1 January 2001: a Monday
    "hour": lambda v: dt.datetime(2001, 1, 1, v), "minute": lambda v: dt.datetime(2001, 1, 1, 0, v),
    "second": lambda v: dt.datetime(2001, 1, 1, 0, 0, v)}
_BOUNDS = {"year": (1970, 9999), "month": (1, 12), "day": (1, 31), "week": (1, 53),
           "day_of_week": (0, 6), "hour": (0, 23), "minute": (0, 59), "second": (0, 59)}


def _values(field) -> set[int]:
    """The values a CronTrigger field matches, as the library's own expressions say."""
    low, high = _BOUNDS[field.name]
    return {v for v in range(low, high + 1) for e in field.expressions
            if e.get_next_value(_PROBES[field.name](v), field) == v}


def _unrepresentable(how: str, spec, trigger) -> str | None:
    """Why a trigger the library accepts has no five-field schedule: the case's own fields
    say so, never its position in the list."""
    if how not in ("cron", "decorator", "object"):
        return None
    fields = {f.name: f for f in trigger.fields}

    def every(name: str) -> bool:
        low, high = _BOUNDS[name]
        return _values(fields[name]) == set(range(low, high + 1))

    if not every("year"):
        return "a restricted year"
    if not every("week"):
        return "a restricted ISO week"
    day = fields["day"]
    positions = [e for e in day.expressions
                 if type(e).__name__ == "WeekdayPositionExpression"]
    if positions and len(positions) != len(day.expressions):
        return "weekday positions and days of the month in one day field"
    if positions and not any(p.weekday in _values(fields["day_of_week"]) for p in positions):
        return "weekday positions in day that day_of_week excludes (never fires)"
    values = sorted(_values(fields["second"]))
    if len(values) > 1:
        steps = {(b - a) % 60 for a, b in zip(values, values[1:] + values[:1])}
        everything_else = not positions and all(
            every(name) for name in ("month", "day", "day_of_week", "hour", "minute"))
        if len(steps) != 1 or not everything_else:
            return "several seconds in a minute, not one step every minute"
    return None


def aps_verdict(how: str, spec, got) -> str | None:
    try:
        trigger = _aps_library(how, spec)
    except Exception as exc:  # ValueError, TypeError: add_job raises, nothing is scheduled
        return None if got in ("refused", None) else \
            f"APScheduler raises {type(exc).__name__} ({exc}); jobsafe read a job"
    why = _unrepresentable(how, spec, trigger)
    if why is not None:
        return None if getattr(got, "schedule", None) and got.schedule.kind == "templated" \
            else f"{why}: jobsafe claims {getattr(got, 'schedule', got)}"
    never = trigger.get_next_fire_time(None, _span()[0].replace(tzinfo=UTC)) is None
    if never or got == "never":
        return None if never and got == "never" else \
            f"APScheduler {'never fires' if never else 'fires'}; jobsafe: {got}"
    if not hasattr(got, "schedule"):
        return f"APScheduler accepts it; jobsafe: {got}"
    schedule = got.schedule
    if how.startswith("interval") or (schedule.kind == "interval" and how != "crontab"):
        nexts = _aps_next(trigger)(_span()[0] + dt.timedelta(days=3), 3)
        step = int((nexts[1] - nexts[0]).total_seconds())
        if schedule.kind != "interval" or schedule.min_interval_seconds != step:
            return f"every {step} s; jobsafe: {schedule.kind} {schedule.min_interval_seconds}"
        return None
    return _compare_firings(got, _aps_next(trigger))


@pytest.fixture(scope="module")
def aps_read(tmp_path_factory):
    root = tmp_path_factory.mktemp("aps_dialect")
    return _read(root, _aps_project(root, APS_CASES))


@pytest.mark.parametrize("index", range(len(APS_CASES)),
                         ids=[_aps_line(*c)[18:78] if c[0] != "decorator" else
                              f"decorator {_kwargs(c[1])}" for c in APS_CASES])
def test_apscheduler_trigger_as_apscheduler_reads_it(index, aps_read):
    how, spec = APS_CASES[index]
    verdict = aps_verdict(how, spec, aps_read[index])
    assert verdict is None, verdict


# -- Huey ---------------------------------------------------------------------------------

#: keyword arguments of Huey's ``crontab()``, from huey's tests/test_crontab.py and its
#: docstring, plus what projects write
HUEY_CASES: list[dict] = [
    {"month": "1,4,*/6,8-9"}, {"day": "*/6,1,4,8-9"}, {"day_of_week": "0,1,4,6"},
    {"hour": "0,1,2,3,*/5,*/7,8-9"}, {"minute": "4,8,10,15,*/20,*/47,49-50"},
    {"minute": "*/15"}, {"minute": 0, "hour": 3}, {"minute": "0", "hour": "*/4"},
    {"minute": "*/5", "hour": "9-17", "day_of_week": "1-5"}, {"day_of_week": "7"},
    {"day_of_week": "5-1", "minute": 0}, {"day_of_week": "0-7", "minute": 0},
    {"day_of_week": "1-7", "minute": 0}, {"hour": "22-2", "minute": 30},
    {"minute": "0-59/10"}, {"minute": "5-55/0"}, {"day_of_week": "*/2"},
    {"day_of_week": "mon"}, {"day_of_week": "mon", "strict": True}, {"minute": "61"},
    {"month": "0"}, {"day": "32"}, {"minute": "1,,2"}, {"minute": "5/15"},
    {"minute": "5/15", "strict": True}, {"minute": [0, 30]}, {"day": 31, "month": 4},
    {"day": "1,15", "day_of_week": "0", "hour": 6, "minute": 0}, {"minute": "*/0"},
    {"minute": "1-5,x", "hour": 1},
]


def _huey_project(root, cases) -> dict[int, int]:
    lines = ["from huey import RedisHuey, crontab", "", "huey = RedisHuey('proj')"]
    at = {}
    for i, case in enumerate(cases):
        lines += ["", "", f"@huey.periodic_task(crontab({_kwargs(case)}))",
                  f"def task{i}():"]
        at[i] = len(lines)  # (a decorated function is reported at its def line)
        lines.append("    print('tick')")
    (root / "tasks.py").write_text("\n".join(lines) + "\n")
    return at


def huey_verdict(case, got) -> str | None:
    import inspect
    try:
        validate = huey_api.crontab(**case)
    except Exception as exc:  # ValueError, AttributeError: the module does not import
        return None if got in ("refused", None) else \
            f"Huey raises {type(exc).__name__} ({exc}); jobsafe read a job"
    months, days, weekdays, hours, minutes = \
        inspect.getclosurevars(validate).nonlocals["cron_settings"]
    # a date that can come (every date falls on each weekday some year)
    never = not any(d <= (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)[m - 1]
                    for m in months for d in days)
    if never or got == "never":
        return None if never and got == "never" else \
            f"Huey {'never fires' if never else 'fires'}; jobsafe: {got}"
    if not hasattr(got, "schedule"):
        return f"Huey accepts it; jobsafe: {got}"
    firings = firings_of(got.schedule)
    if firings is None:
        return "jobsafe has no clock for it"
    first, end = _span()
    # the library's own predicate on every day's first matching minute and on a spread of
    # minutes across the span (Huey has no next-run function)
    samples = [first + dt.timedelta(minutes=7919 * k % int((end - first).total_seconds() // 60))
               for k in range(4000)]
    by_day: dict[int, set[int]] = {}
    for ordinals, secs in firings.groups:
        for ordinal in ordinals:
            by_day.setdefault(ordinal, set()).update(secs)
    for when in samples:
        mine = (when.hour * 3600 + when.minute * 60) in by_day.get(when.toordinal(), ())
        if mine != validate(when):
            return f"at {when}: Huey {validate(when)}, jobsafe {mine}"
    sets = (set(minutes), set(hours), set(days), set(months), set(weekdays))
    return _compare_firings(got, None, sets)


@pytest.fixture(scope="module")
def huey_read(tmp_path_factory):
    root = tmp_path_factory.mktemp("huey_dialect")
    return _read(root, _huey_project(root, HUEY_CASES))


@pytest.mark.skipif(huey_api is None, reason="huey is not installed")
@pytest.mark.parametrize("index", range(len(HUEY_CASES)),
                         ids=[_kwargs(c)[:60] for c in HUEY_CASES])
def test_huey_crontab_as_huey_reads_it(index, huey_read):
    verdict = huey_verdict(HUEY_CASES[index], huey_read[index])
    assert verdict is None, verdict


# -- hypothesis: generated field values ----------------------------------------------------

def _numbers(low: int, high: int):
    value = st.integers(low, high)
    part = st.one_of(
        value.map(str), st.just("*"),
        st.tuples(value, value).map(lambda t: f"{t[0]}-{t[1]}"),
        st.tuples(value, st.integers(1, high - low + 2)).map(lambda t: f"{t[0]}/{t[1]}"),
        st.integers(0, high - low + 2).map(lambda s: f"*/{s}"),
        st.tuples(value, value, st.integers(1, 9)).map(lambda t: f"{t[0]}-{t[1]}/{t[2]}"),
        st.integers(low - 1, high + 2).map(str))
    return st.one_of(st.lists(part, min_size=1, max_size=3).map(",".join), value)


_WEEK = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_MONTH = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]


def _names(names):
    name = st.sampled_from(names + [n.upper() for n in names[:2]])
    return st.one_of(name, st.tuples(name, name).map("-".join),
                     st.lists(name, min_size=2, max_size=3).map(",".join))


_CELERY_FIELDS = st.fixed_dictionaries({}, optional={
    "minute": _numbers(0, 59), "hour": _numbers(0, 23),
    "day_of_week": st.one_of(_numbers(0, 6), _names(["sun"] + _WEEK[:6]),
                             st.sampled_from(["monday", "Sunday", "mon-fri", "1-5", "*/15"])),
    "day_of_month": _numbers(1, 31), "month_of_year": st.one_of(_numbers(1, 12), _names(_MONTH)),
})

#: examples per run (each analyses a project of 8-16 schedules); a longer, random run:
#: JOBSAFE_DIALECT_EXAMPLES=500 python -m pytest tests/test_dialect_libraries.py -k generated
EXAMPLES = int(os.environ.get("JOBSAFE_DIALECT_EXAMPLES", "25"))
DERANDOMIZE = "JOBSAFE_DIALECT_EXAMPLES" not in os.environ

_POSITIONS = st.tuples(st.sampled_from(["1st", "2nd", "3rd", "4th", "5th", "last"]),
                       st.sampled_from(_WEEK)).map(" ".join)
_APS_FIELDS = st.fixed_dictionaries({}, optional={
    "minute": _numbers(0, 59), "hour": _numbers(0, 23),
    "day": st.one_of(_numbers(1, 31), st.just("last"), _POSITIONS),
    "month": st.one_of(_numbers(1, 12), _names(_MONTH)),
    "day_of_week": st.one_of(_numbers(0, 6), _names(_WEEK)),
    "second": st.one_of(st.integers(0, 59), st.sampled_from(["*/15", "0", "*/7"])),
    "week": st.sampled_from(["*", 10]), "year": st.sampled_from(["*", "2030"]),
})


@settings(max_examples=EXAMPLES, deadline=None, derandomize=DERANDOMIZE,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(_CELERY_FIELDS, min_size=8, max_size=16))
def test_generated_celery_crontabs(tmp_path_factory, cases):
    root = tmp_path_factory.mktemp("celery_generated")
    read = _read(root, _celery_project(root, cases))
    disagreements = [(c, v) for i, c in enumerate(cases)
                     if (v := celery_verdict(c, read[i], quick=True))]
    assert not disagreements


@settings(max_examples=EXAMPLES, deadline=None, derandomize=DERANDOMIZE,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(_APS_FIELDS, min_size=8, max_size=16))
def test_generated_apscheduler_triggers(tmp_path_factory, cases):
    root = tmp_path_factory.mktemp("aps_generated")
    specs = [("cron", c) for c in cases]
    read = _read(root, _aps_project(root, specs))
    disagreements = [(c, v) for i, (_, c) in enumerate(specs)
                     if (v := aps_verdict("cron", c, read[i]))]
    assert not disagreements


def test_the_comparison_catches_a_wrong_reading():
    """The comparison is not vacuous: a schedule read with Monday as day 0 (the trap between
    the two libraries) is caught."""
    class Fake:
        schedule = None

    from jobsafe.schedule import cron_schedule
    wrong = Fake()
    wrong.schedule = cron_schedule("x", "0 6 * * 0-4")  # Sunday-Thursday
    right = aps_cron.CronTrigger(day_of_week="0-4", hour=6, timezone=UTC)  # Monday-Friday
    assert _compare_firings(wrong, _aps_next(right)) is not None
    assert re.search("library", _compare_firings(wrong, _aps_next(right)) or "")


def test_the_inventory_names_the_dialect_each_schedule_was_read_in(tmp_path):
    from jobsafe.report.inventory import job_dict
    (tmp_path / "etc" / "cron.d").mkdir(parents=True)
    (tmp_path / "etc" / "cron.d" / "jobs").write_text("0 3 * * * root /usr/bin/true\n")
    (tmp_path / "etc" / "systemd" / "system").mkdir(parents=True)
    (tmp_path / "etc" / "systemd" / "system" / "x.timer").write_text(
        "[Timer]\nOnCalendar=*-*-* 04:00\n")
    (tmp_path / "etc" / "systemd" / "system" / "x.service").write_text(
        "[Service]\nType=oneshot\nExecStart=/usr/bin/true\n")
    _celery_project(tmp_path, [{"minute": 0, "hour": 7, "day_of_week": "mon"}])
    _aps_project(tmp_path, [("cron", {"day_of_week": "0-4", "hour": 6})])
    jobs = run_analysis(tmp_path).project.jobs
    dialects = {job.source: job_dict(job, []).get("dialect") for job in jobs}
    assert dialects == {"cron": "Debian cron", "systemd": "systemd OnCalendar=",
                        "celery": "Celery crontab()", "apscheduler": "APScheduler CronTrigger"}


def test_values_no_library_can_hold_are_refused_without_a_traceback(tmp_path):
    """Numbers with more digits than Python converts, infinite floats, ranges of a
    trillion values: the libraries raise (or never return), jobsafe refuses the entry and goes
    on (the suite raises on an internal error: conftest)."""
    huge = "9" * 5000
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "__init__.py").write_text("")
    (tmp_path / "proj" / "celery.py").write_text(
        "from celery.schedules import crontab\n"
        "beat_schedule = {\n"
        f"    'a': {{'task': 'x.a', 'schedule': crontab(minute='{huge}')}},\n"
        "    'b': {'task': 'x.b', 'schedule': crontab(minute=1e400)},\n"
        "    'c': {'task': 'x.c', 'schedule': crontab(minute=range(0, 1000000000000))},\n"
        f"    'd': {{'task': 'x.d', 'schedule': crontab(minute='*/{huge}')}},\n"
        "    'e': {'task': 'x.e', 'schedule': 1e400},\n"
        "}\n")
    (tmp_path / "sched.py").write_text(
        "from apscheduler.schedulers.blocking import BlockingScheduler\n"
        "scheduler = BlockingScheduler()\n\n\ndef job():\n    pass\n\n\n"
        f"scheduler.add_job(job, 'cron', minute='1-{huge}')\n"
        f"scheduler.add_job(job, 'cron', minute='*/{huge}')\n"
        "scheduler.add_job(job, 'interval', minutes=1e400)\n")
    (tmp_path / "tasks.py").write_text(
        "from huey import RedisHuey, crontab\nhuey = RedisHuey('x')\n\n\n"
        f"@huey.periodic_task(crontab(minute='*/{huge}'))\ndef t():\n    pass\n")
    analysis = run_analysis(tmp_path)
    for job in analysis.project.jobs:
        assert job.never_runs is not None or job.schedule.kind == "templated", job
    refused = [j for j in analysis.project.jobs if j.never_runs is not None]
    assert len(refused) == 9  # five Celery entries, three APScheduler jobs, one Huey task
    with pytest.raises(ValueError):
        celery_schedules.crontab(minute=huge)
    with pytest.raises(ValueError):
        aps_cron.CronTrigger(minute=f"1-{huge}")
