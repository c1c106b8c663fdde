"""Small helpers over libcst trees shared by the Python front end."""
from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from contextlib import contextmanager

import libcst as cst

from .symbols import TYPING_WORDS


def _unchecked(node: cst.CSTNode) -> None:
    """A node's ``__post_init__`` that skips ``_validate``."""


def parse_source(text: str, config: cst.PartialParserConfig) -> cst.Module:
    """``cst.parse_module`` without the ``_validate`` each node's constructor runs: what
    the parser builds from source is valid by construction (libcst's own note on
    ``CSTNode.__post_init__`` says validation belongs to trees built by hand), and the
    checks are a third of the parse's time. The parse runs in one thread, and the hook is
    put back whatever happens."""
    checked = cst.CSTNode.__post_init__
    setattr(cst.CSTNode, "__post_init__", _unchecked)
    try:
        return cst.parse_module(text, config=config)
    finally:
        setattr(cst.CSTNode, "__post_init__", checked)


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

    def adopt(self, node, parent) -> None:
        """A node made by the analysis (a helper's chain read at its call) under ``parent``."""
        self._parents[id(node)] = parent


def contains(tree, node) -> bool:
    return tree is node or any(n is node for n in walk(tree))


class _FieldOrder(cst.CSTVisitor):
    """Records the fields a node visits, in its visiting order, without descending."""

    def __init__(self):
        self.fields: list[str] = []

    def on_visit(self, node) -> bool:
        return False

    def on_visit_attribute(self, node, attribute) -> None:
        self.fields.append(attribute)

    def on_leave_attribute(self, original_node, attribute) -> None:
        pass


#: per node class: the fields its ``_visit_and_replace_children`` announced when probed,
#: in order, and its other fields (a few classes visit a field only when it is set)
_FIELDS: dict[type, tuple[tuple[str, ...], tuple[str, ...]]] = {}


def _probe(node) -> tuple[str, ...]:
    probe = _FieldOrder()
    node._visit_and_replace_children(probe)
    return tuple(probe.fields)


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children``, in the same order, without its trivia (``TRIVIA``) and its cost.

    libcst computes ``children`` by running the node's ``_visit_and_replace_children``,
    which rebuilds (and validates) the node; that was half the time of a lock-heavy
    module. The fields a class visits, and their order, are fixed by that method's code:
    they are recorded once per class (every ``visit_*`` helper announces its field, even
    an empty one) and read with ``getattr`` after. A class that skips a field when it is
    None (``FormattedStringExpression.format_spec``) is probed again on the first node
    where that field is set. Trivia were half the nodes of a module, and no recogniser
    reads them through a walk (the few that care read them as fields).
    """
    kind = type(node)
    known = _FIELDS.get(kind)
    if known is None:
        fields = _probe(node)
        others = tuple(f.name for f in dataclasses.fields(node) if f.name not in fields)
        _FIELDS[kind] = known = (fields, others)
    fields, others = known
    for name in others:  # (a loop, not any(): this runs for most nodes)
        held = _HOLDS.get(type(getattr(node, name)))
        if held is None:
            held = _holds(type(getattr(node, name)))
        if held != _NEITHER:
            fields = _probe(node)
            if len(fields) > len(known[0]):
                _FIELDS[kind] = (fields, tuple(f for f in others if f not in fields))
            break
    out: list[cst.CSTNode] = []
    for name in fields:
        value = getattr(node, name)
        held = _HOLDS.get(type(value))
        if held is None:
            held = _holds(type(value))
        if held == _NODE:
            out.append(value)
        elif held == _NODES and value and type(value[0]) not in TRIVIA:
            out.extend(value)  # (libcst's sequences hold one kind of node)
    return out


#: whitespace and comments
LAYOUT = frozenset({cst.SimpleWhitespace, cst.ParenthesizedWhitespace, cst.Newline,
                    cst.Comment, cst.EmptyLine, cst.TrailingWhitespace})
#: nodes that only lay out the code: ``LAYOUT``, and the punctuation that holds nothing
#: but whitespace (operators, keywords' nodes and the rest are kept)
TRIVIA = LAYOUT | {
    cst.Comma, cst.Dot, cst.Colon, cst.Semicolon, cst.AssignEqual, cst.LeftParen,
    cst.RightParen, cst.LeftSquareBracket, cst.RightSquareBracket, cst.LeftCurlyBrace,
    cst.RightCurlyBrace}


#: what a field's value is, by its class: a node, a sequence of nodes, or neither
_NODE, _NODES, _NEITHER = 1, 2, 0
#: read by class once: an ``isinstance`` against libcst's abstract classes that fails
#: runs ``ABCMeta.__instancecheck__``, in Python
_HOLDS: dict[type, int] = {}


def _holds(kind: type) -> int:
    found = _HOLDS.get(kind)
    if found is None:
        found = _HOLDS[kind] = _NEITHER if kind in TRIVIA else \
            _NODE if issubclass(kind, cst.CSTNode) else \
            _NODES if issubclass(kind, (tuple, list)) else _NEITHER
    return found


#: while a module is analysed (``children_known``): id(node) -> its children in reverse
#: order, for every node of its tree, from the collector's pass (the walkers then read them
#: instead of computing them again; a node the analysis makes is not in it)
_KNOWN: dict[int, tuple] = {}


@contextmanager
def children_known(known: dict[int, tuple]):
    """The tree's nodes must outlive this block (an id is unique only among live objects)."""
    global _KNOWN
    before, _KNOWN = _KNOWN, known
    try:
        yield
    finally:
        _KNOWN = before


def _reversed_children(node) -> Sequence[cst.CSTNode]:
    known = _KNOWN.get(id(node))
    if known is not None:
        return known
    found = children(node)
    found.reverse()
    return found


def walk(node):
    """Every node below ``node`` (depth first, in source order)."""
    stack = list(_reversed_children(node))
    while stack:
        child = stack.pop()
        yield child
        stack.extend(_reversed_children(child))


def names_read(node) -> set[str]:
    """The names an expression reads, itself included (``a.b(c) == d``: a, c, d)."""
    return {n.value for n in [node, *walk(node)] if type(n) is cst.Name}


#: what a unit's walk does not enter (exact types: isinstance goes through ABCMeta)
_NESTED = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def walk_unit(node):
    """Nodes of a unit's body, not descending into nested functions and classes."""
    stack = [node] if not isinstance(node, (list, tuple)) else list(reversed(node))
    while stack:
        child = stack.pop()
        if type(child) in _NESTED:
            continue
        yield child
        stack.extend(_reversed_children(child))
