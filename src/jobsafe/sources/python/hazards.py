"""What defeats a lock inside its scope: exits, yields, forks, unlinks, retries, blocking
waits in async code, dropped handles and ignored try-lock results.

``Hazards._observe`` records, for one place a lock is (or may be) taken, what the code
around it does: lock-agnostic ``Observations``, cached with the module; ``hazards_model.
derive`` judges them for a given lock. The split lets a lock that only the whole tree
reveals (a project helper's, used here) be judged at its use site with the same rules as
one written in place.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from ...model import Span
from . import apis
from .hazards_model import Exit, Observations, Retries
from .module_base import ModuleBase
from .syntax import contains, names_read, walk, walk_unit
from .values import argument, has_keyword

if TYPE_CHECKING:
    from .facts import Unit

class Hazards(ModuleBase):
    """The module analyser's reading of what the code around an acquisition does."""

    def _scan(self, unit: Unit, nodes) -> list[tuple[int, str, object]]:
        """The nodes of a unit any scope may care about, once: (line, what, node) for
        exits, yields, forks and unlinks."""
        found = []
        for node in nodes:
            kind = type(node)
            if kind is cst.Call:
                if self._unlinked(node) is not None:
                    found.append((self.line(node), "unlink", node))
                if isinstance(node.func, cst.Attribute) and node.args and \
                        node.func.attr.value in ("delete", "unlink"):
                    found.append((self.line(node), "delete", node))
                if self._fork(node) is not None:
                    found.append((self.line(node), "fork", node))
                if self._exit_call(node):
                    found.append((self.line(node), "exit", node))
            elif kind is cst.Raise and self._exit_call(node):
                found.append((self.line(node), "exit", node))
            elif kind is cst.Yield and unit.is_generator and not unit.is_contextmanager:
                found.append((self.line(node), "yield", node))
        return found

    def _observe(self, unit: Unit, scan, at, handle: str | None,
                 scope: tuple[int, int]) -> Observations:
        first, last = scope
        exits: list[Exit] = []
        yields: list[Span] = []
        forks: list[tuple[Span, str]] = []
        unlinks: list[tuple[Span, str]] = []
        deletes: list[tuple[Span, bool, object]] = []
        for line, what, node in scan:
            if node is at:
                continue
            unlinked = self._unlinked(node) if what == "unlink" and line >= first else None
            if unlinked is not None:
                unlinks.append((self.span(node), unlinked))
            if what == "delete" and line >= first:
                finally_ = any(isinstance(p, cst.Finally) for p in self.parents(node))
                deletes.append((self.span(node), finally_,
                                self.sym.value(node, self.unit_at(node))))
            if not first <= line <= last:
                continue
            if what == "exit":
                exit_ = self._exit(node, at, handle)
                if exit_ is not None:
                    exits.append(exit_)
            elif what == "yield":
                yields.append(self.span(node))
            elif what == "fork":
                fork = self._fork(node)
                if fork is not None:
                    forks.append((self.span(node), fork))
        return Observations(
            self.span(at), last, exits=tuple(exits), yields=tuple(yields), forks=tuple(forks),
            unlinks=tuple(unlinks), in_async=unit.is_async and not self._offloaded(at),
            brief=self._brief(at), spin=self._spin(at), dropped=self._dropped(unit, at, handle),
            deletes=tuple(deletes))

    def _retries(self, unit: Unit) -> Retries:
        retried = unit.decorators & apis.RETRY_DECORATORS or any(
            d.endswith(("tenacity.retry", "backoff.on_exception")) for d in unit.decorators)
        if isinstance(unit.node, cst.FunctionDef):
            for d in unit.node.decorators:
                if isinstance(d.decorator, cst.Call) and (has_keyword(d.decorator, "autoretry_for")
                                                          or has_keyword(d.decorator, "retry_backoff")):
                    retried = True
        nodes = self._nodes_of(unit)
        self_retry = next((n for n in nodes if type(n) is cst.Call and
                           type(n.func) is cst.Attribute and n.func.attr.value == "retry"
                           and self.code(n.func.value) == "self"), None)
        if self_retry is not None:
            countdown = argument(self_retry, "countdown", None)
            seconds = self.eval.number(countdown) if countdown is not None else None
            return Retries(self_retry=(self.span(self_retry), seconds))
        if retried and any(isinstance(n, cst.Raise) for n in nodes):
            node = unit.node.decorators[0] if isinstance(unit.node, cst.FunctionDef) and \
                unit.node.decorators else unit.node
            return Retries(decorator=self.span(node))
        return Retries()

    def _exit_call(self, node) -> bool:
        return self._exit_what(node) is not None

    def _exit(self, node, at, handle) -> Exit | None:
        found = self._exit_what(node)
        if found is None:
            return None
        what, hard = found
        return Exit(self.span(node), what, hard, self._in_not_acquired_branch(node, at, handle))

    def _exit_what(self, node) -> tuple[str, bool] | None:
        """(how, hard) for a call or raise that ends the process."""
        hard = False
        if isinstance(node, cst.Raise):
            if node.exc is None:
                return None
            target = node.exc.func if isinstance(node.exc, cst.Call) else node.exc
            if "builtins.SystemExit" not in self.qualified(target):
                return None
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
                return None
        return what, hard

    def _in_not_acquired_branch(self, node, at, handle) -> bool:
        """``if not lock.acquire(False): sys.exit()`` exits because the lock was not taken."""
        for parent in self.parents(node):
            if isinstance(parent, (cst.If, cst.While)):
                test = parent.test
                if contains(test, at):
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

    def _fork(self, call: cst.Call) -> str | None:
        names = self.qualified(call.func)
        if names & apis.FORKS:
            return "os.fork()"
        if names & apis.MP_FORKS:
            return f"{sorted(names & apis.MP_FORKS)[0]}(...) with the fork start method"
        if names & apis.SUBPROCESS:
            close_fds = argument(call, "close_fds", None)
            if (close_fds is not None and self.eval.falsy(close_fds)) or has_keyword(call, "pass_fds"):
                return "subprocess with inherited file descriptors"
        return None

    def _unlinked(self, call: cst.Call) -> str | None:
        names = self.qualified(call.func)
        if names & {"os.remove", "os.unlink"} and call.args:
            return self._path_text(call.args[0].value)
        if isinstance(call.func, cst.Attribute) and call.func.attr.value == "unlink":
            return self._path_text(call.func.value)
        return None

    def _brief(self, at) -> bool:
        """``with self._lock:`` around a few statements and no ``await``: a short critical
        section, not a wait that stalls the loop."""
        w = next((p for p in self.parents(at) if type(p) is cst.With), None)
        if w is None:
            return False
        if id(w) not in self._awaits_in:  # every call site in the block asks
            self._awaits_in[id(w)] = any(isinstance(n, cst.Await) for n in walk(w.body))
        return not self._awaits_in[id(w)]

    def _offloaded(self, node) -> bool:
        return any(type(p) is cst.Call and (self.qualified(p.func) & {"asyncio.to_thread"} or
                                                 self.code(p.func).endswith("run_in_executor"))
                   for p in self.parents(node))

    def _spin(self, at) -> Span | None:
        """An unbounded ``while`` loop that sleeps, around the acquisition."""
        loop = next((p for p in self.parents(at) if type(p) is cst.While or type(p) is cst.For),
                    None)
        if loop is None or isinstance(loop, cst.For):
            return None  # a for loop is bounded by its iterable
        if id(loop) not in self._unbounded_sleeps:
            self._unbounded_sleeps[id(loop)] = self._sleeps_without_limit(loop)
        body_nodes = self._unbounded_sleeps[id(loop)]
        return self.span(loop) if body_nodes is not None and \
            not self._new_work_each_turn(at, body_nodes) and \
            not self._leaves_when_not_taken(at, body_nodes) else None

    def _sleeps_without_limit(self, loop: cst.While) -> list | None:
        """The loop's body nodes when it sleeps and nothing bounds it, else None."""
        body_nodes = list(walk_unit(loop.body))
        if not any(type(n) is cst.Call and self.qualified(n.func) & apis.SLEEPS
                   for n in body_nodes):
            return None
        if self.code(loop.test) not in ("True", "1") or \
                self._leaves_on_limit(loop, body_nodes):
            return None
        return body_nodes

    def _leaves_when_not_taken(self, at, body_nodes) -> bool:
        """The loop leaves when the acquisition comes back empty: what it returned is kept
        (``self.item = queue.get()``, maybe read into another name), and an ``if item is
        None:``/``if not item:`` in the loop breaks or returns. A loop that stops when it
        is refused is no spin."""
        parent = self._parent.get(at)
        if not isinstance(parent, cst.Assign) or len(parent.targets) != 1:
            return False
        held = {self.code(parent.targets[0].target)}
        for n in body_nodes:  # current = self.item
            if isinstance(n, cst.Assign) and len(n.targets) == 1 and \
                    self.code(n.value) in held:
                held.add(self.code(n.targets[0].target))
        for n in body_nodes:
            if not isinstance(n, cst.If) or not any(
                    isinstance(m, (cst.Break, cst.Return)) for m in walk_unit(n.body)):
                continue
            test = n.test
            if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
                tested = test.expression
            elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
                    isinstance(test.comparisons[0].operator, cst.Is) and \
                    self.code(test.comparisons[0].comparator) == "None":
                tested = test.left
            else:
                continue
            if self.code(tested) in held:
                return True
        return False

    @staticmethod
    def _new_work_each_turn(at, body_nodes) -> bool:
        """The acquisition is given something the loop computes afresh on each turn
        (``item = queue.get()`` ... ``claim(item.id)``): a loop over work, each turn trying
        another lock, not one lock retried."""
        fresh = {t.target.value for n in body_nodes if isinstance(n, cst.Assign)
                 for t in n.targets if isinstance(t.target, cst.Name) and
                 not isinstance(n.value, (cst.SimpleString, cst.Integer, cst.Float))}
        if not fresh or not isinstance(at, cst.Call):
            return False
        return any(not fresh.isdisjoint(names_read(arg.value)) for arg in at.args)

    def _leaves_on_limit(self, loop, body_nodes) -> bool:
        """The loop leaves (break, return, raise) when a clock reading or a counter the loop
        advances passes a limit: ``if time.monotonic() > deadline: raise``,
        ``remaining = deadline - now(); if remaining <= 0: break``, ``attempt += 1``."""
        counters = {self.code(n.target) for n in body_nodes if isinstance(n, cst.AugAssign)}
        unit = self.unit_at(loop)
        assigned: dict[str, list] = {}
        for n in self._nodes_of(unit):
            if isinstance(n, cst.Assign):
                for t in n.targets:
                    assigned.setdefault(self.code(t.target), []).append(n.value)

        def timed(node, depth=0) -> bool:
            for part in [node, *walk(node)]:
                if isinstance(part, cst.Call) and self.qualified(part.func) & apis.CLOCKS:
                    return True
                if isinstance(part, cst.Name) and depth < 3:
                    if part.value in counters:
                        return True
                    if any(timed(v, depth + 1) for v in assigned.get(part.value, ())):
                        return True
            return False

        for n in body_nodes:
            if isinstance(n, cst.If) and timed(n.test) and any(
                    isinstance(m, (cst.Break, cst.Return, cst.Raise)) or
                    isinstance(m, cst.Call) and self._exit_call(m)
                    for m in walk_unit(n.body)):
                return True
        return False

    def _created_here(self, handle: str, nodes) -> bool:
        return any(isinstance(n, cst.Assign) and isinstance(n.value, cst.Call)
                   and any(self.code(t.target) == handle for t in n.targets) for n in nodes)

    def _dropped(self, unit: Unit, at, handle: str | None) -> str | None:
        """A helper that locks a local file object and returns without keeping it."""
        if not isinstance(unit.node, cst.FunctionDef) or unit.is_contextmanager or \
                unit.is_generator or not handle or not handle.isidentifier():
            return None
        body = unit.node.body
        line = self.line(at)
        top = next((s for s in body.body if self.line(s) <= line <= self.end_line(s)), None)
        if top is None or not isinstance(top, cst.SimpleStatementLine):
            return None  # nested in with/try/if: not a bare "take the lock and return" helper
        after = [s for s in body.body if self.line(s) > self.end_line(top)]
        if not all(_is_return_or_pass(s) for s in after):
            return None
        nodes = self._nodes_of(unit)
        if not self._created_here(handle, nodes):
            return None  # a parameter: the caller owns the file object
        returns = [n for n in nodes if isinstance(n, cst.Return)]
        if any(r.value is not None and handle in self.code(r.value) for r in returns):
            return None
        if any(isinstance(n, cst.Global) and any(g.name.value == handle for g in n.names)
               for n in nodes):
            return None
        if any(isinstance(n, cst.With) and any(i.asname is not None and
                                               self.code(i.asname.name) == handle
                                               for i in n.items) for n in nodes):
            return None  # the with block closes it: the scope is the block
        return f"{handle} is a local of {unit.name}(), closed when it returns"


def _is_return_or_pass(stmt) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Return, cst.Pass)) for s in stmt.body)
    return False
