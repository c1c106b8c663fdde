"""Laravel's scheduler on the days clocks change, run as an oracle: ``laravel/due.php`` asks
dragonmantank/cron-expression (Debian's php-dragonmantank-cron-expression) whether each
minute is due, as Laravel's ``Event::expressionPasses`` does. ``python
tests/oracles/laravel_oracle.py`` records the answers in ``tests/golden/laravel_dst.json``.
"""
from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
GOLDEN = HERE.parent / "golden" / "laravel_dst.json"
AUTOLOAD = Path("/usr/share/php/Cron/autoload.php")
#: 2027's change days in zones whose changes differ in hour, direction and length
CHANGE_DAYS = {"Europe/Berlin": ["2027-03-28", "2027-10-31"],
               "America/New_York": ["2027-03-14", "2027-11-07"],
               "America/Havana": ["2027-03-14", "2027-11-07"],
               "America/Santiago": ["2027-04-03", "2027-09-05"],
               "Australia/Lord_Howe": ["2027-04-04", "2027-10-03"]}
EXPRESSIONS = ["30 2 * * *", "0 * * * *", "*/15 * * * *", "30 1 * * *", "0,30 0-3 * * *",
               "45 23 * * *", "0 0 * * *", "30 0 * * *", "*/20 2 * * *", "15 2 * * 0",
               "59 1 * * *", "0 3 * * *", "*/7 1-3 * * *", "0 2 * * *"]


def available() -> bool:
    return shutil.which("php") is not None and AUTOLOAD.exists()


def cases() -> list[dict]:
    """One case per zone, change day and expression: the real time from the day before's
    noon to the day after's (UTC)."""
    out = []
    for zone, days in CHANGE_DAYS.items():
        for day in days:
            middle = dt.datetime.fromisoformat(day).replace(tzinfo=dt.timezone.utc)
            window = (int((middle - dt.timedelta(hours=12)).timestamp()),
                      int((middle + dt.timedelta(hours=36)).timestamp()))
            out += [{"zone": zone, "from": window[0], "to": window[1], "expression": e}
                    for e in EXPRESSIONS]
    return out


def ask(cases: list[dict]) -> list[list[int]]:
    """The due minutes of each case, as unix seconds."""
    lines = "".join(f"{c['zone']}\t{c['from']}\t{c['to']}\t{c['expression']}\n" for c in cases)
    proc = subprocess.run(["php", str(HERE / "laravel" / "due.php")], input=lines,
                          capture_output=True, text=True, check=True, timeout=600)
    return [json.loads(line) for line in proc.stdout.splitlines()]


def main() -> int:
    if not available():
        print("php or php-dragonmantank-cron-expression is missing", file=sys.stderr)
        return 1
    recorded = cases()
    for case, due in zip(recorded, ask(recorded)):
        case["due"] = due
    lines = ",\n".join(json.dumps(case) for case in recorded)
    GOLDEN.write_text('{"about": "Laravel\'s scheduler (dragonmantank/cron-expression): '
                      'tests/oracles/laravel_oracle.py",\n"cases": [\n' + lines + "\n]}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
