"""``--format markdown``: a table for pull-request comments and wiki pages."""
from __future__ import annotations

import html

from ..analysis import Analysis
from ..catalog import DOCS_URL
from . import summary


def cell(text: str) -> str:
    """Table-safe: no HTML, no pipe or newline that breaks the row, no code spans."""
    text = html.escape(text, quote=False)
    return text.replace("|", "\\|").replace("`", "\\`").replace("\r", " ").replace("\n", " ")


def render_markdown(analysis: Analysis) -> str:
    s = summary(analysis)
    out = ["## jobsafe", ""]
    if not analysis.findings:
        out.append(f"No findings in {s['files']} files ({s['jobs']} scheduled jobs).")
        return "\n".join(out) + "\n"
    out.append(f"{s['findings']} findings in {s['files']} files ({s['jobs']} scheduled jobs).")
    out += ["", "| Severity | Rule | Location | Message |", "|---|---|---|---|"]
    for f in analysis.findings:
        rule = f"[{f.rule}]({DOCS_URL}{f.rule}-{f.name}) {cell(f.name)}"
        where = cell(f"{f.span.path}:{f.span.line}")
        out.append(f"| {f.severity.value} | {rule} | {where} | {cell(f.message)} |")
    return "\n".join(out) + "\n"
