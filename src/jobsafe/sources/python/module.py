"""One Python module: its functions, the locks each takes, and what defeats them.

The module is parsed with libcst and never imported. Names are resolved through the
module's imports, so ``from fcntl import flock as f`` is still ``fcntl.flock`` (libcst's
QualifiedNameProvider does the same with scope analysis, at three times the cost of
everything else together; local shadowing of an imported name is rare in job code). The unit of analysis is a function body (plus the module body and the
``if __name__ == "__main__":`` block): locks, their scopes and releases, and the exits,
yields, forks and retries inside those scopes.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import libcst as cst
import builtins

from libcst.metadata import MetadataWrapper, PositionProvider

from ...model import CodeFact, Lock, ParseError, Span
from . import apis
from .idempotency import helper_origins, key_facts
from .values import Evaluator, argument, has_keyword, passes_kwargs

MODULE = "<module>"
#: a TTL that is set but not to a value known statically (a parameter, a setting)
UNKNOWN_TTL = -1.0
MAIN = "<main>"
_BLOCKING_IN_ASYNC = ("flock", "filelock", "fasteners", "threading.Lock", "threading.RLock",
                      "redis-lock", "lockfile", "portalocker", "soft-filelock")
_LOCKISH = re.compile(r"(?i)lock|lck|pid|running|mutex|busy|semaphore")


@dataclass
class Unit:
    """A function body (or the module body / ``__main__`` block)."""

    name: str
    node: cst.CSTNode
    is_async: bool = False
    is_generator: bool = False
    is_contextmanager: bool = False
    decorators: set[str] = field(default_factory=set)
    calls: list[str] = field(default_factory=list)  # qualified names of called functions
    locks: list[Lock] = field(default_factory=list)
    facts: list[CodeFact] = field(default_factory=list)
    start: int = 0
    end: int = 0


@dataclass
class ModuleFacts:
    path: str
    units: dict[str, Unit] = field(default_factory=dict)
    #: Command classes (Django management commands) and their handle()
    classes: dict[str, list[str]] = field(default_factory=dict)
    error: ParseError | None = None
    has_main: bool = False
    too_large: bool = False  # generated code, usually: skipped unless a job runs it


def parse_module(path: str, text: str) -> ModuleFacts:
    """Analyse a module's source; a syntax error gives ``error`` and no units."""
    facts = ModuleFacts(path)
    if len(text) > MAX_MODULE_BYTES:
        facts.error = ParseError(Span(path, 1), f"Python module too large to analyse "
                                 f"({len(text) // 1024} KiB, limit {MAX_MODULE_BYTES // 1024} KiB)")
        facts.too_large = True
        return facts
    problem = _too_complex(text)
    if problem is not None:
        facts.error = ParseError(Span(path, 1), problem)
        return facts
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        try:
            ast.parse(text)
            message = (f"not analysed: libcst cannot parse this module although Python can "
                       f"({exc.message})")
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            message = f"Python syntax error: {exc.message}"
        facts.error = ParseError(Span(path, exc.raw_line or 1, (exc.raw_column or 0) + 1), message)
        return facts
    except (RecursionError, MemoryError):
        facts.error = ParseError(Span(path, 1), "Python module too deeply nested to analyse")
        return facts
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    try:
        metadata = wrapper.resolve_many([PositionProvider])
    except RecursionError:
        facts.error = ParseError(Span(path, 1), "Python module too deeply nested to analyse")
        return facts
    _ModuleAnalyser(path, module, metadata, facts).run()
    return facts


#: libcst needs about 20 s per MiB of source; larger modules are generated code
MAX_MODULE_BYTES = 1024 * 1024
#: libcst's native parser overflows its stack (a crash, not an exception) on expressions
#: nested a few thousand levels deep; CPython's own parser refuses them safely first.
_GUARD_BYTES = 20_000
_MAX_DEPTH = 600


def _too_complex(text: str) -> str | None:
    """Why the module cannot be given to libcst safely, or None."""
    depth = deepest = 0
    for m in re.finditer(r"[(\[{]|[)\]}]", text):
        depth = depth + 1 if m.group() in "([{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    if len(text) < _GUARD_BYTES and deepest < 100:
        return None
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        return f"Python syntax error: {exc.msg} (line {exc.lineno})"
    except (RecursionError, MemoryError, ValueError):
        return "Python module too deeply nested to analyse"
    stack = [(tree, 1)]
    while stack:
        node, level = stack.pop()
        if level > _MAX_DEPTH:
            return "Python module too deeply nested to analyse"
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return None


class _Collector(cst.CSTVisitor):
    """One pass over the module: every node in source order, with the unit it belongs to.

    libcst computes ``node.children`` by visiting, so walking subtrees again and again is
    slow; this pass is done once and everything else reads its lists.
    """

    def __init__(self):
        self.order: list[cst.CSTNode] = []
        self.by_unit: dict[int, list[cst.CSTNode]] = {}  # id(unit node) -> nodes
        self.parent: dict[int, cst.CSTNode] = {}
        self.aliases: dict[str, str] = {}  # local name -> qualified name, from imports
        self._stack: list[cst.CSTNode] = []
        self._path: list[cst.CSTNode] = []

    def on_visit(self, node) -> bool:
        self.order.append(node)
        if self._path:
            self.parent[id(node)] = self._path[-1]
        self._path.append(node)
        if isinstance(node, (cst.Import, cst.ImportFrom)):
            self._imports(node)
        if self._stack:
            self.by_unit[id(self._stack[-1])].append(node)
        if isinstance(node, cst.FunctionDef) or (isinstance(node, cst.If) and _is_main_guard(node)
                                                  and not self._in_function()):
            self._stack.append(node)
            self.by_unit[id(node)] = []
        return True

    def on_leave(self, node) -> None:
        self._path.pop()
        if self._stack and self._stack[-1] is node:
            self._stack.pop()

    def _imports(self, node) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                dotted = _dotted(alias.name)
                if alias.asname is not None:
                    self.aliases[_dotted(alias.asname.name)] = dotted
                else:
                    root = dotted.split(".")[0]
                    self.aliases[root] = root
            return
        if isinstance(node.names, cst.ImportStar):
            return
        base = "." * len(node.relative) + (_dotted(node.module) if node.module else "")
        for alias in node.names:
            name = _dotted(alias.name)
            local = _dotted(alias.asname.name) if alias.asname is not None else name
            self.aliases[local] = f"{base}.{name}" if base and not base.endswith(".") else base + name

    def _in_function(self) -> bool:
        return any(isinstance(n, cst.FunctionDef) for n in self._stack)


class _ModuleAnalyser:
    def __init__(self, path, module, metadata, facts: ModuleFacts):
        self.path = path
        self.module = module
        self._pos = metadata[PositionProvider]
        self.facts = facts
        self.constants: dict[str, cst.BaseExpression] = {}
        self.eval = Evaluator(self.constants, self.qualified)
        #: names bound to lock objects / redis clients, module-wide (text -> (api name, spec))
        self.bindings: dict[str, tuple[str, apis.LockApi, cst.Call]] = {}
        self.clients: set[str] = set()
        #: names bound to API clients: name -> qualified names of the factory (StripeClient...)
        self.client_kinds: dict[str, set[str]] = {}
        self.spawn_context = False
        self.atexit_release: set[str] = set()
        self.module_text = module.code
        self.opened: dict[str, str | None] = {}  # handle -> path of `handle = open(path)`
        collector = _Collector()
        module.visit(collector)
        self.order = collector.order
        self.by_unit = collector.by_unit
        self._parent = _ParentMap(collector.parent)
        self.aliases = collector.aliases
        #: module-level functions and classes (they resolve to their own names), and names
        #: the module assigns (which shadow builtins)
        self.defined = {s.name.value for s in module.body
                        if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
        self._qualified_cache: dict[int, set[str]] = {}
        self._stale: str | None = None

    # -- metadata helpers
    def qualified(self, node) -> set[str]:
        """The dotted name an expression refers to (``{"fcntl.flock"}``), or an empty set."""
        key = id(node)
        if key not in self._qualified_cache:
            self._qualified_cache[key] = self._resolve(node)
        return self._qualified_cache[key]

    def _resolve(self, node) -> set[str]:
        attrs = []
        while isinstance(node, cst.Attribute):
            attrs.append(node.attr.value)
            node = node.value
        suffix = "".join(f".{a}" for a in reversed(attrs))
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and \
                node.func.value in self.defined:
            return {node.func.value + suffix} if suffix else set()  # Job().run -> Job.run
        if not isinstance(node, cst.Name):
            return set()
        name = node.value
        if name in self.aliases:
            return {self.aliases[name] + suffix}
        if name in self.defined:
            return {name + suffix}
        if name in _BUILTINS and name not in self.constants:
            return {f"builtins.{name}{suffix}"}
        return set()

    def span(self, node) -> Span:
        r = self._pos[node]
        return Span(self.path, r.start.line, r.start.column + 1, r.end.line, r.end.column + 1)

    def line(self, node) -> int:
        return self._pos[node].start.line

    def end_line(self, node) -> int:
        return self._pos[node].end.line

    def parents(self, node):
        node = self._parent.get(node)
        while node is not None:
            yield node
            node = self._parent.get(node)

    def code(self, node) -> str:
        return self.module.code_for_node(node)

    # -- driver
    def run(self) -> None:
        self._module_prepass()
        units = self._collect_units()
        self.helpers = helper_origins(self, units)
        for unit in units:
            self._analyse_unit(unit)
            self.facts.units[unit.name] = unit

    def _module_prepass(self) -> None:
        for stmt in self.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                            isinstance(small.targets[0].target, cst.Name):
                        self.constants[small.targets[0].target.value] = small.value
        for node in self.order:
            if isinstance(node, (cst.Assign, cst.AnnAssign)) and isinstance(node.value, cst.Call):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) \
                    else [node.target]
                for target in targets:
                    self._bind(self.code(target), node.value)
            elif isinstance(node, cst.WithItem) and node.asname is not None and \
                    isinstance(node.item, cst.Call) and \
                    self.qualified(node.item.func) & {"builtins.open", "io.open"}:
                self.opened[self.code(node.asname.name)] = self._path_text(
                    argument(node.item, "file", 0))
            elif isinstance(node, cst.Call):
                names = self.qualified(node.func)
                if names & {"multiprocessing.set_start_method", "multiprocessing.get_context"}:
                    method = self.eval.string(argument(node, "method", 0))
                    if method in ("spawn", "forkserver"):
                        self.spawn_context = True
                if "atexit.register" in names and node.args:
                    self.atexit_release.add(self.code(node.args[0].value))

    def _bind(self, target: str, call: cst.Call) -> None:
        self.client_kinds.setdefault(target, set()).update(self.qualified(call.func))
        if self.qualified(call.func) & {"builtins.open", "os.open", "io.open"}:
            self.opened[target] = self._path_text(argument(call, "file", 0))
            return
        spec = self._constructor(call)
        if spec is not None:
            self.bindings[target] = spec
        elif self.qualified(call.func) & apis.REDIS_CLIENT_FACTORIES:
            self.clients.add(target)

    def _constructor(self, call: cst.Call):
        """(api name, spec, call) when ``call`` creates a lock object."""
        names = self.qualified(call.func)
        for name in sorted(names):
            if name in apis.LOCK_CONSTRUCTORS:
                return name, apis.LOCK_CONSTRUCTORS[name], call
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value == "lock":
            if self._is_redis(func.value):
                return "redis.Redis.lock", apis.REDIS_CLIENT_LOCK, call
            if self._is_cache(func.value):
                return "cache.lock", apis.CACHE_LOCK, call
        return None

    def _is_redis(self, node) -> bool:
        text = self.code(node)
        if text in self.clients or self.qualified(node) & apis.REDIS_CLIENT_FACTORIES:
            return True
        if isinstance(node, cst.Call) and self.qualified(node.func) & apis.REDIS_CLIENT_FACTORIES:
            return True
        return "redis" in text.lower()

    def _is_cache(self, node) -> bool:
        if self.qualified(node) & apis.DJANGO_CACHES:
            return True
        if isinstance(node, cst.Subscript) and self.qualified(node.value) & apis.DJANGO_CACHES:
            return True
        text = self.code(node).lower()
        return text == "cache" or text.endswith(".cache") or text.startswith("caches[")

    def _collect_units(self) -> list[Unit]:
        units: list[Unit] = []
        module_unit = Unit(MODULE, self.module, start=1, end=self.end_line(self.module))
        units.append(module_unit)
        for node in self.order:
            if isinstance(node, cst.FunctionDef):
                name = self._function_name(node)
                decorators = set()
                for d in node.decorators:
                    target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                    decorators |= self.qualified(target) | {self.code(target)}
                unit = Unit(name, node, is_async=node.asynchronous is not None,
                            decorators=decorators, start=self.line(node),
                            end=self.end_line(node))
                unit.is_generator = any(isinstance(n, cst.Yield) for n in self._unit_nodes(node))
                unit.is_contextmanager = bool(decorators & apis.CONTEXT_MANAGER_DECORATORS) or \
                    any(d.split(".")[-1] in ("contextmanager", "asynccontextmanager")
                        for d in decorators)
                units.append(unit)
            elif isinstance(node, cst.ClassDef):
                methods = [s.name.value for s in node.body.body if isinstance(s, cst.FunctionDef)]
                self.facts.classes[node.name.value] = methods
            elif isinstance(node, cst.If) and id(node) in self.by_unit and _is_main_guard(node):
                self.facts.has_main = True
                units.append(Unit(MAIN, node, start=self.line(node), end=self.end_line(node)))
        return units

    def _unit_nodes(self, node) -> list:
        """Nodes of a function (or ``__main__`` block), not of the functions nested in it."""
        own = self.by_unit.get(id(node), [])
        nested = {id(n) for n in own if isinstance(n, (cst.FunctionDef, cst.ClassDef))}
        if not nested:
            return own
        skip = set()
        for n in own:
            if id(n) in nested:
                skip |= {id(x) for x in self.by_unit.get(id(n), [])}
        return [n for n in own if id(n) not in skip and id(n) not in nested]

    def _nodes_of(self, unit: Unit) -> list:
        return self._module_nodes() if unit.name == MODULE else self._unit_nodes(unit.node)

    def _module_nodes(self) -> list:
        inside = {id(n) for nodes in self.by_unit.values() for n in nodes}
        return [n for n in self.order if id(n) not in inside and id(n) not in self.by_unit]

    def _function_name(self, node: cst.FunctionDef) -> str:
        names = [node.name.value]
        for parent in self.parents(node):
            if isinstance(parent, (cst.ClassDef, cst.FunctionDef)):
                names.append(parent.name.value)
        return ".".join(reversed(names))

    # -- one unit
    def _analyse_unit(self, unit: Unit) -> None:
        nodes = self._nodes_of(unit)
        if unit.name == MAIN:
            nodes = [n for n in nodes if n is not unit.node.test and
                     not _contains(unit.node.test, n)]
        local_bindings = dict(self.bindings)
        calls = [n for n in nodes if isinstance(n, cst.Call)]
        withs = [n for n in nodes if isinstance(n, cst.With)]
        for call in calls:
            names = self.qualified(call.func)
            unit.calls.extend(sorted(names))
            if names & apis.THREAD_STARTS:
                unit.facts.append(CodeFact("starts-threads", self.span(call),
                                           sorted(names & apis.THREAD_STARTS)[0]))
            if not names and isinstance(call.func, cst.Attribute) and \
                    isinstance(call.func.value, cst.Name) and call.func.value.value == "self":
                unit.calls.append(f"self.{call.func.attr.value}")
        acquisitions: list[tuple[Lock, cst.CSTNode, str | None]] = []  # (lock, node, handle)
        handled: set[int] = set()
        for w in withs:
            for item in w.items:
                lock = self._with_item(item, w, unit, local_bindings)
                if lock is not None:
                    acquisitions.append((lock, item.item, None))
                    handled.add(id(item.item))
                    if isinstance(item.item, cst.Call) and isinstance(item.item.func, cst.Attribute):
                        handled.add(id(item.item.func.value))
        for call in calls:
            if id(call) in handled:
                continue
            found = self._call(call, unit, local_bindings, calls)
            if found is not None:
                acquisitions.append(found)
        acquisitions.extend(self._lock_files(unit, nodes, calls))
        unit.locks.extend(lock for lock, _, _ in acquisitions)
        self._scope_facts(unit, nodes, acquisitions)
        unit.facts.extend(key_facts(self, nodes, self.helpers))

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
        api_name, api, ctor = spec
        wait = self._wait(api, ctor, call if call is not ctor else None)
        return self._make_lock(api_name, api, ctor, expr, unit, release="with",
                               scope=(self.line(w), self.end_line(w)),
                               blocking=wait is None or wait > 0, wait=wait)

    def _wait(self, api: apis.LockApi, ctor: cst.Call, acquire: cst.Call | None) -> float | None:
        """Seconds the acquisition may wait (None: forever; 0: does not wait)."""
        for call, keyword, pos in ((acquire, "timeout", 0), (acquire, "blocking_timeout", None),
                                   (ctor, api.wait_arg, api.wait_pos)):
            if call is None or keyword is None:
                continue
            value = argument(call, keyword, pos)
            if value is not None:
                if self.eval.is_none(value):
                    return None
                number = self.eval.number(value)
                return None if number is not None and number < 0 else number
        if acquire is not None:
            blocking = argument(acquire, "blocking", None)
            if blocking is not None and self.eval.falsy(blocking):
                return 0.0
            positional = argument(acquire, None, 0)
            if positional is not None and self.eval.falsy(positional) and \
                    not isinstance(positional, cst.Integer):
                return 0.0
        if ctor is not None and api.kind in ("redis-lock", "cache-lock"):
            blocking = argument(ctor, "blocking", None)
            if blocking is not None and self.eval.falsy(blocking):
                return 0.0
        return api.wait_default

    def _make_lock(self, api_name, api: apis.LockApi, ctor: cst.Call, at, unit: Unit, *,
                   release: str, scope, blocking: bool, wait, try_lock=False, checked=None,
                   release_span=None) -> Lock:
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
        if passes_kwargs(ctor) and ttl is None and api.stale == "ttl":
            ttl = UNKNOWN_TTL  # passed through **kwargs
        return Lock(
            kind=api.kind, scope=api.scope, span=self.span(at), path=key if api.scope == "host" else None,
            key=key if api.scope != "host" else None, ttl_seconds=ttl,
            stale_handling=api.stale if api.scope != "process" else "process",
            blocking=blocking, wait_seconds=wait if blocking else None, api=api_name,
            try_lock=try_lock, result_checked=checked, release=release,
            release_span=release_span, renewed=renewed, scope_lines=scope, function=unit.name,
            ttl_span=self.span(ctor) if ctor is not at else None)

    # -- calls
    def _call(self, call: cst.Call, unit: Unit, bindings, calls):
        func = call.func
        names = self.qualified(func)
        kernel = next((apis.KERNEL_LOCK_CALLS[n] for n in names if n in apis.KERNEL_LOCK_CALLS), None)
        if kernel is not None:
            return self._kernel_lock(call, kernel, unit, calls)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = func.value
            if method == "acquire":
                spec = bindings.get(self.code(receiver))
                if spec is None and isinstance(receiver, cst.Call):
                    spec = self._constructor(receiver)
                if spec is not None:
                    return self._acquire(call, receiver, spec, unit, calls)
            if method in ("set", "setnx", "add") and (self._is_redis(receiver) or self._is_cache(receiver)):
                return self._key_lock(call, method, receiver, unit, calls)
            if method in ("execute", "exec_driver_sql") or "sqlalchemy.text" in names:
                return self._sql_lock(call, unit, calls)
        if "sqlalchemy.text" in names or "sqlalchemy.sql.text" in names:
            return None
        for name in names:
            if name in apis.LOCK_CONSTRUCTORS and apis.LOCK_CONSTRUCTORS[name].acquires_on_create:
                api = apis.LOCK_CONSTRUCTORS[name]
                handle = self._assigned_to(call)
                return (self._make_lock(name, api, call, call, unit, release="process-exit",
                                        scope=(self.line(call), unit.end), blocking=False,
                                        wait=0.0, try_lock=True, checked=True), call, handle)
        return None

    def _acquire(self, call, receiver, spec, unit: Unit, calls):
        api_name, api, ctor = spec
        wait = self._wait(api, ctor, call)
        try_lock = wait is not None and wait == 0
        checked = self._result_checked(call)
        handle = self.code(receiver) if not isinstance(receiver, cst.Call) else None
        release_call = self._release_call(handle, call, calls, ("release",)) if handle else None
        release, release_span, end = self._release_kind(release_call, handle, unit)
        lock = self._make_lock(api_name, api, ctor, call, unit, release=release,
                               scope=(self.line(call), end), blocking=not try_lock, wait=wait,
                               try_lock=try_lock, checked=checked, release_span=release_span)
        if isinstance(receiver, cst.Call) and self._statement_expression(call):
            unit.facts.append(CodeFact("handle-dropped", self.span(call),
                                       f"{self.code(receiver.func)}(...).acquire()", lock))
        return lock, call, handle

    def _kernel_lock(self, call, kind, unit, calls):
        flags = argument(call, "operation", 1) or argument(call, "cmd", 1) or argument(call, "flags", 1)
        flag_names = set()
        if flags is not None:
            for node in [flags, *_walk(flags)]:
                flag_names |= self.qualified(node)
        if flag_names & apis.KERNEL_UNLOCK_FLAGS:
            return None
        blocking = not (flag_names & apis.NONBLOCK_FLAGS)
        fd = argument(call, "fd", 0) or argument(call, "file", 0)
        fd_text = self.code(fd) if fd is not None else ""
        dropped = fd is not None and any(isinstance(n, cst.Call) and "builtins.open" in
                                         self.qualified(n.func) for n in [fd, *_walk(fd)])
        handle = re.sub(r"\.fileno\(\)$", "", fd_text)
        path = self._opened_path(handle, unit)
        unlock = self._flock_unlock(handle, calls, call)
        release, release_span, end = self._release_kind(unlock, handle, unit)
        lock = Lock(kind="flock", scope="host", span=self.span(call), path=path,
                    stale_handling="kernel", blocking=blocking, api=next(iter(sorted(
                        n for n in self.qualified(call.func) if n in apis.KERNEL_LOCK_CALLS)), None),
                    try_lock=not blocking, result_checked=not self._silently_caught(call),
                    release=release if unlock is not None else "process-exit",
                    release_span=release_span, scope_lines=(self.line(call), end),
                    function=unit.name)
        if dropped:
            unit.facts.append(CodeFact("handle-dropped", self.span(call),
                                       "the file object from open() is not kept", lock))
        return lock, call, handle

    def _flock_unlock(self, handle, calls, after):
        for c in calls:
            if c is after or self.line(c) < self.line(after):
                continue
            if self.qualified(c.func) & set(apis.KERNEL_LOCK_CALLS):
                flags = argument(c, None, 1)
                fd = argument(c, None, 0)
                if flags is not None and fd is not None and \
                        re.sub(r"\.fileno\(\)$", "", self.code(fd)) == handle and \
                        any(self.qualified(n) & apis.KERNEL_UNLOCK_FLAGS for n in [flags, *_walk(flags)]):
                    return c
        return None

    def _opened_path(self, handle: str, unit: Unit) -> str | None:
        """The path of ``handle = open(PATH, ...)`` (or ``with open(PATH) as handle``)."""
        return self.opened.get(handle)

    def _key_lock(self, call, method, receiver, unit, calls):
        """Redis ``SET NX``/``SETNX`` and Django ``cache.add``: a key whose existence locks."""
        redis = self._is_redis(receiver)
        if method == "set":
            nx = argument(call, "nx", None)
            if not (nx is not None and self.eval.truthy(nx)):
                return None
        if method == "add" and redis:
            return None
        key_node = argument(call, "key", 0) or argument(call, "name", 0)
        key = self.eval.string(key_node) or (self.code(key_node) if key_node is not None else "?")
        ttl = None
        if redis:
            ex, px = argument(call, "ex", None), argument(call, "px", None)
            if ex is not None:
                ttl = self.eval.number(ex)
                ttl = UNKNOWN_TTL if ttl is None and not self.eval.is_none(ex) else ttl
            elif px is not None:
                number = self.eval.number(px)
                ttl = number / 1000 if number is not None else (
                    None if self.eval.is_none(px) else UNKNOWN_TTL)
            if ex is None and px is None:
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
        api = f"{'redis' if redis else 'cache'}.{method}"
        lock = Lock(kind="redis-key" if redis else "cache-key", scope="cluster",
                    span=self.span(call), key=key, ttl_seconds=ttl, stale_handling="ttl",
                    blocking=False, api=api, try_lock=True,
                    result_checked=self._result_checked(call), release=release,
                    release_span=release_span, scope_lines=(self.line(call), end),
                    function=unit.name)
        return lock, call, None

    def _following_expire(self, receiver, key_node, call, calls) -> float | None:
        receiver_text = self.code(receiver)
        key_text = self.code(key_node) if key_node is not None else None
        for c in calls:
            if self.line(c) < self.line(call) or not isinstance(c.func, cst.Attribute):
                continue
            if c.func.attr.value in ("expire", "pexpire") and self.code(c.func.value) == receiver_text:
                if key_text is None or (c.args and self.code(c.args[0].value) == key_text):
                    number = self.eval.number(argument(c, "time", 1))
                    if number is not None and c.func.attr.value == "pexpire":
                        number /= 1000
                    return number if number is not None else UNKNOWN_TTL
        return None

    def _key_release(self, receiver_text, key_node, call, calls):
        key_text = self.code(key_node) if key_node is not None else None
        for c in calls:
            if self.line(c) < self.line(call) or not isinstance(c.func, cst.Attribute):
                continue
            if c.func.attr.value in ("delete", "unlink") and self.code(c.func.value) == receiver_text \
                    and (key_text is None or (c.args and self.code(c.args[0].value) == key_text)):
                return c
        return None

    def _sql_lock(self, call, unit, calls):
        sql = None
        for arg in call.args[:1]:
            sql = self.eval.string(arg.value)
            if sql is None and isinstance(arg.value, cst.Call) and arg.value.args:
                sql = self.eval.string(arg.value.args[0].value)  # execute(text("..."))
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
            lock = Lock(kind="pg-advisory" if function.startswith("pg_") else "mysql-get-lock",
                        scope="cluster", span=self.span(call), key=m.group(1).strip() or None,
                        stale_handling="session", blocking=blocking, wait_seconds=wait,
                        api=function, try_lock=not blocking or (wait is not None and wait < 60),
                        result_checked=self._result_checked(call) or self._fetched(call, calls),
                        release=release,
                        release_span=release_span, scope_lines=(self.line(call), end),
                        function=unit.name, session=session)
            return lock, call, None
        return None

    # -- lock files
    def _lock_files(self, unit: Unit, nodes, calls):
        """Lock/pid files and lock directories managed by hand (JOB201/JOB202)."""
        checks: dict[str, cst.Call] = {}
        for call in calls:
            path = self._existence_checked(call)
            if path and self._check_stops(call, path):
                checks.setdefault(path, call)
        stale = self._stale_handling()
        found = []
        seen = set()
        for call in calls:
            created = self._creation(call)
            if created is None:
                continue
            path, atomic = created
            if path in seen:
                continue
            check = checks.get(path)
            check_before = check is not None and self.line(check) <= self.line(call)
            guarded = atomic and (self._exception_checked(call) or self._in_if_test(call))
            removal = self._removal(path, call, calls)
            # a lock, not just "do not overwrite": a lock-like name, a PID in it, or removal
            looks_like_lock = bool(_LOCKISH.search(path)) or removal is not None or \
                _writes_pid(self.code(self._statement(call)))
            if not ((check_before or guarded) and looks_like_lock):
                continue
            seen.add(path)
            release, release_span, end = self._release_kind(removal, path, unit)
            taken_over = any(self.line(c) < self.line(call) and self._removes(c, path) for c in calls)
            kind = "lock-dir" if "mkdir" in self.code(call.func) else (
                "pid-file" if _writes_pid(self.code(self._statement(call))) or path.endswith(".pid")
                else "lock-file")
            lock = Lock(kind=kind, scope="host", span=self.span(call), path=path,
                        stale_handling="removed-first" if taken_over else stale, blocking=False,
                        existence_test=self.span(check) if check_before and not atomic else None,
                        atomic=atomic, api=self.code(call.func), try_lock=True,
                        result_checked=True, release=release, release_span=release_span,
                        scope_lines=(self.line(call), end), function=unit.name)
            found.append((lock, call, path))
        return found

    def _existence_checked(self, call: cst.Call) -> str | None:
        names = self.qualified(call.func)
        if names & apis.EXISTENCE_CHECKS and call.args:
            return self._path_text(call.args[0].value)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value in apis.PATH_METHODS_EXIST:
            return self._path_text(call.func.value)
        return None

    def _check_stops(self, call: cst.Call, path: str) -> bool:
        """The existence check decides an exit or raise (a lock, not a cache or a stamp).

        A ``return`` counts only for lock-like names, and so does a negated check
        (``if not exists(p): return`` is usually "nothing to do yet").
        """
        for parent in self.parents(call):
            if isinstance(parent, (cst.If, cst.While)):
                if not _contains(parent.test, call):
                    return False
                if not self._sole_condition_on(parent.test, call, path):
                    return False  # `exists(d) and not isdir(d)`: validation, not a lock
                lockish = bool(_LOCKISH.search(path))
                if _negated(parent.test) and not lockish:
                    return False
                body = list(_walk_unit(parent.body))
                if any(isinstance(n, cst.Raise) or self._is_exit_call(n) for n in body):
                    return True
                return lockish and any(isinstance(n, cst.Return) for n in body)
            if isinstance(parent, (cst.SimpleStatementLine, cst.FunctionDef)):
                return False
        return False

    def _sole_condition_on(self, test, call, path: str) -> bool:
        """No other part of the condition is about the same path."""
        others = [n for n in _walk(test) if isinstance(n, cst.Call) and n is not call
                  and not _contains(n, call) and not _contains(call, n)]
        return not any(self._path_text(a.value) == path for n in others for a in n.args[:1])

    def _creation(self, call: cst.Call) -> tuple[str, bool] | None:
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
            for node in ([flags, *_walk(flags)] if flags is not None else []):
                flag_names |= self.qualified(node)
            if "os.O_CREAT" not in flag_names:
                return None
            return self._path_text(argument(call, "path", 0)), "os.O_EXCL" in flag_names
        if "os.mkdir" in names:
            exist_ok = argument(call, "exist_ok", None)
            return self._path_text(argument(call, "name", 0)), not self.eval.truthy(exist_ok)
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

    def _path_text(self, node) -> str | None:
        if node is None:
            return None
        if isinstance(node, cst.Call) and self.qualified(node.func) & {"pathlib.Path", "pathlib.PosixPath"} \
                and node.args:
            return self._path_text(node.args[0].value)
        return self.eval.string(node) or self.code(node)

    def _removal(self, path, after, calls):
        for c in calls:
            if self.line(c) >= self.line(after) and c is not after and self._removes(c, path):
                return c
        return None

    def _removes(self, c: cst.Call, path: str) -> bool:
        if self.qualified(c.func) & apis.REMOVERS and c.args and \
                self._path_text(c.args[0].value) == path:
            return True
        return isinstance(c.func, cst.Attribute) and c.func.attr.value in ("unlink", "rmdir") \
            and self._path_text(c.func.value) == path

    def _stale_handling(self) -> str:
        if self._stale is None:
            self._stale = self._find_stale_handling()
        return self._stale

    def _find_stale_handling(self) -> str:
        for node in self.order:
            if not isinstance(node, cst.Call):
                continue
            names = self.qualified(node.func)
            if "os.kill" in names:
                sig = argument(node, None, 1)
                if sig is not None and self.code(sig) in ("0", "signal.SIG_DFL"):
                    return "pid-check"
            if names & {"psutil.pid_exists", "psutil.Process"}:
                return "pid-check"
            if names & apis.AGE_CHECKS or (isinstance(node.func, cst.Attribute) and
                                           node.func.attr.value == "stat" and
                                           "st_mtime" in self.module_text):
                return "age-check"
        return "none"

    # -- release and result helpers
    def _release_call(self, handle, after, calls, methods):
        for c in calls:
            if c is after or self.line(c) < self.line(after):
                continue
            if isinstance(c.func, cst.Attribute) and c.func.attr.value in methods and \
                    self.code(c.func.value) == handle:
                return c
        return None

    def _release_kind(self, release_call, handle, unit: Unit):
        """(release kind, span of a plain release, last protected line)."""
        if release_call is None:
            if handle and any(handle in a for a in self.atexit_release):
                return "atexit", None, unit.end
            return "none", None, unit.end
        end = self.line(release_call)
        if any(isinstance(p, cst.Finally) for p in self.parents(release_call)):
            return "finally", None, end
        if any(handle and handle in a for a in self.atexit_release):
            return "atexit", None, end
        return "plain", self.span(release_call), end

    def _fetched(self, call, calls) -> bool:
        """``cur.execute("select pg_try_advisory_lock(1)")`` then ``cur.fetchone()``."""
        if not isinstance(call.func, cst.Attribute):
            return False
        receiver = self.code(call.func.value)
        return any(isinstance(c.func, cst.Attribute) and c.func.attr.value.startswith(
            ("fetch", "scalar", "first", "one")) and self.code(c.func.value) == receiver
            and self.line(c) >= self.line(call) for c in calls if c is not call)

    def _statement(self, node):
        for parent in self.parents(node):
            if isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return parent
        return node

    def _statement_expression(self, call) -> bool:
        parent = self._parent.get(call)
        return isinstance(parent, cst.Expr)

    def _assigned_to(self, call) -> str | None:
        parent = self._parent.get(call)
        if isinstance(parent, cst.Assign):
            return self.code(parent.targets[0].target)
        return None

    def _result_checked(self, call) -> bool:
        """Whether a try-lock's result decides what happens next."""
        parent = self._parent.get(call)
        if isinstance(parent, cst.Expr):
            return self._exception_checked(call)
        return True

    def _silently_caught(self, call) -> bool:
        """Inside a ``try`` whose every handler only passes: failure is ignored."""
        for parent in self.parents(call):
            if isinstance(parent, cst.Try):
                return bool(parent.handlers) and not self._exception_checked(call)
            if isinstance(parent, cst.FunctionDef):
                return False
        return False

    def _exception_checked(self, call) -> bool:
        """Inside a ``try`` whose handlers do something other than ``pass``."""
        for parent in self.parents(call):
            if isinstance(parent, cst.Try):
                for handler in parent.handlers:
                    body = handler.body.body
                    silent = all(isinstance(s, cst.SimpleStatementLine) and
                                 all(isinstance(x, (cst.Pass, cst.Expr)) and
                                     (isinstance(x, cst.Pass) or isinstance(x.value, cst.Ellipsis))
                                     for x in s.body) for s in body)
                    if not silent:
                        return True
                return False
            if isinstance(parent, (cst.FunctionDef,)):
                return False
        return False

    def _in_if_test(self, call) -> bool:
        for parent in self.parents(call):
            if isinstance(parent, (cst.If, cst.While)):
                return _contains(parent.test, call)
            if isinstance(parent, (cst.SimpleStatementLine, cst.FunctionDef)):
                return False
        return False

    def _is_exit_call(self, node) -> bool:
        return isinstance(node, cst.Call) and bool(
            self.qualified(node.func) & (set(apis.PROCESS_EXITS) | set(apis.HARD_EXITS)))

    # -- hazards inside lock scopes
    def _scope_facts(self, unit: Unit, nodes, acquisitions) -> None:
        if not acquisitions:
            self._retry_decorated(unit, acquisitions)
            return
        for node in nodes:
            line = self.line(node)
            inside = [(lock, at, handle) for lock, at, handle in acquisitions
                      if lock.scope_lines and lock.scope_lines[0] <= line <= lock.scope_lines[1]
                      and node is not at]
            if isinstance(node, (cst.Call, cst.Raise)):
                self._exit_fact(unit, node, inside)
            if isinstance(node, cst.Call):
                # removal "around" the release: before it or after it
                self._unlink_fact(unit, node, [a for a in acquisitions
                                               if a[0].scope_lines and a[0].scope_lines[0] <= line
                                               and node is not a[1]])
            if not inside:
                continue
            if isinstance(node, cst.Yield) and unit.is_generator and not unit.is_contextmanager:
                lock = inside[0][0]
                unit.facts.append(CodeFact("yield-in-scope", self.span(node),
                                           f"{lock.kind} lock", lock))
            if isinstance(node, cst.Call):
                self._fork_fact(unit, node, inside)
        for lock, at, handle in acquisitions:
            if unit.is_async and lock.blocking and lock.kind in _BLOCKING_IN_ASYNC and \
                    not self._offloaded(at) and not self._brief_thread_lock(lock, at):
                unit.facts.append(CodeFact("blocking-in-async", self.span(at),
                                           f"{lock.api or lock.kind}", lock))
            if lock.try_lock and lock.result_checked is False:
                unit.facts.append(CodeFact("unchecked-try-lock", self.span(at),
                                           f"{lock.api or lock.kind}", lock))
        self._retry_decorated(unit, acquisitions)
        self._spin_loops(unit, acquisitions)
        self._dropped_on_return(unit, acquisitions)

    def _exit_fact(self, unit: Unit, node, inside) -> None:
        hard = False
        if isinstance(node, cst.Raise):
            if node.exc is None:
                return
            target = node.exc.func if isinstance(node.exc, cst.Call) else node.exc
            if "builtins.SystemExit" not in self.qualified(target):
                return
            what = "raise SystemExit"
        else:
            names = self.qualified(node.func)
            if names & set(apis.HARD_EXITS):
                what, hard = apis.HARD_EXITS[sorted(names & set(apis.HARD_EXITS))[0]], True
            elif names & set(apis.PROCESS_EXITS):
                what = apis.PROCESS_EXITS[sorted(names & set(apis.PROCESS_EXITS))[0]]
            elif "os.kill" in names and "getpid" in self.code(node) and "SIGKILL" in self.code(node):
                what, hard = "os.kill(os.getpid(), SIGKILL)", True
            else:
                return
        for lock, at, handle in inside:
            if not lock.outlives_process:
                continue
            if self._in_not_acquired_branch(node, at, handle):
                continue
            if hard or (lock.release == "plain" and lock.release_span is not None
                        and self.line(node) < lock.release_span.line):
                unit.facts.append(CodeFact("exit-in-scope", self.span(node), what, lock))
                return

    def _in_not_acquired_branch(self, node, at, handle) -> bool:
        """``if not lock.acquire(False): sys.exit()`` exits because the lock was not taken."""
        for parent in self.parents(node):
            if isinstance(parent, (cst.If, cst.While)):
                test = parent.test
                if _contains(test, at):
                    return True
                test_text = self.code(test)
                if handle and handle in test_text:
                    return True
                result = self._assigned_to(at)
                if result and re.search(rf"\b{re.escape(result)}\b", test_text):
                    return True
            if isinstance(parent, cst.ExceptHandler):
                return True
            if isinstance(parent, cst.FunctionDef):
                return False
        return False

    def _fork_fact(self, unit: Unit, call: cst.Call, inside) -> None:
        flocks = [(lock, at, h) for lock, at, h in inside if lock.stale_handling == "kernel"
                  and lock.scope == "host"]
        if not flocks:
            return
        names = self.qualified(call.func)
        what = None
        if names & apis.FORKS:
            what = "os.fork()"
        elif names & apis.MP_FORKS and not self.spawn_context:
            what = f"{sorted(names & apis.MP_FORKS)[0]}(...) with the fork start method"
        elif names & apis.SUBPROCESS:
            close_fds = argument(call, "close_fds", None)
            if (close_fds is not None and self.eval.falsy(close_fds)) or has_keyword(call, "pass_fds"):
                what = "subprocess with inherited file descriptors"
        if what:
            lock = flocks[0][0]
            unit.facts.append(CodeFact("fork-in-scope", self.span(call), what, lock))

    def _unlink_fact(self, unit: Unit, call: cst.Call, inside) -> None:
        names = self.qualified(call.func)
        target = None
        if names & {"os.remove", "os.unlink"} and call.args:
            target = self._path_text(call.args[0].value)
        elif isinstance(call.func, cst.Attribute) and call.func.attr.value == "unlink":
            target = self._path_text(call.func.value)
        if target is None:
            return
        for lock, at, handle in inside:
            if lock.kind in ("flock", "lockf", "filelock", "portalocker", "fasteners") and \
                    lock.path is not None and lock.path == target:
                unit.facts.append(CodeFact("unlink-flock", self.span(call), target, lock))
                return

    def _brief_thread_lock(self, lock: Lock, at) -> bool:
        """``with self._lock:`` around a few statements and no ``await``: a short critical
        section, not a wait that stalls the loop."""
        if lock.scope != "process" or lock.release != "with":
            return False
        w = next((p for p in self.parents(at) if isinstance(p, cst.With)), None)
        return w is not None and not any(isinstance(n, cst.Await) for n in _walk(w.body))

    def _offloaded(self, node) -> bool:
        return any(isinstance(p, cst.Call) and (self.qualified(p.func) & {"asyncio.to_thread"} or
                                                 self.code(p.func).endswith("run_in_executor"))
                   for p in self.parents(node))

    def _created_here(self, handle: str, nodes) -> bool:
        return any(isinstance(n, cst.Assign) and isinstance(n.value, cst.Call)
                   and any(self.code(t.target) == handle for t in n.targets) for n in nodes)

    def _retry_decorated(self, unit: Unit, acquisitions) -> None:
        """A try-lock whose failure raises, in a function retried at short intervals."""
        retried = unit.decorators & apis.RETRY_DECORATORS or any(
            d.endswith(("tenacity.retry", "backoff.on_exception")) for d in unit.decorators)
        if isinstance(unit.node, cst.FunctionDef):
            for d in unit.node.decorators:
                if isinstance(d.decorator, cst.Call) and (has_keyword(d.decorator, "autoretry_for")
                                                          or has_keyword(d.decorator, "retry_backoff")):
                    retried = True
        nodes = self._nodes_of(unit)
        self_retry = next((n for n in nodes if isinstance(n, cst.Call) and
                           isinstance(n.func, cst.Attribute) and n.func.attr.value == "retry"
                           and self.code(n.func.value) == "self"), None)
        try_locks = [(lock, at) for lock, at, _ in acquisitions if lock.try_lock]
        if not try_locks:
            return
        raises = any(isinstance(n, cst.Raise) for n in nodes)
        if self_retry is not None:
            countdown = argument(self_retry, "countdown", None)
            seconds = self.eval.number(countdown) if countdown is not None else None
            if seconds is None or seconds < 60:
                unit.facts.append(CodeFact("retry-on-lock", self.span(self_retry),
                                           "self.retry()", try_locks[0][0]))
            return
        if retried and raises:
            node = unit.node.decorators[0] if isinstance(unit.node, cst.FunctionDef) and \
                unit.node.decorators else unit.node
            unit.facts.append(CodeFact("retry-on-lock", self.span(node),
                                       "a retry decorator", try_locks[0][0]))

    def _spin_loops(self, unit: Unit, acquisitions) -> None:
        for lock, at, _ in acquisitions:
            if not lock.try_lock:
                continue
            loop = next((p for p in self.parents(at) if isinstance(p, (cst.While, cst.For))), None)
            if loop is None or isinstance(loop, cst.For):
                continue  # a for loop is bounded by its iterable
            body_nodes = list(_walk_unit(loop.body))
            sleeps = any(isinstance(n, cst.Call) and self.qualified(n.func) & apis.SLEEPS
                         for n in body_nodes)
            test = self.code(loop.test)
            bounded = not (test in ("True", "1")) or any(
                isinstance(n, cst.Comparison) and re.search(r"time|monotonic|deadline|attempt|tries|retries|count",
                                                            self.code(n)) for n in body_nodes)
            if sleeps and not bounded:
                unit.facts.append(CodeFact("retry-on-lock", self.span(loop),
                                           "a spin loop with no deadline", lock))

    def _dropped_on_return(self, unit: Unit, acquisitions) -> None:
        """A helper that takes a kernel lock on a local and returns without keeping it."""
        if not isinstance(unit.node, cst.FunctionDef) or unit.is_contextmanager or \
                unit.is_generator:
            return
        body = unit.node.body
        nodes = self._nodes_of(unit)
        returns = [n for n in nodes if isinstance(n, cst.Return)]
        for lock, at, handle in acquisitions:
            if lock.stale_handling != "kernel" or not handle or not handle.isidentifier():
                continue
            if lock.release != "process-exit":
                continue
            if any(r.value is not None and handle in self.code(r.value) for r in returns):
                continue
            if re.search(rf"\bglobal\s+{re.escape(handle)}\b", self.code(unit.node)):
                continue
            if any(isinstance(n, cst.With) and any(i.asname is not None and self.code(i.asname.name) == handle
                                                   for i in n.items) for n in nodes):
                continue  # the with block closes it: the scope is the block
            if not self._created_here(handle, nodes):
                continue  # a parameter: the caller owns the file object
            top = next((s for s in body.body if _contains(s, at)), None)
            if top is None or not isinstance(top, cst.SimpleStatementLine):
                continue  # nested in with/try/if: not a bare "take the lock and return" helper
            after = [s for s in body.body if self.line(s) > self.end_line(top)]
            if all(_is_return_or_pass(s) for s in after):
                unit.facts.append(CodeFact("handle-dropped", self.span(at),
                                           f"{handle} is a local of {unit.name}(), closed when it returns",
                                           lock))


def _float(text: str) -> float | None:
    try:
        return float(text.strip())
    except ValueError:
        return None


def _writes_pid(statement_code: str) -> bool:
    return "getpid" in statement_code


def _negated(test) -> bool:
    return isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)


def _is_return_or_pass(stmt) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Return, cst.Pass)) for s in stmt.body)
    return False


def _is_main_guard(node: cst.If) -> bool:
    test = node.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    left, right = test.left, test.comparisons[0].comparator
    values = {getattr(left, "value", None), getattr(right, "value", None)}
    return "__name__" in values and any(isinstance(v, str) and "__main__" in v for v in values)


_BUILTINS = set(dir(builtins))


def _dotted(node) -> str:
    if isinstance(node, cst.Attribute):
        return f"{_dotted(node.value)}.{node.attr.value}"
    return node.value if isinstance(node, cst.Name) else ""


class _ParentMap:
    """``get(node)`` like libcst's ParentNodeProvider mapping, from the collector's pass."""

    def __init__(self, parents: dict[int, cst.CSTNode]):
        self._parents = parents

    def get(self, node):
        return self._parents.get(id(node))


def _contains(tree, node) -> bool:
    return tree is node or any(n is node for n in _walk(tree))


def _walk(node):
    """Every node below ``node`` (depth first, in source order)."""
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        yield child
        stack.extend(reversed(child.children))


def _walk_unit(node):
    """Nodes of a unit's body, not descending into nested functions and classes."""
    stack = [node] if not isinstance(node, (list, tuple)) else list(reversed(node))
    while stack:
        child = stack.pop()
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        yield child
        stack.extend(reversed(child.children))
