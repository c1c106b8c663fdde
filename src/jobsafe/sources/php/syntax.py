"""PHP source as tree-sitter-php reads it: an error-tolerant tree (a file with one broken
construct still yields the rest), never executed, with the small helpers the readers share —
node text and spans, literal values, call names, and the names a file imports."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

from tree_sitter import Node

from ...model import Span


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter_php
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_php.language_php()))


@dataclass
class PhpFile:
    """One parsed PHP file: its tree, and where its text is for spans."""

    display: str  # path as findings show it
    text: str
    root: Node
    _raw: bytes = field(repr=False, default=b"")
    #: ``use`` imports: short name (or alias) -> fully qualified name
    imports: dict[str, str] = field(default_factory=dict)
    namespace: str = ""

    @classmethod
    def parse(cls, display: str, text: str) -> PhpFile:
        raw = text.encode("utf-8", "surrogateescape")
        tree = _parser().parse(raw)
        php = cls(display, text, tree.root_node, raw)
        php._read_names()
        return php

    # -- text and positions
    def text_of(self, node: Node) -> str:
        return self._raw[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")

    def _column(self, line_start: int, byte_column: int) -> int:
        """The 1-based character column of a byte column (the line's bytes decoded)."""
        if byte_column == 0:
            return 1
        return len(self._raw[line_start:line_start + byte_column]
                   .decode("utf-8", "surrogateescape")) + 1

    def span(self, node: Node, whole: bool = True) -> Span:
        """The node's span; without ``whole``, its first line only (a statement spanning
        several lines is reported at its first line)."""
        (row, col), (end_row, end_col) = node.start_point, node.end_point
        start = node.start_byte - col  # where the node's first line starts
        if not whole and end_row != row:
            newline = self._raw.find(b"\n", node.start_byte)
            end_row, end_col = row, (newline if newline >= 0 else len(self._raw)) - start
            end_start = start
        else:
            end_start = node.end_byte - end_col
        return Span(self.display, row + 1, self._column(start, col), end_row + 1,
                    self._column(end_start, end_col))

    def first_error(self) -> Node | None:
        """The first ERROR or MISSING node: where the parser gave up on the text."""
        if not self.root.has_error:
            return None
        stack = [self.root]
        while stack:
            node = stack.pop()
            if node.type == "ERROR" or node.is_missing:
                return node
            stack.extend(c for c in reversed(node.children) if c.has_error or c.is_missing)
        return self.root

    # -- names
    def _read_names(self) -> None:
        for node in self.root.named_children:
            if node.type == "namespace_definition":
                name = node.child_by_field_name("name")
                if name is not None:
                    self.namespace = self.text_of(name)
            elif node.type == "namespace_use_declaration":
                for clause in node.named_children:
                    if clause.type != "namespace_use_clause":
                        continue
                    names = [c for c in clause.named_children
                             if c.type in ("qualified_name", "name")]
                    if not names:
                        continue
                    full = self.text_of(names[0]).lstrip("\\")
                    alias = self.text_of(names[1]) if len(names) > 1 else full.rsplit("\\", 1)[-1]
                    self.imports[alias] = full

    def qualified(self, name: str) -> str:
        """The fully qualified name a class name in this file stands for."""
        if name.startswith("\\"):
            return name[1:]
        head, _, rest = name.partition("\\")
        if head in self.imports:
            return self.imports[head] + ("\\" + rest if rest else "")
        return f"{self.namespace}\\{name}" if self.namespace else name


def parse(display: str, text: str) -> PhpFile:
    return PhpFile.parse(display, text)


# -------------------------------------------------------------------------- node helpers

def walk(node: Node, into_functions: bool = True) -> Iterator[Node]:
    """Every named node under ``node`` in source order; without ``into_functions``, the
    bodies of nested closures and functions are left out (they run when called)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        children = [c for c in current.named_children
                    if into_functions or c.type not in FUNCTION_NODES]
        stack.extend(reversed(children))


FUNCTION_NODES = frozenset({"anonymous_function", "arrow_function", "function_definition",
                            "method_declaration", "class_declaration"})
CALL_NODES = frozenset({"function_call_expression", "member_call_expression",
                        "nullsafe_member_call_expression", "scoped_call_expression"})


def arguments(call: Node) -> list[Node]:
    """The argument expressions of a call (named arguments too), in order."""
    args = call.child_by_field_name("arguments")
    if args is None:
        return []
    out = []
    for arg in args.named_children:
        if arg.type == "argument":
            value = [c for c in arg.named_children if c.type != "name" or
                     arg.child_by_field_name("name") != c]
            if value:
                out.append(value[-1])
        elif arg.type != "comment":
            out.append(arg)
    return out


def named_argument(call: Node, name: str, php: PhpFile) -> Node | None:
    args = call.child_by_field_name("arguments")
    for arg in args.named_children if args is not None else ():
        label = arg.child_by_field_name("name") if arg.type == "argument" else None
        if label is not None and php.text_of(label) == name:
            values = [c for c in arg.named_children if c != label]
            return values[-1] if values else None
    return None


def call_name(call: Node, php: PhpFile) -> str:
    """``flock``, ``->lock``, ``Cache::lock``: the called name as code spells it."""
    name = call.child_by_field_name("name") or call.child_by_field_name("function")
    text = php.text_of(name) if name is not None else ""
    if call.type == "scoped_call_expression":
        scope = call.child_by_field_name("scope")
        return f"{php.text_of(scope) if scope is not None else ''}::{text}"
    if call.type in ("member_call_expression", "nullsafe_member_call_expression"):
        return f"->{text}"
    return text.lstrip("\\")


def string_value(node: Node | None, php: PhpFile) -> str | None:
    """A string literal's value (no interpolation), else None."""
    if node is None:
        return None
    if node.type in ("string", "encapsed_string"):
        parts = [c for c in node.named_children]
        if all(c.type in ("string_content", "string_value", "escape_sequence") for c in parts):
            return "".join(php.text_of(c) for c in parts)
    return None


def number_value(node: Node | None, php: PhpFile,
                 constants: dict[str, float] | None = None) -> float | None:
    """An integer or float literal, or arithmetic of them and known constants
    (``60 * 60``, ``self::TTL``)."""
    if node is None:
        return None
    kind = node.type
    if kind in ("integer", "float"):
        try:
            text = php.text_of(node).replace("_", "")
            return float(int(text, 0)) if kind == "integer" else float(text)
        except ValueError:
            return None
    if kind == "parenthesized_expression" and node.named_children:
        return number_value(node.named_children[0], php, constants)
    if kind == "assignment_expression":  # withoutOverlapping($expiresAt = 30)
        return number_value(node.child_by_field_name("right"), php, constants)
    if kind == "unary_op_expression" and php.text_of(node).startswith("-"):
        inner = number_value(node.named_children[-1] if node.named_children else None, php,
                             constants)
        return -inner if inner is not None else None
    if kind == "binary_expression":
        left = number_value(node.child_by_field_name("left"), php, constants)
        right = number_value(node.child_by_field_name("right"), php, constants)
        operator = node.child_by_field_name("operator")
        op = php.text_of(operator) if operator is not None else ""
        if left is None or right is None:
            return None
        if op == "*":
            return left * right
        if op == "+":
            return left + right
        if op == "-":
            return left - right
        if op == "/" and right:
            return left / right
        return None
    if kind in ("class_constant_access_expression", "name") and constants is not None:
        return constants.get(php.text_of(node).split("::")[-1])
    return None


def constant_values(php: PhpFile, within: Node) -> dict[str, float]:
    """Numeric class and file constants (``const TTL = 3600;``) declared in ``within``."""
    found: dict[str, float] = {}
    for node in walk(within):
        if node.type == "const_element":
            children = node.named_children
            if len(children) >= 2:
                value = number_value(children[-1], php, found)
                if value is not None:
                    found[php.text_of(children[0])] = value
    return found


def string_constants(php: PhpFile, within: Node) -> dict[str, str]:
    """String class and file constants (``const RUNNING = 'batch.running';``) in ``within``."""
    found: dict[str, str] = {}
    for node in walk(within):
        if node.type == "const_element":
            children = node.named_children
            value = string_value(children[-1], php) if len(children) >= 2 else None
            if value is not None:
                found[php.text_of(children[0])] = value
    return found


def path_pieces(node: Node | None, php: PhpFile, directory: str,
                strings: dict[str, str] | None = None) -> list[str | None]:
    """A path expression as its concatenated pieces: literal text, or None where the value
    is not known statically. ``__DIR__`` and ``dirname(__FILE__)`` are the file's own
    ``directory`` (relative to the tree, written with a leading ``/``)."""
    if node is None:
        return [None]
    kind = node.type
    if kind == "parenthesized_expression" and node.named_children:
        return path_pieces(node.named_children[0], php, directory, strings)
    if kind == "binary_expression":
        operator = node.child_by_field_name("operator")
        if operator is not None and php.text_of(operator) == ".":
            return path_pieces(node.child_by_field_name("left"), php, directory, strings) + \
                path_pieces(node.child_by_field_name("right"), php, directory, strings)
        return [None]
    if kind in ("string", "encapsed_string"):
        return [php.text_of(c) if c.type in ("string_content", "string_value",
                                            "escape_sequence") else None
                for c in node.named_children] or [""]
    if kind == "name" and php.text_of(node) == "__DIR__":
        return ["/" + directory]
    if kind == "name" and php.text_of(node) == "__FILE__":
        return ["/" + directory + "/" + php.display.rsplit("/", 1)[-1]]
    if kind == "class_constant_access_expression" and strings is not None:
        scope, _, name = php.text_of(node).rpartition("::")
        if scope in ("self", "static") and name in strings:
            return [strings[name]]
        return [None]
    if kind == "function_call_expression" and call_name(node, php) == "dirname":
        args = arguments(node)
        inner = path_pieces(args[0] if args else None, php, directory, strings)
        levels = number_value(args[1], php) if len(args) > 1 else 1.0
        if len(inner) != 1 or inner[0] is None or levels is None:
            return [None]
        path = inner[0]
        for _ in range(int(levels)):
            path = path.rsplit("/", 1)[0] if "/" in path.rstrip("/") else "/"
        return [path]
    return [None]


def path_name(node: Node | None, php: PhpFile, strings: dict[str, str]) -> str | None:
    """The file name a path expression ends with, when its last piece is known
    (``$dir . self::RUNNING_FILE`` → the constant's value)."""
    last = path_pieces(node, php, "", strings)[-1]
    name = last.rsplit("/", 1)[-1] if last else None
    return name or None
