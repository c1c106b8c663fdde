"""The metamorphic table: for each rewrite, the fixture trees it applies to and how many
still give exactly their marked findings. Run by hand: ``python scripts/metamorphic.py``
(``-v``: what each failing pair misses; a failing pair not in ``KNOWN_FAILING`` of
tests/test_metamorphic.py is a regression)."""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1] / "tests"
sys.path.insert(0, str(TESTS))

from conftest import FIXTURE_CASES, FIXTURES  # noqa: E402
from metamorphic.harness import python_cases, run  # noqa: E402
from metamorphic.rewrites import REWRITES  # noqa: E402
from test_fixtures import expected_findings  # noqa: E402
from test_metamorphic import KNOWN_FAILING  # noqa: E402


def main() -> int:
    verbose = "-v" in sys.argv
    cases = python_cases(FIXTURES, FIXTURE_CASES)
    total = held = 0
    regressions = []
    with tempfile.TemporaryDirectory() as scratch:
        for rewrite in sorted(REWRITES):
            outcomes = [run(FIXTURES / c, rewrite, Path(scratch), expected_findings) for c in cases]
            applied = [o for o in outcomes if o.applied]
            holds = [o for o in applied if o.holds]
            total, held = total + len(applied), held + len(holds)
            known = KNOWN_FAILING.get(rewrite, set())
            regressions += [(rewrite, o.case) for o in applied
                            if not o.holds and o.case not in known]
            print(f"{rewrite:24} {len(holds):3} of {len(applied):3} hold")
            if verbose:
                for o in applied:
                    if not o.holds:
                        print(f"    {o.case}: broken {o.broken}\n      missing {o.missing}"
                              f"\n      unexpected {[u for u, _ in o.unexpected]}")
    print(f"{'all':24} {held:3} of {total:3} rewrite x fixture pairs hold")
    if regressions:
        print(f"not in KNOWN_FAILING and failing: {regressions}")
    return 0 if held == total else 1


if __name__ == "__main__":
    sys.exit(main())
