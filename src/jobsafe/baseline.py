"""Line-free fingerprints and baseline files.

A fingerprint hashes the rule, the file, the text of the flagged line (whitespace
folded) and the occurrence number of that same text in the file. Moving lines or
editing other lines does not change it; editing the flagged line does.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter

from .model import Finding


def assign_fingerprints(findings: list[Finding], line_text) -> None:
    """``line_text(path, line)`` returns the source line or None."""
    seen: Counter = Counter()
    for f in sorted(findings, key=lambda f: f.sort_key):
        text = line_text(f.span.path, f.span.line)
        content = " ".join(text.split()) if text is not None else f.message
        key = (f.rule, f.span.path, content)
        seen[key] += 1
        raw = "\0".join((*key, str(seen[key])))
        f.fingerprint = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def write_baseline(path: str, findings: list[Finding]) -> None:
    entries = sorted(({"fingerprint": f.fingerprint, "rule": f.rule, "path": f.span.path}
                      for f in findings), key=lambda e: (e["path"], e["rule"], e["fingerprint"]))
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"version": 1, "tool": "jobsafe", "findings": entries}, fh, indent=2)
        fh.write("\n")


class BaselineError(Exception):
    pass


def read_baseline(path: str) -> set[str]:
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return {e["fingerprint"] for e in data["findings"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BaselineError(f"{path}: not a jobsafe baseline file ({exc})") from None
