"""Crontab front end: user crontabs, ``/etc/crontab`` and cron.d files.

Follows cron(8)/crontab(5) as Debian's cron (Vixie cron) reads them: environment lines,
``@`` macros, a user field in system crontabs, ``%`` turning the rest of the command into
standard input (``\\%`` for a literal percent sign), names in the month and weekday fields.
A file supercronic runs is read as supercronic reads it (``supercronic_cron``).
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from .. import busybox_cron, cronie_cron, supercronic_cron
from ..debian_cron import MACROS as DEBIAN_MACROS
from ..debian_cron import DebianReading, read_fields
from ..model import NeverRuns, ParseError, Schedule, ScheduleDialect, Span
from ..schedule import cron_schedule, cron_schedule_or_never, expand_macro
from ..timespec import ScheduleError
from .shell import Locator

#: how a crontab file is read: as Debian's cron reads it, as supercronic does (its own
#: dialect), or leniently, as the libraries jobsafe computes with read it (a file another
#: container runner reads: go-crond, busybox's crond)
CrontabDialect = Literal["debian", "cronie", "supercronic", "busybox", "lenient"]

_ENV = re.compile(r"""^\s*(?P<q>['"]?)(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P=q)\s*=\s*(?P<value>.*)$""")
_FIELD_CHARS = re.compile(r"^[0-9A-Za-z*,/\-#LW?]+$")
#: users commonly found in the user field of system crontabs (content sniffing only)
SYSTEM_USERS = {"root", "www-data", "nobody", "daemon", "postgres", "mysql", "nginx", "apache",
                "www", "backup", "mail", "news", "man", "debian-sysstat", "smmsp", "redis",
                "_apt", "list", "proxy", "uucp", "sys", "bin", "operator", "app", "deploy"}
#: the cron.d file names cron reads (run-parts' rule): others are skipped without a word
_CRON_D_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_MACRO_NAMES = {"@reboot", "@yearly", "@annually", "@monthly", "@weekly", "@daily",
                "@midnight", "@hourly"}


@dataclass
class CronEntry:
    span: Span  # the entry's schedule (its time fields or macro): what 1xx findings mark
    schedule: Schedule
    user: str | None
    command: str
    locator: Locator
    env: dict[str, str]
    #: cron accepts the entry but never runs it (its day never comes)
    never_runs: NeverRuns | None = None


@dataclass
class CrontabResult:
    entries: list[CronEntry] = field(default_factory=list)
    errors: list[ParseError] = field(default_factory=list)
    last_entry_unterminated: Span | None = None
    end_of_file: Span | None = None
    #: the runner refuses the whole file (supercronic stops at start): the line and why
    refused: tuple[int, str] | None = None


def cron_d_name_ok(name: str, dialect: CrontabDialect = "debian") -> bool:
    """Whether the daemon reads a file of this name in ``/etc/cron.d``: Debian's cron only
    names of letters, digits, ``_`` and ``-`` (run-parts' rule); cronie every name except
    hidden ones, ``#...``, ``...~`` and rpm's leftovers (database.c not_a_crontab)."""
    if dialect == "cronie":
        return not name.startswith((".", "#")) and \
            not name.endswith(("~", ".rpmsave", ".rpmorig", ".rpmnew"))
    return _CRON_D_NAME.match(name) is not None


def _command_columns(line: str, start: int) -> tuple[str, list[int]]:
    """Apply crontab's ``%`` rule; return the command and each character's file column."""
    out, cols = [], []
    i = start
    while i < len(line):
        ch = line[i]
        if ch == "\\" and i + 1 < len(line) and line[i + 1] == "%":
            out.append("%")
            cols.append(i + 1)
            i += 2
            continue
        if ch == "%":
            break
        out.append(ch)
        cols.append(i + 1)
        i += 1
    text = "".join(out).rstrip()
    return text, cols[: len(text)] or [start + 1]


#: a field as Debian's cron reads it: only spaces and tabs separate fields (a no-break
#: space is part of the field, which it then refuses); the runners' libraries split on any
#: whitespace
_DEBIAN_FIELD = re.compile(r"[ \t]*([^ \t]+)")
_ANY_FIELD = re.compile(r"\s*(\S+)")


def _visible(text: str) -> str:
    """Whitespace other than space and tab shown by its code point (``<U+00A0>``)."""
    return re.sub(r"[^\S \t]", lambda m: f"<U+{ord(m.group(0)):04X}>", text)


def _split_fields(line: str, count: int, debian: bool = False) -> tuple[list[str], int] | None:
    """The first ``count`` separated fields and the offset of the rest."""
    fields, pos = [], 0
    field = _DEBIAN_FIELD if debian else _ANY_FIELD
    for _ in range(count):
        m = field.match(line, pos)
        if not m:
            return None
        fields.append(m.group(1))
        pos = m.end()
    return fields, len(line) - len(line[pos:].lstrip())


def looks_like_system_crontab(text: str) -> bool:
    """True when every entry has a user field (content sniffing for unnamed files)."""
    users = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or _ENV.match(line):
            continue
        parts = line.split()
        idx = 1 if line.startswith("@") else 5
        if len(parts) <= idx + 1:
            return False
        users.append(parts[idx])
    return bool(users) and all(u in SYSTEM_USERS for u in users)


def looks_like_crontab(text: str) -> bool:
    """Content sniffing: at least one entry, and every meaningful line parses."""
    entries = 0
    for raw in text.splitlines()[:500]:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if _ENV.match(line) and not line[0].isdigit() and line[0] not in "*@":
            continue
        parts = line.split()
        if parts[0].lower() in _MACRO_NAMES and len(parts) > 1:
            entries += 1
            continue
        if len(parts) < 6 or not all(_FIELD_CHARS.match(p) for p in parts[:5]):
            return False
        try:
            cron_schedule(" ".join(parts[:5]), " ".join(parts[:5]))
        except ScheduleError:
            return False
        entries += 1
    return entries > 0


def parse_crontab(path: str, text: str, system: bool, line_base: int = 0,
                  env: dict[str, str] | None = None, dialect: CrontabDialect = "debian"
                  ) -> CrontabResult:
    """Parse crontab text. ``line_base`` shifts line numbers (crontab lines inside another
    file); ``dialect``: whose reading (supercronic's files have no user field)."""
    if dialect == "supercronic":
        return _parse_supercronic(path, text, line_base, env)
    if dialect == "busybox":
        return _parse_busybox(path, text, line_base, env)
    result = CrontabResult()
    env = dict(env or {})
    lines = text.split("\n")
    last_entry_line = None
    for index, line in enumerate(lines):
        lineno = index + 1 + line_base
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        # (cronie: a "-" first runs the entry without logging it, `~` is a random value)
        first = stripped[1:].lstrip(" \t")[:1] if dialect == "cronie" and stripped[0] == "-" \
            else stripped[0]
        if first not in "@*0123456789~":
            m = _ENV.match(line)
            if m:
                value = m.group("value").strip()
                if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                    value = value[1:-1]
                env[m.group("name")] = value
                continue
            result.errors.append(ParseError(
                Span(path, lineno, 1, lineno, len(line) + 1),
                f"not a crontab entry or environment setting: {stripped[:60]!r}"))
            continue
        entry = _parse_entry(path, line, lineno, system, env, result, dialect)
        if entry is not None:
            result.entries.append(entry)
            last_entry_line = index
    if last_entry_line is not None and last_entry_line == len(lines) - 1 and lines[-1].strip():
        entry = result.entries[-1]
        result.last_entry_unterminated = entry.span
        end = len(lines) + line_base
        result.end_of_file = Span(path, end, len(lines[-1]) + 1, end, len(lines[-1]) + 1)
    return result


def _dialect(dialect: CrontabDialect, env: dict[str, str]
             ) -> tuple[ScheduleDialect | None, str | None]:
    """(dialect, runtime) of a schedule: Debian's cron or cronie, whose daylight-saving
    handling the arithmetic follows (schedule.DST_RUNTIMES), or a container runner's
    (neither). cronie runs a ``CRON_TZ`` entry at every minute whose time in that zone
    matches (cron.c find_jobs: none in a skipped hour, two in a repeated one)."""
    if dialect == "cronie":
        return "cronie", "every-match" if env.get("CRON_TZ") else "cron"
    return ("debian", "cron") if dialect == "debian" else (None, None)


#: how each strict daemon reads the five time fields, and its name in messages
_READERS: dict[str, tuple[Callable[[list[str]], DebianReading | cronie_cron.CronieReading],
                          str]] = {"debian": (read_fields, "Debian's cron"),
                                   "cronie": (cronie_cron.read_fields, "cronie")}


def _parse_entry(path, line, lineno, system, env, result,
                 dialect: CrontabDialect = "debian") -> CronEntry | None:
    never: NeverRuns | None = None
    strict = dialect in _READERS  # (a daemon's own reader: fields split at spaces and tabs)
    reader, daemon = _READERS.get(dialect, (None, ""))
    refusal: NeverRuns | None = None  # (cronie's, of what surrounds the time fields)
    if dialect == "cronie" and line.lstrip(" \t").startswith("-"):
        # "-" first: cronie does not log the run (the time fields right after it)
        if line.lstrip(" \t")[1:2] in ("", " ", "\t"):
            refusal = NeverRuns("refused", "cronie refuses a line whose leading `-` is "
                                           "followed by a blank (it reads the time fields "
                                           "right after it)")
        line = line.replace("-", " ", 1)
    stripped = line.lstrip()
    indent = len(line) - len(stripped)
    line_span = Span(path, lineno, indent + 1, lineno, len(line.rstrip()) + 1)

    def error(message):
        result.errors.append(ParseError(line_span, message))

    if stripped.startswith("@"):
        split = _split_fields(line, 1, strict)
        macro = split[0][0].lower() if split else ""
        expr = expand_macro(macro)
        if split is None or (expr is None and macro != "@reboot"):
            error(f"unknown schedule macro {split[0][0] if split else stripped!r}")
            return None
        if strict and split[0][0] not in DEBIAN_MACROS:  # "@Daily": Debian reads no capitals
            never = NeverRuns("refused", f"{daemon} refuses `{split[0][0]}` (its macros "
                                         f"are lower case)")
        fields, rest = split
        text = fields[0]
        if expr is None:
            schedule = Schedule(text=text, kind="reboot", timezone=env.get("CRON_TZ"))
        else:
            schedule = cron_schedule(text, expr, env.get("CRON_TZ"), *_dialect(dialect, env))
    else:
        split = _split_fields(line, 5, strict)
        if split is None:
            error("a crontab entry needs five time fields and a command")
            return None
        fields, rest = split
        expr = " ".join(fields)
        reading = reader(fields) if reader is not None else None
        if reading is not None and reading.refused is None and dialect == "cronie" and \
                line[rest:].lstrip(" \t").startswith("*"):
            reading = cronie_cron.CronieReading(  # (entry.c: "catch a common typo")
                refused="a sixth field starts with `*` where the command (or user) should")
        if reading is not None and reading.expression is None:
            # Debian's cron refuses the line, or accepts it and never runs it
            meant = _split_fields(line, 5)  # (a no-break space: the fields as they look)
            if meant is not None and meant[0] != fields:
                expr = " ".join(meant[0])
            text = f"{daemon} refuses `{expr}`: {reading.refused}" if reading.refused \
                else f"{reading.never}"
            never = NeverRuns("refused" if reading.refused else "never-matches",
                              _visible(text))
            schedule = Schedule(text=expr, kind="cron", timezone=env.get("CRON_TZ"))
        elif reading is None and \
                (bad := next((f for f in fields if not _FIELD_CHARS.match(f)), None)) is not None:
            # (Debian's reading stops at what its parser reads: `*/1.5` runs as `*/1`)
            error(f"invalid time field {bad!r}")
            return None
        else:
            try:
                schedule, never = cron_schedule_or_never(
                    expr, reading.expression if reading and reading.expression else expr,
                    env.get("CRON_TZ"), *_dialect(dialect, env))
            except ScheduleError as exc:
                error(f"invalid schedule {expr!r}: {exc}")
                return None
    if strict and never is not None and never.why == "refused" and \
            (lenient := _split_fields(line, 1 if stripped.startswith("@") else 5)) is not None:
        rest = lenient[1]  # (the command as meant, for the inventory: cron runs none of it)
    schedule_end = len(line[:rest].rstrip())
    user = None
    if system:
        split = _split_fields(line[rest:], 1)
        if split is None:
            error("a system crontab entry needs a user field and a command")
            return None
        user = split[0][0]
        rest += split[1]
    if dialect == "cronie":
        refusal = refusal or _cronie_options(line[rest:])
        never = refusal if refusal is not None and (never is None or never.why != "refused") \
            else never
    command, columns = _command_columns(line, rest)
    if not command:
        error("crontab entry has no command")
        return None
    locator = Locator(path, command, lineno, columns[0], columns)
    return CronEntry(Span(path, lineno, indent + 1, lineno, schedule_end + 1), schedule, user,
                     command, locator, dict(env), never)


def _cronie_options(command: str) -> NeverRuns | None:
    """cronie reads a command that starts with ``-`` as its options (entry.c): ``-n`` (mail
    only on failure) once, followed by a blank; anything else refuses the line."""
    text = command.lstrip(" \t")
    seen = False
    while text.startswith("-"):
        if text[1:2] != "n" or seen or text[2:3] not in (" ", "\t"):
            return NeverRuns("refused", f"cronie reads `{text.split()[0][:20]}` before the "
                                        f"command as an option it does not know")
        seen, text = True, text[2:].lstrip(" \t")
    return None if text.strip() else NeverRuns("refused", "cronie finds no command after its "
                                                          "options")


#: the longest line supercronic reads (bufio.Scanner's token limit, in bytes)
_SUPERCRONIC_LINE = 64 * 1024 - 1


def _parse_busybox(path: str, text: str, line_base: int,
                   env: dict[str, str] | None) -> CrontabResult:
    """A crontab as busybox's crond reads it (``load_crontab``): a ``#`` anywhere starts a
    comment, a line of fewer than six words is skipped, the time fields are read by
    ``busybox_cron`` (never refused: a field it cannot read to the end runs with what it
    read before, which the schedule's ``misread`` says). Its ``@`` macros depend on how
    busybox was built: read as cron's."""
    result = CrontabResult()
    env = dict(env or {})
    for index, raw in enumerate(text.split("\n")):
        lineno = index + 1 + line_base
        line = raw.split("#", 1)[0].rstrip()
        stripped = line.lstrip(" \t")
        indent = len(line) - len(stripped)
        if not stripped:
            continue
        span = Span(path, lineno, indent + 1, lineno, len(line) + 1)
        if stripped[0] not in "@*0123456789" and (m := _ENV.match(stripped)):
            env[m.group("name")] = m.group("value").strip()  # (crond reads MAILTO only)
            continue
        if stripped.startswith("@"):
            entry = _parse_entry(path, raw, lineno, False, env, result, "lenient")
            if entry is not None:
                result.entries.append(entry)
            continue
        split = _split_fields(line, 5, debian=True)  # (config_read: spaces and tabs)
        if split is None or split[1] >= len(line):
            why = "a line of fewer than six words" + \
                (" (a `#` starts a comment anywhere in the line)" if "#" in raw else "")
            as_written = re.split(r"[ \t]+", raw.strip(), maxsplit=5)  # ('#' and all)
            command = as_written[5] if len(as_written) > 5 else ""
            result.entries.append(CronEntry(
                span, Schedule(text=" ".join(as_written[:5]), kind="cron", dialect="busybox"),
                None, command, Locator(path, command, lineno, indent + 1), dict(env),
                NeverRuns("refused", f"busybox's crond skips {why}")))
            continue
        fields, rest = split
        reading = busybox_cron.read_fields(fields)
        written = " ".join(fields)
        misread = f"busybox's crond cannot read {' or '.join(reading.errors)} to the end and " \
                  f"runs what it read before" if reading.errors else None
        never = None
        if reading.expression is None:
            schedule = Schedule(text=written, kind="cron", dialect="busybox", misread=misread)
            never = NeverRuns("never-matches", reading.never or "")
        else:
            # (crond reads no CRON_TZ: the daemon's zone, which the tree does not say)
            schedule, never = cron_schedule_or_never(written, reading.expression, None,
                                                     "busybox", "every-match")
            schedule = replace(schedule, text=written, misread=misread)
        command = line[rest:]
        locator = Locator(path, command, lineno, rest + 1,
                          list(range(rest + 1, rest + 1 + len(command))))
        end = len(line[:rest].rstrip())
        result.entries.append(CronEntry(Span(path, lineno, indent + 1, lineno, end + 1),
                                        schedule, None, command, locator, dict(env), never))
    return result


def _parse_supercronic(path: str, text: str, line_base: int,
                       env: dict[str, str] | None) -> CrontabResult:
    """A crontab as supercronic reads it (its crontab package's ParseCrontab). The
    environment and ``CRON_TZ`` the file ends with apply to all of its jobs. A line it
    cannot read makes it refuse the whole file: a job line is then kept, never running
    ("refused"), any other line is a parse error; every other job of the file never runs
    ("file-refused")."""
    result = CrontabResult()
    env = dict(env or {})
    zone: str | None = env.get("CRON_TZ")
    jobs: list[tuple[Span, int, supercronic_cron.LineReading]] = []
    crashed: tuple[int, str] | None = None  # (it crashes on its first look at the times)

    def refuse(span: Span, why: str) -> None:
        if result.refused is None:
            result.refused = (span.line, why)

    for index, raw in enumerate(text.split("\n")):
        lineno = index + 1 + line_base
        line = raw.removesuffix("\r")  # (bufio.ScanLines drops one)
        stripped = line.lstrip(" \t")
        indent = len(line) - len(stripped)
        span = Span(path, lineno, indent + 1, lineno, len(line.rstrip()) + 1)
        if len(raw.encode("utf-8", "surrogateescape")) > _SUPERCRONIC_LINE:
            result.errors.append(ParseError(span, "supercronic refuses the file at this line "
                                                  "(longer than its limit of 64 KiB), so none "
                                                  "of its jobs run"))
            refuse(span, "a line longer than 64 KiB")
            continue
        if not stripped or stripped.startswith("#"):
            continue
        m = supercronic_cron.ENV_LINE.fullmatch(stripped)
        if m:
            name, value = m.groups()
            why = None
            if not value:
                why = f"`{stripped.rstrip()}` crashes it (a variable set to nothing)"
            else:
                if value[0] in "'\"" and len(value) > 1 and value[-1] == value[0]:
                    value = value[1:-1]
                if name == "CRON_TZ":
                    zone, why = _supercronic_zone(value)
                env[name] = value
            if why is not None:
                result.errors.append(ParseError(span, f"supercronic refuses the file at this "
                                                      f"line ({why}), so none of its jobs run"))
                refuse(span, why)
            continue
        reading = supercronic_cron.read_line(stripped)
        if reading.refused is not None:
            why = f"supercronic refuses `{_visible(reading.schedule)}`: {reading.refused}"
            refuse(span, why)
            if not reading.command.strip() or stripped[0] not in "@*?0123456789":
                shown = _visible(stripped.rstrip()[:60])
                result.errors.append(ParseError(span, (
                    f"supercronic refuses the file at this line (`{shown}` is neither a job "
                    f"nor a variable), so none of its jobs run") if stripped[0] not in
                    "@*?0123456789" else f"{why}, and with it the file: none of its jobs run"))
                continue
        jobs.append((span, indent, reading))
    for span, indent, reading in jobs:
        end = indent + len(reading.schedule)
        never = None
        if reading.expression is None:
            written = " ".join(supercronic_cron.split(reading.schedule))
            schedule = Schedule(text=written, kind="cron", timezone=zone, dialect="supercronic")
            never = NeverRuns("refused", f"supercronic refuses `{_visible(written)}`: "
                                         f"{reading.refused}")
        else:
            schedule, never = supercronic_cron.schedule(reading.schedule, reading.expression,
                                                        zone)
            if never is not None and never.why == "refused" and crashed is None:
                crashed = (span.line, never.text)
        command = reading.command.rstrip()
        start = indent + reading.command_at
        locator = Locator(path, command, span.line, start + 1,
                          list(range(start + 1, start + 1 + len(command))) or [start + 1])
        result.entries.append(CronEntry(Span(path, span.line, indent + 1, span.line, end + 1),
                                        schedule, None, command, locator, dict(env), never))
    if result.refused is None:
        result.refused = crashed  # (it reads the whole file before it starts any job)
    if result.refused is not None:
        at, why = result.refused
        for entry in result.entries:
            if entry.never_runs is None:
                entry.never_runs = NeverRuns("file-refused", f"supercronic stops at start "
                                                             f"(line {at}: {why})")
    return result


def _supercronic_zone(name: str) -> tuple[str | None, str | None]:
    """``CRON_TZ`` as supercronic loads it (Go's time.LoadLocation): (the zone, None), or
    (None, why it refuses the file). ``Local`` is the container's own zone (unknown here)."""
    if name == "Local":
        return None, None
    if name in ("", "UTC"):
        return "UTC", None
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return None, f"unknown time zone {name}"
    return name, None
