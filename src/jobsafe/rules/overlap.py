"""1xx: a scheduled job can run twice at the same time (or never again)."""
from __future__ import annotations

import re
from itertools import combinations

from .. import supercronic_cron
from ..model import Job, Message, Related, Severity, Span, TextEdit, message, prose
from ..schedule import coincide, dst_minutes, firings_of
from ..timespec import format_duration
from . import Rule
from .common import in_test_code
from .locks import WAITING_KINDS
from .remedies import (
    coreutils_duration,
    delete_line,
    systemd_duration,
    wrap_crontab_command,
    yaml_keys,
)

#: folder names that mark environment variants of the same deployment
ENV_FOLDERS = {"dev", "develop", "development", "test", "testing", "qa", "uat", "stage",
               "staging", "preprod", "prod", "production", "live", "sandbox", "local", "ci",
               "demo", "canary", "overlays", "environments", "envs"}
#: Laravel tasks that fire at most this far apart need an overlap guard (JOB101): a run of
#: a daily task that reaches the next day is not the overlap users meet
LARAVEL_SHORT_INTERVAL = 3600
#: folder names of documentation: an example crontab is not installed beside the real one
EXAMPLE_FOLDERS = {"doc", "docs", "example", "examples", "sample", "samples"}


def interval_text(job: Job) -> str:
    return format_duration(job.schedule.min_interval_seconds)


def work_text(job: Job) -> str:
    target = next((t for t in job.targets if t.project_code), None)
    if target is not None and target.entry is not None:
        entry = target.entry
        return f"{entry.path}:{entry.function}()" if entry.kind == "function" else entry.path
    if target is not None:
        return " ".join(target.argv)[:60]
    return job.command[:60]


#: guards that are the cron runner itself (supercronic waits for a job's last run)
RUNNER_GUARDS = ("supercronic", "yacron", "ofelia")


def guarded(job: Job) -> bool:
    """Whether anything keeps a second copy out: a schedule guard or a lock in entry code."""
    return bool(job.guards) or any(lock.scope in ("host", "cluster") for lock in job.guard_locks)


def scheduled_here(job: Job) -> Related:
    return Related(job.span, "scheduled here")


def _lock_names(project) -> dict[str, set[str]]:
    """The lock files each crontab's jobs already use, by file: a new one must differ."""
    names: dict[str, set[str]] = {}
    for job in project.jobs:
        for guard in job.guards:
            if guard.path:
                names.setdefault(job.span.path, set()).add(guard.path)
    return names


def _job_name(job: Job) -> str:
    """A lock-file name for a job: its entry point's name (``charge`` for bin/charge.py)."""
    target = next((t for t in job.targets if t.project_code), None) or \
        next(iter(job.targets), None)
    path = target.entry.path if target is not None and target.entry is not None else (
        target.argv[0] if target is not None and target.argv else job.command.split()[0])
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return re.sub(r"[^A-Za-z0-9_-]+", "-", stem).strip("-") or "job"


class UnguardedJob(Rule):
    id = "JOB101"
    name = "unguarded-job"
    severity = Severity.WARNING
    summary = "A recurring cron job runs project code with no overlap guard and no lock."
    sources = ("cron", "php")
    fix = "unsafe"  # a run that finds the previous one still going is skipped, a hung one ends

    def check(self, project):
        taken = _lock_names(project)
        for job in project.runnable_jobs:
            if job.source == "laravel":
                yield from self._task(job)
                continue
            if job.source != "cron" or not job.schedule.recurring or guarded(job):
                continue
            work = [t for t in job.targets if t.role != "dispatch"]
            if any(t.entry.mentions_lock for t in work if t.entry and t.role == "run"):
                continue
            if not any(t.project_code for t in work) and not (self.settings.strict and work):
                continue
            every = interval_text(job)
            # project code that is not in the tree: no lock in it could be seen
            unseen = all(t.entry is None for t in work if t.project_code)
            yield self.finding(
                job.span,
                message("`{schedule}` job {work} has no overlap guard: a run longer than "
                        "{every} starts a second copy beside it{unseen}",
                        schedule=job.schedule.text, work=work_text(job), every=every,
                        unseen=prose(" (its entry code was not found in the tree or is in a "
                                     "language jobsafe does not read: a lock taken there is "
                                     "not seen)" if unseen else "")),
                (job,), job.id, edits=self._guard(job, taken.setdefault(job.span.path, set())),
                fix_message="run it under `flock -n` (skip while the last run holds the lock) "
                            "and `timeout` (end a run after one interval)")

    def _task(self, job: Job):
        """A Laravel task without ``withoutOverlapping()``: the next minute's
        ``schedule:run`` starts it again while a run is still going. Only tasks that fire
        often enough for a slow run to reach the next firing."""
        interval = job.schedule.min_interval_seconds
        if not job.schedule.recurring or guarded(job) or not interval or \
                interval > LARAVEL_SHORT_INTERVAL or not job.runs_project_code:
            return
        if job.runtime_bound_seconds is not None and job.runtime_bound_seconds < interval:
            return  # a run is ended before the next firing (a queued job's $timeout)
        local = next((lock for lock in job.locks if lock.scope == "process"), None)
        if local is not None:
            text = message("`{schedule}` task {work} keeps its `withoutOverlapping()` mutex in "
                           "a cache store each `schedule:run` process has its own of (the "
                           "`array` store): nothing keeps a second run out; use a shared store",
                           schedule=job.schedule.text, work=work_text(job))
        elif "queued" in dict(job.options):
            text = message("`{schedule}` task queues {work}, which has no `ShouldBeUnique` or "
                           "`WithoutOverlapping` middleware: a run longer than {every} overlaps "
                           "the next one on another worker{note}", schedule=job.schedule.text,
                           work=work_text(job), every=interval_text(job),
                           note=prose(" (`withoutOverlapping()` on the task covers only the "
                                      "dispatch)" if "withoutOverlapping" in
                                      dict(job.options) else ""))
        else:
            text = message("`{schedule}` task {work} has no `withoutOverlapping()`: a run "
                           "longer than {every} is started again beside itself by the next "
                           "`schedule:run`", schedule=job.schedule.text, work=work_text(job),
                           every=interval_text(job))
        yield self.finding(job.span, text, (job,), job.id)

    @staticmethod
    def _guard(job: Job, taken: set[str]) -> tuple[TextEdit, ...]:
        """``flock -n /var/lock/<job>.lock timeout <interval>`` in front of the command; none
        for a job that runs on several hosts (a host's lock keeps nothing apart there)."""
        interval = job.schedule.min_interval_seconds
        if job.command_at is None or not interval or (job.replicas and job.replicas.count > 1):
            return ()
        name, n = _job_name(job), 1
        while f"/var/lock/{name}{'' if n == 1 else f'-{n}'}.lock" in taken:
            n += 1
        path = f"/var/lock/{name}{'' if n == 1 else f'-{n}'}.lock"
        bound = "" if job.runtime_bound_seconds is not None else \
            f" timeout {coreutils_duration(interval)}"  # (a job's own timeout stays)
        edits = wrap_crontab_command(job.command, job.command_at, f"flock -n {path}{bound}")
        if edits:
            taken.add(path)
        return edits


class BlockingLockWait(Rule):
    id = "JOB102"
    name = "blocking-lock-wait"
    severity = Severity.WARNING
    summary = "The overlap guard waits for the lock instead of skipping, so runs pile up."
    sources = ("cron", "python", "php")
    fix = "unsafe"  # -n: a run that finds the lock taken is skipped instead of queued

    def check(self, project):
        seen = set()
        for job in project.runnable_jobs:
            if not job.schedule.recurring:
                continue
            interval = job.schedule.min_interval_seconds
            for guard in job.guards:
                if not _waits_too_long(guard.blocking, guard.wait_seconds, interval):
                    continue
                edits = (TextEdit(guard.option_at, " -n"),) if guard.kind == "flock" and \
                    guard.option_at and guard.wait_seconds is None else ()
                yield self.finding(
                    job.span,
                    message("`{schedule}` job waits for its {kind} lock {wait} instead of "
                            "skipping: slow runs queue up and then run back to back",
                            schedule=job.schedule.text, kind=guard.kind,
                            wait=_wait_text(guard.wait_seconds)),
                    (job,), job.id, [Related(guard.span, "the waiting guard")], edits,
                    "add -n: skip the run while the previous one holds the lock")
            for lock in job.all_locks:
                # a time limit on the whole job also ends a wait inside it
                wait = min((w for w in (lock.wait_seconds, job.runtime_bound_seconds)
                            if w is not None), default=None)
                if lock.kind not in WAITING_KINDS or lock.span in seen or \
                        not _waits_too_long(lock.blocking, wait, interval):
                    continue
                seen.add(lock.span)
                skip = lock.skip_fix if lock.taken_from is None else ()
                yield self.finding(
                    lock.span,
                    message("{path} waits for its {kind} lock {wait}: runs of `{schedule}` "
                            "queue up and then run back to back", path=lock.span.path,
                            kind=lock.kind, wait=_wait_text(wait), schedule=job.schedule.text),
                    (lock, job), job.id, [scheduled_here(job)],
                    edits=skip, fix_message="try the lock once and skip the run while another "
                                            "run holds it")


def _waits_too_long(blocking: bool | None, wait: float | None, interval: int | None) -> bool:
    """A blocking wait with no limit, or one at least as long as the schedule's interval."""
    if not blocking:
        return False
    return wait is None or (interval is not None and wait >= interval)


def _wait_text(wait: float | None) -> Message:
    return prose("with no limit") if wait is None else \
        message("up to {wait}", wait=format_duration(wait))


class GuardEscaped(Rule):
    id = "JOB103"
    name = "guard-escaped"
    severity = Severity.ERROR
    summary = "Work is backgrounded inside the guard or unit, so it outlives it."
    sources = ("cron", "systemd")

    def check(self, project):
        for job in project.runnable_jobs:
            if not job.backgrounds or not job.schedule.recurring:
                continue
            first = job.backgrounds[0]
            released = prose("the unit finishes" if job.source == "systemd"
                             else "the guard is released")
            yield self.finding(
                job.span,
                message("`{schedule}` job backgrounds its work (`{how}`): {released} while the "
                        "work goes on, and the next run starts beside it",
                        schedule=job.schedule.text, how=first.how, released=released),
                (job,), job.id, [Related(b.span, f"work leaves here ({b.how})") for b in job.backgrounds])


class NoRuntimeBound(Rule):
    id = "JOB104"
    name = "no-runtime-bound"
    severity = Severity.WARNING
    summary = "A guarded job has no bound on its run time: one hung run blocks every later run."
    sources = ("cron", "systemd", "k8s")
    fix = "unsafe"  # a run longer than the interval is ended

    def check(self, project):
        for job in project.runnable_jobs:
            if not job.schedule.recurring or job.runtime_bound_seconds is not None:
                continue
            interval = _time_limit(job)
            if job.source == "cron" and guarded(job):
                if all(g.kind in RUNNER_GUARDS for g in job.guards) and not job.guard_locks \
                        and not job.runs_project_code and not self.settings.strict:
                    continue  # the runner's own wait on a system tool (JOB101's scope)
                # only a guard that a hung run holds for ever; a TTL lock expires (JOB207)
                held = [lock for lock in job.guard_locks
                        if lock.scope in ("host", "cluster") and not lock.expires_by_itself]
                forever = [g.kind for g in job.guards] + [lock.kind for lock in held]
                if not forever:
                    continue
                yield self.finding(
                    job.span,
                    message("`{schedule}` job is guarded by {kind} but has no time limit: one "
                            "hung run {holds} and every later run is skipped, silently",
                            schedule=job.schedule.text, kind=forever[0],
                            holds=prose("keeps the runner from starting it again"
                                        if forever[0] in RUNNER_GUARDS else "holds the lock")),
                    (job, *held[:0 if job.guards else 1]), job.id,
                    edits=wrap_crontab_command(job.command, job.command_at,
                                               f"timeout {coreutils_duration(interval)}")
                    if job.command_at is not None and interval else (),
                    fix_message="end a run after one interval with `timeout`")
            elif job.source == "k8s" and job.k8s is not None:
                if job.k8s.concurrency_policy != "Forbid" or job.k8s.deadline_templated:
                    continue  # without Forbid a hung Job does not block the next (JOB105 instead)
                yield self.finding(
                    job.span,
                    message("CronJob {name} forbids concurrent runs but sets no "
                            "activeDeadlineSeconds: one hung Job blocks every later run, "
                            "silently", name=job.k8s.name),
                    (job,), job.id, [Related(job.k8s.policy_span, "concurrencyPolicy: Forbid")]
                    if job.k8s.policy_span else [], edits=_deadline(job),
                    fix_message="end a Job after one interval with activeDeadlineSeconds")
            elif job.source == "systemd" and job.unit is not None:
                if job.unit.limit_templated:
                    continue  # set when the template is rendered
                key = "TimeoutStartSec" if job.unit.type == "oneshot" else "RuntimeMaxSec"
                if job.unit.type == "oneshot":
                    missing = prose("Type=oneshot has no start timeout by default: set "
                                    "TimeoutStartSec=")
                else:
                    missing = message("Type={type} runs unbounded: set RuntimeMaxSec=",
                                      type=job.unit.type)
                # the job's span is its ExecStart= line: the setting goes right above it
                at = Span(job.span.path, job.span.line, 1, job.span.line, 1)
                yield self.finding(
                    job.span,
                    message("timer-started service has no time limit ({missing}): one hung run "
                            "keeps the unit active and the timer never starts it again",
                            missing=missing),
                    (job,), job.id, [Related(job.unit.timer, "timer")],
                    edits=(TextEdit(at, f"{key}={systemd_duration(interval)}\n"),)
                    if interval else (),
                    fix_message=f"end a run after one interval with {key}=")


def _time_limit(job: Job) -> int | None:
    """The time limit a fix gives a job: one interval, or less when a lock of the job
    expires sooner (a run must not outlive its lock: JOB207)."""
    interval = job.schedule.min_interval_seconds
    ttls = [int(lock.ttl_seconds) for lock in job.all_locks
            if lock.ttl_seconds and lock.ttl_seconds >= 1 and not lock.renewed]
    return min([interval, *ttls]) if interval else None


def _deadline(job: Job) -> tuple[TextEdit, ...]:
    """``activeDeadlineSeconds: <interval>`` in the CronJob's Job spec."""
    interval = _time_limit(job)
    slot = job.k8s.job_spec_slot if job.k8s is not None else None
    return (yaml_keys(slot, [f"activeDeadlineSeconds: {interval}"]),) if slot and interval \
        else ()


class CronJobAllowsOverlap(Rule):
    id = "JOB105"
    name = "cronjob-allows-overlap"
    severity = Severity.WARNING
    summary = "A Kubernetes CronJob that allows concurrent runs, with no cluster lock in its code."
    sources = ("k8s",)
    fix = "unsafe"  # a Job that runs past the next firing makes the next one wait or skip

    def check(self, project):
        for job in project.runnable_jobs:
            if job.k8s is None or job.k8s.concurrency_policy not in (None, "Allow"):
                continue
            if any(lock.scope == "cluster" for lock in job.guard_locks):
                continue
            if any(t.entry.mentions_lock for t in job.targets if t.entry and t.role == "run"):
                continue
            how = prose("concurrencyPolicy: Allow" if job.k8s.concurrency_policy else
                        "no concurrencyPolicy (the default is Allow)")
            longer = message("longer than {every}", every=interval_text(job)) \
                if job.schedule.min_interval_seconds else prose("past the next firing")
            yield self.finding(
                job.span,
                message("CronJob {name} (`{schedule}`) has {how}: a Job that runs {longer} gets "
                        "a second one started beside it", name=job.k8s.name,
                        schedule=job.schedule.text, how=how, longer=longer),
                (job,), job.id, [Related(job.k8s.policy_span, "concurrencyPolicy")]
                if job.k8s.policy_span else [], edits=self._forbid(job),
                fix_message="forbid concurrent Jobs, and end a Job after one interval")

    @staticmethod
    def _forbid(job: Job) -> tuple[TextEdit, ...]:
        """``concurrencyPolicy: Forbid``, with ``activeDeadlineSeconds`` unless set: Forbid
        alone would let one hung Job block every later run (JOB104)."""
        k8s = job.k8s
        if k8s is None:
            return ()
        if k8s.policy_value is not None:
            policy = TextEdit(k8s.policy_value, "Forbid")
        elif k8s.spec_slot is not None:
            policy = yaml_keys(k8s.spec_slot, ["concurrencyPolicy: Forbid"])
        else:
            return ()
        if k8s.active_deadline_seconds is not None or k8s.deadline_templated:
            return (policy,)
        deadline = _deadline(job)
        return (policy, *deadline) if deadline else ()


class WorkflowScheduleOverlap(Rule):
    id = "JOB108"
    name = "workflow-schedule-overlap"
    severity = Severity.WARNING
    summary = "A scheduled GitHub Actions workflow that changes external state, with no concurrency."
    sources = ("gha",)
    fix = "safe"  # runs queue instead of overlapping; no run is cancelled

    def check(self, project):
        for job in project.runnable_jobs:
            wf = job.workflow
            if wf is None or wf.concurrency or wf.state_change is None:
                continue
            interval = job.schedule.min_interval_seconds
            if wf.max_run_seconds is not None and interval and wf.max_run_seconds < interval:
                continue  # cancelled by its timeouts before the next run starts
            yield self.finding(
                job.span,
                message("scheduled workflow {name} (`{schedule}`) has no `concurrency:` group "
                        "and changes external state ({what}): a slow or queued run overlaps "
                        "the next one", name=repr(wf.name), schedule=job.schedule.text,
                        what=prose(wf.state_what)),
                (job,), job.id, [Related(wf.state_change, "changes external state")],
                edits=(yaml_keys(wf.jobs_slot, ["concurrency:",
                                                "  group: ${{ github.workflow }}",
                                                "  cancel-in-progress: false"]),)
                if wf.jobs_slot is not None else (),
                fix_message="one run of the workflow at a time: a concurrency group named "
                            "after it, queued runs kept")


class SchedulerPerWorker(Rule):
    id = "JOB107"
    name = "scheduler-per-worker"
    severity = Severity.ERROR
    summary = "An in-process scheduler started in an app that runs as several processes."
    sources = ("python", "php", "k8s", "compose")

    def check(self, project):
        for beat in sorted(project.beat_processes, key=lambda b: b.span):
            if beat.how.startswith(("artisan", "messenger")):
                laravel = beat.how.startswith("artisan")
                yield self.finding(
                    beat.span,
                    message("`{how}` runs in several copies ({copies}): each copy runs "
                            "{framework}'s scheduler, so every task without {claim} runs once "
                            "in each copy; run the scheduler in one single-replica process or "
                            "{remedy}", how=beat.how, copies=prose(beat.copies.note),
                            framework="Laravel" if laravel else "Symfony",
                            claim=prose("`onOneServer()`" if laravel else
                                        "a lock on its schedule (`->lock()`)"),
                            remedy=prose("mark the tasks `onOneServer()`" if laravel else
                                         "lock the schedule with a shared store")),
                    (beat.copies,), related=[Related(beat.copies.evidence, beat.copies.note)])
                continue
            yield self.finding(
                beat.span,
                message("`{how}` runs in several copies ({copies}): each copy is a beat "
                        "scheduler, so every periodic task is sent once by each copy; run beat "
                        "as its own single-replica process{instead}", how=beat.how,
                        copies=prose(beat.copies.note),
                        instead=prose(" instead of embedding it with -B"
                                      if beat.how.endswith("-B") else "")),
                (beat.copies,), related=[Related(beat.copies.evidence, beat.copies.note)])
        if project.workers is None:
            return
        workers = project.workers
        evidence, note = workers.evidence, workers.note
        # a preloaded app is imported once, in gunicorn's master: what it starts on import
        # runs once; a per-worker start-up hook still runs in each worker
        kinds = ("worker-scheduler-start",) if project.preloaded is not None else \
            ("scheduler-start", "worker-scheduler-start")
        for fact in sorted((f for f in project.code_facts if f.kind in kinds
                            and not in_test_code(project, f.span.path)),
                           key=lambda f: f.span):
            where = "each worker process as it starts (a per-worker start-up hook)" \
                if fact.kind == "worker-scheduler-start" else "every process that imports it"
            yield self.finding(
                fact.span,
                message("{start} runs in {where}, and the app runs as several processes "
                        "({copies}): every job runs once in each; start the scheduler in one "
                        "dedicated process (under `if __name__ == \"__main__\"`)",
                        start=fact.detail, where=prose(where), copies=prose(note)),
                (fact, workers), related=[Related(evidence, note)])


class TimerRunsOnce(Rule):
    id = "JOB109"
    name = "timer-runs-once"
    severity = Severity.ERROR
    summary = "A timer-started service with RemainAfterExit=yes runs only once."
    sources = ("systemd",)
    fix = "safe"  # the timer starts the service again, as it was meant to

    def check(self, project):
        for job in project.runnable_jobs:
            if job.unit is None or job.unit.remain_after_exit is None:
                continue
            yield self.finding(
                job.span,
                message("RemainAfterExit=yes keeps the service active after its first run, so "
                        "the timer never starts it again: `{schedule}` fires into an active "
                        "unit", schedule=job.schedule.text),
                (job,), job.id, [Related(job.unit.remain_after_exit, "RemainAfterExit=yes"),
                         Related(job.unit.timer, "timer")],
                edits=(delete_line(job.unit.remain_after_exit),),
                fix_message="remove RemainAfterExit=yes")


def _env_variants(a: Job, b: Job) -> bool:
    pa, pb = a.span.path.split("/"), b.span.path.split("/")
    envs_a = {p.lower() for p in pa[:-1]} & ENV_FOLDERS
    envs_b = {p.lower() for p in pb[:-1]} & ENV_FOLDERS
    return bool(envs_a or envs_b) and envs_a != envs_b


def _image_variants(a: Job, b: Job) -> bool:
    """Cron lines two Dockerfiles write build two images (nextcloud's apache, fpm and
    fpm-alpine variants): a deployment runs one of them, not both."""
    def dockerfile(job: Job) -> bool:
        name = job.span.path.rsplit("/", 1)[-1].lower()
        return name.startswith(("dockerfile", "containerfile")) or name.endswith(".dockerfile")

    return dockerfile(a) and dockerfile(b) and a.span.path != b.span.path


def _exclusive_branches(a: Job, b: Job) -> bool:
    """Two tasks declared in the two branches of one ``if`` (``if (isDev()) … else …``):
    only one of them is ever scheduled."""
    branches_a = dict(_branch(v) for k, v in a.options if k == "branch")
    return any(line in branches_a and branches_a[line] != side
               for line, side in (_branch(v) for k, v in b.options if k == "branch"))


def _branch(value: str) -> tuple[str, str]:
    line, _, side = value.partition(":")
    return line, side


def _example(job: Job) -> bool:
    return any(part.lower() in EXAMPLE_FOLDERS for part in job.span.path.split("/")[:-1])


def _systemd_fallback(a: Job, b: Job) -> bool:
    """Debian ships a cron.d line and a timer for the same work; the cron line tests
    ``/run/systemd/system`` and runs only on hosts without systemd."""
    sources = {a.source, b.source}
    cron = a if a.source == "cron" else b
    return sources == {"cron", "systemd"} and "/run/systemd/system" in cron.command


def work_identity(job: Job) -> str:
    project = sorted(t.identity for t in job.targets if t.project_code)
    if project:
        return "\n".join(project)
    if "\n" in job.command.strip():
        # a script written in the schedule (a CronJob's `sh -c` block): the programs it
        # names are not all of its work (MISP's pull and push jobs differ in a loop)
        return " ".join(job.command.split())
    return " ".join(" ".join(t.argv) for t in job.targets) or " ".join(job.command.split())


class DuplicateSchedule(Rule):
    id = "JOB106"
    name = "duplicate-schedule"
    severity = Severity.WARNING
    summary = "The same command or entry point is scheduled more than once."
    sources = ("cron", "systemd", "k8s", "python", "php")

    def check(self, project):
        jobs = [j for j in project.runnable_jobs if j.schedule.recurring]
        groups: dict[str, list[Job]] = {}
        for job in jobs:
            identity = work_identity(job)
            if identity:  # (a CronJob that runs its image's entrypoint says nothing of its work)
                groups.setdefault(identity, []).append(job)
        reported = set()
        for same in groups.values():
            for earlier, later in combinations(same, 2):
                if later.id in reported or _env_variants(earlier, later) or \
                        _image_variants(earlier, later) or \
                        _systemd_fallback(earlier, later) or _example(earlier) or \
                        _example(later) or _exclusive_branches(earlier, later):
                    continue
                a, b = firings_of(earlier.schedule), firings_of(later.schedule)
                if a and b and not coincide(a, b):
                    continue  # a composite schedule: different times, never together
                reported.add(later.id)
                yield self.finding(
                    later.span,
                    message("{work} is scheduled again here (`{schedule}`, also `{other}` at "
                            "{path}:{line}): it runs twice when both fire",
                            work=work_text(later), schedule=later.schedule.text,
                            other=earlier.schedule.text, path=earlier.span.path,
                            line=earlier.span.line),
                    (earlier, later), later.id, [Related(earlier.span, "first scheduled here")])


class CronFileIgnored(Rule):
    id = "JOB110"
    name = "cron-file-ignored"
    severity = Severity.ERROR
    summary = "cron silently skips the file (bad cron.d name) or its last entry (no newline)."
    sources = ("cron",)
    fix = "safe"  # the final newline

    def check(self, project):
        for cron_file in project.cron_files:
            name = cron_file.installed_name
            if cron_file.name_ignored and cron_file.has_entries:
                yield self.finding(
                    cron_file.span,
                    message("cron ignores {file}: cron.d file names may only hold letters, "
                            "digits, '_' and '-' (run-parts naming), so none of its jobs ever "
                            "run", file=f"/etc/cron.d/{name}"), (cron_file,))
            if cron_file.last_entry_unterminated is not None:
                edits = (TextEdit(cron_file.end_of_file, "\n"),) if cron_file.end_of_file else ()
                yield self.finding(
                    cron_file.last_entry_unterminated,
                    message("the last crontab entry has no final newline: cron does not run it"),
                    (cron_file,), edits=edits, fix_message="end the file with a newline")


_STEP = re.compile(r"^(\*|\d+)/(\d+)$")


class MisleadingSchedule(Rule):
    id = "JOB111"
    name = "misleading-schedule"
    severity = Severity.INFO
    summary = "A cron expression that does not do what it reads as."
    sources = ("cron", "php")

    def check(self, project):
        for job in project.runnable_jobs:
            days_only = dict(job.options).get("days-only")
            if job.source == "laravel" and days_only:
                yield self.finding(
                    job.span,
                    message("`{schedule}` sets the days but no time: Laravel runs the task "
                            "every minute of those days; add a frequency (`->daily()`, "
                            "`->at('02:00')`)", schedule=job.schedule.text),
                    (job,), job.id)
                continue
            if job.source != "cron" or job.schedule.kind != "cron" or job.schedule.text.startswith("@"):
                continue
            if job.schedule.misread is not None:
                yield self.finding(
                    job.span, message("`{schedule}`: {what}, so it runs as `{read}`",
                                      schedule=job.schedule.text,
                                      what=prose(job.schedule.misread),
                                      read=job.schedule.cron or "never"),
                    (job,), job.id)
            if job.schedule.dialect == "supercronic":  # (seconds and years too)
                named = supercronic_cron.named_fields(job.schedule.cron or "")
                both = all(supercronic_cron.restricted(named.get(f, "*"))
                           for f in ("day-of-month", "day-of-week"))
                scheduler = "supercronic"
            else:
                fields = job.schedule.text.split()
                if len(fields) != 5:  # (a run-parts folder's time, named by its folder)
                    continue
                named = dict(zip(("minute", "hour", "day-of-month", "month", "day-of-week"),
                                 fields))
                both = not fields[2].startswith("*") and not fields[4].startswith("*")
                scheduler = "cron"
            for label, size, period in (("second", 60, "minute"), ("minute", 60, "hour"),
                                        ("hour", 24, "day")):
                for part in named.get(label, "").split(","):
                    m = _STEP.match(part)
                    if m and size % int(m.group(2)):
                        step = int(m.group(2))
                        start = 0 if m.group(1) == "*" else int(m.group(1))
                        fires = list(range(start, size, step))
                        shown = ", ".join(f"{v:02d}h" if label == "hour" else f":{v:02d}"
                                          for v in fires[:4])
                        yield self.finding(
                            job.span,
                            message("`{part}` in the {field} field does not divide {size}: it "
                                    "fires at {fires} and restarts every {period}, so gaps are "
                                    "uneven", part=part, field=label, size=size,
                                    fires=shown + (" …" if len(fires) > 4 else ""),
                                    period=prose(period)),
                            (job,), job.id)
            if both:
                yield self.finding(
                    job.span,
                    message("`{schedule}` restricts both day-of-month ({dom}) and day-of-week "
                            "({dow}): {scheduler} fires when EITHER matches, not both",
                            schedule=job.schedule.text, dom=named["day-of-month"],
                            dow=named["day-of-week"], scheduler=prose(scheduler)),
                    (job,), job.id)


class DstSensitiveSchedule(Rule):
    id = "JOB112"
    name = "dst-sensitive-schedule"
    severity = Severity.INFO
    summary = "A fixed-time job in a DST zone fires in the hour that clocks skip or repeat."
    sources = ("cron", "systemd", "k8s")

    def check(self, project):
        for job in project.runnable_jobs:
            sched = job.schedule
            if not sched.timezone or not sched.fire_minutes or not sched.fixed_time:
                continue
            # what the runtime does on change days (checked with systemd-analyze; cron's
            # documented behaviour): systemd skips a time that does not exist and runs a
            # repeated one once; cron runs a skipped job right after the change and a
            # repeated one once
            found = dst_minutes(sched.timezone)
            skipped, repeated = found if found is not None else (frozenset(), frozenset())
            if job.source == "systemd":
                shifted = skipped
                what = prose("a time the spring change skips: systemd does not start the job "
                             "that day (on the autumn day it runs once)")
            elif sched.dialect == "supercronic":
                shifted = skipped | repeated
                what = prose(supercronic_cron.dst_words(
                    sched.timezone, bool(set(sched.fire_minutes) & skipped),
                    bool(set(sched.fire_minutes) & repeated)))
            elif sched.dialect == "cronie" and sched.timezone:
                # cronie reads a CRON_TZ entry's time in that zone each minute (cron.c
                # find_jobs): every instant whose local time matches
                shifted = skipped | repeated
                what = prose(_every_match("cronie", bool(set(sched.fire_minutes) & skipped),
                                          bool(set(sched.fire_minutes) & repeated)))
            elif job.source == "cron" and sched.cron and sched.cron.split()[0].startswith("*"):
                # Debian's cron: a minute field beginning with `*` makes a wildcard entry,
                # which is not caught up after the spring change and runs in both of the
                # autumn's hours (cron.c; schedule.DST_RUNTIMES)
                shifted = skipped | repeated
                in_spring = bool(set(sched.fire_minutes) & skipped)
                in_autumn = bool(set(sched.fire_minutes) & repeated)
                what = prose(
                    "a time the spring change skips and the autumn change repeats: its minute "
                    "field begins with `*`, so cron treats it as a wildcard job, does not run "
                    "it in the skipped hour and runs it in both repeated hours"
                    if in_spring and in_autumn else
                    "a time the spring change skips: its minute field begins with `*`, so "
                    "cron treats it as a wildcard job and does not run it in the skipped hour"
                    if in_spring else
                    "a time the autumn change repeats: its minute field begins with `*`, so "
                    "cron treats it as a wildcard job and runs it in both hours")
            elif job.source == "cron":
                shifted = skipped | repeated
                in_spring = bool(set(sched.fire_minutes) & skipped)
                in_autumn = bool(set(sched.fire_minutes) & repeated)
                several = len(set(sched.fire_minutes) & skipped) > 1
                caught_up = "runs them one after another right after the spring change " \
                    "(10 s apart)" if several else "runs it right after the spring change"
                what = prose(
                    f"a time the spring change skips and the autumn change repeats: cron "
                    f"{caught_up}, and once in the repeated hour"
                    if in_spring and in_autumn else
                    f"a time the spring change skips: cron {caught_up} that day, off its time"
                    if in_spring else
                    "a time the autumn change repeats: cron runs it once that day, at the "
                    "first of the two")
            else:  # a CronJob: robfig/cron fires at every instant whose local time matches
                shifted = skipped | repeated
                what = prose(_every_match("the CronJob controller",
                                          bool(set(sched.fire_minutes) & skipped),
                                          bool(set(sched.fire_minutes) & repeated)))
            hits = sorted(set(sched.fire_minutes) & shifted) if shifted else []
            if not hits:
                continue
            at = ", ".join(f"{m // 60:02d}:{m % 60:02d}" for m in hits[:3])
            yield self.finding(
                job.span,
                message("`{schedule}` fires at {at} {timezone}, {what}",
                        schedule=sched.text, at=at, timezone=sched.timezone, what=what),
                (job,), job.id)


#: the scheduler that accepts a job's schedule, by the job's source (cron otherwise)
_SCHEDULER_NAMES = {"k8s": "Kubernetes", "systemd": "systemd", "gha": "GitHub Actions",
                    "celery": "Celery beat",
                    "apscheduler": "APScheduler", "huey": "Huey"}


def _every_match(runner: str, in_spring: bool, in_autumn: bool) -> str:
    """What a runner that fires at every instant whose local time matches does on the
    change days (a CronJob with ``timeZone``, a cronie entry under ``CRON_TZ``)."""
    if in_spring and in_autumn:
        return (f"a time the spring change skips and the autumn change repeats: {runner} "
                f"does not start the job on the spring day and starts it twice, an hour "
                f"apart, on the autumn day")
    if in_spring:
        return f"a time the spring change skips: {runner} does not start the job that day"
    return (f"a time the autumn change repeats: {runner} starts the job twice that day, an "
            f"hour apart")


class ScheduleNeverRuns(Rule):
    id = "JOB113"
    name = "schedule-never-runs"
    severity = Severity.ERROR
    summary = "A schedule entry its scheduler refuses, or accepts and never runs."
    sources = ("cron", "systemd", "k8s", "gha", "python")

    def check(self, project):
        for job in sorted(project.jobs, key=lambda j: j.span):
            never = job.never_runs
            if never is None or never.why not in ("never-matches", "refused", "no-unit"):
                continue
            if never.why == "no-unit":
                text = message("{why}: the timer fires and systemd starts nothing, so the job "
                               "never runs", why=prose(never.text))
            elif never.why == "refused":
                text = message("{why}: the job never runs{whole}", why=prose(never.text),
                               whole=prose("; supercronic then stops at start, so none of "
                                           "the file's jobs run"
                                           if job.schedule.dialect == "supercronic" else
                                           "; installed with `crontab FILE`, the whole file "
                                           "is refused, and none of its jobs run"
                                           if job.source == "cron" and job.user is None
                                           and job.schedule.dialect != "busybox" else ""))
            elif job.schedule.dialect == "supercronic":  # (it says nothing, or it spins)
                text = message("`{schedule}` never fires: {why}", schedule=job.schedule.text,
                               why=prose(never.text))
            else:
                text = message("`{schedule}` never fires: {why}; {scheduler} accepts it, so "
                               "nothing says that the job never runs",
                               schedule=job.schedule.text, why=prose(never.text),
                               scheduler=prose(_SCHEDULER_NAMES.get(job.source, "cron")))
            yield self.finding(job.span, text, (job,), job.id)
