"""Where each node of a module is: exactly libcst's ``PositionProvider``, at less cost.

``PositionProvider`` generates the module's code and records each node's range on the way;
its codegen state opens a generator-based context manager per node and builds two
dataclasses per range. That was the largest single cost of a lock-heavy module. This
state keeps the same bookkeeping (the same calls, in the same order, from the same node
methods) with a plain context manager and ranges as tuples.
"""
from __future__ import annotations

import re

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")

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
            segments = _NEWLINE.split(value)
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


def positions(module: cst.Module) -> dict[int, Range]:
    """Every node's range, by ``id(node)``: what ``PositionProvider`` gives, as tuples."""
    state = _PositionState(module)
    module._codegen(state)
    return state.ranges
