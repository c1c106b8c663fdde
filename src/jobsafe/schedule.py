"""Schedule arithmetic: how often a schedule fires and the shortest gap between firings.

Cron expressions are parsed and matched by ``cronsim`` (it follows Debian cron, including
the rule that day-of-month and day-of-week are OR-ed unless one of them starts with ``*``).
Iterating every firing over four years is too slow for ``* * * * *`` (two million
firings), so the arithmetic works a day at a time: cronsim decides which days match, and
within a day a cron schedule fires at the same minutes every time.
"""
from __future__ import annotations

import datetime as dt
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from .calendar import parse_calendar
from .model import NeverRuns, Schedule
from .timespec import ScheduleError

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

#: Dialects whose day-of-month and day-of-week must both match (Celery's ``crontab()``,
#: APScheduler's ``CronTrigger``, Huey's ``crontab()``); cron's own (Debian/Vixie, robfig)
#: fires when either matches once both are restricted.
DAYS_AND_DIALECTS = frozenset({"celery", "apscheduler", "huey"})

#: The span the arithmetic covers: four calendar years (one of them a leap year).
SPAN_YEARS = 4


def span_start() -> dt.date:
    """The first day the schedule arithmetic covers."""
    # Start of the current year: stable output for a whole year, and any four
    # consecutive years hold both leap and common years.
    return dt.date(dt.date.today().year, 1, 1)


@dataclass(frozen=True)
class Firings:
    """When a schedule fires over the span: groups of (matching days, seconds of the day).

    A cron expression is one group (every matching day fires at the same minutes); several
    ``OnCalendar=`` lines are several groups.
    """

    groups: tuple[tuple[frozenset[int], tuple[int, ...]], ...]
    span_days: int

    def minutes_of_day(self) -> tuple[int, ...]:
        return tuple(sorted({s // 60 for _, seconds in self.groups for s in seconds}))


def _span() -> tuple[dt.date, int]:
    start = span_start()
    return start, (dt.date(start.year + SPAN_YEARS, 1, 1) - start).days


@lru_cache(maxsize=4096)
def cron_firings(expr: str, dialect: str | None = None) -> Firings:
    """Parse a five-field cron expression; raise ScheduleError when cron would reject it.
    In a dialect of ``DAYS_AND_DIALECTS`` a day matches when its day of the month and its
    weekday both do."""
    fields = expr.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected 5 time fields, found {len(fields)}")
    for f in fields:
        if "?" in f or f.upper().startswith("H"):
            raise ScheduleError(f"unsupported cron syntax {f!r}")
    start, span_days = _span()
    try:
        sim = CronSim(expr, dt.datetime.combine(start, dt.time()))
    except (CronSimError, ValueError, IndexError) as exc:
        raise ScheduleError(str(exc) or "invalid cron expression") from None
    if dialect in DAYS_AND_DIALECTS:
        sim.day_and = True
    minutes = sorted(m for m in sim.minutes if isinstance(m, int))
    hours = sorted(h for h in sim.hours if isinstance(h, int))
    seconds = tuple(h * 3600 + m * 60 for h in hours for m in minutes)
    matching = frozenset(
        d.toordinal()
        for d in (start + dt.timedelta(days=i) for i in range(span_days))
        if d.month in sim.months and sim.match_day(d)
    )
    return Firings(((matching, seconds),), span_days)


#: the most days each month can have (February: in leap years)
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August",
                "September", "October", "November", "December")


def impossible_days(expr: str) -> tuple[str, str | None] | None:
    """For a cron expression whose fields cron accepts but whose days of the month never
    come in its months (``0 0 30 2 *``, ``0 0 31 4,6 *``): (why in words, the expression
    cron runs instead). Debian's cron fires on a day when the day-of-month or the
    day-of-week matches (when both are restricted), so a restricted day-of-week still runs
    (``m h * month dow``); with ``*`` there the entry never runs (None). None when the
    expression is not of that kind."""
    fields = expr.split()
    if len(fields) != 5:
        return None
    minute, hour, dom, month, dow = fields
    start = dt.datetime.combine(span_start(), dt.time())
    try:
        days = CronSim(f"0 0 {dom} * *", start).days
        months = CronSim(f"0 0 * {month} *", start).months
        CronSim(f"{minute} {hour} * * {dow}", start)
    except (CronSimError, ValueError, IndexError):
        return None
    if not days or not all(isinstance(d, int) and 1 <= d <= 31 for d in days) or \
            any(d <= _MONTH_DAYS[m - 1] for d in days for m in months):
        return None
    named = ", ".join(str(d) for d in sorted(days))
    why = f"day {named} never comes in " + \
        " or ".join(_MONTH_NAMES[m - 1] for m in sorted(months))
    return why, (None if dow.startswith("*") else f"{minute} {hour} * {month} {dow}")


def cron_schedule_or_never(text: str, expr: str, timezone: str | None = None,
                           dialect: str | None = None) -> tuple[Schedule, NeverRuns | None]:
    """A cron schedule, also when its day never comes: then a schedule that never runs
    (why), or — a day of the week restricted too, as cron and robfig/cron fire when either
    field matches — the schedule of the day of the week alone (in a dialect where both
    must match, the entry never runs). ScheduleError otherwise."""
    both = dialect in DAYS_AND_DIALECTS
    try:
        if not both or impossible_days(expr) is None:
            return cron_schedule(text, expr, timezone, dialect), None
    except ScheduleError:
        if impossible_days(expr) is None:
            raise
    impossible = impossible_days(expr)
    assert impossible is not None
    why, instead = impossible
    if instead is not None and not both:
        return cron_schedule(text, instead, timezone), None
    return Schedule(text=text, kind="cron", timezone=timezone, dialect=dialect), \
        NeverRuns("never-matches", why)


@lru_cache(maxsize=4096)
def calendar_firings(expressions: tuple[str, ...]) -> Firings:
    """Firings of one or more ``OnCalendar=`` expressions (their union)."""
    start, span_days = _span()
    days = [start + dt.timedelta(days=i) for i in range(span_days)]
    groups = []
    for expression in expressions:
        spec = parse_calendar(expression)
        matching = frozenset(d.toordinal() for d in days if spec.matches_day(d))
        groups.append((matching, spec.day_seconds()))
    return Firings(tuple(groups), span_days)


def summarize(firings: Firings) -> tuple[int | None, float]:
    """(shortest gap between consecutive firings in seconds, firings per day)."""
    by_signature: dict[tuple[int, ...], tuple[int, ...]] = {}
    days: dict[int, tuple[int, ...]] = {}
    for ordinal in sorted(set().union(*(g[0] for g in firings.groups))) if firings.groups else []:
        signature = tuple(i for i, (matching, _) in enumerate(firings.groups) if ordinal in matching)
        if signature not in by_signature:
            by_signature[signature] = tuple(sorted(set().union(
                *(firings.groups[i][1] for i in signature))))
        days[ordinal] = by_signature[signature]
    runs = sum(len(seconds) for seconds in days.values())
    gaps = [min(b - a for a, b in zip(seconds, seconds[1:]))
            for seconds in by_signature.values() if len(seconds) > 1]
    ordered = sorted(days)
    gaps += [(d2 - d1) * 86400 + days[d2][0] - days[d1][-1] for d1, d2 in zip(ordered, ordered[1:])
             if days[d1] and days[d2]]
    return (min(gaps) if gaps else None), round(runs / firings.span_days, 4)


def coincide(a: Firings, b: Firings) -> bool:
    """True when two schedules fire at the same second at least once."""
    return any(days_a & days_b and set(sec_a) & set(sec_b)
               for days_a, sec_a in a.groups for days_b, sec_b in b.groups)


def cron_schedule(text: str, expr: str, timezone: str | None = None,
                  dialect: str | None = None) -> Schedule:
    """A Schedule for a cron expression (``expr`` already has macros expanded), read in
    ``dialect`` (None: cron's own)."""
    firings = cron_firings(expr, dialect)
    interval, per_day = summarize(firings)
    return Schedule(text=text, kind="cron", timezone=timezone, min_interval_seconds=interval,
                    runs_per_day=per_day, fire_minutes=firings.minutes_of_day(), cron=expr,
                    fixed_time=not expr.split()[1].startswith("*"), dialect=dialect)


def calendar_schedule(expressions: tuple[str, ...], text: str) -> Schedule:
    """A Schedule for a timer's ``OnCalendar=`` lines."""
    specs = [parse_calendar(e) for e in expressions]
    firings = calendar_firings(tuple(expressions))
    interval, per_day = summarize(firings)
    zones = {s.timezone for s in specs if s.timezone}
    return Schedule(text=text, kind="calendar", timezone=zones.pop() if len(zones) == 1 else None,
                    min_interval_seconds=interval, runs_per_day=per_day,
                    fire_minutes=firings.minutes_of_day(), calendar=tuple(expressions),
                    fixed_time=all(s.hours.items is not None for s in specs))


def firings_of(schedule: Schedule) -> Firings | None:
    if schedule.cron:
        return cron_firings(schedule.cron, schedule.dialect)
    if schedule.calendar:
        return calendar_firings(schedule.calendar)
    return None


def week_profile(schedule: Schedule) -> dict[int, float]:
    """Firings per week in each hour of the week (Monday 00:00-00:59 is 0, Sunday 23:00 is
    167), averaged over the span, in the schedule's own time zone. An interval spreads
    evenly over the week; a schedule with no clock (at boot, templated) has none."""
    firings = firings_of(schedule)
    if firings is None:
        if schedule.kind == "interval" and schedule.runs_per_day:
            return dict.fromkeys(range(168), schedule.runs_per_day * 7 / 168)
        return {}
    weeks = firings.span_days / 7
    out: dict[int, float] = {}
    for days, seconds in firings.groups:
        per_weekday = Counter((ordinal - 1) % 7 for ordinal in days)  # ordinal 1 is a Monday
        per_hour = Counter(s // 3600 for s in seconds)
        for weekday, n_days in per_weekday.items():
            for hour, n_times in per_hour.items():
                cell = weekday * 24 + hour
                out[cell] = out.get(cell, 0.0) + n_days * n_times / weeks
    return out


def expand_macro(text: str) -> str | None:
    return MACROS.get(text.lower())


@lru_cache(maxsize=256)
def dst_shifted_minutes(zone: str) -> frozenset[int] | None:
    """Local minutes of the day that daylight-saving changes skip or repeat in ``zone``.

    Returns an empty set for zones without DST and None for unknown zones.
    """
    found = dst_minutes(zone)
    return found[0] | found[1] if found is not None else None


@lru_cache(maxsize=256)
def dst_minutes(zone: str) -> tuple[frozenset[int], frozenset[int]] | None:
    """(minutes skipped, minutes repeated) by ``zone``'s changes over a year; None for an
    unknown zone."""
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    skipped_minutes: set[int] = set()
    repeated_minutes: set[int] = set()
    start = span_start()
    for i in range(366):
        day = start + dt.timedelta(days=i)
        morning = dt.datetime.combine(day, dt.time(0, 0), tz).utcoffset()
        night = dt.datetime.combine(day, dt.time(23, 59), tz).utcoffset()
        if morning == night:
            continue
        for minute in range(1440):
            local = dt.datetime.combine(day, dt.time(minute // 60, minute % 60), tz)
            round_trip = local.astimezone(dt.timezone.utc).astimezone(tz)
            if round_trip.replace(tzinfo=None) != local.replace(tzinfo=None):
                skipped_minutes.add(minute)
            elif local.utcoffset() != local.replace(fold=1).utcoffset():
                repeated_minutes.add(minute)
    return frozenset(skipped_minutes), frozenset(repeated_minutes)
