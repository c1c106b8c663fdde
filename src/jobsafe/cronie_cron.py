"""Cron expressions as cronie reads them: the cron of Fedora, RHEL and its rebuilds (CentOS,
Rocky, AlmaLinux), Amazon Linux, openSUSE, and Alpine's ``cronie`` package.

cronie's field parser (entry.c: get_list, get_range, get_number) is a state machine of its
own, not Vixie's that Debian keeps. Each item must end at a ``,`` or a blank, so what Debian
silently drops is refused here (``1#2``, ``*/1.5``, ``**``); ``5/15`` is refused too; a step
of 0 is refused; names are read in any case; a range may end in Sunday written as ``0``
(``Fri-Sun`` runs Friday to Sunday, in every field: ``5-0`` in the minutes is 5-7); any other
descending range is empty; ``a~b`` is one value picked at random in ``a-b`` when cronie
loads the file (``~`` alone: in the whole field). Checked against cronie's own parser,
compiled from its source (``tests/oracles/cronie``, answers in ``tests/golden``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .cron_names import FIELDS

__all__ = ["FIELDS", "CronieReading", "FieldReading", "read_field", "read_fields"]

_WORD = re.compile(r"[A-Za-z0-9]*")  # what get_number collects (isalnum, C locale)
_SEPARATORS = ",\t\n "


@dataclass(frozen=True)
class FieldReading:
    """One field as cronie's get_list reads it."""

    #: the values it sets (an item with ``~``: the lowest it may pick)
    values: frozenset[int] = frozenset()
    #: the values it may set (an item with ``~``: every value it may pick)
    possible: frozenset[int] = frozenset()
    random: bool = False
    #: a ``~`` range reaching past the field's bounds: refused when the pick lands there
    may_refuse: bool = False
    error: str | None = None


@dataclass(frozen=True)
class CronieReading:
    """How cronie reads five time fields: refused (why), or the expression it runs on (an
    equivalent five-field expression), or never (why)."""

    refused: str | None = None
    #: the expression to compute with (a ``~`` item: the lowest value it may pick)
    expression: str | None = None
    never: str | None = None


def read_fields(fields: list[str]) -> CronieReading:
    """cronie's reading of five time fields."""
    readings = []
    for text, (name, lo, hi, names) in zip(fields, FIELDS):
        reading = read_field(text, lo, hi, names)
        if reading.error is not None:
            return CronieReading(refused=f"bad {name} (`{text}`: {reading.error})")
        readings.append(reading)
    dow = set(readings[4].values)
    if dow & {0, 7}:  # "make sundays equivalent"
        dow |= {0, 7}
    values = [set(r.values) for r in readings[:4]] + [dow]
    field_names = [name for name, *_ in FIELDS]
    for index in (0, 1, 3):
        if not values[index]:
            return CronieReading(never=f"its {field_names[index]} field `{fields[index]}` matches "
                                       f"nothing (a descending range is empty)")
    # a day field written from "*" makes the days match when both fields do (cron.c)
    both = fields[2].startswith("*") or fields[4].startswith("*")
    if (both and not (values[2] and values[4])) or not (values[2] or values[4]):
        which = "day-of-month" if not values[2] else "day-of-week"
        return CronieReading(never=f"its {which} field matches nothing (a descending range "
                                   f"is empty)")
    written = [_written(text, lo, hi, got)
               for text, (_, lo, hi, _names), got in zip(fields, FIELDS, values)]
    if not both:  # either day field is enough: an empty one never fires, the other decides
        for index in (2, 4):
            if not values[index]:
                written[index] = "*"
    return CronieReading(expression=" ".join(written))


def _written(text: str, lo: int, hi: int, values: set[int]) -> str:
    """A field spelled so that the cron arithmetic reads cronie's values: a leading ``*`` or
    ``*/N`` kept as written (its star decides the day rule), the other values listed."""
    if lo == 0 and hi == 7:
        values = {0 if v == 7 else v for v in values}
    first = text.split(",", 1)[0]
    star = re.fullmatch(r"\*(?:/([0-9]+))?", first)
    if star is None:
        return ",".join(str(v) for v in sorted(values))
    covered = set(range(lo, hi + 1, int(star.group(1) or 1)))
    if lo == 0 and hi == 7:
        covered = {0 if v == 7 else v for v in covered}
    extra = sorted(values - covered)
    return ",".join([first, *map(str, extra)])


def read_field(text: str, lo: int, hi: int, names: tuple[str, ...]) -> FieldReading:
    """One field, read as get_list reads it up to the blank after it."""
    line = text + " "
    pos = 0
    values: set[int] = set()
    possible: set[int] = set()
    random = may_refuse = False
    while True:
        item = _range(line, pos, lo, hi, names)
        if isinstance(item, str):
            return FieldReading(error=item)
        pos, separator, got, could, picked, beyond = item
        values |= got
        possible |= could
        random |= picked
        may_refuse |= beyond
        if separator != ",":
            return FieldReading(frozenset(values), frozenset(possible), random, may_refuse)


def _range(line: str, pos: int, lo: int, hi: int, names: tuple[str, ...]):
    """get_range: (position after the separator, the separator, values set, values it may
    set, whether picked at random, whether the pick may fall out of bounds), or why cronie
    refuses the item."""
    state, step, low, high = "start", 1, lo, hi
    random = False
    while state != "finish":
        if pos >= len(line):
            return "the field ends too soon"
        ch = line[pos]
        pos += 1
        if state == "start":
            if ch == "*":
                low, high, state = lo, hi, "star"
            elif ch == "~":
                low, state = lo, "random"
            else:
                got = _number(line, pos - 1, lo, names)
                if got is None:
                    return f"`{ch}` starts no number"
                low, pos, state = got[0], got[1], "number"
        elif state == "star":
            if ch == "/":
                state = "step"
            elif ch in _SEPARATORS:
                state = "finish"
            else:
                return f"`{ch}` after `*`"
        elif state == "step":
            got = _number(line, pos - 1, 0, ())
            if got is None or got[0] == 0:
                return "a step must be a number other than 0"
            step, pos, state = got[0], got[1], "terms"
        elif state == "terms":
            if ch not in _SEPARATORS:
                return f"`{ch}` where the item should end"
            state = "finish"
        elif state == "number":
            if ch == "-":
                state = "range"
            elif ch == "~":
                state = "random"
            elif ch in _SEPARATORS:
                high, state = low, "finish"
            else:
                return f"`{ch}` after a number (a step needs a range or `*` before it)" \
                    if ch == "/" else f"`{ch}` after a number"
        elif state == "range":
            got = _number(line, pos - 1, lo, names)
            if got is None:
                return "a range needs an end"
            high, pos, state = got[0], got[1], "range end"
        elif state == "range end":
            if ch == "/":
                state = "step"
                continue
            if low > high and high == 0:
                high = 7  # (Sunday written as 0 at a range's end: in every field)
            if ch not in _SEPARATORS:
                return f"`{ch}` after a range"
            state = "finish"
        elif state == "random":
            if ch in _SEPARATORS:
                high, state = hi, "finish"
            else:
                got = _number(line, pos - 1, lo, names)
                if got is None:
                    return "`~` needs a number or nothing after it"
                high, pos, state = got[0], got[1], "terms"
            if low > high:
                return "an empty `~` range"
            random = True
    separator = line[pos - 1]
    if random:  # one value, picked when the file is loaded (refused if it is out of range)
        could = set(range(max(low, lo), min(high, hi) + 1))
        if not could:
            return "a `~` range out of the field's bounds"
        return pos, separator, {min(could)}, could, True, low < lo or high > hi
    values = set()
    i = low
    while i <= high:
        if not lo <= i <= hi:
            return f"{i} is out of range"
        values.add(i)
        i = _int32(i + step)
    return pos, separator, values, values, False, False


def _number(line: str, pos: int, lo: int, names: tuple[str, ...]) -> tuple[int, int] | None:
    """get_number: (value, position after the word), or None. A word of digits is a number
    (strtol, then cut to an int), a name is one of ``names`` in any case."""
    word = _WORD.match(line, pos).group()  # type: ignore[union-attr]
    if not word:
        return None
    if word.isdigit():
        return _int32(min(int(word), 2**63 - 1)), pos + len(word)
    if word.lower() in names:
        return names.index(word.lower()) + lo, pos + len(word)
    return None


def _int32(value: int) -> int:
    """A C int's value after an assignment from a wider one (two's complement)."""
    return (value + 2**31) % 2**32 - 2**31
