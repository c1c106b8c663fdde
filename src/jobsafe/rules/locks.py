"""2xx: the lock exists but does not protect."""
from __future__ import annotations

from ..model import Job, Lock, Related, Severity
from ..schedule import format_duration
from . import Rule

_FILE_LOCKS = ("lock-file", "lock-dir", "pid-file")


def locks_with_jobs(project) -> list[tuple[Lock, Job]]:
    """Each lock once (a script run by several jobs holds one lock), with its first job."""
    seen: dict = {}
    for job in sorted(project.jobs, key=lambda j: j.span):
        for lock in job.all_locks:
            seen.setdefault(lock.span, (lock, job))
    return list(seen.values())


class ExistsCheckLock(Rule):
    id = "JOB201"
    name = "exists-check-lock"
    severity = Severity.ERROR
    summary = "A lock taken by testing that a file exists and then creating it."
    sources = ("cron", "python")

    def check(self, project):
        for lock, job in locks_with_jobs(project):
            if lock.kind in _FILE_LOCKS and lock.existence_test is not None and not lock.atomic:
                yield self.finding(
                    lock.existence_test,
                    f"lock file {lock.path} is tested, then created in a separate step: two runs "
                    f"can both see it absent and both proceed",
                    job.id, [Related(lock.span, "created here"), Related(job.span, "scheduled here")])


class StaleLockUnhandled(Rule):
    id = "JOB202"
    name = "stale-lock-unhandled"
    severity = Severity.ERROR
    summary = "A lock file whose existence means 'locked', with no stale-lock handling."
    sources = ("cron", "python")

    def check(self, project):
        for lock, job in locks_with_jobs(project):
            if lock.kind not in _FILE_LOCKS or lock.stale_handling != "none":
                continue
            boot_cleared = (lock.path or "").startswith(("/run/", "/var/run/"))
            if boot_cleared and not job.schedule.recurring:
                continue
            until = "until the next reboot" if boot_cleared else "ever again"
            every = job.schedule.min_interval_seconds
            skipped = f" (a `{job.schedule.text}` job: every {format_duration(every)})" if every else ""
            yield self.finding(
                lock.span,
                f"a crash, OOM kill or reboot leaves {lock.path} behind and no later run "
                f"starts {until}{skipped}: nothing checks the stored PID or the file's age",
                job.id, [Related(job.span, "scheduled here")])
