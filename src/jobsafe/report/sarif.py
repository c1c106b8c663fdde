"""``--format sarif``: SARIF 2.1.0 for code-scanning services."""
from __future__ import annotations

import json
import os
from pathlib import Path

from .. import __version__
from ..analysis import Analysis
from ..catalog import DOCS_URL, load_docs
from ..model import Finding, Span
from ..rules import all_rules

_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _location(span: Span) -> dict:
    return {"physicalLocation": {
        "artifactLocation": {"uri": span.path, "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": span.line, "startColumn": span.column,
                   "endLine": span.end_line, "endColumn": max(span.end_column, span.column)},
    }}


def _folder_uri(folder: str) -> str:
    """An absolute ``file:`` URI ending in ``/``, as SARIF requires of a base id."""
    uri = Path(os.path.abspath(folder)).as_uri()
    return uri if uri.endswith("/") else uri + "/"


def _rules() -> list[dict]:
    docs = load_docs()
    out = []
    for rule_id, rule in all_rules().items():
        doc = docs.get(rule_id)
        help_text = doc.section("What it flags") if doc else rule.summary
        fix = doc.section("Use instead") if doc else ""
        out.append({
            "id": rule_id,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": help_text or rule.summary},
            "help": {"text": (help_text + ("\n\n" + fix if fix else "")) or rule.summary,
                     "markdown": doc.body if doc else rule.summary},
            "helpUri": doc.url if doc else f"{DOCS_URL}{rule_id}-{rule.name}",
            "defaultConfiguration": {"level": _LEVEL[rule.severity.value]},
            "properties": {"tags": list(rule.sources)},
        })
    return out


def _result(f: Finding, index: dict[str, int], baseline: bool) -> dict:
    result = {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": _LEVEL[f.severity.value],
        "message": {"text": f.message},
        "locations": [_location(f.span)],
        "partialFingerprints": {"jobsafe/v1": f.fingerprint},
        "properties": {"confidence": f.confidence.value},
    }
    if f.related:
        result["relatedLocations"] = [
            {"id": i, **_location(r.span), "message": {"text": r.message}}
            for i, r in enumerate(f.related, 1)]
    if f.fix is not None:
        result["fixes"] = [{
            "description": {"text": f.fix.message},
            "properties": {"applicability": f.fix.applicability},
            "artifactChanges": [{
                "artifactLocation": {"uri": e.span.path, "uriBaseId": "%SRCROOT%"},
                "replacements": [{
                    "deletedRegion": {"startLine": e.span.line, "startColumn": e.span.column,
                                      "endLine": e.span.end_line, "endColumn": e.span.end_column},
                    "insertedContent": {"text": e.text}}],
            } for e in f.fix.edits],
        }]
    if f.suppressed is not None:
        sup = {"kind": "inSource", "status": "accepted"}
        if f.suppressed:
            sup["justification"] = f.suppressed
        result["suppressions"] = [sup]
    if baseline:
        result["baselineState"] = f.baseline_state or "new"
    return result


def render_sarif(analysis: Analysis, baseline: bool = False) -> str:
    rules = _rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    shown = analysis.findings + analysis.suppressed + analysis.baselined
    results = [_result(f, index, baseline) for f in sorted(shown, key=lambda f: f.sort_key)]
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "jobsafe", "version": __version__,
                                "semanticVersion": __version__,
                                "informationUri": DOCS_URL.rsplit("/rules/", 1)[0],
                                "rules": rules}},
            # result paths are relative to the working directory: the base is its file URI
            "originalUriBaseIds": {"%SRCROOT%": {"uri": _folder_uri(analysis.cwd)}},
            "results": results,
            "columnKind": "unicodeCodePoints",
        }],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
