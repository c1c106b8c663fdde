"""What defeats a lock inside its scope: exits, yields, forks, unlinks, retries, blocking
waits in async code, dropped handles and ignored try-lock results."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from ...model import CodeFact, Lock
from . import apis
from .syntax import contains, walk, walk_unit
from .values import argument, has_keyword

if TYPE_CHECKING:
    from .facts import Unit

_BLOCKING_IN_ASYNC = ("flock", "filelock", "fasteners", "threading.Lock", "threading.RLock",
                      "redis-lock", "lockfile", "portalocker", "soft-filelock")


class Hazards:
    """Mixin of the module analyser: facts about constructs inside lock scopes."""

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
        return w is not None and not any(isinstance(n, cst.Await) for n in walk(w.body))

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
            body_nodes = list(walk_unit(loop.body))
            sleeps = any(isinstance(n, cst.Call) and self.qualified(n.func) & apis.SLEEPS
                         for n in body_nodes)
            test = self.code(loop.test)
            bounded = test not in ("True", "1") or any(
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
            top = next((s for s in body.body if contains(s, at)), None)
            if top is None or not isinstance(top, cst.SimpleStatementLine):
                continue  # nested in with/try/if: not a bare "take the lock and return" helper
            after = [s for s in body.body if self.line(s) > self.end_line(top)]
            if all(_is_return_or_pass(s) for s in after):
                unit.facts.append(CodeFact("handle-dropped", self.span(at),
                                           f"{handle} is a local of {unit.name}(), closed when it returns",
                                           lock))


def _is_return_or_pass(stmt) -> bool:
    if isinstance(stmt, cst.SimpleStatementLine):
        return all(isinstance(s, (cst.Return, cst.Pass)) for s in stmt.body)
    return False
