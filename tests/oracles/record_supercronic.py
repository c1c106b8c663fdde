"""Record the supercronic oracle's answers in tests/golden/supercronic.json.

    python tests/oracles/record_supercronic.py [--generated 600]

Needs Go and supercronic's source (see tests/oracles/supercronic.py). The cases: the
expressions of supercronic's own tests (cronexpr_test.go) and crontab files of its tests
(crontab_test.go, integration/*.crontab), gorhill/cronexpr's README examples, jobsafe's own
(the days the clocks change, the dialect's corners), and expressions drawn from the
grammar of tests/oracles/supercronic.py with a fixed seed.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from oracles.supercronic import (  # noqa: E402
    BASES, COMMAND, DAYS, ask, build, encode, expression, source)

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "supercronic.json"
SEED = 20261201

#: gorhill/cronexpr's README (cronexpr/README.md in supercronic): its examples and table
README = ["0 0 29 2 *", "* * * * * 1980", "* * * * * 2050", "* * * * * 2013",
          "* * * * Mon", "3-59/15 * * * *", "0 0 * * MON,WED,FRI", "0 0 1 1 * 2000-2010",
          "@annually", "@yearly", "@monthly", "@weekly", "@daily", "@hourly", "@reboot",
          "0 0 0 1 1 * *", "0 0 0 * * 0 *", "0 0 * * * * *", "0 0 15W * *", "0 0 * * 5L",
          "0 0 LW * *", "0 0 * * 5#2", "0 0 * * 7", "0 0 L * *", "0 0 1W * *"]

#: jobsafe's own: times the clocks skip or repeat (Berlin 02:00-03:00 both ways, New York
#: 02:00-03:00 in March, 01:00-02:00 in November, Santiago 23:00-24:00 in April and
#: 00:00-01:00 in September), and the corners of the dialect
JOBSAFE = [
    "30 2 * * *", "0 2 * * *", "59 2 * * *", "0,30 2 * * *", "0 1,2,3 * * *", "10 0,2 * * *",
    "15,45 0,2 * * *", "30 1-3 * * *", "*/10 2-3 * * *", "0 3 * * *", "30 1 * * *",
    "0 1 * * *", "59 1 * * *", "0 30 2 * * * *", "*/20 * 2 * * * *", "0 0 2 * * * *",
    "* * * * * * *", "*/15 * * * *", "* * * * *", "5 * * * *", "0 */2 * * *", "0 0-3 * * *",
    "30 */3 * * *", "0 0 * * *", "0 2 29 3 *", "30 2 * 3 0", "0 2 * 3 SUN", "30 2 L 3 *",
    "0 2 * 3 0L", "0 1,2 * 11 0", "0 0,1 * * *", "30 23 * * *", "0 0 * * *", "*/20 0 * * *",
    "0 30 23 * * * *", "59 23 * * 6", "0 0 * 9 0", "15 0,1 * 9 *",
    # day-of-week numbers cronexpr does not list read as Sunday; 7 too
    "0 0 * * 01", "0 0 * * 07", "0 0 * * 05", "0 0 * * 1-7", "0 0 * * 0-7", "0 0 * * 5-7/1",
    "0 0 * * 6-0", "0 0 * * sat-sun", "0 0 * * */2", "0 0 * * 1-5/2", "0 0 * * */7",
    "0 0 * * 0/3", "0 0 * * 7L", "0 0 * * 7#2", "0 0 * * 01#2", "0 0 * * 3#5",
    # `*` first: the rest of the field unread
    "*,foo * * * *", "foo,* * * * *", "*,61 * * * *", "0 *,x * * *", "0 0 *,x * *",
    # descending: a range refused, a range with a step empty (a crash, or no day)
    "30-10/5 * * * *", "5-1 * * * *", "0 20-5/1 * * *", "0 0 20-10/2 * *",
    "0 0 * 12-1/1 *", "0 0 * * * 2030-2020/1", "0 0 0 * * * 2030-2020/1",
    "0 0 20-10/2 * 1",
    # no time ever, or none left
    "0 0 30 2 *", "0 0 31 4,6,9,11 *", "0 0 * * * 2020", "0 0 * * * 1970-2025",
    "11 1 31 2 * *", "0 0 29 2 * 2027", "0 0 29 2 * 2028",
    # days: last, nearest weekday, nth weekday, both fields restricted
    "0 0 L 2 *", "0 0 LW * *", "0 0 1W * *", "0 0 31W * *", "0 0 15W * 1", "0 0 L * 5",
    "0 0 1,15 * 1-5", "0 0 ? * 1", "0 0 1 * ?", "0 0 1,* * 1", "0 0 1 * 1,*",
    "0 0 1-7 * 1", "0 0 * * 6#5", "0 0 * * 5#3,5L", "0 0 L,15 * *", "0 0 LW,1W * *",
    # names, any case, three letters or in full
    "0 0 * Jan-Mar *", "0 0 * JANUARY *", "0 0 * * MONDAY", "0 0 * * Monday-Friday",
    "0 0 * sept *", "0 0 * * wedn", "0 0 * dec-jan *", "0 0 * may *", "0 0 * * fri-mon",
    # steps and numbers
    "*/7 * * * *", "5/15 * * * *", "*/59 * * * *", "*/60 * * * *", "*/0 * * * *",
    "0 */24 * * *", "0 */23 * * *", "*/05 * * * *", "*/007 * * * *", "0 0 */31 * *",
    "0 0 * */12 *", "0 0 * */13 *", "00 00 01 01 *", "000 0 * * *", "60 * * * *",
    "0 24 * * *", "0 0 0 * *", "0 0 * 0 *", "0 0 * 13 *", "0 0 * * 8", "-1 * * * *",
    "0 0 1 1 * 1969", "0 0 1 1 * 2100", "0 0 1 1 * 2099", "0 0 1 1 * */2",
    "0 0 1 1 * 2026/1970", "0 0 1 1 * 2026-2099/2000",
    # six fields end with years (a Quartz line, seconds first, reads otherwise)
    "0 */5 * * * *", "0 0 12 * * ?", "*/10 * * * * *", "0 30 8 * * 1-5",
    "15 10 ? * 6L 2027", "0 0 0 ? * * *",
    # seven
    "*/10 * * * * * *", "30 0 0 1-31/5 Oct-Dec * 2026,2028", "0 0 0 * Feb-Nov/2 thu#3 *",
    "59 59 23 31 12 * 2099", "0 0 12 * * ? 2027",
    # separators and macros
    "*/5\t*\t*\t*\t*", "*/5  *  *  *  *", "*/5\u00a0* * * *", "*/5 *\x0b * * *",
    "*/5 * * * *\f", "@Daily", "@midnight", "@every", "@hourly2", "@daily@daily",
]

#: jobsafe's own crontab files: the file's rules (environment, zone, refusals, crashes)
JOBSAFE_FILES = [
    "FOO=\n0 * * * * x\n", "FOO = \n", "0 * * * * x\nFOO=\n",
    "CRON_TZ=Mars/Base\n0 * * * * x\n", "CRON_TZ=Europe/Berlin\n30 2 * * * x\n",
    "0 1 * * * x\nCRON_TZ=Asia/Tokyo\nA=1\n", "CRON_TZ=UTC\nCRON_TZ=America/New_York\n",
    "CRON_TZ='Europe/Berlin'\n", "CRON_TZ=Local\n", "CRON_TZ=utc\n", "CRON_TZ=\"\"\n",
    "0 * * * * x\r\n1 * * * * y\r\n", "foo bar\n0 * * * * x\n", "  # c\n\t0 * * * * x\n",
    "5=2\n", "A\t=\t\"q\n", "B='x'\nC='\n", "0 * * * * x\n30-10/5 * * * * y\n",
    "0 0 30 2 * x\n", "@reboot x\n", "0 1 * * * date +%Y-%m-%d %H\n",
    "0 1 * * *    echo  a   \n", "x=1 2\n0 * * * * echo $x\n", "* * * *\n0 * * * * x\n",
    "SHELL=/bin/bash\nPATH=/usr/bin\n*/5 * * * * run\n0 0 * * * * * nightly\n",
]


def _read(src: Path, rel: str) -> str | None:
    if (src / rel).is_file():
        return (src / rel).read_text()
    shown = subprocess.run(["git", "-C", str(src), "show", f"HEAD:{rel}"],
                           capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


def _list(src: Path, folder: str, suffix: str) -> list[str]:
    if (src / folder).is_dir():
        return sorted(p.relative_to(src).as_posix() for p in (src / folder).glob(f"*{suffix}"))
    listed = subprocess.run(["git", "-C", str(src), "ls-tree", "--name-only", "HEAD",
                             f"{folder}/"], capture_output=True, text=True)
    return sorted(n for n in listed.stdout.split() if n.endswith(suffix))


def _go_strings(text: str) -> list[str]:
    """The Go string literals ("…") of a source, decoded."""
    return [json.loads(f'"{m}"') for m in re.findall(r'"((?:[^"\\\n]|\\.)*)"', text)]


def _revision(src: Path) -> str:
    for rel in ("COMMIT",):
        if (src / rel).is_file():
            return (src / rel).read_text().strip()
    got = subprocess.run(["git", "-C", str(src), "rev-parse", "HEAD"], capture_output=True,
                         text=True)
    return got.stdout.strip() or "unknown"


def seeds(src: Path, generated: int) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(lines, files): each a case and where it comes from."""
    lines: list[tuple[str, str]] = []
    tests = _read(src, "cronexpr/cronexpr_test.go") or ""
    for text in dict.fromkeys(_go_strings(tests)):  # (its expressions, not its dates)
        if re.match(r"[@0-9*?]", text) and (text.startswith("@") or len(text.split()) >= 5) \
                and ":" not in text and not text[:4].isdigit():
            lines.append((text, "cronexpr_test.go"))
    lines += [(e, "cronexpr README") for e in README]
    lines += [(e, "jobsafe") for e in JOBSAFE]
    draw = random.Random(SEED)
    lines += [(expression(draw.choice), "generated") for _ in range(generated)]
    first = {e: origin for e, origin in reversed(lines)}  # (a case once, where first seen)
    lines = [(f"{e} {COMMAND}", first[e]) for e in dict.fromkeys(e for e, _ in lines)]
    files: list[tuple[str, str]] = []
    crontab_tests = _read(src, "crontab/crontab_test.go") or ""
    cases = crontab_tests[crontab_tests.find("parseCrontabTestCases"):]
    cases = cases[:cases.find("func TestParseCrontab")]
    for text in dict.fromkeys(_go_strings(cases)):
        if text not in ("/bin/sh",) and not text.isupper():
            files.append((text, "crontab_test.go"))
    for rel in _list(src, "integration", ".crontab"):
        files.append((_read(src, rel) or "", rel))
    files += [(text, "jobsafe") for text in JOBSAFE_FILES]
    return lines, files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--generated", type=int, default=600)
    args = parser.parse_args()
    src = source()
    with tempfile.TemporaryDirectory() as work:
        binary = build(Path(work))
        if src is None or binary is None:
            print("no Go, no supercronic source, or the build failed", file=sys.stderr)
            return 2
        lines, files = seeds(src, args.generated)
        line_answers = ask(binary, [c for c, _ in lines], BASES, DAYS)
        file_answers = ask(binary, [c for c, _ in files], BASES[:1], n=3, files=True)
    golden = {
        "about": "answers of supercronic's own crontab reader and cronexpr "
                 "(tests/oracles/supercronic_oracle.go), recorded by "
                 "tests/oracles/record_supercronic.py",
        "supercronic": _revision(src), "bases": BASES, "days": DAYS, "command": COMMAND,
        "lines": [_line(case, origin, a) for (case, origin), a in zip(lines, line_answers)],
        "files": [_file(case, origin, a) for (case, origin), a in zip(files, file_answers)],
    }
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    GOLDEN.write_text(dump(golden))
    print(f"{len(lines)} lines, {len(files)} files -> {GOLDEN}")
    return 0


def dump(golden: dict) -> str:
    """The golden file: one case a line (diffs stay readable)."""
    def one(value) -> str:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))

    head = {k: v for k, v in golden.items() if k not in ("lines", "files")}
    parts = [one(head)[:-1]]
    for key in ("lines", "files"):
        parts.append(f',\n"{key}":[\n' + ",\n".join(one(c) for c in golden[key]) + "\n]")
    return "".join(parts) + "}\n"


def _line(case: str, origin: str, answer: dict) -> dict:
    out = {"case": case, "from": origin, **_verdict(answer)}
    if out["ok"]:
        (job,) = answer["jobs"]
        out.update(schedule=job["schedule"], command=job["command"],
                   next=[encode(job["next"][base]) for base in BASES],
                   days=[[job["days"][day]["runs"], job["days"][day]["gap"]] for day in DAYS])
    return out


def _file(case: str, origin: str, answer: dict) -> dict:
    out = {"case": case, "from": origin, **_verdict(answer)}
    if out["ok"]:
        out.update(timezone=answer["timezone"], environ=answer.get("environ") or {},
                   jobs=[[j["schedule"], j["command"]] for j in answer["jobs"]])
    return out


def _verdict(answer: dict) -> dict:
    if answer.get("panic"):
        return {"ok": False, "crash": answer["panic"]}
    if not answer["ok"]:
        return {"ok": False, "error": answer["error"]}
    return {"ok": True}


if __name__ == "__main__":
    sys.exit(main())
