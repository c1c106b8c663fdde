"""``Semantics.quiet``: a function whose code can take no lock for whoever calls it is not
walked again from every use site. It must never hide a lock: a helper that calls what its
caller passed (a function, an object's method, a decorator factory's argument, an attribute
set from a constructor's argument) may take anything, and one that reaches a lock through
any number of calls is not quiet."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_analysis
from jobsafe.report import render
from jobsafe.sources.python.semantics import Semantics

FIXTURES = Path(__file__).parent / "fixtures"

LOCKS = '''import fcntl


def hold(path):
    fh = open(path, "w")
    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fh


class Guard:
    def take(self):
        return hold("/run/app.lock")
'''

QUIET = '''import re

_SPACES = re.compile(r"\\s+")


def clean(text):
    return _SPACES.sub(" ", text)


def tidy(text):
    return clean(text).strip()
'''

#: the same lock, reached from ``job()`` through a helper of the locking module whose
#: target its caller decides, or through a chain of helpers
THROUGH = {
    "an object's method": ("def run(guard):\n    return guard.take()\n",
                           "locks.run(Guard())"),
    "a keyword argument": ("def run(*, guard=None):\n    return guard.take()\n",
                           "locks.run(guard=Guard())"),
    "an object a constructor keeps": ("class Runner:\n    def __init__(self, guard):\n"
                                      "        self.guard = guard\n\n    def go(self):\n"
                                      "        return self.guard.take()\n",
                                      "locks.Runner(Guard()).go()"),
    "an argument passed on": ("def outer(guard):\n    return inner(guard)\n\n\n"
                              "def inner(g):\n    return g.take()\n",
                              "locks.outer(Guard())"),
    "a chain of helpers": ("def outer(p):\n    return middle(p)\n\n\ndef middle(p):\n"
                           "    return hold(p)\n", "locks.outer('/run/app.lock')"),
}

JOB = '''import sys

from app.locks import Guard, hold
from app import locks
from app.text import tidy


def job():
    tidy(" x ")
    held = {call}
    print("working", held)


if __name__ == "__main__":
    job()
    sys.exit(0)
'''


def _tree(write_tree, helper: str, call: str):
    return write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/job.py\n",
                       "app/__init__.py": "", "app/text.py": QUIET,
                       "app/locks.py": LOCKS + "\n\n" + helper,
                       "jobs/job.py": JOB.format(call=call)})


@pytest.mark.parametrize("way", sorted(THROUGH))
def test_a_lock_behind_a_helper_the_caller_steers_is_taken(write_tree, way):
    helper, call = THROUGH[way]
    analysis = run_analysis(_tree(write_tree, helper, call))
    [job] = analysis.project.jobs
    assert ("flock", "jobs/job.py") in [(lock.kind, lock.span.path) for lock in job.all_locks]
    assert not [f for f in analysis.findings if f.rule == "JOB101"]


@pytest.mark.parametrize("way", sorted(THROUGH))
def test_the_summary_calls_only_lockless_code_quiet(write_tree, way, monkeypatch):
    helper, call = THROUGH[way]
    semantics: list[Semantics] = []
    real = Semantics.quiet

    def noted(self, rel, name, use):
        semantics.append(self)
        return real(self, rel, name, use)

    monkeypatch.setattr(Semantics, "quiet", noted)
    run_analysis(_tree(write_tree, helper, call))
    summary = semantics[0]
    assert summary.quiet("app/text.py", "tidy", "call")  # no lock down there, for anyone
    assert summary.quiet("app/text.py", "clean", "call")
    called = call.split("(")[0].removeprefix("locks.")  # run, outer, Runner
    units = summary.units_of("app/locks.py")
    helpers = [name for name in units if name.split(".")[0] == called]
    assert helpers and not any(summary.quiet("app/locks.py", name, "call")
                               for name in helpers if name != "Runner.__init__")


def _findings(root: Path, monkeypatch, summaries: bool) -> str:
    if not summaries:
        monkeypatch.setattr(Semantics, "quiet", lambda self, rel, name, use: False)
    analysis = run_analysis(root)
    monkeypatch.undo()
    locks = sorted(repr(lock) for lock in analysis.project.code_locks)
    return render("json", analysis) + "\n".join(locks)


@pytest.mark.parametrize("fixture", sorted(
    p.name for p in FIXTURES.iterdir() if p.is_dir() and any(p.rglob("*.py"))))
def test_the_fixtures_find_the_same_with_and_without_summaries(fixture, monkeypatch):
    root = FIXTURES / fixture
    assert _findings(root, monkeypatch, summaries=True) == \
        _findings(root, monkeypatch, summaries=False)
