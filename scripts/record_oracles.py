"""Record the answers of the real implementations the schedule dialects are compared with
(tests/oracles/) into tests/golden/, so the comparisons run where the binaries are not.

    python scripts/record_oracles.py                 # ask every recorded question again
    python scripts/record_oracles.py --chkcrontab chkcrontab-1.7.tar.gz --generate 400

The questions: those the tests declare (tests/test_calendar.py and tests/test_dst_arithmetic.py
``QUERIES``, tests/test_debian_cron.py ``SCHEDULES``); the schedules of crontab(5)'s examples (from
the unpacked cron package) and the calendar events of systemd.time(7) (installed); with ``--chkcrontab``, every schedule of chkcrontab's test crontabs
and of its field tests (its sdist: ``pip download chkcrontab --no-deps --no-binary :all:``);
with ``--generate N``, N schedules of each dialect drawn from tests/schedule_grammars.py
(``--seed``), in place of the generated ones recorded before. Every other question recorded
before is asked again. Needs systemd-analyze, and Debian's crontab unpacked as ``.ci/run``
does it, run as root (``unshare -m``).
"""
from __future__ import annotations

import argparse
import ast
import gzip
import random
import re
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO / "tests"), str(REPO / "src")]

import oracles  # noqa: E402
from oracles import CalendarQuery  # noqa: E402
from schedule_grammars import calendar_expression, debian_schedule  # noqa: E402

GENERATED = "generated"
#: the cron package's field positions, by chkcrontab's names for them
_POSITIONS = {"minute": 0, "hour": 1, "day of month": 2, "month": 3, "day of week": 4}


def _schedule(line: str) -> str | None:
    """The time fields of a crontab line (one for a macro, else five), or None for a comment,
    a blank line or an environment setting."""
    line = line.strip()
    if not line or line.startswith("#") or re.match(r"^[A-Za-z_]\w*\s*=", line):
        return None
    words = line.split()
    return " ".join(words[:1] if line.startswith("@") else words[:5])


def _in_position(field: str, position: int) -> str:
    fields = ["*"] * 5
    fields[position] = field
    return " ".join(fields)


def chkcrontab_schedules(sdist: Path) -> dict[str, str]:
    """Every schedule of chkcrontab's test crontabs, and the fields of its parser tests set in
    a line of stars (in their field's place, or in each place for the untyped ones)."""
    out: dict[str, str] = {}
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            name = member.name.split("/", 1)[-1]
            if not (name.startswith("tests/test_crontab") or name == "tests/test_check.py"):
                continue
            data = tar.extractfile(member)
            if data is None:
                continue
            text = data.read().decode()
            source = f"{sdist.name.removesuffix('.tar.gz')} {name}"
            if name.startswith("tests/test_crontab"):
                for line in text.splitlines():
                    if (schedule := _schedule(line)) is not None:
                        out.setdefault(schedule, source)
            elif name == "tests/test_check.py":
                for call in ast.walk(ast.parse(text)):
                    if not (isinstance(call, ast.Call) and call.args and all(
                            isinstance(a, ast.Constant) for a in call.args[:1])):
                        continue
                    func = getattr(call.func, "id", getattr(call.func, "attr", ""))
                    args = [a.value for a in call.args if isinstance(a, ast.Constant)]
                    if func in ("Flds", "EFlds") and isinstance(args[0], str):
                        for position in range(5):
                            out.setdefault(_in_position(args[0], position), source)
                    elif func == "FieldTest" and len(args) >= 3 and args[0] in _POSITIONS:
                        for field in [args[2], *args[2].split(",")]:
                            out.setdefault(_in_position(field, _POSITIONS[args[0]]), source)
    return out


def manual_schedules() -> dict[str, str]:
    """The schedules of crontab(5) of the unpacked cron package: its example file's entries
    and the quoted five-field examples of its text."""
    page = oracles.CRONTAB.parents[1] / "share" / "man" / "man5" / "crontab.5.gz"
    if not page.exists():
        return {}
    text = gzip.decompress(page.read_bytes()).decode(errors="replace")
    out: dict[str, str] = {}
    example = text[text.find(".SH EXAMPLE"):]
    for line in example[:example.find(".fi")].splitlines():
        if line[:1].isdigit() or line[:1] in "*@":
            if (schedule := _schedule(line)) is not None:
                out.setdefault(schedule, "crontab(5)")
    for quoted in re.findall(r"``([^`']+)''", text):
        if len(quoted.split()) == 5:
            out.setdefault(quoted, "crontab(5)")
    return out


def calendar_manual_expressions() -> dict[CalendarQuery, str]:
    """The examples of systemd.time(7) (installed with systemd): the left side of each
    "expression → normal form" line of its calendar events."""
    page = Path("/usr/share/man/man7/systemd.time.7.gz")
    if not page.exists():
        return {}
    text = gzip.decompress(page.read_bytes()).decode(errors="replace")
    out: dict[CalendarQuery, str] = {}
    for line in text[text.find("CALENDAR EVENTS"):].splitlines():
        if " \u2192 " in line:
            expression = line.split(" \u2192 ")[0].strip()
            expression = expression.replace("\\-", "-").replace("\\&", "").replace("\\ ", " ")
            out.setdefault(CalendarQuery(expression), "systemd.time(7)")
    return out


def _declared() -> tuple[dict[CalendarQuery, str], dict[str, str]]:
    """The questions the test modules declare, and which module."""
    import test_calendar
    import test_debian_cron
    import test_dst_arithmetic
    calendar: dict[CalendarQuery, str] = {}
    for module in (test_calendar, test_dst_arithmetic):
        for query in module.QUERIES:
            calendar.setdefault(query, f"tests/{module.__name__}.py")
    debian = {s: "tests/test_debian_cron.py" for s in test_debian_cron.SCHEDULES}
    return calendar, debian


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chkcrontab", type=Path, help="chkcrontab's sdist (.tar.gz)")
    parser.add_argument("--generate", type=int, help="generated schedules of each dialect")
    parser.add_argument("--seed", type=int, default=16)
    args = parser.parse_args()
    if oracles.RECORDED_ONLY or not oracles.systemd_available() or \
            not oracles.debian_available():
        sys.exit("record_oracles: needs systemd-analyze and Debian's crontab -n (as root)")

    calendar, debian = _declared()
    old_calendar = {q: source for q, (_, source) in oracles.recorded_calendar().items()}
    old_debian = {s: source for s, (_, source) in oracles.recorded_debian().items()}
    for q, source in old_calendar.items():
        if not source.startswith("tests/") and (source != GENERATED or args.generate is None):
            calendar.setdefault(q, source)
    for schedule, source in old_debian.items():
        if not source.startswith("tests/") and (source != GENERATED or args.generate is None):
            debian.setdefault(schedule, source)
    for schedule, source in manual_schedules().items():
        debian.setdefault(schedule, source)
    for query, source in calendar_manual_expressions().items():
        calendar.setdefault(query, source)
    if args.chkcrontab:
        for schedule, source in chkcrontab_schedules(args.chkcrontab).items():
            debian.setdefault(schedule, source)
    if args.generate:
        rng = random.Random(args.seed)
        for _ in range(args.generate):
            calendar.setdefault(CalendarQuery(calendar_expression(rng)), GENERATED)
            debian.setdefault(debian_schedule(rng), GENERATED)

    answers = oracles.ask_systemd(calendar)
    oracles.write_golden(oracles.SYSTEMD_GOLDEN, oracles.systemd_version(), [
        {"source": source, "expression": q.expression, "base": q.base, "tz": q.tz,
         "iterations": q.iterations, "normalized": answers[q].normalized,
         "elapses": list(answers[q].elapses)}
        | ({"failure": answers[q].failure} if answers[q].failure else {})
        for q, source in sorted(calendar.items(), key=lambda i: (i[1], i[0].expression,
                                                                  i[0].base, i[0].tz))])
    accepted = oracles.ask_debian(list(debian))
    oracles.write_golden(oracles.DEBIAN_GOLDEN, oracles.debian_version(), [
        {"source": source, "schedule": s, "accepts": accepted[s]}
        for s, source in sorted(debian.items(), key=lambda i: (i[1], i[0]))])
    for name, old, new in (("systemd", old_calendar, calendar), ("debian", old_debian, debian)):
        print(f"{name}: {len(new)} answers ({len(set(new) - set(old))} new, "
              f"{len(set(old) - set(new))} dropped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
