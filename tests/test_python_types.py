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
    "annotated global": ("from app import state", "state.init()", "state.guard.exclusive()"),
    "package attribute": ("import app", "app.state.init()", "app.state.guard.exclusive()"),
}


@pytest.mark.parametrize("declaration", ["guard: FileGuard | None = None",
                                         "guard: Optional[FileGuard] = None",
                                         "guard: FileGuard"])
@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_the_lock_is_taken_where_the_job_uses_it(tmp_path, spelling, declaration):
    imports, setup, use = SPELLINGS[spelling]
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/guard.py": GUARD,
        "app/state.py": STATE.format(declaration=declaration),
        "jobs/sync.py": JOB.format(imports=imports, setup=setup, use=use),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    analysis = run_analysis(tmp_path)
    [job] = analysis.project.jobs
    assert [(lock.kind, lock.span.path) for lock in job.all_locks] == [("flock", "jobs/sync.py")]
    assert not [f for f in analysis.findings if f.rule == "JOB101"]


@pytest.mark.parametrize("declaration", ["guard: int | None = None", "guard: Any = None",
                                         "guard = None"])
def test_an_annotation_that_names_no_lock_class_gives_no_lock(tmp_path, declaration):
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/guard.py": GUARD,
        "app/state.py": "from typing import Any\n\n" + declaration + "\n",
        "jobs/sync.py": JOB.format(imports="from app import state", setup="pass",
                                   use="state.guard.exclusive()"),
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    analysis = run_analysis(tmp_path)
    [job] = analysis.project.jobs
    assert not list(job.all_locks)
    assert [f.rule for f in analysis.findings] == ["JOB101"]
