"""Crontab files as supercronic reads them: its own cron dialect.

supercronic (github.com/aptible/supercronic) reads a crontab with its ``crontab`` package
and computes times with ``cronexpr`` (a fork of gorhill/cronexpr). What differs from
Debian's cron, all of it from their source:

* a job line is tried as 7 time fields (seconds … years), then 6 (… years), then 5, then 1
  (``@hourly``); the first reading cronexpr accepts wins and the rest is the command, run
  as written (no ``%`` rule). Fields are separated by Go's ``\\s`` (space, tab, CR, LF, FF;
  not a no-break space), and one line it cannot read makes supercronic refuse the whole
  file (it exits at start);
* ``L``, ``W``, ``LW``, ``nL``, ``n#k``, ``?``, names of three letters or in full, in any
  case; ``7`` is Sunday, and so is any day-of-week number cronexpr does not list (``07``,
  ``01``); a descending range is refused, but a descending range with a step is empty;
  in the seconds to hours, months and years fields ``*`` first in a list makes the rest of
  it unread (``*,x`` is accepted);
  day-of-month and day-of-week: either matches when both are restricted (a field holding
  ``*`` or ``?`` is not);
* the environment and ``CRON_TZ`` of the whole file apply to every job (the last setting
  wins); an empty value (``FOO=``) crashes it;
* an expression whose seconds, minutes, hours or months match nothing never runs, and
  crashes supercronic (Go's index out of range) when it starts before the last point
  cronexpr's walk still reaches (a listed year after the start's, for empty months: its
  first ``nextYear``); started later, it asks again without pause, as for an expression
  whose times never come again.

Checked against supercronic's own code (tests/test_supercronic_cron.py and its oracle).
"""
from __future__ import annotations

import calendar
import datetime as dt
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .model import NeverRuns, Schedule
from .schedule import SPAN_YEARS, Firings, change_days, changed_times, span_start
from .timespec import format_duration

#: a field: what Go's regexp ``\S+`` finds (its ``\s`` is space, tab, CR, LF, FF only)
_FIELD = re.compile(r"[^\t\n\f\r ]+")
_ENTRY = re.compile(r"[^,]+")
#: cronexpr's macros, replaced wherever they stand (Go's strings.Replacer)
_MACROS = {"@yearly": "0 0 0 1 1 * *", "@annually": "0 0 0 1 1 * *",
           "@monthly": "0 0 0 1 * * *", "@weekly": "0 0 0 * * 0 *",
           "@daily": "0 0 0 * * * *", "@hourly": "0 0 * * * * *"}
_MACRO = re.compile("|".join(_MACROS))
#: the environment line of supercronic's crontab package
ENV_LINE = re.compile(r"([^\t\n\f\r =]+)[\t\n\f\r ]*=[\t\n\f\r ]*(.*)", re.S)
#: the field counts a job line is tried with, in order
FIELD_COUNTS = (7, 6, 5, 1)
#: cronexpr's years
FIRST_YEAR, LAST_YEAR = 1970, 2099

_NUMBERS = {**{str(v): v for v in range(60)}, **{f"0{v}": v for v in range(10)},
            **{str(v): v for v in range(FIRST_YEAR, LAST_YEAR + 1)}}
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august",
                "september", "october", "november", "december")
_MONTHS = {**{str(v): v for v in range(1, 13)}, **{f"0{v}": v for v in range(1, 10)},
           **{n[:3]: i + 1 for i, n in enumerate(_MONTH_NAMES)},
           **{n: i + 1 for i, n in enumerate(_MONTH_NAMES)}}
_DAY_NAMES = ("sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday")
_WEEKDAYS = {**{str(v): v for v in range(7)}, "7": 0,
             **{n[:3]: i for i, n in enumerate(_DAY_NAMES)},
             **{n: i for i, n in enumerate(_DAY_NAMES)}}


@dataclass(frozen=True)
class _Kind:
    """A field of cronexpr: its name, range, value pattern and reading of a value (a
    token it does not list reads as 0, as Go's map lookup does)."""

    name: str
    lo: int
    hi: int
    pattern: str
    atoi: Callable[[str], int]


def _number(text: str) -> int:
    return _NUMBERS.get(text, 0)


_SECOND = _Kind("second", 0, 59, r"0?[0-9]|[1-5][0-9]", _number)
_MINUTE = _Kind("minute", 0, 59, r"0?[0-9]|[1-5][0-9]", _number)
_HOUR = _Kind("hour", 0, 23, r"0?[0-9]|1[0-9]|2[0-3]", _number)
_DOM = _Kind("day-of-month", 1, 31, r"0?[1-9]|[12][0-9]|3[01]", _number)
_MONTH = _Kind("month", 1, 12, r"0?[1-9]|1[012]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|"
               r"january|february|march|april|june|july|august|september|october|november|"
               r"december", lambda t: _MONTHS.get(t, 0))
_DOW = _Kind("day-of-week", 0, 6, r"0?[0-7]|sun|mon|tue|wed|thu|fri|sat|sunday|monday|tuesday|"
             r"wednesday|thursday|friday|saturday", lambda t: _WEEKDAYS.get(t, 0))
_YEAR = _Kind("year", FIRST_YEAR, LAST_YEAR, r"19[789][0-9]|20[0-9]{2}", _number)


@lru_cache(maxsize=None)
def _layout(layout: str, kind: _Kind) -> re.Pattern[str]:
    return re.compile(layout.replace("%value%", kind.pattern))


class _Refused(Exception):
    """cronexpr's error for an expression (its message)."""


#: an item of a field as cronexpr's generic parser reads it: (all, one, span, or none — left
#: to the field's own handler: ``L``, ``15W``, ``5#3`` —, the item as written, first, last,
#: step)
_Directive = tuple[str, str, int, int, int]


def _directives(text: str, kind: _Kind) -> list[_Directive]:
    """cronexpr's genericFieldParse: each comma-separated item as all, one, span or none."""
    items = _ENTRY.findall(text)
    if not items:
        raise _Refused(f"{kind.name} field: missing directive")
    out: list[_Directive] = []
    for raw in items:
        item = raw.lower()
        if item in ("*", "?"):
            out.append(("all", raw, kind.lo, kind.hi, 1))
            continue
        if _layout(r"(?:%value%)", kind).fullmatch(item):
            out.append(("one", raw, kind.atoi(item), 0, 0))
            continue
        m = _layout(r"(%value%)-(%value%)", kind).fullmatch(item)
        if m:
            first, last = kind.atoi(m.group(1)), kind.atoi(m.group(2))
            if last < first:
                raise _Refused(f"invalid interval {item} (normalized to {first}-{last})")
            out.append(("span", raw, first, last, 1))
            continue
        stepped = ((re.compile(r"\*/([0-9]+)"), None),
                   (_layout(r"(%value%)/([0-9]+)", kind), 1),
                   (_layout(r"(%value%)-(%value%)/([0-9]+)", kind), 2))
        for pattern, groups in stepped:
            m = pattern.fullmatch(item)
            if m is None:
                continue
            step = _number(m.group(m.lastindex or 1))
            if step < 1 or step > kind.hi:
                raise _Refused(f"invalid interval {item}")
            first = kind.lo if groups is None else kind.atoi(m.group(1))
            last = kind.atoi(m.group(2)) if groups == 2 else kind.hi
            out.append(("span", raw, first, last, step))
            break
        else:
            out.append(("none", raw, 0, 0, 0))
    return out


def _values(text: str, kind: _Kind) -> tuple[int, ...]:
    """cronexpr's genericFieldHandler: the values of a seconds, minutes, hours, months or
    years field (``*`` returns at once, unread items after it included)."""
    values: set[int] = set()
    for what, raw, first, last, step in _directives(text, kind):
        if what == "none":
            raise _Refused(f"syntax error in {kind.name} field: '{raw}'")
        if what == "all":
            return tuple(range(kind.lo, kind.hi + 1))
        values |= {first} if what == "one" else set(range(first, last + 1, step))
    return tuple(sorted(values))


@dataclass(frozen=True)
class Expression:
    """What a cronexpr expression fires on (its Expression's lists and maps)."""

    seconds: tuple[int, ...]
    minutes: tuple[int, ...]
    hours: tuple[int, ...]
    months: tuple[int, ...]
    years: tuple[int, ...]
    days: frozenset[int]  # days of the month
    workdays: frozenset[int]  # ``15W``: the weekday nearest the 15th
    last_day: bool  # ``L``
    last_workday: bool  # ``LW``
    days_restricted: bool
    weekdays: frozenset[int]  # 0 is Sunday
    nth_weekdays: frozenset[int]  # ``5#3``: (3 - 1) * 7 + 5
    last_weekdays: frozenset[int]  # ``5L``
    weekdays_restricted: bool

    def month_days(self, year: int, month: int) -> tuple[int, ...]:
        """cronexpr's calculateActualDaysOfMonth: the days of one month it fires on."""
        last = calendar.monthrange(year, month)[1]
        if not self.days_restricted and not self.weekdays_restricted:
            return tuple(range(1, last + 1))
        found: set[int] = set()
        if self.days_restricted:
            if self.last_day:
                found.add(last)
            if self.last_workday:
                found.add(_workday(year, month, last, last))
            found |= {d for d in self.days if d <= last}
            found |= {_workday(year, month, d, last) for d in self.workdays if d <= last}
        if self.weekdays_restricted:
            first = _go_weekday(dt.date(year, month, 1))
            offset = 7 - first
            for v in self.weekdays:
                found |= set(range(1 + (offset + v) % 7, last + 1, 7))
            for v in self.nth_weekdays:
                day = 1 + 7 * (v // 7) + (offset + v) % 7
                if day <= last:
                    found.add(day)
            origin = last - 6
            offset = 7 - _go_weekday(dt.date(year, month, origin))
            found |= {origin + (offset + v) % 7 for v in self.last_weekdays}
        return tuple(sorted(found))

    def day_seconds(self) -> tuple[int, ...]:
        """The seconds of a day it fires at."""
        return tuple(h * 3600 + m * 60 + s for h in self.hours for m in self.minutes
                     for s in self.seconds)

    def minutes_of_day(self) -> tuple[int, ...]:
        return tuple(h * 60 + m for h in self.hours for m in self.minutes) if self.seconds \
            else ()

    def shortest_gap(self, days: list[int]) -> int | None:
        """The shortest gap between two consecutive firings in wall-clock time, on the
        matching ``days`` (ordinals, in order), from the fields' lists: a day's times are
        (hour, minute, second) in order, so a gap is within a minute, across minutes,
        across hours or across days — at its shortest between the closest values."""
        if not self.seconds or not self.minutes or not self.hours or not days:
            return None
        gaps = []
        spread = 0  # from a unit's first firing to its last (a minute's, an hour's, a day's)
        for values, size in ((self.seconds, 1), (self.minutes, 60), (self.hours, 3600),
                             (tuple(days), 86400)):
            if len(values) > 1:
                gaps.append(size * min(b - a for a, b in zip(values, values[1:])) - spread)
            spread += size * (values[-1] - values[0])
        return min(gaps) if gaps else None

    def days_between(self, first: dt.date, stop: dt.date) -> frozenset[int]:
        """Ordinals of the days in [first, stop) it fires on."""
        out: set[int] = set()
        years = set(self.years)
        for year in range(first.year, stop.year + 1):
            if year not in years:
                continue
            for month in self.months:
                for day in self.month_days(year, month):
                    date = dt.date(year, month, day)
                    if first <= date < stop:
                        out.add(date.toordinal())
        return frozenset(out)


def _go_weekday(date: dt.date) -> int:
    """Go's weekday: Sunday is 0."""
    return (date.weekday() + 1) % 7


def _workday(year: int, month: int, day: int, last: int) -> int:
    """cronexpr's workdayOfMonth: a Saturday moves to the Friday (the Monday on the 1st), a
    Sunday to the Monday (the Friday on the last day)."""
    weekday = _go_weekday(dt.date(year, month, day))
    if weekday == 6:
        return day - 1 if day > 1 else day + 2
    if weekday == 0:
        return day + 1 if day < last else day - 2
    return day


def _days(text: str) -> tuple[frozenset[int], frozenset[int], bool, bool, bool]:
    """cronexpr's domFieldHandler: (days, workdays, L, LW, restricted)."""
    days: set[int] = set()
    workdays: set[int] = set()
    last = last_workday = False
    restricted = True
    for what, raw, first, stop, step in _directives(text, _DOM):
        if what == "none":
            item = raw.lower()
            m = _layout(r"(%value%)w", _DOM).fullmatch(item)
            if item == "l":
                last = True
            elif item == "lw":
                last_workday = True
            elif m:
                workdays.add(_DOM.atoi(m.group(1)))
            else:
                raise _Refused(f"syntax error in day-of-month field: '{raw}'")
        elif what == "one":
            days.add(first)
        else:
            days |= set(range(first, stop + 1, step))
            restricted = restricted and what != "all"
    return frozenset(days), frozenset(workdays), last, last_workday, restricted


def _weekdays(text: str) -> tuple[frozenset[int], frozenset[int], frozenset[int], bool]:
    """cronexpr's dowFieldHandler: (weekdays, n#k as (k-1)*7+n, nL, restricted)."""
    days: set[int] = set()
    nth: set[int] = set()
    last: set[int] = set()
    restricted = True
    for what, raw, first, stop, step in _directives(text, _DOW):
        if what == "none":
            item = raw.lower()
            m = _layout(r"(%value%)l", _DOW).fullmatch(item)
            n = _layout(r"(%value%)#([1-5])", _DOW).fullmatch(item)
            if m:
                last.add(_DOW.atoi(m.group(1)))
            elif n:
                nth.add((_DOW.atoi(n.group(2)) - 1) * 7 + _DOW.atoi(n.group(1)) % 7)
            else:
                raise _Refused(f"syntax error in day-of-week field: '{raw}'")
        elif what == "one":
            days.add(first)
        else:
            days |= set(range(first, stop + 1, step))
            restricted = restricted and what != "all"
    return frozenset(days), frozenset(nth), frozenset(last), restricted


def split(text: str) -> list[str]:
    """The fields of a text, as supercronic splits a line."""
    return _FIELD.findall(text)


def named_fields(text: str) -> dict[str, str]:
    """The fields of an expression cronexpr reads, by name (``second`` and ``year`` when
    written)."""
    fields = split(expand(text))
    names = ("minute", "hour", "day-of-month", "month", "day-of-week", "year")
    return dict(zip(("second", *names) if len(fields) == 7 else names, fields))


def restricted(field: str) -> bool:
    """Whether a day field restricts the days: cronexpr's rule, no item of it ``*`` or
    ``?`` (a restricted day-of-month and day-of-week fire when either matches)."""
    return not any(item in ("*", "?") for item in _ENTRY.findall(field))


def expand(text: str) -> str:
    """The expression with cronexpr's macros replaced, wherever they stand."""
    return _MACRO.sub(lambda m: _MACROS[m.group(0)], text)


@lru_cache(maxsize=4096)
def parse(text: str) -> Expression | str:
    """cronexpr's ParseStrict: the expression, or its error (of the first field in error,
    in its order: seconds, minutes, …, years)."""
    fields = _FIELD.findall(expand(text))
    if len(fields) < 5:
        return "missing field(s)"
    if len(fields) > 7:
        return "too many fields"
    if len(fields) < 7:
        fields = ["0", *fields]  # (six: the years are the last)
    try:
        seconds = _values(fields[0], _SECOND)
        minutes = _values(fields[1], _MINUTE)
        hours = _values(fields[2], _HOUR)
        days, workdays, last_day, last_workday, days_restricted = _days(fields[3])
        months = _values(fields[4], _MONTH)
        weekdays, nth, last_weekdays, weekdays_restricted = _weekdays(fields[5])
        years = _values(fields[6], _YEAR) if len(fields) == 7 else \
            tuple(range(FIRST_YEAR, LAST_YEAR + 1))
    except _Refused as exc:
        return str(exc)
    return Expression(seconds, minutes, hours, months, years, days, workdays, last_day,
                      last_workday, days_restricted, weekdays, nth, last_weekdays,
                      weekdays_restricted)


@dataclass(frozen=True)
class LineReading:
    """How supercronic reads a job line (its crontab package's parseJobLine): the time
    fields and the command, and the expression, or why it refuses the line."""

    schedule: str  # the line up to the end of its time fields
    command: str  # the rest, from its first character that is not a separator
    command_at: int  # where the command starts in the line
    expression: Expression | None
    refused: str | None = None


def read_line(line: str) -> LineReading:
    """supercronic's reading of a job line (spaces and tabs before it already removed)."""
    found = list(_FIELD.finditer(line))
    for count in FIELD_COUNTS:
        if len(found) <= count:
            continue
        read = parse(line[:found[count - 1].end()])
        if isinstance(read, Expression):
            return LineReading(line[:found[count - 1].end()], line[found[count].start():],
                               found[count].start(), read)
    # refused: say why in the reading that was meant — a macro, or as many fields as the
    # line begins with words that look like time fields (five at least: five and a command
    # is the common line)
    if line.startswith("@") or len(found) <= 5:
        end = found[0].end() if line.startswith("@") and found else \
            found[-1].end() if found else len(line)
        why = "no command" if len(found) < 2 and line.startswith("@") else \
            f"`{line[:end]}` is not one of its macros (" + ", ".join(_MACROS) + ")" \
            if line.startswith("@") else \
            "a job line is five time fields (or six, or seven) and a command"
        rest = found[1].start() if line.startswith("@") and len(found) > 1 else end
        return LineReading(line[:end], line[rest:] if rest != end else "", rest, None, why)
    looks = next((i for i, f in enumerate(found) if not _looks_like_field(f.group())),
                 len(found))
    count = max(5, min(looks, 7, len(found) - 1))
    schedule = line[:found[count - 1].end()]
    return LineReading(schedule, line[found[count].start():], found[count].start(), None,
                       str(parse(schedule)))


_WORDS = re.compile(r"[A-Za-z]+")
_NAMES = {*_MONTHS, *_WEEKDAYS, "l", "w", "lw"}


def _looks_like_field(text: str) -> bool:
    """A word made of what time fields are made of: numbers, ``*?,/-#`` and names."""
    return re.fullmatch(r"[0-9A-Za-z*?,/#-]+", text) is not None and \
        all(w.lower() in _NAMES for w in _WORDS.findall(text))


# -- when it runs ----------------------------------------------------------------------


class _Crash(Exception):
    """Go's index out of range: supercronic crashes."""


def _first(values: tuple[int, ...]) -> int:
    if not values:
        raise _Crash
    return values[0]


def _next_time(expr: Expression, now: dt.datetime) -> dt.datetime | None:
    """cronexpr's Next, as written, in wall-clock time: the first time after ``now``, None
    for Go's zero time (no time comes), _Crash where Go indexes an empty list."""
    days: list[tuple[int, ...]] = [()]

    def actual(year: int, month: int) -> tuple[int, ...]:
        days[0] = expr.month_days(year, month)
        return days[0]

    def at(year: int, month: int, day: int, h: int, m: int, s: int) -> dt.datetime:
        return dt.datetime(year, month, 1) + dt.timedelta(days=day - 1, hours=h, minutes=m,
                                                          seconds=s)

    def next_year(t: dt.datetime) -> dt.datetime | None:
        i = bisect_left(expr.years, t.year + 1)
        if i == len(expr.years):
            return None
        year, month = expr.years[i], _first(expr.months)
        if not actual(year, month):
            return next_month(at(year, month, 1, _first(expr.hours), _first(expr.minutes),
                                 _first(expr.seconds)))
        return at(year, month, days[0][0], _first(expr.hours), _first(expr.minutes),
                  _first(expr.seconds))

    def next_month(t: dt.datetime) -> dt.datetime | None:
        while True:
            i = bisect_left(expr.months, t.month + 1)
            if i == len(expr.months):
                return next_year(t)
            month = expr.months[i]
            if actual(t.year, month):
                return at(t.year, month, days[0][0], _first(expr.hours),
                          _first(expr.minutes), _first(expr.seconds))
            t = at(t.year, month, 1, _first(expr.hours), _first(expr.minutes),
                   _first(expr.seconds))

    def next_day(t: dt.datetime) -> dt.datetime | None:
        i = bisect_left(days[0], t.day + 1)
        if i == len(days[0]):
            return next_month(t)
        return at(t.year, t.month, days[0][i], _first(expr.hours), _first(expr.minutes),
                  _first(expr.seconds))

    def next_hour(t: dt.datetime) -> dt.datetime | None:
        i = bisect_left(expr.hours, t.hour + 1)
        if i == len(expr.hours):
            return next_day(t)
        return at(t.year, t.month, t.day, expr.hours[i], _first(expr.minutes),
                  _first(expr.seconds))

    def next_minute(t: dt.datetime) -> dt.datetime | None:
        i = bisect_left(expr.minutes, t.minute + 1)
        if i == len(expr.minutes):
            return next_hour(t)
        return at(t.year, t.month, t.day, t.hour, expr.minutes[i], _first(expr.seconds))

    def next_second(t: dt.datetime) -> dt.datetime | None:
        i = bisect_left(expr.seconds, t.second + 1)
        if i == len(expr.seconds):
            return next_minute(t)
        return at(t.year, t.month, t.day, t.hour, t.minute, expr.seconds[i])

    for value, values, beyond, other in (
            (now.year, expr.years, None, next_year), (now.month, expr.months, next_year,
                                                      next_month)):
        i = bisect_left(values, value)
        if i == len(values):
            return beyond(now) if beyond is not None else None
        if value != values[i]:
            return other(now)
    if not actual(now.year, now.month):
        return next_month(now)
    for value, values, beyond, other in (
            (now.day, days[0], next_month, next_day), (now.hour, expr.hours, next_day, next_hour),
            (now.minute, expr.minutes, next_hour, next_minute)):
        i = bisect_left(values, value)
        if i == len(values):
            return beyond(now)
        if value != values[i]:
            return other(now)
    if bisect_left(expr.seconds, now.second) == len(expr.seconds):
        return next_minute(now)
    return next_second(now)


def _crashes(expr: Expression, at: dt.datetime) -> bool:
    try:
        _next_time(expr, at)
    except _Crash:
        return True
    return False


def crashes_before(expr: Expression) -> dt.datetime | None:
    """The wall-clock time before which supercronic, started then, crashes at its first
    look at the times, None when no start time does.

    Only an empty list of seconds, minutes, hours or months crashes cronexpr: its walk
    indexes the list as soon as it reaches a later hour, day, month or listed year (an
    empty month list with a listed year after the start's: its first ``nextYear``); from
    the last such point on it finds nothing and asks again without pause. So every start
    before one time crashes and none after it: found to the second, between 1970 and the
    year after the last cronexpr knows (from which Next gives up at once)."""
    if expr.seconds and expr.minutes and expr.hours and expr.months:
        return None
    lo, hi = dt.datetime(FIRST_YEAR, 1, 1), dt.datetime(LAST_YEAR + 1, 1, 1)
    if not _crashes(expr, lo):
        return None
    while hi - lo > dt.timedelta(seconds=1):  # lo crashes, hi does not
        mid = lo + dt.timedelta(seconds=(hi - lo) // dt.timedelta(seconds=2))
        lo, hi = (mid, hi) if _crashes(expr, mid) else (lo, mid)
    return hi


def never(expr: Expression, text: str, now: dt.datetime) -> tuple[str, bool] | None:
    """Why supercronic never runs an expression it accepts, when it starts at ``now`` (wall
    clock): (why, whether it crashes), or None when it runs."""
    empty = next((name for name, values in (("second", expr.seconds), ("minute", expr.minutes),
                                            ("hour", expr.hours), ("month", expr.months),
                                            ("year", expr.years)) if not values), None)
    try:
        found = _next_time(expr, now)
    except _Crash:
        until = crashes_before(expr)
        assert until is not None and now < until
        return (f"supercronic accepts `{text}` but crashes when it asks for its next time "
                f"(its {empty} field matches nothing), as it does whenever it starts before "
                f"{until:%Y-%m-%d %H:%M:%S}; started later, it finds no next time and asks "
                f"again without pause"), True
    if found is not None:
        return None
    why = f"its {empty} field matches nothing" if empty else \
        f"it matches no time from {now:%Y-%m-%d} to the end of {LAST_YEAR}, the last year " \
        f"it knows"
    return f"{why}; supercronic finds no next time and asks again without pause", False


# -- the arithmetic ---------------------------------------------------------------------


@lru_cache(maxsize=1024)
def _firings(expr: Expression, start: dt.date, span_days: int) -> Firings:
    days = expr.days_between(start, start + dt.timedelta(days=span_days))
    return Firings(((days, expr.day_seconds()),), span_days)


def _span() -> tuple[dt.date, int]:
    start = span_start()
    return start, (dt.date(start.year + SPAN_YEARS, 1, 1) - start).days


def span_firings(text: str) -> Firings | None:
    """The firings of an expression over the span the arithmetic covers (None when
    cronexpr refuses it)."""
    expr = parse(text)
    return None if isinstance(expr, str) else _firings(expr, *_span())


def go_instant(ordinal: int, second: int, zone: ZoneInfo) -> int:
    """The instant Go's time.Date gives a local time of ``zone`` (Unix seconds): a time the
    clocks skip or repeat is read with the offset in force at that time read as UTC, then
    with the one in force at the result (so it moves forward east of Greenwich, backward
    west of it; of a repeated time, the second east, the first west)."""
    local = (ordinal - _EPOCH) * 86400 + second
    first = _offset(local, zone)
    if first == 0:
        return local
    return local - _offset(local - first, zone)


_EPOCH = dt.date(1970, 1, 1).toordinal()


def _offset(instant: int, zone: ZoneInfo) -> int:
    found = dt.datetime.fromtimestamp(instant, zone).utcoffset()
    return int(found.total_seconds()) if found is not None else 0


def local_second(instant: int, ordinal: int, zone: ZoneInfo) -> int:
    """An instant as a second of the local day ``ordinal`` (beyond 86399: a later day)."""
    return instant + _offset(instant, zone) - (ordinal - _EPOCH) * 86400


@dataclass(frozen=True)
class SpringDay:
    """What supercronic does with the firings of a spring-change day (its loop of
    Next(last)): the first firing in the skipped time starts at ``kept`` (None: it does
    not), and the other firings up to the local second ``until`` (inclusive) do not run."""

    first: int  # the local second of the first firing in the skipped time
    kept: int | None
    until: int


def spring_day(seconds: tuple[int, ...], ordinal: int, zone: ZoneInfo,
               previous: int) -> SpringDay | None:
    """For a day whose clocks go forward: where some firing falls in the skipped local
    time, what supercronic does with it and those after it (``previous``: the instant of
    its last start before). Next() asks time.Date for the skipped time (``go_instant``):
    forward, supercronic starts it there and carries on from that local time (the firings
    it passed do not run); backward, it starts it only when that is after its last start,
    then Next() keeps answering that same past time and supercronic asks again without
    pause until the clocks reach the end of the change (the firing at that very time does
    not run either)."""
    changed = changed_times(ordinal, zone.key)
    if changed is None or not changed[2]:
        return None
    start, end, _ = changed
    i = bisect_left(seconds, start)
    if i == len(seconds) or seconds[i] >= end:
        return None
    first = seconds[i]
    at = go_instant(ordinal, first, zone)
    if at >= go_instant(ordinal, end, zone):  # moved forward, past the change
        return SpringDay(first, at, local_second(at, ordinal, zone))
    return SpringDay(first, at if at > previous else None, end)


def dst_words(zone_name: str, spring: bool, autumn: bool) -> str:
    """What supercronic does with a fixed time a zone's spring change skips (``spring``)
    or its autumn change repeats (``autumn``), in words, from the zone's first such
    changes in the span."""
    zone = ZoneInfo(zone_name)
    said = []
    for ordinal in change_days(zone_name):
        changed = changed_times(ordinal, zone_name)
        if changed is None:
            continue
        start, end, skipped = changed
        length = format_duration(end - start)
        at, after = go_instant(ordinal, start, zone), go_instant(ordinal, end, zone)
        if skipped and spring:
            said.append(
                f"a time the spring change skips: supercronic starts it {length} late that day "
                f"(Go moves a time that does not exist forward) and skips any other firing "
                f"that this passes" if at >= after else
                f"a time the spring change skips: supercronic starts it {length} early that "
                f"day (Go moves a time that does not exist back; not at all when a firing "
                f"started then), then none before the first after the change's end")
            spring = False
        elif not skipped and autumn:
            said.append(f"a time the autumn change repeats: supercronic runs it once, at the "
                        f"{'second' if at >= after - (end - start) else 'first'} of the two")
            autumn = False
    return "; and ".join(said)


def dst_summary(firings: Firings, zone_name: str, wall_clock: tuple[int | None, int]
                ) -> tuple[int | None, float] | None:
    """(shortest gap in seconds, runs per day) of an expression's firings in a zone, as
    supercronic runs them on the days the clocks change; None when no firing falls in a
    skipped or repeated local time. On an autumn day every firing runs once (at the first
    or the second of the two times, as time.Date picks), so gaps only grow there; on a
    spring day ``spring_day`` says what runs. ``wall_clock``: (shortest gap, runs) in
    wall-clock time."""
    try:
        zone = ZoneInfo(zone_name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None
    if not firings.groups:
        return None
    days_set, seconds = firings.groups[0]
    days = sorted(days_set)
    gap, runs = wall_clock
    shifted = False
    for ordinal in change_days(zone_name):
        changed = changed_times(ordinal, zone_name)
        if ordinal not in days_set or changed is None or not seconds:
            continue
        lo, hi = bisect_left(seconds, changed[0]), bisect_left(seconds, changed[1])
        if lo == hi:
            continue
        shifted = True
        if not changed[2]:
            continue  # autumn: every firing once, no gap shorter
        k = bisect_left(days, ordinal)
        previous = go_instant(ordinal, seconds[lo - 1], zone) if lo else \
            go_instant(days[k - 1], seconds[-1], zone) if k else None
        spring = spring_day(seconds, ordinal, zone, previous if previous is not None else
                            -2 ** 62)
        if spring is None:
            continue
        after = bisect_right(seconds, spring.until)
        runs += (spring.kept is not None) - (after - lo)
        starts = [t for t in (previous, spring.kept) if t is not None]
        if after < len(seconds):
            starts.append(go_instant(ordinal, seconds[after], zone))
        elif k + 1 < len(days):
            starts.append(go_instant(days[k + 1], seconds[0], zone))
        gaps = [b - a for a, b in zip(starts, starts[1:])]
        if gaps:
            gap = min(gaps) if gap is None else min(gap, *gaps)
    if not shifted:
        return None
    return gap, round(runs / firings.span_days, 4)


def schedule(written: str, expr: Expression, timezone: str | None) -> tuple[Schedule,
                                                                          NeverRuns | None]:
    """The Schedule of the time fields ``written`` of a job line, which cronexpr reads as
    ``expr``, and why supercronic never runs it, if it does not: it crashes (``refused``:
    supercronic stops, and no job of the file runs) or never finds a next time
    (``never-matches``)."""
    fields = _FIELD.findall(expand(written))
    found = _firings(expr, *_span())
    days = found.groups[0][0]
    wall_clock = expr.shortest_gap(sorted(days)), len(days) * len(found.groups[0][1])
    gap, per_day = wall_clock[0], round(wall_clock[1] / found.span_days, 4)
    if timezone:
        gap, per_day = dst_summary(found, timezone, wall_clock) or (gap, per_day)
    text = " ".join(_FIELD.findall(written))
    stopped = never(expr, text, dt.datetime.combine(span_start(), dt.time()))
    why = None if stopped is None else \
        NeverRuns("refused" if stopped[1] else "never-matches", stopped[0])
    hours = named_fields(written)["hour"]
    return Schedule(text=text, kind="cron", timezone=timezone, min_interval_seconds=gap,
                    runs_per_day=per_day, fire_minutes=expr.minutes_of_day(),
                    cron=" ".join(fields), fixed_time=not hours.startswith(("*", "?")),
                    dialect="supercronic"), why
