"""The tree's Python as one program, as far as locks care: what kind of thing a value is
(a Redis client, a Django cache, a database engine ...), followed through the project's own
code — assignments, imports, function returns, attributes set on ``self``, class bases,
Django settings — rather than guessed from a variable's name.

Every answer is memoised; recursion is bounded, so cycles in the project's code end.
"""
from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from sys import intern
from typing import TYPE_CHECKING, Any

from ...model import UNKNOWN_TTL, CodeFact, Confidence, Lock, LockScope, Release, Span, hash_once
from . import apis
from ...paths import is_test_path
from .django_settings import alias_scope, cache_backends, is_settings_module
from .facts import MODULE, ClassInfo, ModuleFacts, Unit
from .hazards_model import Retries, derive
from .symbols import (
    PATH_HELPER,
    PID_UNDER_HELPER,
    QUERY_OPTION,
    SQL_HELPER,
    UNKNOWN,
    Attr,
    BinOp,
    Call,
    CallSite,
    Const,
    Either,
    Global,
    Imported,
    Item,
    Local,
    LockSymbols,
    Mapping,
    Param,
    SelfRef,
    Value,
    executed_sql,
)

if TYPE_CHECKING:
    from .index import PythonIndex

UNKNOWN_KIND = "unknown"
#: how a lock a function takes is let go of when it is still held as the function returns
HELD_ON_RETURN = ("none", "process-exit", "unknown")
_MAX_DEPTH = 24
#: the constructions read to type a constructor's parameter: at most so many of them,
#: and not from deep inside another kind's reading (each one follows its own arguments)
_MAX_CONSTRUCTIONS = 16  # (a base class is made through each of its subclasses)
_CONSTRUCTED_DEPTH = 4
#: how many calls deep a use site's lock is followed (a helper calling a helper ... that locks)
_MAX_USE_DEPTH = 8
_SECONDS = {"weeks": 604800, "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1,
            "milliseconds": 0.001, "microseconds": 0.000001}
def _text(value) -> str:
    """``str(x)`` as Python writes it (literals are read as floats: 42.0 is written 42)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


_CONVERSIONS: dict[str, Callable[[Any], float | str]] = {
    "builtins.int": int, "builtins.float": float, "builtins.str": _text}
#: settings read from the environment, with a default: (default keyword, position)
_CONFIGURED = {"decouple.config": ("default", 1), "os.getenv": ("default", 1),
               "os.environ.get": ("default", 1), "environ.get": ("default", 1)}
_TIMEDELTA_POSITIONAL = ("days", "seconds", "microseconds", "milliseconds", "minutes", "hours",
                         "weeks")


def _locals_in(value: Value) -> list[str]:
    """Local names a returned value mentions: ``wrapper`` in ``shared_task(...)(wrapper)``."""
    if isinstance(value, Local):
        return [value.name]
    if isinstance(value, Call):
        return [n for _, arg in value.args for n in _locals_in(arg)] + _locals_in(value.func)
    return []


def _without(value: Value, param: Param) -> Value | None:
    """What a parameter is rebound to, without itself (``x = x or DEFAULT``: DEFAULT)."""
    if isinstance(value, Either):
        options = tuple(o for o in value.options if _without(o, param) is not None)
        return Either(options) if options else None
    if isinstance(value, Param) and value.name == param.name:
        return None
    return value


def _reports(unit: Unit) -> bool:
    """Whether a function may tell its caller it failed through what it returns (else a
    try-lock it checks itself, raising when it is busy, needs no check by the caller)."""
    return any(not (isinstance(r, Const) and r.value) for r in unit.returns)


def _inferred(lock: Lock, confidence: Confidence = Confidence.MEDIUM) -> Lock:
    """The lock, known at most as surely as ``confidence`` (MEDIUM: through the project's
    code; LOW: by a name)."""
    weakest = Confidence.weakest((lock, confidence))
    return lock if weakest == lock.confidence else replace(lock, confidence=weakest)


def _key_argument(call: Call | None, api: str) -> Value | None:
    """The argument of a lock's call that is its key."""
    if call is None:
        return None
    if api in ("redis.set", "redis.setnx", "cache.set", "cache.add"):
        return call.arg("key", 0) or call.arg("name", 0)
    spec = apis.object_lock_api(api)
    return call.arg(spec.key_arg, spec.key_pos) if spec is not None and \
        (spec.key_arg or spec.key_pos is not None) else None


def entered_sites(unit: Unit, use: str) -> list[CallSite]:
    """A function's use sites as its caller's ``use`` makes them: what it hands back
    (``return manager(...)``, ``return Guard(...)``) is also entered when the caller
    enters or acquires the result."""
    out = []
    for site in unit.callsites:
        out.append(site)
        if use in ("with", "acquire") and site.use == "call" and site.call in unit.returns:
            out.append(replace(site, use="with"))
    return out


def _method(func: Value) -> tuple[Value, str] | None:
    """(receiver, method name) of a method call: ``c.lock`` and, on an imported object,
    ``Imported("app.clients.redis.lock")``."""
    if isinstance(func, Attr):
        return func.base, func.name
    if isinstance(func, Imported) and "." in func.dotted:
        receiver, name = func.dotted.rsplit(".", 1)
        return Imported(receiver), name
    return None


def _answers(lock: Lock, site: CallSite) -> bool:
    """Whether what the acquisition at ``site`` returns says if it got the lock: not a
    manager's ``__enter__`` that raises when busy (redis-py's), one that yields it does."""
    call = site.call
    entered = call is not None and isinstance(call.func, Attr) and call.func.name == "__enter__"
    api = apis.object_lock_api(lock.api or "")
    return not entered or (api is not None and api.yields_acquired)


def _claim_ignored(lock: Lock, site: CallSite) -> bool:
    """A database claim a helper answers for ("did I claim it"), called by code that does
    not look at the answer: a state change it makes, not a guard of the caller's. (A
    claim that raises answers through the exception: a ``try`` whose handler returns a
    value looks at it.)"""
    raised_and_told = lock.api == apis.RAISING_CLAIM and site.discarded and site.answered
    return lock.kind == "db-claim" and lock.release == "none" and lock.try_lock and \
        site.use == "call" and not raised_and_told and \
        (site.discarded or not site.result_used or not site.answer_read)


def claim_kept(lock: Lock, site: CallSite, unit: Unit) -> bool:
    """A database claim taken at ``site`` that the function does not answer its caller
    for: it decides there (its caller's call tells nothing of it)."""
    return lock.kind == "db-claim" and lock.release == "none" and lock.try_lock and \
        not site.answered and not (site.call is not None and site.call in unit.returns)


def _checked(lock: Lock, site: CallSite) -> bool:
    """Whether a use site checks that a try-lock was taken: a kernel lock's failure raises
    (so only a ``try`` that swallows it ignores it); other try-locks return the answer."""
    if lock.kind in ("flock", "lockf"):
        return not site.silenced
    return site.result_used and not site.silenced


def _arithmetic(op: str, left: Const | None, right: Const | None) -> Const | None:
    if left is None or right is None:
        return None
    a, b = left.value, right.value
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        return Const(a + b)
    if op == "%" and isinstance(a, str) and isinstance(b, (str, int, float)):
        try:
            return Const(a % b)
        except (TypeError, ValueError):
            return None
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (a, b)):
        return None
    x, y = float(a), float(b)  # type: ignore[arg-type]
    if op == "+":
        return Const(x + y)
    if op == "-":
        return Const(x - y)
    if op == "*":
        return Const(x * y)
    if op in ("/", "//") and y:
        return Const(x / y if op == "/" else x // y)
    return None


@hash_once
@dataclass(frozen=True, slots=True)
class Where:
    """A value's context: the module (tree-relative path) and unit it is written in, and
    for parameters, what the call being followed passed (``env``)."""

    rel: str
    unit: str = MODULE
    env: "Env | None" = None
    _hash: int = field(default=0, init=False, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Partial:
    """A ``functools.partial(func, *args, **keywords)`` call."""

    call: Call

    def applied(self, call: Call) -> Call:
        """The call a partial makes when called with ``call``'s arguments: the partial's
        positional arguments first, then the call's, shifted after them."""
        given = [(k, v) for k, v in self.call.args if k != "#0"]
        before = sum(1 for k, _ in given if k.startswith("#"))
        args = [(f"#{int(k[1:]) - 1}" if k.startswith("#") else k, v) for k, v in given]
        args += [(f"#{int(k[1:]) + before}" if k.startswith("#") else k, v)
                 for k, v in call.args]
        func = self.call.arg(None, 0)
        return Call(func if func is not None else UNKNOWN, tuple(args),
                    self.call.star or call.star, call.span)


@hash_once
@dataclass(frozen=True, slots=True)
class Env:
    """Arguments of the calls being followed: (function, parameter) -> (value, where it was
    written). A closure's parameter is its outer function's (a decorator factory's)."""

    bindings: tuple[tuple[str, str, Value, Where], ...]
    #: set on the arguments of no caller in particular (``Semantics.quiet``): notes every
    #: parameter asked for that a caller would have given (an env ending in it says so too)
    probe: "_Probe | None" = None
    #: (envs nest, a binding's Where has its own, and memo keys hash them again and again;
    #: a probe is compared, and hashed, by identity)
    _hash: int = field(default=0, init=False, compare=False, repr=False)

    def get(self, owner: str, name: str) -> tuple[Value, Where] | None:
        found = next(((v, w) for o, n, v, w in self.bindings if o == owner and n == name), None)
        if found is None and self.probe is not None:
            self.probe.asked = True
        return found

    def __add__(self, other: "Env | None") -> "Env":
        if other is None:
            return Env(self.bindings, self.probe)
        return Env(self.bindings + other.bindings, other.probe or self.probe)


class _Probe:
    """Whether a summary's reading asked for a caller's argument (compared by identity:
    the memo keys of one summary's reading are its own)."""

    __slots__ = ("asked",)

    def __init__(self) -> None:
        self.asked = False


class Semantics:
    def __init__(self, index: "PythonIndex"):
        self.index = index
        self._kinds: dict[tuple, str] = {}
        self._resolved: dict[str, tuple[str, str] | None] = {}  # absolute dotted -> target
        self._users_memo: dict[tuple, Sequence[tuple[str, str, Env | None]]] = {}
        #: (module, class, modules parsed) -> the class's project bases, nearest first
        self._mros: dict[tuple[str, str, int], list[tuple[str, str]]] = {}
        #: while a value is being read (``constant``): the values read for it so far
        self._constants: dict[tuple, Const | None] | None = None
        #: (module, unit, use) -> whether following that use into it can take nothing
        self._quiet: dict[tuple[str, str, str], bool] = {}
        #: (module, unit, use) -> what its use sites may run, for any caller; None when a
        #: lock may be taken there or a target depends on the caller's arguments
        self._reached: dict[tuple[str, str, str], list[tuple[str, str, str]] | None] = {}
        #: (module, function) -> whether it calls a method named like an effect method
        self._effect_callers: dict[tuple[str, str], bool] = {}
        #: (module, class) -> the calls that make it, with where they are written
        self._made_by: dict[tuple[str, str], list[tuple[Call, Where]]] = {}
        #: class-like name -> the call sites that call it (built on first use)
        self._call_index: dict[str, list[tuple[Call, Where]]] | None = None
        self._proxy_index: dict[tuple[str, str], list[Imported]] | None = None
        self._subclass_index: dict[tuple[str, str], list[tuple[str, str]]] | None = None
        #: model -> the expiry a sweeper gives its claims (built on first use)
        self._sweeps: dict[str, float] | None = None

    # -- modules and names
    def facts(self, rel: str) -> ModuleFacts | None:
        facts = self.index.known(rel)
        return facts if facts is not None and facts.error is None else None

    def units_of(self, rel: str) -> dict[str, Unit]:
        """The functions of a module the analysis found before (none when unreadable)."""
        facts = self.facts(rel)
        return facts.units if facts is not None else {}

    def classes_of(self, rel: str) -> dict[str, ClassInfo]:
        facts = self.facts(rel)
        return facts.classes if facts is not None else {}

    def unit(self, where: Where) -> Unit | None:
        facts = self.facts(where.rel)
        return facts.units.get(where.unit) if facts is not None else None

    def resolve_dotted(self, rel: str, dotted: str) -> tuple[str, str] | None:
        """A dotted name imported in module ``rel`` -> (module rel, name in it; "" for the
        module itself), when it names the tree's code."""
        if dotted.startswith("."):
            level = len(dotted) - len(dotted.lstrip("."))
            package = self.index.dotted(rel).split(".")
            if not rel.endswith("__init__.py"):
                package = package[:-1]
            package = package[:len(package) - (level - 1)] if level > 1 else package
            dotted = ".".join([*package, dotted.lstrip(".")]).strip(".")
        if dotted not in self._resolved:  # (the same imports are resolved from many sites)
            self._resolved[dotted] = None
            parts = dotted.split(".")
            for cut in range(len(parts), 0, -1):
                target = self.index.module_rel(".".join(parts[:cut]))
                if target is not None:
                    self._resolved[dotted] = (target, ".".join(parts[cut:]))
                    break
        return self._resolved[dotted] or self._sibling(rel, dotted)

    def _sibling(self, rel: str, dotted: str) -> tuple[str, str] | None:
        """A module beside the importer, when the importer's folder is no package: it runs
        (or is imported) with that folder on ``sys.path``, which puts its neighbours first
        (``from applicationinstance import ApplicationInstance`` in ``common/``)."""
        folder = posixpath.dirname(rel)
        if not folder or folder in self.index.packages:
            return None
        head, _, rest = dotted.partition(".")
        module = next((m for m in (f"{folder}/{head}.py", f"{folder}/{head}/__init__.py")
                       if m in self.index.files), None)
        return (module, rest) if module is not None and module != rel else None

    # -- kinds
    def kind(self, value: Value, where: Where, depth: int = 0) -> str:
        key = (value, where)
        known = self._kinds.get(key)
        if known is None:
            self._kinds[key] = UNKNOWN_KIND  # a cycle resolves to unknown
            known = self._kinds[key] = intern(self._kind(value, where, depth)) \
                if depth < _MAX_DEPTH else UNKNOWN_KIND
        return known

    def _kind(self, value: Value, where: Where, depth: int) -> str:
        if isinstance(value, Const):
            return "const"
        if isinstance(value, Imported):
            return self._imported(value.dotted, where, depth)
        if isinstance(value, Global):
            return self._global(where.rel, value.name, depth)
        if isinstance(value, Local):
            found = self.local(value, where)
            return self.kind(found[0], found[1], depth + 1) if found else UNKNOWN_KIND
        if isinstance(value, Param):
            found = self.argument(value, where)
            if found is None and value.name == "cls" and "." in where.unit:
                return f"class:{where.rel}:{where.unit.rsplit('.', 1)[0]}"  # a classmethod's
            if found is None:
                return self._constructed_with(value, where, depth)
            return self.kind(found[0], found[1], depth + 1)
        if isinstance(value, SelfRef):
            return f"instance:{where.rel}:{value.cls}"
        if isinstance(value, Attr):
            return self._attribute(self.kind(value.base, where, depth + 1), value.name,
                                   depth)
        if isinstance(value, Item):
            base = self.kind(value.base, where, depth + 1)
            return apis.ITEM_KINDS.get(base, UNKNOWN_KIND)
        if isinstance(value, Call):
            return self._call(value, where, depth)
        if isinstance(value, Either):
            kinds = [self.kind(v, where, depth + 1) for v in value.options]
            return next((k for k in kinds if k not in (UNKNOWN_KIND, "const")), UNKNOWN_KIND)
        return UNKNOWN_KIND

    def _constructed_with(self, param: Param, where: Where, depth: int) -> str:
        """What a constructor's parameter is, read from the calls that make the class in the
        modules the prefilter keeps, outside tests (``BackupManager(self)`` in
        ``Server.__init__``: a ``Server``), when those that can be followed agree: an object
        stored on ``self`` in ``__init__`` gets its type from whoever builds it."""
        owner = param.owner or where.unit
        if not owner.endswith(".__init__") or param.name in ("self", "cls") or \
                depth > _CONSTRUCTED_DEPTH:
            return UNKNOWN_KIND
        cls = owner[:-len(".__init__")]
        init = self.units_of(where.rel).get(owner)
        params = [p for p in init.params[1:] if p != init.star_kwargs] if init else []
        if param.name not in params:
            return UNKNOWN_KIND
        position = params.index(param.name)
        made = self._constructions(where.rel, cls)
        if len(made) > _MAX_CONSTRUCTIONS:
            return UNKNOWN_KIND  # a class made everywhere: its parameters are not one thing
        kinds = {self.kind(given, at, depth + 1) for call, at in made
                 if (given := call.arg(param.name, position)) is not None}
        kinds.discard(UNKNOWN_KIND)  # (a caller whose argument is not followed says nothing)
        return kinds.pop() if len(kinds) == 1 else UNKNOWN_KIND

    def _constructions(self, rel: str, cls: str) -> list[tuple[Call, Where]]:
        """The calls in the tree's analysed modules, outside tests, and in the class's own
        module, that make class ``cls`` of module ``rel`` (memoised): its own constructions,
        those of a subclass that keeps its ``__init__``, and a subclass's
        ``super().__init__(...)`` (whose arguments its own constructions give, in turn)."""
        key = (rel, cls)
        if key not in self._made_by:
            self._made_by[key] = []  # (a cycle through a parameter's kind finds none)
            name = cls.rsplit(".", 1)[-1]
            sites = list(self._calls_named().get(name, ()))
            facts = self.facts(rel)
            if not self.index.might_lock(rel) and facts is not None:
                # the class's own module, read as code for another reason (its factory)
                sites += [(site.callee, Where(rel, unit.name)) for unit in facts.units.values()
                          for site in unit.callsites if isinstance(site.callee, Call) and
                          _last_name(site.callee.func) == name]
            made = [(call, at) for call, at in sites
                    if self.kind(call.func, at) == f"class:{rel}:{cls}"]
            for sub_rel, sub in self._subclasses().get((rel, cls), ()):
                init = self.units_of(sub_rel).get(f"{sub}.__init__")
                if init is None:
                    made += self._constructions(sub_rel, sub)
                elif isinstance(init.super_init, Call):
                    made.append((init.super_init, Where(sub_rel, init.name)))
            self._made_by[key] = made
        return self._made_by[key]

    def _subclasses(self) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """(module, class) -> the classes of the analysed modules (outside tests) that name
        it as a base (built once)."""
        if self._subclass_index is None:
            self._subclass_index = {}
            for other, facts in self._kept_facts():
                for name, info in facts.classes.items():
                    for base in info.bases:
                        kind = self.kind(base, Where(other))
                        if kind.startswith("class:"):
                            _, base_rel, base_cls = kind.split(":", 2)
                            self._subclass_index.setdefault((base_rel, base_cls), []).append(
                                (other, name))
        return self._subclass_index

    def _calls_named(self) -> dict[str, list[tuple[Call, Where]]]:
        """The call sites of the modules the prefilter keeps (outside tests) that the
        semantics looks up by the last name of what they call: constructions (a class-like
        name), service registrations and proxies' initialisations. Built once, in one walk,
        read by every constructor's parameter, service lookup and proxy."""
        if self._call_index is None:
            self._call_index = {}
            for other, unit, site in self._kept_sites():
                callee = site.callee
                name = _last_name(callee.func) if isinstance(callee, Call) else None
                if name is not None and (name[:1].isupper() or name in _LOOKED_UP):
                    self._call_index.setdefault(name, []).append(
                        (callee, Where(other, unit.name)))
        return self._call_index

    def _kept_facts(self):
        """(module, facts) of every module the prefilter keeps, outside tests."""
        for rel in sorted(self.index.files):
            if is_test_path(rel) or not self.index.might_lock(rel):
                continue
            facts = self.index.module(rel)
            if facts is not None and facts.error is None:
                yield rel, facts

    def _kept_sites(self):
        """(module, unit, use site) of every module the prefilter keeps, outside tests."""
        for rel, facts in self._kept_facts():
            for unit in facts.units.values():
                for site in unit.callsites:
                    yield rel, unit, site

    def argument(self, param: Param, where: Where) -> tuple[Value, Where] | None:
        """What a parameter holds: the argument of the call being followed, else its
        default."""
        owner = param.owner or where.unit
        passed = where.env.get(owner, param.name) if where.env is not None else None
        if passed is not None:
            return passed
        facts = self.facts(where.rel)
        unit = facts.units.get(owner) if facts is not None else None
        default = unit.defaults.get(param.name) if unit is not None else None
        return (default, Where(where.rel)) if default is not None else None

    def mapping(self, value: Value, where: Where) -> tuple[Mapping, Where] | None:
        """The keywords a ``**kwargs`` parameter was given, when followed."""
        if isinstance(value, Param):
            found = self.argument(value, where)
            if found is not None and isinstance(found[0], Mapping):
                return found[0], found[1]
        return None

    def local(self, local: Local, where: Where) -> tuple[Value, Where] | None:
        owner = local.owner or where.unit
        facts = self.facts(where.rel)
        unit = facts.units.get(owner) if facts is not None else None
        bound = unit.local_values.get(local.name) if unit is not None else None
        return (bound, replace(where, unit=owner)) if bound is not None else None

    # -- values
    def constant(self, value: Value | None, where: Where, depth: int = 0) -> Const | None:
        """The value, when it is known statically: literals, arithmetic, module constants
        of any module, Django settings, arguments of the calls followed, ``timedelta``.

        One reading asks the same parts again and again (the options of a local assigned
        several times, each through what a function returns for its arguments ...: on
        mlflow, 2,125 readings asked 240,000 parts); they are read once per reading, keyed
        also by the number of modules parsed, since a module parsed meanwhile may change
        what a part reads."""
        if self._constants is None:
            self._constants = {}
            try:
                return self._constant(value, where, depth)
            finally:
                self._constants = None
        key = (value, where, depth, self.index.parsed_count)
        if key not in self._constants:
            self._constants[key] = self._constant(value, where, depth)
        return self._constants[key]

    def _constant(self, value: Value | None, where: Where, depth: int) -> Const | None:
        if value is None or depth > _MAX_DEPTH:
            return None
        if isinstance(value, Const):
            return value
        if isinstance(value, Param):
            found = self.argument(value, where)
            given = self.constant(found[0], found[1], depth + 1) if found else None
            if given is None or given.value is None:  # 'if ttl is None: ttl = DEFAULT'
                rebound = self.local(Local(value.name, value.owner), where)
                fallback = self.constant(_without(rebound[0], value), rebound[1], depth + 1) \
                    if rebound else None
                return fallback if fallback is not None else given
            return given
        if isinstance(value, Local):
            found = self.local(value, where)
            return self.constant(found[0], found[1], depth + 1) if found else None
        if isinstance(value, Global):
            return self._named_constant(where.rel, value.name, depth)
        if isinstance(value, Imported):
            target = self.resolve_dotted(where.rel, value.dotted)
            if target is not None and target[1] and "." not in target[1]:
                return self._named_constant(target[0], target[1], depth)
            base, _, name = value.dotted.rpartition(".")
            if target is None and base and self._imported(base, where, depth) == "settings":
                settings = self.settings_module(name)  # django.conf.settings.X
                return self._named_constant(settings, name, depth) if settings else None
            return None
        if isinstance(value, Attr):
            if isinstance(value.base, SelfRef):  # self.ttl: set in the class or __init__
                found = self.class_attr(where.rel, value.base.cls, value.name, where.env)
                return self.constant(found[0], found[1], depth + 1) if found else None
            base = self.kind(value.base, where)
            if base == "settings":
                settings = self.settings_module(value.name)
                return self._named_constant(settings, value.name, depth) if settings else None
            if base.startswith("module:"):
                return self._named_constant(base[len("module:"):], value.name, depth)
            if value.name == "seconds" or value.name == "total_seconds":
                return self.constant(value.base, where, depth + 1)
            return None
        if isinstance(value, BinOp):
            left = self.constant(value.left, where, depth + 1)
            right = self.constant(value.right, where, depth + 1)
            return _arithmetic(value.op, left, right)
        if isinstance(value, Either):  # the first known value that is not None
            options = [self.constant(v, where, depth + 1) for v in value.options]
            return next((c for c in options if c is not None and c.value is not None),
                        next((c for c in options if c is not None), None))
        if isinstance(value, Call) and isinstance(value.func, Attr) and \
                value.func.name in ("get", "pop"):  # kwargs.get("key", default)
            mapping = self.mapping(value.func.base, where)
            key = self.string(value.arg(None, 0), where, depth + 1)
            if mapping is not None and key is not None:
                passed = mapping[0].get(key)
                if passed is not None:
                    return self.constant(passed, mapping[1], depth + 1)
                return self.constant(value.arg(None, 1), where, depth + 1) \
                    if value.arg(None, 1) is not None else Const(None)
        if isinstance(value, Call):
            func = self.kind(value.func, where)
            if func.startswith("function:"):  # what the project function returns
                return self._returned_constant(func, value, where, depth)
            if func[len("lib:"):] in _CONVERSIONS:  # float(x), int(os.getenv(...))
                inner = self.constant(value.arg(None, 0), where, depth + 1)
                try:
                    return Const(_CONVERSIONS[func[len("lib:"):]](inner.value)) \
                        if inner is not None and inner.value is not None else None
                except (TypeError, ValueError):
                    return None
            if func in ("lib:os.path.join", "lib:posixpath.join"):
                parts = [self.string(arg, where, depth + 1) for _, arg in value.args]
                strings = [p for p in parts if p is not None]
                return Const(posixpath.join(*strings)) if strings and \
                    len(strings) == len(parts) and not value.star else None
            if func[len("lib:"):] in _CONFIGURED:  # the default of an environment setting
                keyword, position = _CONFIGURED[func[len("lib:"):]]
                default = self.constant(value.arg(keyword, position), where, depth + 1)
                cast = value.arg("cast", None)
                if default is None or cast is None:
                    return default
                kind = self.kind(cast, where)[len("lib:"):]
                return self.constant(Call(cast, (("#0", default),)), where, depth + 1) \
                    if kind in _CONVERSIONS else None
            if func in ("lib:datetime.timedelta", "lib:timedelta"):
                return self._timedelta(value, where, depth)
            if isinstance(value.func, Attr) and value.func.name == "total_seconds":
                return self.constant(value.func.base, where, depth + 1)
        return None

    def _returned_constant(self, func: str, call: Call, where: Where,
                           depth: int) -> Const | None:
        """The value a project function returns for these arguments, when every return
        that is known agrees (``_validated_ttl(ttl)``)."""
        rel, name = func[len("function:"):].split(":", 1)
        unit = self.units_of(rel)[name]
        if not unit.returns or unit.is_generator:
            return None
        inner = Where(rel, name, self.bind(unit, call, where))
        known = {self.constant(r, inner, depth + 1) for r in unit.returns}
        return known.pop() if len(known) == 1 else None

    def _named_constant(self, rel: str, name: str, depth: int) -> Const | None:
        facts = self.facts(rel)
        if facts is None:
            return None
        if name in facts.bindings:
            return self.constant(facts.bindings[name], Where(rel), depth + 1)
        if name in facts.imports:
            return self.constant(Imported(facts.imports[name]), Where(rel), depth + 1)
        for module in self._star_modules(rel, facts):
            found = self._named_constant(module, name, depth + 1) if depth < _MAX_DEPTH else None
            if found is not None:
                return found
        return None

    def _timedelta(self, call: Call, where: Where, depth: int) -> Const | None:
        total = 0.0
        for key, arg in call.args:
            unit = _TIMEDELTA_POSITIONAL[int(key[1:])] if key.startswith("#") and \
                int(key[1:]) < len(_TIMEDELTA_POSITIONAL) else key
            value = self.constant(arg, where, depth + 1)
            if unit not in _SECONDS or value is None or not isinstance(value.value, (int, float)):
                return None
            total += float(value.value) * _SECONDS[unit]
        return Const(total)

    def number(self, value: Value | None, where: Where) -> float | None:
        found = self.constant(value, where)
        return float(found.value) if found is not None and isinstance(found.value, (int, float)) \
            and not isinstance(found.value, bool) else None

    def string(self, value: Value | None, where: Where, depth: int = 0) -> str | None:
        found = self.constant(value, where, depth)
        return found.value if found is not None and isinstance(found.value, str) else None

    def _imported(self, dotted: str, where: Where, depth: int) -> str:
        if depth > _MAX_DEPTH:  # a re-export cycle (from pkg import x in pkg/__init__)
            return UNKNOWN_KIND
        target = self.resolve_dotted(where.rel, dotted)
        if target is not None:
            rel, name = target
            if not name:
                return f"module:{rel}"
            head, _, rest = name.partition(".")
            kind = self._global(rel, head, depth + 1)
            for attr in rest.split(".") if rest else ():
                kind = self._attribute(kind, attr, depth + 1)
            return kind
        return apis.LIBRARY_OBJECTS.get(dotted, f"lib:{dotted}")

    def _global(self, rel: str, name: str, depth: int) -> str:
        facts = self.facts(rel)
        if facts is None:
            return UNKNOWN_KIND
        if name in facts.classes:
            return f"class:{rel}:{name}"
        if name in facts.units or name in self._read_for(rel, name):
            return f"function:{rel}:{name}"
        if name in facts.bindings:
            return self.kind(facts.bindings[name], Where(rel), depth + 1)
        if name in facts.imports:
            return self._imported(facts.imports[name], Where(rel), depth + 1)
        for module in self._star_modules(rel, facts) if depth < _MAX_DEPTH else ():
            kind = self._global(module, name, depth + 1)  # from .utils import *
            if kind != UNKNOWN_KIND:
                return kind
        for dotted in facts.star_imports:  # from peewee import *: the library names we know
            if f"{dotted}.{name}" in apis.LATE_BOUND_PROXIES and \
                    self.resolve_dotted(rel, dotted) is None:
                return f"lib:{dotted}.{name}"
        return UNKNOWN_KIND

    def _star_modules(self, rel: str, facts: ModuleFacts) -> list[str]:
        """The tree's modules a module re-exports whole (``from .utils import *``)."""
        out = []
        for dotted in facts.star_imports:
            found = self.resolve_dotted(rel, dotted)
            if found is not None and not found[1] and found[0] != rel:
                out.append(found[0])
        return out

    def _attribute(self, base: str, name: str, depth: int) -> str:
        if base.startswith("module:"):
            rel = base[len("module:"):]
            kind = self._global(rel, name, depth + 1)
            if kind == UNKNOWN_KIND and rel.endswith("__init__.py"):  # pkg.sub, imported
                folder = rel[:-len("__init__.py")]
                sub = next((f for f in (f"{folder}{name}.py", f"{folder}{name}/__init__.py")
                            if f in self.index.files), None)
                return f"module:{sub}" if sub is not None else kind
            return kind
        if base.startswith("lib:"):
            dotted = f"{base[len('lib:'):]}.{name}"
            return apis.LIBRARY_OBJECTS.get(dotted, f"lib:{dotted}")
        if base.startswith(("instance:", "class:")):
            _, rel, cls = base.split(":", 2)
            found = self.class_attr(rel, cls, name)
            if found is not None:
                value, where = found
                return self.kind(value, where, depth + 1)
            if self.class_method(rel, cls, name) is not None:
                return f"method:{base}.{name}"
            return UNKNOWN_KIND
        if base == "settings":
            settings = self.settings_module(name)
            return self._global(settings, name, depth + 1) if settings else UNKNOWN_KIND
        if base in apis.OBJECT_KINDS:
            return f"method:{base}.{name}"
        return UNKNOWN_KIND

    def _call(self, call: Call, where: Where, depth: int) -> str:
        if is_service_lookup(call):
            return self._service(call, where, depth)
        func = self.kind(call.func, where, depth + 1)
        if func.startswith("lib:"):
            dotted = func[len("lib:"):]
            if dotted in apis.DYNAMIC_IMPORTS:
                return self._dynamic_import(dotted, call, where, depth)
            if dotted in apis.LOCK_CONSTRUCTORS:
                return f"lock:{dotted}"
            return apis.LIBRARY_CALLS.get(dotted, f"value:{dotted}")
        if func.startswith("class:"):
            return "instance:" + func[len("class:"):]
        if func.startswith("function:"):
            _, rel, name = func.split(":", 2)
            return self._returns(rel, name, call, where, depth)
        if func.startswith("method:"):
            receiver, _, method = func[len("method:"):].rpartition(".")
            if receiver.startswith(("instance:", "class:")):  # (a classmethod: Lock.open())
                _, rel, cls = receiver.split(":", 2)
                found = self.class_method(rel, cls, method)
                return self._returns(found[0], found[1], call, where, depth) if found else \
                    UNKNOWN_KIND
            return apis.METHOD_RESULTS.get((receiver, method), UNKNOWN_KIND)
        return UNKNOWN_KIND

    def _service(self, call: Call, where: Where, depth: int) -> str:
        """What ``request.find_service(iface, context, name)`` hands out: an instance of
        the interface when it is a class of the project, else what the registrations of
        that interface or name make (their own ``iface=`` class, the factory's return, the
        instance registered) when they agree."""
        iface = call.arg("iface", 0)
        wanted = self.kind(iface, where, depth + 1) if iface is not None else None
        if wanted is not None and wanted.startswith("class:"):
            return "instance:" + wanted[len("class:"):]
        name = self.string(call.arg("name", 2), where)
        if wanted is None and name is None:
            return UNKNOWN_KIND
        kinds = set()
        for method, registration, at in self.services():
            given = registration.arg("iface", 1)
            if (name is not None and self.string(registration.arg("name", 3), at) != name) or \
                    (wanted is not None and (given is None or self.kind(given, at) != wanted)):
                continue
            kinds.add(self.registered(method, registration, at, depth + 1))
        return kinds.pop() if len(kinds) == 1 else UNKNOWN_KIND

    def registered(self, method: str, registration: Call, at: Where, depth: int = 0) -> str:
        """What a service registration hands out: an instance of its ``iface=`` class,
        else what its factory makes (a class, or a function's return) or the instance
        ``register_service`` is given."""
        given = registration.arg("iface", 1)
        interface = self.kind(given, at, depth + 1) if given is not None else UNKNOWN_KIND
        if interface.startswith("class:"):
            return "instance:" + interface[len("class:"):]
        keyword, position = apis.SERVICE_REGISTRATIONS[method]
        made = registration.arg(keyword, position)
        if made is None:
            return UNKNOWN_KIND
        dotted = self.string(made, at)
        kind = self._imported(dotted, at, depth + 1) if dotted else self.kind(made, at, depth + 1)
        if method == "register_service" or not kind.startswith(("class:", "function:")):
            return kind
        if kind.startswith("class:"):
            return "instance:" + kind[len("class:"):]
        _, rel, function = kind.split(":", 2)
        return self._returns(rel, function, Call(Const(None)), Where(rel), depth)

    def services(self) -> list[tuple[str, Call, Where]]:
        """(method, call, where) of every service registration in the analysed modules."""
        calls = self._calls_named()
        return [(method, call, at) for method in apis.SERVICE_REGISTRATIONS
                for call, at in calls.get(method, ())]

    def _dynamic_import(self, api: str, call: Call, where: Where, depth: int) -> str:
        """What a library call that imports by name gives, when the name is known and names
        the tree's code (``IMPL = DBAPI("sqlalchemy", backend_mapping={"sqlalchemy":
        "app.db.sqlalchemy.api"})``, ``import_string("app.locks.RowLock")``)."""
        keyword, position, mapping_keyword = apis.DYNAMIC_IMPORTS[api]
        name = self.string(call.arg(keyword, position), where)
        if mapping_keyword is not None:
            mapping = self._dict(call.arg(mapping_keyword, None), where)
            modules = [self.string(v, where) for k, v in mapping.items] if mapping else []
            chosen = mapping.get(name) if mapping is not None and name is not None else None
            name = self.string(chosen, where) if chosen is not None else \
                modules[0] if len(modules) == 1 else None
        if not name or name.startswith(".") or self.resolve_dotted(where.rel, name) is None:
            return UNKNOWN_KIND
        return self._imported(name, where, depth + 1)

    def _dict(self, value: Value | None, where: Where) -> Mapping | None:
        """A dict literal, written at the call or bound to a name of the module."""
        if isinstance(value, Global):
            facts = self.facts(where.rel)
            value = facts.bindings.get(value.name) if facts is not None else None
        return value if isinstance(value, Mapping) else None

    def _returns(self, rel: str, name: str, call: Call, where: Where, depth: int) -> str:
        """What a project function returns, its parameters bound to the call's arguments."""
        facts = self.facts(rel)
        unit = facts.units.get(name) if facts is not None else None
        if unit is None or not unit.returns:
            return UNKNOWN_KIND
        callee = Where(rel, name, self.bind(unit, call, where))
        kinds = {self.kind(r, callee, depth + 1) for r in unit.returns} - {"const"}
        kinds.discard(UNKNOWN_KIND)
        return kinds.pop() if len(kinds) == 1 else UNKNOWN_KIND

    @staticmethod
    def bind(unit: Unit, call: Call, where: Where) -> Env:
        """The callee's parameters bound to a call's arguments (methods skip ``self``)."""
        params = [p for p in unit.params if p != unit.star_kwargs]
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        bound = []
        extra = []
        for key, value in call.args:
            if key.startswith("#"):
                index = int(key[1:])
                if index < len(params):
                    bound.append((unit.name, params[index], value, where))
            elif key in params:
                bound.append((unit.name, key, value, where))
            else:
                extra.append((key, value))
        if unit.star_kwargs is not None:
            bound.append((unit.name, unit.star_kwargs, Mapping(tuple(extra)), where))
        return Env(tuple(bound))

    # -- locks
    def confirm(self, lock: Lock, symbols: LockSymbols, where: Where) -> Lock | None:
        """A lock whose receiver's type decides whether it is one: kept when the type is
        one that makes it a lock (as that kind: ``c.lock()`` on a Django cache is a cache
        lock), kept on the receiver's name when the type cannot be followed, else dropped."""
        if symbols.pool is not None:
            pool = self.kind(symbols.pool, where)
            known = pool != UNKNOWN_KIND and not pool.startswith(("value:", "lib:", "method:"))
            if pool in ("db-engine", "db-pool") or (symbols.pool_guess and not known):
                lock = replace(lock, pooled=symbols.pool_span)
        if symbols.receiver is None:
            return lock
        kind = self.kind(symbols.receiver, where)
        if kind in symbols.needs:
            if not self._direct(symbols.receiver, where):
                lock = _inferred(lock)  # its type followed through the project's code
            if kind in apis.HUEY_LOCK_SCOPES:  # Huey's lock lives in its storage
                scope = apis.HUEY_LOCK_SCOPES[kind]
                return replace(lock, scope=scope,
                               stale_handling="process" if scope == "process" else "ttl")
            if kind == "django-cache" and lock.kind == "redis-lock":
                return replace(lock, kind="cache-lock", api="cache.lock")
            if kind == "redis" and lock.kind == "cache-lock":
                return replace(lock, kind="redis-lock", api="redis.Redis.lock")
            return lock
        followed = kind != UNKNOWN_KIND and not kind.startswith(("value:", "lib:", "method:"))
        return _inferred(lock, Confidence.LOW) if symbols.guess and not followed else None

    def _direct(self, value: Value, where: Where, depth: int = 0) -> bool:
        """Whether ``value`` is a library object reached inside its own function: a library
        import, an attribute or call of one, or a local assigned from one (what is parsed,
        not inferred through the project's code)."""
        if depth > _MAX_DEPTH:
            return False
        if isinstance(value, Imported):
            return self.resolve_dotted(where.rel, value.dotted) is None
        if isinstance(value, Attr):
            return self._direct(value.base, where, depth + 1)
        if isinstance(value, Call):
            return self._direct(value.func, where, depth + 1)
        if isinstance(value, Local):
            found = self.local(value, where)
            return found is not None and found[1].unit == where.unit and \
                self._direct(found[0], found[1], depth + 1)
        return False

    def lock(self, lock: Lock, symbols: LockSymbols | None, where: Where) -> Lock | None:
        """A lock as the whole tree tells it: its fields re-read from its call (constants
        of other modules, settings, a helper's arguments), its receiver confirmed, a claim's
        expiry given by a sweeper elsewhere in the tree."""
        found = self._lock(lock, symbols, where)
        if found is not None and found.kind == "db-claim" and found.stale_handling == "none" \
                and found.key:
            swept = self._swept(found.key)
            if swept is not None:
                return replace(found, stale_handling="age-check", ttl_seconds=swept)
        return found

    def _swept(self, model: str) -> float | None:
        """The expiry of claims on a model that some function of the tree sweeps when they
        are older than a limit (``ModuleFacts.claim_sweeps``): the limit in seconds, or
        ``UNKNOWN_TTL`` when it is read at run time; None when nothing sweeps them."""
        if self._sweeps is None:
            self._sweeps = {}
            for rel in sorted(self.index.files):
                facts = self.index.module(rel) if self.index.might_lock(rel) else None
                for swept, limit, owner in facts.claim_sweeps if facts is not None else ():
                    seconds = self._age_seconds(limit, Where(rel, owner))
                    known = self._sweeps.get(swept)
                    self._sweeps[swept] = seconds if known is None or known == UNKNOWN_TTL \
                        else min(known, seconds) if seconds != UNKNOWN_TTL else known
        return self._sweeps.get(model)

    def _age_seconds(self, limit: Value, where: Where) -> float:
        """The length of an age limit, followed to what a local holds (``cutoff = now -
        limit``: the limit); a limit read at run time is ``UNKNOWN_TTL``."""
        if isinstance(limit, Local):
            found = self.local(limit, where)
            if found is not None:
                limit, where = found
        if isinstance(limit, BinOp) and limit.op == "-":
            limit = limit.right
        value = self.number(limit, where)
        return value if value is not None and value > 0 else UNKNOWN_TTL

    def _lock(self, lock: Lock, symbols: LockSymbols | None, where: Where) -> Lock | None:
        if symbols is None:
            return lock
        if symbols.api == PATH_HELPER:
            made = self._made_by_helper(lock, symbols, where)
            return _inferred(made) if made is not None else None
        if symbols.api == PID_UNDER_HELPER:
            at = Where(where.rel, symbols.owner or where.unit, where.env)
            if not isinstance(symbols.call, Call) or not self._locks_argument(symbols.call, at):
                return None
            return lock
        if symbols.api == SQL_HELPER:
            call = symbols.call
            at = Where(where.rel, symbols.owner or where.unit, where.env)
            if not isinstance(call, Call) or not self._runs_argument(call, at):
                return None
            lock = _inferred(lock)  # the helper runs the statement it is given
            if symbols.waits_when is not None:  # the statement a parameter picks
                param, waits_if_true = symbols.waits_when
                flag = self.constant(param, at)
                waits = None if flag is None else bool(flag.value) == waits_if_true
                lock = replace(lock, blocking=waits, try_lock=waits is False)
        if symbols.api == QUERY_OPTION:
            at = Where(where.rel, symbols.owner or where.unit, where.env)
            waits = self._locking_option(symbols.call, at) \
                if isinstance(symbols.call, Call) else None
            if waits is None:
                return None
            lock = replace(_inferred(lock), blocking=waits, try_lock=not waits)
        if symbols.branch is not None:  # the other branch's lock, where the value is known
            param, truth = symbols.branch
            flag = self.constant(param, Where(where.rel, symbols.owner or where.unit,
                                              where.env))
            if flag is not None and bool(flag.value) != truth:
                return None
        if symbols.condition is not None:
            at = Where(where.rel, symbols.owner or where.unit, where.env)
            flag = self.constant(symbols.condition, at)
            if flag is None or not flag.value:
                return None
        refined = self.refine(lock, symbols, where)
        return self.confirm(refined, symbols, where) if refined is not None else None

    def _locking_option(self, call: Call, at: Where) -> bool | None:
        """Whether a project class made by ``call`` is given an option that makes its SQL
        lock rows (``LockOption``, read through the ``__init__`` parameter that stores it);
        whether that lock waits, or None when it is given none."""
        kind = self.kind(call.func, at)
        if not kind.startswith("class:"):
            return None
        _, rel, cls = kind.split(":", 2)
        for owner_rel, owner in self.class_mro(rel, cls):
            info = self.classes_of(owner_rel).get(owner)
            for option in info.lock_options if info is not None else ():
                given = self._option_argument(call, at, owner_rel, owner, option.attr)
                if given is not None and option.key:
                    options = self._dict(given, at)
                    given = options.get(option.key) if options is not None else None
                flag = self.constant(given, at) if given is not None else None
                if flag is not None and flag.value:
                    return option.waits
        return None

    def _option_argument(self, call: Call, at: Where, rel: str, cls: str,
                         attr: str) -> Value | None:
        """What ``call`` gives the ``__init__`` parameter a class stores in ``attr``."""
        init = self.units_of(rel).get(f"{cls}.__init__")
        info = self.classes_of(rel).get(cls)
        if init is None or info is None:
            return None
        params = [p for p in init.params[1:] if p != init.star_kwargs]
        for value, unit in info.attrs.get(attr, ()):
            if unit == init.name and isinstance(value, Param) and value.name in params:
                return call.arg(value.name, params.index(value.name))
        return None

    def _locks_argument(self, call: Call, at: Where) -> bool:
        """Whether a project function takes a kernel lock on a file it is given."""
        for rel, name, _ in self.users_of(call, "call", at):
            unit = self.units_of(rel).get(name)
            if unit is None:
                continue
            for lock in unit.locks:
                symbols = unit.lock_symbols.get(lock.span)
                if symbols is None or symbols.api != "kernel" or not symbols.escapes or \
                        not isinstance(symbols.call, Call):
                    continue
                fd = symbols.call.arg("fd", 0) or symbols.call.arg("file", 0)
                if isinstance(fd, Call) and isinstance(fd.func, Attr) and fd.func.name == "fileno":
                    fd = fd.func.base
                if isinstance(fd, Param):
                    return True
        return False

    def _made_by_helper(self, lock: Lock, symbols: LockSymbols, where: Where) -> Lock | None:
        """A lock file whose creation is a project helper's (``make_lock(PATH)``): kept,
        atomic as the helper creates it, when the helper creates the path it is given."""
        call = symbols.call
        if not isinstance(call, Call):
            return None
        at = Where(where.rel, symbols.owner or where.unit, where.env)
        atomic = self._creates_argument(call, at, lock.path)
        if atomic is None or (not atomic and lock.existence_test is None):
            return None  # not created there, or no lock without a test before it
        func = self.kind(call.func, at)
        return replace(lock, atomic=atomic, api=f"{func.rsplit(':', 1)[-1]}()",
                       existence_test=None if atomic else lock.existence_test)

    def _creates_argument(self, call: Call, at: Where, path: str | None,
                          depth: int = 0) -> bool | None:
        """Whether a project function creates a path it is given (None: it does not; else
        whether it fails when the path exists), through the helpers it calls in turn."""
        func = self.kind(call.func, at)
        if func.startswith("class:"):  # Guard(path): its constructor
            _, crel, cls = func.split(":", 2)
            init = self.class_method(crel, cls, "__init__")
            func = f"function:{init[0]}:{init[1]}" if init is not None else ""
        if not func.startswith("function:") or depth > 4:
            return None
        rel, name = func[len("function:"):].split(":", 1)
        unit = self.units_of(rel)[name]
        inner = Where(rel, name, self.bind(unit, call, at))
        given = [v for _, v in call.args]
        if path is not None and not given:  # take(): what it (or what it calls) creates
            return self._function_creates(rel, name, path)
        for made in unit.param_calls:
            if not isinstance(made, Call):
                continue
            atomic = self.creates(made, inner)
            target = made.arg(None, 0)
            if atomic is not None and isinstance(target, Param):
                passed = self.argument(target, inner)
                if passed is not None and (passed[0] in given or
                                           self.string(target, inner) == path):
                    return atomic
            elif atomic is None and any(isinstance(v, Param) and (self.argument(v, inner) or
                                                                  (None,))[0] in given
                                        for _, v in made.args):
                deeper = self._creates_argument(made, inner, path, depth + 1)
                if deeper is not None:
                    return deeper
            elif atomic is None and path is not None and path.startswith("self.") and \
                    isinstance(made.func, Attr) and isinstance(made.func.base, Param) and \
                    (self.argument(made.func.base, inner) or (None,))[0] in given:
                created = self._method_creates(made.func, inner, path)  # obj.write_lock()
                if created is not None:
                    return created
        return None

    def _function_creates(self, rel: str, name: str, path: str, depth: int = 0) -> bool | None:
        """Whether a function creates a constant path (its summary,
        ``Unit.path_effects``), or a project function it calls does, and atomically."""
        unit = self.units_of(rel).get(name)
        if unit is None or depth > 4:
            return None
        if unit.path_effects is not None and path in unit.path_effects.creates:
            return unit.path_effects.creates[path]
        for dotted in dict.fromkeys(unit.calls):
            target = self.resolve_dotted(rel, dotted)
            if target is not None and target[1] and "." not in target[1]:
                found = self._function_creates(target[0], target[1], path, depth + 1)
                if found is not None:
                    return found
        return None

    def _method_creates(self, method: Attr, where: Where, path: str) -> bool | None:
        """Whether a method of an object creates one of the object's paths (its summary,
        ``Unit.path_effects``), and atomically."""
        kind = self.kind(method, where)
        if not kind.startswith("method:instance:"):
            return None
        receiver = kind[len("method:"):].rpartition(".")[0]
        _, rel, cls = receiver.split(":", 2)
        found = self.class_method(rel, cls, method.name)
        facts = self.facts(found[0]) if found is not None else None
        effects = facts.units[found[1]].path_effects if facts is not None and found else None
        return effects.creates.get(path) if effects is not None else None

    def _project_function(self, func: Value, at: Where) -> tuple[str, str] | None:
        """(module, name) of the project function a call calls; a module read only for its
        constants (no recogniser kept it) is parsed in full for it."""
        kind = self.kind(func, at)
        if kind == UNKNOWN_KIND and isinstance(func, (Imported, Global)):
            target = self.resolve_dotted(at.rel, func.dotted) if isinstance(func, Imported) \
                else (at.rel, func.name)
            if target is not None and target[1] and self.index.module(target[0]) is not None:
                self._kinds.pop((func, at), None)  # read again, with its functions
                kind = self.kind(func, at)
        if not kind.startswith("function:"):
            return None
        rel, name = kind[len("function:"):].split(":", 1)
        return rel, name

    def _runs_argument(self, call: Call, at: Where, depth: int = 0) -> bool:
        """Whether a project function executes SQL it is given (``run(cur, SQL)`` whose body
        is ``cur.execute(sql)``), through the helpers it passes it on to."""
        found = self._project_function(call.func, at) if depth <= 4 else None
        facts = self.facts(found[0]) if found is not None else None
        if found is None or facts is None:
            return False
        rel, name = found
        unit = facts.units[name]
        inner = Where(rel, name, self.bind(unit, call, at))
        given = [v for _, v in call.args]

        def handed(value: Value) -> bool:
            passed = self.argument(value, inner) if isinstance(value, Param) else None
            return passed is not None and passed[0] in given

        for made in unit.param_calls:
            if not isinstance(made, Call):
                continue
            sql = executed_sql(made)
            if sql is not None:
                if handed(sql):
                    return True
            elif any(handed(v) for _, v in made.args) and \
                    self._runs_argument(made, inner, depth + 1):
                return True
        return False

    def creates(self, call: Value, where: Where) -> bool | None:
        """Whether a call creates the file or directory at its first argument: None when
        it does not, else whether it fails when the path exists (``O_EXCL``, mode ``x``)."""
        if not isinstance(call, Call):
            return None
        func = self.kind(call.func, where)
        if func in ("lib:builtins.open", "lib:io.open"):
            mode = self.string(call.arg("mode", 1), where) or "r"
            return True if "x" in mode else False if "w" in mode or "a" in mode else None
        if func == "lib:os.open":
            flags = call.arg("flags", 1)
            names = self.flag_names(flags, where) if flags is not None else set()
            return "os.O_EXCL" in names if "os.O_CREAT" in names else None
        if func == "lib:os.mkdir":
            exist_ok = self.constant(call.arg("exist_ok", None), where)
            return not (exist_ok is not None and bool(exist_ok.value))
        return None

    def refine(self, lock: Lock, symbols: LockSymbols, where: Where) -> Lock | None:
        """The fields a lock's call gives, read with the tree: where the module alone saw a
        parameter or a name of another module, the value it stands for (None: no lock after
        all, ``flock(fd, flag)`` given ``LOCK_UN``)."""
        call = symbols.call
        at = Where(where.rel, symbols.owner or where.unit, where.env)
        if symbols.ttl is not None:  # a claim's age limit, from another module
            seconds = self.number(symbols.ttl, at)
            if seconds is not None:
                lock = replace(lock, ttl_seconds=seconds)
        if call is None:
            return lock
        if symbols.api == "kernel":
            fd = call.arg("fd", 0) or call.arg("file", 0)
            path = self.opened_path(fd, at) if fd is not None else None
            flags = call.arg("operation", 1) or call.arg("cmd", 1) or call.arg("flags", 1)
            options = [o for o in self.flag_options(flags, at) if o] if flags is not None \
                else []
            if options and all(o & apis.KERNEL_UNLOCK_FLAGS for o in options):
                return None  # flock(fd, flag) called with LOCK_UN: an unlock
            flocked: dict[str, Any] = {"path": path or lock.path}
            options = [o for o in options if not o & apis.KERNEL_UNLOCK_FLAGS]
            if options:
                waits = {not o & apis.NONBLOCK_FLAGS for o in options}
                blocking = waits.pop() if len(waits) == 1 else None  # LOCK_NB on some paths
                flocked.update(blocking=blocking, try_lock=blocking is False)
            return replace(lock, **flocked)
        if symbols.api in ("redis.set", "redis.setnx", "cache.set", "cache.add"):
            key = self.string(call.arg("key", 0) or call.arg("name", 0), at)
            ttl = lock.ttl_seconds
            if symbols.api.startswith("redis."):
                ex = call.arg("ex", 2 if symbols.api == "redis.set" else None)
                px = call.arg("px", None)
                ttl = self._ttl(ex, 1.0, at, ttl) if ex is not None else \
                    self._ttl(px, 0.001, at, ttl) if px is not None else ttl
            else:
                timeout = call.arg("timeout", 2)
                ttl = self._ttl(timeout, 1.0, at, ttl) if timeout is not None else ttl
            scope = self.cache_scope(_receiver(call.func), at) if lock.kind == "cache-key" \
                else None
            return replace(lock, key=key or lock.key, ttl_seconds=ttl, scope=scope or lock.scope)
        api = apis.object_lock_api(symbols.api)
        if api is None:
            return lock
        # a wrapper passing its **kwargs on: the keywords this use gave it (AWX's
        # advisory_lock(name, wait=False) around django-pglocks')
        written, call = call, self._kwargs_given(call, at)
        changes: dict[str, Any] = {}
        if api.ttl_arg or api.ttl_pos is not None:
            value = call.arg(api.ttl_arg, api.ttl_pos)
            if value is None and not call.star:
                changes["ttl_seconds"] = api.ttl_default
            elif value is not None:
                changes["ttl_seconds"] = self._ttl(value, api.ttl_unit, at, lock.ttl_seconds)
        if api.key_arg or api.key_pos is not None:
            key = self.string(call.arg(api.key_arg, api.key_pos), at)
            if key is not None:
                changes["path" if api.scope == "host" else "key"] = key
        if lock.blocking is None:  # timeout=settings.LOCK_WAIT: the module could not read it
            blocking, wait = self.wait(api, call, at, None, at)
            if blocking is not None:
                changes.update(blocking=blocking, wait_seconds=wait if blocking else None,
                               try_lock=not blocking and (lock.release != "with" or
                                                          api.yields_acquired))
        flag = call.arg(api.blocking_arg, None) if api.blocking_arg else None
        if flag is not None and (not isinstance(flag, Const) or
                                 written.arg(api.blocking_arg, None) is None):
            # blocking=wait, a parameter; or wait=False handed on through **kwargs
            value = self.constant(flag, at)
            if value is not None and not value.value:
                changes.update(blocking=False, wait_seconds=None, try_lock=True
                               if lock.release != "with" else api.yields_acquired)
        if api.renew_arg:
            renew = self.constant(call.arg(api.renew_arg, None), at)
            if renew is not None:
                changes["renewed"] = bool(renew.value)
        return replace(lock, **changes) if changes else lock

    def _ttl(self, value: Value, unit: float, where: Where,
             module_reading: float | None) -> float | None:
        """A TTL argument in seconds: None for ``None`` (no expiry); ``module_reading`` (what
        the module read on its own) when the tree does not know it statically either."""
        constant = self.constant(value, where)
        if constant is None:
            return module_reading
        if constant.value is None:
            return None
        number = self.number(value, where)
        return number * unit if number is not None else module_reading

    def opened_path(self, handle: Value, where: Where, depth: int = 0) -> str | None:
        """The path a file object was opened at: ``fh`` of ``fh = open(PATH)``, followed
        through the calls (a helper locking its caller's file object)."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(handle, Call) and isinstance(handle.func, Attr) and \
                handle.func.name == "fileno":
            return self.opened_path(handle.func.base, where, depth + 1)
        if isinstance(handle, Param):
            found = self.argument(handle, where)
            return self.opened_path(found[0], found[1], depth + 1) if found else None
        if isinstance(handle, Local):
            found = self.local(handle, where)
            return self.opened_path(found[0], found[1], depth + 1) if found else None
        if isinstance(handle, Attr) and isinstance(handle.base, SelfRef):
            found = self.class_attr(where.rel, handle.base.cls, handle.name)
            return self.opened_path(found[0], replace(found[1], env=where.env), depth + 1) \
                if found else None
        if isinstance(handle, Call) and self.kind(handle.func, where) in (
                "lib:builtins.open", "lib:io.open", "lib:os.open"):
            return self.string(handle.arg("file", 0) or handle.arg("path", 0), where)
        return None

    def flag_names(self, value: Value, where: Where) -> set[str]:
        """The library constants a flags expression combines (``LOCK_EX | LOCK_NB``), on
        any path."""
        return set().union(*self.flag_options(value, where))

    def flag_options(self, value: Value, where: Where, depth: int = 0) -> list[frozenset[str]]:
        """The library constants a flags expression combines, one set per way it can be
        built (``flags |= LOCK_NB`` under an ``if``: with and without it)."""
        if depth > _MAX_DEPTH or value is None:
            return [frozenset()]
        if isinstance(value, Imported):
            return [frozenset({value.dotted})]
        if isinstance(value, Either):
            return list(dict.fromkeys(o for option in value.options[:4]
                                      for o in self.flag_options(option, where, depth + 1)))
        if isinstance(value, BinOp):
            return list(dict.fromkeys(
                left | right for left in self.flag_options(value.left, where, depth + 1)
                for right in self.flag_options(value.right, where, depth + 1)))[:8]
        found = None
        if isinstance(value, Param):
            found = self.argument(value, where)
        elif isinstance(value, Local):
            found = self.local(value, where)
        elif isinstance(value, Global):
            facts = self.facts(where.rel)
            bound = facts.bindings.get(value.name) if facts is not None else None
            found = (bound, Where(where.rel)) if bound is not None else None
        return self.flag_options(found[0], found[1], depth + 1) if found else [frozenset()]

    # -- the project's lock abstractions, taken at their use sites
    def at_use(self, site: CallSite, where: Where, retries: Retries,
               spawn_context: bool) -> tuple[list[Lock], list[CodeFact]]:
        """The locks a use site takes by way of the project's code (a guard class, a
        decorator factory, a helper or context manager that takes the lock for its caller,
        a helper returning a lock object), each made of the abstraction's template with
        the arguments given here, and the hazards of the code around the use."""
        origins: list[tuple[str, Span]] = []
        found = self._taken(site, where, origins=origins)
        observations = site.observations
        locked = [f for f in site.files if f.name in self._locked_handles(site, where)] \
            if site.files else []
        if locked:  # take(fh): a helper locking the caller's file object
            observations = replace(observations, dropped=locked[0].dropped)
            found = [replace(lock, path=lock.path or locked[0].path)
                     if lock.kind in ("flock", "lockf") else lock for lock in found]
        facts = derive([(lock, observations) for lock in found], retries, spawn_context)
        cluster = [lock for lock in found if lock.scope == "cluster"]
        if cluster and origins:
            what, origin = origins[0]
            facts.append(CodeFact("lock-key-per-host", site.span, what, cluster[0],
                                  origin=origin))
        return found, facts

    def _locked_handles(self, site: CallSite, where: Where) -> list[str]:
        """The caller's file objects a helper called here takes a kernel lock on."""
        names = []
        for _, symbols, inner in self._templates(site, where):
            call = symbols.call
            if symbols.api != "kernel" or call is None:
                continue
            fd = call.arg("fd", 0) or call.arg("file", 0)
            if isinstance(fd, Call) and isinstance(fd.func, Attr) and fd.func.name == "fileno":
                fd = fd.func.base
            name = self._passed_name(fd, inner, where) if fd is not None else None
            if name is not None:
                names.append(name)
        return names

    def _key_origin(self, key: Value | None, where: Where, home: Where,
                    home_site: CallSite) -> tuple[str, Span] | None:
        """The per-host or per-run part of a lock key given at the outermost use site:
        ``take(r, f"lock:{socket.gethostname()}")`` -> (what, where it is made)."""
        if key is None or not home_site.arg_origins or home_site.call is None:
            return None
        for _ in range(_MAX_USE_DEPTH):  # back through the parameters it was given
            if isinstance(key, Param):
                found = self.argument(key, where)
            elif isinstance(key, Attr) and isinstance(key.base, SelfRef):
                found = self.class_attr(where.rel, key.base.cls, key.name, where.env)
            else:
                break
            if found is None:
                return None
            key, where = found
        if (where.rel, where.unit) != (home.rel, home.unit):
            return None
        origins = {k: (what, span) for k, what, span in home_site.arg_origins}
        return next((origins[k] for k, value in home_site.call.args
                     if value == key and k in origins), None)

    def _taken(self, site: CallSite, where: Where, depth: int = 0,
               home: Where | None = None, home_site: CallSite | None = None,
               origins: list | None = None, memo: dict | None = None) -> list[Lock]:
        """The locks a use site takes, placed at it (not yet judged); ``home``/``home_site``:
        the unit and site of the outermost use, when this one is inside a function it calls;
        ``origins`` collects the per-host/per-run parts of their keys given there; ``memo``:
        the sites already followed from that outermost use (a call graph is walked once,
        and a recursive one ends)."""
        home, home_site = home or where, home_site or site
        origins = origins if origins is not None else []
        memo = memo if memo is not None else {}
        # (one walk per function of the call graph: reached again by another path with other
        # arguments, it keeps what the first path found — the price of a bounded walk)
        key = (id(site), where.rel, where.unit)
        if key in memo:
            locks, added = memo[key]
            origins.extend(added)
            return locks
        memo[key] = ([], [])  # a cycle back to this site takes nothing more
        before = len(origins)
        found = self._follow(site, where, depth, home, home_site, origins, memo)
        memo[key] = (found, origins[before:])
        return found

    def _follow(self, site: CallSite, where: Where, depth: int, home: Where,
                home_site: CallSite, origins: list, memo: dict) -> list[Lock]:
        found: list[Lock] = []
        for template, symbols, inner in self._templates(site, where):
            lock = self.lock(template, symbols, inner)
            if lock is None or _claim_ignored(lock, site):
                continue
            origin = self._key_origin(_key_argument(symbols.call, symbols.api), inner, home,
                                      home_site) if lock.scope == "cluster" else None
            if origin is not None:
                origins.append(origin)
            held_here = site.use in ("with", "decorator", "acquire")
            # a manager's release after its yield, not in a finally, is skipped when the
            # with-block raises: that release stands, not the with's
            release, release_span, scope = (site.release, site.release_span, site.scope_lines) \
                if held_here and lock.release != "plain" else \
                (lock.release, lock.release_span, site.scope_lines)
            let_go = self._caller_lets_go(lock, symbols, site, inner, where)
            if let_go is not None:  # flock(fd) on a file object the caller closes
                release, release_span, end = let_go
                scope = (site.scope_lines[0], end)
            if lock.kind in ("redis-key", "cache-key") and not held_here:
                release, release_span, scope = self._deleted(lock, site, where)
            owner = self.unit(inner)
            found.append(replace(
                _inferred(lock), span=site.span, scope_lines=scope, function=where.unit,
                ttl_span=None,
                taken_from=lock.taken_from or lock.span,
                release=release, release_span=release_span,
                result_checked=_checked(lock, site) if lock.try_lock and
                site.use in ("call", "acquire") and (owner is None or _reports(owner))
                else lock.result_checked))
        obj = self._acquired_object(site, where, home)
        if obj is not None:
            found.append(obj)
            made = self.lock_object(site.callee, where)
            origin = self._key_origin(_key_argument(made[2], made[0]), made[3], home,
                                      home_site) if made is not None else None
            if origin is not None:
                origins.append(origin)
        if depth < _MAX_USE_DEPTH:  # what a function called takes for its caller, in turn
            releases = {name: (release, span, end)
                        for name, release, span, end in site.handle_releases}
            for rel, name, env in self._users(site, where):
                if self.quiet(rel, name, site.use):
                    continue  # nothing to take down there, whoever calls it
                unit = self.units_of(rel)[name]
                inner = Where(rel, name, env)
                for inner_site in entered_sites(unit, site.use):
                    if not (isinstance(site.callee, Call) and site.callee.star) and \
                            not self._may_run(inner_site, inner):
                        continue  # under ``if flock:``, called with flock=False (a call
                        # passing *args or **kwargs may pass it: not decided)
                    # the function returns what the acquisition answered: the caller checks
                    handed_back = inner_site.use in ("call", "acquire") and \
                        inner_site.call is not None and inner_site.call in unit.returns
                    for lock in self._taken(inner_site, inner, depth + 1, home, home_site,
                                            origins, memo):
                        if claim_kept(lock, inner_site, unit):
                            continue  # decided inside: not the caller's guard
                        # held where a manager yields, or by the manager it hands back
                        entered = site.use in ("with", "acquire") and (any(
                            lock.holds(line) for line in unit.yield_lines) or
                            inner_site.use == "with" and
                            inner_site.call is not None and inner_site.call in unit.returns)
                        # (or the rows it fetched: ``return for_update(q).get()``)
                        handed_query = lock.kind == "db-row-lock" and inner_site.call is \
                            not None and any(_chain_of(r, inner_site.call)
                                             for r in unit.returns)
                        if site.use != "decorator" and not entered and not handed_query and \
                                lock.release not in HELD_ON_RETURN or _claim_ignored(lock, site):
                            continue  # let go of before the function returns (a locking
                            # query handed back is run by the caller, in its transaction)
                        # (a decorator's wrapper holds what it takes around the function)
                        release, release_span, end = lock.release, lock.release_span, \
                            site.scope_lines[1]
                        handle = self._passed_name(inner_site.callee, inner, where)
                        if handle in releases:  # an object of the caller's, let go of there
                            release, release_span, end = releases[handle]
                        elif (site.use in ("with", "decorator") or entered) and not (
                                entered and lock.release == "plain"):  # __exit__, the wrapper
                            # (a release after the yield, not in a finally, is skipped when
                            # the with-block raises: the generator's own release stands)
                            release, release_span, end = site.release, site.release_span, \
                                site.scope_lines[1]
                        found.append(replace(
                            _inferred(lock), span=site.span,
                            scope_lines=(site.scope_lines[0], end),
                            taken_from=lock.taken_from or lock.span,
                            function=where.unit, release=release, release_span=release_span,
                            result_checked=_checked(lock, site)
                            if lock.try_lock and handed_back and _answers(lock, inner_site)
                            else lock.result_checked))
        if obj is not None:  # the factory's own lock is this object: counted once, with
            # what this acquisition says (its wait, its answer)
            found = [lock for lock in found
                     if lock is obj or (lock.kind, lock.api) != (obj.kind, obj.api)]
        return self._let_go_by_object(found, site, where)

    def quiet(self, rel: str, name: str, use: str) -> bool:
        """Whether following a use of this function into its code (``_follow``) finds no
        lock, whoever calls it with whatever arguments: nothing it may run, through any
        number of calls, has a lock escaping to its caller or enters a lock object, and
        no call's target depends on what a caller passed (a parameter called may be
        anything). It over-approximates the walk: no depth bound, no site left out for
        the arguments (``_may_run``). Most uses that reach the project's code reach
        none of its locks: this is what spares walking them again from every caller."""
        key = (rel, name, use)
        known = self._quiet.get(key)
        if known is not None:
            return known
        seen, todo = {key}, [key]
        while todo:
            node = todo.pop()
            state = self._quiet.get(node)
            if state:
                continue  # (and all it reaches)
            reached = self._reaches_for_any(*node) if state is None else None
            if reached is None:
                self._quiet[key] = False
                return False
            for target in reached:
                if target not in seen:
                    seen.add(target)
                    todo.append(target)
        for node in seen:  # none of them reaches a lock either
            self._quiet[node] = True
        return True

    def _reaches_for_any(self, rel: str, name: str, use: str) -> list[tuple[str, str, str]] | None:
        """The (module, unit, use) the use sites of a unit run, read with the arguments of
        no caller in particular; None when the unit has a lock its callers take, enters or
        acquires a lock object, or asks for a caller's argument on the way."""
        key = (rel, name, use)
        if key in self._reached:
            return self._reached[key]
        self._reached[key] = None  # (kept if the reading finds a lock or an argument)
        unit = self.units_of(rel).get(name)
        if unit is None or any(symbols.escapes for lock in unit.locks
                               for symbols in [unit.lock_symbols.get(lock.span)]
                               if symbols is not None):
            return None
        probe = _Probe()
        where = Where(rel, name, Env((), probe))
        out: list[tuple[str, str, str]] = []
        for site in entered_sites(unit, use):
            if site.use in ("with", "acquire", "decorator") and \
                    self.lock_object(site.callee, where) is not None:
                return None
            out += [(r, n, site.use) for r, n, _ in self.users_of(site.callee, site.use, where)]
            if probe.asked:
                return None
        self._reached[key] = out
        return out

    def _let_go_by_object(self, found: list[Lock], site: CallSite, where: Where) -> list[Lock]:
        """Kernel locks an object takes for its caller (``inst = Guard(p)``, ``self.lock()``)
        and a later method of that object lets go of (``inst.start()`` closing or
        unlocking one of its file handles): released there, not held on return."""
        held = [lock for lock in found if lock.stale_handling == "kernel" and
                lock.release in HELD_ON_RETURN]
        unit = self.unit(where) if held and site.receiver is not None else None
        later = [c for c in unit.object_calls.get(site.receiver or "", ())
                 if c[0] > site.span.line] if unit is not None else []
        made = self._object_class(site, where) if later else None
        for _, method, release, span, end, when in later:
            target = self.class_method(made[0], made[1], method) if made is not None else None
            if target is None or not self._lets_go(target) or \
                    when is not None and not self._runs_when(when, where):
                continue
            return [replace(lock, release=release, release_span=span,
                            scope_lines=(site.scope_lines[0], end))
                    if lock in held else lock for lock in found]
        handed = self._handed_and_let_go(site, where) if held and site.assigned else None
        if handed is not None:  # the locked file handed to an object that closes it
            release, span, end = handed
            return [replace(lock, release=release, release_span=span,
                            scope_lines=(site.scope_lines[0], end))
                    if lock in held else lock for lock in found]
        if held and site.object_confined:  # dropped on return: its files closed
            return [replace(lock, release="finally", release_span=None)
                    if lock in held else lock for lock in found]
        return found

    def _handed_and_let_go(self, site: CallSite, where: Where):
        """(release, span, last line held) where the unit lets go of a locked file object
        it handed to an object of the project's (``fh = open_locked(p)``, ``state =
        State(fh)``, then ``state.close()``, a method that closes one of its handles)."""
        unit = self.unit(where)
        if unit is None:
            return None
        for other in unit.callsites:
            if other.assigned is None or other.span.line <= site.span.line or \
                    not isinstance(other.callee, Call) or not any(
                        isinstance(value, Local) and value.name == site.assigned
                        for _, value in other.callee.args):
                continue
            made = self._constructed(other.callee, where)
            for _, method, release, span, end, when in unit.object_calls.get(other.assigned, ()):
                target = self.class_method(made[0], made[1], method) if made else None
                if target is not None and self._lets_go(target) and (
                        when is None or self._runs_when(when, where)):
                    return release, span, end
        return None

    def _object_class(self, site: CallSite, where: Where) -> tuple[str, str] | None:
        """(module, class) of the object a site makes or calls a method of."""
        callee = site.callee
        if not isinstance(callee, Call):
            return None
        if isinstance(callee.func, Attr):  # x.lock(): x's class
            kind = self.kind(callee.func.base, where)
            if kind.startswith("instance:"):
                rel, _, cls = kind[len("instance:"):].partition(":")
                return rel, cls
        return self._constructed(callee, where)

    def _lets_go(self, target: tuple[str, str], depth: int = 0) -> bool:
        """Whether a method lets go of a kernel lock on one of its object's handles, itself
        or through the methods of its object it calls."""
        unit = self.units_of(target[0]).get(target[1])
        if unit is None or depth > 3:
            return False
        if unit.lets_go:
            return True
        cls = target[1].rsplit(".", 1)[0]
        return any(self._lets_go(inner, depth + 1) for called in unit.calls
                   if called.startswith("self.") and (inner := self.class_method(
                       target[0], cls, called[len("self."):])) is not None)

    def driven_protocols(self, unit: Unit, where: Where) -> list[Lock]:
        """Lock files a function drives through an object's methods (``if not
        instance.check(): return`` ... ``instance.start()``): a method that tests a path of
        the object, its answer deciding, then one that creates that path, on the same
        object -- one lock at the creating call, composed from the methods' summaries
        (``Unit.path_effects``), the object's class typed through the tree."""
        if not self.index.effect_methods:
            return []
        tested: dict[tuple[Value, str], CallSite] = {}
        found = []
        sites = sorted(unit.callsites, key=lambda s: (s.span.line, s.span.column))
        for site, driven in self._driven_sites(sites, where):
            receiver, effects, name = driven
            if isinstance(receiver, SelfRef):
                continue  # the module's own reading strings a class's methods together
            for path in effects.tests:
                if site.result_used:
                    tested.setdefault((receiver, path), site)
            for path, atomic in sorted(effects.creates.items()):
                test = tested.get((receiver, path))
                if test is None or path in effects.tests:
                    continue  # (a method that tests and creates is a lock of its own)
                removals = [s for s in sites if s.span.line > site.span.line and
                            self._removes(s, receiver, path, where)]
                removal = removals[-1] if removals else None  # (the normal path's, last)
                if not (removal is not None or path in effects.writes_pid or
                        apis.LOCKISH_PATH.search(path)):
                    continue  # a file kept up to date, not a lock
                if not atomic and self._serialised(receiver, test, site, sites, where):
                    atomic = True  # tested and created under the object's own lock
                shown = path.replace("self.", f"{_display(receiver)}.", 1)
                found.append(Lock(
                    kind="pid-file" if path in effects.writes_pid or path.endswith("pid")
                    else "lock-file", scope="host", span=site.span, path=shown,
                    stale_handling=effects.stale, blocking=False,
                    existence_test=None if atomic else test.span, atomic=atomic,
                    api=f"{name}()", try_lock=True, result_checked=True,
                    release="none" if removal is None else "finally" if removal.always
                    else "plain",
                    release_span=removal.span if removal is not None and not removal.always
                    else None,
                    scope_lines=(site.span.line, removal.span.line if removal is not None
                                 else site.scope_lines[1]),
                    function=where.unit, confidence=Confidence.MEDIUM))
        return found

    def _driven_sites(self, sites: list[CallSite], where: Where):
        """(site, what it drives) of the calls that run an object's methods, in order; a
        call of a method of the function's own class (``self.daemonize()``) stands for
        the calls it makes on an object the instance holds (``self.app.start()``), at
        their own places (the test in ``start()``, the write in ``daemonize()``)."""
        for site in sites:
            callee = site.callee
            if site.use != "call" or not isinstance(callee, Call):
                continue
            driven = self._driven(callee, where)
            if driven is not None:
                yield site, driven
                continue
            func = callee.func
            if not (isinstance(func, Attr) and isinstance(func.base, SelfRef)):
                continue
            method = self.class_method(where.rel, func.base.cls, func.name)
            unit = self.units_of(method[0]).get(method[1]) if method is not None else None
            inner = Where(method[0], method[1]) if method is not None else where
            for inner_site in unit.callsites if unit is not None else ():
                found = self._driven(inner_site.callee, inner) if inner_site.use == "call" \
                    and isinstance(inner_site.callee, Call) else None
                if found is not None and isinstance(found[0], Attr) and \
                        isinstance(found[0].base, SelfRef):
                    yield inner_site, found

    def _serialised(self, receiver: Value, test: CallSite, create: CallSite,
                    sites: list[CallSite], where: Where) -> bool:
        """Whether the object holds a lock from before the test to the creation: its
        constructor or an earlier method call takes one it keeps (backintime's
        ``ApplicationInstance(..., flock=True)`` flocks before ``check()``)."""
        made = self.local(receiver, where) if isinstance(receiver, Local) else None
        for site in sites:
            if site.span.line >= test.span.line:
                break
            callee = site.callee
            on_receiver = made is not None and callee == made[0] or (
                isinstance(callee, Call) and isinstance(callee.func, Attr) and
                callee.func.base == receiver)
            if on_receiver and any(
                    lock.release in HELD_ON_RETURN or lock.holds(create.span.line)
                    for lock in self._taken(site, where)):
                return True
        return False

    def _driven(self, callee: Call, where: Where, depth: int = 0):
        """(receiver, path effects, method) of a call that runs one of an object's methods:
        ``obj.m()``, or a project function given the object that calls ``param.m()``
        (names first: most calls are neither, and typing each would read the tree)."""
        methods = self.index.effect_methods
        if isinstance(callee.func, Attr) and callee.func.name in methods:
            effects = self._method_effects(callee.func.base, callee.func.name, where)
            if effects is not None:
                return callee.func.base, effects, callee.func.name
        if depth > 2 or not methods or not callee.args or \
                not isinstance(callee.func, (Global, Imported)):
            return None
        target = (where.rel, callee.func.name) if isinstance(callee.func, Global) else \
            self.resolve_dotted(where.rel, callee.func.dotted)
        if target is None or not target[1] or not self._calls_effect_method(target):
            return None
        func = self.kind(callee.func, where)
        if not func.startswith("function:"):
            return None
        _, rel, name = func.split(":", 2)
        unit = self.units_of(rel).get(name)
        if unit is None:
            return None
        inner = Where(rel, name, self.bind(unit, callee, where))
        for site in unit.callsites:
            found = self._driven(site.callee, inner, depth + 1) \
                if isinstance(site.callee, Call) else None
            if found is not None and isinstance(found[0], Param):
                passed = self.argument(found[0], inner)  # the object this call was given
                if passed is not None and passed[1].rel == where.rel and \
                        passed[1].unit == where.unit:
                    return passed[0], found[1], found[2]
        return None

    def _calls_effect_method(self, target: tuple[str, str]) -> bool:
        """Whether a function of the tree calls a method named like one that tests,
        creates or removes a lock-file path (memoised: asked at every call of it)."""
        if target not in self._effect_callers:
            facts = self.facts(target[0])
            unit = facts.units.get(target[1]) if facts is not None else None
            called = {s.callee.func.name for s in unit.callsites if isinstance(s.callee, Call)
                      and isinstance(s.callee.func, Attr)} if unit is not None else \
                facts.function_calls.get(target[1], frozenset()) if facts is not None else set()
            self._effect_callers[target] = bool(self.index.effect_methods & called)
        return self._effect_callers[target]

    def _method_effects(self, receiver: Value, method: str, where: Where):
        """The path effects of ``receiver.method()`` when the receiver is an object of one
        of the tree's classes, made by a constructor call in sight (None otherwise)."""
        made = self._constructed(receiver, where)
        if made is None:
            return None
        found = self.class_method(made[0], made[1], method)
        return self.units_of(found[0])[found[1]].path_effects if found is not None else None

    def _constructed(self, value: Value, where: Where, depth: int = 0) -> tuple[str, str] | None:
        """(module, class) of an object a constructor call made: a local, module name,
        attribute of ``self`` or parameter bound to ``Cls(...)``. Deliberately not through
        functions' returns: typing every receiver that way reads half the tree."""
        if depth > 3:
            return None
        if isinstance(value, Call) and isinstance(value.func, (Global, Imported, Attr)):
            kind = self.kind(value.func, where)  # a class, or a classmethod of one
            if kind.startswith("class:"):
                _, rel, cls = kind.split(":", 2)
                return rel, cls
            if kind.startswith("method:class:"):
                rel, _, cls = kind[len("method:class:"):].rpartition(".")[0].partition(":")
                return rel, cls
            return None
        found = self._bound_to(value, where)
        return self._constructed(found[0], found[1], depth + 1) if found is not None else None

    def _bound_to(self, value: Value, where: Where) -> tuple[Value, Where] | None:
        """What a name holds where it is read: a local's or a module name's assignment (a
        module name imported: the import), a parameter's argument, ``self.x``'s value."""
        if isinstance(value, Local):
            return self.local(value, where)
        if isinstance(value, Param):
            return self.argument(value, where)
        if isinstance(value, Attr) and isinstance(value.base, SelfRef):
            return self.class_attr(where.rel, value.base.cls, value.name, where.env)
        if isinstance(value, Global):
            facts = self.facts(where.rel)
            bound = None if facts is None else facts.bindings.get(value.name) or (
                Imported(facts.imports[value.name]) if value.name in facts.imports else None)
            return (bound, Where(where.rel)) if bound is not None else None
        return None

    def _removes(self, site: CallSite, receiver: Value, path: str, where: Where) -> bool:
        callee = site.callee
        if not isinstance(callee, Call) or not (  # on the object, or handing it over
                isinstance(callee.func, Attr) and callee.func.base == receiver or
                any(value == receiver for _, value in callee.args)):
            return False
        found = self._driven(callee, where)
        return found is not None and found[0] == receiver and path in found[1].removes

    def _runs_when(self, when: tuple[Param, bool], where: Where) -> bool:
        """Whether code under ``if param:`` runs for the call being followed: only when the
        argument (or the default) is known to allow it."""
        param, negated = when
        found = self.argument(param, where) if where.env is not None else None
        value = self.constant(found[0], found[1]) if found is not None else None
        return value is not None and bool(value.value) != negated

    def _may_run(self, site: CallSite, inner: Where) -> bool:
        """Whether a site of a function followed from a call runs for that call: not when
        the parameter an ``if`` around it tests is known to have the other value there."""
        if site.when is None or inner.env is None:
            return True
        param, negated = site.when
        found = self.argument(param, inner)  # what the call gives it, else its default
        value = self.constant(found[0], found[1]) if found is not None else None
        return value is None or bool(value.value) != negated

    def _caller_lets_go(self, lock: Lock, symbols: LockSymbols, site: CallSite, inner: Where,
                        caller: Where) -> tuple[Release, Span | None, int] | None:
        """How the caller lets go of a kernel lock a helper takes on a file object the
        caller passed it (``with open(p) as fh: take(fh)``: closing fh), when it does."""
        if lock.stale_handling != "kernel" or not isinstance(symbols.call, Call):
            return None
        fd = symbols.call.arg(None, 0)
        name = self._passed_name(fd, inner, caller) if fd is not None else None
        return next(((release, span, end) for passed, release, span, end
                     in site.handle_releases if passed == name and release != "none"), None)

    def _passed_name(self, value: Value, inner: Where, caller: Where) -> str | None:
        """The caller's local a callee's parameter was given (``take(lock)``: "lock")."""
        if not isinstance(value, Param):
            return None
        found = self.argument(value, inner)
        if found is None or found[1].unit != caller.unit or found[1].rel != caller.rel:
            return None
        return found[0].name if isinstance(found[0], (Local, Global)) else None

    def _templates(self, site: CallSite, where: Where) -> list[tuple[Lock, LockSymbols, Where]]:
        """The escaping locks of what a use site uses, with where to read their fields."""
        out = []
        for rel, unit_name, env in self._users(site, where):
            facts = self.facts(rel)
            unit = facts.units.get(unit_name) if facts is not None else None
            if unit is None:
                continue
            for lock in unit.locks:
                symbols = unit.lock_symbols.get(lock.span)
                if symbols is not None and symbols.escapes:
                    out.append((lock, symbols, Where(rel, unit_name, env)))
        return out

    def _deleted(self, lock: Lock, site: CallSite, where: Where):
        """How the caller lets go of a key a helper took for it: (release, span of a plain
        release, last line held)."""
        for span, in_finally, call in site.observations.deletes:
            if isinstance(call, Call) and self.string(call.arg("key", 0) or call.arg("name", 0),
                                                      where) == lock.key:
                end = (site.scope_lines[0], span.line)
                return ("finally", None, end) if in_finally else ("plain", span, end)
        return "none", None, site.scope_lines

    def _users(self, site: CallSite, where: Where) -> Sequence[tuple[str, str, Env | None]]:
        """The units whose escaping locks a use site takes, with their arguments bound:
        the function called, the guard class's ``__enter__``/``acquire``, or the wrapper a
        decorator (factory) puts around the decorated function."""
        return self.users_of(site.callee, site.use, where)

    def users_of(self, value: Value, use: str, where: Where,
                 depth: int = 0) -> Sequence[tuple[str, str, Env | None]]:
        """The units a use of ``value`` (with / decorator / call / acquire) runs, with
        their arguments bound (memoised: the same callee is used from many sites)."""
        key = (value, use, where)
        found = self._users_memo.get(key)
        if found is None:
            found = self._users_memo[key] = tuple(self._find_users(value, use, where, depth))
        return found

    def _find_users(self, value: Value, use: str, where: Where,
                    depth: int) -> Sequence[tuple[str, str, Env | None]]:
        callee, at = self._instance_call(value, where)
        env = at.env
        if isinstance(callee, Either) and depth < 4:  # with (Guard() if x else nullcontext())
            return next((found for found in (self.users_of(option, use, at, depth + 1)
                                             for option in callee.options) if found), [])
        if isinstance(callee, Call) and use == "call" and depth < 4:
            options = self.proxy_options(callee.func, at)
            if options:  # a proxy called: every function it may stand for
                return [found for option in options
                        for found in self.users_of(replace(callee, func=option), use, at,
                                                   depth + 1)]
            if isinstance(callee.func, Param):  # what a helper was handed: a partial's
                partial = self.partial(callee.func, at)  # function, with its arguments
                if partial is not None:
                    return self.users_of(partial.applied(callee), use, at, depth + 1)
        func = self.kind(callee.func if isinstance(callee, Call) else callee, at)
        kind, _, rest = func.partition(":")
        if isinstance(callee, Call) and kind == "function":
            rel, name = rest.split(":", 1)
            unit = self.units_of(rel)[name]
            if use == "call" and unit.is_contextmanager:
                return []  # calling a context manager function only makes the manager
            bound = self.bind(unit, callee, at) + env
            if use == "decorator":
                return self._wrappers(rel, name, bound)
            return [(rel, name, bound)]
        if use == "decorator" and kind == "function":  # @decorator, no factory
            rel, name = rest.split(":", 1)
            return self._wrappers(rel, name, env)
        if isinstance(callee, Call) and kind == "method":  # self.helper(...), obj.run(...)
            receiver, _, method = rest.rpartition(".")
            # a classmethod called on its class: entered (with Cls.held()), or called from
            # the class's own code (cls._claim()); a plain call of another class's
            # classmethod is not followed (most are factories and queries: the cost of
            # following them all is several times the analysis)
            own = isinstance(callee.func, Attr) and isinstance(callee.func.base, Param) and \
                callee.func.base.name == "cls"
            if receiver.startswith("instance:") or receiver.startswith("class:") and (
                    use != "call" or own):
                _, rel, cls = receiver.split(":", 2)
                found = self.class_method(rel, cls, method)
                if found is not None:
                    unit = self.units_of(found[0])[found[1]]
                    return [(found[0], found[1], self.bind(unit, callee, at) + env)]
            return []
        if kind in ("class", "instance"):
            rel, cls = rest.split(":", 1)
            init = self.class_method(rel, cls, "__init__")
            if isinstance(callee, Call) and init is not None:
                init_unit = self.units_of(init[0])[init[1]]
                env = self.bind(init_unit, callee, at) + env
            methods = {"acquire": ("acquire", "__enter__"), "call": ("__init__",)}.get(
                use, ("__enter__", "__aenter__"))
            return [(m[0], m[1], env) for m in
                    (self.class_method(rel, cls, name) for name in methods) if m is not None]
        return []

    # -- late-bound proxies
    def proxy_options(self, value: Value, where: Where) -> list[Imported]:
        """What a module-level proxy stands for (peewee's ``db_for_update =
        CallableProxy()``, then at start-up ``db_for_update.initialize(real_for_update)``):
        the project's functions and objects it is initialised with anywhere in the analysed
        modules, each option of a choice (``SCHEME.get(driver, real_for_update)``); empty
        when ``value`` is no such proxy."""
        target = self._module_global(value, where)
        if target is None:
            return []
        return self._initialised_with().get(target, []) if self._is_proxy(*target) else []

    def _module_global(self, value: Value, where: Where) -> tuple[str, str] | None:
        if isinstance(value, Global):
            return where.rel, value.name
        if isinstance(value, Imported):
            found = self.resolve_dotted(where.rel, value.dotted)
            if found is not None and found[1] and "." not in found[1]:
                return found
        return None

    def _is_proxy(self, rel: str, name: str) -> bool:
        facts = self.facts(rel)
        made = facts.bindings.get(name) if facts is not None else None
        if not isinstance(made, Call):
            return False
        kind = self.kind(made.func, Where(rel))
        if not kind.startswith("class:"):
            return _late_bound(kind)
        _, crel, cls = kind.split(":", 2)
        return any(_late_bound(self.kind(base, Where(base_rel)))
                   for base_rel, base_cls in self.class_mro(crel, cls)
                   for base in self.classes_of(base_rel)[base_cls].bases)

    def _initialised_with(self) -> dict[tuple[str, str], list[Imported]]:
        """(module, global) -> the project names its ``initialize(...)`` calls hand it, in
        the modules the prefilter keeps (built once)."""
        if self._proxy_index is None:
            self._proxy_index = {}
            calls = self._calls_named()
            for call, here in (found for method in sorted(set(apis.LATE_BOUND_PROXIES.values()))
                               for found in calls.get(method, ())):
                if not (isinstance(call.func, Attr) and call.args):
                    continue
                target = self._module_global(call.func.base, here)
                if target is not None:
                    self._proxy_index.setdefault(target, []).extend(
                        self._named_options(call.args[0][1], here))
        return self._proxy_index

    def _named_options(self, value: Value, where: Where) -> list[Imported]:
        """The project names a value may be, spelled so that any module resolves them:
        each option of ``a if c else b``, the values of a dict looked up with ``.get`` (and
        its default) or ``[...]``."""
        if isinstance(value, Either):
            return [o for option in value.options for o in self._named_options(option, where)]
        if isinstance(value, Call) and isinstance(value.func, Attr) and \
                value.func.name == "get" and value.args:
            mapping = self._dict(value.func.base, where)
            default = value.arg(None, 1)
            values = [v for _, v in mapping.items] if mapping else []
            return [o for v in [*values, *([default] if default is not None else [])]
                    for o in self._named_options(v, where)]
        if isinstance(value, Item):
            mapping = self._dict(value.base, where)
            return [o for _, v in mapping.items for o in self._named_options(v, where)] \
                if mapping else []
        if isinstance(value, Global):
            return [Imported(f"{self.index.dotted(where.rel)}.{value.name}")]
        if isinstance(value, Imported) and not value.dotted.startswith("."):
            return [value]
        return []

    def _instance_call(self, value: Value, where: Where) -> tuple[Value, Where]:
        """What a name used with ``with``/``acquire()`` was made by (``g = Guard(...)``)."""
        for _ in range(_MAX_DEPTH):
            if isinstance(value, Local):
                found = self.local(value, where)
            elif isinstance(value, Global):
                facts = self.facts(where.rel)
                bound = facts.bindings.get(value.name) if facts is not None else None
                found = (bound, Where(where.rel)) if bound is not None else None
            elif isinstance(value, Attr) and isinstance(value.base, SelfRef):  # self._lock
                found = self.class_attr(where.rel, value.base.cls, value.name, where.env)
            elif isinstance(value, Param):  # take(lock): the caller's object
                found = self.argument(value, where)
            else:
                break
            if found is None:
                break
            value, where = found
        return value, where

    def _wrappers(self, rel: str, decorator: str, env: Env | None) -> list[tuple[str, str, Env | None]]:
        """The wrapper a decorator returns (the nested function it hands back), following
        a factory's decorator to its wrapper, and a helper handing back a project
        decorator factory's result (``return cache_lock(name)``)."""
        for _ in range(4):
            units = self.units_of(rel)
            unit = units.get(decorator)
            if unit is None:
                break
            nested = [name for r in unit.returns for name in _locals_in(r)
                      if f"{decorator}.{name}" in units]
            if not nested:
                handed = [(r, self.kind(r.func, Where(rel, decorator, env)))
                          for r in unit.returns if isinstance(r, Call)]
                factory = next(((r, k) for r, k in handed if k.startswith("function:")), None)
                if factory is None:
                    break
                here = Where(rel, decorator, env)
                rel, decorator = factory[1][len("function:"):].split(":", 1)
                env = self.bind(self.units_of(rel)[decorator], factory[0], here)
                continue
            inner = f"{decorator}.{nested[0]}"
            inner_unit = units[inner]
            if inner_unit.params and unit.params and unit.params[0] in inner_unit.called_names:
                return [(rel, inner, env)]  # calls the decorated function: the wrapper
            decorator = inner  # a factory's decorator: its own wrapper is next
        return []

    def _acquired_object(self, site: CallSite, where: Where, home: Where) -> Lock | None:
        """A lock object a project helper made and returned, entered or acquired here (or
        put around a function: Huey's lock is also a decorator)."""
        if site.use not in ("with", "acquire", "decorator"):
            return None
        found = self.lock_object(site.callee, where)
        if found is None or (site.use == "decorator" and found[1].kind != "huey-lock"):
            return None
        name, api, ctor, at = found
        blocking, wait = self.wait(api, ctor, at, site.call if site.use == "acquire" else None,
                                   where)
        given = ctor.arg(api.ttl_arg, api.ttl_pos) if api.ttl_arg or api.ttl_pos is not None \
            else None
        ttl = api.ttl_default if given is None and not ctor.star else UNKNOWN_TTL
        base = Lock(kind=api.kind, scope=api.scope, span=site.span, ttl_seconds=ttl,
                    stale_handling=api.stale if api.scope != "process" else "process",
                    blocking=blocking, wait_seconds=wait if blocking else None,
                    api=name, try_lock=blocking is False,
                    # entering a manager that raises when busy checks it; one that yields
                    # the answer leaves it to ``as``
                    result_checked=site.result_used
                    if site.use == "acquire" or api.yields_acquired else True,
                    release=site.release, release_span=site.release_span,
                    scope_lines=site.scope_lines, function=where.unit)
        if (at.rel, at.unit) != (home.rel, home.unit):
            base = _inferred(base)  # made by the project's code elsewhere
        elif ctor.span is not None and ctor.span != site.span:
            base = replace(base, ttl_span=ctor.span)  # made here: that call carries the TTL
        return self.lock(base, LockSymbols(call=ctor, api=name, owner=at.unit), at)

    def wait(self, api, ctor: Call, at: Where, acquire: Call | None,
             where: Where) -> tuple[bool | None, float | None]:
        """Whether an acquisition waits (None: not known statically) and for how many
        seconds (None: for ever), from the acquiring call's and the constructor's
        arguments."""
        for call, keyword, pos, context in ((acquire, "timeout", 0, where),
                                            (acquire, "blocking_timeout", None, where),
                                            (ctor, api.wait_arg, api.wait_pos, at)):
            value = call.arg(keyword, pos) if call is not None and keyword else None
            if value is not None:
                constant = self.constant(value, context)
                if constant is not None and constant.value is None:
                    return True, None
                number = self.number(value, context)
                if number is None:
                    return None, None
                return (True, None) if number < 0 else (number > 0, number)
        for call, keyword, context in ((acquire, "blocking", where), (ctor, api.blocking_arg, at)):
            blocking = call.arg(keyword, 0 if call is acquire else None) \
                if call is not None and keyword else None
            constant = self.constant(blocking, context) if blocking is not None else None
            if constant is not None and constant.value in (False, None, 0):
                return False, 0.0
        wait = api.wait_default
        return wait is None or wait > 0, wait

    def lock_object(self, value: Value, where: Where, depth: int = 0):
        """(API name, API, constructor call, where it is written) of the lock object a
        value is, followed through locals, module names and the functions returning it."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(value, (Local, Global, Param)):
            if isinstance(value, Local):
                found = self.local(value, where)
            elif isinstance(value, Param):
                found = self.argument(value, where)
            else:
                facts = self.facts(where.rel)
                bound = facts.bindings.get(value.name) if facts is not None else None
                found = (bound, Where(where.rel)) if bound is not None else None
            return self.lock_object(found[0], found[1], depth + 1) if found else None
        if isinstance(value, Attr) and isinstance(value.base, SelfRef):  # self._lock
            for held, at in self.class_attrs(where.rel, value.base.cls, value.name, where.env):
                found = self.lock_object(held, at, depth + 1)
                if found is not None:
                    return found
            return None
        if not isinstance(value, Call):
            return None
        if isinstance(value.func, Attr):  # rw.write_lock(timeout=30): the lock, taken so
            base = self.lock_object(value.func.base, where, depth + 1)
            if base is not None and (base[0], value.func.name) in apis.ACQUIRING_METHODS:
                name, api, ctor, at = base
                return name, api, Call(ctor.func, ctor.args + tuple(
                    (k, v) for k, v in value.args if not k.startswith("#")), ctor.star,
                    value.span), at
        partial = self.partial(value.func, where)
        if partial is not None:  # functools.partial(redis_lock.Lock, conn)(name, expire=…)
            value = partial.applied(value)
        func = self.kind(value.func, where)
        if func.startswith("lib:") and func[4:] in apis.LOCK_CONSTRUCTORS:
            return func[4:], apis.LOCK_CONSTRUCTORS[func[4:]], self._kwargs_given(value, where), \
                where
        if func.startswith("class:"):  # class SearchLock(redis.lock.Lock)
            return self._library_lock_class(func, value, where)
        method = _method(value.func)
        if method is not None and method[1] in ("lock", "lock_task"):
            receiver = self.kind(method[0], where)
            if method[1] == "lock" and receiver == "redis":
                return "redis.Redis.lock", apis.REDIS_CLIENT_LOCK, value, where
            if method[1] == "lock" and receiver == "django-cache":
                return "cache.lock", apis.CACHE_LOCK, value, where
            if method[1] == "lock_task" and receiver in apis.HUEY_LOCK_SCOPES:  # Huey's
                return "huey.lock_task", apis.huey_lock(apis.HUEY_LOCK_SCOPES[receiver]), \
                    value, where
        if func.startswith("function:"):
            rel, name = func[len("function:"):].split(":", 1)
            unit = self.units_of(rel)[name]
            inner = Where(rel, name, self.bind(unit, value, where))
            for returned in unit.returns:
                found = self.lock_object(returned, inner, depth + 1)
                if found is not None:
                    return found
        return None

    def _kwargs_given(self, call: Call, where: Where) -> Call:
        """A call that passes on its function's ``**kwargs``, with the literal keywords the
        function was given (``Lock(client, name, **kwargs)`` in a factory called with
        ``expire=120``); unchanged when they are not all known."""
        unit = self.unit(where)
        if not call.star or unit is None or unit.star_kwargs is None:
            return call
        found = self.mapping(Param(unit.star_kwargs), where)
        if found is None or not all(isinstance(v, Const) for _, v in found[0].items):
            return call
        return Call(call.func, call.args + found[0].items, False, call.span)

    def _library_lock_class(self, func: str, ctor: Call, where: Where):
        """A project class built on a library lock class: the library's lock, made with what
        the project's constructor passes to ``super().__init__`` (or the call's own
        arguments when it has no constructor)."""
        _, rel, cls = func.split(":", 2)
        base = None
        for crel, ccls in self.class_mro(rel, cls):
            for value in self.classes_of(crel)[ccls].bases:
                kind = self.kind(value, Where(crel))
                if kind.startswith("lib:") and kind[4:] in apis.LOCK_CONSTRUCTORS:
                    base = kind[4:]
            if base is not None:
                break
        if base is None:
            return None
        init = self.class_method(rel, cls, "__init__")
        unit = self.units_of(init[0])[init[1]] if init is not None else None
        if init is None or unit is None or not isinstance(unit.super_init, Call):
            return base, apis.LOCK_CONSTRUCTORS[base], ctor, where
        inner = Where(init[0], init[1], self.bind(unit, ctor, where))
        given = Call(ctor.func, unit.super_init.args, unit.super_init.star, ctor.span)
        return base, apis.LOCK_CONSTRUCTORS[base], given, inner

    def partial(self, value: Value, where: Where, depth: int = 0) -> "Partial | None":
        """The ``functools.partial`` a callable value is, followed through names, class
        attributes and the project functions that return it."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(value, Call):
            if self.kind(value.func, where) == "lib:functools.partial" and value.arg(None, 0):
                return Partial(value)
            func = self.kind(value.func, where)
            if func.startswith("function:"):
                rel, name = func[len("function:"):].split(":", 1)
                unit = self.units_of(rel)[name]
                inner = Where(rel, name, self.bind(unit, value, where))
                return next((p for p in (self.partial(r, inner, depth + 1)
                                         for r in unit.returns) if p is not None), None)
            return None
        found: list[tuple[Value, Where]] = []
        if isinstance(value, Local):
            found = [f for f in [self.local(value, where)] if f is not None]
        elif isinstance(value, Param):  # a helper handed a partial: retry(partial(take, p))
            found = [f for f in [self.argument(value, where)] if f is not None]
        elif isinstance(value, Global):
            facts = self.facts(where.rel)
            bound = facts.bindings.get(value.name) if facts is not None else None
            found = [(bound, Where(where.rel))] if bound is not None else []
        elif isinstance(value, Attr):
            kind = self.kind(value.base, where)
            if kind.startswith(("class:", "instance:")):
                _, rel, cls = kind.split(":", 2)
                found = self.class_attrs(rel, cls, value.name, where.env)
        return next((p for p in (self.partial(v, w, depth + 1) for v, w in found)
                     if p is not None), None)

    # -- classes
    def class_mro(self, rel: str, cls: str, depth: int = 0) -> list[tuple[str, str]]:
        """The class and its project bases, nearest first (kept while no module is parsed:
        every attribute and method looked up asks it; the list is shared, not to be
        changed)."""
        if depth == 0:
            key = (rel, cls, self.index.parsed_count)
            found = self._mros.get(key)
            if found is None:
                found = self._mros[key] = self._class_mro(rel, cls, 0)
            return found
        return self._class_mro(rel, cls, depth)

    def _class_mro(self, rel: str, cls: str, depth: int) -> list[tuple[str, str]]:
        facts = self.facts(rel)
        info = facts.classes.get(cls) if facts is not None else None
        if info is None or depth > 8:
            return []
        out = [(rel, cls)]
        for base in info.bases:
            kind = self.kind(base, Where(rel), depth)
            if kind.startswith("class:"):
                _, base_rel, base_cls = kind.split(":", 2)
                out += [c for c in self.class_mro(base_rel, base_cls, depth + 1) if c not in out]
        return out

    def class_attrs(self, rel: str, cls: str, name: str,
                    env: Env | None = None) -> list[tuple[Value, Where]]:
        """Every value the class (or its nearest base that has one) gives an attribute,
        with where it is written; ``env``: the instance's constructor arguments."""
        for crel, ccls in self.class_mro(rel, cls):
            facts = self.facts(crel)
            info = facts.classes[ccls] if facts is not None else None
            if info is not None and name in info.attrs:
                return [(value, Where(crel, unit or MODULE, env))
                        for value, unit in info.attrs[name]]
        return []

    def class_attr(self, rel: str, cls: str, name: str,
                   env: Env | None = None) -> tuple[Value, Where] | None:
        """The value of an attribute that tells most: not None, when one is."""
        found = self.class_attrs(rel, cls, name, env)
        useful = [f for f in found if f[0] != Const(None)]
        return (useful or found)[0] if found else None

    def class_method(self, rel: str, cls: str, name: str) -> tuple[str, str] | None:
        for crel, ccls in self.class_mro(rel, cls):
            facts = self.facts(crel)
            method = f"{ccls}.{name}"
            if facts is not None and method in facts.units:
                return crel, method
        return None

    def _read_for(self, rel: str, name: str) -> dict[str, Unit]:
        """The functions of a module read lightly (its imports and constants: the prefilter
        passed over it) once a function of it that is followed returns the call of one of
        the names that lead to a lock (``return IMPL.claim(...)``): read in full, as the
        code of a use it is. (A proxy's method, ``self._model.index()``, is followed by
        the index: ``PythonIndex.may_take``.)"""
        facts = self.facts(rel)
        if facts is None or facts.units or name not in facts.function_calls or \
                not self.index.returns_lock_name(rel, name):
            return {}
        full = self.index.module(rel)
        return full.units if full is not None and full.error is None else {}

    # -- Django settings
    def cache_scope(self, receiver: Value | None, where: Where) -> LockScope | None:
        """The scope of the Django cache ``receiver`` is, when the settings name a backend
        local to the process or host for its alias (None: shared, or not known)."""
        alias = self._cache_alias(receiver, where)
        return alias_scope(self._cache_backends, alias) if alias not in (None, "*") else None

    def _cache_alias(self, value: Value | None, where: Where, depth: int = 0) -> str | None:
        """``cache`` is the "default" alias, ``caches["x"]`` is "x" (through locals,
        module names, attributes of ``self`` and a helper's parameters); ``caches`` itself
        is "*"."""
        if depth > _MAX_DEPTH:
            return None
        if isinstance(value, Imported):
            target = self.resolve_dotted(where.rel, value.dotted)
            if target is None:
                return _DJANGO_CACHES.get(value.dotted)
            rel, name = target  # a project module's name, re-exported or bound there
            found = self._bound_to(Global(name), Where(rel)) if name else None
            return self._cache_alias(found[0], found[1], depth + 1) if found else None
        if isinstance(value, Item) and self._cache_alias(value.base, where, depth + 1) == "*":
            return self.string(value.key, where)  # caches["x"]
        if isinstance(value, Attr) and isinstance(value.base, (Global, Imported)):
            facts = self.facts(where.rel)  # django_cache.cache, django.core.cache imported
            dotted = value.base.dotted if isinstance(value.base, Imported) else \
                facts.imports.get(value.base.name) if facts is not None else None
            return self._cache_alias(Imported(f"{dotted}.{value.name}"), where, depth + 1) \
                if dotted is not None else None
        found = self._bound_to(value, where) if value is not None else None  # self.cache ...
        return self._cache_alias(found[0], found[1], depth + 1) if found is not None else None

    @cached_property
    def _cache_backends(self) -> dict[str, list[str | None]]:
        files = self.index.files
        return cache_backends(text for rel in sorted(files) if is_settings_module(rel)
                              if (text := self.index.read(files[rel])) is not None)

    def settings_module(self, name: str | None = None) -> str | None:
        """The project's Django settings module (that defines ``name``, when given): of the
        ``settings.py`` files and ``settings`` packages, the shallowest first."""
        for rel in self._settings_modules:
            facts = self.facts(rel)
            if name is None or (facts is not None and (name in facts.bindings or
                                                       name in facts.imports)):
                return rel
        return None

    @cached_property
    def _settings_modules(self) -> list[str]:
        return sorted((rel for rel in self.index.files
                       if rel.rsplit("/", 1)[-1] == "settings.py" or
                       rel.endswith("/settings/__init__.py")),
                      key=lambda r: (r.count("/"), r))


#: Django's cache objects: the default alias, and the mapping of every alias
_DJANGO_CACHES = {"django.core.cache.cache": "default", "django.core.cache.caches": "*"}


#: lower-case names whose calls ``_calls_named`` indexes beside the class-like ones
_LOOKED_UP = frozenset({*apis.SERVICE_REGISTRATIONS, *apis.LATE_BOUND_PROXIES.values()})


def _late_bound(kind: str) -> bool:
    """A library class whose instances stand for what they are initialised with."""
    return kind.startswith("lib:") and kind[len("lib:"):] in apis.LATE_BOUND_PROXIES


def is_service_lookup(value: Value | None) -> bool:
    """``request.find_service(...)``, however the receiver is spelled."""
    return isinstance(value, Call) and _last_name(value.func) == apis.SERVICE_LOOKUP


def _chain_of(value: Value, call: Call) -> bool:
    """``call`` itself, or the start of a call chain on it (``call.get()``, ``call.x().y``)."""
    while True:
        if value == call:
            return True
        if isinstance(value, Call):
            value = value.func
        elif isinstance(value, Attr):
            value = value.base
        else:
            return False


def _last_name(func: Value) -> str | None:
    """``C`` of ``C``, ``mod.C`` and ``Imported("pkg.mod.C")``."""
    if isinstance(func, Global):
        return func.name
    if isinstance(func, Attr):
        return func.name
    if isinstance(func, Imported):
        return func.dotted.rsplit(".", 1)[-1]
    return None


def _receiver(func: Value) -> Value | None:
    """What a method is called on: ``c`` of ``c.add`` (``cache.add`` imported from a
    library reads as one dotted name)."""
    if isinstance(func, Attr):
        return func.base
    if isinstance(func, Imported) and "." in func.dotted:
        return Imported(func.dotted.rsplit(".", 1)[0])
    return None


def _display(value: Value) -> str:
    """A receiver as the code names it (``instance``, ``self.guard``)."""
    if isinstance(value, (Local, Param, Global)):
        return value.name
    if isinstance(value, Attr):
        return f"{_display(value.base)}.{value.name}"
    if isinstance(value, SelfRef):
        return "self"
    return "?"
