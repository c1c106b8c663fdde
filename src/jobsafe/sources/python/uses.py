"""Locks that outlive the function taking them, and the places that may take such a lock:
the two halves of a project's own lock abstractions.

A lock escapes its function when the function is a context manager that yields while
holding it, an ``__enter__``/``acquire`` method, a decorator's wrapper that calls the
decorated function while holding it, or a helper that locks a file object its caller owns.
Such a lock is a template: ``semantics`` instantiates it at each use — ``with guard(...)``,
``@locked(...)``, ``take(fh)``, ``x.acquire()`` — with the arguments given there, and the
lock rules judge it there. This mixin of the module analyser records both halves.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import libcst as cst

from ...model import Lock, Release, Span
from .hazards import Hazards
from .idempotency import KeyFlow, argument_origins
from .lock_calls import LockCalls
from .symbols import UNKNOWN, Call, CallSite, LockSymbols, Param, PassedFile, project_candidate
from .db_locks import answer_names, only_reports
from .syntax import contains, names_read, walk, walk_unit

if TYPE_CHECKING:
    from .facts import Unit

_ENTER_METHODS = ("__enter__", "__aenter__", "acquire", "lock")
#: where the tests around a site stop mattering (exact types: isinstance goes through ABCMeta)
_ENCLOSING = frozenset({cst.FunctionDef, cst.ClassDef, cst.Module})


class UseSites(LockCalls, Hazards):
    def _mark_escapes(self, unit: Unit, acquisitions, nodes) -> None:
        for lock, at, handle in acquisitions:
            if self._escapes(unit, lock, at, handle, nodes):
                symbols = unit.lock_symbols.setdefault(lock.span, LockSymbols())
                symbols.escapes = True
                branch = self._branch_of(at, unit)
                if branch is not None:
                    symbols.branch = branch

    def _branch_of(self, at, unit: Unit) -> tuple[Param, bool] | None:
        """``a if p else b`` with ``p`` a parameter, ``at`` inside ``a`` or ``b``: the
        parameter, and the truth it must have for ``at`` to run."""
        node, parent = at, self._parent.get(at)
        while isinstance(parent, (cst.Attribute, cst.Call)):
            node, parent = parent, self._parent.get(parent)
        if not isinstance(parent, cst.IfExp) or node is parent.test:
            return None
        test, truth = parent.test, node is parent.body
        if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, truth = test.expression, not truth
        return (Param(test.value), truth) \
            if isinstance(test, cst.Name) and test.value in unit.params else None

    def _returned(self, at, nodes) -> bool:
        """The value of ``at`` is what the function returns (directly, as a branch of
        ``a if c else b``, or through a name)."""
        parent = self._parent.get(at)
        while isinstance(parent, cst.IfExp) and at is not parent.test:
            at, parent = parent, self._parent.get(parent)
        if isinstance(parent, cst.Return):
            return True
        name = self._assigned_to(at)
        return name is not None and any(type(n) is cst.Return and n.value is not None and
                                        self.code(n.value) == name for n in nodes)

    def _escapes(self, unit: Unit, lock: Lock, at, handle: str | None, nodes) -> bool:
        if not isinstance(unit.node, cst.FunctionDef):
            return False
        first, last = lock.scope_lines or (0, -1)
        if unit.is_contextmanager and any(type(n) is cst.Yield and first <= self.line(n) <= last
                                          for n in nodes):
            return True
        method = unit.name.rsplit(".", 1)[-1]
        if method in _ENTER_METHODS and unit.params[:1] == ("self",) and \
                lock.release not in ("with", "finally"):
            return True  # __exit__ / release() lets go
        if self._wrapper_of(unit) is not None:
            return True
        if lock.kind in ("redis-key", "cache-key") and lock.release == "none" and \
                self._returned(at, nodes):
            return True  # "did I get it": the caller holds the key, and deletes it
        if lock.kind == "db-row-lock" and (self._hands_back_query(at, nodes) or (
                self._transaction_block(at) is None and self._tells_caller(at, unit))):
            return True  # a locking query handed back: the caller runs it, in its transaction;
            # or "did I lock it" answered outside a transaction block of its own: the row
            # stays locked in the caller's transaction
        if lock.kind == "pg-advisory" and lock.release == "transaction" and \
                self._transaction_block(at) is None:
            return True  # pg_advisory_xact_lock: held until the caller's transaction ends
        if lock.kind == "db-claim" and lock.release == "none" and (
                not lock.try_lock or self._tells_caller(at, unit)):
            return True  # "did I claim it", or claimed on return: the caller holds the row
        if lock.kind in ("pid-file", "lock-file", "lock-dir") and lock.release == "none" and \
                lock.path is not None and lock.path.startswith("self.") and \
                unit.params[:1] == ("self",):
            return True  # the instance's lock file, left for its user (and __exit__) to remove
        if lock.kind in ("pid-file", "lock-file", "lock-dir") and lock.release == "none" and \
                lock.path is not None and unit.params[:1] == ("self",) and \
                self._class_removes(unit, lock.path):
            return True  # a file another method of its class removes (__exit__, release())
        if handle and lock.release in ("process-exit", "none"):
            if handle in unit.params or self._iterated_param(at, handle, unit):
                return True  # the caller's file object(s): the caller holds the lock
            if handle.startswith("self.") and unit.params[:1] == ("self",) and \
                    lock.scope != "process":
                return True  # the instance's file (FileLock.exclusive()): its user holds it
            if any(type(n) is cst.Return and n.value is not None and
                   self.code(n.value) == handle for n in nodes):
                return True  # the handle is handed back
        return False

    def _class_removes(self, unit: Unit, path: str) -> bool:
        """Another method of the unit's class removes the path."""
        cls = unit.name.rsplit(".", 1)[0]
        return any(name.rsplit(".", 1)[0] == cls and name != unit.name and
                   path in self._path_effects(name, ("self", cls)).removes
                   for name in self.sym.units)

    def _hands_back_query(self, at, nodes) -> bool:
        """The function returns the locking query (or the rows it fetched) outside any
        transaction block of its own: the rows stay locked in the caller's transaction,
        where the caller runs the query or uses the rows."""
        return self._transaction_block(at) is None and \
            self._returned(self._outermost_of(at), nodes)

    def _outermost_of(self, node):
        """The whole call chain a step belongs to (``qs.select_for_update().order_by(…)``)."""
        while True:
            parent = self._parent.get(node)
            if isinstance(parent, cst.Attribute) and parent.value is node or \
                    isinstance(parent, cst.Call) and parent.func is node:
                node = parent
                continue
            return node

    def _caught_and_told(self, call) -> bool:
        """Inside a ``try`` of its function whose handler returns a value."""
        for parent in self.parents(call):
            if type(parent) is cst.FunctionDef:
                return False
            if type(parent) is cst.Try and self._handler_tells(parent):
                return True
        return False

    def _handler_tells(self, statement: cst.Try) -> bool:
        """A handler of the ``try`` returns a value (``except NoRowsMatched: return
        False``)."""
        key = id(statement)
        if key not in self._handlers_tell:
            self._handlers_tell[key] = any(_tells(n) for handler in statement.handlers
                                           for n in walk_unit(handler))
        return self._handlers_tell[key]

    def _tells_caller(self, call, unit: Unit) -> bool:
        """What the function returns tells whether the call succeeded: the call is returned,
        a handler of a ``try`` around it returns a value, or a name its result is assigned to
        is read by a ``return`` of a value or by the test of an ``if`` that returns one
        (``_told_names``; a bare ``return`` on failure tells the caller nothing, unless
        the function hands back what it claimed on success). Read by names, not rendered
        code: every call site asks."""
        if isinstance(self._truth_of(call), cst.Return):
            return True  # return claimed / return q.execute() == 1 / return bool(n)
        for parent in self.parents(call):
            kind = type(parent)  # (exact types: isinstance goes through ABCMeta)
            if kind is cst.FunctionDef:
                break
            if (kind is cst.If or kind is cst.While) and contains(parent.test, call) and \
                    any(_tells(n) for n in walk_unit(parent.body)):
                return True  # if query.execute(): return row
            if kind is cst.Try and self._handler_tells(parent):
                return True
        names = self._result_names(call)
        if not names:
            return False
        if not self._told_names(unit).isdisjoint(names):
            return True
        # ``if not claimed: return None`` ... ``return {"id": item.id}``: the function hands
        # back what it claimed (an argument of the call), so None tells the caller it failed
        given = {name for arg in call.args for name in names_read(arg.value)} \
            if isinstance(call, cst.Call) else set()
        if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and \
                isinstance(call.func.value, cst.Name):  # query.execute(): what built query
            built = self._local_chain(call.func.value)
            given |= names_read(built) & set(unit.params) if built is not None else set()
        returned, refused = self._returns_and_refusals(unit)
        return not given.isdisjoint(returned) and not refused.isdisjoint(names)

    def _truth_of(self, node):
        """The first parent of a value that is not a test of its truth (a comparison,
        ``not``, ``and``/``or``, ``bool()``, ``.rowcount``): what its answer goes to."""
        parent = self._parent.get(node)
        while isinstance(parent, (cst.Comparison, cst.UnaryOperation, cst.BooleanOperation,
                                  cst.ComparisonTarget, cst.Arg)) or \
                isinstance(parent, cst.Attribute) and parent.attr.value == "rowcount" or \
                isinstance(parent, cst.Call) and isinstance(parent.func, cst.Name) and \
                parent.func.value == "bool":
            parent = self._parent.get(parent)
        return parent

    def _returns_and_refusals(self, unit: Unit) -> tuple[frozenset[str], frozenset[str]]:
        """The names the unit's value-returns read, and those the tests of the ``if``
        statements that return nothing (or None) read (memoised per unit)."""
        memo = self.__dict__.setdefault("_refusal_memo", {})
        if id(unit) not in memo:
            returned: set[str] = set()
            refused: set[str] = set()
            for n in self._nodes_of(unit):
                if type(n) is not cst.Return:
                    continue
                if _tells(n):
                    returned.update(names_read(n.value))
                    continue
                for parent in self.parents(n):
                    if isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
                        break
                    if isinstance(parent, cst.If):
                        refused.update(names_read(parent.test))
                        break
            memo[id(unit)] = (frozenset(returned), frozenset(refused))
        return memo[id(unit)]

    def _answer_read(self, call, unit: Unit) -> bool:
        """The call's answer may decide what runs next: not when it is tested only by an
        ``if`` that reports, or kept in names that no test and no ``return`` reads
        (``n = propagate(...)`` then only logged decides nothing). Anything else (a
        comprehension's condition, an argument, an attribute) counts as read."""
        for parent in self.parents(call):
            if type(parent) in (cst.If, cst.While):
                if contains(parent.test, call):
                    return not only_reports(parent)
                break
            if type(parent) in (cst.SimpleStatementLine, cst.FunctionDef):
                break
        names = self._result_names(call)
        return not names or not self._decision_names(unit).isdisjoint(names)

    def _decision_names(self, unit: Unit) -> frozenset[str]:
        """The names read by the unit's value-returns and by the tests of its ``if`` and
        ``while`` statements that do more than report (memoised per unit)."""
        memo = self.__dict__.setdefault("_decision_memo", {})
        if id(unit) not in memo:
            read = set(self._told_names(unit))
            for n in self._nodes_of(unit):
                if type(n) in (cst.If, cst.While) and not only_reports(n):
                    read.update(names_read(n.test))
            memo[id(unit)] = frozenset(read)
        return memo[id(unit)]

    def _told_names(self, unit: Unit) -> frozenset[str]:
        """The names whose truth a unit's value-returns answer with (``return n == 1``, not
        ``return f"{n} rows"``), and those read by the tests of its ``if``/``while``
        statements that return a value (memoised per unit)."""
        memo = self.__dict__.setdefault("_told_memo", {})
        if id(unit) not in memo:
            told: set[str] = set()
            tests = []
            for n in self._nodes_of(unit):
                if type(n) is cst.Return and _tells(n):
                    told.update(answer_names(n.value))
                    for parent in self.parents(n):  # the if/while it returns from
                        if isinstance(parent, (cst.FunctionDef, cst.ClassDef)):
                            break
                        if isinstance(parent, (cst.If, cst.While)):
                            tests.append(parent.test)
            for test in tests:
                told.update(names_read(test))
            memo[id(unit)] = frozenset(told)
        return memo[id(unit)]

    def _result_names(self, call) -> list[str]:
        """The names a call's result is assigned to (``_, count = claim()``: count)."""
        parent = self._parent.get(call)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
            return []
        target = parent.targets[0].target
        elements = [e.value for e in target.elements] if isinstance(target, cst.Tuple) \
            else [target]
        return [e.value for e in elements if isinstance(e, cst.Name) and e.value != "_"]

    def _iterated_param(self, at, handle: str, unit: Unit) -> bool:
        """``for fd in fds:`` around ``at``, ``fds`` a parameter: one of the caller's files."""
        for parent in self.parents(at):
            if isinstance(parent, cst.FunctionDef):
                return False
            if isinstance(parent, cst.For) and isinstance(parent.target, cst.Name) and \
                    parent.target.value == handle and isinstance(parent.iter, cst.Name):
                return parent.iter.value in unit.params
        return False

    def _wrapper_of(self, unit: Unit) -> str | None:
        """The decorator a nested function is the wrapper of: it calls the decorator's
        parameter (the decorated function)."""
        if "." not in unit.name:
            return None
        outer = self.sym.units.get(unit.name.rsplit(".", 1)[0])
        if outer is None or not outer.params or not isinstance(outer.node, cst.FunctionDef):
            return None
        return outer.name if outer.params[0] in unit.called_names else None

    def _callsites(self, unit: Unit, nodes, calls, withs, handled: set[int], scan,
                   flow: KeyFlow | None) -> None:
        """Places in the unit that take a lock if what they use turns out to be one."""
        self._flow = flow
        for w in withs:
            for item in w.items:
                if id(item.item) in handled:
                    continue
                self._site(unit, scan, item.item, self.sym.value(item.item, unit), "with",
                           (self.line(w), self.end_line(w)), "with",
                           result_used=item.asname is not None)  # with try_lock() as got:
                handled = handled | {id(item.item)}  # entered: not also a plain call
        if isinstance(unit.node, cst.FunctionDef):
            for d in unit.node.decorators:
                # a wrapper around a generator function returns the generator before its
                # body runs: what it holds covers the call, not the body
                scope = (self.line(d), self.line(d)) if unit.is_generator else \
                    (self.line(unit.node), self.unit_end(unit))
                if id(d.decorator) not in handled:
                    self._site(unit, scan, d.decorator, self.sym.value(d.decorator, None),
                               "decorator", scope, "with")
        for call in calls:
            if id(call) in handled:
                continue
            func = call.func
            if isinstance(func, cst.Attribute) and func.attr.value in ("acquire", "__enter__"):
                handle = self.code(func.value)
                release_call = self._release_call(handle, call, calls, ("release", "__exit__"))
                release, release_span, end = self._release_kind(release_call, handle, unit)
                self._site(unit, scan, call, self.sym.value(func.value, unit), "acquire",
                           (self.line(call), end), release, release_span, handle)
                continue
            value = self.sym.value(call, unit)
            if isinstance(value, Call) and project_candidate(value.func):
                releases: list[tuple[str, Release, Span | None, int]] = []
                files = []
                for arg in call.args:  # objects passed in and let go of here later
                    if isinstance(arg.value, cst.Name):
                        name = arg.value.value
                        found = self._release_call(name, call, calls, ("release", "__exit__")) \
                            or self._flock_unlock(name, calls, call)
                        closing = self._closing_with(name, call) if found is None else None
                        if closing is not None:  # with open(...) as fh: closing it lets go
                            releases.append((name, "with", None, self.end_line(closing)))
                        else:
                            release, span, end = self._release_kind(found, name, unit)
                            releases.append((name, release, span, end))
                        path = self._opened_path(name, unit)
                        if path is not None:  # a file object of ours
                            files.append(PassedFile(name, path, self._dropped(unit, call, name)))
                self._site(unit, scan, call, value, "call", (self.line(call), self.unit_end(unit)),
                           "process-exit", handle=self._assigned_to(call),
                           handle_releases=tuple(releases), files=tuple(files),
                           receiver=self._object_of(unit, call, calls),
                           object_confined=self._object_confined(unit, call))

    def _object_confined(self, unit: Unit, call: cst.Call) -> bool:
        """The object a call makes (``x = Guard()``) or calls a method of (``x.lock()``) is
        a local of the unit that never leaves it: CPython drops it, closing its files, when
        the unit returns."""
        func = call.func
        name = func.value.value if isinstance(func, cst.Attribute) and \
            isinstance(func.value, cst.Name) else self._assigned_to(call)
        return name is not None and name in self._confined_locals(unit)

    def _confined_locals(self, unit: Unit) -> frozenset[str]:
        """Locals of a function only ever assigned or used as ``name.attribute`` (never
        returned, passed, stored, entered or yielded), its parameters and the names it
        declares global excepted (memoised per unit)."""
        memo = self.__dict__.setdefault("_confined_memo", {})
        if id(unit) not in memo:
            if not isinstance(unit.node, cst.FunctionDef):
                memo[id(unit)] = frozenset()
                return memo[id(unit)]
            bound, leaked = set(), set(unit.params)
            for n in self._unit_nodes(unit.node):
                if type(n) in (cst.Global, cst.Nonlocal):
                    leaked.update(item.name.value for item in n.names)
                if type(n) is not cst.Name:
                    continue
                parent = self._parent.get(n)
                if type(parent) is cst.AssignTarget and parent.target is n:
                    bound.add(n.value)
                elif not (type(parent) is cst.Attribute and parent.value is n):
                    leaked.add(n.value)
            memo[id(unit)] = frozenset(bound - leaked)
        return memo[id(unit)]

    def _object_of(self, unit: Unit, call: cst.Call, calls) -> str | None:
        """The object a call makes (``x = Guard()``) or calls a method of (``self.lock()``,
        ``x.lock()``), when the unit calls methods on it later (``Unit.object_calls``)."""
        func = call.func
        receiver = _object_name(func.value) if isinstance(func, cst.Attribute) else \
            self._assigned_to(call)
        if not receiver:
            return None
        if receiver not in unit.object_calls:  # (once per object and unit)
            unit.object_calls[receiver] = [
                (self.line(c), method, *self._release_kind(c, None, unit),
                 self._param_condition(c, unit))
                for c, method in self._method_calls(unit, calls).get(receiver, ())
                if self.line(c) > self.line(call)]
        return receiver if unit.object_calls[receiver] else None

    def _method_calls(self, unit: Unit, calls) -> dict[str, list[tuple[cst.Call, str]]]:
        """The unit's method calls (and the methods' names) by the object they are called
        on (``_object_name``), in order (memoised per unit: read for each object the unit
        makes or calls)."""
        memo = self.__dict__.setdefault("_method_calls_memo", {})
        if id(unit) not in memo:
            by_object: dict[str, list[tuple[cst.Call, str]]] = {}
            for c in calls:
                func = c.func
                if type(func) is cst.Attribute:
                    name = _object_name(func.value)
                    if name is not None:
                        by_object.setdefault(name, []).append((c, func.attr.value))
            memo[id(unit)] = by_object
        return memo[id(unit)]

    def _site(self, unit: Unit, scan, node, callee, use, scope, release, release_span=None,
              handle=None, handle_releases=(), result_used: bool | None = None,
              files=(), receiver: str | None = None, object_confined: bool = False) -> None:
        if callee is UNKNOWN:
            return
        called = type(node) is cst.Call
        call = self.sym.value(node, unit) if called else None
        origins = argument_origins(self, self._flow, node) \
            if called and self._flow is not None and node.args else ()
        unit.callsites.append(CallSite(
            callee, use, self.span(node), scope, release, release_span,
            self._observe(unit, scan, node, handle, scope),
            call=call if isinstance(call, Call) else None, handle_releases=handle_releases,
            arg_origins=origins, files=files, receiver=receiver,
            object_confined=object_confined,
            result_used=result_used if result_used is not None else
            not called or self._result_checked(node),
            discarded=called and isinstance(self._parent.get(node), cst.Expr),
            # (a call whose result is dropped answers through what it raises: a claim that
            # raises when the row is taken, in a ``try`` whose handler returns a value)
            answered=called and (self._tells_caller(node, unit) if not isinstance(
                self._parent.get(node), cst.Expr) else self._caught_and_told(node)),
            answer_read=called and not isinstance(self._parent.get(node), cst.Expr) and
            self._answer_read(node, unit),
            silenced=called and self._silently_caught(node), when=self._run_when(node, unit),
            always=self._always_runs(node),
            assigned=self._assigned_to(node) if called else None))

    def _run_when(self, node, unit: Unit) -> tuple[Param, bool] | None:
        """The parameter of the unit an ``if`` around the site tests (``if flock:``)."""
        child = node
        for parent in self.parents(node):
            if type(parent) in _ENCLOSING:
                return None
            if type(parent) is cst.If and child is parent.body:
                test, negated = parent.test, False
                if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                    test, negated = test.expression, True
                if isinstance(test, cst.Name) and test.value in unit.params:
                    return Param(test.value), negated
                return None
            child = parent
        return None


def _object_name(node) -> str | None:
    """An object named by a name or an attribute of one (``inst``, ``self.guard``), as
    written; None for anything else (read without rendering code: this runs per call)."""
    if type(node) is cst.Name:
        return node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
        return f"{node.value.value}.{node.attr.value}"
    return None


def _tells(node) -> bool:
    """A ``return`` of a value other than ``None``."""
    return type(node) is cst.Return and node.value is not None and not (
        isinstance(node.value, cst.Name) and node.value.value == "None")


