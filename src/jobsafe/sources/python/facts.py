"""What one module yields, free of libcst: the cache stores these, and loading them must not
pay for importing the parser."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...model import CodeFact, Lock, ParseError, Release, Span, StaleHandling, pickled_as_call
from .hazards_model import Retries
from .symbols import CallSite, LockSymbols, Param, Value

MODULE = "<module>"
MAIN = "<main>"
#: code that runs once however many workers serve the app: the ``__main__`` block, and
#: gunicorn's hooks in the master before it forks (a thread started there is not copied)
ONCE_UNITS = frozenset({MAIN, "on_starting", "when_ready"})


@dataclass(slots=True)
class PathEffects:
    """What a function does to lock-file paths it does not take as parameters
    (``self.lockfile``, a constant path): a method that tests, one that writes the PID, one
    that removes the file make one lock file protocol at their caller."""

    tests: set[str]
    creates: dict[str, bool]  # path -> atomic creation
    removes: set[str]
    writes_pid: set[str]
    #: how the module the function is written in deals with a file left by a dead process
    stale: StaleHandling = "none"


@dataclass(slots=True)
class Unit:
    """A function body (or the module body / ``__main__`` block)."""

    name: str
    node: object | None  # the libcst node; dropped once the module is analysed
    is_async: bool = False
    is_generator: bool = False
    is_contextmanager: bool = False
    #: a hook the server runs in each worker process once it runs (an ASGI startup handler
    #: or lifespan, gunicorn's ``post_fork``): what it starts runs per worker, preloaded or not
    per_worker: bool = False
    decorators: set[str] = field(default_factory=set)
    calls: list[str] = field(default_factory=list)  # qualified names of called functions
    locks: list[Lock] = field(default_factory=list)
    facts: list[CodeFact] = field(default_factory=list)
    # -- what callers need to know (the function's summary; see ``semantics``)
    params: tuple[str, ...] = ()
    defaults: dict[str, Value] = field(default_factory=dict)
    star_kwargs: str | None = None  # the ``**kwargs`` parameter
    #: locals bound once by assignment (``client = get_client()``), for what they hold
    local_values: dict[str, Value] = field(default_factory=dict)
    returns: list[Value] = field(default_factory=list)
    #: names the body calls (``fn(*args)`` in a decorator's wrapper calls its parameter)
    called_names: set[str] = field(default_factory=set)
    #: a context manager's ``yield`` lines: what it holds there, its caller's block holds
    yield_lines: list[int] = field(default_factory=list)
    #: ``super().__init__(...)`` in a constructor: what a library base class is given
    super_init: Value | None = None
    callsites: list[CallSite] = field(default_factory=list)
    #: lock span -> what the lock depends on beyond literals
    lock_symbols: dict[Span, LockSymbols] = field(default_factory=dict)
    #: calls that do something with a parameter: ``open``/``os.open``/``os.mkdir`` of a
    #: path, ``execute`` of SQL text, and the project calls it passes parameters on to (a
    #: lock file its caller tests and removes may be created here, SQL it is given run)
    param_calls: list[Value] = field(default_factory=list)
    #: a method's effects on its object's lock-file paths (``self.lockfile``), for callers
    #: in other modules
    path_effects: PathEffects | None = None
    #: the methods called on each object the unit names (``inst.stop()``): object as
    #: written -> (line, method, release, plain release's span, last line held, the
    #: parameter an ``if`` around it tests and whether it must be false)
    object_calls: dict[str, list[tuple[int, str, Release, Span | None, int,
                                       tuple[Param, bool] | None]]] = \
        field(default_factory=dict)
    #: a method's object's file handles (``self.fh``) whose kernel lock it lets go of
    #: (unlocks or closes): its caller's later ``obj.release()`` ends what ``obj`` took
    lets_go: set[str] = field(default_factory=set)
    #: how the unit retries (for a lock taken at one of its call sites too)
    retries: Retries = field(default_factory=lambda: Retries())
    #: a Celery task's own hard time limit (``@app.task(time_limit=...)``: the worker
    #: kills a run that outlasts it), and where it is written
    time_limit: tuple[Value, Span] | None = None


@pickled_as_call
@dataclass(frozen=True, slots=True)
class LockOption:
    """An option of a query builder class that makes its SQL lock the rows it selects
    (koji's ``QueryProcessor``: ``if self.opts.get('rowlock'): query += ' FOR UPDATE'``):
    the attribute it is read from, the key read in it ("" when the attribute is the flag)
    and whether the lock waits (no ``NOWAIT``/``SKIP LOCKED`` beside it)."""

    attr: str
    key: str
    waits: bool


@dataclass(slots=True)
class ClassInfo:
    bases: tuple[Value, ...] = ()
    methods: list[str] = field(default_factory=list)
    #: ``x = ...`` in the class body, ``self.x = ...`` / ``cls.x = ...`` in its methods:
    #: every value given, with the unit it is written in ("" for the class body)
    attrs: dict[str, list[tuple[Value, str]]] = field(default_factory=dict)
    lock_options: list[LockOption] = field(default_factory=list)


@dataclass(slots=True)
class ModuleFacts:
    path: str
    units: dict[str, Unit] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    #: top-level ``NAME = value`` assignments
    bindings: dict[str, Value] = field(default_factory=dict)
    #: what the module imports: local name -> dotted name as written (``.locks.take``)
    imports: dict[str, str] = field(default_factory=dict)
    #: the modules it re-exports whole (``from .utils import *``), dotted as written
    star_imports: list[str] = field(default_factory=list)
    error: ParseError | None = None
    has_main: bool = False
    too_large: bool = False  # generated code, usually: skipped unless a job runs it
    spawn_context: bool = False  # sets multiprocessing's start method to spawn/forkserver
    #: jobsafe's own failure on this module (a bug, not a finding; never cached)
    internal_error: str | None = None
    #: jobs declared to in-process schedulers (Celery beat, APScheduler, ...)
    schedules: list = field(default_factory=list)
    #: the hard time limit this module gives every task of a Celery app
    #: (``app.conf.task_time_limit = ...``, ``app.conf.update(task_time_limit=...)``), and
    #: where
    worker_time_limit: tuple[Value, Span] | None = None
    #: claims this module lets go of when they are old: (model, the age limit compared
    #: to, the function that sweeps them) — a sweeper job's ``UPDATE … SET owner = NULL
    #: WHERE claimed_at < now - limit``
    claim_sweeps: list = field(default_factory=list)
    #: read without libcst (``light``): the names each function and method calls
    #: (``Class.method`` -> names), to tell whether it may reach a lock before parsing it
    function_calls: dict[str, frozenset[str]] = field(default_factory=dict)
    #: read without libcst: the names the calls each function returns make (``return
    #: IMPL.claim(...)``: claim, IMPL), for a forwarding function of such a module
    function_returns: dict[str, frozenset[str]] = field(default_factory=dict)
    #: read without libcst: the functions that call one of their parameters (``def
    #: retry(func, *args): func(*args)``), which take a lock when handed a lock function
    param_callers: set[str] = field(default_factory=set)
    #: functions that only return a call chain of their parameters (``def mark(qs, at):
    #: return qs.update(locked_at=at)``): name -> source, read by the modules that call
    #: them as the chain itself (``db_locks``)
    forwarders: dict[str, str] = field(default_factory=dict)
    #: dotted names (as imported) of other modules' functions this module calls with a
    #: query among the arguments: their forwarders make the index read it again
    forwarders_wanted: frozenset[str] = frozenset()


@dataclass(slots=True)
class ScheduledCall:
    source: str  # celery | apscheduler | schedule | huey | cron (django-crontab) | django-cron
    span: Span
    target: str  # dotted name (or local function name) of what runs
    cron: str | None = None  # a five-field expression
    interval: float | None = None  # seconds
    text: str = ""
    #: the scheduler's own overlap and catch-up settings, as written (APScheduler's
    #: max_instances, coalesce, misfire_grace_time; django-cron's ALLOW_PARALLEL_RUNS ...)
    options: tuple[tuple[str, str], ...] = ()
    #: why the scheduler raises on the schedule as written: the job is kept, and never runs
    #: (JOB113), rather than given a schedule made up
    refused: str | None = None
