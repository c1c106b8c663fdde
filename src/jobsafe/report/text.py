"""``--format text``: findings grouped by file, each with its source line; a summary.

Colour only on a terminal and without ``NO_COLOR`` (rich's own rules). File content is
printed as text, never interpreted as markup.
"""
from __future__ import annotations

from collections import Counter
from itertools import groupby

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..analysis import Analysis
from . import summary

_STYLE = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def print_text(analysis: Analysis, console: Console, line_text, quiet: bool = False,
               statistics: bool = False) -> None:
    findings = analysis.findings
    for path, group in groupby(findings, key=lambda f: f.span.path):
        if not quiet:
            console.print(f"[bold underline]{escape(path)}[/]")
        for f in group:
            s = f.span
            style = _STYLE[f.severity.value]
            console.print(f"  {escape(path)}:{s.line}:{s.column}: [{style}]{f.rule}[/] "
                          f"[dim]{f.name}[/] {escape(f.message)}", soft_wrap=True)
            if quiet:
                continue
            source = line_text(s.path, s.line)
            if source is not None:
                shown = source.expandtabs(4).rstrip()
                console.print(f"    [dim]{s.line:>4} |[/] {escape(shown[:200])}", soft_wrap=True)
                width = max(1, (s.end_column - s.column) if s.end_line == s.line else 1)
                console.print(" " * (11 + s.column - 1) + f"[{style}]" + "^" * min(width, 120)
                              + "[/]", soft_wrap=True)
            for r in f.related:
                console.print(f"      [dim]{escape(r.span.path)}:{r.span.line}: "
                              f"{escape(r.message)}[/]", soft_wrap=True)
        if not quiet:
            console.print()
    if statistics and findings:
        table = Table(show_header=True, header_style="bold", box=None)
        for col in ("count", "rule", "name"):
            table.add_column(col)
        counts = Counter((f.rule, f.name) for f in findings)
        for (rule, name), n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
            table.add_row(str(n), rule, name)
        console.print(table)
    if quiet and not findings:
        return
    s = summary(analysis)
    sev = Counter(f.severity.value for f in findings)
    if findings:
        parts = ", ".join(f"{sev[k]} {k}{'s' if sev[k] > 1 and k != 'info' else ''}"
                          for k in ("error", "warning", "info") if sev[k])
        console.print(f"[bold]Found {s['findings']} finding{'s' if s['findings'] != 1 else ''}[/] "
                      f"({parts}) in {s['files']} files, {s['jobs']} scheduled jobs.")
    else:
        console.print(f"[green]No findings[/] in {s['files']} files, {s['jobs']} scheduled jobs.")
    if analysis.suppressed:
        console.print(f"[dim]{len(analysis.suppressed)} suppressed.[/]")
