"""A kernel lock taken by calling a ``functools.partial`` of it (``lock = partial(fcntl.flock,
stream.fileno(), LOCK_EX | LOCK_NB)``, then ``lock()``; the unlock spelled the same way), a
spelling real lock helpers use to pick the platform's call once: the same lock, at the same
place, with the same findings as the direct call; a partial of anything else is no lock."""
from __future__ import annotations

import pytest

from conftest import run_analysis

SCRIPT = '''import fcntl
import sys
from contextlib import contextmanager
{imports}


@contextmanager
def exclusive(path):
    with open(path, "a+") as stream:
{bind}
        try:
            {lock}
        except OSError:
            raise SystemExit("busy") from None
        try:
            yield
        finally:
            {unlock}


def main():
    with exclusive("/run/job.lock"):
        print("work")


if __name__ == "__main__":
    sys.exit(main())
'''

DIRECT = dict(imports="", bind="        pass",
              lock="fcntl.flock(stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)",
              unlock="fcntl.flock(stream.fileno(), fcntl.LOCK_UN)")

PARTIALS = {
    "from functools import partial": dict(
        imports="from functools import partial",
        bind="        lock = partial(fcntl.flock, stream.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
             "        unlock = partial(fcntl.flock, stream.fileno(), fcntl.LOCK_UN)",
        lock="lock()", unlock="unlock()"),
    "functools.partial": dict(
        imports="import functools",
        bind="        acquire = functools.partial(fcntl.flock, stream.fileno(),\n"
             "                                    fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
             "        release = functools.partial(fcntl.flock, stream.fileno(), fcntl.LOCK_UN)",
        lock="acquire()", unlock="release()"),
    "an alias, the flags given at the call": dict(
        imports="from functools import partial as bind",
        bind="        lock = bind(fcntl.flock, stream.fileno())",
        lock="lock(fcntl.LOCK_EX | fcntl.LOCK_NB)", unlock="lock(fcntl.LOCK_UN)"),
    "released by closing": dict(
        imports="from functools import partial",
        bind="        lock = partial(fcntl.flock, stream, fcntl.LOCK_EX | fcntl.LOCK_NB)",
        lock="lock()", unlock="stream.close()"),
}


def _job(write_tree, spelling: dict):
    """The job's locks (kind, path, whether it waits, whether at ``main``'s ``with``) and
    the rules that fire."""
    text = SCRIPT.format(**spelling)
    used_at = text.splitlines().index('    with exclusive("/run/job.lock"):') + 1
    root = write_tree({"crontab": "*/5 * * * * python3 /srv/app/job.py\n", "app/job.py": text})
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    locks = [(lock.kind, lock.path, lock.blocking, lock.span.line == used_at)
             for lock in job.all_locks]
    return locks, sorted(f.rule for f in analysis.findings)


@pytest.mark.parametrize("spelling", sorted(PARTIALS))
def test_a_partial_of_flock_is_the_same_lock_as_the_call(write_tree, spelling):
    direct = _job(write_tree, DIRECT)
    assert direct == ([("flock", "/run/job.lock", False, True)], ["JOB104"])
    assert _job(write_tree, PARTIALS[spelling]) == direct


@pytest.mark.parametrize("bind, lock", [
    ("        lock = partial(print, stream.name)", "lock()"),  # a partial of no lock call
    ("        lock = partial(fcntl.flock, stream.fileno(), fcntl.LOCK_UN)", "lock()"),  # unlock
])
def test_a_partial_that_takes_no_lock(write_tree, bind, lock):
    spelling = dict(imports="from functools import partial", bind=bind, lock=lock,
                    unlock="pass")
    locks, rules = _job(write_tree, spelling)
    assert locks == []
    assert "JOB101" in rules
