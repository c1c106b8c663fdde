"""Every fix, on every fixture finding that has one: applied alone it removes its finding
and adds none (it may remove others it also remedies); applied together twice, the second time changes nothing; as a diff, `git
apply --check` accepts it (issue 18)."""
import shutil
import subprocess
from collections import Counter

import pytest
from click.testing import CliRunner
from conftest import FIXTURE_CASES, FIXTURES, run_analysis

from jobsafe.cli import main
from jobsafe.fix import fixed_texts
from jobsafe.rules import all_rules


def _counts(findings) -> Counter:
    return Counter((f.rule, f.span.path) for f in findings)


def _copy(case: str, tmp_path):
    root = tmp_path / case
    shutil.copytree(FIXTURES / case, root, ignore=shutil.ignore_patterns(".jobsafe_cache"))
    return root


def _fixable(case: str) -> list[int]:
    return [i for i, f in enumerate(run_analysis(FIXTURES / case).findings) if f.fix]


#: the cases whose findings carry fixes (the test below fails when one gains a fix unseen)
FIXABLE_CASES = [case for case in FIXTURE_CASES if _fixable(case)]


@pytest.mark.parametrize("case", FIXABLE_CASES)
def test_each_fix_removes_its_finding_and_adds_none(case, tmp_path, monkeypatch):
    before = run_analysis(FIXTURES / case).findings
    for index in _fixable(case):
        root = _copy(case, tmp_path / str(index))
        monkeypatch.chdir(root)
        findings = run_analysis(root).findings
        finding = findings[index]
        for path, (_, fixed, encoding) in fixed_texts([finding]).items():
            (root / path).write_text(fixed, encoding=encoding)
        after = run_analysis(root).findings
        # gone: this finding (and any whose remedy is the same edit: JOB203 and JOB204 both
        # move the release into finally; a time limit also bounds a wait, JOB102); new: none
        key = (finding.rule, finding.span.path)
        assert _counts(after)[key] < _counts(before)[key], (finding.rule, finding.message)
        assert not _counts(after) - _counts(before), (finding.rule, finding.message)


@pytest.mark.parametrize("case", FIXABLE_CASES)
def test_all_fixes_together_are_idempotent_and_git_applies_the_diff(case, tmp_path,
                                                                      monkeypatch):
    root = _copy(case, tmp_path)
    monkeypatch.chdir(root)
    subprocess.run(["git", "init", "-q"], check=True)
    runner = CliRunner()
    diff = runner.invoke(main, ["check", "--no-cache", "--diff", "--unsafe-fixes"]).output
    assert diff.startswith("--- a/")
    check = subprocess.run(["git", "apply", "--check", "-"], input=diff, text=True,
                           capture_output=True)
    assert check.returncode == 0, check.stderr
    runner.invoke(main, ["check", "--no-cache", "--fix", "--unsafe-fixes"])
    fixed = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and ".git" not in p.parts}
    again = runner.invoke(main, ["check", "--no-cache", "--diff", "--unsafe-fixes"])
    assert again.exit_code == 0 and "+++" not in again.output
    assert fixed == {p: p.read_bytes() for p in root.rglob("*")
                     if p.is_file() and ".git" not in p.parts}


def test_every_rule_that_declares_a_fix_offers_one_on_the_fixtures():
    offered = {f.rule for case in FIXABLE_CASES
               for f in run_analysis(FIXTURES / case).findings if f.fix}
    declared = {rule_id for rule_id, rule in all_rules().items() if rule.fix}
    assert offered == declared
