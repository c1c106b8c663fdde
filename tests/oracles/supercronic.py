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
from collections.abc import Sequence
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


def ask(binary: Path, inputs: Sequence[str], at: Sequence[str], days: Sequence[str] = (),
        n: int = 50, files: bool = False) -> list[dict]:
    """The oracle's answer for each input (a crontab line, or with ``files`` a whole file):
    whether supercronic accepts it, its jobs, and their start times from each base of
    ``at`` and their runs and shortest gap on each local day of ``days``."""
    args = [str(binary), "-n", str(n), "-at", ",".join(at), "-days", ",".join(days)]
    if files:
        args.append("-files")
    done = subprocess.run(args, input="".join(json.dumps(i) + "\n" for i in inputs),
                          capture_output=True, text=True, timeout=600, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


# -- what the oracle is asked -----------------------------------------------------------

#: the bases the next start times are counted from: Jan 1st, a leap day, and two minutes
#: before each change of Europe/Berlin (Go moves a skipped time forward, picks the second
#: of a repeated one), America/New_York (back, and the first) and America/Santiago (its
#: clocks change at midnight) in 2026
BASES = ["UTC@2026-01-01T00:00:00", "UTC@2028-02-27T23:59:00",
         "Europe/Berlin@2026-03-29T01:58:00", "Europe/Berlin@2026-10-25T01:58:00",
         "America/New_York@2026-03-08T01:58:00", "America/New_York@2026-11-01T00:58:00",
         "America/Santiago@2026-04-04T22:58:00", "America/Santiago@2026-09-05T23:58:00"]
#: the zones whose change days (from 2026, the four years of the arithmetic) are counted
ZONES = ("Europe/Berlin", "America/New_York", "America/Santiago")
#: their change days, 2026 to 2029
CHANGE_DAYS = {
    "Europe/Berlin": ["2026-03-29", "2026-10-25", "2027-03-28", "2027-10-31", "2028-03-26",
                      "2028-10-29", "2029-03-25", "2029-10-28"],
    "America/New_York": ["2026-03-08", "2026-11-01", "2027-03-14", "2027-11-07", "2028-03-12",
                         "2028-11-05", "2029-03-11", "2029-11-04"],
    "America/Santiago": ["2026-04-04", "2026-09-06", "2027-04-03", "2027-09-05", "2028-04-01",
                         "2028-09-03", "2029-04-07", "2029-09-02"],
}
DAYS = [f"{zone}@{day}T00:00:00" for zone in ZONES for day in CHANGE_DAYS[zone]]
#: the command every expression is given (a job line)
COMMAND = "/usr/local/bin/job --flag"


def encode(starts: list[int]) -> list[int]:
    """Start times, shorter: the first, then each gap and how many times in a row it
    comes."""
    out: list[int] = starts[:1]
    for a, b in zip(starts, starts[1:]):
        if len(out) > 1 and out[-2] == b - a:
            out[-1] += 1
        else:
            out += [b - a, 1]
    return out


def decode(encoded: list[int]) -> list[int]:
    if not encoded:
        return []
    out = [encoded[0]]
    for gap, times in zip(encoded[1::2], encoded[2::2]):
        for _ in range(times):
            out.append(out[-1] + gap)
    return out


# -- the grammar the generated expressions come from ------------------------------------

_MONTHS = ["jan", "FEB", "march", "May", "dec", "DECEMBER", "Sep", "sept", "0", "13"]
_WEEKDAYS = ["mon", "SUN", "friday", "Sat", "tue", "THURSDAY", "wedn", "7", "07", "01"]
_DOM_SPECIAL = ["L", "LW", "15W", "1W", "31w", "l", "W", "0W", "lw", "30W"]
_DOW_SPECIAL = ["5L", "fril", "0L", "7L", "1#1", "5#3", "6#5", "sun#2", "2#6", "7#1", "L",
                "mon#5", "1#0"]
_STEPS = ["1", "2", "3", "4", "5", "6", "7", "10", "12", "15", "20", "24", "30", "59", "05"]
_YEARS = ["*", "2026", "2027-2030", "2025", "*/2", "2026-2024/1", "2030/3", "1969", "2100",
          "2026,2028", "2028-2029", "?", "2026-2027/1970", "2099"]
_MACROS = ["@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@annually", "@midnight",
           "@reboot", "@Daily", "@every", "@hourly2"]


def expression(choose) -> str:
    """A cron expression of supercronic's grammar (and near it): ``choose(options)`` picks
    one of a list (a seeded random's choice, or a hypothesis draw)."""
    def value(lo: int, hi: int, names: list[str] = ()) -> str:
        kind = choose(["number"] * 12 + ["padded", "beyond"] + (["name"] * 3 if names else []))
        if kind == "name":
            return choose(names)
        if kind == "padded":
            return "0" + choose([str(v) for v in range(10)])
        if kind == "beyond":
            return choose([str(hi + 1), str(hi + 2), str(lo - 1) if lo else "-1"])
        return choose([str(v) for v in range(lo, hi + 1)])

    def step(hi: int) -> str:  # (now and then one cronexpr refuses)
        return choose([s for s in _STEPS if int(s) <= hi] + ["0", str(hi + 1), "007"])

    def item(lo: int, hi: int, names: list[str] = (), special: list[str] = ()) -> str:
        kind = choose(["*", "?", "*/n", "range", "range", "range/n", "v/n", "value", "value",
                       "value"] + (["special", "special"] if special else []))
        if kind in ("*", "?"):
            return kind
        if kind == "special":
            return choose(special)
        if kind == "*/n":
            return "*/" + step(hi)
        first, last = value(lo, hi, names), value(lo, hi, names)
        if first.isdigit() and last.isdigit() and int(first) > int(last) and \
                choose(["ascending", "ascending", "as drawn"]) == "ascending":
            first, last = last, first
        if kind == "range":
            return f"{first}-{last}"
        if kind == "range/n":
            return f"{first}-{last}/{step(hi)}"
        if kind == "v/n":
            return f"{first}/{step(hi)}"
        return first

    def field(lo: int, hi: int, names: list[str] = (), special: list[str] = ()) -> str:
        count = int(choose(["1", "1", "1", "1", "2", "3"]))
        return ",".join(item(lo, hi, names, special) for _ in range(count))

    shape = choose(["5", "5", "5", "6", "7", "7", "macro"])
    if shape == "macro":
        return choose(_MACROS)
    fields = [field(0, 59), field(0, 23), field(1, 31, (), _DOM_SPECIAL),
              field(1, 12, _MONTHS), field(0, 6, _WEEKDAYS, _DOW_SPECIAL)]
    if shape == "7":
        fields.insert(0, field(0, 59))
    if shape in ("6", "7"):
        fields.append(choose(_YEARS))
    return " ".join(fields)
