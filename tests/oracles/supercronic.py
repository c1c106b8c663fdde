"""Build and run the supercronic oracle (``supercronic_oracle.go``): supercronic's own
crontab reader and cron expression library, from a copy of its source.

The source is a checkout (or an unpacked archive) of github.com/aptible/supercronic, or a
bare git repository of it: ``$JOBSAFE_SUPERCRONIC_SRC``, else
``$JOBSAFE_ORACLES/supercronic`` (``~/.cache/jobsafe-oracles/supercronic``). Only its
``cronexpr`` and ``crontab`` packages are used; logrus, their one outside import, is
replaced by a stand-in that logs nothing. The build is offline (``GOPROXY=off``): Go and the
source are all it needs. Nothing of supercronic's is kept in this repository.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).parent
DRIVER = HERE / "supercronic_oracle.go"
ORACLES = Path(os.environ.get("JOBSAFE_ORACLES", Path.home() / ".cache" / "jobsafe-oracles"))

_LOGRUS = """package logrus

// Debugf, Infof and Warnf: the calls supercronic's crontab package makes; the oracle logs
// nothing.
func Debugf(format string, args ...interface{}) {}
func Infof(format string, args ...interface{})  {}
func Warnf(format string, args ...interface{})  {}
"""
_GO_MOD = """module supercronic-oracle

go 1.19

require (
	github.com/aptible/supercronic v0.0.0
	github.com/sirupsen/logrus v0.0.0
)

replace github.com/aptible/supercronic => ./supercronic

replace github.com/sirupsen/logrus => ./logrus
"""


def source() -> Path | None:
    """Where supercronic's source is, when it is anywhere."""
    found = os.environ.get("JOBSAFE_SUPERCRONIC_SRC")
    path = Path(found) if found else ORACLES / "supercronic"
    return path if path.exists() else None


def _copy_packages(src: Path, dest: Path) -> bool:
    """supercronic's cronexpr and crontab packages (their Go files, tests left out) into
    ``dest``, from a source tree or a bare git repository."""
    wanted = ("cronexpr/cronexpr.go", "cronexpr/cronexpr_next.go", "cronexpr/cronexpr_parse.go",
              "crontab/crontab.go", "crontab/types.go")
    for rel in wanted:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if (src / rel).is_file():
            shutil.copyfile(src / rel, target)
            continue
        shown = subprocess.run(["git", "-C", str(src), "show", f"HEAD:{rel}"],
                               capture_output=True, timeout=60)
        if shown.returncode != 0:
            return False
        target.write_bytes(shown.stdout)
    (dest / "go.mod").write_text("module github.com/aptible/supercronic\n\ngo 1.19\n\n"
                                 "require github.com/sirupsen/logrus v0.0.0\n")
    return True


def build(work: Path) -> Path | None:
    """The oracle binary built in ``work``; None without Go or supercronic's source, or
    when the build fails."""
    src, go = source(), shutil.which("go")
    if src is None or go is None:
        return None
    if not _copy_packages(src, work / "supercronic"):
        return None
    (work / "logrus").mkdir(parents=True, exist_ok=True)
    (work / "logrus" / "logrus.go").write_text(_LOGRUS)
    (work / "logrus" / "go.mod").write_text("module github.com/sirupsen/logrus\n\ngo 1.19\n")
    (work / "go.mod").write_text(_GO_MOD)
    shutil.copyfile(DRIVER, work / "main.go")
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOWORK": "off",
           "CGO_ENABLED": "0"}
    binary = work / "supercronic-oracle"
    done = subprocess.run([go, "build", "-o", str(binary), "."], cwd=work, env=env,
                          capture_output=True, text=True, timeout=300)
    return binary if done.returncode == 0 and binary.exists() else None


def ask(binary: Path, inputs: list[str], at: list[str], days: list[str] = (), n: int = 50,
        files: bool = False) -> list[dict]:
    """The oracle's answer for each input (a crontab line, or with ``files`` a whole file):
    whether supercronic accepts it, its jobs, and their start times from each base of
    ``at`` and their runs and shortest gap on each local day of ``days``."""
    args = [str(binary), "-n", str(n), "-at", ",".join(at), "-days", ",".join(days)]
    if files:
        args.append("-files")
    done = subprocess.run(args, input="".join(json.dumps(i) + "\n" for i in inputs),
                          capture_output=True, text=True, timeout=600, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]
