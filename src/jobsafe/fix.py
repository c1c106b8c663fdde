"""Applying fixes: text edits at recorded positions, never a rewrite of the file."""
from __future__ import annotations

import difflib
from collections import defaultdict
from collections.abc import Callable

from .model import Finding, TextEdit


class FixConflict(Exception):
    pass


def _decode(data: bytes) -> tuple[str, str]:
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("latin-1"), "latin-1"


def _offset(lines: list[str], line: int, column: int) -> int:
    return sum(len(text) for text in lines[: line - 1]) + column - 1


def apply_edits(text: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (last first, so earlier offsets stay valid)."""
    lines = text.splitlines(keepends=True) or [""]
    spans = sorted(((_offset(lines, e.span.line, e.span.column),
                     _offset(lines, e.span.end_line, e.span.end_column), e.text) for e in edits),
                   reverse=True)
    previous_start = None
    for start, end, replacement in spans:
        if previous_start is not None and end > previous_start:
            raise FixConflict("overlapping edits")
        text = text[:start] + replacement + text[end:]
        previous_start = start
    return text


def plan(findings: list[Finding]) -> dict[str, list[Finding]]:
    """Fixable findings by file."""
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for f in findings:
        if f.fix is not None:
            by_path[f.fix.edits[0].span.path].append(f)
    return dict(sorted(by_path.items()))


def fixed_texts(findings: list[Finding]) -> dict[str, tuple[str, str, str]]:
    """path -> (original, fixed, encoding)."""
    out = {}
    for path, items in plan(findings).items():
        with open(path, "rb") as fh:
            original, encoding = _decode(fh.read())
        # (two findings can share a remedy: JOB203's finally also fixes JOB204's exit)
        edits = list(dict.fromkeys(e for f in items if f.fix is not None for e in f.fix.edits))
        out[path] = (original, apply_edits(original, edits), encoding)
    return out


def diff_of(finding: Finding, read: Callable[[str], str | None],
            name: Callable[[str], str] = str, context: int = 3) -> str | None:
    """The unified diff of one finding's fix, its files' texts from ``read`` (display path
    -> text) and named in the diff by ``name``; None when it has no fix or a file cannot
    be read."""
    if finding.fix is None:
        return None
    by_path: dict[str, list[TextEdit]] = defaultdict(list)
    for e in finding.fix.edits:
        by_path[e.span.path].append(e)
    out = []
    for path, edits in sorted(by_path.items()):
        original = read(path)
        if original is None:
            return None
        out.append(unified_diff(name(path), original, apply_edits(original, edits), context))
    return "".join(out)


def unified_diff(path: str, original: str, fixed: str, context: int = 3) -> str:
    def lines(text):
        out = text.splitlines(keepends=True)
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n\\ No newline at end of file\n"
        return out
    return "".join(difflib.unified_diff(lines(original), lines(fixed),
                                        fromfile=f"a/{path}", tofile=f"b/{path}", n=context))
