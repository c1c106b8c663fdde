"""The command line as users and scripts see it: formats, exit codes, config, baseline."""
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import FIXTURES, SARIF_SCHEMA
from jobsafe.analysis import Analysis
from jobsafe.cli import main
from jobsafe.model import Finding, Project, Severity, Span, message
from jobsafe.report import render

CRONTAB = "*/5 * * * * /srv/app/bin/sync.py\n0 3 * * * flock /tmp/x /srv/app/bin/sync.py --nightly\n"
SYNC = "#!/usr/bin/env python3\nprint('sync')\n"


@pytest.fixture
def repo(write_tree, monkeypatch):
    root = write_tree({"crontab": CRONTAB, "bin/sync.py": SYNC})
    monkeypatch.chdir(root)
    return root


def invoke(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_check_text_reports_and_exits_1(repo):
    result = invoke("check")
    assert result.exit_code == 1
    assert "crontab:1:1: JOB101" in result.output
    assert "*/5 * * * * /srv/app/bin/sync.py" in result.output  # the source line
    assert "Found 3 findings" in result.output


def test_check_clean_tree_exits_0(write_tree, monkeypatch):
    monkeypatch.chdir(write_tree({"crontab": "0 4 * * * /usr/sbin/logrotate /etc/logrotate.conf\n"}))
    result = invoke("check")
    assert result.exit_code == 0
    assert "No findings" in result.output


def test_json_matches_the_contract_and_is_byte_identical(repo):
    first, second = invoke("check", "--format", "json"), invoke("check", "--format", "json")
    assert first.output == second.output
    doc = json.loads(first.output)
    assert doc["version"] == 1 and doc["tool"]["name"] == "jobsafe"
    f = doc["findings"][0]
    assert set(f) >= {"rule", "name", "severity", "path", "line", "column", "end_line",
                      "end_column", "message", "job", "related", "fingerprint", "fix"}
    assert (f["rule"], f["path"], f["line"], f["job"]) == ("JOB101", "crontab", 1, "cron:crontab:1")
    assert doc["summary"] == {"files": 2, "jobs": 2, "findings": 3, "parse_errors": 0,
                              "by_rule": {"JOB101": 1, "JOB102": 1, "JOB104": 1}, "skipped": []}


def test_sarif_validates_against_the_schema(repo):
    import jsonschema

    (repo / "crontab").write_text("# jobsafe: ignore[JOB101] -- known\n" + CRONTAB)
    result = invoke("check", "--format", "sarif")
    doc = json.loads(result.output)
    jsonschema.validate(doc, json.loads(SARIF_SCHEMA.read_text()))
    base = doc["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base == repo.resolve().as_uri() + "/"
    run = doc["runs"][0]
    rule_ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert "JOB101" in rule_ids and all(r["helpUri"] for r in run["tool"]["driver"]["rules"])
    suppressed = [r for r in run["results"] if r.get("suppressions")]
    assert suppressed and suppressed[0]["suppressions"][0]["justification"] == "known"
    related = [r for r in run["results"] if r["ruleId"] == "JOB102"][0]["relatedLocations"]
    assert related[0]["physicalLocation"]["region"]["startLine"] == 3
    assert all(r["partialFingerprints"]["jobsafe/v1"] for r in run["results"])


def _hostile_analysis():
    """Findings whose path and message carry content an attacker controls."""
    span = Span("deploy/a,b:c%d.cron", 3, 1, 3, 5)
    finding = Finding("JOB101", "unguarded-job", Severity.WARNING, span,
                      message("job {work}",
                              work="x|y `z` <script>alert(1)</script>\n::error file=x::pwned 100%\r"))
    return Analysis(Project(root="."), [finding])


def test_github_commands_escape_file_content():
    out = render("github", _hostile_analysis())
    lines = out.splitlines()
    assert len(lines) == 1  # no injected second command
    assert lines[0].startswith("::warning file=deploy/a%2Cb%3Ac%25d.cron,line=3,col=1,")
    assert lines[0].endswith("%0A::error file=x::pwned 100%25%0D")


def test_markdown_escapes_pipes_backticks_and_html():
    out = render("markdown", _hostile_analysis())
    row = [line for line in out.splitlines() if "JOB101" in line][0]
    assert "<script>" not in row and "&lt;script&gt;" in row
    assert "\\|" in row and "\\`z\\`" in row
    assert row.replace("\\|", "").count("|") == 5  # four columns, nothing added


def test_select_ignore_and_severity(repo):
    out = json.loads(invoke("check", "--format", "json", "--select", "JOB10",
                            "--ignore", "blocking-lock-wait").output)
    assert sorted(out["summary"]["by_rule"]) == ["JOB101", "JOB104"]
    assert invoke("check", "--severity", "error").exit_code == 0
    bad = invoke("check", "--select", "JOB999")
    assert bad.exit_code == 2 and "unknown rule" in bad.output


def test_config_unknown_key_exits_2_naming_it(repo):
    (repo / ".jobsafe.toml").write_text('selectt = ["JOB1"]\n')
    result = invoke("check")
    assert result.exit_code == 2 and "'selectt'" in result.output


def test_config_ignore_severity_and_per_file(repo):
    (repo / "pyproject.toml").write_text(
        '[tool.jobsafe]\nignore = ["JOB104"]\nseverity = { JOB101 = "error" }\n'
        'per-file-ignores = { "crontab" = ["JOB102"] }\n')
    doc = json.loads(invoke("check", "--format", "json").output)
    assert [(f["rule"], f["severity"]) for f in doc["findings"]] == [("JOB101", "error")]


def test_baseline_survives_moved_lines_and_reports_new_ones(repo):
    assert invoke("check", "--write-baseline", "base.json").exit_code == 1
    assert invoke("check", "--baseline", "base.json").exit_code == 0
    (repo / "crontab").write_text("# moved down by new comments\n\nMAILTO=a@b\n" + CRONTAB
                                  + "*/10 * * * * /srv/app/bin/sync.py --other\n")
    doc = json.loads(invoke("check", "--format", "json", "--baseline", "base.json").output)
    assert [(f["rule"], f["line"]) for f in doc["findings"]] == [("JOB101", 6)]


def test_named_files_report_only_on_them(write_tree, monkeypatch):
    root = write_tree({"crontab": CRONTAB, "bin/sync.py": SYNC,
                       "other/crontab": "*/5 * * * * /srv/app/bin/sync.py --other\n"})
    monkeypatch.chdir(root)
    doc = json.loads(invoke("check", "--format", "json", "other/crontab").output)
    assert {f["path"] for f in doc["findings"]} == {"other/crontab"}
    assert doc["findings"][0]["rule"] == "JOB101"  # the script was still resolved


def test_jobs_inventory_json(repo):
    doc = json.loads(invoke("jobs", "--format", "json").output)
    first, second = doc["jobs"]
    assert first["schedule"] == "*/5 * * * *" and first["min_interval_seconds"] == 300
    assert first["runs_per_day"] == 288 and first["entry"]["path"] == "bin/sync.py"
    assert first["guard"] is None and first["findings"] == ["JOB101"]
    assert second["guard"] == {"kind": "flock", "blocking": True, "wait_seconds": None,
                               "path": "/tmp/x"}
    assert second["min_interval_seconds"] == 86400


def test_rules_and_explain():
    out = invoke("rules").output
    assert "JOB101" in out and "unguarded-job" in out
    by_name = invoke("explain", "unguarded-job")
    assert by_name.exit_code == 0 and "## What it flags" in by_name.output
    assert "Automatic fix (unsafe, `jobsafe check --fix --unsafe-fixes`): runs the crontab " \
           "command under `flock -n" in by_name.output
    assert "Automatic fix" not in invoke("explain", "JOB201").output  # none for JOB201
    assert invoke("explain", "JOB999").exit_code == 2


def test_missing_path_is_a_usage_error(repo):
    result = invoke("check", "does-not-exist")
    assert result.exit_code == 2 and "no such file" in result.output


def test_console_script_runs_as_a_process(repo):
    proc = subprocess.run([sys.executable, "-m", "jobsafe", "check", "--format", "json"],
                          capture_output=True, text=True, cwd=repo,
                          env={**os.environ, "NO_COLOR": "1"})
    assert proc.returncode == 1 and json.loads(proc.stdout)["summary"]["findings"] == 3


def test_examples_directory_shows_real_findings():
    doc = json.loads(CliRunner().invoke(main, ["check", "--format", "json", str(
        FIXTURES.parents[1] / "examples" / "legacy-billing")]).output)
    assert {"JOB101", "JOB103", "JOB110", "JOB201", "JOB202"} <= set(doc["summary"]["by_rule"])


def test_several_folders_report_only_inside_them(write_tree, monkeypatch):
    root = write_tree({"a/crontab": "*/5 * * * * /srv/bin/sync.py --a\n",
                       "b/crontab": "*/5 * * * * /srv/bin/sync.py --b\n",
                       "c/crontab": "*/5 * * * * /srv/bin/sync.py --c\n", "bin/sync.py": SYNC})
    monkeypatch.chdir(root)
    doc = json.loads(invoke("check", "--format", "json", "a", "b").output)
    assert sorted(f["path"] for f in doc["findings"]) == ["a/crontab", "b/crontab"]


def test_diff_and_fix(write_tree, monkeypatch):
    root = write_tree({"crontab": "*/5 * * * * flock /tmp/a.lock /srv/bin/x\n"
                                  "*/5 * * * * sh -c 'flock /tmp/b /srv/bin/y'\n"
                                  "0 1 * * * /usr/local/bin/w"})
    monkeypatch.chdir(root)
    safe = invoke("check", "--diff")  # the final newline (JOB110) only: -n changes behaviour
    assert safe.exit_code == 1 and "flock -n" not in safe.output
    assert "\\ No newline at end of file" in safe.output
    diff = invoke("check", "--diff", "--unsafe-fixes")
    assert diff.exit_code == 1
    # JOB102 adds -n, JOB104 a time limit of one interval
    assert "-*/5 * * * * flock /tmp/a.lock /srv/bin/x\n" \
           "+*/5 * * * * timeout 5m flock -n /tmp/a.lock" in diff.output
    assert (root / "crontab").read_text().endswith("/usr/local/bin/w")  # --diff writes nothing
    doc = json.loads(invoke("check", "--format", "json", "--select", "JOB102").output)
    fixes = [f["fix"] for f in doc["findings"]]
    assert fixes[0]["applicability"] == "unsafe" and fixes[0]["edits"][0]["text"] == " -n"
    assert fixes[1] is None  # inside a quoted sh -c string: positions are not exact
    text = invoke("check")
    assert "JOB102 [*]" not in text.output and "JOB110 [*]" in text.output
    assert "[*] 1 fixable with the `--fix` option (2 hidden fixes can be enabled with the " \
           "`--unsafe-fixes` option)" in text.output
    invoke("check", "--fix")
    assert (root / "crontab").read_text() == ("*/5 * * * * flock /tmp/a.lock /srv/bin/x\n"
                                               "*/5 * * * * sh -c 'flock /tmp/b /srv/bin/y'\n"
                                               "0 1 * * * /usr/local/bin/w\n")
    invoke("check", "--fix", "--unsafe-fixes")
    assert (root / "crontab").read_text() == ("*/5 * * * * timeout 5m flock -n /tmp/a.lock "
                                               "/srv/bin/x\n"
                                               "*/5 * * * * sh -c 'flock /tmp/b /srv/bin/y'\n"
                                               "0 1 * * * /usr/local/bin/w\n")
    again = invoke("check", "--diff", "--unsafe-fixes")
    assert again.exit_code == 0 and "+++" not in again.output
    sarif = json.loads(invoke("check", "--format", "sarif").output)
    assert not [r for r in sarif["runs"][0]["results"] if "fixes" in r]  # all fixed now


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_output_is_byte_identical_across_hash_seeds_workers_and_cache(fmt, tmp_path):
    """The same input gives the same bytes: whatever PYTHONHASHSEED, one process or several
    (the fixtures hold enough modules for the pool), cold or from the cache."""
    runs = [("0", ["--jobs", "1", "--no-cache"]), ("4242", ["--jobs", "2", "--no-cache"]),
            ("17", ["--jobs", "2"]), ("99", ["--jobs", "2"])]  # the last one is warm
    outputs = set()
    for seed, options in runs:
        env = {**os.environ, "PYTHONHASHSEED": seed, "JOBSAFE_CACHE_DIR": str(tmp_path / "c")}
        result = subprocess.run([sys.executable, "-m", "jobsafe", "check", "--format", fmt,
                                 *options, str(FIXTURES)], capture_output=True, text=True, env=env)
        assert result.returncode == 1, result.stderr
        outputs.add(result.stdout)
    assert len(outputs) == 1 and '"JOB301"' in outputs.pop()


def test_configured_replicas_make_host_locks_insufficient(write_tree, monkeypatch):
    root = write_tree({"crontab": "*/5 * * * * timeout 4m flock -n /tmp/x /srv/bin/sync.py\n",
                       "bin/sync.py": SYNC})
    monkeypatch.chdir(root)
    assert "JOB301" not in invoke("check").output  # unknown topology: no finding
    (root / ".jobsafe.toml").write_text("replicas = 4\n")
    doc = json.loads(invoke("check", "--format", "json").output)
    (finding,) = [f for f in doc["findings"] if f["rule"] == "JOB301"]
    assert finding["related"][0] == {"path": ".jobsafe.toml", "line": 1, "message": "4 replicas (configuration)"}


def test_a_file_outside_the_working_directory_is_analysed_from_its_own_folder(tmp_path,
                                                                              monkeypatch):
    """Named files with no repository around them: the working directory is the root only
    when they are inside it (it was walked whole for a file elsewhere)."""
    from jobsafe.discover import find_root
    elsewhere, here = tmp_path / "elsewhere", tmp_path / "here"
    elsewhere.mkdir()
    (here / "sub").mkdir(parents=True)
    (elsewhere / "crontab").write_text("*/5 * * * * /srv/x.sh\n")
    (here / "sub" / "crontab").write_text("*/5 * * * * /srv/x.sh\n")
    monkeypatch.chdir(here)
    assert find_root([str(elsewhere / "crontab")]) == str(elsewhere.resolve())
    assert find_root(["sub/crontab"]) == str(here.resolve())
