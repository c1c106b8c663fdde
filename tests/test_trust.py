"""What a team gating CI on jobsafe depends on: no silent pass, results that do not depend
on where jobsafe is run from, output files and baselines that behave."""
import json
import os

import pytest
from click.testing import CliRunner

from jobsafe.cli import main
from jobsafe.errors import RAISE_ENV

CRONTAB = "*/5 * * * * /srv/app/bin/sync.py\n0 3 * * * flock /tmp/x /srv/app/bin/sync.py --nightly\n"
SYNC = "#!/usr/bin/env python3\nprint('sync')\n"
LOCKED = ("#!/usr/bin/env python3\nimport fcntl\n"
          "fh = open('/var/lock/sync.lock', 'w')\n"
          "fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)\nprint('sync')\n")


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def repo(write_tree, monkeypatch):
    root = write_tree({"crontab": CRONTAB, "bin/sync.py": SYNC, ".git/HEAD": "ref: x\n"})
    monkeypatch.chdir(root)
    return root


# -- internal errors fail closed ------------------------------------------------------------

@pytest.fixture
def fail_open(monkeypatch):
    """The path users take: internal errors are reported, not raised (no strict mode)."""
    monkeypatch.delenv(RAISE_ENV)


def _boom(*args, **kwargs):
    raise ValueError("front end bug")


@pytest.mark.parametrize("select", [(), ("--select", "JOB1"), ("--select", "JOB102")])
def test_a_crashing_front_end_exits_2_whatever_is_selected(repo, fail_open, monkeypatch, select):
    (repo / "other.cron").write_text("*/5 * * * * /srv/app/bin/sync.py --x\n")
    real = __import__("jobsafe.assembly.cron", fromlist=["parse_crontab"]).parse_crontab
    monkeypatch.setattr("jobsafe.assembly.cron.parse_crontab",
                        lambda path, *a, **k: _boom() if path == "crontab" else real(path, *a, **k))
    result = CliRunner().invoke(main, ["check", "--format", "json", *select])
    assert result.exit_code == 2
    assert "internal error in crontab: ValueError: front end bug" in result.stderr
    doc = json.loads(result.stdout)  # the rest was analysed and reported
    assert doc["summary"]["jobs"] == 1  # other.cron's
    assert not any(f["rule"] == "JOB900" for f in doc["findings"])  # not a finding to hide


def test_a_crashing_python_analyser_exits_2(repo, fail_open, monkeypatch):
    (repo / "bin/sync.py").write_text(LOCKED)
    monkeypatch.setattr("jobsafe.sources.python.module._ModuleAnalyser.run", _boom)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--exit-zero"])
    assert result.exit_code == 2
    assert "internal error in bin/sync.py: ValueError" in result.stderr
    assert "Traceback" not in result.output


def _recurse(*args, **kwargs):
    return _recurse(*args, **kwargs)


@pytest.mark.parametrize("target", ["jobsafe.sources.python.module._ModuleAnalyser.run",
                                    "jobsafe.assembly.cron.parse_crontab"])
def test_recursion_without_end_in_jobsafe_is_internal_not_deep_input(repo, fail_open,
                                                                    monkeypatch, target):
    """A RecursionError on shallow input is jobsafe's bug: exit 2, not a JOB900 that blames
    the file for being "too deeply nested"."""
    (repo / "bin/sync.py").write_text(LOCKED)
    monkeypatch.setattr(target, _recurse)
    result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json"])
    assert result.exit_code == 2
    assert "InternalRecursion: recursion without end on " in result.stderr
    assert not any(f["rule"] == "JOB900" for f in json.loads(result.stdout)["findings"])


@pytest.mark.parametrize("depth", [160, 250])
def test_deep_input_is_still_a_finding_about_the_input(repo, fail_open, monkeypatch, depth):
    """Input deep enough to overflow the stack is the file's problem: a JOB900, exit 1.
    At 250 levels (beyond CPython's parser) the depth guard refuses the module before
    libcst; at 160 the analysis runs (it walks without recursion) and the overflow is
    simulated, as no analysis step recurses that deep any more."""
    text = "import fcntl\nx = " + "[" * depth + "]" * depth + "\n"
    if depth < 200:
        monkeypatch.setattr("jobsafe.sources.python.module._ModuleAnalyser.run", _recurse)
    (repo / "bin/sync.py").write_text(text)
    (repo / "crontab").write_text(CRONTAB + "*/5 * * * * /srv/app/bin/sync.py\n")
    result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json"])
    assert result.exit_code == 1, result.stderr
    errors = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "JOB900"]
    assert [e["message"] for e in errors] == ["Python module too deeply nested to analyse"]


def test_a_crashing_rule_is_named(repo, fail_open, monkeypatch):
    from jobsafe.rules import all_rules

    monkeypatch.setattr(all_rules()["JOB104"], "check", _boom)
    result = CliRunner().invoke(main, ["check", "--ignore", "JOB104"])
    assert result.exit_code == 1  # not selected: never ran
    result = CliRunner().invoke(main, ["check"])
    assert result.exit_code == 2 and "internal error in rule JOB104" in result.stderr
    assert "JOB101" in result.stdout


def test_the_suite_runs_strict(repo, monkeypatch):
    monkeypatch.setattr("jobsafe.assembly.cron.parse_crontab", _boom)
    with pytest.raises(ValueError, match="front end bug"):
        invoke("check")


def test_jobs_and_audit_exit_2_on_internal_errors(repo, fail_open, monkeypatch):
    monkeypatch.setattr("jobsafe.assembly.cron.parse_crontab", _boom)
    assert CliRunner().invoke(main, ["jobs"]).exit_code == 2
    assert CliRunner().invoke(main, ["audit", "--json", "a.json"]).exit_code == 2


# -- output files -------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("-o", "/nonexistent/x.sarif", "--format", "sarif"),
                                  ("-o", "/nonexistent/x.txt"),
                                  ("--write-baseline", "/nonexistent/b.json")])
def test_an_output_file_that_cannot_be_written_is_one_line_exit_2(repo, args):
    result = CliRunner().invoke(main, ["check", *args])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines()[-1].startswith("jobsafe: error: cannot write "
                                                            "/nonexistent/")
    assert "Traceback" not in result.output


def test_jobs_output_that_cannot_be_written(repo):
    result = CliRunner().invoke(main, ["jobs", "--format", "json", "-o", "/nonexistent/j.json"])
    assert result.exit_code == 2 and "cannot write /nonexistent/j.json" in result.stderr


# -- baselines and fingerprints from any folder ---------------------------------------------

def _new_findings(*args):
    result = invoke("check", "--format", "json", *args)
    return [(f["rule"], f["path"]) for f in json.loads(result.stdout)["findings"]]


def test_a_baseline_matches_from_the_parent_and_from_a_subfolder(repo, monkeypatch):
    assert invoke("check", "--write-baseline", ".jobsafe-baseline.json").exit_code == 1
    recorded = json.loads((repo / ".jobsafe-baseline.json").read_text())
    assert {e["path"] for e in recorded["findings"]} == {"crontab"}
    assert _new_findings("--baseline", ".jobsafe-baseline.json") == []
    assert "3 findings in the baseline." in invoke("check", "--baseline", ".jobsafe-baseline.json").stdout
    monkeypatch.chdir(repo.parent)
    name = repo.name
    assert _new_findings(name, "--baseline", f"{name}/.jobsafe-baseline.json") == []
    monkeypatch.chdir(repo / "bin")
    assert _new_findings("..", "--baseline", "../.jobsafe-baseline.json") == []
    (repo / "crontab").write_text(CRONTAB + "*/10 * * * * /srv/app/bin/sync.py --other\n")
    assert _new_findings("..", "--baseline", "../.jobsafe-baseline.json") == [("JOB101", "../crontab")]


def test_fingerprints_do_not_depend_on_the_working_directory(repo, monkeypatch):
    here = {f["fingerprint"] for f in json.loads(invoke("check", "--format", "json").stdout)["findings"]}
    monkeypatch.chdir(repo.parent)
    above = json.loads(invoke("check", "--format", "json", repo.name).stdout)["findings"]
    assert {f["fingerprint"] for f in above} == here and len(here) == 3


def test_a_baseline_of_an_older_format_is_a_clear_error(repo):
    (repo / "old.json").write_text('{"version": 1, "tool": "jobsafe", "findings": []}')
    result = CliRunner().invoke(main, ["check", "--baseline", "old.json"])
    assert result.exit_code == 2 and "write it again with --write-baseline" in result.stderr


def test_sarif_of_a_baseline_run_keeps_unchanged_results(repo):
    invoke("check", "--write-baseline", "b.json")
    (repo / "crontab").write_text(CRONTAB + "*/10 * * * * /srv/app/bin/sync.py --other\n")
    result = invoke("check", "--format", "sarif", "--baseline", "b.json")
    assert result.exit_code == 1
    states = sorted((r["ruleId"], r["baselineState"]) for r in json.loads(result.stdout)["runs"][0]["results"])
    assert states == [("JOB101", "new"), ("JOB101", "unchanged"), ("JOB102", "unchanged"),
                      ("JOB104", "unchanged")]


# -- the cache lives at the project root ------------------------------------------------------

def test_the_cache_is_made_at_the_project_root_not_in_the_analysed_folder(repo, monkeypatch):
    monkeypatch.delenv("JOBSAFE_CACHE_DIR")
    (repo / "deploy").mkdir()
    (repo / "deploy/crontab").write_text(CRONTAB)
    invoke("check", "deploy")
    monkeypatch.chdir(repo / "deploy")
    invoke("check", ".")
    assert (repo / ".jobsafe_cache").is_dir()
    assert not (repo / "deploy/.jobsafe_cache").exists()
    assert not any(p.name == ".jobsafe_cache" for p in repo.rglob("*") if p.parent != repo)


def test_without_a_repository_the_cache_goes_beside_the_configuration(write_tree, monkeypatch):
    monkeypatch.delenv("JOBSAFE_CACHE_DIR")
    root = write_tree({".jobsafe.toml": "strict = false\n", "ops/crontab": CRONTAB})
    monkeypatch.chdir(root)
    invoke("check", "ops")
    assert (root / ".jobsafe_cache").is_dir() and not (root / "ops/.jobsafe_cache").exists()


# -- pre-commit: a job's own script re-checks the job -------------------------------------------

def test_a_staged_script_reports_its_jobs_findings_on_the_crontab(write_tree, monkeypatch):
    root = write_tree({".git/HEAD": "ref: x\n", "deploy/crontab": "*/5 * * * * timeout 4m /srv/app/bin/sync.py\n",
                       "bin/sync.py": LOCKED, "bin/lib/locking.py": "def take():\n    pass\n",
                       "bin/other.py": SYNC})
    monkeypatch.chdir(root)
    assert invoke("check", "bin/sync.py").exit_code == 0  # guarded by its flock
    (root / "bin/sync.py").write_text(SYNC)  # the lock removed, only the script staged
    result = invoke("check", "--format", "json", "bin/sync.py")
    assert result.exit_code == 1
    assert [(f["rule"], f["path"]) for f in json.loads(result.stdout)["findings"]] == \
        [("JOB101", "deploy/crontab")]
    assert invoke("check", "bin/other.py").exit_code == 0  # a file no job runs


def test_a_staged_helper_module_the_entry_reaches_rechecks_the_job(write_tree, monkeypatch):
    root = write_tree({
        ".git/HEAD": "ref: x\n", "deploy/crontab": "*/5 * * * * cd /srv/app && python -m app.sync\n",
        "app/__init__.py": "",
        "app/sync.py": "from app.locking import take\n\ndef main():\n    take()\n\n"
                       "if __name__ == '__main__':\n    main()\n",
        "app/locking.py": "import fcntl\n\ndef take():\n    fh = open('/var/lock/s', 'w')\n"
                          "    fcntl.flock(fh, fcntl.LOCK_EX)\n    return fh\n"})
    monkeypatch.chdir(root)
    result = invoke("check", "--format", "json", "app/locking.py")
    rules = {(f["rule"], f["path"]) for f in json.loads(result.stdout)["findings"]}
    assert ("JOB104", "deploy/crontab") in rules  # the job's finding, from its helper


# -- what could not be read is said, with the reason ----------------------------------------

def _deny(monkeypatch, function: str, denied: str):
    """Make ``os.<function>`` fail with EACCES for paths ending in ``denied`` (the suite
    runs as root, for whom permissions deny nothing)."""
    real = getattr(os, function)

    def guarded(path, *args, **kwargs):
        if os.fspath(path).rstrip("/").endswith(denied):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, function, guarded)


def test_an_unreadable_directory_is_a_finding_not_a_clean_pass(repo, monkeypatch):
    (repo / "private").mkdir()
    (repo / "private/crontab").write_text(CRONTAB)
    _deny(monkeypatch, "scandir", "private")
    result = invoke("check", "--format", "json", "--select", "JOB900")
    assert result.exit_code == 1
    found = json.loads(result.stdout)["findings"]
    assert [(f["rule"], f["path"], f["message"]) for f in found] == [
        ("JOB900", "private", "not analysed: unreadable directory: Permission denied")]


def test_an_unreadable_python_module_is_a_finding(repo, monkeypatch):
    (repo / "bin/sync.py").write_text(LOCKED)
    real = os.path.getsize
    monkeypatch.setattr(os.path, "getsize", lambda p: (_ for _ in ()).throw(
        PermissionError(13, "Permission denied")) if str(p).endswith("sync.py") else real(p))
    found = json.loads(invoke("check", "--format", "json", "--no-cache").stdout)["findings"]
    assert ("JOB900", "bin/sync.py", "not analysed: unreadable file: Permission denied") in \
        [(f["rule"], f["path"], f["message"]) for f in found]


def test_a_named_path_that_cannot_be_examined_says_why(repo, monkeypatch):
    _deny(monkeypatch, "stat", "secret/crontab")
    result = CliRunner().invoke(main, ["check", "secret/crontab"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "jobsafe: error: secret/crontab: permission denied"
    result = CliRunner().invoke(main, ["check", "missing/crontab"])
    assert result.stderr.strip() == "jobsafe: error: missing/crontab: no such file or directory"


def test_a_trailing_suppression_on_a_unit_line_suppresses_nothing_and_says_so():
    from jobsafe.suppress import parse_suppressions

    unit = "[Service]\nExecStart=/srv/bin/x # jobsafe: ignore[JOB104]\n"
    (sup,) = parse_suppressions("x.service", unit, "systemd")
    assert sup.misplaced == "systemd" and not sup.covers(2)
    (py,) = parse_suppressions("x.py", "x = 1  # jobsafe: ignore[JOB203]\n", "python")
    assert py.misplaced is None and py.covers(1)


def test_a_manifest_over_the_size_limit_is_a_note_not_an_error(write_tree, monkeypatch):
    big = "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n" + \
        "".join(f"# {'x' * 100}\n" for _ in range(11_000))
    monkeypatch.chdir(write_tree({"crds.yaml": big, "crontab": CRONTAB, "bin/sync.py": SYNC}))
    doc = json.loads(invoke("check", "--format", "json").stdout)
    assert not [f for f in doc["findings"] if f["rule"] == "JOB900"]
    assert doc["summary"]["skipped"][0]["path"] == "crds.yaml"
    assert "too large" in doc["summary"]["skipped"][0]["reason"]
    assert "note: crds.yaml not analysed: YAML file too large" in invoke("check").stdout


def test_ash_is_a_shell_for_the_link_step(write_tree, monkeypatch):
    monkeypatch.chdir(write_tree({
        "crontab": "*/5 * * * * ash /srv/app/bin/job.sh\n*/5 * * * * /srv/app/bin/job2\n",
        "bin/job.sh": "exec 9>/var/lock/job.lock\nflock -n 9 || exit 0\ntimeout 4m work\n",
        "bin/job2": "#!/bin/ash\nexec 9>/var/lock/job2.lock\nflock -n 9 || exit 0\n"}))
    jobs = json.loads(invoke("jobs", "--format", "json").stdout)["jobs"]
    assert [(j["entry"]["path"], [lock["kind"] for lock in j["locks"]]) for j in jobs] == [
        ("bin/job.sh", ["flock"]), ("bin/job2", ["flock"])]


def test_a_staged_config_rechecks_everything_and_staged_evidence_its_findings(write_tree, monkeypatch):
    root = write_tree({".git/HEAD": "ref: x\n", "crontab": CRONTAB, "bin/sync.py": SYNC,
                       ".jobsafe.toml": "ignore = []\n", "README.md": "x\n"})
    monkeypatch.chdir(root)
    assert invoke("check", "README.md").exit_code == 0
    result = invoke("check", "--format", "json", ".jobsafe.toml")
    assert {f["rule"] for f in json.loads(result.stdout)["findings"]} == {"JOB101", "JOB102", "JOB104"}


def test_a_staged_replica_count_reports_the_locks_it_makes_unsafe(tmp_path, monkeypatch):
    import shutil

    from conftest import FIXTURES

    shutil.copytree(FIXTURES / "topology", tmp_path / "repo")
    (tmp_path / "repo/.git").mkdir()
    monkeypatch.chdir(tmp_path / "repo")
    found = json.loads(invoke("check", "--format", "json", "--select", "JOB301",
                              "docker-compose.yml").stdout)["findings"]
    assert [(f["path"], f["line"]) for f in found] == [("worker/jobs.cron", 2)]
