"""Static values in Python source: durations, strings and flags, without running anything."""
from __future__ import annotations

import warnings

import libcst as cst

_TIMEDELTA = {"datetime.timedelta", "timedelta"}
_UNITS = {"weeks": 604800, "days": 86400, "hours": 3600, "minutes": 60, "seconds": 1,
          "milliseconds": 0.001, "microseconds": 0.000001}
_TIMEDELTA_POSITIONAL = ("days", "seconds", "microseconds", "milliseconds", "minutes", "hours",
                         "weeks")


class Evaluator:
    """Evaluates constant expressions: literals, arithmetic, module constants, timedelta."""

    def __init__(self, constants: dict[str, cst.BaseExpression], qualified):
        self.constants = constants  # module-level NAME = <expr>
        self.qualified = qualified  # node -> set of qualified names

    def number(self, node: cst.BaseExpression | None, depth: int = 0) -> float | None:
        if node is None or depth > 20:
            return None
        if isinstance(node, (cst.Integer, cst.Float)):
            value = literal(node)
            try:
                return float(value) if value is not None else None
            except OverflowError:  # a 400-digit integer literal
                return None
        if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
            value = self.number(node.expression, depth + 1)
            return -value if value is not None else None
        if isinstance(node, cst.BinaryOperation):
            left = self.number(node.left, depth + 1)
            right = self.number(node.right, depth + 1)
            if left is None or right is None:
                return None
            op = node.operator
            if isinstance(op, cst.Multiply):
                return left * right
            if isinstance(op, cst.Add):
                return left + right
            if isinstance(op, cst.Subtract):
                return left - right
            if isinstance(op, (cst.Divide, cst.FloorDivide)) and right:
                return left / right if isinstance(op, cst.Divide) else left // right
            return None
        if isinstance(node, cst.Name) and node.value in self.constants:
            return self.number(self.constants[node.value], depth + 1)
        if isinstance(node, cst.Call):
            return self._timedelta(node, depth)
        if isinstance(node, cst.Attribute) and node.attr.value == "seconds":
            return self.number(node.value, depth + 1)
        return None

    def _timedelta(self, node: cst.Call, depth: int) -> float | None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value == "total_seconds":
            return self.number(func.value, depth + 1)
        names = self.qualified(func)
        short = func.value if isinstance(func, cst.Name) else None
        if not (names & _TIMEDELTA or short == "timedelta"):
            return None
        total = 0.0
        for i, arg in enumerate(node.args):
            unit = arg.keyword.value if arg.keyword else (
                _TIMEDELTA_POSITIONAL[i] if i < len(_TIMEDELTA_POSITIONAL) else None)
            value = self.number(arg.value, depth + 1)
            if unit not in _UNITS or value is None:
                return None
            total += value * _UNITS[unit]
        return total

    def string(self, node: cst.BaseExpression | None, depth: int = 0) -> str | None:
        """A string constant, or None."""
        if node is None or depth > 20:
            return None
        if type(node) is cst.SimpleString:
            value = literal(node)
            return value if isinstance(value, str) else None
        if type(node) is cst.ConcatenatedString:
            left, right = self.string(node.left, depth + 1), self.string(node.right, depth + 1)
            return left + right if left is not None and right is not None else None
        if isinstance(node, cst.Name) and node.value in self.constants:
            return self.string(self.constants[node.value], depth + 1)
        return None

    def is_none(self, node: cst.BaseExpression | None) -> bool:
        if isinstance(node, cst.Name) and node.value in self.constants:
            node = self.constants[node.value]
        return isinstance(node, cst.Name) and node.value == "None"

    def falsy(self, node: cst.BaseExpression | None) -> bool:
        return isinstance(node, cst.Name) and node.value in ("False", "None") or \
            (isinstance(node, cst.Integer) and node.value == "0")

    def truthy(self, node: cst.BaseExpression | None) -> bool:
        return isinstance(node, cst.Name) and node.value == "True" or \
            (isinstance(node, cst.Integer) and node.value != "0")


def argument(call: cst.Call, keyword: str | None, position: int | None) -> cst.BaseExpression | None:
    """The value passed for a parameter, by keyword or by position."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    if keyword is not None:
        for a in call.args:
            if a.keyword is not None and a.keyword.value == keyword:
                return a.value
    if position is not None and position < len(positional):
        return positional[position].value
    return None


def has_keyword(call: cst.Call, keyword: str) -> bool:
    return any(a.keyword is not None and a.keyword.value == keyword for a in call.args)


def passes_kwargs(call: cst.Call) -> bool:
    return any(a.star == "**" for a in call.args)


def literal(node):
    """A literal's value; None where Python itself would refuse it (a NUL byte in a string,
    a number too long to convert). An escape Python warns about (``"\\c"``) is the code's
    business: the warning is not printed by jobsafe."""
    if type(node) is cst.SimpleString:
        text = node.value
        if "\\" not in text and "\r" not in text and "\0" not in text and \
                "b" not in node.prefix.lower():
            return node.raw_value  # what evaluating it gives, without compiling it
    try:
        if isinstance(node, cst.ConcatenatedString) or \
                isinstance(node, cst.SimpleString) and "\\" in node.value:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return node.evaluated_value
        return node.evaluated_value
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
