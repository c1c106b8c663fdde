"""Judging what the code around a lock does, for a given lock: the observations
``hazards.Hazards`` records (lock-agnostic, cached with the module) and ``derive``, which
turns them into facts. Free of libcst: a lock found only across modules is judged here at
its use site, from cached observations, with the same rules as one written in place."""
from __future__ import annotations

from dataclasses import dataclass

from ...model import CodeFact, Lock, Span, pickled_as_call

_BLOCKING_IN_ASYNC = ("flock", "lockf", "filelock", "fasteners", "threading.Lock",
                      "threading.RLock", "redis-lock", "lockfile", "portalocker", "soft-filelock")


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Exit:
    span: Span
    what: str  # "sys.exit()", "os._exit()" ...
    hard: bool  # skips ``finally`` and ``with`` too
    not_acquired: bool  # in the branch taken when the lock was not acquired


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Observations:
    """What the code around one acquisition does, for any lock taken there (tuples: most
    are empty, and an empty tuple costs nothing in the thousands cached per module)."""

    at: Span  # the acquisition
    scope_end: int  # last line of its scope
    exits: tuple[Exit, ...] = ()
    yields: tuple[Span, ...] = ()  # in a generator that is no context manager
    forks: tuple[tuple[Span, str], ...] = ()
    unlinks: tuple[tuple[Span, str], ...] = ()  # (call, path), after it
    in_async: bool = False  # inside ``async def``, not handed to a thread
    brief: bool = False  # a ``with`` around a few statements with no ``await``
    spin: Span | None = None  # an unbounded ``while`` with a sleep around it
    #: a local file object made in this function, which returns right after: the
    #: description, when a kernel lock on it is released as the function returns
    dropped: str | None = None
    #: ``x.delete(key)`` / ``x.unlink(key)`` after it: (span, in a ``finally``, the call) —
    #: the release of a key lock a helper took for this site, once the key is known
    deletes: tuple[tuple[Span, bool, object], ...] = ()


@dataclass(slots=True)
class Retries:
    """How a unit retries, for a try-lock whose failure raises (JOB208)."""

    self_retry: tuple[Span, float | None] | None = None  # Celery ``self.retry()``, countdown
    decorator: Span | None = None  # a retry decorator, with a ``raise`` in the body


def derive(acquisitions: list[tuple[Lock, Observations]], retries: Retries,
           spawn_context: bool) -> list[CodeFact]:
    """The hazards of a unit's locks: each at most once per place, for the first lock it
    concerns (in the order the locks are taken)."""
    facts: list[CodeFact] = []
    seen: set[tuple[str, Span]] = set()

    def add(kind, span: Span, detail: str, lock: Lock) -> None:
        if (kind, span) not in seen:
            seen.add((kind, span))
            facts.append(CodeFact(kind, span, detail, lock))

    for lock, obs in acquisitions:
        for exit_ in obs.exits:
            if not lock.outlives_process or exit_.not_acquired:
                continue
            if exit_.hard or (lock.release == "plain" and lock.release_span is not None
                              and exit_.span.line < lock.release_span.line):
                add("exit-in-scope", exit_.span, exit_.what, lock)
        if obs.yields:  # one finding per lock scope, at its first yield
            more = len(obs.yields) - 1
            add("yield-in-scope", min(obs.yields, key=lambda s: (s.line, s.column)),
                f"{lock.kind} lock" + (f" ({more} more yield{'s' if more > 1 else ''} in "
                                       "its scope)" if more else ""), lock)
        if lock.stale_handling == "kernel" and lock.scope == "host":
            for span, what in obs.forks:
                if spawn_context and what.endswith("with the fork start method"):
                    continue
                add("fork-in-scope", span, what, lock)
        if lock.kind in ("flock", "lockf", "filelock", "portalocker", "fasteners") and \
                lock.path is not None:
            for span, path in obs.unlinks:
                if path == lock.path:
                    add("unlink-flock", span, path, lock)
        if obs.in_async and lock.blocking and lock.kind in _BLOCKING_IN_ASYNC and not (
                obs.brief and lock.scope == "process" and lock.release == "with"):
            add("blocking-in-async", obs.at, f"{lock.api or lock.kind}", lock)
        if lock.try_lock and lock.result_checked is False:
            add("unchecked-try-lock", obs.at, f"{lock.api or lock.kind}", lock)
        if lock.try_lock and obs.spin is not None:
            add("retry-on-lock", obs.spin, "a spin loop with no deadline", lock)
        if obs.dropped is not None and lock.stale_handling == "kernel" and \
                lock.release == "process-exit":
            add("handle-dropped", obs.at, obs.dropped, lock)
    try_locks = [lock for lock, _ in acquisitions if lock.try_lock]
    if try_locks:
        if retries.self_retry is not None:
            span, countdown = retries.self_retry
            if countdown is None or countdown < 60:
                add("retry-on-lock", span, "self.retry()", try_locks[0])
        elif retries.decorator is not None:
            add("retry-on-lock", retries.decorator, "a retry decorator", try_locks[0])
    return facts
