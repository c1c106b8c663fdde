"""Output formats for findings. Each module renders an ``Analysis`` to text."""
from __future__ import annotations

from collections import Counter

from .. import __version__
from ..analysis import Analysis

FORMATS = ("text", "json", "sarif", "github", "markdown")


def summary(analysis: Analysis) -> dict:
    by_rule = Counter(f.rule for f in analysis.findings)
    return {
        "files": analysis.files_read,
        "jobs": len(analysis.project.jobs),
        "findings": len(analysis.findings),
        "parse_errors": sum(1 for f in analysis.findings if f.rule == "JOB900"),
        "by_rule": dict(sorted(by_rule.items())),
        "skipped": [{"path": path, "reason": reason}
                    for path, reason in sorted(analysis.project.skipped)],
    }


def render(fmt: str, analysis: Analysis, **options) -> str:
    if fmt == "json":
        from .json import render_json
        return render_json(analysis)
    if fmt == "sarif":
        from .sarif import render_sarif
        return render_sarif(analysis, **options)
    if fmt == "github":
        from .github import render_github
        return render_github(analysis)
    if fmt == "markdown":
        from .markdown import render_markdown
        return render_markdown(analysis)
    raise ValueError(fmt)


__all__ = ["FORMATS", "render", "summary", "__version__"]
