"""Small helpers over libcst trees shared by the Python front end."""
from __future__ import annotations

import libcst as cst

from .symbols import TYPING_WORDS


def is_main_guard(node: cst.If) -> bool:
    test = node.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    left, right = test.left, test.comparisons[0].comparator
    values = {getattr(left, "value", None), getattr(right, "value", None)}
    return "__name__" in values and any(isinstance(v, str) and "__main__" in v for v in values)


def dotted(node) -> str:
    if isinstance(node, cst.Attribute):
        return f"{dotted(node.value)}.{node.attr.value}"
    return node.value if isinstance(node, cst.Name) else ""


def optional_class(annotation: cst.BaseExpression) -> cst.BaseExpression | None:
    """The class an annotation names, possibly optional (``Redis``, ``Redis | None``,
    ``Optional[redis.Redis]``); None for builtins, typing constructs and the rest."""
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator,
                                                                   cst.BitOr):
        sides = [annotation.left, annotation.right]
        kept = [side for side in sides if not (isinstance(side, cst.Name) and
                                               side.value == "None")]
        return optional_class(kept[0]) if len(kept) == 1 else None
    if isinstance(annotation, cst.Subscript) and dotted(annotation.value).rsplit(".", 1)[-1] \
            == "Optional" and len(annotation.slice) == 1 and \
            isinstance(annotation.slice[0].slice, cst.Index):
        return optional_class(annotation.slice[0].slice.value)
    name = dotted(annotation).rsplit(".", 1)[-1]
    return annotation if name[:1].isupper() and name not in TYPING_WORDS else None


class ParentMap:
    """``get(node)`` like libcst's ParentNodeProvider mapping, from the collector's pass."""

    def __init__(self, parents: dict[int, cst.CSTNode]):
        self._parents = parents

    def get(self, node):
        return self._parents.get(id(node))


def contains(tree, node) -> bool:
    return tree is node or any(n is node for n in walk(tree))


def walk(node):
    """Every node below ``node`` (depth first, in source order)."""
    stack = list(reversed(node.children))
    while stack:
        child = stack.pop()
        yield child
        stack.extend(reversed(child.children))


def walk_unit(node):
    """Nodes of a unit's body, not descending into nested functions and classes."""
    stack = [node] if not isinstance(node, (list, tuple)) else list(reversed(node))
    while stack:
        child = stack.pop()
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        yield child
        stack.extend(reversed(child.children))
