"""Container cron runners that declare their jobs in their own configuration: yacron (a
YAML file of ``jobs:``) and ofelia (an INI file of ``[job-exec "name"]`` sections, or
``ofelia.job-exec.NAME.*`` labels on compose services).

Both start a job on its schedule whether or not its last run has ended, unless told
otherwise: yacron's ``concurrencyPolicy: Forbid`` (or ``Replace``, which stops the old
run) and ofelia's ``no-overlap = true`` keep a second copy out.
"""
from __future__ import annotations

import configparser
import re
from dataclasses import dataclass
from typing import Literal

from ..model import Span
from ..timespec import GO, parse_duration
from .yamlfile import YNode

Runner = Literal["yacron", "ofelia"]
#: ofelia's job types: exec in a running container, run a new one, run on its own host
_OFELIA_SECTION = re.compile(r'^\s*\[\s*(job-exec|job-run|job-local|job-service-run)\s+"([^"]+)"\s*\]',
                             re.M)
_OFELIA_LABEL = re.compile(r"^ofelia\.(job-exec|job-run|job-local|job-service-run)\.([^.]+)\.(.+)$")


@dataclass(frozen=True)
class RunnerJob:
    runner: Runner
    name: str
    schedule: str
    span: Span  # the schedule as written
    command: str
    #: where the runner is told not to start a run beside the last one
    serial: Span | None = None
    timeout_seconds: float | None = None
    #: the container it runs in (ofelia's job-exec: ``container =``, or the compose service
    #: whose labels declare it)
    container: str | None = None


def yacron_jobs(path: str, doc: YNode) -> list[RunnerJob]:
    """The jobs of a yacron configuration: a top-level ``jobs:`` list whose items have a
    ``schedule`` and a ``command`` (``defaults:`` applies to each)."""
    jobs = doc.get("jobs")
    if jobs is None or not isinstance(jobs.value, list):
        return []
    defaults = doc.get("defaults")
    found = []
    for item in jobs.value:
        schedule, command = item.get("schedule"), item.get("command")
        if schedule is None or command is None or not isinstance(item.value, dict):
            continue
        if isinstance(schedule.value, dict):  # {minute: "*/5", hour: ...}
            text = " ".join(str(schedule.text(f) or "*") for f in
                            ("minute", "hour", "dayOfMonth", "month", "dayOfWeek"))
        elif isinstance(schedule.value, str):
            text = schedule.value
        else:
            continue
        words = command.value if isinstance(command.value, list) else None
        line = " ".join(str(w.value) for w in words) if words is not None else \
            str(command.value or "")

        def setting(key: str) -> YNode | None:
            own = item.get(key)
            return own if own is not None else (
                defaults.get(key) if defaults is not None else None)

        policy = setting("concurrencyPolicy")
        serial = Span(path, policy.key_line or policy.line) if policy is not None and \
            str(policy.value) in ("Forbid", "Replace") else None
        timeout = setting("executionTimeout")
        found.append(RunnerJob("yacron", str(item.text("name") or line), text,
                               Span(path, schedule.key_line or schedule.line), line, serial,
                               _seconds(timeout.value) if timeout is not None else None))
    return found


def ofelia_ini_jobs(path: str, text: str) -> list[RunnerJob]:
    """The jobs of an ofelia INI file: each ``[job-… "name"]`` section with a schedule."""
    if not _OFELIA_SECTION.search(text):
        return []
    # (go-ini, which ofelia reads with, ends a value at an inline ";" or "#" comment)
    parser = configparser.ConfigParser(interpolation=None, strict=False,
                                       inline_comment_prefixes=(";", "#"))
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    lines = text.split("\n")
    found = []
    for section in parser.sections():
        m = re.match(r'(job-exec|job-run|job-local|job-service-run)\s+"([^"]+)"', section)
        if m is None or "schedule" not in parser[section]:
            continue
        values = parser[section]
        start = next((i for i, line in enumerate(lines) if section in line), 0)

        def line_of(key: str) -> int:
            return next((i + 1 for i, line in enumerate(lines[start:], start)
                         if re.match(rf"\s*{key}\s*=", line)), start + 1)

        serial = Span(path, line_of("no-overlap")) \
            if values.get("no-overlap", "").strip().lower() == "true" else None
        found.append(RunnerJob("ofelia", m.group(2), values["schedule"].strip(),
                               Span(path, line_of("schedule")),
                               values.get("command", "").strip(), serial,
                               container=values.get("container", "").strip() or None
                               if m.group(1) == "job-exec" else None))
    return found


def ofelia_label_jobs(path: str, doc: YNode) -> list[RunnerJob]:
    """Jobs declared as ``ofelia.job-exec.NAME.schedule``/``.command`` labels on compose
    services (a mapping or a ``- key=value`` list)."""
    services = doc.get("services")
    if services is None or not isinstance(services.value, dict):
        return []
    found = []
    for service_name, service in services.items():
        labels = service.get("labels") if isinstance(service.value, dict) else None
        if labels is None:
            continue
        entries: list[tuple[str, str, int]] = []
        if isinstance(labels.value, dict):
            entries = [(k, str(v.value), v.key_line or v.line) for k, v in labels.items()]
        elif isinstance(labels.value, list):
            for node in labels.value:
                key, _, value = str(node.value).partition("=")
                entries.append((key, value, node.line))
        jobs: dict[str, dict[str, tuple[str, int]]] = {}
        for key, value, line in entries:
            m = _OFELIA_LABEL.match(key.strip())
            if m:
                jobs.setdefault(m.group(2), {})[m.group(3)] = (value.strip(), line)
        for name, keys in jobs.items():
            if "schedule" not in keys:
                continue
            schedule, line = keys["schedule"]
            overlap = keys.get("no-overlap")
            # (a job-exec label runs in the container that carries it)
            kind = next(m.group(1) for key, _, _ in entries
                        if (m := _OFELIA_LABEL.match(key.strip())) and m.group(2) == name)
            found.append(RunnerJob(
                "ofelia", name, schedule, Span(path, line), keys.get("command", ("", 0))[0],
                Span(path, overlap[1]) if overlap and overlap[0].lower() == "true" else None,
                container=service_name if kind == "job-exec" else None))
    return found


def _seconds(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return parse_duration(value, GO)
    return None
