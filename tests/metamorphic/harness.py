"""Apply each rewrite to each fixture tree that has Python job code, analyse the result, and
compare its findings with the ``# expect:`` markers the rewrite carried along."""
from __future__ import annotations

import ast
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from jobsafe.analysis import analyse
from jobsafe.config import Settings
from jobsafe.rules import all_rules

from .rewrites import REWRITES, Site, Tree


@dataclass
class Outcome:
    case: str
    rewrite: str
    applied: bool
    missing: list
    unexpected: list
    broken: list  # rewritten modules that do not parse: the rewrite's own bug

    @property
    def holds(self) -> bool:
        return self.applied and not self.missing and not self.unexpected and not self.broken


def analysis_of(root: Path):
    old = os.getcwd()
    os.chdir(root)
    try:
        return analyse(["."], Settings(), sorted(all_rules()))
    finally:
        os.chdir(old)


def lock_sites(root: Path) -> list[Site]:
    """Where the original analysis found the locks of Python code."""
    project = analysis_of(root).project
    locks = list(project.code_locks) + [lock for job in project.jobs for lock in job.all_locks]
    return sorted({Site(lock.span.path, lock.span.line, lock.span.column): None
                   for lock in locks if lock.span.path.endswith(".py")},
                  key=lambda s: (s.path, s.line, s.column))


def run(case_root: Path, rewrite: str, scratch: Path, expected_findings) -> Outcome:
    root = scratch / f"{case_root.name}-{rewrite}"
    shutil.rmtree(root, ignore_errors=True)
    shutil.copytree(case_root, root, ignore=shutil.ignore_patterns(".jobsafe_cache"))
    tree = Tree(root, lock_sites(case_root))
    applied = REWRITES[rewrite](tree)
    if not applied:
        return Outcome(case_root.name, rewrite, False, [], [], [])
    broken = []
    for path in root.rglob("*.py"):
        try:
            ast.parse(path.read_text(encoding="utf-8"))
        except SyntaxError as exc:
            broken.append((path.relative_to(root).as_posix(), exc.lineno, exc.msg))
    analysis = analysis_of(root)
    actual = {(f.span.path, f.span.line, f.rule) for f in analysis.findings}
    expected = expected_findings(root)
    details = {(f.span.path, f.span.line, f.rule): f.message for f in analysis.findings}
    return Outcome(case_root.name, rewrite, True, sorted(expected - actual),
                   [(u, details[u]) for u in sorted(actual - expected)], broken)


def python_cases(fixtures: Path, cases: list[str]) -> list[str]:
    return [c for c in cases if any((fixtures / c).rglob("*.py"))]
