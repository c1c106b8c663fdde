"""2xx: the lock exists but does not protect."""
from __future__ import annotations

import math

from ..model import Job, Lock, Message, Related, Severity, Span, TextEdit, message, prose
from ..timespec import format_duration
from . import Rule
from .common import FactRule, facts_with_jobs, job_id, locks_with_jobs, related_job
from .remedies import ttl_edits

#: locks whose mere existence means "locked": a crash leaves them behind
FILE_LOCKS = ("lock-file", "lock-dir", "pid-file", "soft-filelock", "lockfile")
#: keys set only if absent (``cache.add``, ``SET NX``): held until deleted or expired
KEY_MARKERS = ("cache-key", "redis-key")
#: locks that can wait for their holder, and so can make runs queue up
WAITING_KINDS = ("flock", "lockf", "filelock", "fasteners", "lockfile", "pid-file", "redis-lock",
                 "python-redis-lock", "pg-advisory", "mysql-get-lock", "soft-filelock",
                 "portalocker", "cache-lock", "symfony-lock")


def lock_name(lock: Lock) -> str:
    what = lock.path or lock.key
    # a framework's lock is named by the call that takes it: ``withoutOverlapping()``
    kind = lock.api if lock.api and lock.api.endswith("()") else lock.kind
    return f"{kind} lock {what}" if what else f"{kind} lock"


def interval_ttl(lock: Lock, job: Job | None, limit: float,
                 was: float | None = None) -> tuple[TextEdit, ...]:
    """Edits giving a lock taken right here (not through a project abstraction, whose
    other uses would change too) a TTL of one interval of its job: a crashed run's lock
    is gone by the next firing. None when that would be too short for the job's own time
    limit, or at least ``lock-expiry-max``."""
    interval = job.schedule.min_interval_seconds if job is not None else None
    bound = job.runtime_bound_seconds if job is not None else None
    if lock.ttl_slot is None or lock.taken_from is not None or not interval or \
            interval >= limit or (bound is not None and bound > interval):
        return ()
    why = f"TTL: one {format_duration(interval)} interval of the job" + (
        f" (was {format_duration(was)})" if was else "")
    return ttl_edits(lock.ttl_slot, interval, why)


def held_for(lock: Lock) -> Message:
    """How long a crash leaves the lock held."""
    if lock.ttl_seconds and lock.ttl_seconds > 0:
        return message("until its {ttl} TTL expires", ttl=format_duration(lock.ttl_seconds))
    if lock.stale_handling in ("pid-check", "age-check"):
        return prose("until the next run's stale check clears it")
    return prose("forever (no later run starts)")


class ExistsCheckLock(Rule):
    id = "JOB201"
    name = "exists-check-lock"
    severity = Severity.ERROR
    summary = "A lock taken by testing that a file exists and then creating it."
    sources = ("cron", "python", "php")

    def check(self, project):
        # one finding per test (and job): the same test can come before two creations of
        # the file (``fopen``, then ``file_put_contents``)
        tested: set[tuple[Span, str | None]] = set()
        for lock, job in locks_with_jobs(project):
            if lock.existence_test is None or \
                    (lock.existence_test, job_id(job)) in tested:
                continue
            if lock.kind == "process-check" or lock.kind in FILE_LOCKS and not lock.atomic:
                tested.add((lock.existence_test, job_id(job)))
            if lock.kind == "process-check":
                yield self.finding(
                    lock.existence_test,
                    message("`{api}` looks for a running copy, then the job starts: two runs "
                            "started together can both find none and both proceed; take a "
                            "lock instead (`flock -n`)", api=lock.api or "pgrep"),
                    (lock, job), job_id(job), related_job(job))
                continue
            if lock.kind in FILE_LOCKS and not lock.atomic:
                yield self.finding(
                    lock.existence_test,
                    message("lock file {path} is tested, then created in a separate step: two "
                            "runs can both see it absent and both proceed", path=lock.path or ""),
                    (lock, job), job_id(job),
                    [Related(lock.taken_from or lock.span, "created here"), *related_job(job)])


class StaleLockUnhandled(Rule):
    id = "JOB202"
    name = "stale-lock-unhandled"
    severity = Severity.ERROR
    summary = "A lock file whose existence means 'locked', with no stale-lock handling."
    sources = ("cron", "python", "php")

    def check(self, project):
        for lock, job in locks_with_jobs(project):
            if lock.kind not in FILE_LOCKS or lock.stale_handling != "none":
                continue
            boot_cleared = (lock.path or "").startswith(("/run/", "/var/run/"))
            if boot_cleared and job is not None and not job.schedule.recurring:
                continue
            until = prose("until the next reboot" if boot_cleared else "ever again")
            every = job.schedule.min_interval_seconds if job is not None else None
            skipped = message(" (a `{schedule}` job: every {every})", schedule=job.schedule.text,
                              every=format_duration(every)) if job is not None and every \
                else prose("")
            yield self.finding(
                lock.span,
                message("a crash, OOM kill or reboot leaves {path} behind and no later run "
                        "starts {until}{skipped}: nothing checks the stored PID or the file's age",
                        path=lock.path or prose("the lock file"), until=until, skipped=skipped),
                (lock, job), job_id(job), related_job(job))


class ReleaseNotGuaranteed(Rule):
    id = "JOB203"
    name = "release-not-guaranteed"
    severity = Severity.WARNING
    summary = "A lock that outlives the process is released by a call an exception skips."
    sources = ("python", "php")
    #: unsafe when the code between leaves by a return, break or raise, which now releases
    fix = "safe"

    def check(self, project):
        for lock, job in locks_with_jobs(project):
            if lock.release != "plain" or lock.release_span is None or not lock.outlives_process:
                continue
            fix = lock.release_fix if lock.taken_from is None else None
            yield self.finding(
                lock.release_span,
                message("{lock} is released by a plain call: an exception before it leaves the "
                        "lock held {held}; release it in `finally` or use `with`",
                        lock=lock_name(lock), held=held_for(lock)),
                (lock, job), job_id(job), [Related(lock.span, "acquired here"), *related_job(job)],
                edits=fix.edits if fix is not None else (),
                fix_message="release it in `finally`", unsafe=fix is not None and not fix.straight)


class ExitInLockScope(Rule):
    id = "JOB204"
    name = "exit-in-lock-scope"
    severity = Severity.ERROR
    summary = "A process exit inside a lock scope skips the release."
    sources = ("python", "php")
    fix = "unsafe"  # the exit now releases the lock first

    def check(self, project):
        for fact, job in facts_with_jobs(project, "exit-in-scope"):
            lock = fact.lock
            assert lock is not None
            fix = lock.release_fix if lock.taken_from is None else None
            yield self.finding(
                fact.span,
                message("{construct} inside the scope of {lock} skips its release: the lock "
                        "stays held {held}", construct=fact.detail, lock=lock_name(lock),
                        held=held_for(lock)),
                (fact, lock, job), job_id(job),
                [Related(lock.span, "acquired here"), *related_job(job)],
                edits=fix.edits if fix is not None else (),
                fix_message="release it in `finally`, which the exit runs")


class LockExpiryTooLong(Rule):
    id = "JOB205"
    name = "lock-expiry-too-long"
    severity = Severity.WARNING
    summary = "An expiring lock whose TTL is longer than a day, or than the job's interval."
    sources = ("python", "php")
    fix = "unsafe"  # a run longer than one interval loses the lock

    def check(self, project):
        limit = self.settings.lock_expiry_max
        for lock, job in locks_with_jobs(project):
            ttl = lock.ttl_seconds
            if not ttl or ttl <= 0 or lock.renewed or lock.scope == "process":
                continue  # (a process's own lock keeps nothing out: its expiry is moot)
            interval = job.schedule.min_interval_seconds if job is not None else None
            if ttl < limit and not (interval and ttl > interval):
                continue
            # a key no run deletes is held for its whole TTL by every run, crashed or not
            never_deleted = lock.kind in KEY_MARKERS and lock.release == "none"
            if interval and ttl > interval:
                skipped = math.ceil(ttl / interval) - 1
                text = message("{lock} expires after {ttl}, longer than the job's {interval} "
                               "interval: {who} blocks the next {skipped} run{plural}",
                               lock=lock_name(lock), ttl=format_duration(ttl),
                               interval=format_duration(interval), skipped=skipped,
                               plural=prose("s" if skipped != 1 else ""),
                               who=prose("nothing deletes it, so every run" if never_deleted
                                         else "one crashed run"))
            elif never_deleted:
                continue  # a once-a-period marker (a rate limit): a crash changes nothing
            else:
                text = message("{lock} expires after {ttl}, at least {limit}: one crashed run "
                               "blocks the job that long", lock=lock_name(lock),
                               ttl=format_duration(ttl), limit=format_duration(limit))
            yield self.finding(lock.ttl_span or lock.span, text, (lock, job), job_id(job),
                               related_job(job), edits=interval_ttl(lock, job, limit, ttl),
                               fix_message="shorten the TTL to one interval of the job")


class LockWithoutExpiry(Rule):
    id = "JOB206"
    name = "lock-without-expiry"
    severity = Severity.ERROR
    summary = "A Redis or cache lock with no time-to-live: one crash holds it forever."
    sources = ("python", "php")
    fix = "unsafe"  # a run longer than one interval loses the lock

    def check(self, project):
        for lock, job in locks_with_jobs(project):
            if lock.stale_handling == "ttl" and lock.ttl_seconds is None:
                remedy = message("give it a {parameter}",
                                 parameter="ttl" if lock.kind == "huey-lock" else "timeout")
            elif lock.kind == "db-claim" and lock.stale_handling == "none" and \
                    lock.release in ("plain", "finally", "with", "atexit"):
                # a lock row the job sets and resets: nothing lets an old claim go
                remedy = prose("let an old claim be taken over (a claimed-at column compared to "
                               "a limit)")
            else:
                continue
            yield self.finding(
                lock.ttl_span or lock.span,
                message("{lock} has no expiry: a crash or kill while it is held blocks every "
                        "later run forever; {remedy} a little above the job's longest run",
                        lock=lock_name(lock), remedy=remedy),
                (lock, job), job_id(job), related_job(job),
                edits=interval_ttl(lock, job, self.settings.lock_expiry_max)
                if lock.stale_handling == "ttl" else (),
                fix_message="give the lock a TTL of one interval of the job")


class LockExpiresMidRun(Rule):
    id = "JOB207"
    name = "lock-expires-mid-run"
    severity = Severity.WARNING
    summary = "A lock TTL shorter than the job's own runtime bound, with no renewal."
    sources = ("python",)

    def check(self, project):
        for job in project.runnable_jobs:
            bound = job.runtime_bound_seconds
            if not bound:
                continue
            for lock in job.all_locks:
                ttl = lock.ttl_seconds
                if ttl and 0 < ttl < bound and not lock.renewed:
                    yield self.finding(
                        lock.ttl_span or lock.span,
                        message("{lock} expires after {ttl} but the job may run {bound}: a "
                                "slow run loses the lock and the next run starts beside it",
                                lock=lock_name(lock), ttl=format_duration(ttl),
                                bound=format_duration(bound)),
                        (lock, job), job.id,
                        [Related(job.runtime_bound_span or job.span, "runtime bound set here")])


class LockRetryStorm(FactRule):
    id = "JOB208"
    name = "lock-retry-storm"
    severity = Severity.WARNING
    summary = "A failed try-lock retried at short intervals, or a spin loop with no deadline."
    sources = ("python", "php")
    fact_kind = "retry-on-lock"

    def message(self, fact):
        return message("a busy lock is retried by {construct}: failing to get the lock is "
                       "backpressure, not an error; skip this run and let the schedule try "
                       "again", construct=fact.detail)


class BlockingLockInAsync(FactRule):
    id = "JOB209"
    name = "blocking-lock-in-async"
    severity = Severity.WARNING
    summary = "A blocking lock acquisition inside `async def` stalls the event loop."
    sources = ("python",)
    fact_kind = "blocking-in-async"

    def message(self, fact):
        return message("{construct} blocks inside `async def`: the event loop and every task "
                       "on it stall while it waits; use an async lock or `asyncio.to_thread`",
                       construct=fact.detail)


class LockHeldAcrossYield(FactRule):
    id = "JOB210"
    name = "lock-held-across-yield"
    severity = Severity.WARNING
    summary = "A generator yields while holding a lock."
    sources = ("python",)
    fact_kind = "yield-in-scope"

    def message(self, fact):
        return message("`yield` inside the scope of a {lock}: the lock stays held while the "
                       "consumer runs, and until the generator is collected if it is abandoned",
                       lock=fact.detail)


class ForkInheritsLock(FactRule):
    id = "JOB211"
    name = "fork-inherits-lock"
    severity = Severity.WARNING
    summary = "A child process started while a flock is held inherits the lock."
    sources = ("python",)
    fact_kind = "fork-in-scope"

    def message(self, fact):
        assert fact.lock is not None
        return message("{construct} while {lock} is held: the child inherits the open file "
                       "and keeps the lock after the parent releases it or dies",
                       construct=fact.detail, lock=lock_name(fact.lock))


class UnlinkAfterUnlock(FactRule):
    id = "JOB212"
    name = "unlink-after-unlock"
    severity = Severity.WARNING
    summary = "A flock lock file is removed around its release."
    sources = ("python",)
    fact_kind = "unlink-flock"

    def message(self, fact):
        return message("removing the flock file {construct}: a waiter keeps a lock on the "
                       "deleted file while a newcomer locks a fresh one, so two runs hold "
                       "\"the\" lock", construct=fact.detail)


class LockHandleDropped(FactRule):
    id = "JOB213"
    name = "lock-handle-dropped"
    severity = Severity.ERROR
    summary = "The lock's file object is not kept, so the lock is released at once."
    sources = ("python",)
    fact_kind = "handle-dropped"

    def message(self, fact):
        return message("the lock is released as soon as it is taken: {construct}, and "
                       "closing the file drops the lock", construct=fact.detail)


class InProcessLockForJobs(Rule):
    id = "JOB214"
    name = "in-process-lock-for-jobs"
    severity = Severity.ERROR
    summary = "A threading/multiprocessing/asyncio lock used as the guard of a scheduled process."
    sources = ("python",)

    def check(self, project):
        seen = set()
        for job in project.runnable_jobs:
            if job.source not in ("cron", "systemd", "k8s"):
                continue
            for entry in job.entries:
                if any(f.kind == "starts-threads" for f in entry.facts):
                    continue  # the lock may guard threads inside this process
                for lock in entry.locks:
                    if lock.scope != "process" or lock.span in seen:
                        continue
                    seen.add(lock.span)
                    kind = "a key in a cache each process keeps for itself (the settings' " \
                        "backend for its alias)" if lock.kind == "cache-key" else lock.kind
                    yield self.finding(
                        lock.span,
                        message("{kind} guards a job that {source} starts as its own process: "
                                "every run has its own lock, so nothing keeps two runs apart",
                                kind=kind, source=job.source),
                        (lock, job), job.id, [Related(job.span, "scheduled here")])


class LockResultIgnored(FactRule):
    id = "JOB215"
    name = "lock-result-ignored"
    severity = Severity.ERROR
    summary = "A try-lock whose result is not checked before the work."
    sources = ("python", "php")
    fact_kind = "unchecked-try-lock"

    def message(self, fact):
        return message("the result of {call} is ignored: when another run holds the lock "
                       "this one carries on anyway", call=fact.detail)
