"""The pipeline: discover → parse → link → Project → rules → suppress → baseline.

Every file's front end runs under its own guard, so one file that breaks a parser gives a
JOB900 finding and the rest of the tree is still analysed.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace

from .baseline import assign_fingerprints
from .config import Settings
from .discover import (SourceFile, discover, find_root, is_sniffable, read_text,
                       sniff_head)
from .link import Tree, build_job
from .sources.python.index import entry_code, resolve_function
from .model import (CronFile, Entry, Finding, Job, ParseError, Project, Schedule, Span, Target,
                    UnitFacts, WorkflowFacts)
from .rules import Rule, all_rules, resolve_selector
from .sources.crontab import looks_like_crontab, looks_like_system_crontab, parse_crontab
from .calendar import parse_calendar
from .schedule import ScheduleError, calendar_schedule, cron_schedule, expand_macro
from .sources.compose import compose_replicas
from .sources.ansible import cron_tasks, ini_inventory, play_roles, yaml_inventory
from .sources.kubernetes import cronjobs
from .sources.workflows import is_workflow, scheduled_workflow
from .sources.yamlfile import TEMPLATE_VALUE, YamlError, load_documents
from .sources.dockerfile import is_system_destination, parse_dockerfile
from .sources.shell import Locator
from .sources.systemd import (Assignment, UnitFile, expand_specifiers, parse_timespan, parse_unit,
                              split_exec)
from .suppress import Suppression, apply_suppressions, parse_suppressions, per_file_ignored


@dataclass
class Analysis:
    project: Project
    findings: list[Finding]  # reported (not suppressed), sorted
    suppressed: list[Finding] = field(default_factory=list)
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)  # display -> (kind, text)

    @property
    def files_read(self) -> int:
        return len(self.texts)

    def line_text(self, path: str, line: int) -> str | None:
        return _line(self.texts, path, line)


@dataclass
class _CronSource:
    file: SourceFile
    system: bool | None = None
    #: (cron.d name, the Dockerfile COPY line) for each copy into /etc/cron.d
    installs: list[tuple[str, Span]] = field(default_factory=list)


class Builder:
    """Parses the discovered files into a Project."""

    def __init__(self, root: str, cwd: str, settings: Settings):
        self.root, self.cwd, self.settings = root, cwd, settings
        self.discovery = discover(root, cwd, settings.extend_exclude)
        self.texts: dict[str, tuple[str, str]] = {}  # display path -> (kind, text)
        #: display path of a crontab -> display path of the Dockerfile that installs it
        self.installed_by: dict[str, str] = {}
        #: display path of a Dockerfile -> (replicas, evidence) from a compose file
        self.image_replicas: dict[str, tuple[int, Span]] = {}
        self.ansible_docs: list[tuple[SourceFile, list]] = []
        self.tree = Tree(self.discovery, self.texts)
        self.project = Project(root=os.path.relpath(root, cwd).replace(os.sep, "/"))

    def error(self, path: str, message: str, line: int = 1) -> None:
        self.project.parse_errors.append(ParseError(Span(path, line, 1, line, 1), message))

    def read(self, f: SourceFile, report: bool) -> str | None:
        text = read_text(f.abs)
        if text.content is None:
            # a program or archive that happens to carry a crontab's name is not a crontab
            if report and text.problem != "executable or archive":
                self.error(f.display, f"{f.kind} not analysed: {text.problem}")
            return None
        self.texts[f.display] = (f.kind, text.content)
        return text.content

    def build(self) -> Project:
        cron_sources: dict[str, _CronSource] = {}
        for f in self.discovery.files:
            if f.kind == "crontab":
                cron_sources[f.rel] = _CronSource(f)
        for f in self.discovery.files:
            if f.kind == "dockerfile":
                self._guarded(f.display, lambda f=f: self._dockerfile(f, cron_sources))
        for f in self.discovery.files:
            if f.kind == "other" and f.rel not in cron_sources and is_sniffable(f.rel):
                head = sniff_head(f.abs)
                if head and not head.startswith("#!") and looks_like_crontab(head):
                    cron_sources[f.rel] = _CronSource(f)
        for rel in sorted(cron_sources):
            src = cron_sources[rel]
            self._guarded(src.file.display, lambda src=src: self._crontab(src))
        self._guarded(self.project.root, self._systemd)
        for f in self.discovery.files:
            if f.kind == "yaml":
                self._guarded(f.display, lambda f=f: self._yaml(f))
        self._guarded(self.project.root, self._ansible)
        self._topology()
        for rel, f in sorted(self.tree.python.files.items()):
            if self.tree.python.might_lock(rel):
                self._guarded(f.display, lambda rel=rel: self._python(rel))
        self.project.parse_errors.extend(self.tree.python.errors)
        self.project.files = sorted(self.texts)
        return self.project

    # -- systemd
    def _systemd(self) -> None:
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
            self._guarded(timer.display, lambda timer=timer: self._timer_job(timer, units))

    def _timer_job(self, timer: UnitFile, units: dict[str, UnitFile]) -> None:
        target = timer.last("Timer", "Unit")
        service_name = target.value if target else timer.name.rsplit(".", 1)[0] + ".service"
        service = units.get(service_name)
        if service is None and "@" in service_name:
            stem = service_name.rsplit(".", 1)[0]
            service = units.get(f"{stem.split('@', 1)[0]}@.service")
        schedule = self._timer_schedule(timer)
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
            if value is None:
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
            accuracy_seconds=timer_seconds("AccuracySec"))
        instance_name = timer.name.rsplit(".", 1)[0] + ".service" if not timer.is_template \
            else service_name
        commands = []
        for a in execs:
            command = expand_specifiers(split_exec(a.value), instance_name)
            column = a.span.column + len("ExecStart=") + (len(a.value) - len(a.value.lstrip("-@:+!")))
            locate = Locator(service.display, command, a.span.line, column)
            locate.exact = command == a.value.lstrip("-@:+!")  # no specifier expanded
            commands.append((command, locate))
        base = service.display.rsplit("/", 1)[0] if "/" in service.display else ""
        bound_by_unit = timeout_start if unit_type == "oneshot" else runtime_max
        job = build_job(f"systemd:{timer.display}", "systemd", execs[0].span, schedule, commands,
                        self.tree, base, setting("User"), whole_unit_guarded=True, unit=facts)
        backgrounds = tuple(b for b in job.backgrounds if b.how in _OUTSIDE_CGROUP or (
            facts.kill_mode in ("process", "none") and facts.type != "forking"))
        bounds = [b for b in (job.runtime_bound_seconds, bound_by_unit) if b]
        self.project.jobs.append(replace(job, backgrounds=backgrounds,
                                         runtime_bound_seconds=min(bounds) if bounds else None))

    def _timer_schedule(self, timer: UnitFile) -> Schedule | None:
        calendars = timer.values("Timer", "OnCalendar")
        good = []
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
                schedule = replace(schedule, min_interval_seconds=min(
                    schedule.min_interval_seconds or shortest, shortest),
                    runs_per_day=round(schedule.runs_per_day + 86400 / shortest, 4))
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

    # -- YAML manifests
    def _yaml(self, f: SourceFile) -> None:
        text = self.read(f, report=False)
        workflow = is_workflow(f.rel)
        ansible = _ANSIBLE_HINTS.search(text) is not None if text else False
        if text is None or ("kind:" not in text and "services:" not in text and not workflow
                            and not ansible):
            self.texts.pop(f.display, None)
            return
        try:
            docs = load_documents(text)
        except YamlError as exc:
            manifest = workflow or (re.search(r"^\s*apiVersion:", text, re.M)
                                    and re.search(r"^\s*kind:", text, re.M))
            if manifest and "{{" not in text:  # a template that does not survive: skip cleanly
                self.project.parse_errors.append(ParseError(
                    Span(f.display, exc.line, exc.column, exc.line, exc.column), f"invalid YAML: {exc}"))
            return
        base = os.path.dirname(f.rel)
        for spec in cronjobs(f.display, docs):
            self._cronjob(spec, base)
        for doc in docs if workflow else ():
            scheduled = scheduled_workflow(f.display, doc)
            if scheduled is not None:
                self._workflow(scheduled)
        for doc in docs:
            for dockerfile, replicas, evidence in compose_replicas(f.rel, doc, self.tree.files):
                self.image_replicas[self.tree.files[dockerfile].display] = (replicas, evidence)
        if ansible:
            self.ansible_docs.append((f, docs))

    def _cronjob(self, spec, base: str) -> None:
        text = spec.schedule.strip()
        timezone = spec.timezone
        m = re.match(r"^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$", text)
        if m:
            timezone, text = m.group(1), m.group(2)
        expr = expand_macro(text) or text
        if TEMPLATE_VALUE in text:  # a Helm value: when it fires is not in the tree
            schedule = Schedule(text=spec.schedule, kind="templated", timezone=timezone)
        else:
            try:
                schedule = cron_schedule(spec.schedule, expr, timezone)
            except ScheduleError as exc:
                self.project.parse_errors.append(ParseError(spec.schedule_span,
                                                            f"invalid CronJob schedule: {exc}"))
                return
        commands = []
        for command, where in spec.commands:
            locate = Locator(where.path, command, where.line, where.column)
            locate.exact = False  # built from a YAML list, not written as one line
            commands.append((command, locate))
        job = build_job(f"k8s:{spec.schedule_span.path}:{spec.name}", "k8s", spec.schedule_span,
                        schedule, commands, self.tree, base, k8s=spec.facts)
        bounds = [b for b in (job.runtime_bound_seconds, spec.facts.active_deadline_seconds) if b]
        self.project.jobs.append(replace(job, runtime_bound_seconds=min(bounds) if bounds else None))
        if spec.ignore is not None:
            codes, reason = spec.ignore
            self.project.annotation_ignores.append((spec.object_span, codes, reason))

    def _workflow(self, workflow) -> None:
        for cron, span in workflow.crons:
            try:
                schedule = cron_schedule(cron, cron)  # GitHub runs schedules in UTC
            except ScheduleError as exc:
                self.project.parse_errors.append(ParseError(span, f"invalid schedule: {exc}"))
                continue
            self.project.jobs.append(Job(
                id=f"gha:{span.path}:{span.line}", source="gha", span=span, schedule=schedule,
                command=workflow.name, workflow=WorkflowFacts(
                    workflow.name, workflow.concurrency, workflow.state_change,
                    workflow.state_what)))

    def _scheduled_call(self, rel: str, call) -> None:
        if call.cron:
            try:
                schedule = cron_schedule(call.text or call.cron, call.cron)
            except ScheduleError as exc:
                self.project.parse_errors.append(ParseError(call.span, f"invalid schedule: {exc}"))
                return
        elif call.interval:
            schedule = Schedule(text=call.text, kind="interval",
                                min_interval_seconds=int(call.interval),
                                runs_per_day=round(86400 / call.interval, 4))
        else:
            schedule = Schedule(text=call.text, kind="templated")
        index = self.tree.python
        found = resolve_function(index, rel, call.target)
        if found is None and call.source != "celery":
            return  # a lambda or a builtin: nothing of the project's to analyse
        entry = None
        if found is not None:
            module_rel, function = found
            locks, hazards, parsed = entry_code(index, module_rel, "function", function)
            if parsed:
                entry = Entry(index.files[module_rel].display, "function", function, locks,
                              facts=hazards)
        identity = f"{entry.path}::{entry.function}" if entry else call.target
        target = Target((call.target,), call.span, True, entry, identity)
        text = " ".join((call.text or call.target).split())
        self.project.jobs.append(Job(
            id=f"{call.source}:{call.span.path}:{call.span.line}", source=call.source,
            span=call.span, schedule=replace(schedule, text=text[:80]), command=text,
            targets=(target,)))

    # -- Ansible
    def _ansible(self) -> None:
        groups: dict[str, tuple[int, Span]] = {}
        for f in self.discovery.files:
            if f.kind == "ansible-inventory":
                text = self.read(f, report=False)
                if text is not None:
                    groups.update(ini_inventory(f.display, text))
        role_hosts: dict[str, str] = {}
        for f, docs in self.ansible_docs:
            for doc in docs:
                if isinstance(doc.value, dict) and doc.get("all") is not None:
                    groups.update(yaml_inventory(f.display, doc))
                role_hosts.update(play_roles(doc))
        for f, docs in self.ansible_docs:
            if _is_test_path(f.rel):
                continue  # the cron module's own integration tests, test playbooks
            for doc in docs:
                for task in cron_tasks(f.display, doc, role_hosts):
                    self._guarded(f.display, lambda task=task, f=f: self._cron_task(task, f, groups))

    def _cron_task(self, task, f: SourceFile, groups) -> None:
        text = task.schedule
        expr = expand_macro(text) or text
        if text == "@reboot":
            schedule = Schedule(text=text, kind="reboot")
        elif "{{" in text or TEMPLATE_VALUE in text:
            schedule = Schedule(text=text, kind="templated")
        else:
            try:
                schedule = cron_schedule(text, expr)
            except ScheduleError as exc:
                self.project.parse_errors.append(ParseError(task.task_span, f"invalid cron task "
                                                                            f"schedule: {exc}"))
                return
        locate = Locator(task.span.path, task.command, task.span.line, 1)
        locate.exact = False
        replicas = groups.get(task.hosts) if task.hosts else None
        job = build_job(f"ansible:{task.span.path}:{task.span.line}", "cron", task.span, schedule,
                        [(task.command, locate)], self.tree, os.path.dirname(f.rel), task.user,
                        replicas=replicas[0] if replicas and replicas[0] > 1 else None,
                        replicas_evidence=replicas[1] if replicas and replicas[0] > 1 else None)
        self.project.jobs.append(job)
        if task.cron_file and "{{" not in task.cron_file and TEMPLATE_VALUE not in task.cron_file:
            self.project.cron_files.append(CronFile(task.task_span,
                                                    task.cron_file.rsplit("/", 1)[-1], None))

    # -- topology
    def _topology(self) -> None:
        """How many copies of each job run: compose services built from the Dockerfile
        that installs the crontab, else ``replicas`` from the configuration."""
        configured = None
        if self.settings.replicas and self.settings.replicas > 1 and self.settings.source:
            source = os.path.relpath(self.settings.source, self.cwd).replace(os.sep, "/")
            configured = (self.settings.replicas, Span(source, 1))
        for i, job in enumerate(self.project.jobs):
            dockerfile = job.span.path if job.span.path in self.image_replicas else \
                self.installed_by.get(job.span.path)
            found = self.image_replicas.get(dockerfile) if dockerfile else None
            found = found or configured
            if found is not None and job.replicas is None:
                self.project.jobs[i] = replace(job, replicas=found[0], replicas_evidence=found[1])

    def _python(self, rel: str) -> None:
        module = self.tree.python.module(rel)
        if module is None:
            return
        if not _is_test_path(rel):  # test code declares schedules to test the scheduler
            for call in module.schedules:
                self._guarded(module.path, lambda call=call: self._scheduled_call(rel, call))
        for unit in module.units.values():
            self.project.code_locks.extend(unit.locks)
            self.project.code_facts.extend(unit.facts)

    def _guarded(self, path: str, parse) -> None:
        try:
            parse()
        except RecursionError:
            self.error(path, "file too deeply nested to analyse")
        except Exception as exc:  # a front-end bug must not stop the other files
            self.error(path, f"internal error while analysing this file: "
                             f"{type(exc).__name__}: {exc}")

    def _dockerfile(self, f: SourceFile, cron_sources: dict[str, _CronSource]) -> None:
        text = self.read(f, report=False)
        if text is None:
            return
        result = parse_dockerfile(f.display, text)
        base = os.path.dirname(f.rel)
        for entry in result.entries:
            self._add_cron_job(f.display, entry, base)
        for hint in result.copies:
            for src in hint.sources:
                for rel in self._context_files(base, src):
                    target = cron_sources.setdefault(rel, _CronSource(self.tree.files[rel]))
                    target.system = is_system_destination(hint.dest)
                    self.installed_by[self.tree.files[rel].display] = f.display
                    if hint.dest.startswith("/etc/cron.d"):
                        name = rel.rsplit("/", 1)[-1] if hint.dest.endswith(("/", "cron.d")) \
                            else hint.dest.rsplit("/", 1)[-1]
                        target.installs.append((name, Span(f.display, hint.line, 1, hint.line, 1)))

    def _context_files(self, base: str, src: str) -> list[str]:
        """Tree files a COPY source names (the Dockerfile's folder is the build context)."""
        out = []
        for context in (base, ""):
            rel = os.path.normpath(os.path.join(context, src)).lstrip("./") if src not in (".", "./") \
                else context
            if rel in self.tree.files:
                return [rel]
            prefix = rel.rstrip("/") + "/"
            inside = sorted(r for r in self.tree.files if r.startswith(prefix) and "/" not in r[len(prefix):])
            if inside:
                return inside
        return out

    def _crontab(self, src: _CronSource) -> None:
        f = src.file
        text = self.read(f, report=True)
        if text is None:
            return
        if text.startswith("#!") and not src.installs:
            del self.texts[f.display]  # a script named like a crontab (temp-cleanup.cron)
            return
        parts = f.rel.split("/")
        in_cron_d = len(parts) > 1 and parts[-2] == "cron.d"
        system = src.system
        if system is None:
            system = in_cron_d or f.rel == "etc/crontab" or f.rel.endswith("/etc/crontab") \
                or ("crontabs" not in parts[:-1] and looks_like_system_crontab(text))
        result = parse_crontab(f.display, text, system)
        self.project.parse_errors.extend(result.errors)
        for entry in result.entries:
            self._add_cron_job(f.display, entry, os.path.dirname(f.rel))
        first = result.entries[0].span if result.entries else Span(f.display, 1, 1, 1, 1)
        names = list(src.installs) or [(parts[-1] if in_cron_d else None, first)]
        for i, (name, where) in enumerate(names):
            unterminated = result.last_entry_unterminated if i == 0 else None
            self.project.cron_files.append(CronFile(where, name, unterminated,
                                                    bool(result.entries), result.end_of_file))

    def _add_cron_job(self, path: str, entry, base: str) -> None:
        job = build_job(f"cron:{path}:{entry.span.line}", "cron", entry.span, entry.schedule,
                        [(entry.command, entry.locator)], self.tree, base, entry.user, entry.env)
        self.project.jobs.append(job)


def analyse(paths: list[str], settings: Settings, rule_ids: list[str],
            cwd: str | None = None) -> Analysis:
    cwd = os.path.realpath(cwd or os.getcwd())
    paths = paths or ["."]
    root = find_root(paths)
    builder = Builder(root, cwd, settings)
    project = builder.build()
    rules: list[Rule] = [all_rules()[i](settings) for i in rule_ids]
    findings: list[Finding] = []
    for rule in rules:
        if not rule.deferred:
            findings.extend(rule.check(project))
    findings = [f for f in findings if not per_file_ignored(f, settings.per_file_ignores,
                                                            resolve_selector)]
    scope = _Scope.of(paths, cwd, root)
    if scope is not None:
        job_paths = {j.id: j.span.path for j in project.jobs}
        findings = [f for f in findings if f.span.path in scope or job_paths.get(f.job) in scope]
    suppressions = {path: parse_suppressions(path, text, kind)
                    for path, (kind, text) in builder.texts.items()}
    for span, codes, reason in project.annotation_ignores:
        suppressions.setdefault(span.path, []).append(
            Suppression(span, -1, codes, reason, lines=(span.line, span.end_line)))
    apply_suppressions(findings, suppressions)
    if "JOB901" in rule_ids:
        findings.extend(_unused(suppressions, scope, settings))
    assign_fingerprints(findings, lambda p, n: _line(builder.texts, p, n))
    findings.sort(key=lambda f: f.sort_key)
    reported = [f for f in findings if f.suppressed is None]
    suppressed = [f for f in findings if f.suppressed is not None]
    return Analysis(project, reported, suppressed, builder.texts)


#: work that systemd does not stop with the unit, whatever its KillMode
_OUTSIDE_CGROUP = {"systemd-run without --wait", "docker run -d", "podman run -d", "at", "batch"}


def _unit_precedence(path: str) -> int:
    """systemd reads /etc before /run before /usr/lib and /lib."""
    for rank, marker in enumerate(("etc/systemd/", "run/systemd/", "usr/lib/systemd/",
                                   "lib/systemd/")):
        if marker in path:
            return rank
    return 9


_ANSIBLE_HINTS = re.compile(r"^\s*-?\s*(?:ansible\.(?:builtin|legacy)\.)?cron:|^\s*-?\s*hosts:|"
                            r"^all:\s*$", re.M)


def _is_test_path(rel: str) -> bool:
    parts = rel.split("/")
    name = parts[-1]
    return any(p in ("test", "tests", "testing") for p in parts[:-1]) or \
        name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def _yes(assignment: Assignment | None) -> bool:
    return assignment is not None and assignment.value.lower() in ("yes", "true", "1", "on")


def _unused(suppressions: dict[str, list[Suppression]], scope, settings) -> list[Finding]:
    rule = all_rules()["JOB901"](settings)
    out = []
    for path, sups in suppressions.items():
        if scope is not None and path not in scope:
            continue
        for sup in sups:
            if not sup.used:
                what = ", ".join(sup.codes) if sup.codes else "all rules"
                out.append(rule.finding(sup.span, f"suppression of {what} matches no finding; "
                                                  f"remove it"))
    return out


class _Scope:
    """What to report on when the analysis root is wider than the paths named (pre-commit
    file names, or several folders): files named, and everything under folders named."""

    def __init__(self, files: set[str], folders: tuple[str, ...]):
        self.files, self.folders = files, folders

    @classmethod
    def of(cls, paths: list[str], cwd: str, root: str) -> "_Scope | None":
        if len(paths) == 1 and os.path.isdir(paths[0]) and os.path.realpath(paths[0]) == root:
            return None
        display = [os.path.relpath(os.path.realpath(p), cwd).replace(os.sep, "/") for p in paths]
        files = {d for d, p in zip(display, paths) if os.path.isfile(p)}
        folders = tuple("" if d == "." else d.rstrip("/") + "/" for d, p in zip(display, paths)
                        if os.path.isdir(p))
        return cls(files, folders)

    def __contains__(self, path) -> bool:
        return path is not None and (path in self.files or path.startswith(self.folders))


def _line(texts: dict[str, tuple[str, str]], path: str, line: int) -> str | None:
    entry = texts.get(path)
    if entry is None:
        return None
    lines = entry[1].split("\n")
    return lines[line - 1] if 0 < line <= len(lines) else None
