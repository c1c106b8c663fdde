"""``--format json``: the contract of PRODUCT.md, byte-identical across runs."""
from __future__ import annotations

import json

from .. import __version__
from ..analysis import Analysis
from ..model import Finding
from . import summary


def finding_dict(f: Finding) -> dict:
    s = f.span
    data = {
        "rule": f.rule, "name": f.name, "severity": f.severity.value,
        "confidence": f.confidence.value,
        "path": s.path, "line": s.line, "column": s.column,
        "end_line": s.end_line, "end_column": s.end_column,
        "message": f.message, "arguments": f.parts.values(), "job": f.job,
        "related": [{"path": r.span.path, "line": r.span.line, "message": r.message}
                    for r in f.related],
        "fingerprint": f.fingerprint, "fix": fix_dict(f),
    }
    if f.suppressed is not None:
        data["suppression"] = {"reason": f.suppressed}
    return data


def fix_dict(f: Finding) -> dict | None:
    if f.fix is None:
        return None
    return {"message": f.fix.message, "applicability": f.fix.applicability,
            "edits": [{"path": e.span.path, "line": e.span.line, "column": e.span.column,
                       "end_line": e.span.end_line, "end_column": e.span.end_column,
                       "text": e.text} for e in f.fix.edits]}


def render_json(analysis: Analysis) -> str:
    doc = {
        "version": 1,
        "tool": {"name": "jobsafe", "version": __version__},
        "findings": [finding_dict(f) for f in analysis.findings],
        "suppressed": [finding_dict(f) for f in analysis.suppressed],
        "summary": summary(analysis),
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
