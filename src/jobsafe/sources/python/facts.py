"""What one module yields, free of libcst: the cache stores these, and loading them must not
pay for importing the parser."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...model import CodeFact, Lock, ParseError, Span

MODULE = "<module>"
MAIN = "<main>"


@dataclass
class Unit:
    """A function body (or the module body / ``__main__`` block)."""

    name: str
    node: object | None  # the libcst node; dropped once the module is analysed
    is_async: bool = False
    is_generator: bool = False
    is_contextmanager: bool = False
    decorators: set[str] = field(default_factory=set)
    calls: list[str] = field(default_factory=list)  # qualified names of called functions
    locks: list[Lock] = field(default_factory=list)
    facts: list[CodeFact] = field(default_factory=list)


@dataclass
class ModuleFacts:
    path: str
    units: dict[str, Unit] = field(default_factory=dict)
    #: Command classes (Django management commands) and their handle()
    classes: dict[str, list[str]] = field(default_factory=dict)
    error: ParseError | None = None
    has_main: bool = False
    too_large: bool = False  # generated code, usually: skipped unless a job runs it
    #: jobsafe's own failure on this module (a bug, not a finding; never cached)
    internal_error: str | None = None
    #: jobs declared to in-process schedulers (Celery beat, APScheduler, ...)
    schedules: list = field(default_factory=list)


@dataclass
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
