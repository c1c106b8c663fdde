"""Long-running workloads from deployment files (Kubernetes controllers, compose services,
supervisor programs): how many copies of a container run, what it runs, and what is mounted
into it.

Front ends fill these in; the assembly step decides which scheduled jobs run in which
container and turns volumes into ``Mount`` facts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..model import Copies, Span


@dataclass
class Volume:
    """A volume as a pod or service declares it; classified once every file is read."""

    name: str
    kind: str  # network | pvc | emptyDir | hostPath | compose | bind | other
    detail: str  # server:path, claim name, driver ...
    span: Span


@dataclass
class Container:
    name: str
    image: str
    command: str | None  # command and args joined as a shell line; None: the image's own
    command_span: Span | None
    mounts: list[tuple[str, Volume]] = field(default_factory=list)  # (mount path, volume)
    dockerfile: str | None = None  # display path of the Dockerfile that builds it (compose)
    container_name: str | None = None  # compose's ``container_name:``


#: the kind of a supervisor program's workload: its copies are processes of one host
SUPERVISOR_PROGRAM = "supervisor program"


@dataclass
class Workload:
    kind: str  # Deployment | StatefulSet | DaemonSet | ReplicaSet | compose service
    name: str
    copies: int  # 2 stands for "several" when the count is not a number (DaemonSet)
    evidence: Span
    note: str  # what the evidence says, for the finding's related location
    containers: list[Container]

    @property
    def replicas(self) -> Copies:
        return Copies(self.copies, self.evidence, self.note,
                      one_host=self.kind == SUPERVISOR_PROGRAM)


_CRON_DAEMON = re.compile(r"(?:^|[\s/'\"])(?:cron|crond|supercronic|go-crond|busybox\s+crond)(?:[\s'\"]|$)")
_CELERY = re.compile(r"(?:^|[\s/'\"])celery(?:[\s'\"]|$)")
_WEB_SERVER = re.compile(r"(?:^|[\s/'\"])(?:gunicorn|uwsgi|uvicorn|daphne|hypercorn|waitress-serve)"
                         r"(?:[\s'\"]|$)|manage\.py\s+runserver\b|\bflask\s+run\b")


def runs_cron_daemon(command: str | None) -> bool:
    return command is not None and _CRON_DAEMON.search(command) is not None


def celery_role(command: str | None) -> str | None:
    """"beat", "worker -B" (a worker with an embedded beat) or "worker"."""
    if not command or not _CELERY.search(command):
        return None
    words = re.findall(r"[^\s'\"]+", command)  # also inside sh -c '...'
    if "beat" in words:
        return "beat"
    if "worker" in words:
        beat = any(w in ("-B", "--beat") or re.fullmatch(r"-[A-Za-z]*B[A-Za-z]*", w)
                   for w in words)
        return "worker -B" if beat else "worker"
    return None


def runs_laravel_scheduler(command: str | None) -> bool:
    """``php artisan schedule:work`` (or ``schedule:run`` in a loop) as a container's
    command: the process that runs Laravel's scheduled tasks."""
    return command is not None and re.search(r"\bartisan\b[^\n]*\bschedule:(?:work|run)\b",
                                             command) is not None


def runs_symfony_scheduler(command: str | None) -> bool:
    """``bin/console messenger:consume scheduler_default``: the worker that generates and
    handles a Symfony schedule's messages."""
    return command is not None and re.search(r"\bmessenger:consume\b[^\n]*\bscheduler_\w+",
                                             command) is not None


def runs_web_server(command: str | None) -> bool:
    return command is not None and _WEB_SERVER.search(command) is not None


def image_name(image: str) -> str:
    """``registry.example.com/team/billing-cron:1.4`` → ``billing-cron``."""
    last = image.rsplit("/", 1)[-1]
    return last.split("@", 1)[0].split(":", 1)[0]
