"""cronie's own parser, run as an oracle: ``cronie/harness.c`` compiled with cronie's
entry.c (``cronie/build.sh CHECKOUT``; cronie is not packaged for Debian, so ``.ci/run``
cannot install it). For each schedule it prints "error", or the bits cronie set in each
field and its DOM_STAR/DOW_STAR flags. ``python tests/oracles/cronie.py`` records its
answers for every schedule of ``tests/golden/cronie_entry.json``.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ORACLES = Path(os.environ.get("JOBSAFE_ORACLES", Path.home() / ".cache" / "jobsafe-oracles"))
HARNESS = ORACLES / "cronie-harness"
GOLDEN = Path(__file__).parent.parent / "golden" / "cronie_entry.json"
#: the cronie commit the answers were recorded with (github.com/cronie-crond/cronie)
RECORDED_WITH = "5f9f16b (2026)"


def available() -> bool:
    return HARNESS.exists()


def ask(schedules: list[str]) -> list[str]:
    """cronie's reading of each schedule, given a command: "error" or "env" (it read an
    environment setting), else six words: the minute, hour, day-of-month, month and
    day-of-week bits, and the two star flags."""
    out = subprocess.run([str(HARNESS)], input="".join(f"{s}\n" for s in schedules),
                         capture_output=True, text=True, check=True).stdout
    return out.split("\n")[:len(schedules)]


def main() -> int:
    if not available():
        print(f"build the harness first: tests/oracles/cronie/build.sh CHECKOUT {HARNESS}",
              file=sys.stderr)
        return 1
    data = json.loads(GOLDEN.read_text())
    for case, answer in zip(data["cases"], ask([c["schedule"] for c in data["cases"]])):
        case["answer"] = answer
    data["recorded_with"] = RECORDED_WITH
    lines = ",\n".join(json.dumps(case) for case in data["cases"])
    GOLDEN.write_text(f'{{"about": {json.dumps(data["about"])},\n'
                      f'"recorded_with": {json.dumps(data["recorded_with"])},\n'
                      f'"cases": [\n{lines}\n]}}\n')
    return 0


if __name__ == "__main__":
    sys.exit(main())
