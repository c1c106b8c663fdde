"""3xx: the lock's scope is smaller than the job's."""
from __future__ import annotations

from ..model import Mount, Related, Severity, message, prose
from . import Rule
from .common import FactRule, in_test_code, locks_with_jobs
from .overlap import RUNNER_GUARDS

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
    sources = ("cron", "systemd", "k8s", "compose", "ansible", "python", "php")

    def check(self, project):
        for job in project.runnable_jobs:
            copies = job.replicas
            if copies is None or copies.count <= 1:
                continue
            if job.source in ("laravel", "symfony"):
                yield from self._task(job, copies)
                continue
            locks = job.guard_locks
            if any(lock.scope == "cluster" for lock in locks):
                continue
            if copies.one_host:
                continue  # processes of one host (supervisor's numprocs) share its locks
            # (the runner's own wait is not a lock a second copy could share: JOB101's scope)
            guards = [g for g in job.guards if g.kind not in RUNNER_GUARDS]
            guard = guards[0] if guards else (locks[0] if locks else None)
            if guard is None:
                continue  # no lock at all: JOB101/JOB105 say so
            mount = mount_of(guard.path, job.mounts)
            if mount is not None and mount.kind in ("shared", "network"):
                continue  # one lock file for every copy (JOB302 judges a network one)
            where = message(" on {mount}", mount=prose(mount.what)) \
                if mount is not None and mount.kind == "local" else prose("")
            if job.source in QUEUED_SOURCES:
                why = message("its runs are queued to workers that run in several copies "
                              "({copies}): a run that overlaps the next lands on another host",
                              copies=prose(copies.note))
            else:
                why = message("`{schedule}` runs in several copies ({copies}): every copy "
                              "starts its own run", schedule=job.schedule.text,
                              copies=prose(copies.note))
            yield self.finding(
                guard.span,
                message("{kind}{where} only keeps runs apart on one host, but {why}; use a "
                        "cluster lock (Redis, a database advisory lock) or run the schedule "
                        "once", kind=guard.kind, where=where, why=why),
                (job, copies, guard, mount), job.id, [Related(copies.evidence, copies.note),
                         Related(job.span, "scheduled here")])


    def _task(self, job, copies):
        """A framework scheduler's task runs once per firing only under a claim in a store
        every copy shares: Laravel's ``onOneServer()``, a Symfony schedule's ``->lock()``;
        an overlap mutex (``withoutOverlapping()``) keeps out a copy that starts while a run
        is going, not one that starts after it ends."""
        claim = job.one_per_firing
        if claim is not None and (claim.scope == "cluster" or
                                  (claim.scope == "host" and copies.one_host)):
            return  # (supervisor's numprocs: the copies share the host, and its lock)
        laravel = job.source == "laravel"
        if claim is None:
            why = message("has no {name}: each of the scheduler's copies ({copies}) runs it at "
                          "every firing", copies=prose(copies.note),
                          name=prose("`onOneServer()`" if laravel else
                                     "lock on its schedule (`->lock()`)"))
        else:
            why = message("claims each firing with {name} in a store each copy has its own of "
                          "({copies}), so every copy still runs it", copies=prose(copies.note),
                          name=prose("`onOneServer()`" if laravel else
                                     "a lock on its schedule"))
        remedy = prose("`onOneServer()` with a shared cache store (redis, database, memcached)"
                       if laravel else "a lock from a shared store (Redis, a database) on the "
                                       "schedule")
        yield self.finding(
            job.span,
            message("`{schedule}` task {why}; use {remedy}", schedule=job.schedule.text, why=why,
                    remedy=remedy),
            (job, copies, claim), job.id, [Related(copies.evidence, copies.note)])


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
            message("the {kind} lock file {path} is on {mount}: whether it excludes anything "
                    "depends on the mount (NFS turns it into lockd byte-range locks; other "
                    "network filesystems ignore it or lock per client), and a stuck server "
                    "blocks the job; keep lock files on local disk and use a cluster lock "
                    "across hosts", kind=lock.kind, path=str(lock.path), mount=prose(mount.what)),
            (lock, mount), job_id, [Related(mount.span, f"{mount.path} is {mount.what}")])
        return True


class LockKeyPerHost(FactRule):
    id = "JOB304"
    name = "lock-key-per-host"
    severity = Severity.ERROR
    summary = "A cluster lock whose key differs per host or per run, so nothing is excluded."
    sources = ("python",)
    fact_kind = "lock-key-per-host"

    def message(self, fact):
        return message("the key of this {kind} lock includes {origin}: each host (or run) "
                       "takes its own lock and none exclude each other; key it on the work "
                       "(the job's name, the shard, the period)",
                       kind=fact.lock.kind if fact.lock else "", origin=fact.detail)


class SessionLockThroughPooler(Rule):
    id = "JOB303"
    name = "session-lock-through-pooler"
    severity = Severity.ERROR
    summary = "A session-level advisory lock on connections pooled per transaction."
    sources = ("python", "php")

    def check(self, project):
        for lock, job in locks_with_jobs(project):
            if not lock.session:
                continue
            if project.pooler is not None:
                yield self.finding(
                    lock.span,
                    message("{api} is a session-level lock, but connections go through a "
                            "transaction-pooling PgBouncer: the lock belongs to whichever "
                            "client gets the server connection next, or lingers; use "
                            "pg_advisory_xact_lock inside a transaction, or a dedicated "
                            "connection", api=str(lock.api)),
                    (lock, job, project.pooler), job.id if job else None,
                    [Related(project.pooler.span, "transaction pooling")])
            elif lock.pooled is not None and job is not None and job.source in LONG_LIVED:
                yield self.finding(
                    lock.span,
                    message("{api} is a session-level lock on a pooled connection that goes "
                            "back to the pool with the lock held: the {source} process keeps "
                            "the pool, so the lock lingers on an idle connection and later "
                            "runs that get another connection find it taken; unlock before "
                            "the block ends, or use pg_advisory_xact_lock inside a transaction",
                            api=str(lock.api), source=job.source),
                    (lock, job), job.id, [Related(lock.pooled, "connection checked out of the pool"),
                             Related(job.span, "scheduled here")])
