"""Crontab lines as busybox's crond reads them: the cron of Alpine images (``crond -f``
reading ``/etc/crontabs/USER``).

Its parser (miscutils/crond.c, ``ParseField``) never refuses a line. A field it cannot read
to the end is logged ("parse error at …") and the line runs with the values read before the
error: ``0 0 * * 7`` runs every day (its fill loop never reaches 7 and sets every day
before giving up), ``60 * * * *`` every minute, ``5/15`` only at minute 5 (a step after
one value steps over that value alone), ``Monday`` as Monday (three letters are read,
then the rest is an error). A ``#`` anywhere starts a comment, so ``1#2`` leaves the line
too short, and a line of fewer than six words is skipped. Day of month and day of week:
a field with every value set is dropped when the other is not, else either matching is
enough. Checked against Debian's busybox-static crond (tests/test_busybox_cron.py), which
prints what it read.
"""
from __future__ import annotations

from dataclasses import dataclass

from .cron_names import MONTH_NAMES, WEEKDAY_NAMES

#: field name, array size (``modvalue``), offset added to numbers, names
FIELDS: tuple[tuple[str, int, int, tuple[str, ...]], ...] = (
    ("minute", 60, 0, ()), ("hour", 24, 0, ()), ("day-of-month", 32, 0, ()),
    ("month", 12, -1, MONTH_NAMES), ("day-of-week", 7, 0, WEEKDAY_NAMES))
_LONG = 2**63 - 1


@dataclass(frozen=True)
class FieldReading:
    """The values crond sets for one field (array indexes), and whether it logged a parse
    error (the values are then those set before it); ``spilled``: the negative indexes it
    wrote (month 0 is index -1), which land in the array before it in crond's struct."""

    values: frozenset[int]
    error: bool
    spilled: frozenset[int] = frozenset()


@dataclass(frozen=True)
class BusyboxReading:
    """A line's five fields as crond reads them: an expression with the same firings in
    cron's day rule, or why it never fires; and the fields it could not read to the end."""

    expression: str | None
    never: str | None
    errors: tuple[str, ...]


def _int(value: int) -> int:
    """A C ``long`` stored in an ``int`` (two's complement, 32 bits)."""
    return (value + 2**31) % 2**32 - 2**31


def _strtol(text: str, at: int) -> tuple[int, int]:
    """C's ``strtol(text + at, &end, 10)`` for text starting with digits: (value, end)."""
    end = at
    while end < len(text) and text[end].isascii() and text[end].isdigit():
        end += 1
    if end == at:
        return 0, at
    return min(int(text[at:end]), _LONG), end


def read_field(text: str, size: int, offset: int, names: tuple[str, ...]) -> FieldReading:
    """``ParseField``: the array indexes set, as crond's loop sets them."""
    values: set[int] = set()
    spilled: set[int] = set()
    at, first, last = 0, -1, -1

    def char(i: int) -> str:
        return text[i] if i < len(text) else ""

    while True:
        read = False
        if char(at) == "*":
            first, last, read, at = 0, size - 1, True, at + 1
        elif char(at).isascii() and char(at).isdigit():
            number, at = _strtol(text, at)
            if first < 0:
                first = _int(_int(number) + offset)
            else:
                last = _int(_int(number) + offset)
            read = True
        elif names:
            for index, name in enumerate(names):
                if text[at:at + 3].lower() == name:
                    at += 3
                    if first < 0:
                        first = index
                    else:
                        last = index
                    read = True
                    break
        if not read:
            return FieldReading(frozenset(values), True, frozenset(spilled))
        if char(at) == "-" and last < 0:
            at += 1
            continue
        if last < 0:
            last = first
        step = 1
        if char(at) == "/":
            if char(at + 1).isascii() and char(at + 1).isdigit():
                step, at = _strtol(text, at + 1)
                step = _int(step)
            else:
                step, at = 0, at + 1
        countdown, failsafe, current = 1, 1024, first - 1
        while True:  # (C's % keeps the dividend's sign)
            current = _c_mod(current + 1, size)
            countdown -= 1
            if countdown == 0:
                index = _c_mod(current, size)
                (values if index >= 0 else spilled).add(index)
                countdown = step
            failsafe -= 1
            if failsafe == 0:
                return FieldReading(frozenset(values), True, frozenset(spilled))
            if current == last:
                break
        if char(at) != ",":
            break
        at, first, last = at + 1, -1, -1
    return FieldReading(frozenset(values), at < len(text), frozenset(spilled))


def _c_mod(a: int, b: int) -> int:
    return a - b * int(a / b) if a >= 0 else -((-a) % b)


#: crond's ``CronLine`` keeps its arrays in this order (by size), one after another: a
#: negative index of one lands in the one before it
_STRUCT_ORDER = (4, 3, 1, 2, 0)  # day-of-week, month, hour, day-of-month, minute


def _with_spills(readings: list[FieldReading]) -> list[frozenset[int]]:
    """Each field's values with the writes the next array in the struct spilled into it."""
    values = [set(r.values) for r in readings]
    for before, after in zip(_STRUCT_ORDER, _STRUCT_ORDER[1:]):
        size = FIELDS[before][1]
        values[before] |= {size + i for i in readings[after].spilled if size + i >= 0}
    return [frozenset(v) for v in values]


def read_fields(fields: list[str]) -> BusyboxReading:
    """The five time fields of a line as crond reads them."""
    readings = [read_field(text, size, offset, names)
                for text, (_, size, offset, names) in zip(fields, FIELDS)]
    errors = tuple(f"`{text}` ({name})" for text, (name, *_), r in zip(fields, FIELDS, readings)
                   if r.error)
    minutes, hours, days, months, weekdays = _with_spills(readings)
    # FixDayDow: a field with every index set (``*``; ``1-31`` leaves index 0 out) is
    # dropped when the other is not; then a day matches when either field does
    days_full, weekdays_full = days >= set(range(32)), weekdays >= set(range(7))
    if days_full != weekdays_full:
        days, weekdays = (frozenset(), weekdays) if days_full else (days, frozenset())
    days = days - {0}  # (index 0 is no day of a month)
    for name, got in (("minute", minutes), ("hour", hours), ("month", months)):
        if not got:
            return BusyboxReading(None, f"busybox's crond reads no {name} in it", errors)
    if not days and not weekdays:
        return BusyboxReading(None, "busybox's crond reads no day in it", errors)

    def listed(values: frozenset[int], every: int, shift: int = 0) -> str:
        return "*" if len(values) == every else \
            ",".join(str(v + shift) for v in sorted(values))

    # cron's day rule with the same meaning: a field written `*` leaves the other to decide
    day_field = ",".join(map(str, sorted(days))) if days else "*"
    weekday_field = ",".join(map(str, sorted(weekdays))) if weekdays else "*"
    if days_full and weekdays_full:
        day_field = weekday_field = "*"
    return BusyboxReading(" ".join((listed(minutes, 60), listed(hours, 24), day_field,
                                    listed(months, 12, 1), weekday_field)), None, errors)
