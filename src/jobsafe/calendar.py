"""systemd calendar events (``OnCalendar=``), as systemd.time(7) defines them.

``[WEEKDAYS] [YEAR-]MONTH-DAY [HOUR:MINUTE[:SECOND]] [TIMEZONE]``, each component a ``*``,
values, ``a..b`` ranges and ``a/step`` repetitions separated by commas, ``~`` counting days
from the end of the month, and the shorthands ``minutely`` … ``annually``. No library
implements systemd's dialect, so it is read here the way systemd's parser (calendarspec.c)
reads it, character by character: what follows a component decides whether it is a date or a
time, only spaces separate the parts, a zone is the last word when it names a zone file,
two-digit years (in any list or range) are 19xx/20xx, ranges are cut to their last step and
one that cannot repeat is a value, and validity is judged on that normal form. The tests
compare it with ``systemd-analyze calendar`` itself (tests/test_calendar.py).
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from functools import cached_property
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .timespec import ScheduleError

SHORTHANDS = {
    "minutely": "*-*-* *:*:00",
    "hourly": "*-*-* *:00:00",
    "daily": "*-*-* 00:00:00",
    "monthly": "*-*-01 00:00:00",
    "weekly": "Mon *-*-* 00:00:00",
    "yearly": "*-01-01 00:00:00",
    "annually": "*-01-01 00:00:00",
    "anually": "*-01-01 00:00:00",  # (systemd reads the old misspelling too)
    "quarterly": "*-01,04,07,10-01 00:00:00",
    "semiannually": "*-01,07-01 00:00:00",
    "semi-annually": "*-01,07-01 00:00:00",
    "biannually": "*-01,07-01 00:00:00",
    "bi-annually": "*-01,07-01 00:00:00",
}
WEEKDAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_WEEKDAY_NAMES = {**{d: i for i, d in enumerate(WEEKDAYS)},
                  **{n: i for i, n in enumerate(["monday", "tuesday", "wednesday", "thursday",
                                                 "friday", "saturday", "sunday"])}}
_DISPLAY_DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]


@dataclass(frozen=True)
class Item:
    """One comma-separated piece of a component: a value, a range, a repetition."""

    start: float
    stop: float | None = None  # inclusive end of a range
    step: float | None = None

    def values(self, lo: int, hi: int) -> set[float]:
        # (a repetition runs to the end of the last unit: 58/1.5 seconds is 58 and 59.5)
        end = self.stop if self.stop is not None else \
            (hi + 0.999999 if self.step else self.start)
        if self.step and self.step < 1:
            # a sub-second repetition passes every whole second from its start to its last
            # value: computed, not enumerated (00:00:00/0.000001 would be 60 million steps)
            last = self.start + ((end - self.start) // self.step) * self.step
            return {float(v) for v in range(int(self.start), int(last) + 1)} \
                if last >= self.start else set()
        if self.step:
            out, v = set(), self.start
            while v <= end:
                out.add(v)
                v += self.step
            return out
        if self.stop is not None:
            return {float(v) for v in range(int(self.start), int(self.stop) + 1)}
        return {self.start}

    def text(self, width: int, unit: int = 1) -> str:
        """As systemd writes it (format_chain): ``unit`` is 1, or 1000000 for the seconds,
        which are kept in microseconds."""
        start = round(self.start * unit)
        stop = round(self.stop * unit) if self.stop is not None else -1
        # a range repeats every unit unless told otherwise; that step is not written
        repeat = round(self.step * unit) if self.step else (unit if self.stop is not None else 0)
        out = f"{start // unit:0{width}d}" + (f".{start % unit:06d}" if start % unit else "")
        if stop > 0:
            out += f"..{stop // unit:0{width}d}" + (f".{stop % unit:06d}" if stop % unit else "")
        if repeat > 0 and not (stop > 0 and repeat == unit):
            out += f"/{repeat // unit}"
        if repeat % unit:
            out += f".{repeat % unit:06d}"
        return out


@dataclass(frozen=True)
class Component:
    items: tuple[Item, ...] | None  # None: "*"

    def values(self, lo: int, hi: int) -> set[float]:
        if self.items is None:
            return {float(v) for v in range(lo, hi + 1)}
        out: set[float] = set()
        for item in self.items:
            out |= item.values(lo, hi)
        return {v for v in out if lo <= v <= hi + 0.999999}

    def text(self, width: int, unit: int = 1) -> str:
        if self.items is None:
            return "*"
        return ",".join(i.text(width, unit) for i in self.items)  # (sorted when read)


@dataclass(frozen=True)
class CalendarSpec:
    text: str
    weekdays: frozenset[int] | None
    years: Component
    months: Component
    days: Component
    from_end: bool  # days counted from the end of the month ("~")
    hours: Component
    minutes: Component
    seconds: Component
    timezone: str | None

    def normalized(self) -> str:
        parts = []
        if self.weekdays is not None:
            parts.append(_weekday_text(self.weekdays))
        sep = "~" if self.from_end else "-"
        parts.append(f"{self.years.text(4)}-{self.months.text(2)}{sep}{self.days.text(2)}")
        parts.append(f"{self.hours.text(2)}:{self.minutes.text(2)}:"
                     f"{self.seconds.text(2, _USEC)}")
        if self.timezone:
            parts.append(self.timezone)
        return " ".join(parts)

    def matches_day(self, day: dt.date) -> bool:
        if self.weekdays is not None and day.weekday() not in self.weekdays:
            return False
        if day.year not in self._years or day.month not in self._months:
            return False
        if self.from_end:
            last = (dt.date(day.year + (day.month == 12), day.month % 12 + 1, 1)
                    - dt.timedelta(days=1)).day
            return (last - day.day + 1) in self._days
        return day.day in self._days

    @cached_property  # matches_day runs for every day of four years
    def _years(self) -> set[int]:
        return {int(v) for v in self.years.values(1970, 2199)}

    @cached_property  # matches_day runs for every day of four years
    def _months(self) -> set[int]:
        return {int(v) for v in self.months.values(1, 12)}

    @cached_property  # matches_day runs for every day of four years
    def _days(self) -> set[int]:
        if self.from_end and self.days.items is not None:
            # counted from the end, a repetition steps toward the month's last day:
            # ~07/1 is the last seven days, ~03/2 the third-last and the last
            out: set[int] = set()
            for item in self.days.items:
                if item.step and item.stop is None:
                    out |= {int(item.start - k * item.step)
                            for k in range(int((item.start - 1) // item.step) + 1)}
                else:
                    out |= {int(v) for v in item.values(1, 31)}
            return out
        return {int(v) for v in self.days.values(1, 31)}

    def day_seconds(self) -> tuple[int, ...]:
        hours = sorted(int(v) for v in self.hours.values(0, 23))
        minutes = sorted(int(v) for v in self.minutes.values(0, 59))
        seconds = sorted({int(v) for v in self.seconds.values(0, 59)})
        return tuple(h * 3600 + m * 60 + s for h in hours for m in minutes for s in seconds)


def _weekday_text(days: frozenset[int]) -> str:
    ordered = sorted(days)
    runs: list[tuple[int, int]] = []
    start = ordered[0]
    for prev, cur in zip(ordered, ordered[1:] + [-1]):
        if cur != prev + 1:  # -1 closes the last run
            runs.append((start, prev))
            start = cur
    return ",".join(_DISPLAY_DAYS[a] if a == b else
                    (f"{_DISPLAY_DAYS[a]},{_DISPLAY_DAYS[b]}" if b == a + 1 else
                     f"{_DISPLAY_DAYS[a]}..{_DISPLAY_DAYS[b]}") for a, b in runs)


_USEC = 1_000_000  # the seconds are read in microseconds
_INT_MAX = 2**31 - 1
_ULONG_MAX = 2**64 - 1
#: the most items one component may list (systemd's CALENDARSPEC_COMPONENTS_MAX, plus one)
_MAX_ITEMS = 241
#: the names systemd tries, each long one before its abbreviation
_DAY_NAMES = tuple((name, number) for number, day in enumerate(WEEKDAYS) for name in
                   (next(n for n in _WEEKDAY_NAMES if n.startswith(day) and n != day), day))
_DIGITS = re.compile(r"[0-9]+")
_WHITESPACE = " \t\n\v\f\r"
#: an item as systemd keeps it: start, stop (-1: none), repeat (0: none), in whole units
_Raw = tuple[int, int, int]
_ZERO: list[_Raw] = [(0, -1, 0)]


class _Text:
    """The expression being read and the position reached (calendarspec.c's ``const char
    **p``)."""

    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def peek(self, ahead: int = 0) -> str:
        """The character ``ahead`` of the position, "" past the end."""
        return self.text[self.pos + ahead: self.pos + ahead + 1]

    def skip_spaces(self) -> None:
        while self.peek() == " ":  # (only spaces: a tab separates nothing)
            self.pos += 1


def _invalid(text: str, why: str = "") -> ScheduleError:
    return ScheduleError(f"invalid calendar expression {text!r}" + (f": {why}" if why else ""))


def parse_calendar(expression: str) -> CalendarSpec:
    """Parse one ``OnCalendar=`` value; raise ScheduleError when systemd would reject it."""
    text, utc, timezone = expression, False, None
    if text[-4:].lower() == " utc":
        utc, text = True, text[:-4]
    elif " " in text and _zone_file(text[text.rfind(" ") + 1:]):
        timezone, text = text[text.rfind(" ") + 1:], text[:text.rfind(" ")]
    if not text:
        raise _invalid(expression, "empty")
    shorthand = SHORTHANDS.get(text.lower()) if text.isascii() else None
    reading = _Text(shorthand or text)
    bits = _weekdays(reading, expression)
    years, months, days, from_end, moment = _date(reading, expression)
    if moment is not None:  # @SECONDS: one moment, in UTC (whatever zone follows)
        years, months, days = [(moment.year, -1, 0)], [(moment.month, -1, 0)], \
            [(moment.day, -1, 0)]
        hours: list[_Raw] | None = [(moment.hour, -1, 0)]
        minutes: list[_Raw] | None = [(moment.minute, -1, 0)]
        seconds: list[_Raw] | None = [(moment.second * _USEC, -1, 0)]
        utc = True
    else:
        hours, minutes, seconds = _time(reading, expression)
    if reading.pos != len(reading.text):
        raise _invalid(expression, f"cannot read {reading.text[reading.pos:]!r}")
    if years is not None:
        years = [(_full_year(a), _full_year(b), r) for a, b, r in years]
    chains = [_normal(c) for c in (years, months, days, hours, minutes, seconds)]
    from_end = from_end and chains[2] is not None  # "~*" is every day: "-*"
    for chain, lo, hi, what in zip(chains, (1970, 1, 1, 0, 0, 0), (2199, 12, 31, 23, 59,
                                                                   60 * _USEC - 1),
                                   ("year", "month", "day", "hour", "minute", "second")):
        if not _valid(chain, lo, hi, from_end and what == "day"):
            raise _invalid(expression, f"{what} out of range")
    years, months, days, hours, minutes, seconds = chains
    if seconds is not None and (0, -1, _USEC) in seconds:
        seconds = None  # every second, whatever else is listed: systemd 252 writes "*"
    return CalendarSpec(expression, frozenset(d for d in range(7) if bits & 1 << d)
                        if 0 < bits < 127 else None,
                        _component(years), _component(months), _component(days), from_end,
                        _component(hours), _component(minutes), _component(seconds, _USEC),
                        "UTC" if utc or timezone == "UTC" else timezone)


def _full_year(year: int) -> int:
    """A two-digit year as systemd reads it (fix_year): 12 is 2012, 89 is 1989."""
    return year + 2000 if 0 <= year < 70 else year + 1900 if 70 <= year < 100 else year


def _zone_file(name: str) -> bool:
    """Does ``name`` name a time zone as systemd checks it (its characters, then the zone
    file)? A last word that does not is read as part of the expression."""
    if name == "UTC":
        return True
    if not re.fullmatch(r"[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*", name):
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return False
    return True


def _weekdays(reading: _Text, expression: str) -> int:
    """Weekday names, lists and ranges (``Mon..Fri``, ``Mon-Fri``), as bits from Monday; 0
    when the expression does not begin with one."""
    bits, opened, first = 0, -1, True
    while True:
        for name, number in _DAY_NAMES:
            word = reading.text[reading.pos:reading.pos + len(name)]
            if word.isascii() and word.lower() == name:
                break
        else:
            if first:
                return 0
            raise _invalid(expression, "a weekday expected")
        if reading.peek(len(name)) not in ("", "-", ".", ",", " "):
            raise _invalid(expression, f"invalid weekday at {reading.text[reading.pos:]!r}")
        bits |= 1 << number
        if opened >= 0:  # the end of a range
            if opened > number:
                raise _invalid(expression, "a weekday range runs backwards")
            bits |= sum(1 << d for d in range(opened + 1, number))
        reading.pos += len(name)
        if reading.peek() in ("", " "):
            reading.skip_spaces()
            return bits
        if reading.peek() == ".":
            if opened >= 0 or reading.peek(1) != ".":
                raise _invalid(expression, "invalid weekday range")
            opened, reading.pos = number, reading.pos + 2
        elif reading.peek() == "-":  # (the old spelling of a range)
            if opened >= 0:
                raise _invalid(expression, "invalid weekday range")
            opened, reading.pos = number, reading.pos + 1
        elif reading.peek() == ",":
            opened, reading.pos = -1, reading.pos + 1
        if reading.peek() in ("", " "):  # a trailing comma is allowed, an open range not
            reading.skip_spaces()
            if opened >= 0:
                raise _invalid(expression, "an open weekday range")
            return bits
        first = False


def _date(reading: _Text, expression: str) -> tuple[
        list[_Raw] | None, list[_Raw] | None, list[_Raw] | None, bool, dt.datetime | None]:
    """Years, months, days (None: ``*``), whether the days count from the month's end, and
    the moment of ``@SECONDS``. What follows the first component decides whether it is a
    date: a ``:`` or the end, and it was a time (read again by _time)."""
    every: tuple[list[_Raw] | None, list[_Raw] | None, list[_Raw] | None, bool, None] = \
        (None, None, None, False, None)
    if reading.peek() == "":
        return every
    if reading.peek() == "@":  # seconds since the epoch, as strtoul reads them
        m = re.compile(rf"[{_WHITESPACE}]*([+-]?)([0-9]+)").match(reading.text, reading.pos + 1)
        if m is None or int(m.group(2)) > _ULONG_MAX:
            raise _invalid(expression, "invalid @SECONDS")
        value = int(m.group(2)) if m.group(1) != "-" else -int(m.group(2)) % 2**64
        try:
            moment = dt.datetime.fromtimestamp(value - 2**64 if value >= 2**63 else value,
                                               dt.timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise _invalid(expression, "@SECONDS out of range") from None
        reading.pos = m.end()
        return None, None, None, False, moment
    start = reading.pos
    first = _chain(reading, False, expression)
    if reading.peek() in ("", ":"):
        reading.pos = start
        return every
    from_end = reading.peek() == "~"
    if reading.peek() not in ("-", "~"):
        raise _invalid(expression, f"invalid date at {reading.text[reading.pos:]!r}")
    reading.pos += 1
    second = _chain(reading, False, expression)
    if reading.peek() in ("", " "):  # two parts: month and day
        reading.skip_spaces()
        return None, first, second, from_end, None
    if from_end or reading.peek() not in ("-", "~"):
        raise _invalid(expression, f"invalid date at {reading.text[reading.pos:]!r}")
    from_end = reading.peek() == "~"
    reading.pos += 1
    third = _chain(reading, False, expression)
    if reading.peek() not in ("", " "):
        raise _invalid(expression, f"invalid date at {reading.text[reading.pos:]!r}")
    reading.skip_spaces()
    return first, second, third, from_end, None


def _time(reading: _Text, expression: str) -> tuple[
        list[_Raw] | None, list[_Raw] | None, list[_Raw] | None]:
    """Hours, minutes and seconds (microseconds); no time at all is 00:00:00."""
    if reading.peek() == "":
        return _ZERO, _ZERO, _ZERO
    hours = _chain(reading, False, expression)
    if reading.peek() != ":":
        raise _invalid(expression, f"invalid time at {reading.text[reading.pos:]!r}")
    reading.pos += 1
    minutes = _chain(reading, False, expression)
    if reading.peek() == "":
        return hours, minutes, _ZERO
    if reading.peek() != ":":
        raise _invalid(expression, f"invalid time at {reading.text[reading.pos:]!r}")
    reading.pos += 1
    return hours, minutes, _chain(reading, True, expression)


def _chain(reading: _Text, usec: bool, expression: str) -> list[_Raw] | None:
    """A component: ``*`` (None; the seconds: every second from 0), or items separated by
    commas. What may follow an item: the end, a space or a separator of the parts."""
    if reading.peek() == "*":
        reading.pos += 1
        return [(0, -1, _USEC)] if usec else None
    items: list[_Raw] = []
    while True:
        if len(items) >= _MAX_ITEMS:
            raise _invalid(expression, "too many items")
        start, stop, repeat = _decimal(reading, usec, expression), -1, 0
        if reading.peek() == "." and reading.peek(1) == ".":
            reading.pos += 2
            stop, repeat = _decimal(reading, usec, expression), _USEC if usec else 1
        if reading.peek() == "/":
            reading.pos += 1
            repeat = _decimal(reading, usec, expression)
            if repeat == 0:
                raise _invalid(expression, "a repetition of 0")
        elif start > _INT_MAX - repeat or (usec and stop >= 0 and start + repeat > stop):
            # (a range of seconds shorter than its implied step of one second)
            raise _invalid(expression, "a range shorter than one second")
        if reading.peek() not in ("", " ", ",", "-", "~", ":"):
            raise _invalid(expression, f"cannot read {reading.text[reading.pos:]!r}")
        items.append((start, stop, repeat))
        if reading.peek() != ",":
            return items
        reading.pos += 1


def _decimal(reading: _Text, usec: bool, expression: str) -> int:
    """A number (strtoul's digits); for the seconds, in microseconds with up to six decimals,
    a seventh one rounding half up ("00.4200005" is 0.420001)."""
    m = _DIGITS.match(reading.text, reading.pos)
    if m is None or int(m.group()) > _ULONG_MAX:
        raise _invalid(expression, f"a number expected at {reading.text[reading.pos:]!r}")
    value, reading.pos = int(m.group()), m.end()
    if usec:
        if value * _USEC > _ULONG_MAX:
            raise _invalid(expression, "a number out of range")
        value *= _USEC
        if reading.peek() == "." and reading.peek(1) != ".":  # ".." is a range
            digits = re.compile("[0-9]*").match(reading.text, reading.pos + 1)
            assert digits is not None
            if not digits.group():
                raise _invalid(expression, "a decimal point without digits")
            fraction = digits.group()
            value += int(fraction[:6].ljust(6, "0")) + (len(fraction) > 6 and fraction[6] >= "5")
            reading.pos = digits.end()
    if value > _INT_MAX:
        raise _invalid(expression, "a number out of range")
    return value


def _normal(chain: list[_Raw] | None) -> list[_Raw] | None:
    """systemd's normal form of a component (normalize_chain): a range cut to its last step,
    one that cannot repeat (or of one value) a single value, sorted, each written once."""
    if chain is None:
        return None
    out = set()
    for start, stop, repeat in chain:
        if stop > start and repeat > 0:
            stop -= (stop - start) % repeat
        if (stop > start and repeat > 0 and start + repeat > stop) or start == stop:
            stop, repeat = -1, 0
        out.add((start, stop, repeat))
    return sorted(out)


def _valid(chain: list[_Raw] | None, lo: int, hi: int, from_end: bool) -> bool:
    """Does every item of a normal component lie within ``lo``..``hi`` and repeat at least
    once (chain_valid)? Counted from the month's end, a day must exist in every month."""
    if from_end:
        hi -= 3
    for start, stop, repeat in chain or ():
        if not lo <= start <= hi or repeat > hi - lo:
            return False
        if stop >= 0 and (not lo <= stop <= hi or start + repeat > stop):
            return False
        if stop < 0 and (start - repeat < lo if from_end else start + repeat > hi):
            return False
    return True


def _component(chain: list[_Raw] | None, unit: int = 1) -> Component:
    if chain is None:
        return Component(None)
    return Component(tuple(
        Item(start / unit, stop / unit if stop >= 0 else None,
             None if repeat == 0 or (stop > 0 and repeat == unit) else repeat / unit)
        for start, stop, repeat in chain))


# --------------------------------------------------------------------------- arithmetic


def next_elapses(spec: CalendarSpec, after: dt.datetime, count: int) -> list[dt.datetime]:
    """The next ``count`` firings strictly after ``after`` (an aware datetime)."""
    tz = ZoneInfo(spec.timezone) if spec.timezone else after.tzinfo
    local = after.astimezone(tz)
    seconds = spec.day_seconds()
    out: list[dt.datetime] = []
    day = local.date()
    for _ in range(366 * 240):
        if spec.matches_day(day):
            for s in seconds:
                when = dt.datetime.combine(day, dt.time(s // 3600, s // 60 % 60, s % 60), tz)
                if when > local and _exists(when):
                    out.append(when)
                    if len(out) == count:
                        return out
        day += dt.timedelta(days=1)
        if day.year > 2199:
            break
    return out


def _exists(when: dt.datetime) -> bool:
    """Is this local time on the clock (not skipped when the clocks went forward)? systemd
    skips one that is not; a repeated one elapses once, the first (fold 0)."""
    tz = when.tzinfo
    return when.astimezone(dt.timezone.utc).astimezone(tz).replace(tzinfo=None) == \
        when.replace(tzinfo=None)
