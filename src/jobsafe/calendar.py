"""systemd calendar events (``OnCalendar=``), as systemd.time(7) defines them.

``[WEEKDAYS] [YEAR-]MONTH-DAY [HOUR:MINUTE[:SECOND]] [TIMEZONE]``, each component a ``*``,
values, ``a..b`` ranges and ``a/step`` repetitions separated by commas, ``~`` counting days
from the end of the month, and the shorthands ``minutely`` … ``annually``. No library
implements systemd's dialect, so it is parsed here; the tests compare it with
``systemd-analyze calendar`` itself.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
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

    def text(self, width: int) -> str:
        def fmt(v: float) -> str:
            if v != int(v):
                whole = int(v)
                return f"{whole:0{width}d}.{round((v - whole) * 1_000_000):06d}"
            return f"{int(v):0{width}d}"
        out = fmt(self.start)
        if self.stop is not None and self.stop != self.start:
            out += f"..{fmt(self.stop)}"
        if self.step:
            out += "/" + re.sub(r"^0+(?=\d)", "", fmt(self.step))
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

    def text(self, width: int) -> str:
        if self.items is None:
            return "*"
        # sorted, each written once ("12,14,13,12" is "12,13,14")
        return ",".join(dict.fromkeys(i.text(width) for i in sorted(
            self.items, key=lambda i: (i.start, i.stop or i.start, i.step or 0))))


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
        parts.append(f"{self.hours.text(2)}:{self.minutes.text(2)}:{self.seconds.text(2)}")
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


_NUMBER = r"\d+(?:\.\d+)?"


def _microseconds(text: str) -> float:
    """A number as systemd reads it: whole microseconds, the seventh digit rounding half up
    ("00.4200005" is 0.420001); floats would round it the other way."""
    return float(Decimal(text).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP))


def _component(text: str, lo: int, hi: int, what: str, fraction: bool = False,
               downward: bool = False) -> Component:
    """A component's items; ``downward``: days counted from the month's end, whose
    repetitions step toward its last day (``~07/2``: the 7th, 5th, 3rd and last day)."""
    if text == "*":
        return Component(None)
    items = []
    for piece in text.split(","):
        m = re.fullmatch(rf"(\*|{_NUMBER})(?:\.\.({_NUMBER}))?(?:/({_NUMBER}))?", piece)
        if not m:
            raise ScheduleError(f"invalid {what} {piece!r}")
        start = float(lo) if m.group(1) == "*" else _microseconds(m.group(1))
        stop = _microseconds(m.group(2)) if m.group(2) else None
        step = _microseconds(m.group(3)) if m.group(3) else None
        if m.group(1) == "*" and step is None:
            return Component(None)
        if m.group(1) == "*":  # systemd reads no repetition from "*" ("*/4:00")
            raise ScheduleError(f"invalid {what} {piece!r}")
        if not fraction and (start != int(start) or (stop is not None and stop != int(stop))):
            raise ScheduleError(f"invalid {what} {piece!r}")
        if stop is not None and 0 < stop - start < 1:
            raise ScheduleError(f"invalid {what} {piece!r}")  # a range of less than one step
        if stop is not None:  # systemd shows the last value reached: 0..23/4 -> 0..20/4
            stop = start + ((stop - start) // (step or 1)) * (step or 1)
        top = hi + 0.999999 if fraction else hi  # a second runs up to its last microsecond
        second = start - step if downward and step else start + step if step else None
        if start < lo or start > hi or (stop is not None and (stop < start or stop > hi)) \
                or (step is not None and (step <= 0 or (stop is None and second is not None
                                                         and not lo <= second <= top))):
            # (a repetition must reach a second value: "20/4:00" is only 20, systemd refuses)
            raise ScheduleError(f"{what} out of range: {piece!r}")
        items.append(Item(start, stop, step))
    return Component(tuple(items))


def parse_calendar(expression: str) -> CalendarSpec:
    """Parse one ``OnCalendar=`` value; raise ScheduleError when systemd would reject it."""
    text = " ".join(expression.split())
    if not text:
        raise ScheduleError("empty calendar expression")
    if re.fullmatch(r"@\d+", text):  # seconds since the epoch: one moment, in UTC
        try:
            moment = dt.datetime.fromtimestamp(int(text[1:]), dt.timezone.utc)
        except (OverflowError, ValueError, OSError):
            raise ScheduleError(f"invalid calendar expression {text!r}") from None
        text = moment.strftime("%Y-%m-%d %H:%M:%S UTC")
    words = text.split(" ")
    timezone = None
    if len(words) > 1 and (words[-1].upper() == "UTC" or "/" in words[-1] and not
                           re.match(r"^[\d*]", words[-1])):
        timezone = words.pop()
        timezone = "UTC" if timezone.upper() == "UTC" else timezone
        try:
            ZoneInfo(timezone)
        except (ZoneInfoNotFoundError, ValueError, OSError):  # (OSError: a folder, `Europe`)
            raise ScheduleError(f"unknown time zone {timezone!r}") from None
    body = " ".join(words)
    if body.lower() in SHORTHANDS:
        body = SHORTHANDS[body.lower()]
        words = body.split(" ")
    weekdays = None
    if words and re.match(r"^[A-Za-z]", words[0]):
        weekdays = _weekdays(words.pop(0))
    date_part = time_part = None
    for word in words:
        if ":" in word and time_part is None:
            time_part = word
        elif ("-" in word or "~" in word) and date_part is None and time_part is None:
            date_part = word
        else:
            raise ScheduleError(f"cannot read {word!r} in calendar expression")
    years, months, days, from_end = _date(date_part or "*-*-*")
    if time_part is None:
        hours = minutes = Component((Item(0.0),))
        seconds = Component((Item(0.0),))
    else:
        fields = time_part.split(":")
        if len(fields) == 2:
            fields.append("00")
        if len(fields) != 3:
            raise ScheduleError(f"invalid time {time_part!r}")
        hours = _component(fields[0], 0, 23, "hour")
        minutes = _component(fields[1], 0, 59, "minute")
        seconds = _component(fields[2], 0, 59, "second", fraction=True)
    spec = CalendarSpec(expression, weekdays, years, months, days, from_end, hours, minutes,
                        seconds, timezone)
    return spec


def _weekdays(text: str) -> frozenset[int] | None:
    """Weekday names, lists and ranges (``Mon..Fri``); None when all seven match."""
    days: set[int] = set()
    pieces = text.split(",")
    if len(pieces) > 1 and pieces[-1] == "":
        pieces.pop()  # "Wed," (systemd allows the trailing comma)
    for piece in pieces:
        bounds = re.split(r"\.\.|-", piece)
        try:
            idx = [_WEEKDAY_NAMES[b.lower()] for b in bounds]
        except KeyError:
            raise ScheduleError(f"invalid weekday {piece!r}") from None
        if len(idx) == 1:
            days.add(idx[0])
        elif len(idx) == 2 and idx[0] <= idx[1]:
            days |= set(range(idx[0], idx[1] + 1))
        else:
            raise ScheduleError(f"invalid weekday {piece!r}")
    return frozenset(days) if len(days) < 7 else None


def _date(text: str):
    from_end = "~" in text
    parts = re.split(r"[-~]", text)
    if len(parts) == 2:
        parts = ["*", *parts]
    if len(parts) != 3 or (from_end and text.count("~") != 1):
        raise ScheduleError(f"invalid date {text!r}")
    if from_end and not re.search(r"~[^-~]*$", text):
        raise ScheduleError(f"invalid date {text!r}")
    if re.fullmatch(r"\d{1,2}", parts[0]):  # two-digit years, as systemd reads them
        parts[0] = str(int(parts[0]) + (2000 if int(parts[0]) < 70 else 1900))
    years = _component(parts[0], 1970, 2199, "year")
    months = _component(parts[1], 1, 12, "month")
    days = _component(parts[2], 1, 31, "day", downward=from_end)
    if days.items is None:
        from_end = False  # "~*" is every day: "-*"
    if from_end and days.items is not None and any(
            item.start > 28 or (item.stop or 0) > 28 for item in days.items):
        # counted from the end, a day must exist in every month (systemd refuses ~29)
        raise ScheduleError(f"invalid date {text!r}")
    return years, months, days, from_end


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
                if when > local:
                    out.append(when)
                    if len(out) == count:
                        return out
        day += dt.timedelta(days=1)
        if day.year > 2199:
            break
    return out
