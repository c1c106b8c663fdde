"""Rule documents (``rules/JOB101-unguarded-job.md``): front matter, sections, examples.

The documents are the single source for ``jobsafe explain``, SARIF help text and the
documentation tests, which run every ``bad`` and ``good`` example through the pipeline.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml

DOCS_URL = "https://jobsafe.dev/rules/"
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.S | re.M)


@dataclass(frozen=True)
class Example:
    language: str  # crontab, sh, dockerfile, python, ...
    verdict: str  # bad | good
    path: str | None  # where the block is written in the example tree
    code: str
    #: blocks next to each other (no prose between) are one example: the files of one tree
    group: int = 0


@dataclass(frozen=True)
class RuleDoc:
    id: str
    name: str
    meta: dict  # the front matter: id, name, severity, sources, fix
    body: str  # Markdown after the front matter
    filename: str
    examples: tuple[Example, ...] = field(default=())

    @property
    def url(self) -> str:
        return DOCS_URL + self.filename.removesuffix(".md")

    def section(self, title: str) -> str:
        m = re.search(rf"^## {re.escape(title)}\s*\n(.*?)(?=^## |\Z)", self.body, re.S | re.M)
        return m.group(1).strip() if m else ""


def docs_dir() -> Path:
    """Installed documents, or the repository's ``rules/`` in a source checkout."""
    packaged = resources.files("jobsafe") / "rules_docs"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "rules"


def parse_doc(filename: str, text: str) -> RuleDoc:
    meta: dict = {}
    body = text
    if text.startswith("---\n"):
        end = text.index("\n---", 4)
        loaded = yaml.safe_load(text[4:end])
        meta = loaded if isinstance(loaded, dict) else {}
        body = text[end + 4:].lstrip("\n")
    examples = []
    group, end = 0, -1
    for fence in _FENCE.finditer(body):
        words = fence.group(1).split()
        if len(words) >= 2 and words[1] in ("bad", "good"):
            if end < 0 or body[end:fence.start()].strip():
                group += 1
            end = fence.end()
            examples.append(Example(words[0], words[1], words[2] if len(words) > 2 else None,
                                    fence.group(2), group))
    return RuleDoc(str(meta.get("id", "")), str(meta.get("name", "")), meta, body, filename,
                   tuple(examples))


@lru_cache(maxsize=1)
def load_docs() -> dict[str, RuleDoc]:
    docs = {}
    directory = docs_dir()
    if directory.is_dir():
        for path in sorted(directory.glob("JOB*.md")):
            doc = parse_doc(path.name, path.read_text(encoding="utf-8"))
            docs[doc.id] = doc
    return docs
