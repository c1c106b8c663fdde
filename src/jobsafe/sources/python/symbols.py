"""What an expression stands for, symbolically: the per-module facts record these instead of
guessing from names, and the project-level ``semantics`` resolves them across modules (what
type a receiver has, what value a parameter was given at a call site).

Free of libcst, so cached module facts load without it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Union

from ...model import hash_once, pickled_as_call

if TYPE_CHECKING:
    from ...model import Release, Span
    from .hazards_model import Observations


#: annotations that name no class of the code (``Any``, ``Callable[...]``)
TYPING_WORDS = frozenset({"Any", "Callable", "ClassVar", "Final", "Type", "Union", "Literal"})


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Const:
    """A literal, or arithmetic of literals, as Python would evaluate it."""

    value: float | str | bool | None


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Global:
    """A name bound at the top level of this module (function, class, assignment)."""

    name: str


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Imported:
    """A name this module imports, by what it imports (``redis.Redis``, ``.locks.take``)."""

    dotted: str


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Param:
    """A parameter of the function the value is written in, or (``owner``, a unit name) of
    a function around it: a closure's variable (a decorator factory's argument)."""

    name: str
    owner: str = ""


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Local:
    """A local variable (see ``Unit.local_values``) of the function the value is written
    in, or of the function ``owner`` around it."""

    name: str
    owner: str = ""


@pickled_as_call
@dataclass(frozen=True, slots=True)
class SelfRef:
    """``self`` in a method of ``cls`` (a class of this module)."""

    cls: str


@hash_once
@pickled_as_call
@dataclass(frozen=True, slots=True)
class Attr:
    base: "Value"
    name: str
    _hash: int = field(default=0, init=False, compare=False, repr=False)


@hash_once
@pickled_as_call
@dataclass(frozen=True, slots=True)
class Item:
    """``base[key]``: ``caches["locks"]``."""

    base: "Value"
    key: "Value"
    _hash: int = field(default=0, init=False, compare=False, repr=False)


@hash_once
@pickled_as_call
@dataclass(frozen=True, slots=True)
class Call:
    func: "Value"
    #: (keyword, or position as "#0", "#1" ...; value)
    args: tuple[tuple[str, "Value"], ...] = ()
    star: bool = False  # passes *args or **kwargs: arguments not all known
    #: where it is written (not part of what it means: two spellings are one value)
    span: "Span | None" = field(default=None, compare=False)
    _hash: int = field(default=0, init=False, compare=False, repr=False)

    def arg(self, keyword: str | None, position: int | None) -> "Value | None":
        for key, value in self.args:
            if key == keyword or (position is not None and key == f"#{position}"):
                return value
        return None


@hash_once
@pickled_as_call
@dataclass(frozen=True, slots=True)
class BinOp:
    """Arithmetic on values not all literal (``ttl * 60``, ``prefix + name``)."""

    op: str
    left: "Value"
    right: "Value"
    _hash: int = field(default=0, init=False, compare=False, repr=False)


@hash_once
@pickled_as_call
@dataclass(frozen=True, slots=True)
class Either:
    """A local assigned more than once, its values in the order written: the idiom
    ``x = given; if x is None: x = default`` reads as the first known, not-None one."""

    options: tuple["Value", ...]
    _hash: int = field(default=0, init=False, compare=False, repr=False)


@hash_once
@pickled_as_call
@dataclass(frozen=True, slots=True)
class Mapping:
    """A dict of known keys: the keywords a call gives a ``**kwargs`` parameter."""

    items: tuple[tuple[str, "Value"], ...]
    _hash: int = field(default=0, init=False, compare=False, repr=False)

    def get(self, key: str) -> "Value | None":
        return next((v for k, v in self.items if k == key), None)


@pickled_as_call
@dataclass(frozen=True, slots=True)
class Unknown:
    """Anything else: a value jobsafe does not follow."""


Value = Union[Const, Global, Imported, Param, Local, SelfRef, Attr, Item, Call, BinOp, Either,
              Mapping, Unknown]
UNKNOWN = Unknown()


#: how a call site uses what it calls: ``with X(...)``, ``@X(...)`` on a function, a plain
#: call (``take()``, ``x = make()``), ``x.acquire()`` on something made earlier
Use = Literal["with", "decorator", "call", "acquire"]


@pickled_as_call
@dataclass(frozen=True, slots=True)
class CallSite:
    """A call of something this module does not know as a library: a project function,
    class or method, resolved across modules by ``semantics``."""

    callee: Value  # what is called, entered or decorated with (for ``x.acquire()``: x)
    use: Use
    span: "Span"  # the use site: findings point here
    #: the lines an acquisition here would hold the lock for, and how it would be let go
    scope_lines: tuple[int, int]
    release: "Release"
    release_span: "Span | None"
    #: what the code around it does, judged if it turns out to take a lock
    observations: "Observations"
    #: the call written at the site (``x.acquire(blocking=False)``), when it is one
    call: Call | None = None
    #: how the caller lets go of the objects it passes (``take(lock)`` then, in a
    #: ``finally``, ``lock.release()``): argument name -> (release, plain release's span,
    #: last line held)
    handle_releases: tuple[tuple[str, "Release", "Span | None", int], ...] = ()
    #: the call's result decides what happens next (``if not x.acquire(): return``)
    result_used: bool = True
    #: a statement of its own: what the call returns is dropped (a failure it raises may
    #: still be handled)
    discarded: bool = False
    #: what the function returns tells whether this call succeeded (``return claim()``,
    #: ``_, n = claim()`` then ``return n == 1``): its caller gets the answer
    answered: bool = False
    #: the call's answer decides what the caller does next (tested, returned, or kept in
    #: a name a test or a return reads; not only logged)
    answer_read: bool = True
    #: inside a ``try`` whose handlers only pass: a failure that raises is ignored
    silenced: bool = False
    #: arguments that differ per host or per run (hostname, pid, uuid, time): (position
    #: "#i" or keyword, what makes them so, where) — a lock key a helper is given
    arg_origins: tuple[tuple[str, str, "Span"], ...] = ()
    #: the caller's file objects passed in (a helper may lock them)
    files: tuple["PassedFile", ...] = ()
    #: a parameter the site runs under (``if flock: self.lock()``), and whether its
    #: value must be false for that (``if not dry_run:``)
    when: tuple[Param, bool] | None = None
    #: in a ``finally`` (or a handler of every exception): runs whatever happened before
    always: bool = False
    #: the object the site makes or calls a method of (``inst = Guard(p)``, ``self.lock()``),
    #: as written: its later method calls are the unit's ``object_calls``
    receiver: str | None = None
    #: that object is a local the unit never lets out of it (not returned, passed or
    #: stored): dropped, its files closed, when the unit returns
    object_confined: bool = False
    #: the name the call's result is bound to (``fh = open_locked(p)``)
    assigned: str | None = None


@pickled_as_call
@dataclass(frozen=True, slots=True)
class PassedFile:
    """A file object of the caller's, passed to a function called at a use site."""

    name: str
    path: str | None  # where the caller opened it
    #: the caller returns right after, closing it (what a lock on it then lasts)
    dropped: str | None = None


#: the API of a lock file a project helper may create (``LockSymbols.api``)
PATH_HELPER = "path-helper"
#: the API of a PID written into a file whose handle a project helper was given to lock
#: (dnf's ``ProcessLock`` with its flock moved into a helper)
PID_UNDER_HELPER = "pid-under-helper"
#: the API of SQL text handed to a project helper that may execute it (``run(cur, SQL)``)
SQL_HELPER = "sql-helper"
#: the API of a query builder made with an option that may make it lock rows
#: (``QueryProcessor(..., opts={"rowlock": True})``: ``semantics`` reads the class)
QUERY_OPTION = "query-option"
#: methods that run SQL text (``execute_sql``: peewee)
SQL_EXECUTES = ("execute", "exec_driver_sql", "execute_sql", "raw")  # Manager.raw(sql)


@dataclass(slots=True)
class LockSymbols:
    """What a lock found in a unit depends on, beyond its literal arguments: ``semantics``
    re-reads its fields from ``call`` with the whole tree (constants of other modules,
    Django settings, the arguments a helper was called with)."""

    #: the call that carries the lock's arguments: a lock object's constructor, the
    #: ``set(..., nx=True)``/``add()``, the ``fcntl.flock()``; written in unit ``owner``
    call: Call | None = None
    api: str = ""  # the API the call is (a key of ``apis.LOCK_CONSTRUCTORS``, "redis.set" ...)
    owner: str = ""
    #: the receiver whose type decides whether the call is a lock at all (``c.lock()``),
    #: with the kinds that make it one; None: recognised from the library call itself
    receiver: Value | None = None
    needs: frozenset[str] = frozenset()
    #: what the receiver's name suggests: the verdict when its type stays unknown
    guess: bool = False
    #: a session lock's connection checked out of this (an engine? a pool?) at ``pool_span``
    pool: Value | None = None
    pool_span: Span | None = None
    pool_guess: bool = False
    #: a keyword argument whose value decides whether the call locks at all
    #: (``r.set(key, 1, nx=nx)`` in a helper): true where it is given, or no lock
    condition: Value | None = None
    #: a statement chosen by a parameter (``if wait: sql = "... FOR UPDATE" else: sql =
    #: "... SKIP LOCKED"``): the parameter, and whether the lock waits when it is true
    waits_when: "tuple[Param, bool] | None" = None
    #: taken on one branch of ``a if p else b`` (``query.for_update(SKIP) if skip else
    #: query.for_update()``): the parameter, and the truth it must have
    branch: "tuple[Param, bool] | None" = None
    #: a time-to-live the module could not read (a claim's age limit imported from
    #: another module): the tree reads it
    ttl: Value | None = None
    #: the lock outlives this unit (returned, yielded by a context manager, entered in
    #: ``__enter__``, held by a wrapper): the caller's use of the unit is the acquisition
    escapes: bool = False


def executed_sql(call: "Call") -> "Param | None":
    """The parameter a call runs as SQL (``cur.execute(sql)``, ``conn.execute(text(sql))``)."""
    if not (isinstance(call.func, Attr) and call.func.name in SQL_EXECUTES):
        return None
    sql = call.arg(None, 0)
    if isinstance(sql, Call) and sql.args:
        sql = sql.args[0][1]  # text(sql)
    return sql if isinstance(sql, Param) else None


def project_candidate(func: Value) -> bool:
    """A call that may reach the project's code (a library's own functions are judged by
    their recognisers): a name of this module, an import, a local or parameter, or a
    method of one of those, or of what a call of one returns (``Lock.open(p).take()``)."""
    while isinstance(func, (Attr, Item, Call)):
        func = func.func if isinstance(func, Call) else func.base
    return isinstance(func, (Global, Imported, Local, Param, SelfRef)) and not (
        isinstance(func, Imported) and func.dotted.startswith("builtins."))


#: calls whose result may be a lock object: library lock constructors by their last name,
#: ``x.lock(...)`` (and ``functools.partial`` of one, see ``makes_lock``)
LOCKISH_CALLS = frozenset({
    "Lock", "RLock", "FileLock", "UnixFileLock", "SoftFileLock", "ReadWriteLock",
    "InterProcessLock", "LockFile", "LinkLockFile", "MkdirLockFile", "PIDLockFile",
    "TimeoutPIDLockFile", "PidFile", "Redlock", "RedisLock", "SingleInstance", "Semaphore",
    "BoundedSemaphore", "lock", "advisory_lock", "lock_task"})


#: lock constructors that only exclude threads of one process: not a job's guard, so not
#: worth following the code that makes them (a web framework makes dozens)
_THREAD_LOCKS = ("threading.", "asyncio.", "multiprocessing.")


def partial_function(value: Value) -> Value | None:
    """The function a ``functools.partial(func, ...)`` call is made of, known by its name
    (before the tree's code is read)."""
    if isinstance(value, Call) and "partial" in value_names(value.func):
        return value.arg(None, 0)
    return None


def makes_lock(value: Value, depth: int = 0) -> bool:
    """Whether a value may be (or make) a lock object shared beyond the process: a library
    lock constructor, ``x.lock(...)``, a ``functools.partial`` of one."""
    if depth > 6 or not isinstance(value, (Call, Either)):
        return False
    if isinstance(value, Either):
        return any(makes_lock(option, depth + 1) for option in value.options)
    func = value.func
    if isinstance(func, Imported) and func.dotted.startswith(_THREAD_LOCKS):
        return False
    names = value_names(func)
    if "partial" in names:  # functools.partial(redis_lock.Lock, conn)
        first = partial_function(value)
        return first is not None and bool(value_names(first) & LOCKISH_CALLS)
    return bool(names & LOCKISH_CALLS) or any(makes_lock(arg, depth + 1)
                                              for _, arg in value.args)


def value_names(value: Value, depth: int = 0) -> set[str]:
    """The function, class or method names a value calls or names (``a.b.take(x)``:
    take), for a quick "may this reach a lock" test."""
    if depth > 6:
        return set()
    if isinstance(value, Call):
        return value_names(value.func, depth + 1) | {
            n for _, arg in value.args if isinstance(arg, Call)
            for n in value_names(arg, depth + 1)}
    if isinstance(value, Attr):
        return {value.name}
    if isinstance(value, Imported):
        return {value.dotted.rsplit(".", 1)[-1]}
    if isinstance(value, (Local, Global, Param)):
        return {value.name}
    if isinstance(value, SelfRef):
        return {value.cls}
    if isinstance(value, Either):
        return {n for option in value.options for n in value_names(option, depth + 1)}
    return set()


def site_names(site: "CallSite", unit, facts) -> set[str]:
    """What a use site may call, by name: its callee's names, and for a name used with
    ``with``/``acquire()``, those of what the unit or module bound it to (``g = Guard()``;
    ``self._lock = factory()``). Empty when nothing can be named (then it is followed). A
    lock that only excludes the process's own threads (``threading.Semaphore()``) is named
    by its dotted path alone: it is no lock name, and its makers are not followed."""
    callee = site.callee
    thread_lock = _thread_lock_made(callee)
    if thread_lock is not None:
        return {thread_lock}
    names = value_names(callee)
    bound: list = []
    node = callee.func if isinstance(callee, Call) else callee
    while True:  # the receivers of a method call too: obj.run() with obj = Guard()
        if isinstance(node, Local) and node.name in unit.local_values:
            bound.append(unit.local_values[node.name])
        elif isinstance(node, Global) and node.name in facts.bindings:
            bound.append(facts.bindings[node.name])
        elif isinstance(node, Attr) and isinstance(node.base, SelfRef):
            info = facts.classes.get(node.base.cls)
            bound += [v for v, _ in info.attrs.get(node.name, ())] if info is not None else []
        elif isinstance(node, Param) and node is callee:
            return set()  # a helper given the object: follow it
        elif isinstance(node, Param) and node.name == "cls" and "." in unit.name:
            names.add(unit.name.rsplit(".", 1)[0].rsplit(".", 1)[-1])  # a classmethod's class
        elif isinstance(node, Imported) and node.dotted.count(".") >= 2 and \
                site.use != "call":
            names.add(node.dotted.rsplit(".", 2)[-2])  # with Guard.held(): imported class
        if not isinstance(node, (Attr, Item)):
            break
        node = node.base
        names |= value_names(node)
    for value in bound:
        if _thread_lock_made(value) is None:  # (self._slots.release(), slots a Semaphore)
            names |= value_names(value)
    return imported_names(names, facts)


def _thread_lock_made(value) -> str | None:
    """The constructor (``threading.Lock``) when the value makes a lock of the process's
    own threads (``threading.Lock()``, ``asyncio.Semaphore(3)``)."""
    if isinstance(value, Call) and isinstance(value.func, Imported) and \
            value.func.dotted.startswith(_THREAD_LOCKS):
        return value.func.dotted
    return None


def imported_names(names: set[str], facts) -> set[str]:
    """Names with what they stand for when imported under another name (``from locks
    import Guard as G``: G and Guard)."""
    return names | {facts.imports[n].rsplit(".", 1)[-1] for n in names if n in facts.imports}
