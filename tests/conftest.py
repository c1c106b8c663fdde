import os
from pathlib import Path

import pytest

from jobsafe.analysis import analyse
from jobsafe.config import Settings
from jobsafe.errors import RAISE_ENV
from jobsafe.rules import all_rules

FIXTURES = Path(__file__).parent / "fixtures"
#: the fixture repositories (a cache folder a local run leaves there is not one)
FIXTURE_CASES = sorted(p.name for p in FIXTURES.iterdir()
                       if p.is_dir() and not p.name.startswith("."))
#: the SARIF 2.1.0 schema (OASIS), vendored so validation runs in every clean clone
SARIF_SCHEMA = Path(__file__).parent / "schemas" / "sarif-2.1.0.json"

# Fail closed: in the tests, a bug in a front end or a rule raises (jobsafe.errors); the
# tests of the fail-open path outside the suite switch it off for themselves.
os.environ[RAISE_ENV] = "1"


def run_analysis(root, settings=None, rules=None, paths=None):
    """Analyse a tree with every rule (or ``rules``), from inside ``root``."""
    settings = settings or Settings()
    old = os.getcwd()
    os.chdir(root)
    try:
        return analyse(paths or ["."], settings, sorted(rules or all_rules()))
    finally:
        os.chdir(old)


@pytest.fixture(autouse=True)
def _cache_outside_the_repository(tmp_path_factory, monkeypatch):
    """CLI runs in the tests cache their results in a temporary folder, not in fixtures."""
    monkeypatch.setenv("JOBSAFE_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "home"))


@pytest.fixture
def write_tree(tmp_path):
    """Write {relative path: text or bytes} under a temporary root and return it."""
    def write(files):
        for rel, content in files.items():
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return tmp_path
    return write
