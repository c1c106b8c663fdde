"""The metamorphic table: for each rewrite, the fixture trees it applies to and how many
still give exactly their marked findings. Run by hand: ``python scripts/metamorphic.py``
(``-v``: what each failing pair misses; ``--shrink``: drop the pairs that now hold from
``KNOWN_FAILING`` in tests/test_metamorphic.py — it never adds one)."""
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

TEST = TESTS / "test_metamorphic.py"


def main() -> int:
    verbose = "-v" in sys.argv
    cases = python_cases(FIXTURES, FIXTURE_CASES)
    total = held = 0
    still: dict[str, set[str]] = {}
    regressions = []
    with tempfile.TemporaryDirectory() as scratch:
        for rewrite in sorted(REWRITES):
            outcomes = [run(FIXTURES / c, rewrite, Path(scratch), expected_findings) for c in cases]
            applied = [o for o in outcomes if o.applied]
            holds = [o for o in applied if o.holds]
            total, held = total + len(applied), held + len(holds)
            known = KNOWN_FAILING.get(rewrite, set())
            still[rewrite] = {o.case for o in applied if not o.holds and o.case in known}
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
    if "--shrink" in sys.argv:
        _shrink(still)
    return 0 if held == total else 1


def _shrink(still: dict[str, set[str]]) -> None:
    text = TEST.read_text(encoding="utf-8")
    start = text.index("KNOWN_FAILING = {")
    end = text.index("\n}\n", start) + 3
    comments: dict[str, list[str]] = {}  # the comment lines above each entry are kept
    pending: list[str] = []
    for line in text[start:end].splitlines()[1:]:
        if line.strip().startswith("#"):
            pending.append(line)
        elif line.strip().startswith("'"):
            comments[line.strip().split("'")[1]] = pending
            pending = []
    lines = ["KNOWN_FAILING = {"]
    for rewrite in sorted(k for k, v in still.items() if v):
        lines += comments.get(rewrite, [])
        lines.append(f"    {rewrite!r}: {{{', '.join(repr(c) for c in sorted(still[rewrite]))}}},")
    TEST.write_text(text[:start] + "\n".join(lines) + "\n}\n" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
