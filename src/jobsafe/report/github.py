"""``--format github``: workflow commands that annotate the pull request.

Escaped as GitHub's toolkit does, so no file content can end the command early or start
another one: data escapes ``%``, CR and LF; properties also escape ``:`` and ``,``.
"""
from __future__ import annotations

from ..analysis import Analysis

_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}


def escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(analysis: Analysis) -> str:
    lines = []
    for f in analysis.findings:
        s = f.span
        props = ",".join([
            f"file={escape_property(s.path)}", f"line={s.line}", f"col={s.column}",
            f"endLine={s.end_line}", f"endColumn={s.end_column}",
            f"title={escape_property(f.rule + ' ' + f.name)}",
        ])
        lines.append(f"::{_LEVEL[f.severity.value]} {props}::{escape_data(f.message)}")
    return "".join(line + "\n" for line in lines)
