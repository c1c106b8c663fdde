"""The tree's Python as one program, as far as locks care: what kind of thing a value is
(a Redis client, a Django cache, a database engine ...), followed through the project's own
code — assignments, imports, function returns, attributes set on ``self``, class bases,
Django settings — rather than guessed from a variable's name.

Every answer is memoised; recursion is bounded, so cycles in the project's code end.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ...model import Lock
from . import apis
from .facts import MODULE, ModuleFacts, Unit
from .symbols import (Attr, BinOp, Call, Const, Global, Imported, Item, Local, LockSymbols,
                      Param, SelfRef, Value)

if TYPE_CHECKING:
    from .index import PythonIndex

UNKNOWN_KIND = "unknown"
_MAX_DEPTH = 24
_SECONDS = {"weeks": 604800, "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1,
            "milliseconds": 0.001, "microseconds": 0.000001}
_TIMEDELTA_POSITIONAL = ("days", "seconds", "microseconds", "milliseconds", "minutes", "hours",
                         "weeks")


def _arithmetic(op: str, left: Const | None, right: Const | None) -> Const | None:
    if left is None or right is None:
        return None
    a, b = left.value, right.value
    if op == "+" and isinstance(a, str) and isinstance(b, str):
        return Const(a + b)
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


@dataclass(frozen=True)
class Where:
    """A value's context: the module (tree-relative path) and unit it is written in, and
    for parameters, what the call being followed passed (``env``)."""

    rel: str
    unit: str = MODULE
    env: "Env | None" = None


@dataclass(frozen=True)
class Env:
    """Arguments of the calls being followed: (function, parameter) -> (value, where it was
    written). A closure's parameter is its outer function's (a decorator factory's)."""

    bindings: tuple[tuple[str, str, Value, Where], ...]

    def get(self, owner: str, name: str) -> tuple[Value, Where] | None:
        return next(((v, w) for o, n, v, w in self.bindings if o == owner and n == name), None)

    def __add__(self, other: "Env | None") -> "Env":
        return Env(self.bindings + (other.bindings if other is not None else ()))


class Semantics:
    def __init__(self, index: "PythonIndex"):
        self.index = index
        self._kinds: dict[tuple, str] = {}

    # -- modules and names
    def facts(self, rel: str) -> ModuleFacts | None:
        facts = self.index.module(rel)
        return facts if facts is not None and facts.error is None else None

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
        parts = dotted.split(".")
        for cut in range(len(parts), 0, -1):
            target = self.index.module_rel(".".join(parts[:cut]))
            if target is not None:
                return target, ".".join(parts[cut:])
        return None

    # -- kinds
    def kind(self, value: Value, where: Where, depth: int = 0) -> str:
        key = (value, where)
        if key not in self._kinds:
            self._kinds[key] = UNKNOWN_KIND  # a cycle resolves to unknown
            self._kinds[key] = self._kind(value, where, depth) if depth < _MAX_DEPTH \
                else UNKNOWN_KIND
        return self._kinds[key]

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
            return self.kind(found[0], found[1], depth + 1) if found else UNKNOWN_KIND
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
        if isinstance(value, BinOp):
            return UNKNOWN_KIND
        return UNKNOWN_KIND

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

    def local(self, local: Local, where: Where) -> tuple[Value, Where] | None:
        owner = local.owner or where.unit
        facts = self.facts(where.rel)
        unit = facts.units.get(owner) if facts is not None else None
        bound = unit.local_values.get(local.name) if unit is not None else None
        return (bound, replace(where, unit=owner)) if bound is not None else None

    # -- values
    def constant(self, value: Value | None, where: Where, depth: int = 0) -> Const | None:
        """The value, when it is known statically: literals, arithmetic, module constants
        of any module, Django settings, arguments of the calls followed, ``timedelta``."""
        if value is None or depth > _MAX_DEPTH:
            return None
        if isinstance(value, Const):
            return value
        if isinstance(value, Param):
            found = self.argument(value, where)
            return self.constant(found[0], found[1], depth + 1) if found else None
        if isinstance(value, Local):
            found = self.local(value, where)
            return self.constant(found[0], found[1], depth + 1) if found else None
        if isinstance(value, Global):
            return self._named_constant(where.rel, value.name, depth)
        if isinstance(value, Imported):
            target = self.resolve_dotted(where.rel, value.dotted)
            if target is not None and target[1] and "." not in target[1]:
                return self._named_constant(target[0], target[1], depth)
            return None
        if isinstance(value, Attr):
            base = self.kind(value.base, where)
            if base == "settings":
                settings = self.settings_module()
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
        if isinstance(value, Call):
            func = self.kind(value.func, where)
            if func in ("lib:datetime.timedelta", "lib:timedelta"):
                return self._timedelta(value, where, depth)
            if isinstance(value.func, Attr) and value.func.name == "total_seconds":
                return self.constant(value.func.base, where, depth + 1)
        return None

    def _named_constant(self, rel: str, name: str, depth: int) -> Const | None:
        facts = self.facts(rel)
        if facts is None:
            return None
        if name in facts.bindings:
            return self.constant(facts.bindings[name], Where(rel), depth + 1)
        if name in facts.imports:
            return self.constant(Imported(facts.imports[name]), Where(rel), depth + 1)
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

    def string(self, value: Value | None, where: Where) -> str | None:
        found = self.constant(value, where)
        return found.value if found is not None and isinstance(found.value, str) else None

    def _imported(self, dotted: str, where: Where, depth: int) -> str:
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
        if name in facts.units:
            return f"function:{rel}:{name}"
        if name in facts.bindings:
            return self.kind(facts.bindings[name], Where(rel), depth + 1)
        if name in facts.imports:
            return self._imported(facts.imports[name], Where(rel), depth + 1)
        return UNKNOWN_KIND

    def _attribute(self, base: str, name: str, depth: int) -> str:
        if base.startswith("module:"):
            return self._global(base[len("module:"):], name, depth + 1)
        if base.startswith("lib:"):
            dotted = f"{base[len('lib:'):]}.{name}"
            return apis.LIBRARY_OBJECTS.get(dotted, f"lib:{dotted}")
        if base.startswith("instance:"):
            _, rel, cls = base.split(":", 2)
            found = self.class_attr(rel, cls, name)
            if found is not None:
                value, where = found
                return self.kind(value, where, depth + 1)
            if self.class_method(rel, cls, name) is not None:
                return f"method:{base}.{name}"
            return UNKNOWN_KIND
        if base == "settings":
            settings = self.settings_module()
            return self._global(settings, name, depth + 1) if settings else UNKNOWN_KIND
        if base in apis.OBJECT_KINDS:
            return f"method:{base}.{name}"
        return UNKNOWN_KIND

    def _call(self, call: Call, where: Where, depth: int) -> str:
        func = self.kind(call.func, where, depth + 1)
        if func.startswith("lib:"):
            dotted = func[len("lib:"):]
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
            if receiver.startswith("instance:"):
                _, rel, cls = receiver.split(":", 2)
                found = self.class_method(rel, cls, method)
                return self._returns(found[0], found[1], call, where, depth) if found else \
                    UNKNOWN_KIND
            return apis.METHOD_RESULTS.get((receiver, method), UNKNOWN_KIND)
        return UNKNOWN_KIND

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
        params = list(unit.params)
        if params and params[0] in ("self", "cls"):
            params = params[1:]
        bound = []
        for key, value in call.args:
            if key.startswith("#"):
                index = int(key[1:])
                if index < len(params):
                    bound.append((unit.name, params[index], value, where))
            elif key in params:
                bound.append((unit.name, key, value, where))
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
            if kind.startswith("huey:"):  # Huey's lock lives in its storage
                scope = kind.split(":", 1)[1]
                return replace(lock, scope=scope,
                               stale_handling="process" if scope == "process" else "ttl")
            if kind == "django-cache" and lock.kind == "redis-lock":
                return replace(lock, kind="cache-lock", api="cache.lock")
            if kind == "redis" and lock.kind == "cache-lock":
                return replace(lock, kind="redis-lock", api="redis.Redis.lock")
            return lock
        followed = kind != UNKNOWN_KIND and not kind.startswith(("value:", "lib:", "method:"))
        return lock if symbols.guess and not followed else None

    # -- classes
    def class_mro(self, rel: str, cls: str, depth: int = 0) -> list[tuple[str, str]]:
        """The class and its project bases, nearest first."""
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

    def class_attr(self, rel: str, cls: str, name: str) -> tuple[Value, Where] | None:
        for crel, ccls in self.class_mro(rel, cls):
            facts = self.facts(crel)
            info = facts.classes[ccls] if facts is not None else None
            if info is not None and name in info.attrs:
                return info.attrs[name], Where(crel, info.attr_units.get(name, MODULE))
        return None

    def class_method(self, rel: str, cls: str, name: str) -> tuple[str, str] | None:
        for crel, ccls in self.class_mro(rel, cls):
            facts = self.facts(crel)
            if facts is not None and f"{ccls}.{name}" in facts.units:
                return crel, f"{ccls}.{name}"
        return None

    # -- Django settings
    def settings_module(self) -> str | None:
        """The project's Django settings module: ``settings.py`` (or a ``settings``
        package's ``__init__``), the shallowest one."""
        found = sorted((rel for rel in self.index.files
                        if rel.rsplit("/", 1)[-1] == "settings.py" or
                        rel.endswith("/settings/__init__.py")),
                       key=lambda r: (r.count("/"), r))
        return found[0] if found else None

