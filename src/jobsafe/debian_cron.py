"""Cron expressions as Debian's (Vixie) cron reads them, the dialect of crontab files on
Debian and Ubuntu hosts and images.

Debian's parser (entry.c: get_list, get_range, get_number) differs from the cron libraries
jobsafe computes with. It reads a field item by item and stops at the first character that
cannot continue an item or a list, ignoring the rest of the field up to the next space or tab:
``1#2`` is ``1``, ``*/1.5`` is ``*/1``, ``1-24-24`` is ``1-24``, ``**`` is ``*``. A step needs
a range or ``*`` before it (``5/15`` is refused), a range's ends must lie in the field's
bounds, Quartz's ``L``, ``W`` and ``?`` are refused, macros are lower case only (``@Daily`` is
refused), fields are separated by spaces and tabs only; a descending range (``Mon-Sun``,
``Nov-Mar``) is an empty set. Checked against Debian's own ``crontab -n``
(tests/test_debian_cron.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .cron_names import FIELDS

#: the macros Debian's cron knows, exactly as it spells them
MACROS = ("@reboot", "@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight",
          "@hourly")


@dataclass(frozen=True)
class DebianReading:
    """How Debian's cron reads five time fields: refused (why), or the expression it
    runs on (an equivalent five-field expression), or never (why)."""

    refused: str | None = None
    #: the expression to compute with: the fields as written, unless Debian reads them
    #: otherwise (a '#' dropped, an empty descending range) — then the values it reads
    expression: str | None = None
    never: str | None = None


def read_fields(fields: list[str]) -> DebianReading:
    """Debian's reading of five time fields."""
    values: list[set[int] | None] = []  # None: "*"
    written: list[str] = []
    for text, (name, lo, hi, names) in zip(fields, FIELDS):
        parsed = _field(text, lo, hi, names)
        if isinstance(parsed, str):
            return DebianReading(refused=f"bad {name} ({parsed})")
        values.append(parsed[0])
        written.append(parsed[1])
    minutes, hours, dom, months, dow = values
    for got, (name, *_), text in zip((minutes, hours, months), (FIELDS[0], FIELDS[1],
                                                                FIELDS[3]),
                                     (fields[0], fields[1], fields[3])):
        if got is not None and not got:
            return DebianReading(never=f"its {name} field `{text}` matches nothing "
                                       f"(a descending range is empty)")
    # a day field written from "*" ("*", "*/2") makes the days match when both fields do;
    # otherwise either one is enough (cron's day-of-month / day-of-week rule)
    both = fields[2].startswith("*") or fields[4].startswith("*")
    dom_empty, dow_empty = dom is not None and not dom, dow is not None and not dow
    if (both and (dom_empty or dow_empty)) or (dom_empty and dow_empty):
        which = "day-of-month" if dom_empty else "day-of-week"
        return DebianReading(never=f"its {which} field matches nothing (a descending range "
                                   f"is empty)")
    if dom_empty or dow_empty:  # either one: the empty one never fires, the other decides
        written[2 if dom_empty else 4] = "*"
    return DebianReading(expression=" ".join(written))


_WORD = re.compile(r"[A-Za-z0-9]*")  # what get_number collects (isalnum, C locale)


def _field(text: str, lo: int, hi: int, names: tuple[str, ...]
           ) -> tuple[set[int] | None, str] | str:
    """The values of one field (None for a lone "*") and the field as Debian reads it (the
    items it reads, empty ones left out), or why Debian refuses it."""
    values: set[int] = set()
    items: list[str] = []  # each item that matches something, its numbers as Debian reads them
    pos = 0
    while True:
        if text.startswith("*", pos):
            first, last, pos, item = lo, hi, pos + 1, "*"
        else:
            word = _WORD.match(text, pos).group()  # type: ignore[union-attr]
            first_ = _number(word, lo, names)
            if first_ is None:
                return f"`{text}`"
            first, pos, item = first_, pos + len(word), _spelled(word, first_)
            if not text.startswith("-", pos):  # a single value
                if text.startswith("/", pos):
                    return f"`{text}`: a step needs a range or `*` before it"
                if not lo <= first <= hi:
                    return f"`{text}`: {first} is out of range"
                values.add(first)
                items.append(item)
                if not text.startswith(",", pos):
                    break
                pos += 1
                continue
            word = _WORD.match(text, pos + 1).group()  # type: ignore[union-attr]
            last_ = _number(word, lo, names)
            if last_ is None:
                return f"`{text}`"
            last, pos, item = last_, pos + 1 + len(word), f"{item}-{_spelled(word, last_)}"
            if not (lo <= first <= hi and lo <= last <= hi):
                return f"`{text}`: a range out of bounds"
        step = 1
        if text.startswith("/", pos):
            word = _WORD.match(text, pos + 1).group()  # type: ignore[union-attr]
            if not word.isdigit() or _atoi(word) <= 0:
                return f"`{text}`: a step must be a positive number"
            step, pos = _atoi(word), pos + 1 + len(word)
            item += f"/{step}"
        matched = set(range(first, last + 1, step))  # descending: empty, as Debian reads it
        values |= matched
        if matched:
            items.append(item)
        if not text.startswith(",", pos):
            break
        pos += 1
    # (the rest of the field, up to the next blank, is not read)
    if items and items[0].startswith("*") and not text.startswith("*"):
        items[0] = f"{lo}-{hi}{items[0][1:]}"  # (no star where none was written: cron's day rule)
    read = ",".join(items)
    if read == "*":
        return None, read
    return values, read


def _spelled(word: str, value: int) -> str:
    """A name as written, a number as the value Debian reads (``007`` is 7)."""
    return word if not word.isdigit() else str(value)


def _atoi(digits: str) -> int:
    """C's atoi on a 64-bit host: strtol's value, saturated, cut to an int."""
    value = min(int(digits), 2**63 - 1)
    return (value + 2**31) % 2**32 - 2**31


def _number(text: str, lo: int, names: tuple[str, ...]) -> int | None:
    """A name (any case) or a number (get_number); None when it is neither."""
    if text.lower() in names:
        return names.index(text.lower()) + (1 if lo == 1 else 0)
    return _atoi(text) if text.isdigit() else None
