"""busybox's crond, run as an oracle: from Debian's busybox-static (``.ci/run`` unpacks it
into ``$JOBSAFE_ORACLES``). Started in the foreground at log level 0, crond prints, for each
line of a crontab, what its parser set in each time field (a row of 0s and 1s) or the parse
error it logged. ``python tests/oracles/busybox.py`` records its answers for every schedule
of ``tests/golden/busybox_crond.json``.
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ORACLES = Path(os.environ.get("JOBSAFE_ORACLES", Path.home() / ".cache" / "jobsafe-oracles"))
BUSYBOX = ORACLES / "busybox-static" / "bin" / "busybox"
GOLDEN = Path(__file__).parent.parent / "golden" / "busybox_crond.json"


def available() -> bool:
    """crond reads only crontabs the daemon's user (root) owns."""
    return BUSYBOX.exists() and os.geteuid() == 0


def ask(schedules: list[str]) -> list[list[str]]:
    """For each five-field schedule: the five fields as crond read them ("error" where it
    logged a parse error)."""
    with tempfile.TemporaryDirectory() as folder:
        # a last line crond always reads whole: its five fields mark the end of the answer
        # (a skipped line prints its entry and nothing more, so silence proves nothing)
        Path(folder, "root").write_text("".join(f"{s} true\n" for s in [*schedules, _LAST]))
        proc = subprocess.Popen([str(BUSYBOX), "crond", "-f", "-l", "0", "-L", "/dev/stderr",
                                 "-c", folder], stderr=subprocess.PIPE)
        assert proc.stderr is not None
        fd = proc.stderr.fileno()
        received = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # (crond never ends: read until all is printed)
            # (raw reads: a buffered readline leaves lines where select cannot see them)
            ready, _, _ = select.select([fd], [], [], 0.1)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            received += chunk
            if _complete(received.decode(errors="replace").split("\n"), len(schedules) + 1):
                break
        proc.kill()
        proc.wait()
        lines = received.decode(errors="replace").split("\n")
    answers: list[list[str]] = []
    for line in lines:
        if "entry:" in line:
            answers.append([])
        elif answers and "parse error" in line:
            answers[-1].append("error")
        elif answers and line and set(line) <= {"0", "1"}:
            answers[-1].append(line)
    return answers[:len(schedules)]


#: the line after the asked ones (see ``ask``)
_LAST = "1 2 3 4 5"


def _complete(lines: list[str], entries: int) -> bool:
    """Every line's entry printed, and the last one's five fields."""
    if sum(1 for x in lines if "entry:" in x) < entries:
        return False
    last = max(i for i, x in enumerate(lines) if "entry:" in x)
    return sum(1 for x in lines[last + 1:] if x and set(x) <= {"0", "1"}) >= 5


def main() -> int:
    if not available():
        print("busybox-static is not unpacked, or this is not root", file=sys.stderr)
        return 1
    cases = json.loads(GOLDEN.read_text())["cases"]
    for case, answer in zip(cases, ask([c["schedule"] for c in cases])):
        case["fields"] = answer
    lines = ",\n".join(json.dumps(case) for case in cases)
    GOLDEN.write_text('{"about": "busybox 1.35.0 crond\'s reading (Debian busybox-static): '
                      'tests/oracles/busybox.py",\n"cases": [\n' + lines + "\n]}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
