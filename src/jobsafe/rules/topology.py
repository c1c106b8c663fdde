"""3xx: the lock's scope is smaller than the job's."""
from __future__ import annotations

from ..model import Mount, Related, Severity
from . import Rule
from .common import FactRule, in_test_code, locks_with_jobs

#: locks the kernel keeps on an open file (flock/fcntl), as opposed to O_EXCL lock files
#: schedulers whose jobs run in a process that outlives the run (and keeps its pools)
LONG_LIVED = ("celery", "huey", "apscheduler", "schedule")
#: schedulers that send each run to a pool of workers rather than running it themselves
QUEUED_SOURCES = ("celery", "huey")
KERNEL_FILE_LOCKS = ("flock", "lockf", "filelock", "portalocker", "fasteners", "lckdo")


def mount_of(path: str | None, mounts) -> Mount | None:
    """The innermost mount that holds ``path``."""
    holding = [m for m in mounts if m.holds(path)]
    return max(holding, key=lambda m: len(m.path)) if holding else None


class HostLocalLockMultiNode(Rule):
    id = "JOB301"
    name = "host-local-lock-multi-node"
    severity = Severity.ERROR
    summary = "A job guarded only by a host-local lock, deployed on more than one node."
    sources = ("cron", "systemd", "k8s", "compose", "ansible", "python")

    def check(self, project):
        for job in project.runnable_jobs:
            copies = job.replicas
            if copies is None or copies.count <= 1:
                continue
            locks = job.guard_locks
            if any(lock.scope == "cluster" for lock in locks):
                continue
            guard = job.guards[0] if job.guards else (locks[0] if locks else None)
            if guard is None:
                continue  # no lock at all: JOB101/JOB105 say so
            mount = mount_of(guard.path, job.mounts)
            if mount is not None and mount.kind in ("shared", "network"):
                continue  # one lock file for every copy (JOB302 judges a network one)
            where = f" on {mount.what}" if mount is not None and mount.kind == "local" else ""
            if job.source in QUEUED_SOURCES:
                why = (f"its runs are queued to workers that run in several copies "
                       f"({copies.note}): a run that overlaps the next lands on another "
                       f"host")
            else:
                why = (f"`{job.schedule.text}` runs in several copies ({copies.note}): "
                       f"every copy starts its own run")
            yield self.finding(
                guard.span,
                f"{guard.kind}{where} only keeps runs apart on one host, but {why}; use a "
                f"cluster lock (Redis, a database advisory lock) or run the schedule once",
                job.id, [Related(copies.evidence, copies.note),
                         Related(job.span, "scheduled here")])


class LockOnNetworkFs(Rule):
    id = "JOB302"
    name = "lock-on-network-fs"
    severity = Severity.WARNING
    summary = "A flock/lockf lock file on a network filesystem."
    sources = ("cron", "systemd", "k8s", "compose", "ansible", "python")

    def check(self, project):
        seen = set()
        for job in project.runnable_jobs:
            mounts = job.mounts + tuple(project.host_mounts)
            for lock in job.guards + job.all_locks:
                if lock.span not in seen and (yield from self._check(lock, mounts, job.id)):
                    seen.add(lock.span)
        for lock in sorted(project.code_locks, key=lambda lock: lock.span):
            if lock.span not in seen and not in_test_code(project, lock.span.path):
                yield from self._check(lock, project.host_mounts, None)

    def _check(self, lock, mounts, job_id):
        if lock.kind not in KERNEL_FILE_LOCKS:
            return False
        mount = mount_of(lock.path, mounts)
        if mount is None or mount.kind != "network":
            return False
        yield self.finding(
            lock.span,
            f"the {lock.kind} lock file {lock.path} is on {mount.what}: whether it excludes "
            f"anything depends on the mount (NFS turns it into lockd byte-range locks; other "
            f"network filesystems ignore it or lock per client), and a stuck server blocks the "
            f"job; keep lock files on local disk and use a cluster lock across hosts",
            job_id, [Related(mount.span, f"{mount.path} is {mount.what}")])
        return True


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
        for lock, job in locks_with_jobs(project):
            if not lock.session:
                continue
            if project.pooler is not None:
                yield self.finding(
                    lock.span,
                    f"{lock.api} is a session-level lock, but connections go through a "
                    f"transaction-pooling PgBouncer: the lock belongs to whichever client gets "
                    f"the server connection next, or lingers; use pg_advisory_xact_lock inside a "
                    f"transaction, or a dedicated connection",
                    job.id if job else None, [Related(project.pooler, "transaction pooling")])
            elif lock.pooled is not None and job is not None and job.source in LONG_LIVED:
                yield self.finding(
                    lock.span,
                    f"{lock.api} is a session-level lock on a pooled connection that goes back "
                    f"to the pool with the lock held: the {job.source} process keeps the pool, "
                    f"so the lock lingers on an idle connection and later runs that get another "
                    f"connection find it taken; unlock before the block ends, or use "
                    f"pg_advisory_xact_lock inside a transaction",
                    job.id, [Related(lock.pooled, "connection checked out of the pool"),
                             Related(job.span, "scheduled here")])
