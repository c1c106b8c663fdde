"""Workflow schedules as GitHub Actions accepts them.

GitHub's own workflow parser (actions/languageservices, ``workflow-parser``'s ``cron.ts``,
which the Actions editor and language server use) accepts five fields separated by
spaces: numbers, ``*``, ranges that do not descend, steps (``20/15``, ``*/5``, ``1-5/2``;
a step no larger than the field's highest value), lists, and the three-letter names of
months and weekdays in any case. A day of the week is 0-6; ``?``, ``L``, ``W``, ``#``
and the ``@daily`` macros are refused, and a workflow whose schedule is refused never
runs on it. Its cases are tests/test_github_cron.py's.
"""
from __future__ import annotations

import re

from .cron_names import FIELDS_WEEK_0_6


def refusal(cron: str) -> str | None:
    """Why GitHub refuses the schedule, or None when it accepts it."""
    parts = re.split(r" +", cron.strip(" "))  # (surrounding spaces: not judged)
    if len(parts) != 5:
        return f"a schedule has five fields separated by spaces, not {len(parts)}" \
            if not cron.startswith("@") else "an `@` macro, which it does not read"
    for text, (name, lo, hi, names) in zip(parts, FIELDS_WEEK_0_6):
        if not _part_ok(text, lo, hi, names, True):
            return f"its {name} field `{text}` is not valid"
    return None


def _part_ok(value: str, lo: int, hi: int, names: tuple[str, ...], separators: bool) -> bool:
    """``validateCronPart``: lists bind before steps, steps before ranges."""
    if value.lower() in names or value == "*":
        return True
    if "," in value:
        return separators and all(v and _part_ok(v, lo, hi, names, True)
                                  for v in value.split(","))
    if "/" in value:
        start, _, step = value.partition("/")
        return separators and bool(start) and step.isdigit() and int(step) > 0 and \
            _part_ok(start, lo, hi, names, True) and _part_ok(step, lo, hi, names, False)
    if "-" in value:
        first, _, last = value.partition("-")
        if not separators or not first or not last or "-" in last:
            return False
        low, high = _value(first, names), _value(last, names)
        return _part_ok(first, lo, hi, names, False) and \
            _part_ok(last, lo, hi, names, False) and low is not None and high is not None \
            and low <= high
    return value.isascii() and value.isdigit() and lo <= int(value) <= hi


def _value(text: str, names: tuple[str, ...]) -> int | None:
    """A range's end as a number (a name's or a number's; None for ``*``)."""
    if text.lower() in names:
        return names.index(text.lower()) + (1 if len(names) == 12 else 0)
    return int(text) if text.isascii() and text.isdigit() else None
