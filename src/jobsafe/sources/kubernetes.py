"""Kubernetes manifests: CronJobs as scheduled jobs (Deployments and the topology they imply
come with the deployment issue)."""
from __future__ import annotations

import shlex
from dataclasses import dataclass

from ..model import K8sFacts, Span
from .yamlfile import YNode

IGNORE_ANNOTATION = "jobsafe.dev/ignore"


@dataclass
class CronJobSpec:
    name: str
    schedule: str
    schedule_span: Span
    timezone: str | None
    facts: K8sFacts
    commands: list[tuple[str, Span]]  # one shell command line per container
    object_span: Span
    ignore: tuple[tuple[str, ...], str] | None


def is_manifest(doc: YNode) -> bool:
    return isinstance(doc.value, dict) and doc.text("kind") is not None and \
        doc.text("apiVersion") is not None


def cronjobs(path: str, docs: list[YNode]) -> list[CronJobSpec]:
    found = []
    for doc in docs:
        if doc.text("kind") != "CronJob" or doc.get("spec", "schedule") is None:
            continue
        schedule = doc.get("spec", "schedule")
        policy = doc.get("spec", "concurrencyPolicy")
        deadline = doc.text("spec", "jobTemplate", "spec", "activeDeadlineSeconds")
        pod = doc.get("spec", "jobTemplate", "spec", "template", "spec")
        commands = []
        for container in (pod.get("containers").list() if pod and pod.get("containers") else []):
            argv = [n.value for n in (container.get("command").list() if container.get("command") else [])]
            argv += [n.value for n in (container.get("args").list() if container.get("args") else [])]
            argv = [str(a) for a in argv if a is not None]
            if argv:
                where = container.get("command") or container.get("args")
                commands.append((shlex.join(argv), Span(path, where.line, where.column)))
        name = doc.text("metadata", "name") or "cronjob"
        facts = K8sFacts(
            name=name, concurrency_policy=policy.value if policy is not None else None,
            policy_span=Span(path, policy.key_line or policy.line) if policy is not None else None,
            active_deadline_seconds=_number(deadline))
        found.append(CronJobSpec(
            name=name, schedule=str(schedule.value), timezone=doc.text("spec", "timeZone"),
            schedule_span=Span(path, schedule.key_line or schedule.line, 1,
                               schedule.key_line or schedule.line, 1),
            facts=facts, commands=commands,
            object_span=Span(path, doc.line, 1, doc.end_line, 1), ignore=annotation_ignore(doc)))
    return found


def annotation_ignore(doc: YNode) -> tuple[tuple[str, ...], str] | None:
    """``jobsafe.dev/ignore: "JOB105,JOB104 -- reason"`` on an object's metadata."""
    value = doc.text("metadata", "annotations", IGNORE_ANNOTATION)
    if value is None:
        return None
    codes, _, reason = value.partition(" -- ")
    return tuple(c.strip() for c in codes.split(",") if c.strip()), reason.strip()


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None
