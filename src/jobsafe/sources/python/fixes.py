"""Fixes the Python front end builds while it has the syntax tree, as text edits that keep
every other line as written: a plain release moved into ``finally`` (JOB203, JOB204), a
waiting acquisition that tries once and leaves (JOB102)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

import libcst as cst

from ...model import ReleaseFix, Span, TextEdit
from .syntax import walk

if TYPE_CHECKING:
    from .module_base import ModuleBase

#: what makes the code between leave the block in a way that now releases the lock (a
#: return that skipped the release; sys.exit() too)
_JUMPS = (cst.Return, cst.Break, cst.Continue, cst.Raise, cst.Yield, cst.Await)
_STRINGS = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
#: PostgreSQL's waiting advisory locks, as SQL text spells them
_PG_WAITING = re.compile(r"(?i)\bpg_advisory(?:_xact)?_lock\s*\(")


def release_in_finally(an: ModuleBase, at: cst.CSTNode, release: cst.Call) -> ReleaseFix | None:
    """``try:`` around the statements between the acquisition and its plain release, the
    release in ``finally:``; None unless both are statements of one block, with code
    between them and no multi-line string there (re-indenting would change it)."""
    release_stmt = _statement(an, release)
    acquire_stmt = _statement(an, at)
    if release_stmt is None or acquire_stmt is None or \
            not _is_call_statement(release_stmt, release):
        return None
    block = an._parent.get(release_stmt)
    if block is None or an._parent.get(acquire_stmt) is not block or \
            not isinstance(block, (cst.IndentedBlock, cst.Module)):
        return None
    body: list[cst.CSTNode] = list(block.body)
    first, last = body.index(acquire_stmt) + 1, body.index(release_stmt)
    between = body[first:last]
    if not between:
        return None
    nodes = [n for stmt in between for n in walk(stmt)] + [between[0]]
    if any(isinstance(n, _STRINGS) and an.line(n) != an.end_line(n) for n in nodes):
        return None
    start = an.line(between[0])
    outer = an.indentation(start)
    inner = outer + an.module.default_indent
    code = [an.module.code_for_node(between[0].with_changes(leading_lines=()))]
    code += [an.module.code_for_node(stmt) for stmt in between[1:]]
    text = (outer + "try:\n" + _indented("".join(code), inner) + outer + "finally:\n"
            + _indented(an.module.code_for_node(release_stmt), inner))
    end = an.end_line(release_stmt) + 1
    straight = not any(isinstance(n, _JUMPS) or an._is_exit_call(n)
                       for stmt in between for n in walk(stmt))
    return ReleaseFix((TextEdit(Span(an.path, start, 1, end, 1), text),), straight)


def _statement(an: ModuleBase, node: cst.CSTNode) -> cst.CSTNode | None:
    """The statement of a block that holds ``node``."""
    current: cst.CSTNode | None = node
    while current is not None:
        parent = an._parent.get(current)
        if isinstance(parent, (cst.IndentedBlock, cst.Module)) and \
                isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return current
        current = parent
    return None


def _is_call_statement(stmt: cst.CSTNode, call: cst.Call) -> bool:
    """A line that only makes the call (``lock.release()``)."""
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and stmt.body[0].value is call


def _indented(code: str, indent: str) -> str:
    return "".join(indent + line if line.strip() else line
                   for line in code.splitlines(keepends=True))


def skip_when_busy(an: ModuleBase, call: cst.Call, unit_is_function: bool,
                   nonblocking_call: str, busy: str | None) -> tuple[TextEdit, ...]:
    """The statement that only makes ``call`` (a waiting acquisition) rewritten to try once
    and leave when the lock is taken: ``if not <nonblocking_call>: return`` when it
    answers with a bool (``busy`` None), else ``try: <nonblocking_call> except <busy>:
    return``; outside a function, ``raise SystemExit(0)`` leaves. No edits unless the
    statement is that call alone."""
    stmt = _statement(an, call)
    if stmt is None or not _is_call_statement(stmt, call):
        return ()
    start = an.line(stmt)
    outer = an.indentation(start)
    inner = outer + an.module.default_indent
    leave = "return" if unit_is_function else "raise SystemExit(0)"
    if busy is None:
        text = f"{outer}if not {nonblocking_call}:\n{inner}{leave}\n"
    else:
        text = f"{outer}try:\n{inner}{nonblocking_call}\n{outer}except {busy}:\n{inner}{leave}\n"
    return (TextEdit(Span(an.path, start, 1, an.end_line(stmt) + 1, 1), text),)


def try_advisory_lock(an: ModuleBase, call: cst.Call, unit_is_function: bool
                      ) -> tuple[TextEdit, ...]:
    """``cur.execute("SELECT pg_advisory_lock(…)")`` made to try once
    (``pg_try_advisory_lock``) and leave when the answer is false (``cur.fetchone()[0]``).
    No edits unless the call is a statement of its own on a cursor name, with the SQL a
    one-line literal."""
    stmt = _statement(an, call)
    func = call.func
    if stmt is None or not _is_call_statement(stmt, call) or not call.args or \
            not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name) or \
            not isinstance(call.args[0].value, cst.SimpleString):
        return ()
    literal = call.args[0].value
    found = _PG_WAITING.search(literal.value)
    if found is None or an.line(literal) != an.end_line(literal):
        return ()
    at = an.span(literal)
    column = at.column + found.start() + len("pg_")
    outer = an.indentation(an.line(stmt))
    leave = "return" if unit_is_function else "raise SystemExit(0)"
    after = an.end_line(stmt) + 1
    return (TextEdit(Span(an.path, at.line, column, at.line, column), "try_"),
            TextEdit(Span(an.path, after, 1, after, 1),
                     f"{outer}if not {func.value.value}.fetchone()[0]:\n"
                     f"{outer}{an.module.default_indent}{leave}\n"))
