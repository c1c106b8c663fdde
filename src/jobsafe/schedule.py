"""Schedule arithmetic: how often a schedule fires and the shortest gap between firings.

Cron expressions are parsed and matched by ``cronsim`` (it follows Debian cron, including
the rule that day-of-month and day-of-week are OR-ed unless one of them starts with ``*``).
Iterating every firing over four years is too slow for ``* * * * *`` (two million
firings), so the arithmetic works a day at a time: cronsim decides which days match, and
within a day a cron schedule fires at the same minutes every time.
"""
from __future__ import annotations

import datetime as dt
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cronsim import CronSim, CronSimError

from .calendar import parse_calendar
from .model import NeverRuns, Schedule, ScheduleDialect
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
DAYS_AND_DIALECTS: frozenset[ScheduleDialect] = frozenset({"celery", "apscheduler", "huey"})

#: the dialects a schedule is read in, by name (``Schedule.dialect``), for the inventory
DIALECT_NAMES: dict[ScheduleDialect, str] = {"debian": "Debian cron", "supercronic": "supercronic",
                 "celery": "Celery crontab()",
                 "apscheduler": "APScheduler CronTrigger", "huey": "Huey crontab()",
                 "systemd": "systemd OnCalendar=", "kubernetes": "Kubernetes CronJob (robfig/cron)",
                 "github": "GitHub Actions schedule",
                 "busybox": "busybox crond"}

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
def cron_firings(expr: str, dialect: ScheduleDialect | None = None) -> Firings:
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
                           dialect: ScheduleDialect | None = None, runtime: str | None = None
                           ) -> tuple[Schedule, NeverRuns | None]:
    """A cron schedule, also when its day never comes: then a schedule that never runs
    (why), or — a day of the week restricted too, as cron and robfig/cron fire when either
    field matches — the schedule of the day of the week alone (in a dialect where both
    must match, the entry never runs). ScheduleError otherwise."""
    both = dialect in DAYS_AND_DIALECTS
    impossible = impossible_days(expr) if both else None
    if impossible is None:
        try:
            return cron_schedule(text, expr, timezone, dialect, runtime), None
        except ScheduleError:
            impossible = impossible_days(expr)
            if impossible is None:
                raise
    why, instead = impossible
    if instead is not None and not both:
        return cron_schedule(text, instead, timezone, dialect, runtime), None
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
    if len(firings.groups) == 1:  # one cron expression: every matching day alike
        return _summarize_group(*firings.groups[0], firings.span_days)
    return _summarize_groups(firings)


def _summarize_group(matching: frozenset[int], seconds: tuple[int, ...],
                     span_days: int) -> tuple[int | None, float]:
    """``summarize`` of one group, without building each day: the shortest gap is within a
    day, or from the last firing of a day to the first of the nearest next matching day."""
    times = sorted(set(seconds))
    ordinals = sorted(matching)
    if not ordinals:  # (a day that never comes: no firing, no gap)
        return None, 0.0
    gaps = [min(b - a for a, b in zip(times, times[1:]))] if len(times) > 1 else []
    if times and len(ordinals) > 1:
        nearest = min(d2 - d1 for d1, d2 in zip(ordinals, ordinals[1:]))
        gaps.append(nearest * 86400 + times[0] - times[-1])
    return (min(gaps) if gaps else None), round(len(ordinals) * len(times) / span_days, 4)


def _summarize_groups(firings: Firings) -> tuple[int | None, float]:
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
                  dialect: ScheduleDialect | None = None, runtime: str | None = None) -> Schedule:
    """A Schedule for a cron expression (``expr`` already has macros expanded), read in
    ``dialect`` (None: cron's own). With a time zone and a ``runtime`` of ``DST_RUNTIMES``
    the shortest interval and the runs per day follow what that runtime does on the days
    the zone's clocks change (``dst_summary``); otherwise they are wall-clock arithmetic."""
    firings = cron_firings(expr, dialect)
    interval, per_day = summarize(firings)
    if timezone and runtime in DST_RUNTIMES:
        fields = expr.split()
        # Debian's cron: a "wildcard" entry is one whose minute or hour field begins with
        # `*` (entry.c's MIN_STAR | HR_STAR); the others are "fixed-time"
        wild = fields[0].startswith("*") or fields[1].startswith("*")
        interval, per_day = dst_summary(firings, timezone, runtime, wild) or (interval, per_day)
    return Schedule(text=text, kind="cron", timezone=timezone, min_interval_seconds=interval,
                    runs_per_day=per_day, fire_minutes=firings.minutes_of_day(), cron=expr,
                    fixed_time=not expr.split()[1].startswith("*"), dialect=dialect)


def calendar_schedule(expressions: tuple[str, ...], text: str) -> Schedule:
    """A Schedule for a timer's ``OnCalendar=`` lines."""
    specs = [parse_calendar(e) for e in expressions]
    firings = calendar_firings(tuple(expressions))
    interval, per_day = summarize(firings)
    zones = {s.timezone for s in specs if s.timezone}
    if len(zones) == 1 and len(specs) == sum(1 for s in specs if s.timezone):
        interval, per_day = dst_summary(firings, next(iter(zones)), "systemd", False) or \
            (interval, per_day)
    return Schedule(text=text, kind="calendar", timezone=zones.pop() if len(zones) == 1 else None,
                    min_interval_seconds=interval, runs_per_day=per_day,
                    fire_minutes=firings.minutes_of_day(), calendar=tuple(expressions),
                    fixed_time=all(s.hours.items is not None for s in specs), dialect="systemd")


def firings_of(schedule: Schedule) -> Firings | None:
    if schedule.cron and schedule.dialect == "supercronic":  # (seconds and years too)
        from .supercronic_cron import span_firings
        return span_firings(schedule.cron)
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


@lru_cache(maxsize=256)
def known_zone(name: str) -> bool:
    """True when the tz database names the zone."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


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
    except (ZoneInfoNotFoundError, ValueError, OSError):  # (OSError: a folder, `Europe`)
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


# -- daylight saving: what each runtime does on the days the clocks change ----------------

#: runtimes whose handling of daylight-saving changes the arithmetic follows:
#: ``cron`` — Debian's (Vixie) cron, cron.c's main loop: a fixed-time entry's firings in the
#: skipped hour run right after the change, one after another (a 10-second pause after each
#: run, until the real minute is over), and a firing in the repeated hour runs once, the
#: first time; a wildcard entry (minute or hour field beginning with ``*``) is not caught up
#: and runs in both repeated hours. ``systemd`` — a time that does not exist is skipped, a
#: repeated one elapses once (the first). ``every-match`` — a firing at every instant whose
#: local time matches, so a skipped time never comes and a repeated one comes twice, an
#: hour apart: the CronJob controller (robfig/cron's Next, checked with robfig/cron
#: itself) and Laravel's scheduler (each minute's ``schedule:run`` asks whether the local
#: time is due). (supercronic's, which Go's time.Date decides, is
#: ``supercronic_cron.dst_summary``.)
DST_RUNTIMES = frozenset({"cron", "systemd", "every-match"})
_CATCH_UP_PAUSE = 10
_CATCH_UP_RUNS = 60 // _CATCH_UP_PAUSE


@lru_cache(maxsize=256)
def change_days(zone: str) -> tuple[int, ...]:
    """Ordinals of the days in the span on which ``zone``'s UTC offset changes (empty for
    zones without changes and for unknown zones)."""
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError, OSError):  # (OSError: a folder, `Europe`)
        return ()
    start, span_days = _span()
    out = []
    before = dt.datetime.combine(start, dt.time(), tz).utcoffset()
    for i in range(span_days):
        after = dt.datetime.combine(start + dt.timedelta(days=i + 1), dt.time(), tz).utcoffset()
        if after != before:
            out.append((start + dt.timedelta(days=i)).toordinal())
        before = after
    return tuple(out)


def changed_times(ordinal: int, zone: str) -> tuple[int, int, bool] | None:
    """The local times of one day that a change skips or repeats: (first second of the day,
    second after the last, skipped). None when the day has no change. A change at local
    midnight (Havana, Santiago) skips or repeats the first or last hour of its day."""
    tz = ZoneInfo(zone)
    day = dt.date.fromordinal(ordinal)
    midnight = int(dt.datetime.combine(day, dt.time(), dt.timezone.utc).timestamp())
    # the instants that can show this day's local times, whatever the offset (±14 h)
    low, high = midnight - 15 * 3600, midnight + 86400 + 15 * 3600

    def offset(at: int) -> int:
        found = dt.datetime.fromtimestamp(at, tz).utcoffset()
        return int(found.total_seconds()) if found is not None else 0

    before, after = offset(low), offset(high)
    if before == after:
        return None
    while high - low > 1:  # the instant of the change, to the second
        middle = (low + high) // 2
        low, high = (middle, high) if offset(middle) == before else (low, middle)
    if after > before:  # spring: the local times from the change's on are skipped
        first, last, skipped = high + before - midnight, high + after - midnight, True
    else:  # autumn: the local times before the change's are lived twice
        first, last, skipped = high + after - midnight, high + before - midnight, False
    return (first, last, skipped) if 0 <= first < 86400 else None


def real_firings(ordinal: int, seconds: tuple[int, ...], zone: str, runtime: str,
                 wild: bool) -> tuple[list[float], bool]:
    """(the instants, as POSIX timestamps, at which ``runtime`` starts the firings
    ``seconds`` of one local day, whether one falls in a skipped or repeated local time)."""
    tz = ZoneInfo(zone)
    midnight = dt.datetime.combine(dt.date.fromordinal(ordinal), dt.time())
    changed = changed_times(ordinal, zone)
    out: list[float] = []
    catch_up = 0
    shifted = False
    for second in seconds:
        local = midnight + dt.timedelta(seconds=second)
        if changed is None or not changed[0] <= second <= changed[1]:
            out.append(local.replace(tzinfo=tz).timestamp())
            continue
        start, end, skipped = changed
        if second == end:  # the first time after the change
            if skipped and runtime == "cron" and not wild and catch_up:
                catch_up += 1  # Debian's catch-up loop reaches it too
            else:
                out.append(local.replace(tzinfo=tz).timestamp())
            continue
        shifted = True
        if not skipped:  # a repeated local time: the first time, and again for a wildcard
            out.append(local.replace(tzinfo=tz).timestamp())
            if runtime == "cron" and wild or runtime == "every-match":
                out.append(local.replace(tzinfo=tz, fold=1).timestamp())
        elif runtime == "cron" and not wild:  # skipped: caught up right after the change
            catch_up += 1
    if catch_up:
        resumed = (midnight + dt.timedelta(seconds=changed[1] if changed else 0)
                   ).replace(tzinfo=tz).timestamp()
        out += [resumed + i * _CATCH_UP_PAUSE for i in range(min(catch_up, _CATCH_UP_RUNS))]
    return sorted(out), shifted


def dst_summary(firings: Firings, zone: str, runtime: str, wild: bool
                ) -> tuple[int | None, float] | None:
    """(shortest gap in seconds, runs per day) of ``firings`` in ``zone`` as ``runtime``
    runs them, where some firing falls in a local time a change skips or repeats; None when
    none does (the wall-clock arithmetic is then what the runtime does). Bounded: only the
    firings of the changed local times and their neighbours are computed in real time."""
    changes = change_days(zone)
    if not changes or not firings.groups:
        return None
    tz = ZoneInfo(zone)
    ordered = sorted(set().union(*(g[0] for g in firings.groups)))
    gap, _ = summarize(firings)
    runs = sum(len(_day_seconds(firings, o)) for o in ordered) if len(firings.groups) > 1 \
        else len(firings.groups[0][0]) * len(firings.groups[0][1])
    shifted_any = False
    for ordinal in changes:
        seconds = _day_seconds(firings, ordinal)
        changed = changed_times(ordinal, zone)
        if not seconds or changed is None:
            continue
        lo, hi = bisect_left(seconds, changed[0]), bisect_left(seconds, changed[1])
        if lo == hi:
            continue  # no firing at a skipped or repeated time
        shifted_any = True
        middle, shifted = real_firings(ordinal, seconds[lo:hi + 2], zone, runtime, wild)
        runs += len(middle) - len(seconds[lo:hi + 2])
        # the firing before and the one after, in real time
        around: list[float] = []
        i = bisect_left(ordered, ordinal)
        if lo > 0:
            around.append(_instant(ordinal, seconds[lo - 1], tz))
        elif i > 0:
            around.append(_instant(ordered[i - 1], _day_seconds(firings, ordered[i - 1])[-1], tz))
        if hi + 2 >= len(seconds) and i + 1 < len(ordered):
            around.append(_instant(ordered[i + 1], _day_seconds(firings, ordered[i + 1])[0], tz))
        instants = sorted(middle + around)
        gaps = [int(b - a) for a, b in zip(instants, instants[1:])]
        if gaps:
            gap = min(gaps) if gap is None else min(gap, *gaps)
    if not shifted_any:
        return None
    return gap, round(runs / firings.span_days, 4)


def _instant(ordinal: int, second: int, tz: ZoneInfo) -> float:
    local = dt.datetime.combine(dt.date.fromordinal(ordinal), dt.time()) + \
        dt.timedelta(seconds=second)
    return local.replace(tzinfo=tz).timestamp()


def _day_seconds(firings: Firings, ordinal: int) -> tuple[int, ...]:
    return tuple(sorted(set().union(*(secs for matching, secs in firings.groups
                                      if ordinal in matching))))
