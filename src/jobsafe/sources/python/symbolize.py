"""libcst expressions to ``symbols`` values, in the scope of a module and one of its units:
a name is a parameter, a local, a top-level name of the module, an import, or a builtin."""
from __future__ import annotations

import builtins
from sys import intern

import libcst as cst

from .facts import MODULE, Unit
from .symbols import (
    UNKNOWN,
    Attr,
    BinOp,
    Call,
    Const,
    Either,
    Global,
    Imported,
    Item,
    Local,
    Mapping,
    Param,
    SelfRef,
    Value,
)
from .syntax import children, walk_unit
from .values import literal

_BUILTINS = frozenset(dir(builtins))
_OPERATORS = {cst.Add: "+", cst.Subtract: "-", cst.Multiply: "*", cst.Divide: "/",
              cst.FloorDivide: "//", cst.Modulo: "%", cst.BitOr: "|", cst.BitAnd: "&"}


def parameters(node: cst.FunctionDef) -> tuple[tuple[str, ...], dict[str, cst.BaseExpression]]:
    """A function's parameter names in order (``*args``/``**kwargs`` included, by name) and
    the default of each that has one."""
    p = node.params
    names: list[str] = []
    defaults: dict[str, cst.BaseExpression] = {}
    for param in (*p.posonly_params, *p.params):
        names.append(param.name.value)
        if param.default is not None:
            defaults[param.name.value] = param.default
    if isinstance(p.star_arg, cst.Param):
        names.append(p.star_arg.name.value)
    for param in p.kwonly_params:
        names.append(param.name.value)
        if param.default is not None:
            defaults[param.name.value] = param.default
    if p.star_kwarg is not None:
        names.append(p.star_kwarg.name.value)
    return tuple(names), defaults


def assigned_names(body) -> set[str]:
    """Names a unit's body binds (assignments, loop and ``with`` targets, imports)."""
    return bound_names(walk_unit(body))


def bound_names(nodes) -> set[str]:
    """Names some nodes of a unit bind (its own nodes: ``assigned_names`` without a walk)."""
    out: set[str] = set()

    def targets(node):
        if isinstance(node, cst.Name):
            out.add(node.value)
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                targets(element.value)
        elif isinstance(node, cst.StarredElement):
            targets(node.value)

    for node in nodes:
        kind = type(node)
        if kind is cst.AssignTarget:
            targets(node.target)
        elif kind is cst.AnnAssign or kind is cst.AugAssign:
            targets(node.target)
        elif kind is cst.For:
            targets(node.target)
        elif kind is cst.AsName:
            targets(node.name)
        elif kind is cst.NamedExpr:
            targets(node.target)
    return out


def nested_functions(body) -> set[str]:
    """Names of the functions defined directly in a unit's body (its local names too)."""
    out: set[str] = set()
    stack = [body]
    while stack:
        node = stack.pop()
        for child in children(node):
            if isinstance(child, cst.FunctionDef):
                out.add(child.name.value)
            elif not isinstance(child, (cst.ClassDef, cst.Lambda)):
                stack.append(child)
    return out


class Symbolizer:
    """Turns expressions of one module into values, given the unit they are in."""

    def __init__(self, aliases: dict[str, str], module_names: set[str],
                 evaluate_constant, span_of=None, local_names=None, star_imports=False):
        self.aliases = aliases  # local name -> dotted name as imported
        self.module_names = module_names  # top-level functions, classes, assignments
        #: the module imports some module whole (``from peewee import *``): a name it does
        #: not bind may come from there (``semantics`` looks)
        self.star_imports = star_imports
        self.constant = evaluate_constant  # node -> float | str | None, literals only
        self._scopes: dict[str, tuple[frozenset[str], frozenset[str], str | None]] = {}
        self._units: dict[str, Unit] = {}
        #: (node, unit name) -> (the node, its value): the recognisers ask for the same
        #: expression's again and again, and the cached facts then hold one copy of each
        #: (the node is kept: a tree parsed on the side must not lend its id to another)
        self._values: dict[tuple[int, str | None], tuple[cst.CSTNode, Value]] = {}
        self.span_of = span_of  # node -> Span, for the calls (where findings may point)
        #: unit -> the names its body binds and the functions defined in it (the module
        #: analyser knows each unit's nodes; without it, the body is walked)
        self.local_names = local_names or (
            lambda unit: assigned_names(unit.node.body) | nested_functions(unit.node.body))

    def scope(self, unit: Unit | None) -> tuple[frozenset[str], frozenset[str], str | None]:
        """(parameters, locals, class of a method) of a unit."""
        if unit is None or unit.name == MODULE or not isinstance(unit.node, cst.FunctionDef):
            return frozenset(), frozenset(), None
        if unit.name not in self._scopes:
            params = frozenset(unit.params)
            local = frozenset(self.local_names(unit)) - params
            parts = unit.name.split(".")
            cls = parts[-2] if len(parts) > 1 and unit.params and unit.params[0] == "self" \
                else None
            self._scopes[unit.name] = (params, local, cls)
        return self._scopes[unit.name]

    @property
    def units(self) -> dict[str, Unit]:
        """The module's units by name, for the scopes around a nested function."""
        return self._units

    @units.setter
    def units(self, units: dict[str, Unit]) -> None:
        self._units = units
        self._values.clear()  # a value read before may now resolve in an outer function

    def value(self, node: cst.BaseExpression | None, unit: Unit | None) -> Value:
        if node is None:
            return UNKNOWN
        key = (id(node), unit.name if unit is not None else None)
        found = self._values.get(key)
        if found is None:
            found = self._values[key] = (node, self._value(node, unit))
        return found[1]

    def _value(self, node: cst.BaseExpression, unit: Unit | None) -> Value:
        if type(node) in (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString):
            known = self.constant(node)
            return Const(known) if known is not None else UNKNOWN
        if type(node) is cst.Name:  # (names interned: the facts of a module are cached and
            return self.name(intern(node.value), unit)  # held by the thousand)
        if type(node) is cst.Attribute:
            base = self.value(node.value, unit)
            if isinstance(base, Imported):
                return Imported(intern(f"{base.dotted}.{node.attr.value}"))
            return Attr(base, intern(node.attr.value))
        if type(node) is cst.Call:
            args = []
            star = False
            position = 0
            for arg in node.args:
                if arg.star:
                    star = True
                    continue
                if arg.keyword is not None:
                    args.append((intern(arg.keyword.value), self.value(arg.value, unit)))
                else:
                    args.append((intern(f"#{position}"), self.value(arg.value, unit)))
                    position += 1
            return Call(self.value(node.func, unit), tuple(args), star,
                        self.span_of(node) if self.span_of is not None else None)
        if type(node) is cst.Subscript and len(node.slice) == 1 and \
                isinstance(node.slice[0].slice, cst.Index):
            return Item(self.value(node.value, unit), self.value(node.slice[0].slice.value, unit))
        if type(node) is cst.BinaryOperation:
            known = self.constant(node)
            if known is not None:
                return Const(known)
            op = _OPERATORS.get(type(node.operator))
            if op is None:
                return UNKNOWN
            return BinOp(op, self.value(node.left, unit), self.value(node.right, unit))
        if type(node) is cst.UnaryOperation:
            known = self.constant(node)
            return Const(known) if known is not None else UNKNOWN
        if type(node) is cst.IfExp:  # Guard(...) if enabled else nullcontext()
            return Either((self.value(node.body, unit), self.value(node.orelse, unit)))
        if type(node) is cst.BooleanOperation and isinstance(node.operator, cst.Or):  # given or default
            return Either((self.value(node.left, unit), self.value(node.right, unit)))
        if type(node) is cst.FormattedString:
            return self._formatted(node, unit)
        if type(node) is cst.Dict:  # {"sqlalchemy": "app.db.api"}: string keys only
            items: list[tuple[str, Value]] = []
            for element in node.elements:
                key = literal(element.key) if isinstance(element, cst.DictElement) \
                    and type(element.key) is cst.SimpleString else None
                if not isinstance(key, str):
                    return UNKNOWN
                items.append((key, self.value(element.value, unit)))
            return Mapping(tuple(items))
        return UNKNOWN

    def _formatted(self, node: cst.FormattedString, unit: Unit | None) -> Value:
        """An f-string as the concatenation of its parts, each expression as ``str(x)``."""
        parts: list[Value] = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(Const(part.value))
            elif isinstance(part, cst.FormattedStringExpression) and \
                    part.conversion is None and part.format_spec is None:
                parts.append(Call(Imported("builtins.str"),
                                  (("#0", self.value(part.expression, unit)),)))
            else:
                return UNKNOWN
        if not parts:
            return Const("")
        joined = parts[0]
        for piece in parts[1:]:
            joined = BinOp("+", joined, piece)
        return joined

    def name(self, name: str, unit: Unit | None) -> Value:
        if name in ("None", "True", "False"):
            return Const({"None": None, "True": True, "False": False}[name])
        params, local, cls = self.scope(unit)
        if name == "self" and cls is not None:
            return SelfRef(cls)
        if name in params:
            return Param(name)
        if name in local:
            return Local(name)
        parts = unit.name.split(".") if unit is not None else []
        for cut in range(len(parts) - 1, 0, -1):  # the functions around a nested one
            outer = self.units.get(".".join(parts[:cut]))
            if outer is None:
                continue
            outer_params, outer_local, _ = self.scope(outer)
            if name in outer_params:
                return Param(name, outer.name)
            if name in outer_local:
                return Local(name, outer.name)
        if name in self.module_names:
            return Global(name)
        if name in self.aliases:
            return Imported(self.aliases[name])
        if name in _BUILTINS:
            return Imported(intern(f"builtins.{name}"))
        return Global(name) if self.star_imports else UNKNOWN
