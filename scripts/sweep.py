"""Real-world sweep: run jobsafe over a fixed list of Debian packages and PyPI sdists that no
one here wrote, and print what it read, found and whether anything crashed.

    python scripts/sweep.py                 # everything (downloads once into the cache)
    python scripts/sweep.py --only debian   # or: --only pypi
    python scripts/sweep.py --merged        # also the Debian packages merged into one root

Run by hand, never in CI. Each package is analysed by its own ``jobsafe`` process (so a crash
or a hang is seen and counted, not fatal) with a time limit. A crash is a non-zero exit
other than 1, or output that is not jobsafe's JSON.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import corpus  # noqa: E402

LIMIT_SECONDS = 600


def jobsafe(path: Path) -> tuple[dict | None, str, float]:
    """(JSON report or None, error text, seconds) of one whole jobsafe process."""
    start = time.perf_counter()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "jobsafe", "check", "--format", "json", "--no-cache",
             "--exit-zero", str(path)], capture_output=True, text=True, timeout=LIMIT_SECONDS)
    except subprocess.TimeoutExpired:
        return None, f"timeout after {LIMIT_SECONDS} s", time.perf_counter() - start
    elapsed = time.perf_counter() - start
    if result.returncode != 0:
        return None, (result.stderr.strip().splitlines() or ["exit %d" % result.returncode])[-1], elapsed
    try:
        return json.loads(result.stdout), "", elapsed
    except json.JSONDecodeError:
        return None, "output is not JSON", elapsed


def sweep(label: str, folders: list[Path]) -> Counter:
    totals: Counter = Counter()
    rules: Counter = Counter()
    crashes = []
    start = time.perf_counter()
    for folder in folders:
        report, error, _seconds = jobsafe(folder)
        totals["packages"] += 1
        if report is None:
            crashes.append((folder.name, error))
            continue
        summary = report["summary"]
        totals["files"] += summary["files"]
        totals["jobs"] += summary["jobs"]
        totals["findings"] += summary["findings"]
        rules.update(summary["by_rule"])
    wall = time.perf_counter() - start
    print(f"\n== {label}: {totals['packages']} packages")
    print(f"files read     {totals['files']}")
    print(f"jobs found     {totals['jobs']}")
    print(f"findings       {totals['findings']}")
    for rule, count in sorted(rules.items()):
        print(f"  {rule}  {count}")
    print(f"JOB900         {rules.get('JOB900', 0)}")
    print(f"crashes        {len(crashes)}")
    for name, error in crashes:
        print(f"  {name}: {error}")
    print(f"wall time      {wall:.1f} s")
    totals["crashes"] = len(crashes)
    return totals


def merged_debian(root: Path) -> Path:
    """All Debian packages unpacked into one file system, as on a host: /etc/crontab's
    run-parts then reaches the cron.daily scripts of other packages."""
    target = Path(tempfile.mkdtemp(prefix="jobsafe-debroot-"))
    for package in sorted(root.iterdir()):
        shutil.copytree(package, target, symlinks=True, dirs_exist_ok=True)
    return target


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("debian", "pypi"))
    parser.add_argument("--merged", action="store_true")
    args = parser.parse_args()
    crashes = 0
    if args.only in (None, "debian"):
        root = corpus.fetch_debian()
        crashes += sweep("Debian", sorted(p for p in root.iterdir() if p.is_dir()))["crashes"]
        if args.merged:
            merged = merged_debian(root)
            try:
                crashes += sweep("Debian, merged into one root", [merged])["crashes"]
            finally:
                shutil.rmtree(merged, ignore_errors=True)
    if args.only in (None, "pypi"):
        root = corpus.fetch_pypi()
        crashes += sweep("PyPI", sorted(p for p in root.iterdir() if p.is_dir()))["crashes"]
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
