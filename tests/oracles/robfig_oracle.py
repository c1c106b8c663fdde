"""robfig/cron v3, the parser and scheduler of Kubernetes CronJobs, run as an oracle.

``build()`` compiles ``robfig/main.go`` against Debian's golang-github-robfig-cron-dev
(offline, into a temporary folder); ``ask()`` sends it cases. ``python
tests/oracles/robfig_oracle.py`` re-records the golden answers of every case in
``tests/golden/robfig_cron.json`` (and adds ``--random N`` generated cases).
"""
from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
GOLDEN = HERE.parent / "golden" / "robfig_cron.json"
#: where Debian's golang-github-robfig-cron-dev puts the library's source
ROBFIG_SOURCE = Path("/usr/share/gocode/src/github.com/robfig/cron")


def build(into: Path) -> Path | None:
    """The oracle's binary, or None without Go or the library."""
    if shutil.which("go") is None or not (ROBFIG_SOURCE / "parser.go").exists():
        return None
    (into / "main.go").write_text((HERE / "robfig" / "main.go").read_text())
    (into / "go.mod").write_text(
        "module robfigoracle\n\ngo 1.19\n\nrequire github.com/robfig/cron/v3 v3.0.1\n\n"
        f"replace github.com/robfig/cron/v3 => {ROBFIG_SOURCE}\n")
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOCACHE": str(into / "cache"),
           "GOPATH": str(into / "gopath")}
    proc = subprocess.run(["go", "build", "-o", "oracle", "."], cwd=into, env=env,
                          capture_output=True, text=True, timeout=300)
    return into / "oracle" if proc.returncode == 0 else None


def ask(binary: Path, cases: list[dict]) -> list[dict]:
    """The oracle's answers: ``error`` or ``next`` for each case (zone, base, n, schedule)."""
    lines = "".join(f"{c['zone']}\t{c['base']}\t{c['n']}\t{c['schedule']}\n" for c in cases)
    proc = subprocess.run([str(binary)], input=lines, capture_output=True, text=True,
                          check=True, timeout=300)
    answers = [json.loads(line) for line in proc.stdout.splitlines()]
    return [{"error": a.get("error"), "next": a["next"]} for a in answers]


def random_schedule(rng: random.Random) -> str:
    """A schedule over robfig's grammar: most are valid (names in any case, '?', steps after
    a single value, lists, ranges), a third are spelled with its neighbours' errors
    (out-of-range values, unknown names, descending ranges, a zero step, empty items)."""
    broken = rng.random() < 0.35
    names = {3: ["jan", "Feb", "MAR", "dec"], 4: ["sun", "Mon", "SAT", "thu"]}
    lows, tops = [0, 0, 1, 1, 0], [59, 23, 31, 12, 6]

    def atom(i: int) -> str:
        if broken and rng.random() < 0.2:
            return rng.choice(["foo", "", "+5", "-1", "7", "60", "0", "32", "13", "24"])
        if i in names and rng.random() < 0.2:
            return rng.choice(names[i])
        return str(rng.randint(lows[i], tops[i]))

    def item(i: int) -> str:
        roll = rng.random()
        if roll < 0.3:
            text = rng.choice(["*", "*", "?"])
        elif roll < 0.55:
            ends = [atom(i), atom(i)]
            if not broken and all(e.isdigit() for e in ends):
                ends.sort(key=int)
            text = "-".join(ends)
        else:
            text = atom(i)
        if rng.random() < 0.35:
            text += f"/{rng.choice([0, 5] if broken else [1, 2, 3, 5, 7, 15, 30, 61])}"
        return text

    fields = [",".join(item(i) for _ in range(rng.choice([1, 1, 1, 2, 3]))) for i in range(5)]
    return " ".join(fields)


def main(argv: list[str]) -> int:
    cases = json.loads(GOLDEN.read_text())["cases"] if GOLDEN.exists() else []
    if "--random" in argv:
        rng = random.Random(16)
        count = int(argv[argv.index("--random") + 1])
        seen = {c["schedule"] for c in cases}
        while count:
            schedule = random_schedule(rng)
            if schedule not in seen:
                seen.add(schedule)
                cases.append({"zone": "UTC", "base": "2027-03-01T00:00:00Z", "n": 10,
                              "schedule": schedule, "source": "generated"})
                count -= 1
    with tempfile.TemporaryDirectory() as folder:
        binary = build(Path(folder))
        if binary is None:
            print("go or robfig/cron's source is missing", file=sys.stderr)
            return 1
        for case, answer in zip(cases, ask(binary, cases)):
            case.update(answer)
    lines = ",\n".join(json.dumps(case, ensure_ascii=False) for case in cases)
    GOLDEN.write_text('{"about": "robfig/cron v3.0.1\'s answers (ParseStandard, Next): '
                      'tests/oracles/robfig_oracle.py",\n"cases": [\n' + lines + "\n]}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
