"""CronJob schedules as Kubernetes reads them: robfig/cron v3's ``ParseStandard``.

The API server validates ``spec.schedule`` with that parser, and the CronJob controller
computes its firings with the parsed schedule's ``Next``. It differs from Debian's cron:
names are three letters in any case, ``?`` is ``*``, ``5/15`` means ``5-59/15``, a
day-of-week is 0-6 (``7`` is refused), descending ranges are refused, any Unicode space
separates fields, descriptors are lower case; and a day field is "any" (both day fields
must then match) only when it is ``*`` or ``?`` without a step above 1 (``*/2`` is
restricted, so ``*/2 ... 1`` fires on odd days *or* Mondays). Checked against robfig/cron
v3.0.1 itself (tests/test_kubernetes_cron.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from .cron_names import FIELDS_WEEK_0_6
from .schedule import cron_firings
from .timespec import ScheduleError

#: robfig/cron's descriptors, exactly as spelled (``@every D`` is read elsewhere)
DESCRIPTORS = {"@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
               "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *",
               "@hourly": "0 * * * *"}
#: the characters Go's ``strings.Fields`` splits on (``unicode.IsSpace``)
_GO_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000"
                      + "".join(chr(c) for c in range(0x2000, 0x200B)))
#: the largest value Go's strconv.Atoi reads on a 64-bit machine
_GO_INT_MAX = 2**63 - 1


@dataclass(frozen=True)
class RobfigReading:
    """How robfig/cron reads a schedule: refused (why, in its own words), or a five-field
    expression with the same firings in cron's day rule (each field ``*`` or its values
    listed), or never (why: a field that matches nothing)."""

    refused: str | None = None
    expression: str | None = None
    never: str | None = None


def go_fields(text: str) -> list[str]:
    """``strings.Fields``: the text split at runs of Unicode white space."""
    out: list[str] = []
    current: list[str] = []
    for char in text:
        if char in _GO_SPACE:
            if current:
                out.append("".join(current))
                current = []
        else:
            current.append(char)
    if current:
        out.append("".join(current))
    return out


def read_schedule(spec: str) -> RobfigReading:
    """robfig/cron's ``ParseStandard`` of a schedule (without a ``TZ=`` prefix)."""
    if not spec:
        return RobfigReading(refused="empty spec string")
    if spec.startswith("@"):
        if spec in DESCRIPTORS:
            return RobfigReading(expression=DESCRIPTORS[spec])
        return RobfigReading(refused=f"unrecognized descriptor: {spec}")
    fields = go_fields(spec)
    if len(fields) != 5:
        return RobfigReading(refused=f"expected exactly 5 fields, found {len(fields)}")
    values: list[tuple[frozenset[int], bool]] = []
    for text, (_, lo, hi, names) in zip(fields, FIELDS_WEEK_0_6):
        parsed = _field(text, lo, hi, names)
        if isinstance(parsed, str):
            return RobfigReading(refused=parsed)
        values.append(parsed)
    for (got, _), (name, *_), text in zip(values, FIELDS_WEEK_0_6, fields):
        if not got and name not in ("day-of-month", "day-of-week"):
            return RobfigReading(never=f"its {name} field `{text}` matches nothing")
    (dom, dom_any), (dow, dow_any) = values[2], values[4]
    if (dom_any or dow_any) and not (dom and dow) or not (dom or dow):
        which = "day-of-month" if not dom else "day-of-week"
        return RobfigReading(never=f"its {which} field matches nothing")
    written = [_written(got, star, name, lo, hi) for (got, star), (name, lo, hi, _) in
               zip(values, FIELDS_WEEK_0_6)]
    if not dom or not dow:  # either day matches: the empty field never does
        written[2 if not dom else 4] = "*"
    return RobfigReading(expression=" ".join(written))


def _written(values: frozenset[int], star: bool, name: str, lo: int, hi: int) -> str:
    """A field for cron's reading with the same values: ``*`` for robfig's "any", and for
    every value of a field other than the days (there only the values matter)."""
    if star or name not in ("day-of-month", "day-of-week") and len(values) == hi - lo + 1:
        return "*"
    return ",".join(str(v) for v in sorted(values))


def _field(text: str, lo: int, hi: int, names: tuple[str, ...]
           ) -> tuple[frozenset[int], bool] | str:
    """(values, whether robfig marks the field "any") of one field, or robfig's error."""
    out: set[int] = set()
    star = False
    for item in (part for part in text.split(",") if part):
        range_and_step = item.split("/")
        low_and_high = range_and_step[0].split("-")
        any_value = low_and_high[0] in ("*", "?")
        if any_value:  # (robfig ignores what follows a '-' here)
            start, end = lo, hi
        else:
            first = _int_or_name(low_and_high[0], names)
            if isinstance(first, str):
                return first
            start = end = first
            if len(low_and_high) == 2:
                last = _int_or_name(low_and_high[1], names)
                if isinstance(last, str):
                    return last
                end = last
            elif len(low_and_high) > 2:
                return f"too many hyphens: {item}"
        step = 1
        if len(range_and_step) == 2:
            parsed = _go_int(range_and_step[1])
            if isinstance(parsed, str):
                return parsed
            step = parsed
            if len(low_and_high) == 1:
                end = hi
        elif len(range_and_step) > 2:
            return f"too many slashes: {item}"
        if start < lo:
            return f"beginning of range ({start}) below minimum ({lo}): {item}"
        if end > hi:
            return f"end of range ({end}) above maximum ({hi}): {item}"
        if start > end:
            return f"beginning of range ({start}) beyond end of range ({end}): {item}"
        if step == 0:
            return f"step of range should be a positive number: {item}"
        star = star or (any_value and step <= 1)
        out.update(range(start, end + 1, step))
    return frozenset(out), star


def _int_or_name(text: str, names: tuple[str, ...]) -> int | str:
    if text.lower() in names:
        return names.index(text.lower()) + (1 if len(names) == 12 else 0)
    return _go_int(text)


def _go_int(text: str) -> int | str:
    """Go's ``strconv.Atoi`` on a value (a sign, then ASCII digits), or robfig's error."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit() or \
            int(digits) > _GO_INT_MAX:
        return f"failed to parse int from {text}"
    value = -int(digits) if text.startswith("-") else int(digits)
    if value < 0:
        return f"negative number ({value}) not allowed: {text}"
    return value


def robfig_as_written(spec: str, expression: str) -> bool:
    """True when cron's reading of the schedule as written (``*/5``, not the listed
    minutes) fires exactly as robfig/cron's ``expression``: it is then shown as written."""
    if spec.startswith("@") or spec.split() != go_fields(spec):
        return False
    try:
        return cron_firings(spec, "kubernetes") == cron_firings(expression, "kubernetes")
    except ScheduleError:
        return False
