"""systemd timers: timer -> service -> ExecStart -> the code it runs."""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import replace
from functools import partial

from ..calendar import next_elapses, parse_calendar
from ..discover import TEMPLATE_SUFFIXES
from ..link import build_job
from ..model import Job, NeverRuns, ParseError, Schedule, Span, UnitFacts
from ..schedule import calendar_schedule, span_start
from ..sources.shell import Locator
from ..sources.systemd import (
    Assignment,
    UnitFile,
    expand_specifiers,
    parse_timespan,
    parse_unit,
    split_exec,
)
from ..sources.yamlfile import TEMPLATE_VALUE
from ..timespec import ScheduleError
from .context import Step

#: work that systemd does not stop with the unit, whatever its KillMode
_OUTSIDE_CGROUP = {"systemd-run without --wait", "docker run -d", "podman run -d", "at", "batch"}


def _unit_precedence(path: str) -> int:
    """systemd reads /etc before /run before /usr/lib and /lib."""
    for rank, marker in enumerate(("etc/systemd/", "run/systemd/", "usr/lib/systemd/",
                                   "lib/systemd/")):
        if marker in path:
            return rank
    return 9


def _yes(assignment: Assignment | None) -> bool:
    return assignment is not None and assignment.value.lower() in ("yes", "true", "1", "on")


class SystemdAssembly(Step):
    """A job per timer: its service's ExecStart lines, with the unit's limits."""

    def run(self) -> None:
        units: dict[str, UnitFile] = {}
        dropins: dict[str, list[UnitFile]] = {}
        for f in self.discovery.files:
            if f.kind not in ("systemd", "systemd-dropin"):
                continue
            text = self.read(f, report=True)
            if text is None:
                continue
            if text.startswith("#!") or not re.search(r"^\s*\[[A-Za-z]+\]\s*$", text, re.M):
                del self.texts[f.display]  # a script named like a unit (needrestart's hooks)
                continue
            parts = f.rel.split("/")
            rendered = _rendered_name(parts[-1])
            if rendered is not None:  # a template a deployment tool renders into the unit
                parts[-1], text = rendered, _untemplated(text)
            if f.kind == "systemd-dropin":
                unit, errors = parse_unit(parts[-2][:-2], f.display, text)
                self.project.parse_errors.extend(errors)
                dropins.setdefault(parts[-2][:-2], []).append(unit)
                continue
            if len(parts) > 1 and parts[-2].endswith((".wants", ".requires")):
                if "@" not in parts[-1] or "@." in parts[-1]:
                    continue  # an enablement link to a unit analysed where it lives
            unit, errors = parse_unit(parts[-1], f.display, text)
            self.project.parse_errors.extend(errors)
            if "systemd/user/" in f.rel:
                continue  # user units belong to per-user managers, not the system's schedule
            previous = units.get(unit.name)
            if previous is None or _unit_precedence(f.rel) < _unit_precedence(previous.display):
                units[unit.name] = unit
        for name, unit in units.items():
            stem, _, suffix = name.rpartition(".")
            template = f"{stem.split('@', 1)[0]}@.{suffix}" if "@" in stem else None
            for key in (template, name):
                for dropin in sorted(dropins.get(key or "", []), key=lambda d: d.display.rsplit("/", 1)[-1]):
                    unit.merge(dropin)
        instantiated = {n.split("@", 1)[0] for n, u in units.items() if u.instance}
        for name, timer in sorted(units.items()):
            if timer.suffix != "timer":
                continue
            if timer.is_template and name.split("@", 1)[0] in instantiated:
                continue  # analysed through its instances (foo@bar.timer)
            self.guarded(timer.display, partial(self._timer_job, timer, units))

    def _timer_job(self, timer: UnitFile, units: dict[str, UnitFile]) -> None:
        target = timer.last("Timer", "Unit")
        service_name = target.value if target else timer.name.rsplit(".", 1)[0] + ".service"
        service = units.get(service_name)
        if service is None and "@" in service_name:
            stem = service_name.rsplit(".", 1)[0]
            service = units.get(f"{stem.split('@', 1)[0]}@.service")
        schedule = self._timer_schedule(timer)
        if schedule is not None and service is None and target is not None:
            self._missing_unit(timer, target, service_name, schedule, units)
        if schedule is None or service is None:
            return
        execs = service.values("Service", "ExecStart")
        if not execs:
            return
        svc = service.sections.get("Service", {})

        def setting(key, default=None):
            values = svc.get(key)
            return values[-1].value if values else default

        def span_seconds(key):
            value = setting(key)
            if value is None or TEMPLATE_VALUE in value:
                return None
            try:
                return parse_timespan(value)
            except ValueError:
                self.project.parse_errors.append(ParseError(svc[key][-1].span,
                                                            f"invalid time span {value!r}"))
                return None

        unit_type = setting("Type", "simple" if execs else "oneshot")
        timeout_start = span_seconds("TimeoutStartSec")
        if timeout_start is None and "TimeoutStartSec" not in svc:
            timeout_start = span_seconds("TimeoutSec")
            if "TimeoutSec" not in svc:
                timeout_start = None if unit_type == "oneshot" else 90.0
        if timeout_start == 0:
            timeout_start = None  # 0 disables the timeout
        runtime_max = span_seconds("RuntimeMaxSec")
        remain = svc.get("RemainAfterExit")
        remain_span = remain[-1].span if remain and _yes(remain[-1]) else None
        timer_settings = timer.sections.get("Timer", {})

        def timer_seconds(key):
            values = timer_settings.get(key)
            try:
                return parse_timespan(values[-1].value) if values else None
            except ValueError:
                return None

        facts = UnitFacts(
            timer=Span(timer.display, 1), service=service.display, type=unit_type,
            kill_mode=setting("KillMode", "control-group"), remain_after_exit=remain_span,
            timeout_start_seconds=timeout_start, runtime_max_seconds=runtime_max,
            persistent=_yes(timer.last("Timer", "Persistent")),
            randomized_delay_seconds=timer_seconds("RandomizedDelaySec"),
            accuracy_seconds=timer_seconds("AccuracySec"),
            limit_templated=any(TEMPLATE_VALUE in (setting(key) or "") for key in (
                "TimeoutStartSec", "TimeoutSec", "RuntimeMaxSec")))
        instance_name = timer.name.rsplit(".", 1)[0] + ".service" if not timer.is_template \
            else service_name
        commands = []
        for a in execs:
            # (a path a template fills in is left to the path-suffix search)
            command = expand_specifiers(split_exec(a.value), instance_name).replace(
                TEMPLATE_VALUE, "")
            column = a.span.column + len("ExecStart=") + (len(a.value) - len(a.value.lstrip("-@:+!")))
            locate = Locator(service.display, command, a.span.line, column)
            locate.exact = command == a.value.lstrip("-@:+!")  # no specifier expanded
            commands.append((command, locate))
        base = service.display.rsplit("/", 1)[0] if "/" in service.display else ""
        bound_by_unit = timeout_start if unit_type == "oneshot" else runtime_max
        job = build_job(f"systemd:{timer.display}", "systemd", execs[0].span, schedule, commands,
                        self.tree, base, setting("User"), whole_unit_guarded=True, unit=facts,
                        never_runs=_never_elapses(timer, schedule))
        backgrounds = tuple(b for b in job.backgrounds if b.how in _OUTSIDE_CGROUP or (
            facts.kill_mode in ("process", "none") and facts.type != "forking"))
        bounds = [b for b in (job.runtime_bound_seconds, bound_by_unit) if b]
        self.project.jobs.append(replace(job, backgrounds=backgrounds,
                                         runtime_bound_seconds=min(bounds) if bounds else None))

    def _missing_unit(self, timer: UnitFile, target, name: str, schedule: Schedule,
                      units: dict[str, UnitFile]) -> None:
        """``Unit=db29_sched.service`` beside ``db29-sched.service``: the timer fires and
        systemd finds no such unit, so nothing runs. Only a near miss of a unit in the tree
        is sure to be a mistake (an absent unit may come with a package)."""
        def norm(unit: str) -> str:
            return unit.lower().replace("_", "-")

        near = sorted(u for u in units if u != name and norm(u) == norm(name))
        if not near:
            return
        self.project.jobs.append(Job(
            id=f"systemd:{timer.display}", source="systemd", span=target.span,
            schedule=schedule, command=f"Unit={name}",
            never_runs=NeverRuns("no-unit", f"`Unit={name}` names no unit: the tree has "
                                            f"{units[near[0]].display}, whose name differs")))

    def _timer_schedule(self, timer: UnitFile) -> Schedule | None:
        calendars = timer.values("Timer", "OnCalendar")
        good = []
        templated = [a.value for a in calendars if TEMPLATE_VALUE in a.value]
        if templated:  # set when the template is rendered
            return Schedule(text="; ".join(f"OnCalendar={v}" for v in templated), kind="templated")
        for a in calendars:
            try:
                parse_calendar(a.value)
                good.append(a.value)
            except ScheduleError as exc:
                self.project.parse_errors.append(ParseError(a.span, f"invalid OnCalendar: {exc}"))
        intervals = []
        for key in ("OnUnitActiveSec", "OnUnitInactiveSec"):
            for a in timer.values("Timer", key):
                try:
                    seconds = parse_timespan(a.value)
                except ValueError:
                    self.project.parse_errors.append(ParseError(a.span, f"invalid {key}: {a.value!r}"))
                    continue
                if seconds:
                    intervals.append((key, a.value, seconds))
        texts = [f"OnCalendar={v}" for v in good] + [f"{k}={v}" for k, v, _ in intervals]
        if good:
            schedule = calendar_schedule(tuple(good), "; ".join(texts))
            if intervals:
                shortest = min(s for _, _, s in intervals)
                whole = max(1, round(shortest))  # the model counts in whole seconds
                schedule = replace(schedule, min_interval_seconds=min(
                    schedule.min_interval_seconds or whole, whole),
                    runs_per_day=round((schedule.runs_per_day or 0) + 86400 / shortest, 4))
            return schedule
        if intervals:
            shortest = min(s for _, _, s in intervals)
            return Schedule(text="; ".join(texts), kind="interval", min_interval_seconds=int(shortest),
                            runs_per_day=round(86400 / shortest, 4))
        boots = [a for key in ("OnBootSec", "OnStartupSec", "OnActiveSec")
                 for a in timer.values("Timer", key)]
        if boots:
            return Schedule(text="; ".join(f"{a.value}" for a in boots), kind="reboot")
        return None


def _rendered_name(name: str) -> str | None:
    """``sync.timer.j2`` -> ``sync.timer``: the unit a template is rendered into."""
    stem, _, suffix = name.rpartition(".")
    return stem if suffix.lower() in TEMPLATE_SUFFIXES and \
        stem.endswith((".timer", ".service", ".conf")) else None


#: expressions of Jinja, ERB, Go templates and autotools/meson substitutions
_EXPRESSION = re.compile(r"\{\{.*?\}\}|<%=?.*?%>|@[A-Za-z_]\w*@")
_STATEMENT_LINE = re.compile(r"^\s*(?:\{%.*?%\}|<%[^=].*?%>)\s*$", re.M)


def _untemplated(text: str) -> str:
    """A unit template as the unit it renders: a value a template sets is a placeholder
    (set, not known here); lines that are only template statements are blank (line
    numbers stay those of the file)."""
    return _EXPRESSION.sub(TEMPLATE_VALUE, _STATEMENT_LINE.sub("", text))


def _never_elapses(timer: UnitFile, schedule: Schedule) -> NeverRuns | None:
    """A timer started only by ``OnCalendar=`` expressions none of which elapses again
    (a date in the past, ``*-02-30``): systemd accepts it and never starts the service."""
    if schedule.kind != "calendar" or not schedule.calendar or schedule.min_interval_seconds \
            or any(timer.values("Timer", key) for key in (
                "OnUnitActiveSec", "OnUnitInactiveSec", "OnBootSec", "OnStartupSec",
                "OnActiveSec")):
        return None
    start = dt.datetime.combine(span_start(), dt.time(), dt.timezone.utc)
    if any(next_elapses(parse_calendar(e), start, 1) for e in schedule.calendar):
        return None
    return NeverRuns("never-matches", "no `OnCalendar=` expression of the timer elapses again")
