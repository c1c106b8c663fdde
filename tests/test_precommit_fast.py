"""The pre-commit fast path (``jobsafe.quick``): staged files that cannot change any finding
are answered without analysing the tree — and every case where a file could change one is
analysed in full, with the full run's answer."""
from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

import jobsafe.analysis
from jobsafe.cli import main

CRONTAB = "*/5 * * * * /srv/app/bin/sync.py\n"
SYNC = "#!/usr/bin/env python3\nfrom app.util import add\nprint(add(1, 2))\n"
QUIET = '"""Arithmetic."""\n\n\ndef mean(xs):\n    return sum(xs) / len(xs)\n'
UTIL = "def add(a, b):\n    return a + b\n"
ROW_HELPER = ("import fcntl\n\n_HELD = []\n\n\ndef take_row(n):\n"
              "    fh = open(f'/var/lock/row{n}', 'w')\n"
              "    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
              "    _HELD.append(fh)\n    return fh\n")


@pytest.fixture
def repo(write_tree, monkeypatch, tmp_path_factory):
    root = write_tree({"crontab": CRONTAB, "bin/sync.py": SYNC, "app/__init__.py": "",
                       "app/util.py": UTIL, "app/stats.py": QUIET, "app/more.py": QUIET,
                       ".git/HEAD": "ref: x\n"})
    monkeypatch.chdir(root)
    monkeypatch.setenv("JOBSAFE_CACHE_DIR", str(tmp_path_factory.mktemp("own-cache")))
    return root


@pytest.fixture
def full_runs(monkeypatch):
    """How many times the whole analysis ran."""
    runs = []
    real = jobsafe.analysis.analyse

    def counted(*args, **kwargs):
        runs.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(jobsafe.analysis, "analyse", counted)
    return runs


def check(*args):
    return CliRunner().invoke(main, ["check", *args], catch_exceptions=False)


def _edit(path: str, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def test_unrelated_staged_modules_are_answered_without_analysing(repo, full_runs):
    whole = check(".")
    assert whole.exit_code == 1 and "JOB101" in whole.output  # the job has no lock
    _edit("app/stats.py", "\n\ndef median(xs):\n    return sorted(xs)[len(xs) // 2]\n")
    runs = len(full_runs)
    quick = check("app/stats.py", "app/more.py")
    assert len(full_runs) == runs  # answered from the record
    assert quick.exit_code == 0
    assert quick.output == "No findings in 6 files, 1 scheduled job.\n"
    # what the full analysis says about the same files
    assert check("--no-cache", "app/stats.py", "app/more.py").output == quick.output
    # a file of no kind jobsafe reads, and that it did not read, changes nothing either
    with open("README.md", "w", encoding="utf-8") as fh:
        fh.write("# app\n")
    assert check(".").exit_code == 1
    _edit("README.md", "Uses a lock.\n")
    _edit("app/stats.py", "# again\n")
    runs = len(full_runs)
    assert check("app/stats.py").output == "No findings in 6 files, 1 scheduled job.\n"
    assert len(full_runs) == runs


@pytest.mark.parametrize("case", ["lock word", "suppression", "job's script", "imported",
                                  "django settings", "task name searched", "script read",
                                  "gitignore changed", "calls a lock abstraction",
                                  "another file changed", "new file", "config named",
                                  "no cache", "json"])
def test_files_that_could_change_a_finding_are_analysed(repo, full_runs, case):
    assert check(".").exit_code == 1
    named, options = ["app/stats.py"], []
    if case == "lock word":
        _edit("app/stats.py", "import fcntl\nfcntl.flock(open('/tmp/l'), fcntl.LOCK_EX)\n")
    elif case == "suppression":
        _edit("app/stats.py", "# JOBSAFE: ignore[JOB101]\n")
    elif case == "job's script":  # no word in it, but a job runs it
        _edit("bin/sync.py", "print('done')\n")
        named = ["bin/sync.py"]
    elif case == "imported":  # no word in it, but the job's code imports from it
        _edit("app/util.py", "\n\ndef sub(a, b):\n    return a - b\n")
        named = ["app/util.py"]
    elif case == "django settings":  # read for CACHES, which decides a cache lock's scope
        with open("app/settings.py", "w", encoding="utf-8") as fh:
            fh.write("DEBUG = False\n")
        assert check(".").exit_code == 1
        _edit("app/settings.py", "CACHES = {'default': {'BACKEND': 'x.LocMemCache'}}\n")
        named = ["app/settings.py"]
    elif case == "task name searched":  # a module gaining `def send_report(` would run
        with open("app/beat.py", "w", encoding="utf-8") as fh:
            fh.write("from celery import Celery\napp = Celery('x')\napp.conf.beat_schedule = "
                     "{'r': {'task': 'send_report', 'schedule': 60.0}}\n")
        assert "2 scheduled jobs" in check(".").output
        _edit("app/stats.py", "# edited\n")
    elif case == "script read":  # no kind by its name, but a job runs (and jobsafe reads) it
        with open("bin/charge.php", "w", encoding="utf-8") as fh:
            fh.write("<?php\necho 1;\n")
        _edit("crontab", "0 6 * * * php /srv/app/bin/charge.php\n")
        assert check(".").exit_code == 1
        _edit("bin/charge.php", "echo 2;\n")
        _edit("app/stats.py", "# edited\n")
    elif case == "gitignore changed":  # what it ignored is discovered again
        os.makedirs("ops")
        with open("ops/crontab", "w", encoding="utf-8") as fh:
            fh.write("0 8 * * * /srv/app/app/stats.py\n")
        with open(".gitignore", "w", encoding="utf-8") as fh:
            fh.write("ops/\n")
        assert check(".").exit_code == 1
        with open(".gitignore", "w", encoding="utf-8") as fh:  # (stamped: it has no suffix)
            fh.write("# nothing ignored\n")
        _edit("app/stats.py", "# edited\n")
    elif case == "calls a lock abstraction":  # no word in it: a name the project defines
        with open("app/rows.py", "w", encoding="utf-8") as fh:
            fh.write(ROW_HELPER)
        assert check(".").exit_code == 1
        _edit("app/stats.py", "from app.rows import take_row\ntake_row(3)\n")
    elif case == "another file changed":
        _edit("app/stats.py", "# edited\n")
        _edit("crontab", "0 4 * * * /srv/app/bin/sync.py --nightly\n")
    elif case == "new file":
        _edit("app/stats.py", "# edited\n")
        os.makedirs("deploy")
        with open("deploy/crontab", "w", encoding="utf-8") as fh:
            fh.write("0 5 * * * /srv/app/bin/sync.py\n")
    elif case == "config named":
        with open(".jobsafe.toml", "w", encoding="utf-8") as fh:
            fh.write("ignore = []\n")
        assert check(".").exit_code == 1
        named = ["app/stats.py", ".jobsafe.toml"]
    elif case == "no cache":
        options = ["--no-cache"]
    elif case == "json":
        options = ["--format", "json"]
    runs = len(full_runs)
    result = check(*options, *named)
    assert len(full_runs) == runs + 1, case  # analysed in full
    if case in ("job's script", "config named", "imported"):
        assert "JOB101" in result.output  # the job that runs (or imports) the file
    if case == "new file":  # the record is renewed by that run: the next one is quick again
        _edit("app/stats.py", "# again\n")
        assert check(*named).exit_code == 0
        assert len(full_runs) == runs + 1


def test_a_run_with_an_internal_error_leaves_no_record(repo, full_runs, monkeypatch):
    monkeypatch.delenv("JOBSAFE_RAISE_INTERNAL_ERRORS", raising=False)
    monkeypatch.setattr("jobsafe.rules.overlap.UnguardedJob.check",
                        lambda self, project: 1 / 0)
    assert check(".").exit_code == 2
    _edit("app/stats.py", "# edited\n")
    runs = len(full_runs)
    assert check("app/stats.py").exit_code == 2  # analysed again, and fails again
    assert len(full_runs) == runs + 1


@pytest.mark.parametrize("options, error", [
    (["--select", "JOB999"], "unknown rule or prefix 'JOB999'"),
    (["--ignore", "no-such-rule"], "unknown rule or prefix 'no-such-rule'"),
    (["--baseline", "missing.json"], "missing.json: not a jobsafe baseline file"),
])
def test_the_fast_answer_checks_the_options_the_full_run_checks(repo, full_runs, options,
                                                                 error):
    assert check(".").exit_code == 1
    _edit("app/stats.py", "# edited\n")
    runs = len(full_runs)
    result = CliRunner().invoke(main, ["check", *options, "app/stats.py"])
    assert result.exit_code == 2 and error in result.stderr
    assert len(full_runs) == runs  # the answer was quick, and still refused the option
    with_valid = ["--select", "JOB1"] if "--baseline" not in options else []
    assert check(*with_valid, "app/stats.py").exit_code == 0
