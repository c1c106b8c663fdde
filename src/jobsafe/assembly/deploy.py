"""YAML sources: Kubernetes CronJobs, compose replicas, GitHub Actions schedules, Ansible
cron tasks and inventories, and the topology they imply."""
from __future__ import annotations

import math
import os
import re

import yaml
from dataclasses import dataclass, field, replace
from functools import partial

from ..discover import SourceFile
from ..link import build_job
from ..model import (
    Copies,
    CronFile,
    Guard,
    Job,
    NeverRuns,
    ParseError,
    Schedule,
    Span,
    WorkflowFacts,
    WorkloadRef,
)
from ..paths import is_test_path
from ..github_cron import refusal as github_refusal
from ..kubernetes_cron import read_schedule as read_robfig, robfig_as_written
from ..schedule import cron_schedule, cron_schedule_or_never, expand_macro, known_zone
from ..sources.ansible import cron_tasks, ini_inventory, play_roles, yaml_inventory
from ..sources.compose import compose_services
from ..sources.crontab import cron_d_name_ok
from ..sources.kubernetes import Catalog, cronjobs
from ..sources.mounts import fstab_mounts, mount_unit
from ..sources.runners import RunnerJob, ofelia_ini_jobs, ofelia_label_jobs, yacron_jobs
from ..sources.shell import Locator
from ..sources.workflows import is_workflow, scheduled_workflow
from ..sources.workloads import Container, Workload
from ..sources.yamlfile import (
    MAX_BYTES,
    TEMPLATE_VALUE,
    YamlError,
    YamlTooLarge,
    YNode,
    load_documents,
)
from ..timespec import GO, ScheduleError, parse_duration
from .context import Step

_ANSIBLE_HINTS = re.compile(r"^\s*-?\s*(?:ansible\.(?:builtin|legacy)\.)?cron:|^\s*-?\s*hosts:|"
                            r"^all:\s*$", re.M)


@dataclass
class Manifests:
    """What the YAML files hold besides their jobs, for the ansible and topology steps."""

    documents: list[tuple[str, list[YNode]]] = field(default_factory=list)  # (display, docs)
    catalog: Catalog = field(default_factory=Catalog)  # Kubernetes claims, classes, volumes
    workloads: list[Workload] = field(default_factory=list)  # compose services so far
    #: the containers of each CronJob job (for its volumes)
    job_containers: dict[str, list[Container]] = field(default_factory=dict)
    ansible: list[tuple[SourceFile, list[YNode]]] = field(default_factory=list)


def _go_every(text: str) -> float | None:
    """The seconds of robfig/cron's ``@every D`` (Kubernetes, ofelia), else None."""
    return parse_duration(text[len("@every "):], GO) if text.startswith("@every ") else None


def _interval_schedule(text: str, every: float, timezone: str | None = None) -> Schedule:
    """An ``@every`` schedule: robfig/cron drops the fraction of a second, and runs it at
    least a second apart (``Every``)."""
    seconds = max(1, math.floor(every))
    return Schedule(text=text, kind="interval", timezone=timezone,
                    min_interval_seconds=seconds, runs_per_day=round(86400 / seconds, 4))


def _every_schedule(text: str, every: float, timezone: str | None
                    ) -> tuple[Schedule, NeverRuns | None]:
    """A CronJob's ``@every D``: refused when Go's time.ParseDuration refuses D."""
    if every > GO_LONGEST_DURATION:
        return Schedule(text=text, kind="interval", timezone=timezone), \
            NeverRuns("refused", f"Kubernetes refuses `{text}`: the duration is longer than "
                                 f"Go's time.Duration holds (about 292 years)")
    return _interval_schedule(text, every, timezone), None


def _cronjob_schedule(written: str, text: str, timezone: str | None
                      ) -> tuple[Schedule, NeverRuns | None]:
    """A CronJob's cron schedule as robfig/cron reads it (kubernetes_cron): refused by the
    API server, never firing, or its firings, with the controller's daylight-saving
    behaviour when ``timeZone`` is set."""
    reading = read_robfig(text)
    if reading.expression is None:
        never = NeverRuns("refused", f"Kubernetes refuses the schedule `{written}`: "
                                     f"{reading.refused}") if reading.refused else \
            NeverRuns("never-matches", reading.never or "")
        return Schedule(text=written, kind="cron", timezone=timezone,
                        dialect="kubernetes"), never
    expression = reading.expression
    if robfig_as_written(text, expression):
        expression = text  # (the schedule as written reads the same: shown as written)
    # (robfig/cron accepts a day no month has: the controller never starts a Job)
    return cron_schedule_or_never(written, expression, timezone, "kubernetes", "every-match")


def _refused_cronjob(schedule: str, timezone: str | None) -> NeverRuns | None:
    """What the API server refuses in a new CronJob besides the schedule's syntax: ``TZ``
    in the schedule (``timeZone`` is the field for it), a time zone it does not know."""
    if "TZ" in schedule:
        return NeverRuns("refused", f"Kubernetes refuses to create a CronJob whose schedule "
                                    f"holds `TZ` or `CRON_TZ` (`{schedule}`); set "
                                    f"`timeZone` instead")
    # (an empty one is left alone: a chart's `{{- if .Values.timezone }}` leaves it out)
    if timezone and TEMPLATE_VALUE not in timezone and \
            (timezone.lower() == "local" or not known_zone(timezone)):
        return NeverRuns("refused", f"Kubernetes refuses the time zone `{timezone}`: "
                                    f"`timeZone` must name a zone of the tz database")
    return None


#: the longest duration Go's time.Duration holds (2^63 - 1 ns): longer ``@every`` values
#: are refused by the parsers of Kubernetes and ofelia
GO_LONGEST_DURATION = (2**63 - 1) / 1e9
#: a yacron configuration: a ``jobs:`` list whose items have a schedule
_YACRON = re.compile(r"^jobs:\s*$[\s\S]*?^\s*-?\s*schedule:", re.M)
#: the shortest interval GitHub Actions runs a scheduled workflow at
_GHA_SHORTEST = 300


class ManifestAssembly(Step):
    """Kubernetes CronJobs, GitHub Actions schedules and compose services from YAML; then
    Ansible cron tasks with their inventories; then the network mounts of the hosts."""

    def run(self) -> Manifests:
        self.manifests = Manifests()
        self._values = {}
        for f in self.discovery.files:
            if f.kind == "yaml":
                self.guarded(f.display, partial(self._yaml, f))
            elif f.rel.endswith((".ini", ".conf")):
                text = self.peek(f)
                for job in ofelia_ini_jobs(f.display, text) if text and "[job-" in text else ():
                    self.guarded(f.display, partial(self._runner_job, job,
                                                    os.path.dirname(f.rel)))
        self.guarded(self.project.root, self._ansible)
        self.guarded(self.project.root, self._host_mounts)
        return self.manifests

    def _yaml(self, f: SourceFile) -> None:
        text = self.read(f, report=False)
        workflow = is_workflow(f.rel)
        ansible = _ANSIBLE_HINTS.search(text) is not None if text else False
        yacron = text is not None and not workflow and _YACRON.search(text) is not None
        if text is None or ("kind:" not in text and "services:" not in text and not workflow
                            and not ansible and not yacron):
            self.texts.pop(f.display, None)
            return
        try:
            docs = load_documents(text, self._chart_values(f.rel) if "{{" in text else None)
        except YamlTooLarge as exc:
            self.project.skipped.append((f.display, str(exc)))
            return
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
        for doc in docs if not workflow else ():
            for job in [*(yacron_jobs(f.display, doc) if yacron else ()),
                        *ofelia_label_jobs(f.display, doc)]:
                self._runner_job(job, base)
        for doc in docs if workflow else ():
            scheduled = scheduled_workflow(f.display, doc, text.splitlines())
            if scheduled is not None:
                self._workflow(scheduled)
        self.manifests.documents.append((f.display, docs))
        self.manifests.catalog.read(f.display, docs)
        for doc in docs:
            self.manifests.workloads.extend(compose_services(f.display, f.rel, doc,
                                                             self.tree.files))
        if ansible:
            self.manifests.ansible.append((f, docs))

    def _cronjob(self, spec, base: str) -> None:
        text = spec.schedule.strip()
        timezone = spec.timezone
        m = re.match(r"^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$", text)
        if m:
            timezone, text = m.group(1), m.group(2)
        every = _go_every(text)
        if TEMPLATE_VALUE in spec.schedule:  # a Helm value: when it fires is not in the tree
            schedule, never = Schedule(text=spec.schedule, kind="templated", timezone=timezone), None
        elif every is not None:
            schedule, never = _every_schedule(spec.schedule, every, timezone)
        else:
            schedule, never = _cronjob_schedule(spec.schedule, text, timezone)
        if never is None:
            never = _refused_cronjob(spec.schedule, spec.timezone)
        commands = []
        for command, where in spec.commands:
            locate = Locator(where.path, command, where.line, where.column)
            locate.exact = False  # built from a YAML list, not written as one line
            commands.append((command, locate))
        job_id = f"k8s:{spec.schedule_span.path}:{spec.name}"
        pods = None
        if spec.parallelism and spec.parallelism[0] > 1:
            count, evidence = spec.parallelism
            pods = Copies(count, evidence, f"parallelism: {count} pods per run")
        job = build_job(job_id, "k8s", spec.schedule_span, schedule, commands, self.tree, base,
                        k8s=spec.facts, replicas=pods, never_runs=never,
                        workload=WorkloadRef("CronJob", spec.name, pods.count if pods else 1,
                                             spec.object_span))
        self.manifests.job_containers[job_id] = spec.containers
        bounds = [b for b in (job.runtime_bound_seconds, spec.facts.active_deadline_seconds) if b]
        self.project.jobs.append(replace(job, runtime_bound_seconds=min(bounds) if bounds else None))
        if spec.ignore is not None:
            codes, reason = spec.ignore
            self.project.annotation_ignores.append((spec.object_span, codes, reason))

    def _chart_values(self, rel: str) -> dict | None:
        """The values.yaml of the Helm chart whose ``templates/`` holds ``rel``: a
        template's ``{{ .Values.x }}`` is its default value there."""
        folders = rel.split("/")[:-1]
        if "templates" not in folders:
            return None
        chart = folders[:len(folders) - 1 - folders[::-1].index("templates")]
        values_rel = "/".join([*chart, "values.yaml"])
        if values_rel not in self._values:
            f = self.tree.files.get(values_rel)
            text = self.peek(f) if f is not None else None
            loaded = None
            if text and len(text) <= MAX_BYTES:
                try:
                    loaded = yaml.safe_load(text)  # plain data: nothing is constructed
                except yaml.YAMLError:
                    loaded = None
            self._values[values_rel] = loaded if isinstance(loaded, dict) else None
        return self._values[values_rel]

    _values: dict[str, dict | None]

    def _runner_job(self, spec: RunnerJob, base: str) -> None:
        """A job a container cron runner declares (yacron, ofelia): a cron job whose guard
        is the runner's own refusal to start a run beside the last one, when it is set."""
        text = spec.schedule.strip()
        fields = text.split()
        every = _go_every(text)
        if every is not None and every > 0:
            schedule = _interval_schedule(text, every)
        elif len(fields) == 6 and spec.runner == "ofelia" and re.fullmatch(r"\d+", fields[0]):
            # ofelia's optional seconds field, at one second of the minute
            schedule = replace(cron_schedule(text, " ".join(fields[1:])), text=text)
        else:
            try:
                schedule = cron_schedule(text, expand_macro(text) or text)
            except ScheduleError as exc:
                self.project.parse_errors.append(ParseError(
                    spec.span, f"invalid {spec.runner} schedule: {exc}"))
                return
        locate = Locator(spec.span.path, spec.command, spec.span.line, 1)
        locate.exact = False
        job = build_job(f"{spec.runner}:{spec.span.path}:{spec.name}", "cron", spec.span,
                        schedule, [(spec.command, locate)], self.tree, base)
        guards = (*job.guards, Guard(spec.runner, False, None, spec.serial)) \
            if spec.serial is not None else job.guards
        bounds = [b for b in (job.runtime_bound_seconds, spec.timeout_seconds) if b]
        self.project.jobs.append(replace(job, guards=guards, runs_in=spec.container,
                                         runtime_bound_seconds=min(bounds) if bounds else None))

    def _workflow(self, workflow) -> None:
        for cron, span in workflow.crons:
            never = None
            if (refused := github_refusal(cron)) is not None:
                schedule = Schedule(text=cron, kind="cron", dialect="github")
                never = NeverRuns("refused", f"GitHub refuses the schedule `{cron}` ({refused}) "
                                             f"and marks the workflow file invalid")
            else:
                try:
                    schedule = cron_schedule(cron, cron, dialect="github")  # in UTC
                except ScheduleError as exc:
                    self.project.parse_errors.append(ParseError(span, f"invalid schedule: {exc}"))
                    continue
            if schedule.min_interval_seconds is not None and \
                    schedule.min_interval_seconds < _GHA_SHORTEST:
                # GitHub runs a schedule at most every five minutes, whatever it says
                schedule = replace(schedule, min_interval_seconds=_GHA_SHORTEST,
                                   runs_per_day=min(schedule.runs_per_day or 0.0,
                                                    86400 / _GHA_SHORTEST))
            self.project.jobs.append(Job(
                id=f"gha:{span.path}:{span.line}", source="gha", span=span, schedule=schedule,
                command=workflow.name, never_runs=never, workflow=WorkflowFacts(
                    workflow.name, workflow.concurrency, workflow.state_change,
                    workflow.state_what, workflow.jobs_slot, workflow.max_run_seconds)))

    def _ansible(self) -> None:
        groups: dict[str, tuple[int, Span]] = {}
        for f in self.discovery.files:
            if f.kind == "ansible-inventory":
                text = self.read(f, report=False)
                if text is not None:
                    groups.update(ini_inventory(f.display, text))
        role_hosts: dict[str, str] = {}
        for f, docs in self.manifests.ansible:
            for doc in docs:
                if isinstance(doc.value, dict) and doc.get("all") is not None:
                    groups.update(yaml_inventory(f.display, doc))
                role_hosts.update(play_roles(doc))
        for f, docs in self.manifests.ansible:
            if is_test_path(f.rel):
                continue  # the cron module's own integration tests, test playbooks
            for doc in docs:
                for task in cron_tasks(f.display, doc, role_hosts):
                    self.guarded(f.display, partial(self._cron_task, task, f, groups))

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
        cron_file = task.cron_file if task.cron_file and "{{" not in task.cron_file and \
            TEMPLATE_VALUE not in task.cron_file else None
        name = cron_file.rsplit("/", 1)[-1] if cron_file else None
        name_ignored = name is not None and not cron_d_name_ok(name)
        job = build_job(f"ansible:{task.span.path}:{task.span.line}", "cron", task.span, schedule,
                        [(task.command, locate)], self.tree, os.path.dirname(f.rel), task.user,
                        replicas=Copies(replicas[0], replicas[1], f"{replicas[0]} replicas")
                        if replicas and replicas[0] > 1 else None,
                        workload=WorkloadRef("host group", task.hosts, replicas[0], replicas[1])
                        if replicas and task.hosts else None,
                        never_runs=NeverRuns("file-skipped",
                                             f"cron ignores /etc/cron.d/{name} (its name)")
                        if name_ignored else None)
        self.project.jobs.append(job)
        if name is not None:
            self.project.cron_files.append(CronFile(task.task_span, name, None,
                                                    name_ignored=name_ignored))

    def _host_mounts(self) -> None:
        for f in self.discovery.files:
            if f.kind == "mount":
                text = self.read(f, report=False)
                if text is None:
                    continue
                name = f.rel.rsplit("/", 1)[-1]
                self.project.host_mounts.extend(
                    mount_unit(name, f.display, text) if name.endswith(".mount")
                    else fstab_mounts(f.display, text))
