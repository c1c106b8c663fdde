"""Types the project's code gives a receiver, beyond assignments: a module name annotated
with a class and set later, a package's submodule reached as an attribute, a classmethod
that builds ``cls(...)``, a method locking the instance's own file. Each spelling must give
the lock at the job's use site, as the plain spelling does."""
import pytest

from conftest import run_analysis

GUARD = '''import fcntl
import os


class FileGuard:
    def __init__(self, fd, path):
        self.fd = fd
        self.path = path

    @classmethod
    def open(cls, path):
        return cls(os.open(path, os.O_RDWR | os.O_CREAT, 0o644), path)

    def exclusive(self):
        fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
'''

STATE = '''from __future__ import annotations

from typing import Optional

from app.guard import FileGuard

{declaration}


def init():
    global guard
    guard = FileGuard.open("/var/lock/sync.lock")
'''

JOB = '''{imports}


def main():
    {setup}
    {use}
    print("syncing")


if __name__ == "__main__":
    main()
'''

SPELLINGS = {
    "constructor": ("from app.guard import FileGuard", "import os",
                    "g = FileGuard(os.open('/var/lock/sync.lock', os.O_RDWR), 'x')\n"
                    "    g.exclusive()"),
    "classmethod factory": ("from app.guard import FileGuard", "pass",
                            "g = FileGuard.open('/var/lock/sync.lock')\n    g.exclusive()"),
    "chained": ("from app.guard import FileGuard", "pass",
                "FileGuard.open('/var/lock/sync.lock').exclusive()"),
    "annotated global": ("from app import state", "state.init()", "state.guard.exclusive()"),
    "package attribute": ("import app", "app.state.init()", "app.state.guard.exclusive()"),
}


@pytest.mark.parametrize("declaration", ["guard: FileGuard | None = None",
                                         "guard: Optional[FileGuard] = None",
                                         "guard: FileGuard"])
@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_the_lock_is_taken_where_the_job_uses_it(write_tree, spelling, declaration):
    imports, setup, use = SPELLINGS[spelling]
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/guard.py": GUARD,
        "app/state.py": STATE.format(declaration=declaration),
        "jobs/sync.py": JOB.format(imports=imports, setup=setup, use=use),
    }
    root = write_tree(files)
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    assert [(lock.kind, lock.span.path) for lock in job.all_locks] == [("flock", "jobs/sync.py")]
    assert not [f for f in analysis.findings if f.rule == "JOB101"]


@pytest.mark.parametrize("declaration", ["guard: int | None = None", "guard: Any = None",
                                         "guard = None"])
def test_an_annotation_that_names_no_lock_class_gives_no_lock(write_tree, declaration):
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/guard.py": GUARD,
        "app/state.py": "from typing import Any\n\n" + declaration + "\n",
        "jobs/sync.py": JOB.format(imports="from app import state", setup="pass",
                                   use="state.guard.exclusive()"),
    }
    root = write_tree(files)
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    assert not list(job.all_locks)
    assert [f.rule for f in analysis.findings] == ["JOB101"]


INSTANCE = '''import fcntl


class Instance:
    def __init__(self, path, flock=False, dry_run=False):
        self.path = path
        if flock:
            self.serialise()
        if not dry_run:
            self.serialise()

    def serialise(self):
        self.fh = open(self.path + ".flock", "w")
        fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
'''


@pytest.mark.parametrize("arguments, taken", [
    ("flock=True, dry_run=True", 1),   # the first branch runs
    ("dry_run=True", 0),               # flock defaults to False: neither runs
    ("True, True", 1),                 # positionally
    ("flock=False", 1),                # dry_run defaults to False: the second runs
    ("flock=options.flock, dry_run=True", 1),  # not known: it may
    ("dry_run=True, **{'flock': True}", 1),   # keywords passed along: not decided
])
def test_a_branch_on_a_parameter_runs_as_the_call_says(write_tree, arguments, taken):
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/instance.py": INSTANCE,
        "jobs/sync.py": JOB.format(imports="import sys\nfrom app.instance import Instance",
                                   setup="options = sys.argv",
                                   use=f"Instance('/var/lock/sync', {arguments})"),
    }
    root = write_tree(files)
    [job] = run_analysis(root).project.jobs
    assert len({lock.span for lock in job.all_locks}) == (1 if taken else 0)


def test_a_value_read_through_many_functions_reads_each_part_once(write_tree, monkeypatch):
    """A flag given through a chain of helpers, each keeping what the next returns in a
    local it may assign again (``t = f2(x)``, ``if not t: t = f2(x)``): every part of the
    reading is read once, not once per path to it (2 ** 7 paths here, 638 parts read
    before), and the value is the one the chain returns."""
    from pathlib import Path

    from jobsafe.discover import SourceFile
    from jobsafe.sources.python import semantics
    from jobsafe.sources.python.index import PythonIndex
    from jobsafe.sources.python.symbols import Const, Global

    levels = 7  # (deeper, the reading stops at its depth bound)
    chain = "".join(f"def f{i}(x):\n    t = f{i + 1}(x)\n    if not t:\n"
                    f"        t = f{i + 1}(x)\n    return t\n\n\n" for i in range(levels))
    source = f"{chain}def f{levels}(x):\n    return 60\n\n\nTTL = f0(True)\n"
    root = write_tree({"app/__init__.py": "", "app/chain.py": source})
    index = PythonIndex({rel: SourceFile(str(Path(root) / rel), rel, rel, "python")
                         for rel in ("app/__init__.py", "app/chain.py")},
                        lambda f: Path(f.abs).read_text())
    index.module("app/chain.py")
    reads = []
    read = semantics.Semantics._constant
    monkeypatch.setattr(semantics.Semantics, "_constant",
                        lambda self, *args: reads.append(args) or read(self, *args))
    where = semantics.Where("app/chain.py")
    assert index.semantics.constant(Global("TTL"), where) == Const(60)
    assert len(reads) < 6 * levels
    # a second reading is a reading of its own (what it read may have changed since)
    before = len(reads)
    assert index.semantics.constant(Global("TTL"), where) == Const(60)
    assert len(reads) == 2 * before


@pytest.mark.parametrize("package, taken", [(False, 1), (True, 0)])
def test_a_script_imports_its_neighbours(write_tree, package, taken):
    """A folder of scripts (no ``__init__.py``) runs with itself on ``sys.path``: ``from
    guard import FileGuard`` is the file beside it. In a package it would be a top-level
    module of that name, which the tree does not have."""
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/common/sync.py\n",
        "common/guard.py": GUARD,
        "common/sync.py": JOB.format(imports="from guard import FileGuard", setup="pass",
                                     use="FileGuard.open('/var/lock/sync.lock').exclusive()"),
    }
    if package:
        files["common/__init__.py"] = ""
    root = write_tree(files)
    [job] = run_analysis(root).project.jobs
    assert [lock.span.path for lock in job.all_locks] == ["common/sync.py"] * taken


LOCK_DIR = '''import fcntl
import os
from contextlib import contextmanager


def _take_any(fds):
    for fd in fds:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            pass
    return False


@contextmanager
def lock_dir(directory, limit=2):
    fds = [os.open(f"{directory}/.lock-{i}", os.O_WRONLY | os.O_CREAT) for i in range(limit)]
    try:
        while not _take_any(fds):
            pass
        yield True
    finally:
        for fd in fds:
            os.close(fd)
'''


def test_a_helper_locking_one_of_the_callers_files_is_held_by_the_caller(write_tree):
    """swift's lock_path: the flock is taken on one of the file descriptors the manager
    opened and handed to a helper; the manager holds it while it yields."""
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/locking.py": LOCK_DIR,
        "jobs/sync.py": JOB.format(imports="from app.locking import lock_dir", setup="pass",
                                   use="with lock_dir('/var/lock/sync'):\n        pass"),
    }
    root = write_tree(files)
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    assert [(lock.kind, lock.span.path, lock.release) for lock in job.all_locks] == [
        ("flock", "jobs/sync.py", "with")]
    assert not [f for f in analysis.findings if f.rule == "JOB101"]


STAR_LOCK = '''import fcntl


class FileLock:
    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.fh = open(self.path, "w")
        fcntl.flock(self.fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return self

    def __exit__(self, *exc):
        self.fh.close()
'''


@pytest.mark.parametrize("imports, use", [
    # a package that re-exports its modules whole (``from .filelock import *``)
    ("from app import locks", "locks.FileLock(locks.LOCK_PATH)"),
    ("from app.locks import FileLock, LOCK_PATH", "FileLock(LOCK_PATH)"),
    ("import app.locks as L", "L.FileLock(L.LOCK_PATH)"),
])
def test_a_package_star_re_export_gives_the_lock(write_tree, imports, use):
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "",
        "app/locks/__init__.py": "from .filelock import *\nfrom app.locks.paths import *\n",
        "app/locks/filelock.py": STAR_LOCK,
        "app/locks/paths.py": 'LOCK_PATH = "/var/run/sync.lock"\n',
        "jobs/sync.py": f'{imports}\n\n\ndef main():\n    with {use}:\n        print("w")\n\n\n'
                        'if __name__ == "__main__":\n    main()\n',
    })
    [job] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.span.path, lock.path) for lock in job.all_locks] == \
        [("flock", "jobs/sync.py", "/var/run/sync.lock")]


def test_a_star_import_cycle_ends(write_tree):
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/a.py": "from app.b import *\n",
        "app/b.py": "from app.a import *\n",
        "jobs/sync.py": 'from app import a\n\n\ndef main():\n    with a.Missing("/x"):\n'
                        '        print("w")\n\n\nif __name__ == "__main__":\n    main()\n',
    })
    [job] = run_analysis(root).project.jobs
    assert not job.all_locks
