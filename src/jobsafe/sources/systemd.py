"""systemd unit files with systemd's own semantics, not a generic INI parser.

Repeated keys accumulate, an empty assignment resets a list, a trailing backslash
continues a line, comments start a line with ``#`` or ``;``. Drop-ins
(``foo.service.d/*.conf``, also the template's ``foo@.service.d``) are applied in file
name order. A timer starts ``Unit=`` or the service of its own name; ``foo@x.timer``
starts ``foo@x.service``, made from the template ``foo@.service`` with ``%i`` = ``x``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..model import ParseError, Span
from ..timespec import SYSTEMD, parse_duration

#: settings whose repeated assignments accumulate (others: the last one wins)
LIST_SETTINGS = {"ExecStart", "ExecStartPre", "ExecStartPost", "ExecStop", "ExecStopPost",
                 "OnCalendar", "OnActiveSec", "OnBootSec", "OnStartupSec", "OnUnitActiveSec",
                 "OnUnitInactiveSec", "Environment", "EnvironmentFile"}
_SECTION = re.compile(r"^\[([^\]]+)\]\s*$")


@dataclass(frozen=True)
class Assignment:
    value: str
    span: Span


@dataclass
class UnitFile:
    name: str  # foo.service, foo@.timer, foo@bar.timer
    display: str
    sections: dict[str, dict[str, list[Assignment]]] = field(default_factory=dict)

    def values(self, section: str, key: str) -> list[Assignment]:
        return self.sections.get(section, {}).get(key, [])

    def last(self, section: str, key: str) -> Assignment | None:
        values = self.values(section, key)
        return values[-1] if values else None

    def merge(self, other: "UnitFile") -> None:
        """Apply a drop-in: its assignments come after this file's."""
        for section, keys in other.sections.items():
            for key, assignments in keys.items():
                for a in assignments:
                    _assign(self.sections.setdefault(section, {}), key, a)

    @property
    def suffix(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def is_template(self) -> bool:
        return "@." in self.name

    @property
    def instance(self) -> str | None:
        stem = self.name.rsplit(".", 1)[0]
        if "@" in stem and not stem.endswith("@"):
            return stem.split("@", 1)[1]
        return None


def _assign(section: dict[str, list[Assignment]], key: str, a: Assignment) -> None:
    if key in LIST_SETTINGS:
        if a.value == "":
            section[key] = []  # an empty assignment resets the list
        else:
            section.setdefault(key, []).append(a)
    else:
        section[key] = [a]


def parse_unit(name: str, display: str, text: str) -> tuple[UnitFile, list[ParseError]]:
    unit = UnitFile(name, display)
    errors: list[ParseError] = []
    section: dict[str, list[Assignment]] | None = None
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        start = i
        line = lines[i].strip()
        i += 1
        if not line or line[0] in "#;":
            continue
        while line.endswith("\\") and i < len(lines):
            nxt = lines[i].strip()
            i += 1
            if nxt[:1] in ("#", ";"):
                continue  # comments inside a continued line are dropped
            line = line[:-1] + " " + nxt
        m = _SECTION.match(line)
        if m:
            section = unit.sections.setdefault(m.group(1), {})
            continue
        if "=" not in line or section is None:
            errors.append(ParseError(Span(display, start + 1, 1, start + 1, len(lines[start]) + 1),
                                     f"not a unit file assignment: {line[:60]!r}"))
            continue
        key, value = line.split("=", 1)
        column = lines[start].find(key.strip()) + 1
        _assign(section, key.strip(), Assignment(
            value.strip(), Span(display, start + 1, max(column, 1), start + 1, len(lines[start]) + 1)))
    return unit, errors


def expand_specifiers(text: str, unit_name: str) -> str:
    """%i %I %n %N %p %P %% as systemd.unit(5) defines them; others are left as written."""
    stem = unit_name.rsplit(".", 1)[0]
    prefix, _, instance = stem.partition("@")
    table = {"i": instance, "I": instance.replace("-", "/"), "n": unit_name, "N": stem,
             "p": prefix, "P": prefix.replace("-", "/"), "%": "%"}
    return re.sub(r"%(.)", lambda m: table.get(m.group(1), m.group(0)), text)


def split_exec(value: str) -> str:
    """The command of an ``ExecStart=`` value, without systemd's prefixes (``-@:+!``)."""
    command = value.lstrip("-@:+!")
    prefixes, command = value[:len(value) - len(command)], command.strip()
    if "@" in prefixes:  # "@/bin/prog name args": the second word is argv[0]
        parts = command.split(None, 2)
        command = " ".join(parts[:1] + parts[2:])
    return command


def parse_timespan(value: str) -> float | None:
    """systemd.time(7) time spans: ``5min 30s``, ``1h``, ``90``; None for ``infinity``;
    ValueError for what systemd refuses."""
    text = value.strip()
    if text in ("infinity", ""):
        return None
    seconds = parse_duration(text, SYSTEMD)
    if seconds is None:
        raise ValueError(value)
    return seconds
