"""Assembling the Project: each mixin turns one family of front-end results into jobs and
facts, with the link step. ``analysis.Builder`` combines them."""
from __future__ import annotations


def is_test_path(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1]
    return any(p in ("test", "tests", "testing") for p in parts[:-1]) or \
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"
