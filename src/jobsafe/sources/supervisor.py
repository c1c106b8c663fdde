"""supervisord programs (``[program:NAME]`` in supervisord.conf or conf.d/*.conf): what each
runs and how many copies of it (``numprocs``), as workloads beside the Kubernetes and compose
ones, so a Celery beat or a scheduler-starting web app run by supervisor is counted too."""
from __future__ import annotations

import re

from ..model import Span
from .workloads import SUPERVISOR_PROGRAM, Container, Workload

_SECTION = re.compile(r"^\[([^\]\n]+)\][ \t]*$", re.M)
_KEY = re.compile(r"^([A-Za-z_]+)[ \t]*[=:][ \t]*(.*)$")
_INLINE_COMMENT = re.compile(r"\s;.*$")


def looks_like_supervisor(text: str) -> bool:
    return "[program:" in text


def supervisor_programs(path: str, text: str) -> list[Workload]:
    """One workload per ``[program:NAME]`` section with a ``command``."""
    found = []
    sections = list(_SECTION.finditer(text))
    for i, section in enumerate(sections):
        if not section.group(1).startswith("program:"):
            continue
        name = section.group(1)[len("program:"):].strip()
        start_line = text.count("\n", 0, section.start()) + 1
        end = sections[i + 1].start() if i + 1 < len(sections) else len(text)
        values = _values(text[section.end():end], start_line)
        if "command" not in values:
            continue
        command, command_line = values["command"]
        numprocs = values.get("numprocs", ("1", start_line))
        copies = int(numprocs[0]) if numprocs[0].isdigit() else 1
        note = f"numprocs={copies} in supervisor program {name}" if copies > 1 else ""
        found.append(Workload(
            SUPERVISOR_PROGRAM, name, max(copies, 1), Span(path, numprocs[1]), note,
            [Container(name, "", command, Span(path, command_line))]))
    return found


def _values(body: str, section_line: int) -> dict[str, tuple[str, int]]:
    """key -> (value, line) of one section; indented lines continue the previous value, and
    ``;`` starts a comment at the start of a line or after whitespace (as supervisor reads)."""
    values: dict[str, tuple[str, int]] = {}
    last = None
    for offset, line in enumerate(body.split("\n")):
        number = section_line + offset
        if not line.strip() or line.lstrip().startswith((";", "#")):
            continue
        if line[0] in " \t" and last is not None:
            value, at = values[last]
            values[last] = (f"{value} {_INLINE_COMMENT.sub('', line).strip()}", at)
            continue
        m = _KEY.match(line)
        if m:
            last = m.group(1).lower()
            values[last] = (_INLINE_COMMENT.sub("", m.group(2)).strip(), number)
    return values
