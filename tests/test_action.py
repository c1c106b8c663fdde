"""The GitHub Action (action.yml): its shell steps run here as the runner would run them,
after a real install of the action's checkout into a fresh virtual environment."""
import json
import os
import re
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
import yaml

from conftest import SARIF_SCHEMA

REPO = Path(__file__).resolve().parents[1]
ACTION = yaml.safe_load((REPO / "action.yml").read_text())
_EXPR = re.compile(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}")


def _evaluate(value: str, inputs: dict) -> str:
    return _EXPR.sub(lambda m: inputs[m.group(1)], str(value))


def _run_steps(workdir: Path, bin_dir: Path, overrides=None):
    """Each ``run`` step in order, with the step's env and the action's inputs; the
    ``uses`` steps (setup-python, upload-sarif) belong to GitHub and are skipped."""
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update(overrides or {})
    results = []
    for step in ACTION["runs"]["steps"]:
        if "run" not in step:
            continue
        assert step["shell"] == "bash" and "${{" not in step["run"]  # no injection
        env = {**os.environ, "GITHUB_ACTION_PATH": str(REPO), "PIP_NO_DEPS": "1",
               "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
               # the dependencies of this test run; the fresh venv holds jobsafe itself
               "PYTHONPATH": sysconfig.get_paths()["purelib"],
               **{k: _evaluate(v, inputs) for k, v in step.get("env", {}).items()}}
        results.append(subprocess.run(["bash", "-e", "-c", step["run"]], cwd=workdir, env=env,
                                      capture_output=True, text=True, timeout=300))
    return results


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """A fresh virtual environment whose ``python`` the install step uses."""
    env_dir = tmp_path_factory.mktemp("action") / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    return env_dir / ("Scripts" if sys.platform == "win32" else "bin")


def test_the_action_installs_reports_sarif_and_fails_on_findings(tmp_path, installed):
    (tmp_path / "crontab").write_text("*/5 * * * * /srv/app/bin/sync.py\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/sync.py").write_text("print('sync')\n")
    install, sarif, annotate = _run_steps(tmp_path, installed)
    assert install.returncode == 0, install.stderr[-2000:]
    assert (installed / "jobsafe").exists()  # the action's checkout, installed
    assert sarif.returncode == 0, sarif.stderr
    import jsonschema

    doc = json.loads((tmp_path / "jobsafe.sarif").read_text())
    jsonschema.validate(doc, json.loads(SARIF_SCHEMA.read_text()))
    assert [r["ruleId"] for r in doc["runs"][0]["results"]] == ["JOB101"]
    assert annotate.returncode == 1
    assert annotate.stdout.startswith("::warning file=crontab,line=1,")


def test_the_action_passes_options_through_and_gates_on_new_findings(tmp_path, installed):
    (tmp_path / "crontab").write_text("*/5 * * * * /srv/app/bin/sync.py\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/sync.py").write_text("print('sync')\n")
    subprocess.run([str(installed / "python"), "-m", "jobsafe", "check", "--write-baseline",
                    "base.json"], cwd=tmp_path, env={**os.environ, "PYTHONPATH":
                                                      sysconfig.get_paths()["purelib"]},
                   capture_output=True)
    steps = _run_steps(tmp_path, installed, {"args": "--baseline base.json",
                                             "sarif-file": "out dir.sarif"})
    assert steps[-1].returncode == 0 and steps[-1].stdout == ""
    states = [r["baselineState"] for r in
              json.loads((tmp_path / "out dir.sarif").read_text())["runs"][0]["results"]]
    assert states == ["unchanged"]
