"""``--format text``: findings grouped by file, each with its source line; a summary.

Colour only on a terminal and without ``NO_COLOR`` (rich's own rules). File content is
printed as text, never interpreted as markup. On a terminal, messages wrap to its width
with a hanging indent and source lines are clipped to it; in a pipe each finding stays on
one line, for grep.
"""
from __future__ import annotations

import re
import textwrap
from collections import Counter
from itertools import groupby

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..analysis import Analysis
from ..model import Finding, Span
from . import summary

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}
_TAB = 4
#: the gutter before a source line: "    1234 | "
_GUTTER = 11
#: a source line's length in a pipe, where nothing says how wide the reader is
_PIPE_WIDTH = 200
#: the first token of a line: a YAML or unit-file key (``schedule:``, ``ExecStart=``) or word
_TOKEN = re.compile(r"\s*(-\s+)?([^\s:=]+)")


def plural(n: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def caret(source: str, span: Span) -> tuple[int, int]:
    """The 0-based columns (start, end) of ``source`` to mark: the span's own columns,
    except where the span is a whole ``key: value`` / ``Key=value`` line (YAML, unit
    files) or has no width: then the key, or the first word from its column on."""
    start = max(0, min(span.column - 1, len(source)))
    end = min(span.end_column - 1 if span.end_line == span.line else len(source.rstrip()),
              len(source))
    token = _TOKEN.match(source, start)
    whole_line = start <= len(source) - len(source.lstrip()) and end >= len(source.rstrip())
    keyed = token is not None and source[token.end(2):token.end(2) + 1] in (":", "=")
    if end > start and not (whole_line and keyed):
        return start, end
    return (token.start(2), token.end(2)) if token else (start, start + 1)


def _display_column(source: str, index: int) -> int:
    """Where character ``index`` of ``source`` shows once tabs are expanded."""
    return len(source[:index].expandtabs(_TAB))


def excerpt(source: str, span: Span, width: int) -> tuple[str, int, int]:
    """The source line as shown in ``width`` columns (tabs expanded, clipped with "…"
    around the marked token) and the display columns (start, length) of the caret."""
    start, end = caret(source, span)
    shown = source.rstrip().expandtabs(_TAB)
    first, last = _display_column(source, start), _display_column(source, end)
    offset = 0
    if len(shown) > width:
        if last > width - 1:  # slide the window so the token shows
            offset = max(0, min(first - width // 3, len(shown) - width + 1))
        shown = shown[offset:offset + width - (1 if offset else 0)]
        if offset:
            shown = "…" + shown[1:]
        if offset + len(shown) < len(source.rstrip().expandtabs(_TAB)):
            shown = shown[:-1] + "…"
    length = max(1, min(last, offset + len(shown)) - first)
    return shown, first - offset, length


_NBSP = "\u00a0"
_CODE = re.compile(r"`[^`]*`")


def wrap(text: str, width: int, indent: str, rest: str) -> list[str]:
    """``text`` in lines of ``width``: words are not broken (a long path stays whole) and
    neither is code in backticks (a schedule such as `30 2 * * *`)."""
    kept = _CODE.sub(lambda m: m.group(0).replace(" ", _NBSP), text)
    return [line.replace(_NBSP, " ") for line in textwrap.wrap(
        kept, width, initial_indent=indent, subsequent_indent=rest, break_long_words=False,
        break_on_hyphens=False)] or [indent]


def _location(f: Finding) -> str:
    return f"{f.span.path}:{f.span.line}:{f.span.column}: "


def _finding_line(f: Finding, fixable: bool) -> str:
    return f"{_location(f)}{f.rule}{' [*]' if fixable else ''} {f.name} {f.message}"


def _styled(line: str, f: Finding) -> str:
    """Markup for the first line of a finding: the rule id in its severity's colour."""
    head = _location(f) + f.rule
    if not line.startswith(head):
        return escape(line)
    return f"{escape(_location(f))}[{_STYLE[f.severity.value]}]{f.rule}[/]{escape(line[len(head):])}"


def print_text(analysis: Analysis, console: Console, line_text, quiet: bool = False,
               statistics: bool = False, unsafe_fixes: bool = False) -> None:
    findings = analysis.findings
    wrap_lines = console.is_terminal
    width = console.width if wrap_lines else _PIPE_WIDTH

    def applies(f: Finding) -> bool:
        return f.fix is not None and (unsafe_fixes or f.fix.applicability == "safe")

    for path, group in groupby(findings, key=lambda f: f.span.path):
        if not quiet:
            console.print(f"[bold underline]{escape(path)}[/]")
        for f in group:
            line = _finding_line(f, applies(f))
            lines = wrap(line, width, "  ", "        ") if wrap_lines else ["  " + line]
            for i, part in enumerate(lines):
                console.print("  " + _styled(part[2:], f) if i == 0 else escape(part),
                              soft_wrap=True)
            if quiet:
                continue
            source = line_text(f.span.path, f.span.line)
            if source is not None:
                shown, at, length = excerpt(source, f.span, max(20, width - _GUTTER))
                console.print(f"    [dim]{f.span.line:>4} |[/] {escape(shown)}", soft_wrap=True)
                console.print(" " * (_GUTTER + at) + f"[{_STYLE[f.severity.value]}]"
                              + "^" * length + "[/]", soft_wrap=True)
            for r in f.related:
                note = f"{r.span.path}:{r.span.line}: {r.message}"
                for part in wrap(note, width, "      ", "        ") if wrap_lines else [
                        "      " + note]:
                    console.print(f"[dim]{escape(part)}[/]", soft_wrap=True)
        if not quiet:
            console.print()
    if quiet:
        return  # findings only
    if statistics and findings:
        table = Table(show_header=True, header_style="bold", box=None)
        for col in ("count", "rule", "name"):
            table.add_column(col)
        counts = Counter((f.rule, f.name) for f in findings)
        for (rule, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            table.add_row(str(n), rule, name)
        console.print(table)
    s = summary(analysis)
    where = f"in {plural(s['files'], 'file')}, {plural(s['jobs'], 'scheduled job')}."
    if findings:
        sev = Counter(f.severity.value for f in findings)
        levels = ", ".join(plural(sev[k], k) if k != "info" else f"{sev[k]} info"
                           for k in ("error", "warning", "info") if sev[k])
        console.print(f"[bold]Found {plural(s['findings'], 'finding')}[/] ({levels}) {where}")
    else:
        console.print(f"[green]No findings[/] {where}")
    if analysis.suppressed:
        console.print(f"[dim]{len(analysis.suppressed)} suppressed.[/]")
    if analysis.baselined:
        console.print(f"[dim]{plural(len(analysis.baselined), 'finding')} in the baseline.[/]")
    for path, reason in sorted(analysis.project.skipped):
        console.print(f"[dim]note: {escape(path)} not analysed: {escape(reason)}[/]",
                      soft_wrap=True)
    fixable = sum(1 for f in findings if applies(f))
    hidden = sum(1 for f in findings if f.fix is not None and not applies(f))
    if fixable or hidden:
        parts: list[str] = []
        if fixable:
            parts.append(f"[*] {fixable} fixable with the `--fix` option")
        if hidden:
            parts.append(f"{hidden} hidden fix{'' if hidden == 1 else 'es'} can be enabled "
                         f"with the `--unsafe-fixes` option")
        console.print(escape(parts[0] if len(parts) == 1 else f"{parts[0]} ({parts[1]})"),
                      soft_wrap=True)
