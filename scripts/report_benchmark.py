"""How big the HTML report gets and how fast Chromium renders it, on 500+ jobs.

    python scripts/report_benchmark.py [--runs 5] [--copies 4]

The tree is ``--copies`` copies of every fixture repository side by side (146 jobs each).
Prints the time jobsafe takes to write the report, the file size, and Chromium's time to
show it: the page's own clock when its script has finished (``performance.now()``, from
navigation start) and the whole headless screenshot process beside the same process on an
empty page (browser start-up). Run by hand: figures depend on the machine.
"""
from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import benchmark  # noqa: E402
import chromium  # noqa: E402
import corpus  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--copies", type=int, default=4)
    args = parser.parse_args()
    if chromium.BINARY is None:
        print("Chromium is not installed (apt-get install chromium)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        tree = corpus.copies(HERE.parent / "tests" / "fixtures", args.copies, scratch)
        page = scratch / "audit.html"
        jobsafe = [sys.executable, "-m", "jobsafe", "jobs", "--format", "html", "--no-cache",
                   "-o", str(page), str(tree)]
        benchmark.show("jobsafe jobs --format html",
                       *benchmark.measure(jobsafe, args.runs, scratch))
        html = page.read_text(encoding="utf-8")
        jobs = html.count('<tr id="job-')
        print(f"{'report':<44} {jobs} jobs, {len(html.encode()) / 1e6:.2f} MB")
        blank = scratch / "blank.html"
        blank.write_text("<!DOCTYPE html><title>blank</title>")
        ready, walls = [], {}
        for name, target in (("report", page), ("empty page", blank)):
            walls[name] = []
            for run in range(args.runs):
                start = time.perf_counter()
                result, console = chromium.run(scratch / f"profile-{name}-{run}",
                                               "--window-size=1400,1600", "--dump-dom",
                                               target.as_uri())
                walls[name].append(time.perf_counter() - start)
                if name == "report":
                    assert not console, console
                    ready.append(int(re.search(r'data-ready-ms="(\d+)"', result.stdout).group(1)))
        benchmark.show("page script done (performance.now())", [ms / 1000 for ms in ready])
        for name, times in walls.items():
            benchmark.show(f"chromium --dump-dom, {name}", times)
        extra = statistics.median(walls["report"]) - statistics.median(walls["empty page"])
        print(f"{'report minus empty page':<44} {extra:8.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
