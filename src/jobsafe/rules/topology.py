"""3xx: the lock's scope is smaller than the job's."""
from __future__ import annotations

from ..model import Related, Severity
from . import Rule
from .common import FactRule, locks_with_jobs


class HostLocalLockMultiNode(Rule):
    id = "JOB301"
    name = "host-local-lock-multi-node"
    severity = Severity.ERROR
    summary = "A job guarded only by a host-local lock, deployed on more than one node."
    sources = ("cron", "systemd", "k8s", "compose", "python")

    def check(self, project):
        for job in sorted(project.jobs, key=lambda j: j.span):
            if not job.replicas or job.replicas <= 1 or job.replicas_evidence is None:
                continue
            locks = job.guard_locks
            if any(lock.scope == "cluster" for lock in locks):
                continue
            guard = job.guards[0].span if job.guards else (locks[0].span if locks else None)
            if guard is None:
                continue  # no lock at all: JOB101/JOB105 say so
            kind = job.guards[0].kind if job.guards else locks[0].kind
            yield self.finding(
                guard,
                f"{kind} only keeps runs apart on one host, but `{job.schedule.text}` runs on "
                f"{job.replicas} replicas: every replica starts its own copy; use a cluster "
                f"lock (Redis, a database advisory lock) or run the schedule once",
                job.id, [Related(job.replicas_evidence, f"{job.replicas} replicas"),
                         Related(job.span, "scheduled here")])


class LockKeyPerHost(FactRule):
    id = "JOB304"
    name = "lock-key-per-host"
    severity = Severity.ERROR
    summary = "A cluster lock whose key differs per host or per run, so nothing is excluded."
    sources = ("python",)
    fact_kind = "lock-key-per-host"

    def message(self, fact):
        return (f"the key of this {fact.lock.kind} lock includes {fact.detail}: each host (or "
                f"run) takes its own lock and none exclude each other; key it on the work "
                f"(the job's name, the shard, the period)")


class SessionLockThroughPooler(Rule):
    id = "JOB303"
    name = "session-lock-through-pooler"
    severity = Severity.ERROR
    summary = "A session-level advisory lock on connections pooled per transaction."
    sources = ("python",)

    def check(self, project):
        if project.pooler is None:
            return
        for lock, job in locks_with_jobs(project):
            if not lock.session:
                continue
            yield self.finding(
                lock.span,
                f"{lock.api} is a session-level lock, but connections go through a "
                f"transaction-pooling PgBouncer: the lock belongs to whichever client gets the "
                f"server connection next, or lingers; use pg_advisory_xact_lock inside a "
                f"transaction, or a dedicated connection",
                job.id if job else None, [Related(project.pooler, "transaction pooling")])
