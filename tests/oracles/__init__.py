"""The real implementations jobsafe's schedule dialects are compared with, and their recorded
answers, so that the comparisons run where the binaries are not.

- systemd: ``systemd-analyze calendar`` (normalised form and next elapses of ``OnCalendar=``
  expressions), asked many expressions in one call.
- Debian's cron: ``crontab -n`` of Debian's ``cron`` package (``.ci/run`` unpacks it into
  ``$JOBSAFE_ORACLES``), run in a private mount namespace (``unshare -m``) over a copy of
  ``/etc/group`` with a ``crontab`` group and a tmpfs spool, so the host is left as it was;
  many schedules in one namespace.

``tests/golden/`` holds their answers, written by ``scripts/record_oracles.py``. Where a binary
is here, a test asks it and also checks the recorded answer equals the live one (so the
recording cannot rot); where it is not, the recorded answer stands in. A case missing from
the recording fails either way. ``JOBSAFE_ORACLES_RECORDED=1`` ignores the binaries (to run
the recorded path where they are installed).
"""
from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from jobsafe.calendar import next_elapses, parse_calendar
from jobsafe.schedule import ScheduleError
from jobsafe.sources.crontab import parse_crontab

GOLDEN = Path(__file__).parent.parent / "golden"
SYSTEMD_GOLDEN = GOLDEN / "systemd_calendar.json"
DEBIAN_GOLDEN = GOLDEN / "debian_crontab.json"

RECORDED_ONLY = os.environ.get("JOBSAFE_ORACLES_RECORDED", "") not in ("", "0")
ANALYZE = shutil.which("systemd-analyze")
ORACLES = Path(os.environ.get("JOBSAFE_ORACLES", Path.home() / ".cache" / "jobsafe-oracles"))
CRONTAB = ORACLES / "debian-cron" / "usr" / "bin" / "crontab"

#: the base time and zone of the calendar comparisons, unless a query says otherwise
BASE = "2027-01-01 00:00:00 UTC"
RERECORD = "run scripts/record_oracles.py where the binary is installed"


# -- systemd-analyze calendar ------------------------------------------------------------------

@dataclass(frozen=True)
class CalendarQuery:
    """One question to ``systemd-analyze calendar``: the expression, from ``base``, the first
    ``iterations`` elapses, with ``TZ`` set to ``tz``."""

    expression: str
    base: str = BASE
    iterations: int = 5
    tz: str = "UTC"


@dataclass(frozen=True)
class CalendarAnswer:
    """systemd's answer: the normalised form (None: rejected) and the elapses, in UTC to the
    second as systemd-analyze prints them; or, for an expression it reads but cannot compute
    the elapses of (``failure``), only that."""

    normalized: str | None
    elapses: tuple[str, ...] = ()
    failure: str | None = None

    @property
    def rejected(self) -> bool:
        return self.normalized is None and self.failure is None


def systemd_available() -> bool:
    return ANALYZE is not None and not RECORDED_ONLY


def systemd_version() -> str:
    assert ANALYZE is not None
    return subprocess.run([ANALYZE, "--version"], capture_output=True, text=True,
                          check=True).stdout.splitlines()[0]


_REJECTED = re.compile(r"^Failed to parse calendar specification '(.*)': ", re.M)
#: systemd reads the expression, but its computation of an elapse fails ("Resource deadlock
#: avoided": it refuses to go backward, as around Lord Howe Island's half-hour change)
_FAILED = re.compile(r"^Failed to determine next elapse for '(.*)': (.*)$", re.M)
_ELAPSE = re.compile(r"^\s*(Next elapse|Iter\. #\d+|\(in UTC\)): (?:\w+ (\d{4}-\d\d-\d\d "
                     r"\d\d:\d\d:\d\d) (\S+)|never)$", re.M)


def ask_systemd(queries: Iterable[CalendarQuery]) -> dict[CalendarQuery, CalendarAnswer]:
    """systemd-analyze's answers, one call for each base, iteration count and zone."""
    groups: dict[tuple[str, int, str], list[str]] = {}
    for q in queries:
        groups.setdefault((q.base, q.iterations, q.tz), [])
        if q.expression not in groups[(q.base, q.iterations, q.tz)]:
            groups[(q.base, q.iterations, q.tz)].append(q.expression)
    out: dict[CalendarQuery, CalendarAnswer] = {}
    for (base, iterations, tz), expressions in groups.items():
        for chunk in range(0, len(expressions), 500):  # (the argument list stays short)
            answers = _analyze(expressions[chunk:chunk + 500], base, iterations, tz)
            out.update({CalendarQuery(e, base, iterations, tz): a for e, a in answers.items()})
    return out


def _analyze(expressions: list[str], base: str, iterations: int,
             tz: str) -> dict[str, CalendarAnswer]:
    """One call. The accepted expressions' blocks come in order on stdout; a rejected one has
    no block, only a line on stderr naming it."""
    assert ANALYZE is not None
    proc = subprocess.run([ANALYZE, "calendar", f"--base-time={base}",
                           f"--iterations={iterations}", "--", *expressions],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TZ": tz, "LC_ALL": "C"})
    rejected = _REJECTED.findall(proc.stderr)
    failed = dict(_FAILED.findall(proc.stderr))
    accepted = [e for e in expressions if e not in rejected and e not in failed]
    blocks = [b for b in re.split(r"\n\s*\n", proc.stdout) if b.strip()]
    if len(blocks) != len(accepted) or sorted(set(rejected) | set(failed)) != sorted(
            set(expressions) - set(accepted)):
        if len(expressions) == 1:
            raise RuntimeError(f"cannot read systemd-analyze's answer for {expressions}: "
                               f"{proc.stdout!r} {proc.stderr!r}")
        # (an answer that cannot be told apart: ask one at a time)
        out: dict[str, CalendarAnswer] = {}
        for e in expressions:
            out.update(_analyze([e], base, iterations, tz))
        return out
    answers = {e: CalendarAnswer(None, (), failed.get(e)) for e in expressions
               if e in rejected or e in failed}
    for expression, block in zip(accepted, blocks):
        normalized = re.search(r"Normalized form: (.*)", block)
        original = re.search(r"Original form: (.*)", block)
        assert normalized is not None, block
        assert original is None or original.group(1).strip() == expression.strip(), \
            (expression, block)
        elapses: list[str] = []
        for m in _ELAPSE.finditer(block):
            if m.group(2) is None:
                continue  # never
            if m.group(1) == "(in UTC)":
                elapses[-1] = m.group(2)  # the line before it was in local time
            else:
                elapses.append(m.group(2) if m.group(3) == "UTC" else "")
        assert all(elapses), block
        answers[expression] = CalendarAnswer(normalized.group(1).strip(), tuple(elapses))
    return answers


def _calendar_key(entry: dict[str, Any]) -> CalendarQuery:
    return CalendarQuery(entry["expression"], entry["base"], entry["iterations"], entry["tz"])


@cache
def recorded_calendar() -> dict[CalendarQuery, tuple[CalendarAnswer, str]]:
    """The recorded answers, and where each question came from."""
    if not SYSTEMD_GOLDEN.exists():
        return {}
    return {_calendar_key(e): (CalendarAnswer(e["normalized"], tuple(e["elapses"]),
                                              e.get("failure")), e["source"])
            for e in json.loads(SYSTEMD_GOLDEN.read_text())["answers"]}


class SystemdOracle:
    """systemd's answers to a module's questions: asked at once where systemd-analyze is,
    the recorded ones where it is not."""

    def __init__(self, queries: Iterable[CalendarQuery]):
        self.live = ask_systemd(queries) if systemd_available() else None

    def answer(self, query: CalendarQuery) -> CalendarAnswer:
        recorded = recorded_calendar().get(query)
        if self.live is None:
            if recorded is None:
                pytest.fail(f"no recorded answer of systemd-analyze for {query}: {RERECORD}")
            return recorded[0]
        live = self.live[query] if query in self.live else ask_systemd([query])[query]
        assert recorded is not None, f"{query} is not recorded: {RERECORD}"
        assert recorded[0] == live, f"the recorded answer for {query} is not systemd's: " \
                                    f"{recorded[0]} != {live} (recorded with " \
                                    f"{recorded_with(SYSTEMD_GOLDEN)}); {RERECORD}"
        return live


# -- Debian's crontab -n -----------------------------------------------------------------------

def debian_available() -> bool:
    return (CRONTAB.exists() and shutil.which("unshare") is not None and os.geteuid() == 0
            and not RECORDED_ONLY)


def debian_version() -> str:
    debs = sorted(ORACLES.glob("cron_*.deb"))
    return debs[-1].name if debs else "cron"


def ask_debian(schedules: Sequence[str]) -> dict[str, bool]:
    """Does Debian's ``crontab -n`` accept ``SCHEDULE true``? One namespace for them all."""
    unique = list(dict.fromkeys(schedules))
    with tempfile.TemporaryDirectory(prefix="jobsafe-crontab-") as tmp:
        folder = Path(tmp)
        group = folder / "group"
        group.write_text(Path("/etc/group").read_text() + "crontab:x:999:\n")
        for i, schedule in enumerate(unique):
            (folder / f"c{i}").write_text(f"{schedule} true\n")
        script = (f"mount --bind {group} /etc/group && mount -t tmpfs tmpfs /var/spool && "
                  f"mkdir -p /var/spool/cron/crontabs && i=0 && while [ $i -lt {len(unique)} ];"
                  f" do {CRONTAB} -n {folder}/c$i >/dev/null 2>&1; echo $?; i=$((i+1)); done")
        proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                              text=True, timeout=600)
    codes = proc.stdout.split()
    if proc.returncode != 0 or len(codes) != len(unique) or set(codes) - {"0", "1"}:
        raise RuntimeError(f"crontab -n did not answer: {proc.returncode} {proc.stderr!r} "
                           f"{codes[:10]}")
    return {s: code == "0" for s, code in zip(unique, codes)}


@cache
def recorded_debian() -> dict[str, tuple[bool, str]]:
    """The recorded answers (does ``crontab -n`` accept it), and where each came from."""
    if not DEBIAN_GOLDEN.exists():
        return {}
    return {e["schedule"]: (e["accepts"], e["source"])
            for e in json.loads(DEBIAN_GOLDEN.read_text())["answers"]}


class DebianOracle:
    """Debian's answers to a module's questions: asked at once where its crontab is, the
    recorded ones where it is not."""

    def __init__(self, schedules: Sequence[str]):
        self.live = ask_debian(schedules) if debian_available() else None

    def accepts(self, schedule: str) -> bool:
        recorded = recorded_debian().get(schedule)
        if self.live is None:
            if recorded is None:
                pytest.fail(f"no recorded answer of crontab -n for {schedule!r}: {RERECORD}")
            return recorded[0]
        live = self.live[schedule] if schedule in self.live else ask_debian([schedule])[schedule]
        assert recorded is not None, f"{schedule!r} is not recorded: {RERECORD}"
        assert recorded[0] == live, f"the recorded answer for {schedule!r} is not crontab " \
                                    f"-n's ({recorded[0]} != {live}, recorded with " \
                                    f"{recorded_with(DEBIAN_GOLDEN)}); {RERECORD}"
        return live


# -- the recordings' files ---------------------------------------------------------------------

def recorded_with(path: Path) -> str:
    """The version of the binary a recording was made with."""
    return str(json.loads(path.read_text())["recorded_with"]) if path.exists() else "nothing"


def write_golden(path: Path, recorded_with: str, entries: list[dict[str, Any]]) -> None:
    """One entry a line: a re-recording's diff shows the answers that changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = ",\n".join(json.dumps(e) for e in entries)
    path.write_text(f'{{"recorded_with": {json.dumps(recorded_with)},\n'
                    f'"answers": [\n{lines}\n]}}\n')


# -- jobsafe's readings, compared ----------------------------------------------------------------

def moment(base: str) -> dt.datetime:
    """A ``--base-time`` as a moment: ``@SECONDS`` or ``YYYY-MM-DD HH:MM:SS UTC``."""
    if base.startswith("@"):
        return dt.datetime.fromtimestamp(float(base[1:]), dt.timezone.utc)
    return dt.datetime.strptime(base, "%Y-%m-%d %H:%M:%S UTC").replace(tzinfo=dt.timezone.utc)


def jobsafe_calendar(query: CalendarQuery) -> CalendarAnswer:
    """jobsafe's reading in systemd-analyze's terms (raises ScheduleError where it rejects)."""
    spec = parse_calendar(query.expression)
    after = moment(query.base).astimezone(ZoneInfo(query.tz))
    return CalendarAnswer(spec.normalized(), tuple(
        t.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        for t in next_elapses(spec, after, query.iterations)))


def sub_second(normalized: str) -> bool:
    """Does the normalised form hold a fraction of a second (``00:00:59/0.500000``)? jobsafe
    counts whole seconds (a job's interval is never shorter than one): firings within one
    second are one to it, so of these only the normalised form is compared."""
    return any(re.search(r"\d\.\d", word) for word in normalized.split() if ":" in word)


def calendar_disagreement(query: CalendarQuery, answer: CalendarAnswer) -> str | None:
    """How jobsafe's reading differs from systemd's answer, or None."""
    try:
        ours = jobsafe_calendar(query)
    except ScheduleError as exc:
        return None if answer.rejected else f"jobsafe rejects ({exc}), systemd reads " \
                                            f"{answer.normalized or query.expression!r}"
    if answer.failure is not None:
        return None  # (systemd reads it too; the elapses it could not compute are not compared)
    if answer.normalized is None:
        return f"systemd rejects, jobsafe reads {ours.normalized!r}"
    if ours.normalized != answer.normalized:
        return f"normalised {ours.normalized!r}, systemd {answer.normalized!r}"
    if not sub_second(answer.normalized) and len(set(answer.elapses)) == len(answer.elapses) \
            and ours.elapses != answer.elapses and not systemd_skips_a_months_start(query, answer):
        # (a second listed twice by systemd: firings within one second, listed among every
        # second, "00/1,2.5..24/4", where the normal form shows "*")
        return f"elapses {list(ours.elapses)}, systemd {list(answer.elapses)}"
    return None


def systemd_skips_a_months_start(query: CalendarQuery, answer: CalendarAnswer) -> bool:
    """Are systemd's elapses jobsafe's with only some at the start of a month left out (none
    of systemd's between the month's beginning and each one left out)? That is systemd's
    search (calendarspec.c find_next, 252): a repetition that runs past the end of a month
    lands in the next at the overflowed value, and the units below the one that changed are
    not reset (a new month resets the day, a new year only the month), so the firings before
    it are skipped: ``01/10:07`` after 21:07 on 31 January next elapses at 11:07 on 1
    February, not 01:07; ``*-*-8/15,5`` after 31 December at 8 January, not 5 January.
    jobsafe lists the firings the expression describes; the comparison allows this one
    difference, and scripts/oracle_agreement.py counts it apart."""
    spec = parse_calendar(query.expression)
    zone = ZoneInfo(spec.timezone or query.tz)
    after = moment(query.base).astimezone(ZoneInfo(query.tz))
    theirs = list(answer.elapses)
    count = 4 * query.iterations
    while True:  # jobsafe's firings up to systemd's last (many a day for some)
        ours = [t.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
                for t in next_elapses(spec, after, count)]
        if not theirs or len(ours) < count or ours[-1] >= theirs[-1] or count > 100_000:
            break
        count *= 8
    if not theirs or theirs[-1] not in ours:
        return False
    upto = ours[:ours.index(theirs[-1]) + 1]
    skipped = [t for t in upto if t not in theirs]
    if not skipped or [t for t in upto if t in theirs] != theirs:
        return False
    local = {t: moment(f"{t} UTC").astimezone(zone) for t in upto}
    return all(not any(local[t].replace(day=1, hour=0, minute=0, second=0) <= local[e] <
                       local[t] for e in theirs) for t in skipped)


def jobsafe_accepts_debian(schedule: str) -> bool:
    """jobsafe's reading of Debian's cron, through the crontab reader itself (its field
    splitting included): does it accept ``SCHEDULE true``?"""
    result = parse_crontab("crontab", f"{schedule} true\n", False)
    return not result.errors and all(
        e.never_runs is None or e.never_runs.why != "refused" for e in result.entries)


