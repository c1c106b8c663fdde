"""Line-free fingerprints and baseline files.

A fingerprint hashes the rule, the file's path relative to the project root, the text of
the flagged line (whitespace folded) and the occurrence number of that same text in the
file. Moving lines or editing other lines does not change it; editing the flagged line
does; where jobsafe is run from does not.

A baseline file records, for each finding, its fingerprint and its path relative to the
baseline file's own folder (as PHPStan's baselines do), so the same baseline matches
whether jobsafe runs in the repository, above it, or in a subfolder.
"""
from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable

from .model import Finding

BASELINE_VERSION = 2


def assign_fingerprints(findings: list[Finding], line_text: Callable[[str, int], str | None],
                        project_path: Callable[[str], str]) -> None:
    """``line_text(path, line)``: the source line or None; ``project_path(path)``: a
    display path made relative to the project root."""
    seen: Counter = Counter()
    for f in sorted(findings, key=lambda f: f.sort_key):
        text = line_text(f.span.path, f.span.line)
        content = " ".join(text.split()) if text is not None else f.message
        key = (f.rule, project_path(f.span.path), content)
        seen[key] += 1
        raw = "\0".join((*key, str(seen[key])))
        f.fingerprint = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _identity(path: str, fingerprint: str, cwd: str) -> tuple[str, str]:
    return os.path.normpath(os.path.join(cwd, path)), fingerprint


def write_baseline(path: str, findings: list[Finding], cwd: str) -> None:
    """Record ``findings`` (display paths relative to ``cwd``) in the baseline ``path``;
    OSError when it cannot be written."""
    folder = os.path.dirname(os.path.realpath(path))
    entries = sorted(
        ({"path": os.path.relpath(os.path.join(cwd, f.span.path), folder).replace(os.sep, "/"),
          "rule": f.rule, "fingerprint": f.fingerprint} for f in findings),
        key=lambda e: (e["path"], e["rule"], e["fingerprint"]))
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"version": BASELINE_VERSION, "tool": "jobsafe", "findings": entries}, fh,
                  indent=2)
        fh.write("\n")


class BaselineError(Exception):
    pass


class Baseline:
    """The findings a baseline file knows, by (absolute path, fingerprint); ``cwd``: the
    folder the display paths of the findings to match are relative to."""

    def __init__(self, known: set[tuple[str, str]], cwd: str):
        self.known, self.cwd = known, cwd

    @classmethod
    def read(cls, path: str, cwd: str) -> "Baseline":
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
            version = data.get("version")
            entries = data["findings"]
            if version != BASELINE_VERSION:
                raise BaselineError(
                    f"{path}: a version {version} baseline (its paths depended on the folder "
                    f"it was written from); write it again with --write-baseline")
            folder = os.path.dirname(os.path.realpath(path))
            return cls({_identity(e["path"], e["fingerprint"], folder) for e in entries}, cwd)
        except BaselineError:
            raise
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            raise BaselineError(f"{path}: not a jobsafe baseline file ({exc})") from None

    def knows(self, finding: Finding) -> bool:
        return _identity(finding.span.path, finding.fingerprint, self.cwd) in self.known
