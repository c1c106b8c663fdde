"""What every part of the module analyser shares: the parsed module, the state the
passes fill in (declared here, so that each part says what it reads), and the node helpers
(names, positions, parents, the units nodes belong to).

The analyser's parts (lock calls, database locks, hazards, use sites) are classes over this
base; ``module._ModuleAnalyser`` composes them and runs the passes in order.
"""
from __future__ import annotations

import builtins
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst
from libcst._nodes.expression import _BaseParenthesizedNode

from ...model import ArgumentSlot, Release, Span, StaleHandling
from . import apis
from .facts import MODULE, ModuleFacts, Unit
from .positions import NEWLINE, Range, positions
from .symbolize import Symbolizer, assigned_names, bound_names
from .symbols import Param
from .syntax import ParentMap, children, dotted, is_main_guard
from .values import Evaluator, argument

#: a function's ``name = value`` statements: name -> (line, value), in order
Assignments = dict[str, list[tuple[int, cst.BaseExpression]]]

if TYPE_CHECKING:
    from .idempotency import Origin
    from .lock_calls import CallIndex, LockSpec


class _Collector:
    """One pass over the module: every node but trivia (``syntax.TRIVIA``) in source
    order, with its parent and the unit it belongs to; everything else reads its lists.
    It walks with ``syntax.children`` rather than a ``CSTVisitor``, which rebuilds every
    node it visits.
    """

    def __init__(self):
        self.order: list[cst.CSTNode] = []
        self.by_unit: dict[int, list[cst.CSTNode]] = {}  # id(unit node) -> nodes
        self.parent: dict[int, cst.CSTNode] = {}
        self.reversed_children: dict[int, tuple] = {}  # id(node) -> (see children_known)
        self.aliases: dict[str, str] = {}  # local name -> qualified name, from imports
        self.star_imports: list[str] = []  # modules imported whole: ``from x import *``
        self._stack: list[cst.CSTNode] = []

    def collect(self, module: cst.Module) -> None:
        """Visit every node, depth first in source order; a unit's node is left (popped
        from the stack of units) once everything below it has been visited."""
        parents, known, visit = self.parent, self.reversed_children, self.visit
        pending: list[cst.CSTNode | None] = [module]
        while pending:
            node = pending.pop()
            if node is None:  # the marker after a unit's subtree: leave the unit
                self._stack.pop()
                continue
            if visit(node):
                pending.append(None)
            below = children(node)
            below.reverse()
            for child in below:
                parents[id(child)] = node
            known[id(node)] = tuple(below)
            pending.extend(below)

    def visit(self, node) -> bool:
        """Record a node; True when it opens a unit."""
        self.order.append(node)
        kind = type(node)  # exact types: isinstance goes through ABCMeta, a million times
        if kind is cst.Import or kind is cst.ImportFrom:
            self._imports(node)
        if self._stack:
            self.by_unit[id(self._stack[-1])].append(node)
        if kind is cst.FunctionDef or (kind is cst.If and is_main_guard(node)
                                       and not self._in_function()):
            self._stack.append(node)
            self.by_unit[id(node)] = []
            return True
        return False

    def _imports(self, node) -> None:
        if isinstance(node, cst.Import):
            for alias in node.names:
                name = dotted(alias.name)
                if alias.asname is not None:
                    self.aliases[dotted(alias.asname.name)] = name
                else:
                    root = name.split(".")[0]
                    self.aliases[root] = root
            return
        base = "." * len(node.relative) + (dotted(node.module) if node.module else "")
        if isinstance(node.names, cst.ImportStar):
            if not self._stack:  # (Python allows it at module level only)
                self.star_imports.append(base)
            return
        for alias in node.names:
            name = dotted(alias.name)
            local = dotted(alias.asname.name) if alias.asname is not None else name
            self.aliases[local] = f"{base}.{name}" if base and not base.endswith(".") else base + name

    def _in_function(self) -> bool:
        return any(isinstance(n, cst.FunctionDef) for n in self._stack)


class ModuleBase:
    """The module under analysis and the state its passes share."""

    def __init__(self, path, module, text: str, facts: ModuleFacts,
                 imported_forwarders: dict[str, str] | None = None):
        self.path = path
        self.module = module
        self.facts = facts
        self.constants: dict[str, cst.BaseExpression] = {}
        self.eval = Evaluator(self.constants, self.qualified)
        #: names bound to lock objects / redis clients, module-wide (text -> (api name, spec))
        self.bindings: dict[str, LockSpec] = {}
        #: names a function binds to lock objects, by id(unit node): its own, not the
        #: module's (``lock = r.lock("a")`` in one function is not ``lock`` in another)
        self.unit_bindings: dict[int, dict[str, LockSpec]] = {}
        #: names bound to a ``functools.partial`` of a kernel lock call (``lock =
        #: partial(fcntl.flock, fh.fileno(), LOCK_EX | LOCK_NB)``), by id(function node),
        #: None for the module's: calling the name is the call
        self.kernel_partials: dict[int | None, dict[str, cst.Call]] = {}
        #: id(call of such a name) -> the call the partial makes, read where it is called
        self.partial_calls: dict[int, cst.Call] = {}
        self.clients: set[str] = set()
        #: names bound to API clients: name -> qualified names of the factory (StripeClient...)
        self.client_kinds: dict[str, set[str]] = {}
        self.spawn_context = False
        #: id(acquisition node) -> the expression of a cluster lock's key
        self.lock_keys: dict[int, cst.BaseExpression] = {}
        self.atexit_release: set[str] = set()
        #: functions the module hands to a server as per-worker start-up handlers
        self.worker_hooks: set[str] = set()
        self.module_text = text
        self.opened: dict[str, str | None] = {}  # handle -> path of `handle = open(path)`
        collector = _Collector()
        collector.collect(module)
        self.order = collector.order
        self.star_imports = collector.star_imports
        self.by_unit = collector.by_unit
        self.reversed_children = collector.reversed_children
        self._parent = ParentMap(collector.parent)
        self.aliases = collector.aliases
        #: module-level functions and classes (they resolve to their own names), and names
        #: the module assigns (which shadow builtins)
        self.defined = {s.name.value for s in module.body
                        if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
        self._qualified_cache: dict[int, set[str]] = {}
        self._stale: StaleHandling | None = None
        #: objects a process id is written to that stand for a pid file (built on first use)
        self._stores: frozenset[str] | None = None
        #: (function, the name its object has in it) -> its effects on lock-file paths
        self._effects_memo: dict = {}
        #: id(with statement) -> whether its block awaits anything
        self._awaits_in: dict[int, bool] = {}
        #: id(while loop) -> its body's nodes when it sleeps and has no limit, else None
        #: (every call site in the loop asks whether it spins)
        self._unbounded_sleeps: dict[int, list | None] = {}
        #: id(a unit's calls) -> their releases (see ``LockCalls._index_of``)
        self._call_indexes: dict[int, CallIndex] = {}
        #: id(try statement) -> whether a handler of it returns a value (asked per call)
        self._handlers_tell: dict[int, bool] = {}
        #: the recognisers ask for the same node's span, a unit's own nodes and a
        #: function's assignments again and again: id(node) -> each, made once (one
        #: ``Span`` per node is also one copy in the cached facts)
        self._spans: dict[int, Span] = {}
        self._unit_nodes_of: dict[int, list] = {}
        self._assignments_of: dict[int, Assignments] = {}
        #: filled by ``_ModuleAnalyser.run``: the units by id(node), each node's unit, and
        #: where the values helpers return come from
        self._units: dict[int, Unit] = {}
        self._node_unit: dict[int, int] = {}
        self.helpers: dict[str, Origin | None] = {}
        #: id(call of a forwarding helper) -> the chain it stands for (``db_locks``), and
        #: the nodes those chains are made of
        self._expansions: dict[int, cst.Call | None] = {}
        self._written: dict[int, cst.Call] = {}  # id(rebuilt chain) -> the helper's call
        #: other modules' forwarding helpers (dotted as imported -> source), and those the
        #: module calls with a query but was not given
        self.imported_forwarders = imported_forwarders or {}
        self._wanted: set[str] = set()
        self._grafted: list[cst.CSTNode] = []
        literals = Evaluator({}, self.qualified)
        self.sym = Symbolizer(self.aliases, self.defined | assigned_names(module.body),
                              lambda node: _literal(literals, node), self._constructor_span,
                              self._local_names, bool(self.star_imports))

    def qualified(self, node) -> set[str]:
        """The dotted name an expression refers to (``{"fcntl.flock"}``), or an empty set."""
        key = id(node)
        if key not in self._qualified_cache:
            self._qualified_cache[key] = self._resolve(node)
        return self._qualified_cache[key]

    def _resolve(self, node) -> set[str]:
        attrs = []
        while type(node) is cst.Attribute:
            attrs.append(node.attr.value)
            node = node.value
        suffix = "".join(f".{a}" for a in reversed(attrs))
        if type(node) is cst.Call and type(node.func) is cst.Name and \
                node.func.value in self.defined:
            return {node.func.value + suffix} if suffix else set()  # Job().run -> Job.run
        if not isinstance(node, cst.Name):
            return set()
        name = node.value
        if name in self.aliases:
            return {self.aliases[name] + suffix}
        if name in self.defined:
            return {name + suffix}
        if name in BUILTINS and name not in self.constants:
            return {f"builtins.{name}{suffix}"}
        return set()

    @cached_property
    def _positions(self) -> tuple[dict[int, Range], str]:
        """Every node's range, and the code they index: a code-generation pass over the
        whole module, paid only for a module where something is found (most modules the
        prefilter lets through yield nothing)."""
        return positions(self.module)

    @property
    def _ranges(self) -> dict[int, Range]:
        return self._positions[0]

    def _constructor_span(self, call: cst.Call) -> Span | None:
        """Where a lock object is made (a finding about its TTL points there); positions
        are computed for no other call, as they cost a pass over the whole module."""
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("lock", "lock_task") or \
                self.qualified(func) & set(apis.LOCK_CONSTRUCTORS):
            return self.span(call)
        return None

    def span(self, node) -> Span:
        found = self._spans.get(id(node))
        if found is None:
            start_line, start_column, end_line, end_column = self._ranges[id(node)]
            found = self._spans[id(node)] = Span(self.path, start_line, start_column + 1,
                                                 end_line, end_column + 1)
        return found

    def line(self, node) -> int:
        return self._ranges[id(node)][0]

    def end_line(self, node) -> int:
        return self._ranges[id(node)][2]

    def end(self, node) -> tuple[int, int]:
        """Where a node ends: its last line, and the column after it (from 0)."""
        return self._ranges[id(node)][2:]

    def unit_end(self, unit: Unit) -> int:
        """The last line of a unit (the module's for the module body)."""
        return self.end_line(unit.node)

    def parents(self, node):
        node = self._parent.get(node)
        while node is not None:
            yield node
            node = self._parent.get(node)

    def code(self, node) -> str:
        if type(node) in _LEAVES and not node.lpar and not node.rpar:
            return node.value  # what code generation writes for it, without its cost
        if "_positions" in self.__dict__ and isinstance(node, _BaseParenthesizedNode) and \
                type(node) is not cst.StarredElement and not node.lpar and not node.rpar and \
                id(node) in self.reversed_children:
            # an expression of the tree without parentheses spans all its code (but for a
            # starred element's comma); on one line that is its own code (a line after the
            # first would start with the indentation of the block it is in, which the
            # node's own code leaves out)
            line, start, end_line, end = self._ranges[id(node)]
            if line == end_line:
                offset = self._line_starts[line - 1]
                return self._positions[1][offset + start:offset + end]
        return self.module.code_for_node(node)

    @cached_property
    def _line_starts(self) -> list[int]:
        """Where each line of the generated code starts (lines end as positions count)."""
        return [0, *(match.end() for match in NEWLINE.finditer(self._positions[1]))]

    def _unit_nodes(self, node) -> list:
        """Nodes of a function (or ``__main__`` block), not of the functions nested in it
        (memoised; never mutated)."""
        found = self._unit_nodes_of.get(id(node))
        if found is None:
            found = self._unit_nodes_of[id(node)] = self._own_nodes(node)
        return found

    def _own_nodes(self, node) -> list:
        own = self.by_unit.get(id(node), [])
        nested = {id(n) for n in own if type(n) in _SCOPES}
        if not nested:
            return own
        skip = set()
        for n in own:
            if id(n) in nested:
                skip |= {id(x) for x in self.by_unit.get(id(n), [])}
        return [n for n in own if id(n) not in skip and id(n) not in nested]

    def _local_names(self, unit: Unit) -> set[str]:
        """The names a function's body binds and the functions defined right in it."""
        own = self.by_unit.get(id(unit.node), [])
        defs = [n for n in own if type(n) is cst.FunctionDef]
        deeper = {id(x) for d in defs for x in self.by_unit.get(id(d), [])}
        return bound_names(self._unit_nodes(unit.node)) | {
            d.name.value for d in defs if id(d) not in deeper}

    def _nodes_of(self, unit: Unit) -> list:
        return self._module_nodes if unit.name == MODULE else self._unit_nodes(unit.node)

    @cached_property
    def _module_nodes(self) -> list:
        """The module's own nodes, outside its functions (never mutated)."""
        inside = {id(n) for nodes in self.by_unit.values() for n in nodes}
        return [n for n in self.order if id(n) not in inside and id(n) not in self.by_unit]

    def unit_at(self, node) -> Unit:
        """The unit (function, ``__main__`` block, else the module) a node is written in."""
        return self._units.get(self._node_unit.get(id(node), 0)) or self._units[id(self.module)]

    def function_name(self, node: cst.FunctionDef) -> str:
        """``Class.method``, ``outer.inner``: the name of its unit."""
        names = [node.name.value]
        for parent in self.parents(node):
            if isinstance(parent, (cst.ClassDef, cst.FunctionDef)):
                names.append(parent.name.value)
        return ".".join(reversed(names))

    @cached_property  # (fixes read lines of the module's text, a few per module)
    def _lines(self) -> list[str]:
        return self.module_text.split("\n")

    def indentation(self, line: int) -> str:
        """The leading whitespace of a line of the module, as written (tabs stay tabs)."""
        text = self._lines[line - 1]
        return text[: len(text) - len(text.lstrip())]

    # -- readings of a node every part needs
    def _closing_with(self, name: str, node) -> cst.With | None:
        """The ``with open(...) as name:`` around ``node``, whose end closes the file (and
        so lets go of a kernel lock taken on it)."""
        for parent in self.parents(node):
            if type(parent) is cst.With and any(
                    isinstance(item.asname, cst.AsName) and
                    isinstance(item.asname.name, cst.Name) and item.asname.name.value == name
                    and isinstance(item.item, cst.Call) and
                    self.qualified(item.item.func) & {"builtins.open", "io.open"}
                    for item in parent.items):
                return parent
            if type(parent) in (cst.FunctionDef, cst.ClassDef):
                return None
        return None

    def _argument_slot(self, call: cst.Call, keyword: str | None, position: int | None,
                  unit: float = 1.0) -> ArgumentSlot | None:
        """Where ``call`` takes an argument (``keyword``, or at ``position``), for fixes;
        None when the call has no room a fix can use (``f(*args)``, a keyword unknown)."""
        if keyword is None or any(a.star == "*" for a in call.args):
            return None
        value = argument(call, keyword, position)
        end_line, end_column = self.end(call)
        line = self._lines[end_line - 1]
        rest = line[end_column:]
        line_end = Span(self.path, end_line, len(line) + 1, end_line, len(line) + 1) \
            if not rest.rstrip().endswith("\\") and not any(q in rest for q in "'\"#") \
            else None
        if call.args:
            last_line, last_column = self.end(call.args[-1].value)
            after = Span(self.path, last_line, last_column + 1, last_line, last_column + 1)
        elif all(isinstance(w, cst.SimpleWhitespace) and not w.value
                 for w in (call.whitespace_after_func, call.whitespace_before_args)):
            func_line, func_column = self.end(call.func)  # "f()": right after "("
            after = Span(self.path, func_line, func_column + 2, func_line, func_column + 2)
        else:
            return None
        return ArgumentSlot(keyword, unit, self.span(value) if value is not None else None, after,
                       not call.args, line_end)

    def _assigned_to(self, call) -> str | None:
        """The name a call's result is assigned to (``lock = r.lock(...)``)."""
        parent = self._parent.get(call)
        if type(parent) is cst.Assign:
            return self.code(parent.targets[0].target)
        return None

    def _is_exit_call(self, node) -> bool:
        return isinstance(node, cst.Call) and bool(
            self.qualified(node.func) & (set(apis.PROCESS_EXITS) | set(apis.HARD_EXITS)))

    def _path_text(self, node) -> str | None:
        """A path expression as text: its value when known, else its source."""
        if node is None:
            return None
        if isinstance(node, cst.Call) and self.qualified(node.func) & {"pathlib.Path", "pathlib.PosixPath"} \
                and node.args:
            return self._path_text(node.args[0].value)
        return self.eval.string(node) or self.code(node)

    def _always_runs(self, node) -> bool:
        """Inside a ``finally`` or a handler of every exception."""
        return any(type(p) is cst.Finally or type(p) is cst.ExceptHandler and (
            p.type is None or self.code(p.type) in ("Exception", "BaseException"))
                   for p in self.parents(node))

    def _release_kind(self, release_call, handle,
                      unit: Unit) -> tuple[Release, Span | None, int]:
        """(release kind, span of a plain release, last protected line)."""
        if release_call is None:
            if handle and any(handle in a for a in self.atexit_release):
                return "atexit", None, self.unit_end(unit)
            return "none", None, self.unit_end(unit)
        end = self.line(release_call)
        if self._always_runs(release_call):
            # (a release in a handler of every exception runs exactly when an exception
            # would skip a plain one: onyx's queued-task marker, kept after a success)
            return "finally", None, end
        if any(handle and handle in a for a in self.atexit_release):
            return "atexit", None, end
        return "plain", self.span(release_call), end

    def _param_condition(self, node, unit: Unit) -> tuple[Param, bool] | None:
        """The parameter an ``if`` anywhere around the node tests (``if auto:`` ... ``if
        ok:`` ... node), and whether it must be false for the node to run."""
        child = node
        for parent in self.parents(node):
            if type(parent) in (cst.FunctionDef, cst.ClassDef, cst.Module):
                return None
            if isinstance(parent, cst.If) and child in (parent.body, parent.orelse):
                test, negated = parent.test, child is parent.orelse
                if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                    test, negated = test.expression, not negated
                if isinstance(test, cst.Name) and test.value in unit.params:
                    return Param(test.value), negated
            child = parent
        return None


def _literal(evaluator: Evaluator, node) -> float | str | None:
    """A literal's value (number arithmetic and timedelta included), names not followed."""
    number = evaluator.number(node)
    return number if number is not None else evaluator.string(node)


BUILTINS = set(dir(builtins))


_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef})
#: nodes whose code is their ``value`` between their parentheses (most code asked for is a
#: name: 171k of mlflow's 235k)
_LEAVES = frozenset({cst.Name, cst.SimpleString, cst.Integer, cst.Float, cst.Imaginary})
