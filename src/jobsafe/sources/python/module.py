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
from dataclasses import replace

import libcst as cst

from ...errors import (SHALLOW_DEPTH, InternalRecursion, bracket_depth, longest_logical_line,
                        text_depth)
from ...model import CodeFact, FactKind, Lock, ParseError, Span
from . import apis
from .db_locks import FOR_UPDATE
from .facts import MAIN, MODULE, ONCE_UNITS, ClassInfo, LockOption, ModuleFacts, Unit
from .fixes import release_in_finally
from .hazards_model import derive
from .idempotency import KeyFlow, helper_origins, key_facts
from .light import python_parse
from .schedulers import scheduled_calls, worker_time_limit
from .symbolize import parameters
from .symbols import QUERY_OPTION, BinOp, Call, Either
from .syntax import children_known, contains, is_main_guard, optional_class, parse_source, walk
from .uses import UseSites
from .values import argument, literal


def parse_module(path: str, text: str, forwarders: dict[str, str] | None = None) -> ModuleFacts:
    """Analyse a module's source; a syntax error gives ``error`` and no units.
    ``forwarders``: the forwarding helpers of other modules it calls (dotted name as
    imported -> source), read at their calls as the chains they return."""
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
        module = parse_source(text, _GRAMMAR)
    except cst.ParserSyntaxError as exc:
        if _JINJA.search(text):
            return facts  # a template that renders to Python (Jinja, cookiecutter): skip
        try:
            python_parse(text)
            message = (f"not analysed: libcst cannot parse this module although Python can "
                       f"({exc.message})")
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            message = f"Python syntax error: {exc.message}"
        facts.error = ParseError(Span(path, exc.raw_line or 1, (exc.raw_column or 0) + 1), message)
        return facts
    except (RecursionError, MemoryError):
        facts.error = ParseError(Span(path, 1), "Python module too deeply nested to analyse")
        return facts
    try:
        analyser = _ModuleAnalyser(path, module, text, facts, forwarders or {})
        with children_known(analyser.reversed_children):
            analyser.run()
    except RecursionError as exc:
        if _ast_depth(text) < SHALLOW_DEPTH:
            raise InternalRecursion(f"recursion without end on {path}") from exc
        facts = ModuleFacts(path)
        facts.error = ParseError(Span(path, 1), "Python module too deeply nested to analyse")
        return facts
    for unit in facts.units.values():
        unit.node = None  # the facts are extracted: let the syntax tree go
    return facts


#: what Celery's task decorators are called (``app.task``, ``shared_task``): their
#: ``time_limit`` is the task's own runtime bound
_TASK_DECORATORS = ("task", "shared_task")
_JINJA = re.compile(r"\{%-?\s*\w+|\{\{-?\s*[\w.]+\s*(?:\|[^}]*)?-?\}\}")
#: libcst needs about 20 s per MiB of source; larger modules are generated code
MAX_MODULE_BYTES = 1024 * 1024
#: libcst's native parser overflows its stack (a crash, not an exception) on expressions
#: nested a few thousand levels deep (5,000 conditional expressions, 10,000 additions);
#: CPython's own parser refuses them safely first. Every level takes at least a character
#: of one logical line, so only a module with a longer line needs that check.
_GUARD_LINE = 4_000
_MAX_DEPTH = 600


def _newest_grammar() -> cst.PartialParserConfig:
    """libcst's newest Python grammar: code written for a newer Python than the one running
    jobsafe (``def f[T]()``, ``type X = ...``) is code, not a syntax error."""
    for version in ("3.14", "3.13", "3.12"):
        try:
            return cst.PartialParserConfig(python_version=version)
        except ValueError:
            continue
    return cst.PartialParserConfig()


_GRAMMAR = _newest_grammar()


def _too_complex(text: str) -> str | None:
    """Why the module cannot be given to libcst safely, or None."""
    deepest = bracket_depth(text)
    if deepest < 100 and longest_logical_line(text) <= _GUARD_LINE:
        return None
    try:
        tree = python_parse(text)
    except SyntaxError:
        # newer syntax than this Python's (PEP 695 generics on 3.11), or a real error:
        # libcst, with the newest grammar, decides; only the depth is unknown
        return None if deepest < 100 else "Python module too deeply nested to analyse"
    except (RecursionError, MemoryError, ValueError):
        return "Python module too deeply nested to analyse"
    return "Python module too deeply nested to analyse" if _ast_depth(tree) > _MAX_DEPTH \
        else None


def _ast_depth(source: str | ast.AST) -> int:
    """The depth of a module's syntax tree; of a text CPython cannot parse (newer syntax),
    its nesting of brackets and indentation."""
    tree: ast.AST
    if isinstance(source, str):
        try:
            tree = python_parse(source)
        except (SyntaxError, RecursionError, MemoryError, ValueError):
            return text_depth(source)
    else:
        tree = source
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, level = stack.pop()
        if level > _MAX_DEPTH:
            return level
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in ast.iter_child_nodes(node))
    return deepest


class _ModuleAnalyser(UseSites):
    def run(self) -> None:
        units = self._collect_units()
        self._units = {id(u.node): u for u in units}
        self.sym.units = {u.name: u for u in units}
        self._node_unit = {id(n): key for key, nodes in self.by_unit.items() for n in nodes}
        self._module_prepass()
        for unit in units:
            unit.per_worker = unit.name in self.worker_hooks | _GUNICORN_WORKER_HOOKS or any(
                d.endswith(_STARTUP_DECORATORS) for d in unit.decorators)
        self.facts.spawn_context = self.spawn_context
        self._summaries(units)
        self.helpers = helper_origins(self, units)
        self.facts.schedules = scheduled_calls(self, self.order)
        # (the word the prefilter keeps such a module for: most modules have none)
        limit = worker_time_limit(self, self.order) if "task_time_limit" in self.module_text \
            else None
        if limit is not None:
            self.facts.worker_time_limit = (self.sym.value(limit, None), self.span(limit))
        for unit in units:
            self._analyse_unit(unit)
            self.facts.units[unit.name] = unit
        self.facts.forwarders = self.exported_forwarders()
        self.facts.forwarders_wanted = frozenset(self._wanted)

    def _module_prepass(self) -> None:
        for stmt in self.module.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                            isinstance(small.targets[0].target, cst.Name):
                        self.constants[small.targets[0].target.value] = small.value
        for node in self.order:
            if type(node) not in _PREPASS_NODES:
                continue
            if isinstance(node, (cst.Assign, cst.AnnAssign)) and type(node.value) is cst.Call:
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) \
                    else [node.target]
                for target in targets:
                    self._bind(self.code(target), node.value,
                               self._node_unit.get(id(node)) if isinstance(target, cst.Name)
                               else None)
            elif type(node) is cst.WithItem and node.asname is not None and \
                    isinstance(node.item, cst.Call) and \
                    self.qualified(node.item.func) & {"builtins.open", "io.open"}:
                self.opened[self.code(node.asname.name)] = self._path_text(
                    argument(node.item, "file", 0))
            elif isinstance(node, cst.Call):
                self.worker_hooks |= _startup_handlers(node)
                names = self.qualified(node.func)
                if names & {"multiprocessing.set_start_method", "multiprocessing.get_context"}:
                    method = self.eval.string(argument(node, "method", 0))
                    if method in ("spawn", "forkserver"):
                        self.spawn_context = True
                if "atexit.register" in names and node.args:
                    self.atexit_release.add(self.code(node.args[0].value))

    def _bind(self, target: str, call: cst.Call, scope: int | None) -> None:
        """Note what ``target = call`` binds; ``scope``: the function whose local it is
        (None: the module's, or an attribute every method sees)."""
        made_by = self.qualified(call.func)
        self.client_kinds.setdefault(target, set()).update(made_by)
        first = argument(call, None, 0) if "functools.partial" in made_by else None
        if first is not None and self.qualified(first) & set(apis.KERNEL_LOCK_CALLS):
            self.kernel_partials.setdefault(scope, {})[target] = call
            return
        if made_by & {"builtins.open", "os.open", "io.open"}:
            self.opened[target] = self._path_text(argument(call, "file", 0))
            return
        spec = self._constructor(call)
        if spec is not None:
            if scope is None:
                self.bindings[target] = spec
            else:
                self.unit_bindings.setdefault(scope, {})[target] = spec
        elif made_by & apis.REDIS_CLIENT_FACTORIES:
            self.clients.add(target)

    def _collect_units(self) -> list[Unit]:
        units: list[Unit] = []
        module_unit = Unit(MODULE, self.module)
        units.append(module_unit)
        for node in self.order:
            if type(node) not in _UNIT_NODES:
                continue
            if isinstance(node, cst.FunctionDef):
                name = self.function_name(node)
                decorators = set()
                time_limit = None
                for d in node.decorators:
                    target = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                    names = self.qualified(target) | {self.code(target)}
                    decorators |= names
                    if isinstance(d.decorator, cst.Call) and \
                            any(n.rsplit(".", 1)[-1] in _TASK_DECORATORS for n in names):
                        time_limit = argument(d.decorator, "time_limit", None) or time_limit
                params, defaults = parameters(node)
                unit = Unit(name, node, is_async=node.asynchronous is not None,
                            decorators=decorators, params=params,
                            star_kwargs=node.params.star_kwarg.name.value
                            if node.params.star_kwarg is not None else None,
                            time_limit=(self.sym.value(time_limit, None),
                                        self.span(time_limit))
                            if time_limit is not None else None)
                unit.defaults = {k: self.sym.value(v, None) for k, v in defaults.items()}
                yields = [n for n in self._unit_nodes(node) if type(n) is cst.Yield]
                unit.is_generator = bool(yields)
                unit.is_contextmanager = bool(decorators & apis.CONTEXT_MANAGER_DECORATORS) or \
                    any(d.split(".")[-1] in ("contextmanager", "asynccontextmanager")
                        for d in decorators)
                if unit.is_contextmanager:  # where the caller's with-block runs
                    unit.yield_lines = [self.line(n) for n in yields]
                units.append(unit)
            elif isinstance(node, cst.ClassDef):
                methods = [s.name.value for s in node.body.body if isinstance(s, cst.FunctionDef)]
                self.facts.classes[node.name.value] = ClassInfo(
                    tuple(self.sym.value(b.value, None) for b in node.bases), methods)
            elif isinstance(node, cst.If) and id(node) in self.by_unit and is_main_guard(node):
                self.facts.has_main = True
                units.append(Unit(MAIN, node))
        return units

    def _lock_options(self, units: list[Unit]) -> None:
        """The options that make a class's SQL lock its rows: an ``if`` in a method that
        tests an attribute of the object (``self.opts.get("rowlock")``, ``self.opts["lock"]``,
        ``"lock" in self.opts``, ``self.for_update``) and adds ``FOR UPDATE`` text."""
        for unit in units[1:]:
            cls = self.facts.classes.get(unit.name.split(".")[-2]) if "." in unit.name else None
            if cls is None or not isinstance(unit.node, cst.FunctionDef) or \
                    unit.params[:1] != ("self",):
                continue
            for node in self._unit_nodes(unit.node):
                if type(node) is not cst.If:
                    continue
                option = _option_read(node.test)
                text = " ".join(n.value for n in walk(node.body) if type(n) is cst.SimpleString)
                if option is not None and FOR_UPDATE.search(text):
                    cls.lock_options.append(LockOption(
                        *option, waits=not re.search(r"(?i)nowait|skip\s+locked", text)))

    def _summaries(self, units: list[Unit]) -> None:
        """What other modules and callers need to know, symbolically: the module's bindings
        and imports, each class's attributes, and each unit's locals, returns and the names
        it calls (``semantics`` resolves them across the tree)."""
        self.facts.imports = dict(self.aliases)
        self.facts.star_imports = list(self.star_imports)
        module_unit = units[0]
        for stmt in self.module.body:
            for target, value in _assignments(stmt):
                if isinstance(target, cst.Name):
                    self.facts.bindings[target.value] = self.sym.value(value, module_unit)
            declared = _declared_instance(stmt)
            if declared is not None:  # manager: Manager | None = None, set by code later
                self.facts.bindings[declared[0]] = Call(self.sym.value(declared[1], module_unit))
        classes = {node.name.value: node for node in self.order if type(node) is cst.ClassDef}
        for name, node in classes.items():
            info = self.facts.classes.get(name)
            if info is None:
                continue
            for stmt in node.body.body:
                for target, value in _assignments(stmt):
                    if isinstance(target, cst.Name):
                        info.attrs.setdefault(target.value, []).append(
                            (self.sym.value(value, None), ""))
        if FOR_UPDATE.search(self.module_text):
            self._lock_options(units)
        for unit in units[1:]:
            if not isinstance(unit.node, cst.FunctionDef):
                continue
            assigned: dict[str, list] = {}
            for node in self._unit_nodes(unit.node):
                kind = type(node)
                if kind is cst.Assign or kind is cst.AnnAssign:
                    for target in ([t.target for t in node.targets] if kind is cst.Assign
                                   else [node.target]):
                        if node.value is None:
                            continue
                        if isinstance(target, cst.Name):
                            assigned.setdefault(target.value, []).append(
                                self.sym.value(node.value, unit))
                        elif isinstance(target, (cst.Tuple, cst.List)) and \
                                isinstance(node.value, (cst.Tuple, cst.List)) and \
                                len(target.elements) == len(node.value.elements):
                            for t, v in zip(target.elements, node.value.elements):  # a, b = x, y
                                if isinstance(t.value, cst.Name):
                                    assigned.setdefault(t.value.value, []).append(
                                        self.sym.value(v.value, unit))
                        elif isinstance(target, cst.Attribute) and \
                                isinstance(target.value, cst.Name) and \
                                target.value.value in ("self", "cls") and \
                                unit.params[:1] == (target.value.value,):
                            cls = self.facts.classes.get(unit.name.split(".")[-2]) \
                                if "." in unit.name else None
                            if cls is not None:
                                cls.attrs.setdefault(target.attr.value, []).append(
                                    (self.sym.value(node.value, unit), unit.name))
                elif kind is cst.WithItem and node.asname is not None and \
                        isinstance(node.asname.name, cst.Name):
                    # with r.pipeline() as pipe: what __enter__ returns, itself for most
                    assigned.setdefault(node.asname.name.value, []).append(
                        self.sym.value(node.item, unit))
                elif kind is cst.AugAssign and isinstance(node.target, cst.Name) and \
                        node.target.value in assigned and type(node.operator) in _AUG_OPS:
                    # flags |= LOCK_NB: the value after it; under an if, either value
                    values = assigned[node.target.value]
                    combined = BinOp(_AUG_OPS[type(node.operator)], values[-1],
                                     self.sym.value(node.value, unit))
                    if self._conditional(node, unit):
                        values.append(combined)
                    else:
                        values[-1] = combined
                elif kind is cst.Return and node.value is not None:
                    unit.returns.append(self.sym.value(node.value, unit))
                elif kind is cst.Call and type(node.func) is cst.Name:
                    unit.called_names.add(node.func.value)
                elif kind is cst.Call and _super_init(node):
                    unit.super_init = self.sym.value(node, unit)
            for name, values in assigned.items():
                unit.local_values[name] = values[0] if len(values) == 1 else \
                    Either(tuple(values))

    def _conditional(self, node, unit: Unit) -> bool:
        """Whether a statement of a unit runs only on some paths (under an if, a loop, a
        try)."""
        for parent in self.parents(node):
            if parent is unit.node:
                return False
            if isinstance(parent, (cst.If, cst.For, cst.While, cst.Try, cst.ExceptHandler)):
                return True
        return False

    def _runs_schedule_loop(self, thread: cst.Call) -> bool:
        """``threading.Thread(target=loop)`` or ``threading.Timer(60, loop)`` (a loop that
        re-arms itself, as khoj's ``poll_task_scheduler``) where ``loop`` calls
        ``schedule.run_pending()``."""
        timer = "threading.Timer" in self.qualified(thread.func)
        target = argument(thread, "function", 1) if timer else argument(thread, "target", None)
        if not isinstance(target, cst.Name):
            return False
        body = next((s for s in self.module.body if isinstance(s, cst.FunctionDef)
                     and s.name.value == target.value), None)
        return body is not None and any(
            isinstance(n, cst.Call) and "schedule.run_pending" in self.qualified(n.func)
            for n in walk(body))

    def _analyse_unit(self, unit: Unit) -> None:
        nodes = self._nodes_of(unit)
        main = unit.node
        if unit.name == MAIN and isinstance(main, cst.If):
            nodes = [n for n in nodes if n is not main.test and not contains(main.test, n)]
        local_bindings = dict(self.bindings)
        scopes = [unit.node, *(p for p in self.parents(unit.node)
                               if isinstance(p, cst.FunctionDef))]
        for scope in reversed(scopes):  # a closure sees its enclosing functions' names
            local_bindings.update(self.unit_bindings.get(id(scope), {}))
        calls = [n for n in nodes if type(n) is cst.Call]
        withs = [n for n in nodes if type(n) is cst.With]
        for call in calls:
            names = self.qualified(call.func)
            unit.calls.extend(sorted(names))
            started: FactKind = "worker-scheduler-start" if unit.per_worker else \
                "scheduler-start"
            paused = argument(call, "paused", None)  # start(paused=True) runs no job yet
            if unit.name not in ONCE_UNITS and isinstance(call.func, cst.Attribute) and \
                    call.func.attr.value == "start" and not (
                        isinstance(paused, cst.Name) and paused.value == "True") and \
                    self.client_kinds.get(self.code(call.func.value), set()) & apis.BACKGROUND_SCHEDULERS:
                unit.facts.append(CodeFact(started, self.span(call),
                                           f"{self.code(call.func.value)}.start()"))
            if names & apis.THREAD_STARTS:
                unit.facts.append(CodeFact("starts-threads", self.span(call),
                                           sorted(names & apis.THREAD_STARTS)[0]))
                if unit.name not in ONCE_UNITS and self._runs_schedule_loop(call):
                    unit.facts.append(CodeFact(started, self.span(call),
                                               "a thread running schedule.run_pending()"))
            if not names and isinstance(call.func, cst.Attribute) and \
                    isinstance(call.func.value, cst.Name) and call.func.value.value == "self":
                unit.calls.append(f"self.{call.func.attr.value}")
            elif not names and isinstance(call.func, cst.Attribute) and \
                    isinstance(call.func.value, cst.Call):  # Runner().run(): the method
                unit.calls.extend(f"{made}.{call.func.attr.value}"
                                  for made in sorted(self.qualified(call.func.value.func)))
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
        acquisitions.extend(self._decorator_locks(unit))
        acquisitions.extend(self._lock_files(unit, nodes, calls))
        acquisitions.extend(self._pids_under_kernel_locks(unit, acquisitions, calls))
        self.facts.claim_sweeps.extend(self._claim_sweeps(unit, nodes, calls))
        acquisitions = [(self._with_release_fix(lock, at, calls), at, handle)
                        for lock, at, handle in acquisitions]
        unit.locks.extend(lock for lock, _, _ in acquisitions)
        scan = self._scan(unit, nodes)
        observed = [(lock, self._observe(unit, scan, at, handle, lock.scope_lines or (0, -1)))
                    for lock, at, handle in acquisitions]
        unit.retries = self._retries(unit)
        unit.facts.extend(derive(observed, unit.retries, self.spawn_context))
        self._mark_escapes(unit, acquisitions, nodes)
        if unit.params[:1] == ("self",):
            unit.lets_go = {handle for handle in self._let_go_handles(calls)
                            if handle.startswith("self.")}
        flow = KeyFlow(self, nodes, self.helpers) if calls else None
        # (a query builder given a lock option may be any class of the project's: its call
        # stays a use site, for what the class may take when the option is no SQL's)
        taken = {id(at) for lock, at, _ in acquisitions
                 if (symbols := unit.lock_symbols.get(lock.span)) is None or
                 symbols.api != QUERY_OPTION}
        self._callsites(unit, nodes, calls, withs, handled | taken, scan, flow)
        unit.facts.extend(key_facts(self, nodes, self.helpers, acquisitions, flow))


    def _with_release_fix(self, lock: Lock, at, calls) -> Lock:
        """The lock, with the fix that moves its plain release into ``finally``."""
        if lock.release != "plain" or lock.release_span is None:
            return lock
        release = next((c for c in calls if self.span(c) == lock.release_span), None)
        fix = release_in_finally(self, at, release) if release is not None else None
        return replace(lock, release_fix=fix) if fix is not None else lock


#: augmented assignments as the binary operations they apply
_AUG_OPS = {cst.BitOrAssign: "|", cst.AddAssign: "+", cst.SubtractAssign: "-",
            cst.MultiplyAssign: "*"}


def _super_init(call: cst.Call) -> bool:
    """``super().__init__(...)``."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value == "__init__" and \
        isinstance(func.value, cst.Call) and isinstance(func.value.func, cst.Name) and \
        func.value.func.value == "super"


def _assignments(stmt) -> list[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]]:
    """(target, value) of the simple assignments a statement line makes."""
    if not isinstance(stmt, cst.SimpleStatementLine):
        return []
    out: list[tuple[cst.BaseAssignTargetExpression, cst.BaseExpression]] = []
    for small in stmt.body:
        if isinstance(small, cst.Assign):
            out += [(t.target, small.value) for t in small.targets]
        elif isinstance(small, cst.AnnAssign) and small.value is not None:
            out.append((small.target, small.value))
    return out


def _declared_instance(stmt) -> tuple[str, cst.BaseExpression] | None:
    """(name, class) of a module name annotated with a class and not yet set (``manager:
    Manager | None = None``, ``client: Optional[Redis]``): code assigns it later (``global
    manager; manager = self``), and what it holds then is an instance of that class."""
    small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body else None
    if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name) or not (
            small.value is None or (isinstance(small.value, cst.Name) and
                                    small.value.value == "None")):
        return None
    cls = optional_class(small.annotation.annotation)
    return (small.target.value, cls) if cls is not None else None


#: the node types each pass over the whole module looks at (libcst's concrete node classes
#: have no subclasses, so an exact type test is an isinstance test, without ABCMeta's cost)
_PREPASS_NODES = frozenset({cst.Assign, cst.AnnAssign, cst.WithItem, cst.Call})
_UNIT_NODES = frozenset({cst.FunctionDef, cst.ClassDef, cst.If})
_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef})


#: gunicorn server hooks that run in each worker process
_GUNICORN_WORKER_HOOKS = frozenset({"post_fork", "post_worker_init"})
#: decorators that make a function a per-worker start-up handler: FastAPI/Starlette
#: ``@app.on_event("startup")``, Quart's ``before_serving``, Flask's first request
_STARTUP_DECORATORS = (".on_event", ".before_serving", ".before_first_request")


def _startup_handlers(call: cst.Call) -> set[str]:
    """Functions a call registers as per-worker start-up handlers: ``FastAPI(lifespan=f)``,
    ``Starlette(on_startup=[f])``, ``app.add_event_handler("startup", f)``."""
    found: set[str] = set()
    for arg in call.args:
        keyword = arg.keyword.value if arg.keyword is not None else None
        if keyword == "lifespan" and isinstance(arg.value, cst.Name):
            found.add(arg.value.value)
        elif keyword == "on_startup" and isinstance(arg.value, (cst.List, cst.Tuple)):
            found |= {e.value.value for e in arg.value.elements if isinstance(e.value, cst.Name)}
    if isinstance(call.func, cst.Attribute) and call.func.attr.value == "add_event_handler" and \
            len(call.args) >= 2 and isinstance(call.args[0].value, cst.SimpleString) and \
            literal(call.args[0].value) == "startup" and \
            isinstance(call.args[1].value, cst.Name):
        found.add(call.args[1].value.value)
    return found


def _option_read(test) -> tuple[str, str] | None:
    """(attribute, key) of an option an ``if`` tests on the object: ``self.opts.get("k")``,
    ``self.opts["k"]``, ``"k" in self.opts`` -- or (attribute, "") for ``self.flag``."""
    def own(node) -> str | None:
        return node.attr.value if isinstance(node, cst.Attribute) and \
            isinstance(node.value, cst.Name) and node.value.value == "self" else None

    def key(node) -> str | None:
        value = literal(node) if isinstance(node, cst.SimpleString) else None
        return value if isinstance(value, str) else None

    attr: str | None = None
    found: str | None = ""
    if isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and \
            test.func.attr.value == "get" and test.args:
        attr, found = own(test.func.value), key(test.args[0].value)
    elif isinstance(test, cst.Subscript) and len(test.slice) == 1 and \
            isinstance(test.slice[0].slice, cst.Index):
        attr, found = own(test.value), key(test.slice[0].slice.value)
    elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
            isinstance(test.comparisons[0].operator, cst.In):
        attr, found = own(test.comparisons[0].comparator), key(test.left)
    else:
        attr = own(test)
    return (attr, found) if attr and found is not None else None
