"""A lock function handed to a helper that calls it (``retry(acquire_lock, name)``): the lock
is the job's, however the function is handed over; a helper handed something that takes no
lock gives none. (Before, a call of a parameter was named after the parameter, so the
helper was never followed.)"""
from __future__ import annotations

import pytest

from conftest import run_analysis

LOCKS = '''import fcntl


def acquire_lock(path):
    fh = open(path, "w")
    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fh


def tidy(text):
    return text.strip()
'''

HELPERS = '''
def call(fn):
    return fn("/run/app.lock")


def call_with(*, action=None):
    return action("/run/app.lock")


def call_later(fn):
    return fn()


def retry(func, *func_args):
    done = None
    while not done:
        done = func(*func_args)
    return done


def with_retries(fn):
    return retry(fn, "/run/app.lock")


class Runner:
    def __init__(self, fn):
        self.fn = fn

    def go(self):
        return self.fn("/run/app.lock")
'''

JOB = '''import functools
import sys

from app import locks
from app.locks import acquire_lock, tidy


def job():
    {body}
    print("working", held)


if __name__ == "__main__":
    job()
    sys.exit(0)
'''

HANDED = {
    "positionally": "held = locks.call(acquire_lock)",
    "by keyword": "held = locks.call_with(action=acquire_lock)",
    "in a lambda": "held = locks.call_later(lambda: acquire_lock('/run/app.lock'))",
    "with its arguments (a retry helper)":
        "held = locks.retry(acquire_lock, '/run/app.lock')",
    "to a helper that hands it on": "held = locks.with_retries(acquire_lock)",
    "as a partial": "held = locks.call_later(functools.partial(acquire_lock, '/run/app.lock'))",
    "to an object's constructor": "held = locks.Runner(acquire_lock).go()",
    "to an object kept in a local": "runner = locks.Runner(acquire_lock)\n    held = runner.go()",
}


def _job(write_tree, body: str):
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/job.py\n",
                       "app/__init__.py": "", "app/locks.py": LOCKS + HELPERS,
                       "jobs/job.py": JOB.format(body=body)})
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    return [(lock.kind, lock.span.path) for lock in job.all_locks], \
        sorted({f.rule for f in analysis.findings})


@pytest.mark.parametrize("how", sorted(HANDED))
def test_a_lock_function_handed_to_a_helper_is_the_jobs_lock(write_tree, how):
    locks, rules = _job(write_tree, HANDED[how])
    assert locks == [("flock", "jobs/job.py")]
    assert "JOB101" not in rules


@pytest.mark.parametrize("call", ["locks.call(tidy)", "locks.call(len)",
                                  "locks.retry(tidy, ' x ')", "locks.with_retries(tidy)",
                                  "locks.Runner(tidy).go()",
                                  "locks.call_later(functools.partial(tidy, ' x '))"])
def test_a_helper_handed_no_lock_gives_none(write_tree, call):
    locks, rules = _job(write_tree, f"held = {call}")
    assert locks == []
    assert "JOB101" in rules  # unguarded, as without the helper


#: a job script that takes its lock through an error-handling helper, as cron scripts do:
#: the helper is handed a partial of the lock function
GUARDED_SCRIPT = '''import fcntl
import logging
import sys
from functools import partial

LOCK_PATH = "/run/minutely.lock"


def take_lock(path):
    fh = open(path, "w")
    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fh


def or_exit(func, errors, code):
    try:
        return func()
    except errors as exc:
        logging.warning("%s: %s", func, exc)
        raise SystemExit(code)


def main():
    fh = or_exit(partial(take_lock, LOCK_PATH), BlockingIOError, 0)
    try:
        print("work")
    finally:
        fh.close()


if __name__ == "__main__":
    sys.exit(main())
'''


def test_a_partial_of_the_lock_handed_to_an_error_helper_guards_the_job(write_tree):
    root = write_tree({"crontab": "* * * * * python3 /srv/app/minutely.py\n",
                       "app/minutely.py": GUARDED_SCRIPT})
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    assert [(lock.kind, lock.path) for lock in job.all_locks] == [("flock", "/run/minutely.lock")]
    assert [f.rule for f in analysis.findings] == ["JOB104"]  # guarded, with no time limit


#: a retry helper in a module with no lock word (the prefilter passes over it)
UTILS = '''import time


def retry(func, *func_args):
    for _ in range(3):
        done = func(*func_args)
        if done:
            return done
        time.sleep(1)
    return None
'''

UTILS_JOB = '''import sys

from app import utils
from app.locks import acquire_lock, tidy


def job():
    held = utils.retry({handed}, "/run/app.lock")
    print("working", held)


if __name__ == "__main__":
    job()
    sys.exit(0)
'''


@pytest.mark.parametrize("handed, locks", [("acquire_lock", [("flock", "jobs/job.py")]),
                                           ("tidy", [])])
def test_a_helper_of_a_module_with_no_lock_word(write_tree, handed, locks):
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/job.py\n",
                       "app/__init__.py": "", "app/locks.py": LOCKS, "app/utils.py": UTILS,
                       "jobs/job.py": UTILS_JOB.format(handed=handed)})
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    assert [(lock.kind, lock.span.path) for lock in job.all_locks] == locks
    assert ("JOB101" in {f.rule for f in analysis.findings}) == (not locks)
