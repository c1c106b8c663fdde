"""Dockerfiles as a cron source: crontab lines written by ``RUN`` and files ``COPY``-ed
into ``/etc/cron.d`` or ``/etc/crontab``."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from .crontab import CronEntry, parse_crontab
from .shell import Locator, parse_script

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\s+(.*)$", re.S)
#: Vixie/Debian cron, and busybox crond (Alpine) which reads /etc/crontabs/USER
_CRON_PATH = re.compile(r"^/etc/(?:crontab|cron\.d/.*|crontabs/.+)$|^/var/spool/cron/(?:crontabs/)?.+$")


def is_cron_destination(dest: str) -> bool:
    return bool(_CRON_PATH.match(dest)) or dest.rstrip("/") in ("/etc/cron.d", "/var/spool/cron/crontabs")


def is_system_destination(dest: str) -> bool:
    return dest == "/etc/crontab" or dest.startswith("/etc/cron.d")


@dataclass
class CopyHint:
    line: int
    column: int
    sources: list[str]
    dest: str


@dataclass
class DockerfileResult:
    entries: list[CronEntry] = field(default_factory=list)
    copies: list[CopyHint] = field(default_factory=list)


def _instructions(text: str):
    """(line, column of the arguments, instruction, raw argument text) per instruction."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        start = i
        body = [line]
        while body[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            nxt = lines[i]
            if nxt.lstrip().startswith("#"):
                # Docker drops comment lines inside an instruction; keep the line numbering
                nxt = " " * max(len(nxt) - 1, 0) + "\\"
            body.append(nxt)
        i += 1
        joined = "\n".join(body)
        m = _INSTRUCTION.match(joined)
        if m:
            column = joined.index(m.group(2)) + 1 if m.group(2) else 1
            yield start + 1, column, m.group(1).upper(), m.group(2)


def parse_dockerfile(path: str, text: str) -> DockerfileResult:
    result = DockerfileResult()
    for line, column, instruction, args in _instructions(text):
        if instruction in ("COPY", "ADD"):
            hint = _copy(line, column, args)
            if hint is not None:
                result.copies.append(hint)
        elif instruction == "RUN" and not args.lstrip().startswith("["):
            result.entries.extend(_run(path, line, column, args))
    return result


def _copy(line: int, column: int, args: str) -> CopyHint | None:
    args = args.replace("\\\n", " ")
    if args.lstrip().startswith("["):
        try:
            words = [str(w) for w in json.loads(args)]
        except (ValueError, TypeError):
            return None
    else:
        words = args.split()
    if any(w.startswith("--from") for w in words):
        return None
    words = [w for w in words if not w.startswith("--")]
    if len(words) < 2 or not is_cron_destination(words[-1]):
        return None
    return CopyHint(line, column, words[:-1], words[-1])


def _run(path: str, line: int, column: int, args: str) -> list[CronEntry]:
    script = parse_script(args)
    locate = Locator(path, args, line, column)
    piped_to_crontab = re.search(r"\|\s*crontab\b", args) is not None
    entries: list[CronEntry] = []
    for cmd in script.cmds:
        if cmd.name not in ("echo", "printf") or len(cmd.argv) < 2:
            continue
        dests = [w.text for op, w in cmd.redirects]
        target = next((d for d in dests if is_cron_destination(d)), None)
        if target is None and not piped_to_crontab:
            continue
        words = [w for w in cmd.argv[1:] if not (w.text.startswith("-") and len(w.text) <= 3)]
        if not words:
            continue
        content = " ".join(w.text for w in words)
        if cmd.name == "printf" or "-e" in [w.text for w in cmd.argv[1:]]:
            content = content.replace("\\n", "\n")
        system = target is not None and is_system_destination(target)
        sub = locate.span(words[0].start, words[0].end)
        parsed = parse_crontab(path, content, system)
        for entry in parsed.entries:
            entry.span = locate.span(cmd.start, cmd.end)
            entry.locator = Locator(path, entry.command, sub.line, sub.column + 1)
            entry.locator.exact = False  # inside an echo'd string
            entries.append(entry)
    return entries
