"""Time values as schedulers and tools write them: one duration grammar, its dialects, and
the error for a schedule that cannot be read.

A duration is a number with an optional unit, or (where the dialect allows) several
such parts added up: coreutils ``timeout``/``flock -w`` read ``90``, ``1.5m``, ``2h``;
systemd.time(7) reads ``5min 30s``, ``1h``, ``500ms``; jobsafe's configuration reads the
systemd spelling.
"""
from __future__ import annotations

import re
from dataclasses import dataclass


class ScheduleError(ValueError):
    """A schedule expression that cannot be read."""


@dataclass(frozen=True)
class DurationDialect:
    units: dict[str, float]  # unit -> seconds; "" is the unit of a bare number
    compound: bool  # several parts that add up ("5min 30s")


COREUTILS = DurationDialect({"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}, compound=False)
SYSTEMD = DurationDialect({
    "": 1, "us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1, "sec": 1, "second": 1,
    "seconds": 1, "m": 60, "min": 60, "minute": 60, "minutes": 60, "h": 3600, "hr": 3600,
    "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400, "w": 604800,
    "week": 604800, "weeks": 604800, "M": 2629800, "month": 2629800, "months": 2629800,
    "y": 31557600, "year": 31557600, "years": 31557600}, compound=True)

#: Go's time.ParseDuration ("1h30m", "90s"): robfig/cron's "@every", so Kubernetes'
GO = DurationDialect({"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600},
                     compound=True)

_PART = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([A-Za-z]*)")


def parse_duration(text: str, dialect: DurationDialect = SYSTEMD) -> float | None:
    """Seconds, or None when ``text`` is not a duration in ``dialect``."""
    total, pos, parts = 0.0, 0, 0
    text = text.strip()
    for m in _PART.finditer(text):
        if m.start() != pos or m.group(2) not in dialect.units:
            return None
        total += float(m.group(1)) * dialect.units[m.group(2)]
        pos, parts = m.end(), parts + 1
        if not dialect.compound:
            break
    return total if parts and pos == len(text) else None


def format_duration(seconds: float | None) -> str:
    """``300`` -> ``5 min``; ``90000`` -> ``25 h``."""
    if seconds is None:
        return "unknown"
    seconds = int(seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size} {unit}"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds} s"
