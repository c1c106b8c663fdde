"""Every fixture tree yields exactly the findings marked in it.

A marker ``# expect: JOB101, JOB104`` stands on the line before the expected finding
(crontabs and unit files have no trailing comments); it applies to the next line that is
not itself a marker.
"""
import re

import pytest

from conftest import FIXTURE_CASES, FIXTURES, run_analysis

_MARKER = re.compile(r"#\s*expect:\s*(JOB\d{3}(?:\s*,\s*JOB\d{3})*)")


def expected_findings(root):
    expected = set()
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        lines = path.read_text(encoding="utf-8", errors="replace").split("\n")
        for i, line in enumerate(lines):
            m = _MARKER.search(line)
            if not m:
                continue
            target = i + 1
            while target < len(lines) and _MARKER.search(lines[target]):
                target += 1
            for rule in re.split(r"\s*,\s*", m.group(1)):
                expected.add((rel, target + 1, rule))
    return expected


@pytest.mark.parametrize("case", FIXTURE_CASES)
def test_fixture_findings_are_exactly_the_marked_ones(case):
    root = FIXTURES / case
    analysis = run_analysis(root)
    found = [(f.span.path, f.span.line, f.rule) for f in analysis.findings]
    actual = set(found)
    expected = expected_findings(root)
    assert expected, f"fixture {case} marks no finding"
    twice = sorted(f for f in actual if found.count(f) > 1)
    assert not twice, f"reported more than once: {twice}"
    missing = sorted(expected - actual)
    unexpected = sorted(actual - expected)
    details = {(f.span.path, f.span.line, f.rule): f.message for f in analysis.findings}
    assert not missing and not unexpected, (
        f"missing: {missing}\nunexpected: {[(u, details[u]) for u in unexpected]}")


def test_every_fixture_file_kind_is_read():
    analysis = run_analysis(FIXTURES / "legacy_app")
    assert "deploy/crontab" in analysis.texts
    assert "app/bin/locked_export.sh" in analysis.texts
