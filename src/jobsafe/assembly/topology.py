"""Topology: how many copies of each job run and what they mount (the workloads whose
containers run it: Kubernetes controllers, compose services, supervisor programs), which
Celery beats and web servers run several times, and whether connections go through a
transaction-pooling PgBouncer."""
from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import replace
from functools import cached_property

from ..discover import SourceFile
from ..link import is_script
from ..model import (BeatProcess, Confidence, Copies, Job, Mount, MountKind, Pooler, Span,
                     WorkloadRef)
from ..sources.kubernetes import classify_claim, workloads
from ..sources.shell import SHELLS
from ..sources.supervisor import looks_like_supervisor, supervisor_programs
from ..sources.workloads import (
    Container,
    Volume,
    Workload,
    celery_role,
    image_name,
    runs_cron_daemon,
    runs_laravel_scheduler,
    runs_symfony_scheduler,
    runs_web_server,
)
from .context import Context, Step
from .cron import CronImages
from .deploy import Manifests


class TopologyAssembly(Step):
    """Runs after every source made its jobs."""

    def __init__(self, ctx: Context, manifests: Manifests, images: CronImages):
        super().__init__(ctx)
        self.manifests, self.images = manifests, images
        self.workloads: list[Workload] = list(manifests.workloads)
        #: a web server workload with several copies: (copies, evidence, note)
        self.web_replicas: Copies | None = None

    def run(self) -> None:
        self.guarded(self.project.root, self._topology)
        self.project.pooler = self._pooler()
        workers = self._workers()
        preloaded = self._preloaded() if workers is not None else None
        if preloaded is not None and self.web_replicas is not None:
            # several copies of the app: each preloaded master still starts its own
            workers, preloaded = self.web_replicas, None
        self.project.workers = workers or self.web_replicas
        self.project.preloaded = preloaded

    def _topology(self) -> None:
        """How many copies of each job run and what they mount: the workloads (Kubernetes
        controllers, compose services) whose containers run the job, else ``replicas`` from
        the configuration."""
        for path, docs in self.manifests.documents:
            self.workloads.extend(workloads(path, docs, self.manifests.catalog))
        for f in self.discovery.files:
            if f.rel.endswith((".conf", ".ini")) and looks_like_supervisor(self.peek(f) or ""):
                text = self.read(f, report=False)  # kept: findings point into it
                if text is not None:
                    self.workloads.extend(supervisor_programs(f.display, text))
        for workload in self.workloads:
            for container in workload.containers:
                container.command = self._through_script(container.command)
        configured = None
        if self.settings.replicas and self.settings.replicas > 1 and self.settings.source:
            source = self.ctx.display(self.settings.source)
            configured = Copies(self.settings.replicas, Span(source, 1),
                                f"{self.settings.replicas} replicas (configuration)")
        for i, job in enumerate(self.project.jobs):
            runs_in = self._containers_of(job)
            mounts = tuple(dict.fromkeys(
                self._mount(path, volume, linked)
                for _, container, linked in runs_in for path, volume in container.mounts))
            mounts += tuple(self._mount(path, volume) for container in
                            self.manifests.job_containers.get(job.id, ())
                            for path, volume in container.mounts)
            several = max(((w, linked) for w, _, linked in runs_in if w.copies > 1),
                          key=lambda pair: pair[0].copies, default=None)
            found = replace(several[0].replicas, confidence=several[1]) if several else \
                configured
            replicas = job.replicas or found
            home = job.workload or _workload(runs_in)
            if mounts or replicas != job.replicas or home != job.workload:
                self.project.jobs[i] = replace(job, mounts=mounts or job.mounts,
                                               replicas=replicas, workload=home)
        for workload in self.workloads:
            if workload.copies <= 1:
                continue
            for container in workload.containers:
                role = celery_role(container.command)
                if role in ("beat", "worker -B") and container.command_span is not None:
                    self.project.beat_processes.append(BeatProcess(
                        container.command_span, f"celery {role}", workload.replicas))
                if runs_web_server(container.command) and self.web_replicas is None:
                    self.web_replicas = workload.replicas
        self._framework_schedulers(configured)

    def _framework_schedulers(self, configured: Copies | None) -> None:
        """Laravel's and Symfony's tasks run wherever their scheduler runs: the cron jobs
        that call ``artisan schedule:run``, the workloads that run ``schedule:work`` or
        ``messenger:consume scheduler_NAME``. Several copies of such a workload are JOB107
        unless every task claims its firings in a shared store."""
        for source, runs, how in (
                ("laravel", runs_laravel_scheduler, "artisan schedule:work"),
                ("symfony", runs_symfony_scheduler, "messenger:consume scheduler")):
            dispatchers = [job for job in self.project.jobs if source == "laravel" and
                           any(t.role == "dispatch" for t in job.targets)]
            copies = [job.replicas for job in dispatchers if job.replicas is not None]
            homes = [job.workload for job in dispatchers if job.workload is not None]
            tasks = [job for job in self.project.jobs if job.source == source]
            all_claimed = bool(tasks) and all(
                job.one_per_firing is not None and job.one_per_firing.scope == "cluster"
                for job in tasks)
            for workload in self.workloads:
                for container in workload.containers:
                    if not runs(container.command):
                        continue
                    copies.append(workload.replicas)
                    homes.append(WorkloadRef(workload.kind, workload.name, workload.copies,
                                             workload.evidence))
                    if workload.copies > 1 and container.command_span is not None and \
                            not all_claimed:
                        self.project.beat_processes.append(BeatProcess(
                            container.command_span, how, workload.replicas))
            most = max(copies, key=lambda c: c.count, default=None) or configured
            home = max(homes, key=lambda w: w.copies, default=None)
            for i, job in enumerate(self.project.jobs):
                if job.source == source:
                    self.project.jobs[i] = replace(job, replicas=job.replicas or most,
                                                   workload=job.workload or home)

    def _pooler(self) -> Pooler | None:
        """Where the tree says connections are pooled per transaction (PgBouncer): its
        ``pool_mode``; less surely, Django's setting for it, or PgBouncer's usual port."""
        for f in self.discovery.files:
            name = f.rel.rsplit("/", 1)[-1].lower()
            if name.startswith("pgbouncer") and name.endswith((".ini", ".conf")) or \
                    f.kind in ("python", "yaml"):
                text = self.texts[f.display][1] if f.display in self.texts else (
                    self.peek(f) if name.startswith("pgbouncer") else None)
                if not text or not any(hint in text for hint in _POOLER_HINTS):
                    continue
                m = _POOLER.search(text)
                if m:
                    line = text.count("\n", 0, m.start()) + 1
                    said = m.group(0)
                    confidence = Confidence.HIGH if "pool_mode" in said else \
                        Confidence.LOW if ":6432/" in said else Confidence.MEDIUM
                    return Pooler(Span(f.display, line), confidence)
        return None

    def _through_script(self, command: str | None) -> str | None:
        """A container command that runs a script of the tree, with the one program the
        script ``exec``s at its end (DefectDojo's beat service runs
        ``/entrypoint-celery-beat.sh``, which ends in ``exec celery … beat``). A script that
        can exec several (a role chosen by a ``case``) says nothing sure of the container."""
        if not command:
            return command
        words = command.split()
        if "--" in words:  # a forwarder (wait-for-it.sh HOST -- CMD, tini --): the command
            words = words[len(words) - words[::-1].index("--"):]
        script = next((w for w in words[:3] if ("/" in w or w.endswith(".sh")) and
                       w.rsplit("/", 1)[-1] not in (*SHELLS, "env")), None)
        # (where a Dockerfile of the tree puts it, else the only script of that name)
        path = script.strip("'\"") if script else ""
        f = self.tree.find(path) or self.tree.find(path.rsplit("/", 1)[-1]) if path else None
        if f is None or not is_script(f):
            return command
        lines = (self.peek(f) or "").replace("\\\n", " ").splitlines()  # (continued lines)
        execs = [line.strip()[len("exec "):] for line in lines if line.strip().startswith("exec ")]
        return f"{command}\n{execs[0]}" if len(execs) == 1 else command

    def _server_files(self, scripts: bool) -> Iterator[tuple[SourceFile, str, str]]:
        """(file, lower-case name, text) of the files that may say how a web server runs:
        Procfiles, gunicorn/uWSGI configs, Dockerfiles, YAML, shell, ini/conf files — and,
        with ``scripts``, start scripts without an extension."""
        for f in self.discovery.files:
            name = f.rel.rsplit("/", 1)[-1].lower()
            script = scripts and f.kind == "other" and "." not in name and name != "procfile"
            if not (name == "procfile" or name.startswith(("gunicorn", "uwsgi")) or script or
                    f.kind in ("dockerfile", "yaml", "shell") or name.endswith((".ini", ".conf"))):
                continue
            text = self.peek(f)
            if text and not (script and not text.startswith("#!")):
                yield f, name, text

    def _preloaded(self) -> Span | None:
        """Where gunicorn is told to load the app in its master, before forking."""
        for f, _, text in self._server_files(scripts=False):
            m = _PRELOAD.search(text) if "preload" in text else None
            if m:
                return Span(f.display, text.count("\n", 0, m.start()) + 1)
        return None

    def _workers(self) -> Copies | None:
        """gunicorn/uWSGI worker processes, from configs and command lines in the tree
        (also a start script without an extension, a command continued over lines)."""
        for f, name, text in self._server_files(scripts=True):
            # (a backslash-newline joins lines; the same length keeps the line numbers)
            joined = text.replace("\\\n", "  ")
            for m in _WORKERS.finditer(joined):
                value = next(g for g in m.groups() if g is not None)
                default = _ENV_DEFAULT.search(value)
                count = 2 if "cpu_count" in value else int(value) if value.isdigit() else \
                    int(default.group(1)) if default else 0
                # a bare `workers =`/`processes =` line says less outside a server's config
                bare = (m.group(2) or m.group(3)) is not None and \
                    not name.startswith(("gunicorn", "uwsgi"))
                if count > 1:
                    # (a formula of the CPU count: at least two on any machine that has two)
                    said = f"`{value.strip()}`" if "cpu_count" in value else str(count)
                    return Copies(count, Span(f.display, text.count("\n", 0, m.start()) + 1),
                                  f"{said} worker processes",
                                  Confidence.LOW if bare else Confidence.HIGH)
        return None

    def _containers_of(self, job: Job) -> list[tuple[Workload, Container, Confidence]]:
        """The long-running containers that run a job, with how surely each does: the cron
        daemon of an image built from the Dockerfile that installs its crontab; the Celery
        (or Huey) workers for a task."""
        if job.source in ("celery", "huey"):
            return [(w, c, Confidence.HIGH) for w in self.workloads for c in w.containers
                    if _runs_tasks(c.command, job.source)]
        if job.runs_in is not None:  # a runner that execs the job in a named container
            return [(w, c, Confidence.HIGH) for w in self.workloads for c in w.containers
                    if job.runs_in in (c.name, c.container_name)]
        dockerfiles = [job.span.path] if job.span.path in self.images.dockerfiles else \
            self.images.installed_by.get(job.span.path, [])
        found = [(w, c, next((linked for d in dockerfiles
                              if (linked := self._built_from(c, d)) is not None), None))
                 for w in self.workloads for c in w.containers]
        return [(w, c, linked) for w, c, linked in found if linked is not None]

    @cached_property
    def _tree_paths(self) -> dict[str, str]:
        """Display path -> the file's path in the analysed tree."""
        return {f.display: f.rel for f in self.discovery.files}

    def _built_from(self, container: Container, dockerfile: str) -> Confidence | None:
        """Whether the container's image is built from ``dockerfile``: certainly when the
        manifest names its build; by the image's name matching the Dockerfile's folder or
        suffix (a name: low); as the only crontab-installing image in the tree run by a cron
        daemon, or by running the script that image copies in to start its cron daemon
        (medium); None when not."""
        if container.dockerfile is not None:
            return Confidence.HIGH if container.dockerfile == dockerfile else None
        if not container.image:
            return None
        # (its place in the tree, not its display path: run from a parent folder, a root
        # Dockerfile's display path has folders)
        folder, name = os.path.split(self._tree_paths.get(dockerfile, dockerfile))
        names = {os.path.basename(folder) if folder else "", *(() if folder else
                                                                self.tree.repository_names)}
        # an image of several (Containerfile.worker, docker/worker/Dockerfile): "worker",
        # or after the repository, "workorder-worker"
        part = name.split(".", 1)[1] if "." in name else os.path.basename(folder)
        if part:
            names |= {part, *(f"{repo}-{part}" for repo in self.tree.repository_names)}
        if image_name(container.image) in names:
            return Confidence.LOW
        if runs_cron_daemon(container.command) and len(self.images.dockerfiles) == 1:
            return Confidence.MEDIUM
        scripts = self.images.daemon_scripts.get(dockerfile, set())
        if container.command and scripts and any(
                os.path.normpath(word) in scripts
                for word in re.findall(r"[^\s'\"\[\],]+", container.command)):
            return Confidence.MEDIUM  # it runs the script that image starts crond with
        return None

    def _mount(self, path: str, volume: Volume,
               linked: Confidence = Confidence.HIGH) -> Mount:
        """The mount at ``path``; ``linked``: how surely the job runs in its container."""
        kind: MountKind
        confidence = linked
        if volume.kind == "pvc":
            kind, what, classified = classify_claim(volume.detail, self.manifests.catalog)
            confidence = Confidence.weakest((linked, classified))
        elif volume.kind == "network":
            kind = "network"
            what = f"{volume.detail} ({volume.name})" if volume.name else volume.detail
        elif volume.kind in ("compose", "bind"):
            kind, what = "shared", f"{volume.detail} {volume.name}"
        elif volume.kind == "emptyDir":
            kind, what = "local", "emptyDir (pod-local)"
        else:
            kind = "local" if volume.kind == "hostPath" else "other"
            what = volume.detail or volume.name
        return Mount(path, kind, what, volume.span, confidence)


def _workload(runs_in: list[tuple[Workload, Container, Confidence]]) -> WorkloadRef | None:
    """The workload that runs a job: of those whose containers run it, the surest, then the
    one with the most copies."""
    if not runs_in:
        return None
    sure = {Confidence.HIGH: 2, Confidence.MEDIUM: 1, Confidence.LOW: 0}
    workload, _, linked = max(runs_in, key=lambda found: (sure[found[2]], found[0].copies))
    return WorkloadRef(workload.kind, workload.name, workload.copies, workload.evidence, linked)


def _runs_tasks(command: str | None, source: str) -> bool:
    """Whether a container consumes the tasks a Celery or Huey schedule sends."""
    if source == "celery":
        return (celery_role(command) or "").startswith("worker")
    return "huey_consumer" in (command or "")


_POOLER_HINTS = ("pool_mode", "POOL_MODE", "DISABLE_SERVER_SIDE_CURSORS", ":6432/")
_POOLER = re.compile(r"(?im)^\s*pool_mode\s*=\s*transaction\b|DISABLE_SERVER_SIDE_CURSORS['\"]?\s*[:=]\s*True|"
                     r"postgres(?:ql)?(?:\+\w+)?://[^\s'\"]*:6432/")


#: a count read from the environment with a default: ``int(os.environ.get("WORKERS", 6))``
_ENV_DEFAULT = re.compile(r"(?:environ\.get|getenv)\(\s*['\"]\w+['\"]\s*,\s*['\"]?(\d+)")
_PRELOAD = re.compile(r"\bgunicorn\b[^\n]*\s--preload\b|^\s*preload_app\s*=\s*True\b", re.M)
_WORKERS = re.compile(
    r"\b(?:gunicorn|uvicorn|hypercorn|granian)\b[^\n]*?(?<![\w-])(?:-w|--workers)"
    r"[\s\"',=]*(?:\$\{\w+:-)?(\d+)|^\s*workers\s*=\s*([^\n#]+)|"
    r"^\s*processes\s*=\s*(\d+)|--processes[= ](\d+)|WEB_CONCURRENCY[=:]\s*['\"]?(\d+)", re.M)
