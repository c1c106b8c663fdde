"""The same hazard spelled another way gives the same finding: every Python fixture tree,
rewritten by each semantics-preserving rewrite in ``metamorphic/rewrites.py``, must yield
exactly the findings its ``# expect:`` markers name (the markers travel with their code)."""
import pytest

from conftest import FIXTURE_CASES, FIXTURES
from metamorphic.harness import python_cases, run
from metamorphic.rewrites import REWRITES
from test_fixtures import expected_findings

CASES = python_cases(FIXTURES, FIXTURE_CASES)

#: rewrite -> fixture trees whose rewrite does not give the marked findings yet: the
#: model's known holes (issue 14). A pair that starts to hold must leave this list, and a
#: pair not in it must hold, so the list only shrinks.
KNOWN_FAILING: dict[str, set[str]] = {}


@pytest.mark.parametrize("rewrite", sorted(REWRITES))
def test_rewritten_fixtures_give_the_same_findings(rewrite, tmp_path):
    outcomes = [run(FIXTURES / case, rewrite, tmp_path, expected_findings) for case in CASES]
    applied = [o for o in outcomes if o.applied]
    assert applied, f"{rewrite} applies to no fixture: it tests nothing"
    assert not [o for o in applied if o.broken], "the rewrite wrote invalid Python"
    known = KNOWN_FAILING.get(rewrite, set())
    failing = [o for o in applied if not o.holds and o.case not in known]
    assert not failing, "\n".join(
        f"{o.case}: missing {o.missing}; unexpected {o.unexpected}" for o in failing)
    fixed = sorted(o.case for o in applied if o.holds and o.case in known)
    assert not fixed, f"now holds, remove from KNOWN_FAILING[{rewrite!r}]: {fixed}"
