"""Measure how often jobsafe agrees with the real implementations on generated schedules, for
a time budget, and list every disagreement (run by hand; the tests do the same on a few).

    python scripts/oracle_agreement.py debian --seconds 600
    python scripts/oracle_agreement.py systemd --seconds 600 --seed 7

Schedules come from tests/schedule_grammars.py in batches (one ``systemd-analyze calendar``
call, or one namespace of ``crontab -n`` runs, per batch) and are compared as the tests compare
them (tests/oracles/). Counted apart: the known differences the comparison allows (systemd
skipping a month's first firings, an elapse systemd could not compute).
"""
from __future__ import annotations

import argparse
import collections
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "src")]

import oracles  # noqa: E402
from schedule_grammars import calendar_expression, debian_schedule  # noqa: E402


def _systemd(rng: random.Random, batch: int, counts: collections.Counter, seen: set,
             shown: list) -> None:
    queries = [oracles.CalendarQuery(calendar_expression(rng)) for _ in range(batch)]
    queries = [q for q in dict.fromkeys(queries) if q not in seen]
    seen.update(queries)
    for query, answer in oracles.ask_systemd(queries).items():
        counts["cases"] += 1
        counts["accepted by systemd"] += not answer.rejected
        disagreement = oracles.calendar_disagreement(query, answer)
        if disagreement is not None:
            counts["disagree"] += 1
            shown.append(f"{query.expression!r}: {disagreement}")
        elif answer.failure is not None:
            counts["agree: systemd could not compute an elapse (acceptance only)"] += 1
        elif answer.normalized is not None and (oracles.sub_second(answer.normalized) or len(
                set(answer.elapses)) < len(answer.elapses)):
            counts["agree: sub-second (acceptance and normal form only)"] += 1
        elif answer.normalized is not None and \
                oracles.jobsafe_calendar(query).elapses != answer.elapses:
            counts["agree but systemd skips a month's first firings"] += 1  # (allowed)
        else:
            counts["agree"] += 1


def _debian(rng: random.Random, batch: int, counts: collections.Counter, seen: set,
            shown: list) -> None:
    schedules = [s for s in dict.fromkeys(debian_schedule(rng) for _ in range(batch))
                 if s not in seen]
    seen.update(schedules)
    for schedule, accepts in oracles.ask_debian(schedules).items():
        counts["cases"] += 1
        counts["accepted by crontab -n"] += accepts
        if oracles.jobsafe_accepts_debian(schedule) == accepts:
            counts["agree"] += 1
        else:
            counts["disagree"] += 1
            shown.append(f"{schedule!r}: crontab -n {'accepts' if accepts else 'refuses'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dialect", choices=["systemd", "debian"])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--batch", type=int, default=500)
    args = parser.parse_args()
    available = oracles.systemd_available() if args.dialect == "systemd" \
        else oracles.debian_available()
    if not available:
        sys.exit(f"oracle_agreement: the {args.dialect} oracle is not here")
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    counts: collections.Counter = collections.Counter()
    shown: list[str] = []
    seen: set = set()
    step = _systemd if args.dialect == "systemd" else _debian
    start = time.monotonic()
    while time.monotonic() - start < args.seconds:
        step(rng, args.batch, counts, seen, shown)
    print(f"{args.dialect}: seed {seed}, {time.monotonic() - start:.0f} s")
    for key, value in counts.items():
        print(f"  {key}: {value}")
    for line in shown[:50]:
        print("  DISAGREE", line)
    return 1 if shown else 0


if __name__ == "__main__":
    sys.exit(main())
