"""The shared model: every front end produces it, every rule reads only it.

Facts remember where they came from (a ``Span``) so that findings can point at the right
line and relate their evidence.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import Literal, TypeVar, get_args

from .errors import InternalError
from .levels import Confidence, Severity

_Record = TypeVar("_Record", bound=type)


def pickled_as_call(cls: _Record) -> _Record:
    """Pickle a frozen slotted dataclass as a call of its constructor with its fields.
    Such dataclasses pickle their state through a ``__getstate__`` written in Python: the
    facts of mlflow's 252 parsed modules took 2.0 s to pickle that way (a worker handing
    them back, the cache storing them), 0.4 s as constructor calls read by ``attrgetter``;
    reading them back costs the same either way."""
    names = [f.name for f in fields(cls) if f.init]
    get = attrgetter(*names) if names else (lambda _: ())
    if len(names) == 1:
        def __reduce__(self):
            return cls, (get(self),)
    else:
        def __reduce__(self):
            return cls, get(self)
    setattr(cls, "__reduce__", __reduce__)
    return cls


def hash_once(cls: _Record) -> _Record:
    """Keep a frozen dataclass's hash once computed, in its ``_hash`` field (declared
    ``field(default=0, init=False, compare=False, repr=False)``). The semantics memoises on
    nested values (a call of an attribute of a call ...) and their contexts: their generated
    hashes, recomputed at every lookup, were 4 million calls on mlflow. Not pickled
    (``pickled_as_call`` passes only the constructor's fields): string hashes differ from
    one process to the next."""
    computed: Callable[[object], int] = getattr(cls, "__hash__")

    def __hash__(self) -> int:
        known = self._hash
        if not known:
            known = computed(self) or 1
            object.__setattr__(self, "_hash", known)
        return known

    setattr(cls, "__hash__", __hash__)
    return cls


#: told how a long run advances: (stage, done, total), e.g. ("parsing Python", 40, 90)
Progress = Callable[[str, int, int], None]

#: the source families of the rule catalogue (RULES.md, "Sources")
SourceFamily = Literal["cron", "systemd", "k8s", "compose", "gha", "ansible", "python", "php"]
SOURCE_FAMILIES: tuple[SourceFamily, ...] = get_args(SourceFamily)
#: ruff's fix model: a safe fix keeps what the code does, an unsafe one changes it
Applicability = Literal["safe", "unsafe"]

# -- the fixed vocabularies of the model (a type checker holds every producer to them)

#: how far a lock reaches: the process that takes it, the host, every host
LockScope = Literal["process", "host", "cluster"]
#: how a scheduler reads a schedule (``Schedule.dialect``)
ScheduleDialect = Literal["debian", "cronie", "supercronic", "busybox", "systemd", "celery",
                          "apscheduler",
                          "huey", "kubernetes", "github"]
#: what frees a lock whose holder died or hung
StaleHandling = Literal[
    "none",           # nothing: a lock or pid file whose existence alone means "locked"
    "pid-check",      # the stored PID is checked for a live process (a hung one is alive)
    "age-check",      # the file is treated as stale after an age
    "kernel",         # the kernel drops it with the process (flock, lockf, filelock)
    "ttl",            # it expires (ttl_seconds; None there: no expiry was set)
    "session",        # the database drops it with the connection
    "transaction",    # the database drops it when the transaction ends
    "removed-first",  # the file is removed before it is created: no exclusion at all
    "process",        # an in-process lock: gone with the process, shared with nobody
]
#: the lock itself: a library, a kernel call, or a hand-made file, key or row
LockKind = Literal[
    "flock", "lockf", "filelock", "soft-filelock", "portalocker", "portalocker-redis",
    "fasteners", "zc.lockfile", "tendo", "lockfile", "pid-file", "lock-file", "lock-dir",
    "process-check",
    "redis-lock", "python-redis-lock", "redlock", "redis-key", "cache-key", "cache-lock",
    "symfony-lock",
    "huey-lock", "db-row-lock", "db-claim", "pg-advisory", "mysql-get-lock",
    "run-one", "run-this-one", "run-one-constantly", "lckdo", "solo", "setlock", "supercronic",
    "yacron", "ofelia",
    "threading.Lock", "threading.RLock", "threading.Semaphore", "threading.BoundedSemaphore",
    "multiprocessing.Lock", "multiprocessing.RLock", "asyncio.Lock", "asyncio.Semaphore",
]
#: a schedule-layer guard: a wrapper around the command (flock(1), run-one, ...), or the
#: runner itself (supercronic waits for a job to finish before it starts it again)
GuardKind = Literal["flock", "run-one", "run-this-one", "run-one-constantly", "lckdo", "solo",
                    "setlock", "supercronic", "yacron", "ofelia"]
#: how a lock is released
Release = Literal["with", "finally", "atexit", "plain", "none", "unknown", "process-exit",
                  "transaction"]
#: what kind of schedule: a cron expression, systemd calendar events, a fixed interval,
#: at boot only, or a value filled in at deploy time
ScheduleKind = Literal["cron", "calendar", "interval", "reboot", "templated"]
#: the resolved entry point of a job
EntryKind = Literal["python", "shell", "script", "module", "manage.py", "console-script",
                    "function", "artisan", "console", "perl", "ruby", "php", "node", "Rscript",
                    "lua", "tclsh"]
#: a construct in job code that defeats a lock or repeats a side effect
FactKind = Literal["exit-in-scope", "yield-in-scope", "fork-in-scope", "unlink-flock",
                   "retry-on-lock", "blocking-in-async", "handle-dropped", "unchecked-try-lock",
                   "lock-key-per-host", "key-per-run", "key-fresh-record", "key-missing",
                   "path-per-run", "scheduler-start", "worker-scheduler-start",
                   "starts-threads"]
#: why a scheduler never runs a job: cron skips its file (JOB110), its entry is the last
#: one of a file without a final newline (JOB110), its schedule never matches or the
#: scheduler refuses it (JOB113), another line makes ``crontab FILE`` refuse its file, a
#: timer names a unit that does not exist (JOB113)
NeverRunsWhy = Literal["file-skipped", "unterminated", "never-matches", "refused",
                       "file-refused", "no-unit"]
#: a TTL that is set but not to a value known statically (a parameter, a setting)
UNKNOWN_TTL = -1.0
#: what a filesystem where a job runs is, for its lock files
MountKind = Literal["network", "shared", "local", "other"]
#: where a job comes from (the JSON inventory's ``source``)
JobSource = Literal["cron", "systemd", "k8s", "compose", "gha", "ansible", "celery",
                    "apscheduler", "schedule", "huey", "django", "django-cron", "laravel",
                    "symfony"]


@pickled_as_call
@dataclass(frozen=True, order=True, slots=True)
class Span:
    """A 1-based location; ``path`` is relative to the working directory, with ``/``."""

    path: str
    line: int
    column: int = 1
    end_line: int = 0
    end_column: int = 0

    def __post_init__(self) -> None:
        if self.end_line < self.line:
            object.__setattr__(self, "end_line", self.line)
        if self.end_line == self.line and self.end_column < self.column:
            object.__setattr__(self, "end_column", self.column)


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Related:
    span: Span
    message: str


@dataclass(frozen=True)
class Schedule:
    """When a job fires. ``text`` is the schedule as written."""

    text: str
    kind: ScheduleKind
    timezone: str | None = None
    min_interval_seconds: int | None = None
    runs_per_day: float | None = None
    #: minutes of the day (0..1439) at which a cron schedule fires; None if unknown
    fire_minutes: tuple[int, ...] | None = None
    #: the five-field cron expression, macros expanded (cron schedules only; supercronic's:
    #: five, six or seven fields, see ``supercronic_cron``)
    cron: str | None = None
    #: the ``OnCalendar=`` expressions (systemd timers)
    calendar: tuple[str, ...] | None = None
    #: fires at fixed hours (not every hour)
    fixed_time: bool = False
    #: the dialect the schedule was read in, where jobsafe reads it as that scheduler does:
    #: ``debian`` (Debian's cron), ``supercronic`` (its cronexpr), ``systemd``, ``celery``,
    #: ``apscheduler``, ``huey`` (in the last three a day matches when its day of the month
    #: and weekday both do)
    dialect: ScheduleDialect | None = None
    #: what the scheduler could not read as written and ran otherwise (busybox's crond runs
    #: a line whose field it cannot read to the end with what it read before: ``7``)
    misread: str | None = None

    @property
    def recurring(self) -> bool:
        return self.kind != "reboot"


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Guard:
    """A schedule-layer overlap guard such as ``flock -n`` or ``run-one``."""

    kind: GuardKind
    blocking: bool
    wait_seconds: float | None
    span: Span
    path: str | None = None
    #: where "-n" would go (right after the command word), when the command line is exact
    option_at: Span | None = None


@pickled_as_call
@dataclass(frozen=True, slots=True)
class ArgumentSlot:
    """For fixes: where a lock call's argument (its TTL, its wait) is written, or where it
    would go."""

    keyword: str  # the keyword the call takes it as (timeout, ex, expire, ttl, blocking)
    unit: float  # seconds per unit of that keyword (ex: 1, px: 0.001)
    value: Span | None  # the argument as written, when it is
    after_arguments: Span  # an empty span after the last argument (or inside the empty parens)
    first: bool  # no argument yet: no comma before a new one
    #: the end of the call's last line, where a comment can go (None: it cannot, after a
    #: line continuation or a string)
    line_end: Span | None


@pickled_as_call
@dataclass(frozen=True, slots=True)
class ReleaseFix:
    """For fixes: the code between a lock's acquisition and its plain release put in
    ``try:``, the release in ``finally:``; ``straight`` when nothing between leaves the
    block another way (a return that skipped the release would now release)."""

    edits: tuple[TextEdit, ...]
    straight: bool


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Lock:
    """A lock taken in a job's entry code (shell script or Python)."""

    kind: LockKind
    scope: LockScope
    span: Span
    path: str | None = None
    key: str | None = None
    ttl_seconds: float | None = None
    stale_handling: StaleHandling = "none"
    blocking: bool | None = None
    wait_seconds: float | None = None  # a bounded wait (flock -w)
    #: for lock files: the non-atomic existence test that precedes creation (JOB201)
    existence_test: Span | None = None
    atomic: bool = True
    # -- facts from Python code
    api: str | None = None  # the library call, e.g. "filelock.FileLock"
    try_lock: bool = False  # acquisition that returns instead of waiting
    result_checked: bool | None = None  # for try-locks: is the result tested?
    release: Release = "unknown"
    release_span: Span | None = None  # the plain release call
    renewed: bool = False  # TTL extended while held (extend, auto_renewal)
    scope_lines: tuple[int, int] | None = None  # the lines the lock protects
    function: str | None = None  # the function that takes it
    session: bool = False  # database session-level advisory lock
    #: where the connection holding a session lock was checked out of a pool whose block
    #: returns it with the lock still held
    pooled: Span | None = None
    ttl_span: Span | None = None  # the call that sets the TTL, when not the acquisition
    #: a lock taken through a project abstraction (a manager, helper, guard class): where
    #: the abstraction takes it (that lock is this one, not a second)
    taken_from: Span | None = None
    confidence: Confidence = Confidence.HIGH
    #: for fixes: where the call that sets the TTL takes it
    ttl_slot: ArgumentSlot | None = None
    #: for fixes: the plain release moved into ``finally``
    release_fix: ReleaseFix | None = None
    #: for fixes: the acquisition made to skip the run instead of waiting
    skip_fix: tuple[TextEdit, ...] = ()

    def holds(self, line: int) -> bool:
        """Whether the lock is held at ``line`` (within the lines it protects)."""
        return self.scope_lines is not None and \
            self.scope_lines[0] <= line <= self.scope_lines[1]

    @property
    def expires_by_itself(self) -> bool:
        """A hung holder loses it in time: a TTL, or a lock file treated as stale after an
        age. (A kernel lock, a PID-checked file — a hung process is alive — or a lock
        with no TTL stays held as long as the run hangs.)"""
        return self.stale_handling == "age-check" or (
            self.stale_handling == "ttl" and self.ttl_seconds is not None)

    @property
    def outlives_process(self) -> bool:
        """A crash leaves it held: lock files, Redis and cache keys (until their TTL)."""
        return self.stale_handling in ("none", "pid-check", "age-check", "ttl")


@pickled_as_call
@dataclass(frozen=True, slots=True)
class CodeFact:
    """A construct in job code that defeats a lock (JOB204, JOB208-JOB215) or repeats a side
    effect on a rerun (JOB401-JOB404)."""

    kind: FactKind
    span: Span
    #: the construct in words (``sys.exit()``); for 4xx, where the offending value comes from
    detail: str
    lock: Lock | None = None
    origin: Span | None = None  # where the offending value comes from (4xx)
    api: str | None = None  # 4xx: the call whose key or path it is (``stripe.Charge.create``)
    key: str | None = None  # 4xx: the key parameter (``idempotency_key``)
    #: for fixes: edits that remedy it (JOB401: a key built from stable identifiers)
    remedy: tuple[TextEdit, ...] = ()


@dataclass(frozen=True)
class Background:
    """Work that leaves the process tree of the guard or unit that started it."""

    how: str  # "&", "nohup … &", "setsid -f", "screen -dm", ...
    span: Span


@dataclass(frozen=True)
class Entry:
    """The code a job runs, resolved in the analysed tree."""

    path: str  # display path of the resolved file
    kind: EntryKind
    function: str | None = None
    locks: tuple[Lock, ...] = ()
    #: work the entry script leaves running when it exits (escapes any guard around it)
    backgrounds: tuple[Background, ...] = ()
    #: work that escapes a guard the entry script takes itself
    escapes: tuple[Background, ...] = ()
    #: the shortest ``timeout`` inside the entry script, if any
    runtime_bound_seconds: float | None = None
    #: True when the entry code is known to take a lock that jobsafe cannot model
    mentions_lock: bool = False
    #: constructs in the entry code that defeat its locks
    facts: tuple[CodeFact, ...] = ()
    #: display paths of the code the entry runs: its own file, the modules and scripts it
    #: reaches (a change to any of them re-checks the job in pre-commit)
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Target:
    """A program a command runs, after wrappers are peeled off."""

    argv: tuple[str, ...]
    span: Span
    project_code: bool  # runs code of the analysed project (script, module, manage.py ...)
    entry: Entry | None = None
    #: stable identity of the work, for duplicate detection (entry path + arguments)
    identity: str = ""
    #: "run" for the program the command runs; "run-parts" for each script of a run-parts
    #: folder (their locks are their own, not a guard of the whole job)
    #: ``dispatch``: a scheduler run each minute that runs its own tasks (Laravel's
    #: ``artisan schedule:run``): its tasks are the jobs, not the command
    role: Literal["run", "run-parts", "dispatch"] = "run"


@dataclass(frozen=True)
class UnitFacts:
    """The timer and service behind a systemd job."""

    timer: Span  # the timer file
    service: str | None  # display path of the service file (None: not in the tree)
    type: str = "simple"
    kill_mode: str = "control-group"
    remain_after_exit: Span | None = None
    timeout_start_seconds: float | None = None  # None: no start timeout (infinity)
    runtime_max_seconds: float | None = None
    persistent: bool = False
    randomized_delay_seconds: float | None = None
    accuracy_seconds: float | None = None
    #: the unit's time limit is set by a template (``TimeoutStartSec={{ limit }}``): a
    #: bound whose value is not known here, not a missing one
    limit_templated: bool = False


@dataclass(frozen=True)
class Mount:
    """A filesystem mounted where a job runs; a lock file's meaning depends on it."""

    path: str  # the mount point
    kind: MountKind  # network (NFS, EFS, CephFS...), shared (one volume for all copies), ...
    what: str  # "nfs volume files", "PVC data of class efs-sc", "emptyDir" ...
    span: Span
    confidence: Confidence = Confidence.HIGH

    def holds(self, path: str | None) -> bool:
        mount = self.path.rstrip("/") or "/"
        return path is not None and path != "" and (
            path == mount or path.startswith(mount.rstrip("/") + "/"))


@dataclass(frozen=True)
class Copies:
    """How many copies of something run at once, and the evidence."""

    count: int
    evidence: Span
    note: str  # what the evidence says: "3 replicas", "a DaemonSet: one pod per node"
    confidence: Confidence = Confidence.HIGH
    #: the copies are processes of one host (supervisor's numprocs): a host lock is shared
    one_host: bool = False


@dataclass(frozen=True)
class WorkloadRef:
    """What runs a job, as the tree deploys it: the CronJob itself, the Deployment or
    compose service whose container runs its cron daemon or workers, the host group an
    Ansible task installs it on; with how many copies run and how surely it is that one."""

    kind: str  # "CronJob", "Deployment", "compose service", "host group" ...
    name: str
    copies: int
    evidence: Span
    confidence: Confidence = Confidence.HIGH


@dataclass(frozen=True)
class BeatProcess:
    """A Celery beat (or ``worker -B``) process in a manifest."""

    span: Span  # its command
    how: str  # "celery beat", "celery worker -B"
    copies: Copies


@dataclass(frozen=True)
class NeverRuns:
    """Why the scheduler never runs a job, and that in words."""

    why: NeverRunsWhy
    text: str


@dataclass(frozen=True)
class KeySlot:
    """Where a fix can add a key to a YAML block mapping: the start of a line, and the
    mapping's indentation."""

    at: Span
    indent: int


@dataclass(frozen=True)
class K8sFacts:
    """The Kubernetes CronJob behind a k8s job."""

    name: str
    concurrency_policy: str | None  # None: not set (Kubernetes' default is Allow)
    policy_span: Span | None = None
    active_deadline_seconds: float | None = None
    #: ``activeDeadlineSeconds`` is set by a template (``{{ .Values.deadline }}``): a bound
    #: whose value is not known here, not a missing one
    deadline_templated: bool = False
    #: for fixes: the concurrencyPolicy value as written; where a key goes in the CronJob's
    #: spec and in its Job spec (block mappings only)
    policy_value: Span | None = None
    spec_slot: KeySlot | None = None
    job_spec_slot: KeySlot | None = None


@dataclass(frozen=True)
class WorkflowFacts:
    """A GitHub Actions workflow run by ``on.schedule``."""

    name: str
    concurrency: bool  # a concurrency group at workflow or job level
    state_change: Span | None  # the first step that changes external state
    state_what: str = ""
    #: for fixes: a top-level key goes above ``jobs:`` (a block mapping's key)
    jobs_slot: KeySlot | None = None
    #: the longest a run can last before GitHub cancels it (None: not bounded)
    max_run_seconds: float | None = None


@dataclass(frozen=True)
class Job:
    id: str
    source: JobSource
    span: Span  # the schedule entry
    schedule: Schedule
    command: str
    user: str | None = None
    guards: tuple[Guard, ...] = ()
    runtime_bound_seconds: float | None = None
    #: where the bound is written, when not on the job's own line (a Celery task's
    #: ``time_limit=``)
    runtime_bound_span: Span | None = None
    targets: tuple[Target, ...] = ()
    backgrounds: tuple[Background, ...] = ()  # inside the guard's scope
    locks: tuple[Lock, ...] = ()  # taken by the scheduled command line itself
    #: how many copies run it (the workload's replicas), when the tree says
    replicas: Copies | None = None
    #: the container (compose service or container name) a runner runs it in: ofelia's
    #: ``job-exec`` ``container =``, the service its labels are on
    runs_in: str | None = None
    #: filesystems mounted where the job runs (pod volumes, compose volumes)
    mounts: tuple[Mount, ...] = ()
    #: the workload that runs it, when the tree deploys it
    workload: WorkloadRef | None = None
    #: an in-process scheduler's own settings for the job, as written (max_instances ...)
    options: tuple[tuple[str, str], ...] = ()
    unit: UnitFacts | None = None  # systemd jobs
    k8s: K8sFacts | None = None  # Kubernetes CronJobs
    workflow: WorkflowFacts | None = None  # GitHub Actions
    #: why the scheduler never runs this job (a file cron skips ...); None when it runs
    never_runs: NeverRuns | None = None
    #: how the job was found: LOW for a crontab recognised by its content alone
    confidence: Confidence = Confidence.HIGH
    #: for fixes: the command of a crontab line, as written
    command_at: Span | None = None
    #: a claim each firing takes so that one copy of the scheduler runs it (Laravel's
    #: ``onOneServer()``): not an overlap guard, the next firing claims anew
    one_per_firing: Lock | None = None

    @property
    def runs_project_code(self) -> bool:
        return any(t.project_code for t in self.targets)

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(t.entry for t in self.targets if t.entry is not None)

    @property
    def guard_locks(self) -> tuple[Lock, ...]:
        """Locks that keep a second copy of the whole job out."""
        return self.locks + tuple(lock for t in self.targets if t.entry and t.role == "run"
                                  for lock in t.entry.locks)

    @property
    def all_locks(self) -> tuple[Lock, ...]:
        """Locks in the command line and in the resolved entry code."""
        return self.locks + tuple(lock for e in self.entries for lock in e.locks)


@pickled_as_call
@dataclass(frozen=True, slots=True)
class ParseError:
    span: Span
    message: str


@dataclass(frozen=True)
class CronFile:
    """A file cron reads, with the facts JOB110 needs."""

    span: Span  # where the file is (or where it is installed, for Dockerfile COPY)
    installed_name: str | None  # the cron.d file name, when the file is a cron.d file
    last_entry_unterminated: Span | None
    has_entries: bool = True  # Debian ships comment-only placeholders such as .placeholder
    end_of_file: Span | None = None  # where a final newline would go
    #: the installed name breaks cron.d's naming rule, so cron skips the whole file
    name_ignored: bool = False
    #: LOW when the file is a crontab by its content alone
    confidence: Confidence = Confidence.HIGH


@dataclass(frozen=True)
class TextEdit:
    """Replace ``span`` (an empty span inserts at its start) with ``text``."""

    span: Span
    text: str


@dataclass(frozen=True)
class Fix:
    message: str
    edits: tuple[TextEdit, ...]
    applicability: Applicability = "safe"


@dataclass(frozen=True)
class Message:
    """A finding's sentence as a template (``str.format`` fields) and what fills it, kept
    apart so that reports can show the values as values (pyflakes' ``message_args``): a
    value the sentence names (a path, a key, a schedule, a duration), or a nested Message
    for a clause that varies (prose, not a value)."""

    template: str
    args: tuple[tuple[str, MessageArg], ...] = ()

    def render(self) -> str:
        return self.template.format_map(self.values())

    def values(self) -> dict[str, str | int | float]:
        """What fills the fields, a clause as its words."""
        return {k: v.render() if isinstance(v, Message) else v for k, v in self.args}


#: what fills a message's field
MessageArg = str | int | float | Message


def message(template: str, **args: MessageArg) -> Message:
    return Message(template, tuple(args.items()))


def prose(text: str) -> Message:
    """A clause of words that names no value."""
    return Message(text.replace("{", "{{").replace("}", "}}"))


@dataclass(frozen=True)
class Pooler:
    """Evidence that database connections go through a transaction-pooling PgBouncer."""

    span: Span
    confidence: Confidence = Confidence.HIGH


@dataclass
class Finding:
    rule: str
    name: str
    severity: Severity
    span: Span
    parts: Message  # the message as template and arguments (``message`` renders it)
    job: str | None = None
    related: tuple[Related, ...] = ()
    fingerprint: str = ""
    suppressed: str | None = None  # reason, when suppressed in source ("" for no reason)
    baseline_state: str | None = None
    fix: Fix | None = None
    confidence: Confidence = Confidence.HIGH

    @property
    def message(self) -> str:
        return self.parts.render()

    @property
    def sort_key(self) -> tuple:
        s = self.span
        return (s.path, s.line, s.column, self.rule, self.message)


@dataclass
class Project:
    """Everything the rules see."""

    root: str  # display path of the analysis root
    files: list[str] = field(default_factory=list)
    jobs: list[Job] = field(default_factory=list)
    parse_errors: list[ParseError] = field(default_factory=list)
    #: files left out for their size (display path, why): a note, not a finding
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: jobsafe's own failures (not findings: see ``errors``)
    internal_errors: list[InternalError] = field(default_factory=list)
    cron_files: list[CronFile] = field(default_factory=list)
    #: locks and hazards in every analysed Python module, scheduled or not
    code_locks: list[Lock] = field(default_factory=list)
    code_facts: list[CodeFact] = field(default_factory=list)
    #: evidence that database connections go through a transaction-pooling PgBouncer
    pooler: Pooler | None = None
    #: evidence that the web app or worker runs as several processes
    workers: Copies | None = None
    #: gunicorn loads the app once in its master before forking the workers (``--preload``,
    #: ``preload_app = True``): what the app starts on import runs once, in the master
    preloaded: Span | None = None
    #: network filesystems mounted on the hosts (fstab, mount units in the tree)
    host_mounts: list[Mount] = field(default_factory=list)
    #: Celery beat processes in manifests that run in several copies
    beat_processes: list[BeatProcess] = field(default_factory=list)
    @property
    def runnable_jobs(self) -> list[Job]:
        """The jobs a scheduler will run, in schedule order: what the rules about running
        jobs read (a job that never runs has only the finding that says so)."""
        return sorted((j for j in self.jobs if j.never_runs is None), key=lambda j: j.span)

    #: ``jobsafe.dev/ignore`` annotations: (object span, codes, reason)
    annotation_ignores: list[tuple[Span, tuple[str, ...], str]] = field(default_factory=list)
