"""What the semantics needs of a module no recogniser cares about, read with Python's own
``ast`` (ten times quicker than libcst): its imports, its module-level constants and its
classes' bases and class-body constants.

A lock's TTL is often a constant of another module (``from app.constants import LOCK_TTL``)
and a receiver's type an import chain through a package's ``__init__``; parsing each such
module with libcst for that cost more than the rest of a run. Functions are not summarised
here: a module that makes clients or locks mentions them and is parsed in full.
"""
from __future__ import annotations

import ast
import builtins
import warnings

from .facts import ClassInfo, ModuleFacts
from .symbols import TYPING_WORDS, UNKNOWN, Attr, BinOp, Call, Const, Global, Imported, Value

_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//",
              ast.Mod: "%", ast.BitOr: "|", ast.BitAnd: "&"}
_BUILTINS = frozenset(dir(builtins))

#: words of a module that makes clients or lock factories: parsed in full, not read here
CLIENT_WORDS = ("edis", "alkey", "caches[", "create_engine", "sessionmaker",
                "get_redis_connection")


def needs_full_parse(text: str) -> bool:
    return any(word in text for word in CLIENT_WORDS)


def python_parse(text: str) -> ast.Module:
    """CPython's own parser, without the warnings it prints about the code it reads
    (``invalid escape sequence``: the user's code, not jobsafe's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text)


def light_facts(display: str, text: str) -> ModuleFacts | None:
    """The module's imports, constants and classes; None when Python cannot parse it."""
    try:
        tree = python_parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    facts = ModuleFacts(display)
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    facts.imports[alias.asname] = alias.name
                else:
                    head = alias.name.split(".", 1)[0]
                    facts.imports[head] = head
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            if any(alias.name == "*" for alias in node.names):
                facts.star_imports.append(base)
            for alias in node.names:
                if alias.name != "*":
                    joined = f"{base}.{alias.name}" if not base.endswith(".") else \
                        f"{base}{alias.name}"
                    facts.imports[alias.asname or alias.name] = joined
    reader = _Reader(facts.imports)
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            facts.bindings[node.targets[0].id] = reader.value(node.value)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            declared = _optional_class(node.annotation) if node.value is None or (
                isinstance(node.value, ast.Constant) and node.value.value is None) else None
            if declared is not None:  # manager: Manager | None = None (see module.py)
                facts.bindings[node.target.id] = Call(reader.value(declared))
            elif node.value is not None:
                facts.bindings[node.target.id] = reader.value(node.value)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            nodes = _nodes(node)  # (one walk for the three questions)
            facts.function_calls[node.name] = _called(nodes)
            if _calls_a_parameter(node, nodes):
                facts.param_callers.add(node.name)
            facts.function_returns[node.name] = frozenset().union(*(
                _called(_nodes(n.value)) for n in nodes
                if isinstance(n, ast.Return) and n.value is not None))
            if isinstance(node, ast.FunctionDef) and _forwards(node):
                facts.forwarders[node.name] = ast.get_source_segment(text, node) or ""
        elif isinstance(node, ast.ClassDef):
            info = ClassInfo(bases=tuple(reader.value(b) for b in node.bases))
            for stmt in node.body:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    info.methods.append(stmt.name)
                    facts.function_calls[f"{node.name}.{stmt.name}"] = _called(_nodes(stmt))
                elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and \
                        isinstance(stmt.targets[0], ast.Name):
                    info.attrs.setdefault(stmt.targets[0].id, []).append(
                        (reader.value(stmt.value), ""))
            facts.classes[node.name] = info
    return facts


def _nodes(root: ast.AST) -> list[ast.AST]:
    """``root`` and every node below it, as ``ast.walk`` yields them (breadth first),
    without its generators."""
    nodes = [root]
    for node in nodes:  # (the list grows while it is read)
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                nodes.append(value)
            elif isinstance(value, list):
                nodes.extend(item for item in value if isinstance(item, ast.AST))
    return nodes


def _calls_a_parameter(function: ast.FunctionDef | ast.AsyncFunctionDef,
                       nodes: list[ast.AST]) -> bool:
    args = function.args
    params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in params
               for n in nodes)


def _forwards(function: ast.FunctionDef) -> bool:
    """Only returns a call chain of its parameters (``db_locks._forwarded_chain``, read by
    another module: no name of this one)."""
    args = function.args
    if function.decorator_list or args.vararg or args.kwarg or args.posonlyargs:
        return False
    body = function.body[1:] if len(function.body) > 1 and isinstance(
        function.body[0], ast.Expr) and isinstance(function.body[0].value, ast.Constant) and \
        isinstance(function.body[0].value.value, str) else function.body
    if len(body) != 1 or not isinstance(body[0], ast.Return) or \
            not isinstance(body[0].value, ast.Call):
        return False
    params = {a.arg for a in [*args.args, *args.kwonlyargs]}
    return all(isinstance(n, (ast.Call, ast.Attribute, ast.keyword, ast.Load)) or
               isinstance(n, ast.Name) and n.id in params or
               isinstance(n, ast.Constant) and isinstance(n.value, (str, int, float))
               for n in ast.walk(body[0].value))


def _optional_class(annotation: ast.expr) -> ast.expr | None:
    """``syntax.optional_class`` over ``ast``: the class an annotation names, if optional."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        kept = [side for side in (annotation.left, annotation.right)
                if not (isinstance(side, ast.Constant) and side.value is None)]
        return _optional_class(kept[0]) if len(kept) == 1 else None
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).rsplit(
            ".", 1)[-1] == "Optional":
        return _optional_class(annotation.slice)
    if not isinstance(annotation, (ast.Name, ast.Attribute)):
        return None
    name = annotation.id if isinstance(annotation, ast.Name) else annotation.attr
    return annotation if name[:1].isupper() and name not in TYPING_WORDS else None


def _called(nodes: list[ast.AST]) -> frozenset[str]:
    """The names a function's nodes call (``f()``, ``obj.m()``: f, m; ``Guard()``: Guard)."""
    out = set()
    for node in nodes:
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                out.add(func.id)
            elif isinstance(func, ast.Attribute):
                out.add(func.attr)
                if isinstance(func.value, ast.Name):
                    out.add(func.value.id)
    return frozenset(out)


class _Reader:
    """Module-level expressions as the symbolic values ``symbolize`` makes of them."""

    def __init__(self, imports: dict[str, str]):
        self.imports = imports

    def value(self, node: ast.expr, depth: int = 0) -> Value:
        if depth > 40:
            return UNKNOWN
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or value is None or isinstance(value, str):
                return Const(value)
            if isinstance(value, (int, float)):
                return Const(float(value))
            return UNKNOWN
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            inner = self.value(node.operand, depth + 1)
            if isinstance(inner, Const) and isinstance(inner.value, float):
                return Const(-inner.value)
            return UNKNOWN
        if isinstance(node, ast.Name):
            if node.id in self.imports:
                return Imported(self.imports[node.id])
            if node.id in ("None", "True", "False"):
                return Const({"None": None, "True": True, "False": False}[node.id])
            if node.id in _BUILTINS:
                return Imported(f"builtins.{node.id}")
            return Global(node.id)
        if isinstance(node, ast.Attribute):
            base = self.value(node.value, depth + 1)
            return Imported(f"{base.dotted}.{node.attr}") if isinstance(base, Imported) \
                else Attr(base, node.attr)
        if isinstance(node, ast.BinOp) and type(node.op) in _OPERATORS:
            return BinOp(_OPERATORS[type(node.op)], self.value(node.left, depth + 1),
                         self.value(node.right, depth + 1))
        if isinstance(node, ast.Call):
            args: list[tuple[str, Value]] = []
            star = False
            position = 0
            for arg in node.args:
                if isinstance(arg, ast.Starred):
                    star = True
                    continue
                args.append((f"#{position}", self.value(arg, depth + 1)))
                position += 1
            for keyword in node.keywords:
                if keyword.arg is None:
                    star = True
                    continue
                args.append((keyword.arg, self.value(keyword.value, depth + 1)))
            return Call(self.value(node.func, depth + 1), tuple(args), star)
        return UNKNOWN
