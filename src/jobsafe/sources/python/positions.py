"""Where each node of a module is: exactly libcst's ``PositionProvider``, at less cost
(for every node but whitespace and comments, which no recogniser asks about).

``PositionProvider`` generates the module's code and records each node's range on the way;
its codegen state opens a generator-based context manager per node and builds two
dataclasses per range. That was the largest single cost of a lock-heavy module. This
state keeps the same bookkeeping (the same calls, in the same order, from the same node
methods) with a plain context manager and ranges as tuples.
"""
from __future__ import annotations

import re

import libcst as cst
from libcst._nodes.expression import _BaseParenthesizedNode
from libcst._nodes.internal import CodegenState

from .syntax import LAYOUT

NEWLINE = re.compile(r"\r\n?|\n")

#: (start line, start column, end line, end column); lines from 1, columns from 0
Range = tuple[int, int, int, int]


class _Syntactic:
    """``record_syntactic_position``: a node's range without its surrounding whitespace,
    possibly starting at ``start_node`` or ending at ``end_node`` (already recorded)."""

    __slots__ = ("state", "node", "start_node", "end_node", "line", "column")

    def __init__(self, state: _PositionState, node, start_node, end_node):
        self.state, self.node = state, node
        self.start_node, self.end_node = start_node, end_node
        self.line, self.column = state.line, state.column

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        state = self.state
        ranges = state.ranges
        if self.start_node is not None:
            start_line, start_column = ranges[id(self.start_node)][:2]
        else:
            start_line, start_column = self.line, self.column
        if self.end_node is not None:
            end_line, end_column = ranges[id(self.end_node)][2:]
        else:
            end_line, end_column = state.line, state.column
        ranges[id(self.node)] = (start_line, start_column, end_line, end_column)


class _PositionState(CodegenState):
    """libcst's ``PositionProvidingCodegenState``, with tuples for ranges, keyed by id."""

    __slots__ = ("line", "column", "_starts", "ranges")

    def __init__(self, module: cst.Module):
        super().__init__(default_indent=module.default_indent,
                         default_newline=module.default_newline)
        self.line = 1
        self.column = 0
        self._starts: list[tuple[int, int]] = []
        self.ranges: dict[int, Range] = {}

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" in value or "\r" in value:
            segments = NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def before_codegen(self, node) -> None:
        self._starts.append((self.line, self.column))

    def after_codegen(self, node) -> None:
        line, column = self._starts.pop()
        key = id(node)
        if key not in self.ranges:  # a syntactic range, recorded inside, wins
            self.ranges[key] = (line, column, self.line, self.column)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _Syntactic(self, node, start_node, end_node)


class _Parenthesized:
    """What libcst's ``_parenthesize`` does around an expression's code (its opening
    parentheses, the expression as its syntactic position, its closing ones), as a plain
    context manager: the ``@contextmanager`` generator it is made with cost an eighth of the
    pass (every expression opens one)."""

    __slots__ = ("node", "state", "inner")

    def __init__(self, node, state: _PositionState):
        self.node, self.state = node, state
        self.inner = _Syntactic(state, node, None, None)

    def __enter__(self) -> None:
        for lpar in self.node.lpar:
            lpar._codegen(self.state)
        self.inner.line, self.inner.column = self.state.line, self.state.column

    def __exit__(self, kind, value, traceback) -> None:
        self.inner.__exit__()
        if kind is None:
            for rpar in self.node.rpar:
                rpar._codegen(self.state)


def _parenthesize(node, state: _PositionState) -> _Parenthesized:
    return _Parenthesized(node, state)


def _codegen_unrecorded(node, state: _PositionState, **kwargs) -> None:
    """Whitespace's or a comment's code (``syntax.LAYOUT``), without its range: no walk
    meets them, no range is asked of them, and none starts or ends another node's range
    (punctuation can: ``from a import (b)`` ends at its parenthesis)."""
    node._codegen_impl(state, **kwargs)


def positions(module: cst.Module) -> tuple[dict[int, Range], str]:
    """Every node's range, by ``id(node)``, but whitespace's and comments': what
    ``PositionProvider`` gives, as tuples; and the code generated on the way, which the
    ranges index (the source but for a byte-order mark or a last lone ``\r``). libcst's
    ``_parenthesize``, and whitespace's and comments' ``_codegen``, are replaced during the
    pass (and put back whatever happens); the pass runs in one thread."""
    state = _PositionState(module)
    original = _BaseParenthesizedNode._parenthesize
    setattr(_BaseParenthesizedNode, "_parenthesize", _parenthesize)
    for kind in LAYOUT:
        setattr(kind, "_codegen", _codegen_unrecorded)
    try:
        module._codegen(state)
    finally:
        setattr(_BaseParenthesizedNode, "_parenthesize", original)
        for kind in LAYOUT:
            delattr(kind, "_codegen")
    return state.ranges, "".join(state.tokens)
