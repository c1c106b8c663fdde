"""Lock acquisitions in a module: library constructors, kernel calls, Redis and cache keys,
SQL advisory locks and hand-made lock files, with how each is released."""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import libcst as cst

from ...edits import argument_edits
from ...model import (
    CodeFact,
    Confidence,
    Lock,
    LockKind,
    Release,
    StaleHandling,
    TextEdit,
)
from . import apis
from ...model import UNKNOWN_TTL
from .db_locks import FOR_UPDATE, DbLocks, called_name, class_like
from .facts import MAIN, MODULE, PathEffects
from .fixes import skip_when_busy, try_advisory_lock
from .symbolize import bound_names
from .symbols import (
    PATH_HELPER,
    PID_UNDER_HELPER,
    QUERY_OPTION,
    SQL_EXECUTES,
    SQL_HELPER,
    Attr,
    Call,
    LockSymbols,
    Param,
    Value,
    executed_sql,
    project_candidate,
)
from .syntax import contains, names_read, walk, walk_unit
from .values import argument, literal, passes_kwargs

if TYPE_CHECKING:
    from .facts import Unit

PATH_CREATORS = frozenset({"builtins.open", "io.open", "os.open", "os.mkdir"})


_NO_EFFECTS = PathEffects(set(), {}, set(), set())


@dataclass(frozen=True)
class LockSpec:
    """A lock object's constructor: the library API, and when the receiver's type decides
    whether it is one (``c.lock(...)`` with ``c`` made elsewhere), what ``semantics``
    must confirm."""

    name: str  # the API, e.g. "redis.Redis.lock"
    api: apis.LockApi
    ctor: cst.Call
    receiver: Value | None = None
    needs: frozenset[str] = frozenset()
    guess: bool = False  # what the receiver's name suggests, when its type stays unknown


#: the methods that let an object's lock go (``lock.release()``, ``cm.__exit__(...)``)
RELEASE_METHODS = frozenset({"release", "__exit__"})


@dataclass
class CallIndex:
    """A unit's releasing calls, in the unit's order: ``methods`` by the receiver's text
    (``lock`` for ``lock.release()``), ``unlocks`` by the handle whose kernel lock they let
    go of (with whether by closing it)."""

    calls: list
    methods: dict[str, list[cst.Call]] = field(default_factory=dict)
    unlocks: dict[str, list[tuple[cst.Call, bool]]] = field(default_factory=dict)


class LockCalls(DbLocks):
    """The module analyser's lock recognition (over its database locks)."""

    def _constructor(self, call: cst.Call) -> LockSpec | None:
        """The spec when ``call`` creates a lock object."""
        names = self.qualified(call.func)
        for name in sorted(names):
            if name in apis.LOCK_CONSTRUCTORS:
                return LockSpec(name, apis.LOCK_CONSTRUCTORS[name], call)
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "lock":
            kind = self._receiver_kind(func.value)
            if kind == "redis":
                return LockSpec("redis.Redis.lock", apis.REDIS_CLIENT_LOCK, call)
            if kind == "django-cache":
                return LockSpec("cache.lock", apis.CACHE_LOCK, call)
            if kind is None:
                cache = self._looks_like_cache(func.value)
                return LockSpec("cache.lock" if cache else "redis.Redis.lock",
                                apis.CACHE_LOCK if cache else apis.REDIS_CLIENT_LOCK, call,
                                self.sym.value(func.value, self.unit_at(call)),
                                frozenset({"redis", "django-cache"}),
                                cache or self._looks_like_redis(func.value))
        if isinstance(func, cst.Attribute) and func.attr.value == "lock_task":
            storage = self._huey_storage(func.value)
            if storage is not None:
                return LockSpec("huey.lock_task", apis.huey_lock(apis.HUEY_STORAGES[storage]),
                                call)
            if any(q == "huey" or q.startswith("huey.") for q in self.aliases.values()):
                # a Huey made elsewhere: its storage decides the scope (Redis, usually)
                return LockSpec("huey.lock_task", apis.huey_lock("cluster"), call,
                                self.sym.value(func.value, self.unit_at(call)),
                                frozenset(apis.HUEY_LOCK_SCOPES),
                                guess=True)
        return None

    def _receiver_kind(self, node) -> str | None:
        """What a receiver is when this module alone says (a Redis client made here, Django's
        cache); "other" when it is something known not to matter; None when only the
        project's other code (``semantics``) can tell."""
        if self.qualified(node) & apis.DJANGO_CACHES or (
                isinstance(node, cst.Subscript) and self.qualified(node.value) & apis.DJANGO_CACHES):
            return "django-cache"
        if self.code(node) in self.clients or self.qualified(node) & apis.REDIS_CLIENT_FACTORIES:
            return "redis"
        if isinstance(node, cst.Call) and self.qualified(node.func) & apis.REDIS_CLIENT_FACTORIES:
            return "redis"
        return None

    def _looks_like_redis(self, node) -> bool:
        return "redis" in self.code(node).lower()

    def _looks_like_cache(self, node) -> bool:
        text = self.code(node).lower()
        return text == "cache" or text.endswith(".cache") or text.startswith("caches[")

    def _symbols(self, unit: Unit, lock: Lock, call: cst.Call, api: str,
                  read_from: cst.Call | None = None, **pending) -> LockSymbols:
        """Record what ``semantics`` needs to re-read a lock's fields across the tree
        (``read_from``: the call whose arguments say them, when not ``call`` itself)."""
        owner = self.unit_at(call)
        value = self.sym.value(read_from or call, owner)
        symbols = LockSymbols(call=value if isinstance(value, Call) else None, api=api,
                              owner=owner.name, **pending)
        unit.lock_symbols[lock.span] = symbols
        return symbols

    def _huey_storage(self, node) -> str | None:
        """The Huey class behind ``huey`` in ``huey.lock_task()``, when the module binds it."""
        kinds = self.client_kinds.get(self.code(node), set()) | self.qualified(node)
        return next((k for k in sorted(kinds) if k in apis.HUEY_STORAGES), None)

    def _with_item(self, item: cst.WithItem, w: cst.With, unit: Unit, bindings) -> Lock | None:
        expr = item.item
        spec = None
        call = None
        if isinstance(expr, cst.Call):
            spec = self._constructor(expr)
            call = expr
            if spec is None and isinstance(expr.func, cst.Attribute) and \
                    expr.func.attr.value == "acquire":
                spec = bindings.get(self.code(expr.func.value)) or (
                    self._constructor(expr.func.value) if isinstance(expr.func.value, cst.Call)
                    else None)
        else:
            spec = bindings.get(self.code(expr))
        if spec is None:
            return None
        blocking, wait = self._wait(spec.api, spec.ctor, call if call is not spec.ctor else None)
        # a manager that tries once tells its body through ``as``: ``as acquired: if acquired``
        lock = self._make_lock(spec, expr, unit, release="with",
                               scope=(self.line(w), self.end_line(w)), blocking=blocking,
                               wait=wait, try_lock=blocking is False and spec.api.yields_acquired,
                               checked=item.asname is not None)
        if call is spec.ctor and blocking is not False and not spec.api.yields_acquired:
            # ``with Lock(..., blocking=False):`` raises instead of entering: a skip
            api = spec.api
            slot = self._argument_slot(call, api.blocking_arg, None) if api.blocking_arg \
                else self._argument_slot(call, api.wait_arg, api.wait_pos)
            if slot is not None:
                lock = replace(lock, skip_fix=argument_edits(
                    slot, "False" if api.blocking_arg else "0",
                    "skip the run while another holds the lock (entering raises)"))
        return lock

    def _decorator_locks(self, unit: Unit):
        """A lock a decorator holds around the whole function (``@huey.lock_task("x")``, a
        lock library's decorator: ``apis.LOCK_DECORATORS``)."""
        if not isinstance(unit.node, cst.FunctionDef):
            return []
        found = []
        for decorator in unit.node.decorators:
            d = decorator.decorator
            if not isinstance(d, cst.Call):
                continue
            library = next((n for n in sorted(self.qualified(d.func))
                            if n in apis.LOCK_DECORATORS), None)
            if library is not None:
                found.append((self._make_lock(
                    LockSpec(library, apis.LOCK_DECORATORS[library], d), d, unit,
                    release="finally", scope=(self.line(unit.node), self.unit_end(unit)),
                    blocking=False, wait=0.0, try_lock=True, checked=True), d, None))
                continue
            spec = self._constructor(d)
            if spec is None or spec.api.kind != "huey-lock":
                continue  # (of the lock objects, only Huey's is also a decorator)
            blocking, wait = self._wait(spec.api, spec.ctor, None)
            found.append((self._make_lock(spec, d, unit, release="with",
                                          scope=(self.line(unit.node), self.unit_end(unit)),
                                          blocking=blocking, wait=wait), d, None))
        return found

    def _wait(self, api: apis.LockApi, ctor: cst.Call,
              acquire: cst.Call | None) -> tuple[bool | None, float | None]:
        """Whether the acquisition waits (None: a wait is given that this module cannot
        read, such as a setting: the tree reads it) and for how many seconds (None: for
        ever)."""
        for call, keyword, pos in ((acquire, "timeout", 0), (acquire, "blocking_timeout", None),
                                   (ctor, api.wait_arg, api.wait_pos)):
            if call is None or keyword is None:
                continue
            value = argument(call, keyword, pos)
            if value is not None:
                if self.eval.is_none(value):
                    return True, None
                number = self.eval.number(value)
                if number is None:
                    return None, None  # set, not known here: never "waits for ever"
                return (True, None) if number < 0 else (number > 0, number)
        if acquire is not None:
            blocking = argument(acquire, "blocking", None)
            if blocking is not None and self.eval.falsy(blocking):
                return False, 0.0
            positional = argument(acquire, None, 0)
            if positional is not None and self.eval.falsy(positional) and \
                    not isinstance(positional, cst.Integer):
                return False, 0.0
        if ctor is not None and api.blocking_arg:
            blocking = argument(ctor, api.blocking_arg, None)
            if blocking is not None and self.eval.falsy(blocking):
                return False, 0.0
        wait = api.wait_default
        return wait is None or wait > 0, wait

    def _make_lock(self, spec: LockSpec, at, unit: Unit, *,
                   release: Release, scope, blocking: bool | None, wait, try_lock=False,
                   checked=None, release_span=None) -> Lock:
        api_name, api, ctor = spec.name, spec.api, spec.ctor
        ttl = None
        if api.ttl_arg or api.ttl_pos is not None:
            value = argument(ctor, api.ttl_arg, api.ttl_pos)
            if value is not None and not self.eval.is_none(value):
                number = self.eval.number(value)
                ttl = number * api.ttl_unit if number is not None else UNKNOWN_TTL
            elif value is None:
                ttl = api.ttl_default
        renewed = bool(api.renew_arg and self.eval.truthy(argument(ctor, api.renew_arg, None)))
        key_node = argument(ctor, api.key_arg, api.key_pos) if (api.key_arg or api.key_pos is not None) else None
        key = self.eval.string(key_node) or (self.code(key_node) if key_node is not None else None)
        if key_node is not None and api.scope == "cluster":
            self.lock_keys[id(at)] = key_node  # for JOB304: what the key is made of
        if passes_kwargs(ctor) and ttl is None and api.stale == "ttl":
            ttl = UNKNOWN_TTL  # passed through **kwargs
        lock = Lock(
            kind=api.kind, scope=api.scope, span=self.span(at), path=key if api.scope == "host" else None,
            key=key if api.scope != "host" else None, ttl_seconds=ttl,
            stale_handling=api.stale if api.scope != "process" else "process",
            blocking=blocking, wait_seconds=wait if blocking else None, api=api_name,
            try_lock=try_lock, result_checked=checked, release=release,
            release_span=release_span, renewed=renewed, scope_lines=scope, function=unit.name,
            ttl_span=self.span(ctor) if ctor is not at else None, session=api.session,
            ttl_slot=self._argument_slot(ctor, api.ttl_arg, api.ttl_pos, api.ttl_unit)
            if api.stale == "ttl" else None)
        self._symbols(unit, lock, ctor, api_name, receiver=spec.receiver, needs=spec.needs,
                      guess=spec.guess)
        return lock

    def _call(self, call: cst.Call, unit: Unit, bindings, calls):
        func = call.func
        names = self.qualified(func)
        kernel = next((apis.KERNEL_LOCK_CALLS[n] for n in names if n in apis.KERNEL_LOCK_CALLS), None)
        if kernel is not None:
            return self._kernel_lock(call, kernel, unit, calls)
        made = self._kernel_partial(call)
        if made is not None:  # lock = partial(fcntl.flock, fd, LOCK_EX | LOCK_NB); lock()
            kernel = next(apis.KERNEL_LOCK_CALLS[n] for n in self.qualified(made.func)
                          if n in apis.KERNEL_LOCK_CALLS)
            return self._kernel_lock(call, kernel, unit, calls, made)
        forwarded = self._forwarded(call) if isinstance(func, (cst.Name, cst.Attribute)) \
            else None
        if forwarded is not None:  # _claim(Job.objects.filter(...)): the chain it makes
            found = self._db_lock(forwarded, unit, calls)
            if found is not None:
                return found
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = func.value
            found = self._db_lock(call, unit, calls)
            if found is not None:
                return found
            if method == "acquire":
                spec = bindings.get(self.code(receiver))
                if spec is None and isinstance(receiver, cst.Call):
                    spec = self._constructor(receiver)
                if spec is not None:
                    return self._acquire(call, receiver, spec, unit, calls)
            if method in ("set", "setnx", "add"):
                found = self._key_lock(call, method, receiver, unit, calls)
                if found is not None:
                    return found
            if method in SQL_EXECUTES or "sqlalchemy.text" in names:
                return self._sql_lock(call, unit, calls)
        if "sqlalchemy.text" in names or "sqlalchemy.sql.text" in names:
            return None
        if not _stdlib(names) and call.args:
            sql = self._sql_argument(call)
            if sql is not None:  # run(cur, "SELECT pg_try_advisory_lock(1)"): semantics
                return self._sql_lock(call, unit, calls, sql)  # keeps it if run executes it
        for name in names:
            if name in apis.LOCK_CONSTRUCTORS and apis.LOCK_CONSTRUCTORS[name].acquires_on_create:
                spec = LockSpec(name, apis.LOCK_CONSTRUCTORS[name], call)
                handle = self._assigned_to(call)
                return (self._make_lock(spec, call, unit, release="process-exit",
                                        scope=(self.line(call), self.unit_end(unit)),
                                        blocking=False, wait=0.0, try_lock=True, checked=True),
                        call, handle)
        if not _stdlib(names) and not any(n in apis.LOCK_CONSTRUCTORS for n in names):
            return self._query_option_lock(call, unit)
        return None

    def _query_option_lock(self, call: cst.Call, unit: Unit):
        """A query builder of the project made with a lock option (``QueryProcessor(...,
        opts={"rowlock": True})``): a row lock, kept by ``semantics`` if the class adds
        ``FOR UPDATE`` when given it."""
        if not class_like(call) or not self._lock_option_given(call):
            return None
        found = self._row_lock(call, unit, called_name(call) or "?", None, None)
        self._symbols(unit, found[0], call, QUERY_OPTION)
        return found

    def _acquire(self, call, receiver, spec: LockSpec, unit: Unit, calls):
        blocking, wait = self._wait(spec.api, spec.ctor, call)
        try_lock = blocking is False
        checked = self._result_checked(call)
        handle = self.code(receiver) if not isinstance(receiver, cst.Call) else None
        release_call = self._release_call(handle, call, calls, ("release",)) if handle else None
        release, release_span, end = self._release_kind(release_call, handle, unit)
        lock = self._make_lock(spec, call, unit, release=release,
                               scope=(self.line(call), end), blocking=blocking, wait=wait,
                               try_lock=try_lock, checked=checked, release_span=release_span)
        if blocking and not call.args and spec.api.blocking_arg == "blocking":
            # acquire(blocking=False) answers: test it and leave
            lock = replace(lock, skip_fix=skip_when_busy(
                self, call, unit.name not in (MODULE, MAIN),
                f"{self.code(call.func)}(blocking=False)", None))
        if isinstance(receiver, cst.Call) and self._statement_expression(call):
            unit.facts.append(CodeFact("handle-dropped", self.span(call),
                                       f"{self.code(receiver.func)}(...).acquire()", lock))
        return lock, call, handle

    def _kernel_partial(self, call: cst.Call) -> cst.Call | None:
        """The kernel lock call a call of a name bound to its ``functools.partial`` makes
        (the partial's arguments, then the call's), in the innermost function that binds
        the name, else the module."""
        if not self.kernel_partials or type(call.func) is not cst.Name:
            return None
        if id(call) in self.partial_calls:
            return self.partial_calls[id(call)]
        name = call.func.value
        scopes = [id(p) for p in self.parents(call) if type(p) is cst.FunctionDef]
        made = next((found for scope in [*scopes, None]
                     if (found := self.kernel_partials.get(scope, {}).get(name)) is not None),
                    None)
        if made is None:
            return None
        try:
            given = cst.Call(func=made.args[0].value, args=[*made.args[1:], *call.args])
        except cst.CSTValidationError:  # (arguments in an order no call could have)
            return None
        self.partial_calls[id(call)] = given
        self._ranges[id(given)] = self._ranges[id(call)]  # (made where it is called)
        return given

    def _kernel_lock(self, call, kind, unit, calls, made: cst.Call | None = None):
        """``made``: the call a partial makes, when ``call`` calls one (its arguments are
        read from it; no fix is offered, as its text is not the call's)."""
        given = made if made is not None else call
        flags = argument(given, "operation", 1) or argument(given, "cmd", 1) or \
            argument(given, "flags", 1)
        flag_names = set()
        if flags is not None:
            for node in [flags, *walk(flags)]:
                flag_names |= self.qualified(node)
        if flag_names & apis.KERNEL_UNLOCK_FLAGS:
            return None
        # flock(fd, flags) with flags a name: the tree reads it (unknown until then)
        blocking = not (flag_names & apis.NONBLOCK_FLAGS) if flag_names else None
        fd = argument(given, "fd", 0) or argument(given, "file", 0)
        fd_text = self.code(fd) if fd is not None else ""
        dropped = fd is not None and any(isinstance(n, cst.Call) and "builtins.open" in
                                         self.qualified(n.func) for n in [fd, *walk(fd)])
        handle = self._handle(fd) if fd is not None else ""
        path = self._opened_path(handle, unit)
        unlock = self._flock_unlock(handle, calls, call)
        release, release_span, end = self._release_kind(unlock, handle, unit)
        skip: tuple[TextEdit, ...] = ()
        flags_text = self.code(flags) if flags is not None else ""
        if blocking and fd is not None and flags_text.startswith("fcntl.") and made is None:
            skip = skip_when_busy(self, call, unit.name not in (MODULE, MAIN),
                                  f"{self.code(call.func)}({fd_text}, {flags_text} | "
                                  f"fcntl.LOCK_NB)",
                                  "BlockingIOError" if kind == "flock"
                                  else "(BlockingIOError, PermissionError)")
        lock = Lock(kind=kind, scope="host", span=self.span(call), path=path,
                    stale_handling="kernel", blocking=blocking, api=next(iter(sorted(
                        n for n in self.qualified(given.func) if n in apis.KERNEL_LOCK_CALLS)), None),
                    try_lock=blocking is False,
                    result_checked=not self._silently_caught(call),
                    release=release if unlock is not None else "process-exit",
                    release_span=release_span, scope_lines=(self.line(call), end),
                    function=unit.name, skip_fix=skip)
        if dropped:
            unit.facts.append(CodeFact("handle-dropped", self.span(call),
                                       "the file object from open() is not kept", lock))
        self._symbols(unit, lock, call, "kernel", read_from=given)
        return lock, call, handle

    def _flock_unlock(self, handle, calls, after):
        """The call that lets the kernel lock on ``handle`` go: an unlock, or closing the
        handle (``os.close(fd)``, ``f.close()``), which drops the process's lock with it —
        not a close in a handler of a ``try`` around the lock (no lock was taken)."""
        for c, by_closing in self._index_of(calls).unlocks.get(handle, ()):
            if c is after or self.line(c) < self.line(after):
                continue
            if not (by_closing and self._on_failure_of(c, after)):
                return c
        return None

    def _index_of(self, calls: list) -> CallIndex:
        """The releases among a unit's calls, found once: every call site of the unit asks
        for the release of what it holds or is handed."""
        found = self._call_indexes.get(id(calls))
        if found is None or found.calls is not calls:
            found = self._call_indexes[id(calls)] = CallIndex(calls)
            for c in calls:
                func = c.func
                if type(func) is cst.Attribute and func.attr.value in RELEASE_METHODS:
                    found.methods.setdefault(self.code(func.value), []).append(c)
                released = self._released_handle(c)
                if released is not None:
                    found.unlocks.setdefault(released[0], []).append((c, released[1]))
        return found

    def _let_go_handles(self, calls) -> set[str]:
        """The file handles whose kernel lock these calls let go of."""
        return set(self._index_of(calls).unlocks)

    def _released_handle(self, c: cst.Call) -> tuple[str, bool] | None:
        """The handle whose kernel lock a call lets go of, and whether by closing it:
        ``flock(fh, LOCK_UN)`` (or a partial of it called); ``fh.close()``, ``os.close(fd)``."""
        c = self._kernel_partial(c) or c
        names = self.qualified(c.func)
        if names & set(apis.KERNEL_LOCK_CALLS):
            flags, fd = argument(c, None, 1), argument(c, None, 0)
            if flags is not None and fd is not None and any(
                    self.qualified(n) & apis.KERNEL_UNLOCK_FLAGS for n in [flags, *walk(flags)]):
                return self._handle(fd), False
            return None
        if "os.close" in names:
            fd = argument(c, "fd", 0)
            return (self._handle(fd), True) if fd is not None else None
        if isinstance(c.func, cst.Attribute) and c.func.attr.value == "close" and not c.args:
            return self.code(c.func.value), True
        return None

    def _handle(self, fd) -> str:
        """A file object or descriptor as written, ``fh.fileno()`` read as ``fh``."""
        return re.sub(r"\.fileno\(\)$", "", self.code(fd))

    def _on_failure_of(self, node, call) -> bool:
        """``node`` never runs after a ``call`` that succeeded: it is in a handler of a
        ``try`` the call is in (closing the file there lets go of nothing: no lock was
        taken)."""
        child = node
        for parent in self.parents(node):
            if isinstance(parent, (cst.FunctionDef, cst.Module)):
                return False
            if isinstance(parent, cst.Try) and isinstance(child, cst.ExceptHandler) and (
                    contains(parent.body, call) or
                    any(contains(h, call) for h in parent.handlers) or
                    parent.orelse is not None and contains(parent.orelse, call)):
                return True  # (a handler never runs after another, nor after ``else``)
            child = parent
        return False

    def _opened_path(self, handle: str, unit: Unit) -> str | None:
        """The path of ``handle = open(PATH, ...)`` (or ``with open(PATH) as handle``)."""
        return self.opened.get(handle)

    def _key_lock(self, call, method, receiver, unit, calls):
        """Redis ``SET NX``/``SETNX`` and Django ``cache.add``: a key whose existence locks."""
        pending: dict = {}
        watched = method == "set" and self._watched(receiver, argument(call, "name", 0), call,
                                                    calls)
        if method == "set" and not watched:
            nx = argument(call, "nx", None)
            if nx is None or self.eval.falsy(nx):
                return None
            if not self.eval.truthy(nx):  # set(..., nx=nx): semantics reads what it is given
                pending["condition"] = self.sym.value(nx, unit)
        kind = self._receiver_kind(receiver)
        if kind is None:  # the type of the receiver is for ``semantics`` to tell
            cache = method == "add" or self._looks_like_cache(receiver)
            kind = "django-cache" if cache else "redis"
            pending.update(
                receiver=self.sym.value(receiver, unit),
                needs=frozenset({kind}) if cache else frozenset({"redis", "django-cache"}),
                guess=self._looks_like_cache(receiver) if cache else (
                    self._looks_like_redis(receiver) or self._looks_like_cache(receiver)))
        redis = kind == "redis"
        if method == "add" and redis:
            return None
        if self._caches_data(call, method):
            return None
        ex_at = 2 if method == "set" else None  # redis: set(name, value, ex=None, px=None, ...)
        key_node = argument(call, "key", 0) or argument(call, "name", 0)
        key = self.eval.string(key_node) or (self.code(key_node) if key_node is not None else "?")
        if key_node is not None:
            self.lock_keys[id(call)] = key_node
        ttl = None
        if redis:
            ex, px = argument(call, "ex", ex_at), argument(call, "px", None)
            if ex is not None:
                ttl = self.eval.number(ex)
                ttl = UNKNOWN_TTL if ttl is None and not self.eval.is_none(ex) else ttl
            elif px is not None:
                number = self.eval.number(px)
                ttl = number / 1000 if number is not None else (
                    None if self.eval.is_none(px) else UNKNOWN_TTL)
            at = next((a for a in (argument(call, "exat", None), argument(call, "pxat", None))
                       if a is not None and not self.eval.is_none(a)), None)
            if at is not None:
                ttl = UNKNOWN_TTL  # an expiry at an absolute time: set, its length unknown
            elif ex is None and px is None:
                expire = self._following_expire(receiver, key_node, call, calls)
                ttl = expire
        else:
            timeout = argument(call, "timeout", 2)
            if timeout is None:
                ttl = 300.0  # Django's default cache TIMEOUT
            elif not self.eval.is_none(timeout):
                ttl = self.eval.number(timeout)
                ttl = UNKNOWN_TTL if ttl is None else ttl
        if passes_kwargs(call) and ttl is None:
            ttl = UNKNOWN_TTL
        receiver_text = self.code(receiver)
        delete = self._key_release(receiver_text, key_node, call, calls)
        release, release_span, end = self._release_kind(delete, None, unit)
        if ttl is None and delete is None and self._stores_data(call) and \
                self._reads_key(receiver_text, key_node, calls):
            return None  # get-or-create: a value stored for good and read back, not a lock
        api = f"{'redis' if redis else 'cache'}.{method}"
        if not redis:
            slot = self._argument_slot(call, "timeout", 2)
        elif argument(call, "px", None) is not None:
            slot = self._argument_slot(call, "px", None, 0.001)
        else:  # (a TTL a later expire() sets is not this call's to change)
            slot = self._argument_slot(call, "ex", ex_at) if ttl is None or \
                argument(call, "ex", ex_at) is not None else None
        lock = Lock(kind="redis-key" if redis else "cache-key", scope="cluster",
                    span=self.span(call), key=key, ttl_seconds=ttl, stale_handling="ttl",
                    blocking=False, api=api, try_lock=True,
                    result_checked=self._result_checked(call), release=release,
                    release_span=release_span, scope_lines=(self.line(call), end),
                    function=unit.name, ttl_slot=slot)
        self._symbols(unit, lock, call, api, **pending)
        return lock, call, None

    def _caches_data(self, call, method: str) -> bool:
        """A key written only if absent as a cache of data, not a lock: its answer dropped
        (the call is a statement of its own) and the key stores data (``_stores_data``):
        ``cache.add(key, sorted(locales), 3600)``."""
        return isinstance(self._parent.get(call), cst.Expr) and self._stores_data(call)

    def _stores_data(self, call) -> bool:
        """The key names no lock (``lock``, ``running``, ``busy`` …) and is given a computed
        value rather than a marker (a literal, a PID, a host name, a time, a UUID)."""
        key = argument(call, "key", 0) or argument(call, "name", 0)
        value = argument(call, "value", 1)
        key_text = (self.eval.string(key) or self.code(key)) if key is not None else ""
        if _LOCK_WORDS.search(key_text) or value is None:
            return False
        marker = self.eval.number(value) is not None or self.eval.string(value) is not None \
            or (isinstance(value, cst.Name) and value.value in ("True", "False")) or (
                isinstance(value, cst.Call) and bool(self.qualified(value.func) & _TOKENS))
        return not marker

    def _reads_key(self, receiver_text: str, key_node, calls) -> bool:
        """The function reads the key's value (``r.get(key)``) from the same client."""
        return key_node is not None and any(
            isinstance(c.func, cst.Attribute) and c.func.attr.value == "get" and c.args and
            self.code(c.func.value) == receiver_text and self._same_key(c.args[0].value, key_node)
            for c in calls)

    def _watched(self, receiver, key_node, call, calls) -> bool:
        """A pipeline that watched the key before setting it (``pipe.watch(k)``, read,
        ``pipe.multi()``, ``pipe.set(k, ...)``, ``pipe.execute()``): the transaction fails
        when another client set the key meanwhile — Redis's optimistic check-and-set, a
        lock on the key as sure as ``SET NX``."""
        if key_node is None:
            return False
        text = self.code(receiver)
        return any(self.line(c) < self.line(call) and isinstance(c.func, cst.Attribute) and
                   c.func.attr.value == "watch" and self.code(c.func.value) == text and
                   any(self._same_key(a.value, key_node) for a in c.args) for c in calls)

    def _following_expire(self, receiver, key_node, call, calls) -> float | None:
        receiver_text = self.code(receiver)
        for c in calls:
            if self.line(c) < self.line(call) or not isinstance(c.func, cst.Attribute):
                continue
            if c.func.attr.value in ("expire", "pexpire") and self.code(c.func.value) == receiver_text:
                if key_node is None or (c.args and self._same_key(c.args[0].value, key_node)):
                    number = self.eval.number(argument(c, "time", 1))
                    if number is not None and c.func.attr.value == "pexpire":
                        number /= 1000
                    return number if number is not None else UNKNOWN_TTL
        return None

    def _same_key(self, a, b) -> bool:
        """Two key expressions that name the same key (a constant and its literal too)."""
        return (self.eval.string(a) or self.code(a)) == (self.eval.string(b) or self.code(b))

    def _key_release(self, receiver_text, key_node, call, calls):
        for c in calls:
            if self.line(c) < self.line(call) or not isinstance(c.func, cst.Attribute):
                continue
            if c.func.attr.value in ("delete", "unlink") and self.code(c.func.value) == receiver_text \
                    and (key_node is None or (c.args and self._same_key(c.args[0].value, key_node))):
                return c
        return None

    def _sql_text(self, node) -> str | None:
        """The SQL an argument carries: a string, ``text("...")``, ``select(func.…)``, a
        template filled by ``format`` (psycopg2's ``SQL("LOCK {}").format(Identifier(t))``)."""
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value == "format":
            template = self._sql_text(node.func.value)
            words = [re.sub(r"\W+", "_", self.code(_wrapped(a.value))).strip("_") or "_"
                     for a in node.args if a.keyword is None and not a.star]
            filled = iter(words)
            return re.sub(r"\{\d*\}", lambda _: next(filled, "_"), template) \
                if template else None
        sql = self.eval.string(node)
        if sql is None and isinstance(node, cst.Name):  # query = """...""" above, in the function
            bound = self._local_chain(node)
            sql = self.eval.string(bound) if bound is not None else None
        if sql is None and isinstance(node, cst.Call) and node.args:
            sql = self.eval.string(node.args[0].value)  # execute(text("..."))
        return sql if sql is not None else self._sql_function(node)

    def _sql_argument(self, call: cst.Call) -> str | None:
        """SQL text that takes a lock (an advisory lock, a row lock), given to a project
        call (a helper that runs it)."""
        for arg in call.args:
            if isinstance(arg.value, (cst.SimpleString, cst.ConcatenatedString, cst.Call,
                                      cst.Name, cst.Attribute)):
                sql = self._sql_text(arg.value)
                if sql and (_SQL_LOCK_CALL.search(sql.lower()) or FOR_UPDATE.search(sql)):
                    return sql
        return None

    def _sql_lock(self, call, unit, calls, helper_sql: str | None = None):
        """A lock taken by SQL text that ``call`` executes, or hands to a project helper
        (``helper_sql``: semantics keeps it when the helper executes it)."""
        sql = helper_sql
        for arg in call.args[:1] if helper_sql is None else ():
            sql = self._sql_text(arg.value)
        if not sql:
            return None
        lowered = sql.lower()
        for function, (session, blocking) in apis.SQL_LOCKS.items():
            m = re.search(rf"\b{function}\s*\(([^)]*)\)", lowered)
            if not m:
                continue
            wait = None
            if function == "get_lock":
                parts = m.group(1).split(",")
                wait = _float(parts[1]) if len(parts) > 1 else None
                blocking = wait is None or wait < 0 or wait > 0
                if wait is not None and wait < 0:
                    wait = None
            unlock = next((c for c in calls if self.line(c) > self.line(call) and c is not call and
                           re.search(r"advisory_unlock|release_lock",
                                     self.code(c).lower())), None)
            release, release_span, end = self._release_kind(unlock, None, unit)
            if not session:
                release = "transaction"
            pooled, pool = self._pooled_checkout(call, unlock, unit) if session else (None, {})
            lock = Lock(kind="pg-advisory" if function.startswith("pg_") else "mysql-get-lock",
                        scope="cluster", span=self.span(call), key=m.group(1).strip() or None,
                        stale_handling="session", blocking=blocking, wait_seconds=wait,
                        api=function, try_lock=not blocking or (wait is not None and wait < 60),
                        result_checked=self._result_checked(call) or self._fetched(call, calls),
                        release=release,
                        release_span=release_span, scope_lines=(self.line(call), end),
                        function=unit.name, session=session, pooled=pooled)
            if blocking and helper_sql is None:
                lock = replace(lock, skip_fix=try_advisory_lock(
                    self, call, unit.name not in (MODULE, MAIN)))
            if pool or helper_sql is not None:
                self._symbols(unit, lock, call, "sql" if helper_sql is None else SQL_HELPER,
                              **pool)
            return lock, call, None
        found = self._sql_db_lock(call, sql, unit, calls)
        if found is not None and helper_sql is not None:  # kept if the helper runs it
            chosen = next((self._wait_chosen_by(arg.value, call, unit) for arg in call.args
                           if isinstance(arg.value, cst.Name)), None)
            self._symbols(unit, found[0], call, SQL_HELPER, waits_when=chosen)
        return found

    def _wait_chosen_by(self, name: cst.Name, call, unit: Unit) -> tuple[Param, bool] | None:
        """``if wait: sql = "... FOR UPDATE" else: sql = "... SKIP LOCKED"``, then the call
        runs ``sql``: the parameter that picks how the lock waits, and whether it waits
        when the parameter is true."""
        if not isinstance(unit.node, cst.FunctionDef):
            return None
        line = self.line(call)
        modes: dict[tuple[Param, bool], bool] = {}
        for node in self._unit_nodes(unit.node):
            if type(node) is not cst.Assign or self.line(node) >= line or \
                    not any(isinstance(t.target, cst.Name) and t.target.value == name.value
                            for t in node.targets):
                continue
            condition, sql = self._param_condition(node, unit), self.eval.string(node.value)
            if condition is None or sql is None:
                return None
            modes[condition] = not _NO_WAIT.search(sql)
        params = {param for param, _ in modes}
        if len(params) != 1 or len(set(modes.values())) != 2:
            return None
        param = params.pop()
        waits_when_true = modes.get((param, False))
        return param, waits_when_true if waits_when_true is not None else \
            not modes[param, True]

    def _sql_function(self, node) -> str | None:
        """SQLAlchemy's ``func.pg_advisory_xact_lock(...)`` inside a statement, as the SQL
        it renders (``select(func.pg_try_advisory_lock(42))``)."""
        for n in [node, *walk(node)]:
            if type(n) is cst.Call and type(n.func) is cst.Attribute and \
                    n.func.attr.value in apis.SQL_LOCKS and \
                    self.code(n.func.value).rsplit(".", 1)[-1] == "func":
                args = ", ".join(self.code(a.value) for a in n.args)
                return f"select {n.func.attr.value}({args})"
        return None

    def _pooled_checkout(self, call, unlock, unit):
        """The ``with engine.connect()``/``pool.connection()`` block a session lock is taken
        in, when the block hands the connection back to the pool with the lock still held
        (no unlock inside it): (its span, None) when this module tells the receiver is an
        engine or a pool, (None, symbols) when only ``semantics`` can."""
        for parent in self.parents(call):
            if not isinstance(parent, cst.With):
                continue
            for item in parent.items:
                checkout = item.item
                if not (isinstance(checkout, cst.Call) and isinstance(checkout.func, cst.Attribute)
                        and checkout.func.attr.value in _CHECKOUTS):
                    continue
                if unlock is not None and self.line(unlock) <= self.end_line(parent):
                    return None, {}
                receiver = checkout.func.value
                made_by = self.client_kinds.get(self.code(receiver), set())
                if any(apis.LIBRARY_CALLS.get(q) in ("db-engine", "db-pool") for q in made_by):
                    return self.span(checkout), {}
                return None, dict(pool=self.sym.value(receiver, unit),
                                  pool_span=self.span(checkout),
                                  pool_guess=_is_pool_checkout(self.code(receiver).lower(),
                                                               checkout.func.attr.value))
        return None, {}

    def _writes_pid(self, call: cst.Call, unit: Unit) -> bool:
        """The statement that creates a file writes the process id into it."""
        pid_names = frozenset(
            n.targets[0].target.value for n in self._nodes_of(unit)
            if type(n) is cst.Assign and len(n.targets) == 1 and
            isinstance(n.targets[0].target, cst.Name) and "getpid" in self.code(n.value))
        return _reads_pid(self.code(self._statement(call)), pid_names)

    def _path_effects(self, name: str, receiver: tuple[str, str] | None,
                      depth: int = 0) -> PathEffects:
        """A function's effects on lock-file paths that mean the same to its callers (an
        attribute of the object, a constant), through the functions of the module it calls.
        ``receiver``: (the name the object has in it, its class) -- ``self`` in a method, a
        parameter a caller passes ``self`` to."""
        memo = self._effects_memo
        key = (name, receiver)
        if key in memo:
            return memo[key]
        memo[key] = _NO_EFFECTS  # (recursion)
        unit = self.sym.units.get(name)
        if unit is None or unit.name == MODULE or depth > 3:
            return _NO_EFFECTS

        def shared(path: str | None) -> str | None:
            if path is not None and receiver is not None and path.startswith(f"{receiver[0]}."):
                path = "self." + path[len(receiver[0]) + 1:]
            return path if path is not None and (_shared_path(path) or
                                                 path in self._pid_stores()) else None

        calls = [n for n in self._nodes_of(unit) if type(n) is cst.Call]
        effects = PathEffects(set(), {}, set(), set())
        for call in calls:
            tested = shared(self._existence_checked(call))
            if tested is not None:
                effects.tests.add(tested)
            created = self._creation(call)
            if created is not None and (path := shared(created[0])) is not None:
                effects.creates[path] = created[1]
                if self._writes_pid(call, unit):
                    effects.writes_pid.add(path)
            inner = self._call_effects(call, unit, receiver, depth + 1)
            effects.tests |= inner.tests
            effects.removes |= inner.removes
            effects.writes_pid |= inner.writes_pid
            for made, atomic in inner.creates.items():
                effects.creates.setdefault(made, atomic)
        effects.removes |= {p for p in map(shared, self._removed_paths(calls)) if p}
        memo[key] = effects
        return effects

    def _call_effects(self, call: cst.Call, unit: Unit, receiver: tuple[str, str] | None = None,
                      depth: int = 0) -> PathEffects:
        """The path effects of a call of one of the module's functions: ``self.m()`` (a
        method of the object's class) or ``f(self)``/``f()``."""
        if receiver is None and "." in unit.name:
            receiver = ("self", unit.name.split(".")[0])
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and \
                receiver is not None and func.value.value == receiver[0]:
            name, inner = f"{receiver[1]}.{func.attr.value}", ("self", receiver[1])
        elif isinstance(func, cst.Name):
            name, inner = func.value, None
            callee = self.sym.units.get(name)
            at = next((i for i, a in enumerate(call.args) if a.keyword is None and
                       isinstance(a.value, cst.Name) and receiver is not None and
                       a.value.value == receiver[0]), None)
            if at is not None and receiver is not None and callee is not None and \
                    isinstance(callee.node, cst.FunctionDef):
                params = callee.node.params.params
                if at < len(params):
                    inner = (params[at].name.value, receiver[1])  # f(self): the object, renamed
        else:
            return _NO_EFFECTS
        if name not in self.sym.units or name == unit.name:
            return _NO_EFFECTS
        return self._path_effects(name, inner, depth)

    def _lock_files(self, unit: Unit, nodes, calls):
        """Lock/pid files and lock directories managed by hand (JOB201/JOB202), also when
        the test, the creation and the removal are functions of the module it calls."""
        if unit.name not in (MODULE, MAIN):  # what it does to lock paths, for other modules
            own = self._path_effects(unit.name, ("self", unit.name.split(".")[0])
                                     if "." in unit.name else None)
            unit.path_effects = replace(own, stale=self._stale_handling()) \
                if own.tests or own.creates or own.removes else None
        checks: dict[str, cst.Call] = {}
        effects = {id(call): self._call_effects(call, unit) for call in calls}
        for call in calls:
            path = self._existence_checked(call)
            if path and self._check_stops(call, path):
                checks.setdefault(path, call)
            for tested in sorted(effects[id(call)].tests):  # if self.check_lock(): exit
                if self._check_stops(call, tested):
                    checks.setdefault(tested, call)
        for call in calls:  # what callers need: the paths it may create, the SQL it runs
            creator = bool(self.qualified(call.func) & PATH_CREATORS)
            if creator or not _stdlib(self.qualified(call.func)):
                value = self.sym.value(call, self.unit_at(call))
                if isinstance(value, Call) and (
                        isinstance(value.arg(None, 0), Param) if creator else
                        executed_sql(value) is not None or
                        project_candidate(value.func) and
                        (any(isinstance(v, Param) for _, v in value.args) or
                         isinstance(value.func, Attr) and isinstance(value.func.base, Param))):
                    unit.param_calls.append(value)
        stale = self._stale_handling()
        found = []
        seen = set()
        creations = [(call, self._creation(call)) for call in calls]
        # a function of the module that tests and creates a path is a lock itself: a later
        # write of the path (``self.write_lock()`` while it is held) is no second lock
        locked: dict[str, int] = {}
        for call in calls:
            for path in effects[id(call)].creates.keys() & effects[id(call)].tests:
                locked.setdefault(path, self.line(call))
        for call in calls:  # self.write_lock(): created by a function of the module
            for path, atomic in sorted(effects[id(call)].creates.items()):
                if path not in locked or locked[path] > self.line(call):
                    creations.append((call, (path, atomic)))
        created_paths = {c[0] for _, c in creations if c is not None}
        removed = self._removed_paths(calls, effects)
        tested_or_removed = bool(checks) or bool(removed)
        for call, created in creations:
            helper = created is None and tested_or_removed and \
                self._helper_creation(call, checks, removed, created_paths)
            if helper:
                created = helper
            if created is None or created[0] is None:
                continue  # nothing created, or a path that cannot be read
            path, atomic = created[0], created[1]
            if path in seen and not helper:
                continue
            check = checks.get(path)
            check_before = check is not None and self.line(check) <= self.line(call)
            # (a helper's creation may turn out atomic: semantics keeps it only if it is)
            guarded = (atomic or bool(helper)) and (self._exception_checked(call) or
                                                    self._in_if_test(call))
            removal = self._removal(path, call, calls)
            writes_pid = self._writes_pid(call, unit) or path in effects[id(call)].writes_pid
            # a lock, not just "do not overwrite": a lock-like name, a PID in it, or removal
            looks_like_lock = bool(apis.LOCKISH_PATH.search(path)) or removal is not None or \
                writes_pid
            if not ((check_before or guarded) and looks_like_lock):
                continue
            seen.add(path)
            release, release_span, end = self._release_kind(removal, path, unit)
            taken_over = any(self.line(c) < self.line(call) and self._removes(c, path) for c in calls)
            kind: LockKind = "lock-dir" if "mkdir" in self.code(call.func) else (
                "pid-file" if writes_pid or path.endswith(".pid") else "lock-file")
            lock = Lock(kind=kind, scope="host", span=self.span(call), path=path,
                        stale_handling="removed-first" if taken_over else stale, blocking=False,
                        existence_test=self.span(check) if check_before and not atomic else None,
                        atomic=atomic, api=self.code(call.func), try_lock=True,
                        result_checked=True, release=release, release_span=release_span,
                        scope_lines=(self.line(call), end), function=unit.name,
                        # a file only its name calls a lock
                        confidence=Confidence.HIGH if removal is not None or writes_pid
                        else Confidence.LOW)
            if helper:  # semantics confirms the helper creates the path (or drops the lock)
                self._symbols(unit, lock, call, PATH_HELPER)
            found.append((lock, call, path))
        return found

    def _pids_under_kernel_locks(self, unit: Unit, acquisitions, calls):
        """A PID written into a file while a kernel lock on it is held, the file closed
        before the function returns (dnf's ``ProcessLock``): the short lock only makes the
        read-and-write atomic; the PID left in the file is the lock the caller holds. The
        kernel lock may be a project helper's, given the handle (``semantics`` confirms)."""
        kernel = {handle: lock for lock, _, handle in acquisitions
                  if lock.kind in ("flock", "lockf") and handle}
        found = []
        for write in calls:
            handle = self._pid_written_to(write)
            path = self.opened.get(handle) if handle else None
            if handle is None or path is None:
                continue
            closed = any(self.line(c) >= self.line(write) and
                         self._released_handle(c) == (handle, True) and
                         not self._on_failure_of(c, write) for c in calls)
            held = kernel.get(handle)
            helper = None
            if held is None or held.scope_lines is None or \
                    held.release not in ("finally", "plain") or \
                    not held.scope_lines[0] <= self.line(write) <= held.scope_lines[1]:
                held = None
                helper = next((c for c in calls if self.line(c) < self.line(write) and
                               not _stdlib(self.qualified(c.func)) and any(
                                   self.code(a.value) == handle for a in c.args)), None)
            if not closed or (held is None and helper is None):
                continue
            removal = self._removal(path, write, calls)
            release, release_span, end = self._release_kind(removal, path, unit)
            lock = Lock(
                kind="pid-file", scope="host", span=self.span(write), path=path,
                stale_handling=self._stale_handling(), blocking=False, existence_test=None,
                atomic=True, api=self.code(write.func), try_lock=True, result_checked=True,
                release=release, release_span=release_span,
                scope_lines=(self.line(write), end), function=unit.name,
                confidence=Confidence.MEDIUM)
            if helper is not None:  # kept if the helper locks the handle it is given
                self._symbols(unit, lock, helper, PID_UNDER_HELPER)
            found.append((lock, write, None))
            break  # (one lock per function: a second write is the same PID, rewritten)
        return found

    def _pid_written_to(self, c: cst.Call) -> str | None:
        """The handle a call writes a process id to: ``os.write(fd, str(pid).encode())``,
        ``f.write(str(os.getpid()))``."""
        if "os.write" in self.qualified(c.func):
            fd, data = argument(c, "fd", 0), argument(c, "data", 1)
        elif isinstance(c.func, cst.Attribute) and c.func.attr.value == "write" and c.args:
            fd, data = c.func.value, c.args[0].value
        else:
            return None
        if fd is None or data is None or not self._pid_value(data):
            return None
        return self._handle(fd)

    def _pid_value(self, node, depth: int = 0) -> bool:
        """Whether a value is this process's id: ``os.getpid()`` in it, a local bound to
        one, or a parameter every call of the function in the module is given one for
        (``_try_lock(self, pid)`` called as ``self._try_lock(os.getpid())``); a name that
        says pid when nothing in the module tells (a caller in another module)."""
        if "getpid" in self.code(node):
            return True
        if depth > 3:
            return False
        for name in (n for n in [node, *walk(node)] if isinstance(n, cst.Name)):
            bound = self._local_chain(name)
            if bound is not None:
                if self._pid_value(bound, depth + 1):
                    return True
                continue
            unit = self.unit_at(name)
            if name.value not in unit.params or not isinstance(unit.node, cst.FunctionDef):
                continue
            given = self._given_for(unit, name.value)
            if given and all(self._pid_value(v, depth + 1) for v in given):
                return True
            if not given and _PID_NAME.fullmatch(name.value):
                return True
        return False

    def _given_for(self, unit: Unit, param: str) -> list:
        """The values the module's calls of a function (``f(..)``, ``self.m(..)``) pass
        for one of its parameters (given by position or by keyword)."""
        method = "." in unit.name
        short = unit.name.rsplit(".", 1)[-1]
        at = unit.params.index(param) - (1 if method and unit.params[:1] == ("self",) else 0)
        if at < 0:
            return []  # self
        given = []
        for c in self.order:
            if type(c) is not cst.Call:
                continue
            func = c.func
            if method and not (isinstance(func, cst.Attribute) and func.attr.value == short and
                               isinstance(func.value, cst.Name) and func.value.value == "self"):
                continue
            if not method and not (isinstance(func, cst.Name) and func.value == short):
                continue
            value = argument(c, param, at)
            if value is not None:
                given.append(value)
        return given

    def _helper_creation(self, call: cst.Call, checks, removed: dict[str, int],
                         created_paths) -> tuple[str, bool] | None:
        """A project call given a path that is tested before it or removed after it, and
        created nowhere else here: the helper may create it (``semantics`` decides)."""
        if _stdlib(self.qualified(call.func)):
            return None  # os.path.exists(p), os.remove(p), print(p) ...
        value = self.sym.value(call, self.unit_at(call))
        if not isinstance(value, Call) or not project_candidate(value.func):
            return None
        for arg in call.args:
            if isinstance(arg.value, (cst.BaseNumber, cst.Lambda)):
                continue
            given = self._path_text(arg.value)
            # take(self): the object whose path (self.lockfile) is tested or removed here
            paths = sorted({*checks, *removed}) if given == "self" else [given]
            for path in paths:
                if path is None or path in created_paths or (
                        given == "self" and not path.startswith("self.")):
                    continue
                check = checks.get(path)
                if check is not None and self.line(check) <= self.line(call):
                    return path, False
                if removed.get(path, -1) >= self.line(call):
                    return path, False
        if not any(self._path_text(a.value) for a in call.args
                   if not isinstance(a.value, (cst.BaseNumber, cst.Lambda))):
            # take(): a call given no path, between a test of one and its removal: a
            # function elsewhere may create it (semantics reads its summary)
            for path, check in sorted(checks.items()):
                if not path.startswith("self.") and path not in created_paths and \
                        self.line(check) <= self.line(call) <= removed.get(path, -1):
                    return path, False
        return None

    def _removed_paths(self, calls, effects=None) -> dict[str, int]:
        """Path -> the last line a call of the unit removes it (itself, or through a
        function of the module: ``self.release_lock()``)."""
        out: dict[str, int] = {}
        for c in calls:
            path = self._removed_path(c)
            paths = {path} if path is not None else \
                effects[id(c)].removes if effects is not None else set()
            for path in paths:
                out[path] = max(out.get(path, -1), self.line(c))
        return out

    def _removed_path(self, c: cst.Call) -> str | None:
        """The path a call removes itself (``os.remove(p)``, ``Path(p).unlink()``)."""
        if self.qualified(c.func) & apis.REMOVERS and c.args:
            return self._path_text(c.args[0].value)
        if isinstance(c.func, cst.Attribute) and c.func.attr.value in ("unlink", "rmdir"):
            return self._path_text(c.func.value)
        return self._pid_store_used(c, _STORE_REMOVALS)

    def _pid_store_written(self, call: cst.Call) -> str | None:
        """The object a process id is written to, when it is no file handle of the module
        (``lock_data_file.write(LockData(lock_pid=str(os.getpid())))``): a store standing for
        a pid file, whose ``read()`` is its test and ``delete()`` its removal."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "write" and call.args and
                isinstance(func.value, (cst.Name, cst.Attribute))):
            return None
        store = self.code(func.value)
        if store in self.opened or not (store.startswith("self.") or
                                        store in self.sym.module_names):
            return None  # a handle of open(), or a local
        return store if self._pid_value(call.args[0].value) else None

    def _pid_stores(self) -> frozenset[str]:
        if self._stores is None:  # (a process id is read by a name that says pid)
            self._stores = frozenset(
                store for node in self.order if type(node) is cst.Call
                for store in [self._pid_store_written(node)] if store is not None) \
                if "pid" in self.module_text else frozenset()
        return self._stores

    def _pid_store_used(self, call: cst.Call, methods: frozenset[str]) -> str | None:
        """The pid store a call reads or removes (``lock_data_file.read()``)."""
        func = call.func
        if type(func) is cst.Attribute and func.attr.value in methods and \
                isinstance(func.value, (cst.Name, cst.Attribute)):
            store = self.code(func.value)
            if store in self._pid_stores():
                return store
        return None

    def _existence_checked(self, call: cst.Call) -> str | None:
        names = self.qualified(call.func)
        if names & apis.EXISTENCE_CHECKS and call.args:
            return self._path_text(call.args[0].value)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in apis.PATH_METHODS_EXIST:
            return self._path_text(call.func.value)
        return self._pid_store_used(call, _STORE_READS)

    def _check_stops(self, call: cst.Call, path: str) -> bool:
        """The existence check decides an exit or raise (a lock, not a cache or a stamp).

        A ``return`` counts only for lock-like names, and so does a negated check
        (``if not exists(p): return`` is usually "nothing to do yet").
        """
        for parent in self.parents(call):
            if isinstance(parent, (cst.If, cst.While)):
                if not contains(parent.test, call):
                    return False
                if not self._sole_condition_on(parent.test, call, path):
                    return False  # `exists(d) and not isdir(d)`: validation, not a lock
                return self._stops(parent, path, _negated(parent.test))
            if isinstance(parent, cst.SimpleStatementLine):
                test = self._result_tested(parent, call)
                return test is not None and self._stops(test, path, False)
            if isinstance(parent, cst.FunctionDef):
                return False
        return False

    def _stops(self, test: cst.If | cst.While, path: str, negated: bool) -> bool:
        """The branch a test of the path guards raises or exits (or returns, for a path
        whose name calls it a lock, unless the test is negated)."""
        lockish = bool(apis.LOCKISH_PATH.search(path))
        if negated and not lockish:
            return False
        body = list(walk_unit(test.body))
        if any(isinstance(n, cst.Raise) or self._is_exit_call(n) for n in body):
            return True
        return lockish and any(isinstance(n, cst.Return) for n in body)

    def _result_tested(self, statement: cst.SimpleStatementLine,
                       call: cst.Call) -> cst.If | None:
        """The ``if`` that next tests what a check returned to a name (``pid =
        check_lock()`` ... ``if pid > 0: raise``), in the same block."""
        assign = statement.body[0] if len(statement.body) == 1 else None
        if not isinstance(assign, cst.Assign) or assign.value is not call:
            return None
        names = bound_names(assign.targets)  # (a name or a tuple of them, no attribute)
        block = self._parent.get(statement)
        siblings = list(getattr(block, "body", ()))
        for later in siblings[siblings.index(statement) + 1:] if statement in siblings else ():
            if isinstance(later, cst.If) and names_read(later.test) & names:
                return later
        return None

    def _sole_condition_on(self, test, call, path: str) -> bool:
        """No other part of the condition is about the same path."""
        others = [n for n in walk(test) if isinstance(n, cst.Call) and n is not call
                  and not contains(n, call) and not contains(call, n)]
        return not any(self._path_text(a.value) == path for n in others for a in n.args[:1])

    def _creation(self, call: cst.Call) -> tuple[str | None, bool] | None:
        """The path a call creates (None when not readable) and whether it creates it
        atomically (``O_EXCL``, mode ``x``, ``mkdir``); None when it creates nothing."""
        names = self.qualified(call.func)
        func = call.func
        if names & {"builtins.open", "io.open"}:
            mode = self.eval.string(argument(call, "mode", 1)) or "r"
            if "x" in mode:
                return self._path_text(argument(call, "file", 0)), True
            if "w" in mode or "a" in mode:
                return self._path_text(argument(call, "file", 0)), False
            return None
        if "os.open" in names:
            flags = argument(call, "flags", 1)
            flag_names = set()
            for node in ([flags, *walk(flags)] if flags is not None else []):
                flag_names |= self.qualified(node)
            if "os.O_CREAT" not in flag_names:
                return None
            return self._path_text(argument(call, "path", 0)), "os.O_EXCL" in flag_names
        if "os.mkdir" in names:
            exist_ok = argument(call, "exist_ok", None)
            return self._path_text(argument(call, "name", 0)), not self.eval.truthy(exist_ok)
        store = self._pid_store_written(call)
        if store is not None:
            return store, False
        if isinstance(func, cst.Attribute) and func.attr.value in ("touch", "mkdir", "write_text") \
                and self._is_path(func.value):
            exist_ok = argument(call, "exist_ok", None)
            atomic = func.attr.value in ("touch", "mkdir") and exist_ok is not None and \
                self.eval.falsy(exist_ok) if func.attr.value == "touch" else \
                func.attr.value == "mkdir" and not self.eval.truthy(exist_ok)
            return self._path_text(func.value), atomic
        return None

    def _is_path(self, node) -> bool:
        if isinstance(node, cst.Call):
            return bool(self.qualified(node.func) & {"pathlib.Path", "pathlib.PurePath",
                                                     "pathlib.PosixPath"})
        text = self.code(node)
        return "path" in text.lower() or "lock" in text.lower() or "pid" in text.lower()

    def _removal(self, path, after, calls):
        for c in calls:
            if self.line(c) >= self.line(after) and c is not after and self._removes(c, path):
                return c
        return None

    def _removes(self, c: cst.Call, path: str) -> bool:
        return self._removed_path(c) == path or \
            path in self._call_effects(c, self.unit_at(c)).removes  # self.release_lock()

    def _stale_handling(self) -> StaleHandling:
        if self._stale is None:
            self._stale = self._find_stale_handling()
        return self._stale

    def _find_stale_handling(self) -> StaleHandling:
        for node in self.order:
            if type(node) is not cst.Call:
                continue
            names = self.qualified(node.func)
            if "os.kill" in names:
                sig = argument(node, None, 1)
                if sig is not None and self.code(sig) in ("0", "signal.SIG_DFL"):
                    return "pid-check"
            if names & {"psutil.pid_exists", "psutil.Process"} or any(
                    _PID_CHECKER.search(n.rsplit(".", 1)[-1]) for n in names):
                return "pid-check"  # (a project's own pid_exists(), process_alive() ...)
            if names & (apis.EXISTENCE_CHECKS | {"os.access"}) and "/proc/" in self.code(node):
                return "pid-check"  # os.access(f"/proc/{pid}/stat", os.F_OK)
            if any(_runs_ps(arg.value) for arg in node.args[:1]):
                return "pid-check"  # subprocess.run(["ps", "-p", pid]), a project's subp()
            if names & apis.AGE_CHECKS or (isinstance(node.func, cst.Attribute) and
                                           node.func.attr.value == "stat" and
                                           "st_mtime" in self.module_text):
                return "age-check"
        return "none"

    def _release_call(self, handle, after, calls, methods):
        """The first ``handle.<method>()`` from ``after`` on (methods: of ``RELEASE_METHODS``)."""
        for c in self._index_of(calls).methods.get(handle, ()):
            if c is after or self.line(c) < self.line(after):
                continue
            if c.func.attr.value in methods:
                return c
        return None

    def _fetched(self, call, calls) -> bool:
        """``cur.execute("select pg_try_advisory_lock(1)")`` then ``cur.fetchone()`` (or
        ``run(cur, SQL)`` then ``cur.fetchone()``)."""
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in SQL_EXECUTES:
            receivers = {self.code(call.func.value)}
        else:  # a helper given the cursor
            receivers = {a.value.value for a in call.args if isinstance(a.value, cst.Name)}
        return any(isinstance(c.func, cst.Attribute) and c.func.attr.value.startswith(
            ("fetch", "scalar", "first", "one")) and self.code(c.func.value) in receivers
            and self.line(c) >= self.line(call) for c in calls if c is not call)

    def _statement(self, node):
        for parent in self.parents(node):
            if isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return parent
        return node

    def _statement_expression(self, call) -> bool:
        parent = self._parent.get(call)
        return isinstance(parent, cst.Expr)

    def _result_checked(self, call) -> bool:
        """Whether a try-lock's result decides what happens next."""
        parent = self._parent.get(call)
        if isinstance(parent, cst.Expr):
            return self._exception_checked(call)
        return True

    def _silently_caught(self, call) -> bool:
        """Inside a ``try`` whose every handler only passes: failure is ignored."""
        for parent in self.parents(call):
            if type(parent) is cst.Try:
                return bool(parent.handlers) and not self._exception_checked(call)
            if type(parent) is cst.FunctionDef:
                return False
        return False

    def _exception_checked(self, call) -> bool:
        """Inside a ``try`` whose handlers do something other than ``pass``."""
        for parent in self.parents(call):
            if type(parent) is cst.Try:
                for handler in parent.handlers:
                    body = handler.body.body
                    silent = all(isinstance(s, cst.SimpleStatementLine) and
                                 all(isinstance(x, (cst.Pass, cst.Expr)) and
                                     (isinstance(x, cst.Pass) or isinstance(x.value, cst.Ellipsis))
                                     for x in s.body) for s in body)
                    if not silent:
                        return True
                return False
            if type(parent) is cst.FunctionDef:
                return False
        return False

    def _in_if_test(self, call) -> bool:
        for parent in self.parents(call):
            if isinstance(parent, (cst.If, cst.While)):
                return contains(parent.test, call)
            if isinstance(parent, (cst.SimpleStatementLine, cst.FunctionDef)):
                return False
        return False



#: methods that check a connection out of an engine or a pool
_CHECKOUTS = ("connect", "begin", "connection", "getconn", "acquire")


def _is_pool_checkout(receiver: str, method: str) -> bool:
    """SQLAlchemy engines pool connections (``engine.connect()``/``begin()``); psycopg_pool
    and other pools hand them out with ``connection()``/``getconn()``."""
    if method in ("connect", "begin"):
        return "engine" in receiver
    return method in ("connection", "getconn", "acquire") and "pool" in receiver


#: SQL that takes a lock: an advisory lock function call
_NO_WAIT = re.compile(r"\bnowait\b|\bskip\s+locked\b", re.I)
_SQL_LOCK_CALL = re.compile(r"\b(?:%s)\s*\(" % "|".join(map(re.escape, apis.SQL_LOCKS)))


def _float(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def _stdlib(names: set[str]) -> bool:
    """A call of the standard library (``os.remove``, ``print``), by its dotted names."""
    return any(name.split(".", 1)[0] in sys.stdlib_module_names for name in names)


#: a parameter's name that says it holds a process id (``pid``, ``my_pid``)
_PID_NAME = re.compile(r"(?:\w+_)?pid")
#: words of a key that name a lock or a run in progress (``sync-lock``, ``job:running``)
_LOCK_WORDS = re.compile(r"(?i)lock|mutex|semaphore|running|in.?progress|busy|singleton|"
                         r"\bonce\b|guard")
#: values that say who holds a key or since when: a marker, not cached data
_TOKENS = {"os.getpid", "socket.gethostname", "platform.node", "uuid.uuid4", "uuid.uuid1",
           "time.time", "time.monotonic", "django.utils.timezone.now",
           "datetime.datetime.now", "datetime.datetime.utcnow", "threading.get_ident"}
#: a function that tells whether a process is alive, by its name
_PID_CHECKER = re.compile(r"(?i)^(pid_?exists|(is_)?process_?(alive|exists|running)|"
                          r"(is_)?pid_?(alive|running)|check_?pid)$")


#: what a pid store's read and removal are called
_STORE_READS = frozenset({"read", "load", "exists"})
_STORE_REMOVALS = frozenset({"delete", "remove", "unlink", "clear"})


def _runs_ps(node) -> bool:
    """A command line ``["ps", ...]``: a process looked for by its id."""
    if not isinstance(node, cst.List) or not node.elements:
        return False
    first = node.elements[0].value
    return isinstance(first, cst.SimpleString) and literal(first) == "ps"


def _shared_path(path: str) -> bool:
    """A path that means the same in a function and its caller: an attribute of ``self``
    or an absolute path."""
    return path.startswith(("self.", "/"))


def _reads_pid(code: str, pid_names: frozenset[str]) -> bool:
    """The code reads the process id: ``os.getpid()``, or a name the function bound to it
    (``pid = os.getpid()`` ... ``f.write("{}\\n".format(pid))``)."""
    return "getpid" in code or any(re.search(rf"\b{re.escape(n)}\b", code) for n in pid_names)


def _negated(test) -> bool:
    return isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)


def _wrapped(node):
    """``t`` of ``Identifier(t)``: the value a composed-SQL wrapper quotes."""
    return node.args[0].value if isinstance(node, cst.Call) and node.args else node
