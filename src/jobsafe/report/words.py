"""Schedules in words for the inventory: ``*/5 * * * *`` -> "Every 5 minutes".

Cron expressions are described by ``cron-descriptor`` (a port of the widely used
cron-expression-descriptor). systemd calendar events have no such library: one that cron
can express (second 0, any year, day-of-month and weekday not both restricted) is turned
into a cron expression and described the same way; any other is shown normalised.
"""
from __future__ import annotations

from functools import lru_cache

from ..model import Schedule
from ..timespec import ScheduleError, format_duration

_CRON_DAYS = ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]


#: cron fields whose ``*/N`` repeats from the start of the range each hour, day or year
_STEPPED = {0: 60, 1: 24, 3: 12}
#: the same in a seven-field expression (seconds first, years last: supercronic's)
_STEPPED_SEVEN = {0: 60, 1: 60, 2: 24, 4: 12}


@lru_cache(maxsize=1024)
def describe_cron(expr: str) -> str | None:
    from cron_descriptor import ExpressionDescriptor, Options

    options = Options()
    options.use_24hour_time_format = True
    options.verbose = False
    try:
        return ExpressionDescriptor(_unevenly_stepped_as_lists(expr), options).get_description()
    except Exception:  # the library raises several private error types; cron checked it first
        return None


def _unevenly_stepped_as_lists(expr: str) -> str:
    """``*/35`` fires at :00 and :35, not every 35 minutes (JOB111): spell such steps out
    so the words say what cron does."""
    fields = expr.split()
    for index, size in (_STEPPED_SEVEN if len(fields) == 7 else _STEPPED).items():
        field = fields[index]
        if field.startswith("*/") and field[2:].isdigit() and int(field[2:]) \
                and size % int(field[2:]):
            first = 1 if index == 3 else 0
            fields[index] = ",".join(str(v) for v in range(first, size + first, int(field[2:])))
    return " ".join(fields)


def in_words(schedule: Schedule) -> str:
    """The schedule for a reader; the text as written when it cannot be put in words."""
    zone = f" ({schedule.timezone})" if schedule.timezone else ""
    if schedule.kind == "reboot":
        return "at boot"
    if schedule.kind == "templated":
        if "{{" in schedule.text or "<template>" in schedule.text:
            return "set at deploy time (templated)"
        return "computed by code (not known before it runs)"
    if schedule.cron:
        fields = schedule.cron.split()
        # supercronic's six fields end with the years: the describer's seven (it reads six
        # as seconds first)
        words = describe_cron(" ".join(["0", *fields] if len(fields) == 6 and
                                       schedule.dialect == "supercronic" else fields))
        return (words + zone) if words else schedule.text
    if schedule.calendar:
        return "; ".join(_calendar_words(e) for e in schedule.calendar)
    if schedule.kind == "interval" and schedule.min_interval_seconds:
        return interval_words(schedule.min_interval_seconds)
    return schedule.text


def interval_words(seconds: int) -> str:
    """``300`` -> "Every 5 minutes", in cron-descriptor's style."""
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60), ("second", 1)):
        if seconds % size == 0:
            count = seconds // size
            return f"Every {unit}" if count == 1 else f"Every {count} {unit}s"
    return f"Every {format_duration(seconds)}"


def _calendar_words(expression: str) -> str:
    from ..calendar import parse_calendar

    try:
        spec = parse_calendar(expression)
    except ScheduleError:
        return expression
    cron = calendar_as_cron(spec)
    words = describe_cron(cron) if cron else None
    zone = f" ({spec.timezone})" if spec.timezone else ""
    return (words + zone) if words else f"on calendar {spec.normalized()}"


def calendar_as_cron(spec) -> str | None:
    """The cron expression of an ``OnCalendar=`` event, when cron can say the same."""
    if spec.years.items is not None or spec.from_end or spec.seconds.values(0, 59) != {0}:
        return None
    if spec.weekdays is not None and spec.days.items is not None:
        return None  # systemd ANDs day and weekday; cron would OR them
    fields = [_cron_field(spec.minutes, 0, 59), _cron_field(spec.hours, 0, 23),
              _cron_field(spec.days, 1, 31), _cron_field(spec.months, 1, 12),
              _cron_weekdays(spec.weekdays)]
    known = [f for f in fields if f is not None]
    return " ".join(known) if len(known) == len(fields) else None


def _cron_field(component, lo: int, hi: int) -> str | None:
    if component.items is None:
        return "*"
    parts = []
    for item in sorted(component.items, key=lambda i: i.start):
        numbers = [v for v in (item.start, item.stop, item.step) if v is not None]
        if any(v != int(v) for v in numbers):
            return None  # fractional seconds have no cron spelling
        start = int(item.start)
        if item.step:
            if item.stop is None:
                base = "*" if start == lo else f"{start}-{hi}"
            else:
                base = f"{start}-{int(item.stop)}"
            parts.append(f"{base}/{int(item.step)}")
        elif item.stop is not None:
            parts.append(f"{start}-{int(item.stop)}")
        else:
            parts.append(str(start))
    return ",".join(parts)


def _cron_weekdays(days: frozenset[int] | None) -> str:
    """systemd counts weekdays from Monday (0); runs of days become ranges."""
    if days is None:
        return "*"
    ordered, runs = sorted(days), list[list[int]]()
    for day in ordered:
        if runs and day == runs[-1][1] + 1:
            runs[-1][1] = day
        else:
            runs.append([day, day])
    return ",".join(_CRON_DAYS[a] if a == b else f"{_CRON_DAYS[a]}-{_CRON_DAYS[b]}"
                    for a, b in runs)
