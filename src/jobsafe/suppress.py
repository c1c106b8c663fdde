"""Suppression comments and per-file ignores.

``# jobsafe: ignore[JOB101,JOB205] -- reason`` on a line of its own applies to the next
non-comment line (the only form crontabs, unit files and Dockerfiles allow); at the end of
a Python, shell or YAML line it applies to that line. Python also honours ``# noqa: JOB101``.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field

from .model import Finding, Span

_IGNORE = re.compile(r"#\s*jobsafe:\s*ignore(?:\[(?P<codes>[^\]]*)\])?(?:\s+--\s+(?P<reason>.*))?",
                     re.I)
_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>JOB\d{3}(?:\s*,\s*JOB\d{3})*)", re.I)
#: file kinds whose comments may trail code on the same line
_TRAILING_KINDS = {"python", "shell", "yaml", "php"}


@dataclass
class Suppression:
    span: Span  # the comment
    target_line: int
    codes: tuple[str, ...]  # empty: every rule
    reason: str
    used: bool = field(default=False)
    lines: tuple[int, int] | None = None  # a Kubernetes object's annotation covers its lines
    #: the kind of file where the comment trails a line that cannot carry one (a crontab
    #: or unit-file line): it suppresses nothing, and JOB901 says where it must go
    misplaced: str | None = None

    def covers(self, line: int) -> bool:
        if self.lines is not None:
            return self.lines[0] <= line <= self.lines[1]
        return self.target_line == line

    def matches(self, finding: Finding) -> bool:
        if not self.codes:
            return True
        return any(finding.rule == c.upper() or finding.name == c.lower()
                   or (c.upper().startswith("JOB") and finding.rule.startswith(c.upper()))
                   for c in self.codes)


def may_hold_suppressions(text: str, kind: str) -> bool:
    """The quick test on the whole text: a file where nothing reads like a suppression
    comment holds none (``# noqa: E501`` does not: it names no JOB rule)."""
    return _IGNORE.search(text) is not None or (kind == "python" and
                                                  _NOQA.search(text) is not None)


def parse_suppressions(path: str, text: str, kind: str) -> list[Suppression]:
    if not may_hold_suppressions(text, kind):
        return []
    lines = text.split("\n")
    found: list[Suppression] = []
    pending: list[Suppression] = []
    for index, line in enumerate(lines):
        lineno = index + 1
        stripped = line.strip()
        own_line = stripped.startswith(("#", "//") if kind == "php" else "#")
        match = _IGNORE.search(line) or (_NOQA.search(line) if kind == "python" else None)
        if match is not None:
            codes = tuple(c.strip() for c in (match.group("codes") or "").split(",") if c.strip())
            reason = (match.groupdict().get("reason") or "").strip()
            trails_nothing = not own_line and kind not in _TRAILING_KINDS
            sup = Suppression(Span(path, lineno, match.start() + 1, lineno, match.end() + 1),
                              -1 if trails_nothing else lineno, codes, reason,
                              misplaced=kind if trails_nothing else None)
            found.append(sup)
            if own_line:
                pending.append(sup)
                continue
        if stripped and not own_line:
            for sup in pending:
                sup.target_line = lineno
            pending = []
    for sup in pending:  # an own-line comment at the end of the file targets nothing
        sup.target_line = -1
    return found


def apply_suppressions(findings: list[Finding], suppressions: dict[str, list[Suppression]]) -> None:
    """Mark suppressed findings (``finding.suppressed`` holds the reason)."""
    for finding in findings:
        for sup in suppressions.get(finding.span.path, ()):
            if sup.covers(finding.span.line) and sup.matches(finding):
                sup.used = True
                finding.suppressed = sup.reason
                break


def per_file_ignored(finding: Finding, per_file: tuple[tuple[str, tuple[str, ...]], ...],
                     resolve) -> bool:
    for pattern, rules in per_file:
        if fnmatch.fnmatch(finding.span.path, pattern) or \
                fnmatch.fnmatch(finding.span.path.rsplit("/", 1)[-1], pattern):
            if any(finding.rule in resolve(r) for r in rules):
                return True
    return False
