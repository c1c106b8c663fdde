"""Schedule arithmetic: how often a schedule fires and the shortest gap between firings.

Cron expressions are parsed and matched by ``cronsim`` (it follows Debian cron, including
the rule that day-of-month and day-of-week are OR-ed unless one of them starts with ``*``).
Iterating every firing over four years is too slow for ``* * * * *`` (two million
firings), so the arithmetic works a day at a time: cronsim decides which days match, and
within a day a cron schedule fires at the same minutes every time.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from .model import Schedule

MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}

#: The span the arithmetic covers: four calendar years (one of them a leap year).
SPAN_YEARS = 4


class ScheduleError(ValueError):
    pass


def _span_start() -> dt.date:
    # Start of the current year: stable output for a whole year, and any four
    # consecutive years hold both leap and common years.
    return dt.date(dt.date.today().year, 1, 1)


@dataclass(frozen=True)
class CronFacts:
    day_minutes: tuple[int, ...]
    matching_days: frozenset[int]  # ordinals of matching dates in the span
    span_days: int


@lru_cache(maxsize=4096)
def cron_facts(expr: str) -> CronFacts:
    """Parse a five-field cron expression; raise ScheduleError when cron would reject it."""
    fields = expr.split()
    if len(fields) != 5:
        raise ScheduleError(f"expected 5 time fields, found {len(fields)}")
    for f in fields:
        if "?" in f or f.upper().startswith("H"):
            raise ScheduleError(f"unsupported cron syntax {f!r}")
    start = _span_start()
    try:
        sim = CronSim(expr, dt.datetime.combine(start, dt.time()))
    except (CronSimError, ValueError, IndexError) as exc:
        raise ScheduleError(str(exc) or "invalid cron expression") from None
    minutes = sorted(m for m in sim.minutes if isinstance(m, int))
    hours = sorted(h for h in sim.hours if isinstance(h, int))
    day_minutes = tuple(h * 60 + m for h in hours for m in minutes)
    end = dt.date(start.year + SPAN_YEARS, 1, 1)
    span_days = (end - start).days
    matching = frozenset(
        d.toordinal()
        for d in (start + dt.timedelta(days=i) for i in range(span_days))
        if d.month in sim.months and sim.match_day(d)
    )
    return CronFacts(day_minutes, matching, span_days)


def cron_schedule(text: str, expr: str, timezone: str | None = None) -> Schedule:
    """A Schedule for a cron expression (``expr`` already has macros expanded)."""
    facts = cron_facts(expr)
    days = sorted(facts.matching_days)
    runs = len(days) * len(facts.day_minutes)
    gaps = [b - a for a, b in zip(facts.day_minutes, facts.day_minutes[1:])]
    first, last = facts.day_minutes[0], facts.day_minutes[-1]
    gaps += [(d2 - d1) * 1440 + first - last for d1, d2 in zip(days, days[1:])]
    return Schedule(
        text=text,
        kind="cron",
        timezone=timezone,
        min_interval_seconds=min(gaps) * 60 if gaps else None,
        runs_per_day=round(runs / facts.span_days, 4),
        fire_minutes=facts.day_minutes,
        cron=expr,
    )


def firings_coincide(expr_a: str, expr_b: str) -> bool:
    """True when two cron expressions fire at the same minute at least once."""
    a, b = cron_facts(expr_a), cron_facts(expr_b)
    return bool(set(a.day_minutes) & set(b.day_minutes)) and bool(
        a.matching_days & b.matching_days
    )


def expand_macro(text: str) -> str | None:
    return MACROS.get(text.lower())


def format_duration(seconds: float | None) -> str:
    """``300`` -> ``5 min``; ``90000`` -> ``25 h``."""
    if seconds is None:
        return "unknown"
    seconds = int(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size} {unit}"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds} s"


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_timeout_duration(text: str) -> float | None:
    """Durations as coreutils ``timeout`` and ``flock -w`` read them: ``90``, ``1.5m``, ``2h``."""
    text = text.strip()
    if not text:
        return None
    unit = 1
    if text[-1] in _UNITS:
        unit = _UNITS[text[-1]]
        text = text[:-1]
    try:
        value = float(text)
    except ValueError:
        return None
    return value * unit


@lru_cache(maxsize=256)
def dst_shifted_minutes(zone: str) -> frozenset[int] | None:
    """Local minutes of the day that daylight-saving changes skip or repeat in ``zone``.

    Returns an empty set for zones without DST and None for unknown zones.
    """
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return None
    affected: set[int] = set()
    start = _span_start()
    for i in range(366):
        day = start + dt.timedelta(days=i)
        morning = dt.datetime.combine(day, dt.time(0, 0), tz).utcoffset()
        night = dt.datetime.combine(day, dt.time(23, 59), tz).utcoffset()
        if morning == night:
            continue
        for minute in range(1440):
            local = dt.datetime.combine(day, dt.time(minute // 60, minute % 60), tz)
            round_trip = local.astimezone(dt.timezone.utc).astimezone(tz)
            skipped = round_trip.replace(tzinfo=None) != local.replace(tzinfo=None)
            repeated = local.utcoffset() != local.replace(fold=1).utcoffset()
            if skipped or repeated:
                affected.add(minute)
    return frozenset(affected)
