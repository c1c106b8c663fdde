"""The instants at which jobsafe says a cron expression fires in a zone, day by day: cron's
meaning of the expression, and on the days the zone's clocks change what
``schedule.real_firings`` says the runtime does. The differential tests compare these with
the runtimes' own answers."""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from cronsim import CronSim

from jobsafe.schedule import changed_times, real_firings


def instants(expression: str, zone: str, after: dt.datetime, runtime: str,
             count: int | None = None, before: dt.datetime | None = None) -> list[float]:
    """POSIX times of the firings after ``after``: the first ``count``, or those before
    ``before``."""
    tz = ZoneInfo(zone)
    start = dt.datetime.combine(after.astimezone(tz).date() - dt.timedelta(days=1), dt.time())
    sim = CronSim(expression, start - dt.timedelta(minutes=1))
    out: list[float] = []
    day: dt.date | None = None
    seconds: list[int] = []

    def flush() -> None:
        if day is None:
            return
        ordinal = day.toordinal()
        if changed_times(ordinal, zone) is None:
            midnight = dt.datetime.combine(day, dt.time())
            out.extend((midnight + dt.timedelta(seconds=s)).replace(tzinfo=tz).timestamp()
                       for s in seconds)
        else:
            out.extend(real_firings(ordinal, tuple(seconds), zone, runtime, False)[0])

    def done() -> bool:
        return (count is not None and len(out) >= count + 2 * len(seconds) and
                sum(1 for t in out[-count - 1:] if t > after.timestamp()) >= count) or \
            (before is not None and day is not None and
             dt.datetime.combine(day, dt.time(), tz) > before + dt.timedelta(days=1))

    for local in sim:
        if local.date() != day:
            flush()
            if done():
                break
            day, seconds = local.date(), []
        seconds.append(local.hour * 3600 + local.minute * 60)
    else:
        flush()
    found = sorted(t for t in out if t > after.timestamp() and
                   (before is None or t < before.timestamp()))
    return found[:count] if count is not None else found
