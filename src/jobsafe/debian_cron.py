"""Cron expressions as Debian's (Vixie) cron reads them, the dialect of crontab files on
Debian and Ubuntu hosts and images.

Debian's parser (entry.c) differs from the cron libraries jobsafe computes with: a step
needs a range or ``*`` before it (``5/15`` is refused), Quartz's ``L``, ``W`` and ``?`` are
refused, macros are lower case only (``@Daily`` is refused), fields are separated by spaces
and tabs only; and it accepts what libraries refuse: a descending range (``Mon-Sun``,
``Nov-Mar``) is an empty set, text after ``#`` in a field is ignored (``1#2`` is ``1``).
Checked against Debian's own ``crontab -n`` (tests/test_debian_cron.py).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

#: field name, lowest and highest value, names
_FIELDS = (
    ("minute", 0, 59, ()),
    ("hour", 0, 23, ()),
    ("day-of-month", 1, 31, ()),
    ("month", 1, 12, ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct",
                      "nov", "dec")),
    ("day-of-week", 0, 7, ("sun", "mon", "tue", "wed", "thu", "fri", "sat")),
)
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
    for text, (name, lo, hi, names) in zip(fields, _FIELDS):
        parsed = _field(text, lo, hi, names)
        if isinstance(parsed, str):
            return DebianReading(refused=f"bad {name} ({parsed})")
        values.append(parsed)
    minutes, hours, dom, months, dow = values
    for got, (name, *_), text in zip((minutes, hours, months), (_FIELDS[0], _FIELDS[1],
                                                                _FIELDS[3]),
                                     (fields[0], fields[1], fields[3])):
        if got is not None and not got:
            return DebianReading(never=f"its {name} field `{text}` matches nothing "
                                       f"(a descending range is empty)")
    written = [f.split("#", 1)[0] for f in fields]  # Debian stops reading a field at '#'
    # a day field written from "*" ("*", "*/2") makes the days match when both fields do;
    # otherwise either one is enough (cron's day-of-month / day-of-week rule)
    both = written[2].startswith("*") or written[4].startswith("*")
    dom_empty, dow_empty = dom is not None and not dom, dow is not None and not dow
    if (both and (dom_empty or dow_empty)) or (dom_empty and dow_empty):
        which = "day-of-month" if dom_empty else "day-of-week"
        return DebianReading(never=f"its {which} field matches nothing (a descending range "
                                   f"is empty)")
    if dom_empty or dow_empty:  # either one: the empty one never fires, the other decides
        written[2 if dom_empty else 4] = "*"
    return DebianReading(expression=" ".join(written))


def _field(text: str, lo: int, hi: int, names: tuple[str, ...]) -> set[int] | None | str:
    """The values of one field (None for "*"), or why Debian refuses it."""
    text = text.split("#", 1)[0]
    if not text:
        return "empty"
    out: set[int] = set()
    star = False
    for item in text.split(","):
        m = re.fullmatch(r"(\*|\w+)(?:-(\w+))?(?:/(\w+))?", item)
        if m is None:
            return f"`{item}`"
        first, last, step = m.groups()
        if step is not None and first != "*" and last is None:
            return f"`{item}`: a step needs a range or `*` before it"
        if first == "*":
            if last is not None:
                return f"`{item}`"
            start, stop = lo, hi
            star = step is None
        else:
            begin = _number(first, lo, hi, names)
            end = _number(last, lo, hi, names) if last is not None else begin
            if begin is None or end is None:
                return f"`{item}`"
            start, stop = begin, end
        every = 1
        if step is not None:
            if not step.isdigit() or int(step) == 0:
                return f"`{item}`"
            every = int(step)
        out |= set(range(start, stop + 1, every))  # descending: empty, as Debian reads it
    if star and len(text.split(",")) == 1:
        return None
    return out


def _number(text: str, lo: int, hi: int, names: tuple[str, ...]) -> int | None:
    if text.isdigit():
        value = int(text)
    elif text.lower() in names:
        value = names.index(text.lower()) + (1 if lo == 1 else 0)
    else:
        return None
    return value if lo <= value <= hi else None
