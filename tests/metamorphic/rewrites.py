"""Semantics-preserving rewrites of Python job code, applied by libcst to a copy of a fixture
tree: the same locks, clients and values, spelled the way real projects spell them (through
a helper, a factory, an alias, a decorator, a class, a constant, a settings module).

Each rewrite takes the tree and the places the original analysis found locks at, changes
what it can, and says whether it changed anything. Comments ride along with the statements
they sit on, so ``# expect:`` markers stay on the statement whose finding they expect; a
statement the rewrite removes hands its comments to the statement that replaces it.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

#: modules the rewrites add to the tree (at its root, importable from anywhere in it)
HELPERS = "jobsafe_mm_helpers"
FACTORIES = "jobsafe_mm_factories"
SHARED = "jobsafe_mm_shared"
GUARDS = "jobsafe_mm_guards"
DECORATORS = "jobsafe_mm_decorators"

#: library calls that make a client a lock is later taken on (the receivers of lock calls)
CLIENT_FACTORIES = re.compile(
    r"^(?:redis\.(?:Redis|StrictRedis)(?:\.from_url)?|redis\.from_url|Redis(?:\.from_url)?|"
    r"StrictRedis|get_redis_connection|django_redis\.get_redis_connection|"
    r"(?:sqlalchemy\.)?create_engine|psycopg2?\.connect|pymysql\.connect|"
    r"(?:huey\.)?(?:RedisHuey|SqliteHuey|FileHuey|MemoryHuey|PriorityRedisHuey))$")


@dataclass(frozen=True)
class Site:
    """Where the original analysis found a lock: the call that takes or creates it."""

    path: str  # relative to the tree
    line: int
    column: int


@dataclass
class Tree:
    root: Path
    sites: list[Site]
    added: dict[str, list[str]] = field(default_factory=dict)  # module -> source blocks
    counter: int = 0

    def python_files(self) -> list[Path]:
        return sorted(p for p in self.root.rglob("*.py") if not p.name.startswith("jobsafe_mm_"))

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def sites_in(self, path: Path) -> set[tuple[int, int]]:
        rel = self.rel(path)
        return {(s.line, s.column) for s in self.sites if s.path == rel}

    def fresh(self, stem: str) -> str:
        self.counter += 1
        return f"{stem}_{self.counter}"

    def add(self, module: str, source: str) -> None:
        self.added.setdefault(module, []).append(source)

    def write_added(self) -> None:
        for module, blocks in self.added.items():
            (self.root / f"{module}.py").write_text("\n\n".join(blocks) + "\n", encoding="utf-8")


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def _imports_of(module: cst.Module, tree: "Tree | None" = None,
                path: Path | None = None) -> list[str]:
    """The module's top-level imports, as source lines, and an import of the classes and
    functions it defines (a helper module repeats them, so every name the moved code uses
    means the same there)."""
    out = []
    defined = sorted(stmt.name.value for stmt in module.body
                     if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)))
    if tree is not None and path is not None and defined:
        dotted = tree.rel(path)[:-len(".py")].replace("/", ".")
        if dotted.endswith(".__init__"):
            dotted = dotted[:-len(".__init__")]
        out.append(f"from {dotted} import {', '.join(defined)}")
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and all(
                isinstance(s, (cst.Import, cst.ImportFrom)) for s in stmt.body):
            for small in stmt.body:
                if isinstance(small, cst.ImportFrom) and small.relative:
                    continue  # a relative import means something else at the root
                out.append(_code(cst.SimpleStatementLine(body=[small])).strip())
    return out


def _module_names(module: cst.Module) -> set[str]:
    """Names the module binds at its top level (imports, functions, classes, assignments)."""
    names = set()
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            names.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign):
                    names |= {t.target.value for t in small.targets
                              if isinstance(t.target, cst.Name)}
                elif isinstance(small, (cst.Import, cst.ImportFrom)) and \
                        not isinstance(small.names, cst.ImportStar):
                    for alias in small.names:
                        bound = alias.asname.name if alias.asname else alias.name
                        names.add((_dotted(bound) or "").split(".")[0])
    return names


def _rewrite_files(tree: Tree, transform: Callable[[Path, cst.Module, MetadataWrapper], cst.Module | None]) -> bool:
    """Run ``transform`` on every Python file; write back what it changed."""
    changed = False
    for path in tree.python_files():
        text = path.read_text(encoding="utf-8")
        try:
            module = cst.parse_module(text)
        except cst.ParserSyntaxError:
            continue
        wrapper = MetadataWrapper(module)
        new = transform(path, wrapper.module, wrapper)
        if new is not None and new.code != wrapper.module.code:
            path.write_text(new.code, encoding="utf-8")
            changed = True
    tree.write_added()
    return changed or bool(tree.added)


# --------------------------------------------------------------------------- 1. aliases

def alias_imports(tree: Tree) -> bool:
    """``import redis`` -> ``import redis as redis_alias``; ``from filelock import FileLock``
    -> ``... import FileLock as FileLock_alias``, every use renamed to match."""

    def transform(path, module, wrapper):
        renames: dict[str, str] = {}
        for stmt in module.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                aliases = small.names if isinstance(small, (cst.Import, cst.ImportFrom)) and \
                    not isinstance(small.names, cst.ImportStar) else ()
                for alias in aliases:
                    if alias.asname is not None:
                        continue
                    name = _dotted(alias.name)
                    if name is None or name == "__future__" or "." in name and \
                            isinstance(small, cst.Import):
                        continue
                    if isinstance(small, cst.ImportFrom) and small.module is not None and \
                            _dotted(small.module) == "__future__":
                        continue
                    renames[name] = f"{name}_alias"
        if not renames:
            return None
        return module.visit(_Renamer(renames, imports=True))

    return _rewrite_files(tree, transform)


class _Renamer(cst.CSTTransformer):
    """Renames identifiers (``Name`` nodes, not attributes or keywords); with ``imports``,
    adds ``as`` to the imports that bind them instead of renaming the imported name."""

    def __init__(self, renames: dict[str, str], imports: bool = False):
        self.renames, self.imports = renames, imports

    def leave_ImportAlias(self, original, updated):
        name = _dotted(original.name)
        if self.imports and original.asname is None and name in self.renames:
            return updated.with_changes(asname=cst.AsName(name=cst.Name(self.renames[name])))
        return updated

    def visit_ImportAlias(self, node):
        return False  # the imported name itself is not a use

    def leave_ImportFrom(self, original, updated):
        return updated.with_changes(module=original.module)  # a module path, not a name

    def visit_Attribute(self, node):
        node.value.visit(self)  # only the leftmost name of a.b.c is an identifier
        return False

    def leave_Attribute(self, original, updated):
        return updated.with_changes(value=original.value.visit(self))

    def visit_Arg(self, node):
        return True

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)

    def leave_Name(self, original, updated):
        return updated.with_changes(value=self.renames[original.value]) \
            if original.value in self.renames else updated


# --------------------------------------------------------------------------- 2. renames

def rename_bindings(tree: Tree) -> bool:
    """Names bound by assignment (``r = redis.Redis()``, ``lock = ...``, ``client``) become
    opaque (``v_3``): nothing may depend on what a variable is called."""

    def transform(path, module, wrapper):
        bound: set[str] = set()
        class_attrs: set[str] = set()

        class Collect(cst.CSTVisitor):
            def visit_ClassDef(self, node):
                # a class body's names are attributes: an API (django-cron reads `schedule`)
                for stmt in node.body.body:
                    if isinstance(stmt, cst.SimpleStatementLine):
                        for small in stmt.body:
                            if isinstance(small, cst.Assign):
                                class_attrs.update(t.target.value for t in small.targets
                                                   if isinstance(t.target, cst.Name))

            def visit_AssignTarget(self, node):
                if isinstance(node.target, cst.Name):
                    bound.add(node.target.value)

            def visit_WithItem(self, node):
                if node.asname is not None and isinstance(node.asname.name, cst.Name):
                    bound.add(node.asname.name.value)

        module.visit(Collect())
        bound -= class_attrs | {"__all__"}
        bound = {b for b in bound if not b.isupper() and not b.startswith("__")}
        if not bound:
            return None
        renames = {name: tree.fresh("v") for name in sorted(bound)}
        return _keep_exported(tree, path, module.visit(_Renamer(renames)), renames)

    return _rewrite_files(tree, transform)


def _keep_exported(tree: Tree, path: Path, module: cst.Module,
                   renames: dict[str, str]) -> cst.Module:
    """A renamed module-level name other modules import stays importable: bound, at the
    end, to what replaced it."""
    dotted = tree.rel(path)[:-len(".py")].replace("/", ".").removesuffix(".__init__")
    aliases = [cst.parse_statement(f"{name} = {new}\n") for name, new in renames.items()
               if _imported_elsewhere(tree, path, dotted, name)]
    return module.with_changes(body=[*module.body, *aliases]) if aliases else module


# --------------------------------------------------------------------------- 3/4. values

class _InFunctions(cst.CSTTransformer):
    """A transformer that knows how deep in function definitions it is (``depth``)."""

    depth = 0

    def visit_FunctionDef(self, node):
        self.depth += 1

    def leave_FunctionDef(self, original, updated):
        self.depth -= 1
        return updated


class _Literals(_InFunctions):
    """Literal arguments of the calls at lock sites, inside functions, become names."""

    def __init__(self, wrapper, sites, make_name):
        self.pos = wrapper.resolve(PositionProvider)
        self.sites, self.make_name = sites, make_name
        self.defined: list[tuple[str, str]] = []  # (name, literal source)

    def leave_Call(self, original, updated):
        at = self.pos[original].start
        if not self.depth or (at.line, at.column + 1) not in self.sites:
            return updated
        args = []
        for position, arg in enumerate(updated.args):
            if (isinstance(arg.value, (cst.Integer, cst.Float, cst.SimpleString)) or (
                    isinstance(arg.value, cst.BinaryOperation) and
                    all(isinstance(n, (cst.Integer, cst.Float)) for n in
                        (arg.value.left, arg.value.right)))) and \
                    self.configurable(updated, arg, position):
                name = self.make_name()
                self.defined.append((name, _code(arg.value)))
                arg = arg.with_changes(value=self.name_node(name))
            args.append(arg)
        return updated.with_changes(args=args)

    def configurable(self, call: cst.Call, arg: cst.Arg, position: int) -> bool:
        return True

    def name_node(self, name: str) -> cst.BaseExpression:
        return cst.Name(name)


def module_constants(tree: Tree) -> bool:
    """``r.lock("job", timeout=600)`` -> ``r.lock(LOCK_NAME_1, timeout=LOCK_TTL_2)`` with the
    constants defined at the end of the module (read when the function runs)."""

    def transform(path, module, wrapper):
        sites = tree.sites_in(path)
        if not sites:
            return None
        literals = _Literals(wrapper, sites, lambda: tree.fresh("JOB_SETTING").upper())
        new = module.visit(literals)
        if not literals.defined:
            return None
        tail = [cst.parse_statement(f"{name} = {value}\n") for name, value in literals.defined]
        return new.with_changes(body=[*new.body, *tail])

    return _rewrite_files(tree, transform)


_SQL = re.compile(r"\s*(select|update|insert|delete|lock)\b", re.IGNORECASE)


class _SettingsLiterals(_Literals):
    """What a project puts in its settings: keys, paths, TTLs, timeouts -- not a file's
    open mode nor SQL text, which stay in the code."""

    def configurable(self, call, arg, position):
        if isinstance(call.func, cst.Name) and call.func.value == "open" and (
                position == 1 or arg.keyword is not None and arg.keyword.value == "mode"):
            return False
        return not (isinstance(arg.value, cst.SimpleString) and
                    _SQL.match(arg.value.evaluated_value or ""))

    def name_node(self, name: str) -> cst.BaseExpression:
        return cst.parse_expression(f"settings.{name}")


class _SameStrings(_InFunctions):
    """The other uses of a string a rewrite moved to a setting read the same setting (the
    key a lock is taken with and the key it is deleted with stay one value)."""

    def __init__(self, names: dict[str, str], name_node):
        self.names, self.name_node = names, name_node


    def visit_Expr(self, node):
        return not isinstance(node.value, cst.SimpleString)  # a docstring stays

    def leave_SimpleString(self, original, updated):
        name = self.names.get(original.value) if self.depth else None
        return self.name_node(name) if name is not None else updated


def django_settings(tree: Tree) -> bool:
    """The same values read from Django settings (``settings.JOB_SETTING_1``), defined in
    the project's settings module."""

    def transform(path, module, wrapper):
        sites = tree.sites_in(path)
        if not sites:
            return None
        literals = _SettingsLiterals(wrapper, sites, lambda: tree.fresh("JOB_SETTING").upper())
        new = module.visit(literals)
        if not literals.defined:
            return None
        strings = {value: name for name, value in reversed(literals.defined)
                   if value.startswith(("'", '"'))}
        new = new.visit(_SameStrings(strings, literals.name_node))
        for name, value in literals.defined:
            tree.add("settings", f"{name} = {value}")
        return new.with_changes(body=[*new.body,
                                      cst.parse_statement("from django.conf import settings\n")])

    return _rewrite_files(tree, transform)


# --------------------------------------------------------------------------- 5/6/7. clients

def _client_bindings(module: cst.Module) -> list[tuple[int, str, cst.Call]]:
    """Top-level ``NAME = <client factory>(...)`` statements: (index in body, name, call)."""
    found = []
    for i, stmt in enumerate(module.body):
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            continue
        small = stmt.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and \
                isinstance(small.targets[0].target, cst.Name) and isinstance(small.value, cst.Call):
            func = _dotted(small.value.func) or ""
            if CLIENT_FACTORIES.match(func) or CLIENT_FACTORIES.match(func.split(".", 1)[-1]):
                found.append((i, small.targets[0].target.value, small.value))
    return found


def _replace_statement(module: cst.Module, index: int, source: str) -> cst.Module:
    old = module.body[index]
    new = cst.parse_statement(source).with_changes(leading_lines=old.leading_lines)
    return module.with_changes(body=[*module.body[:index], new, *module.body[index + 1:]])


def client_factory(tree: Tree) -> bool:
    """``client = redis.Redis(...)`` -> ``client = make_client_3()``, a function of another
    module that builds and returns it: the client's type comes from the project's code."""

    def transform(path, module, wrapper):
        bindings = _client_bindings(module)
        if not bindings:
            return None
        imports = _imports_of(module, tree, path)
        for index, name, call in reversed(bindings):
            factory = tree.fresh(f"make_{name}")
            tree.add(FACTORIES, "\n".join(imports + [f"\n\ndef {factory}():",
                                                     f"    return {_code(call)}"]))
            module = _replace_statement(module, index, f"from {FACTORIES} import {factory}; "
                                                       f"{name} = {factory}()\n")
        return module

    return _rewrite_files(tree, transform)


def client_singleton(tree: Tree) -> bool:
    """``client = redis.Redis(...)`` -> ``from shared import client``: a module-level
    singleton made in another module."""

    def transform(path, module, wrapper):
        bindings = _client_bindings(module)
        if not bindings:
            return None
        imports = _imports_of(module, tree, path)
        for index, name, call in reversed(bindings):
            shared = tree.fresh(name)
            tree.add(SHARED, "\n".join(imports + [f"{shared} = {_code(call)}"]))
            module = _replace_statement(module, index, f"from {SHARED} import {shared} as {name}\n")
        return module

    return _rewrite_files(tree, transform)


def client_on_self(tree: Tree) -> bool:
    """``client = redis.Redis(...)`` -> an object whose ``__init__`` stores it on ``self``,
    every use reading ``holder.client``."""

    def transform(path, module, wrapper):
        bindings = _client_bindings(module)
        if not bindings:
            return None
        renames = {}
        for index, name, call in reversed(bindings):
            holder = tree.fresh("holder")
            cls = tree.fresh("Holder").capitalize()
            source = (f"class {cls}:\n    def __init__(self):\n        self.{name} = {_code(call)}"
                      f"\n\n\n{holder} = {cls}()\n")
            parsed = cst.parse_module(source).body
            old = module.body[index]
            parsed = [parsed[0].with_changes(leading_lines=old.leading_lines), *parsed[1:]]
            module = module.with_changes(body=[*module.body[:index], *parsed,
                                               *module.body[index + 1:]])
            renames[name] = f"{holder}.{name}"
        return _keep_exported(tree, path, module.visit(_ToAttribute(renames)), renames)

    return _rewrite_files(tree, transform)


def _imported_elsewhere(tree: Tree, path: Path, dotted: str, name: str) -> bool:
    pattern = re.compile(rf"from\s+{re.escape(dotted)}\s+import\s+[^\n]*\b{name}\b")
    return any(pattern.search(other.read_text(errors="replace"))
               for other in tree.python_files() if other != path)


class _ToAttribute(cst.CSTTransformer):
    """Every use of a name -> ``holder.name`` (not assignment targets of ``self.x``)."""

    def __init__(self, renames: dict[str, str]):
        self.renames = renames

    def visit_Attribute(self, node):
        node.value.visit(self)
        return False

    def leave_Attribute(self, original, updated):
        return updated.with_changes(value=original.value.visit(self))

    def visit_Arg(self, node):
        return True

    def leave_Arg(self, original, updated):
        return updated.with_changes(keyword=original.keyword)

    def visit_Param(self, node):
        return False

    def visit_Import(self, node):
        return False

    def visit_ImportFrom(self, node):
        return False

    def leave_Name(self, original, updated):
        if original.value in self.renames:
            return cst.parse_expression(self.renames[original.value])
        return updated


# --------------------------------------------------------------------------- 8/9. helpers

class _Extract(_InFunctions):
    """The call at a lock site -> a call of a helper that makes the same call with the
    receiver and every argument passed in (``helper(client, "job", timeout=600)``)."""

    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, wrapper, sites, helper_name, qualify):
        self.pos = wrapper.resolve(PositionProvider)
        self.sites, self.helper_name, self.qualify = sites, helper_name, qualify
        self.helpers: list[str] = []
        #: markers written inside a call the helper replaces (a chain over several lines):
        #: they move to the statement the call is in
        self.markers: list[str] = []

    def leave_Call(self, original, updated):
        at = self.pos[original].start
        if not self.depth or (at.line, at.column + 1) not in self.sites:
            return updated
        if any(a.star for a in updated.args):
            return updated
        name = self.helper_name()
        params, passed, spelled = _parameterise(updated)
        self.helpers.append(f"def {name}({', '.join(params)}):\n    return {spelled}")
        self.markers += [m.group(0) for m in _MARKER.finditer(_code(original))]
        return cst.Call(func=cst.parse_expression(self.qualify(name)), args=passed)

    def leave_SimpleStatementLine(self, original, updated):
        if not self.markers:
            return updated
        moved = [cst.EmptyLine(comment=cst.Comment(marker)) for marker in self.markers]
        self.markers = []
        return updated.with_changes(leading_lines=[*updated.leading_lines, *moved])


def _is_module_like(node: cst.BaseExpression) -> bool:
    """``fcntl``, ``os``, ``filelock``: a lower-case name that reads like a module."""
    return isinstance(node, cst.Name) and node.value in (
        "fcntl", "os", "filelock", "portalocker", "fasteners", "redis", "redis_lock",
        "pottery", "threading", "multiprocessing", "asyncio", "lockfile", "pid", "zc",
        "tendo", "sqlalchemy", "psutil", "time", "tempfile", "pathlib", "shutil")


def helper_in_module(tree: Tree) -> bool:
    """The call that takes the lock moves into a helper function of another module."""

    def transform(path, module, wrapper):
        sites = tree.sites_in(path)
        if not sites:
            return None
        extract = _Extract(wrapper, sites, lambda: tree.fresh("take"),
                           lambda name: f"{HELPERS}.{name}")
        new = module.visit(extract)
        if not extract.helpers:
            return None
        imports = _imports_of(module, tree, path)
        for helper in extract.helpers:
            tree.add(HELPERS, "\n".join(imports + ["\n", helper]))
        return _after_imports(new, [cst.parse_statement(f"import {HELPERS}\n")])

    return _rewrite_files(tree, transform)


def _after_imports(module: cst.Module, statements: list) -> cst.Module:
    """``statements`` put right after the module's docstring and imports: a script that
    calls ``main()`` at its end finds them defined (at the end they would come too late)."""
    body = list(module.body)
    at = 0
    for i, stmt in enumerate(body):
        small = stmt.body[0] if isinstance(stmt, cst.SimpleStatementLine) and stmt.body \
            else None
        docstring = i == 0 and isinstance(small, cst.Expr) and \
            isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
        if docstring or isinstance(small, (cst.Import, cst.ImportFrom)):
            at = i + 1
        else:
            break
    return module.with_changes(body=[*body[:at], *statements, *body[at:]])


def helper_in_same_module(tree: Tree) -> bool:
    """The call that takes the lock moves into a helper function of the same module."""

    def transform(path, module, wrapper):
        sites = tree.sites_in(path)
        if not sites:
            return None
        extract = _Extract(wrapper, sites, lambda: tree.fresh("_take"), lambda name: name)
        new = module.visit(extract)
        if not extract.helpers:
            return None
        helpers = [cst.parse_statement(h + "\n") for h in extract.helpers]
        return _after_imports(new, helpers)

    return _rewrite_files(tree, transform)


# --------------------------------------------------------------------------- 10/11. wrappers

def _lock_with(node: cst.With, sites, pos) -> tuple[int, cst.WithItem] | None:
    """The item of a ``with`` statement that is a lock site (a call)."""
    for i, item in enumerate(node.items):
        if isinstance(item.item, cst.Call):
            start = pos[item.item].start
            if (start.line, start.column + 1) in sites and not any(a.star for a in item.item.args):
                return i, item
    return None


def _parameterise(call: cst.Call) -> tuple[list[str], list[cst.Arg], str]:
    """(parameters, the arguments that fill them, the call spelled with the parameters): the
    receiver of a method call and every argument become parameters."""
    params: list[str] = []
    passed: list[cst.Arg] = []
    func = call.func
    if isinstance(func, cst.Attribute) and not _is_module_like(func.value) and \
            not _dotted_module(func.value):
        params.append("receiver")
        passed.append(cst.Arg(func.value))
        target = f"receiver.{func.attr.value}"
    else:
        target = _code(func)
    args = []
    for i, arg in enumerate(call.args):
        pname = arg.keyword.value if arg.keyword else f"a{i}"
        params.append(pname)
        passed.append(arg.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        args.append(f"{pname}={pname}" if arg.keyword else pname)
    return params, passed, f"{target}({', '.join(args)})"


def _dotted_module(node: cst.BaseExpression) -> bool:
    """``redis.lock`` in ``redis.lock.Lock(...)``, ``os.path``: a module path."""
    return isinstance(node, cst.Attribute) and _is_module_like(_leftmost(node))


def _leftmost(node: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node


def _static(expr: cst.CSTNode, module_names: set[str]) -> bool:
    """Every name in ``expr`` is bound at module level (or a builtin): it can be evaluated
    where a decorator is, at import time."""
    names = set()

    class Names(cst.CSTVisitor):
        def visit_Attribute(self, node):
            node.value.visit(self)
            return False

        def visit_Arg(self, node):
            node.value.visit(self)
            return False

        def visit_Name(self, node):
            names.add(node.value)

    expr.visit(Names())
    return names <= module_names | {"True", "False", "None"}


class _GuardClass(cst.CSTTransformer):
    """``with LOCK(...):`` -> ``with Guard_3(...):``, a project class whose ``__enter__``
    and ``__exit__`` are the lock's."""

    def __init__(self, wrapper, sites, tree):
        self.pos = wrapper.resolve(PositionProvider)
        self.sites, self.tree = sites, tree
        self.classes: list[str] = []

    def leave_With(self, original, updated):
        found = _lock_with(original, self.sites, self.pos)
        if found is None:
            return updated
        index, item = found
        params, passed, spelled = _parameterise(item.item)
        name = self.tree.fresh("Guard")
        self.classes.append(
            f"class {name}:\n"
            f"    def __init__(self, {', '.join(params)}):\n"
            f"        self._lock = {spelled}\n\n"
            f"    def __enter__(self):\n        return self._lock.__enter__()\n\n"
            f"    def __exit__(self, *exc):\n        return self._lock.__exit__(*exc)")
        new_item = updated.items[index].with_changes(
            item=cst.Call(func=cst.parse_expression(f"{GUARDS}.{name}"), args=passed))
        items = list(updated.items)
        items[index] = new_item
        return updated.with_changes(items=items)


def guard_class(tree: Tree) -> bool:
    """A ``with`` lock becomes a project context-manager class around it."""

    def transform(path, module, wrapper):
        sites = tree.sites_in(path)
        if not sites:
            return None
        guard = _GuardClass(wrapper, sites, tree)
        new = module.visit(guard)
        if not guard.classes:
            return None
        imports = _imports_of(module, tree, path)
        for cls in guard.classes:
            tree.add(GUARDS, "\n".join(imports + ["\n", cls]))
        return new.with_changes(body=[*new.body, cst.parse_statement(f"import {GUARDS}\n")])

    return _rewrite_files(tree, transform)


class _DecoratorFactory(cst.CSTTransformer):
    """A function whose body is one ``with LOCK(...):`` block -> the block's body, under
    ``@locked_3(...)``, a decorator factory that holds the lock around each call (when
    everything the lock call uses is known at import time, where decorators run)."""

    def __init__(self, wrapper, sites, tree, module_names):
        self.pos = wrapper.resolve(PositionProvider)
        self.sites, self.tree, self.module_names = sites, tree, module_names
        self.factories: list[str] = []

    def leave_FunctionDef(self, original, updated):
        body = list(updated.body.body)
        first = 1 if body and _is_docstring(body[0]) else 0
        if len(body) != first + 1 or not isinstance(original.body.body[first], cst.With):
            return updated
        with_node = original.body.body[first]
        found = _lock_with(with_node, self.sites, self.pos)
        if found is None or len(with_node.items) != 1 or with_node.items[0].asname is not None:
            return updated
        if not _static(found[1].item, self.module_names):
            return updated  # it uses the function's locals: not known at decoration
        params, passed, spelled = _parameterise(found[1].item)
        name = self.tree.fresh("locked")
        self.factories.append(
            f"def {name}({', '.join(params)}):\n"
            f"    def decorate(fn):\n"
            f"        @functools.wraps(fn)\n"
            f"        def wrapper(*args, **kwargs):\n"
            f"            with {spelled}:\n"
            f"                return fn(*args, **kwargs)\n"
            f"        return wrapper\n"
            f"    return decorate")
        inner = list(updated.body.body[first].body.body)
        # the with statement's comments (its expect markers) go to the decorator
        marker_lines = updated.body.body[first].leading_lines
        decorator = cst.Decorator(decorator=cst.Call(func=cst.parse_expression(
            f"{DECORATORS}.{name}"), args=passed), leading_lines=marker_lines)
        return updated.with_changes(
            decorators=[*updated.decorators, decorator],
            body=updated.body.with_changes(body=[*body[:first], *inner]))


def _is_docstring(stmt) -> bool:
    return isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and \
        isinstance(stmt.body[0], cst.Expr) and isinstance(stmt.body[0].value, cst.SimpleString)


def decorator_factory(tree: Tree) -> bool:
    """A function that holds a lock around its whole body gets it from a decorator factory."""

    def transform(path, module, wrapper):
        sites = tree.sites_in(path)
        if not sites:
            return None
        factory = _DecoratorFactory(wrapper, sites, tree, _module_names(module))
        new = module.visit(factory)
        if not factory.factories:
            return None
        imports = _imports_of(module, tree, path) + ["import functools"]
        for fn in factory.factories:
            tree.add(DECORATORS, "\n".join(imports + ["\n", fn]))
        return new.with_changes(body=[*new.body, cst.parse_statement(f"import {DECORATORS}\n")])

    return _rewrite_files(tree, transform)


# --------------------------------------------------------------------------- 12. spellings

#: rules whose finding points at the call that sets the lock's time-to-live (the
#: constructor); every other finding about a lock points at its acquisition
_TTL_RULES = {"JOB205", "JOB206", "JOB207"}
_MARKER = re.compile(r"#\s*expect:\s*(JOB\d{3}(?:\s*,\s*JOB\d{3})*)")


def _split_markers(lines, keep) -> tuple[list[cst.EmptyLine], list[cst.EmptyLine]]:
    """A statement's comment lines split in two: the markers of the rules ``keep`` says
    stay, and the rest (moved to another statement)."""
    stay, move = [], []
    for line in lines:
        m = _MARKER.search(line.comment.value) if line.comment else None
        if m is None:
            stay.append(line)
            continue
        rules = [r.strip() for r in m.group(1).split(",")]
        kept, moved = [r for r in rules if keep(r)], [r for r in rules if not keep(r)]
        if kept:
            stay.append(line.with_changes(comment=cst.Comment(f"# expect: {', '.join(kept)}")))
        if moved:
            move.append(line.with_changes(comment=cst.Comment(f"# expect: {', '.join(moved)}")))
    return stay, move


class _WithToTryFinally(cst.CSTTransformer):
    """``with LOCK(...):`` (no ``as``) -> ``h = LOCK(...)``, ``h.acquire()`` (whose failure
    raises, as ``__enter__`` does) and the body in ``try``/``finally: h.release()``: the same
    lock, the other spelling. Markers of findings about the acquisition move to it."""

    def __init__(self, wrapper, sites, tree):
        self.pos = wrapper.resolve(PositionProvider)
        self.sites, self.tree = sites, tree
        self.changed = False

    def leave_IndentedBlock(self, original, updated):
        body = []
        for old, new in zip(original.body, updated.body):
            found = _lock_with(old, self.sites, self.pos) if isinstance(old, cst.With) else None
            if found is None or len(old.items) != 1 or old.items[0].asname is not None or \
                    not _acquire_release_lock(found[1].item):
                body.append(new)
                continue
            handle = self.tree.fresh("held")
            call = _code(new.items[0].item)
            stay, move = _split_markers(new.leading_lines, lambda rule: rule in _TTL_RULES)
            head = cst.parse_statement(f"{handle} = {call}\n").with_changes(leading_lines=stay)
            acquire = cst.parse_statement(
                f"if not {handle}.acquire():\n    raise RuntimeError('lock not acquired')\n"
            ).with_changes(leading_lines=move)
            guarded = cst.Try(body=new.body, finalbody=cst.Finally(body=cst.IndentedBlock(
                body=[cst.parse_statement(f"{handle}.release()\n")])))
            body += [head, acquire, guarded]
            self.changed = True
        return updated.with_changes(body=body)


def _acquire_release_lock(call: cst.Call) -> bool:
    """Lock objects whose ``with`` is ``acquire()`` then ``release()`` (not ``open()``)."""
    name = _dotted(call.func) or ""
    return bool(re.search(r"(?:^|\.)(?:lock|Lock|RLock|FileLock|SoftFileLock|InterProcessLock|"
                          r"Redlock|Semaphore|BoundedSemaphore)$", name))


def with_to_try_finally(tree: Tree) -> bool:
    """``with lock:`` spelled as ``acquire()`` / ``try`` / ``finally: release()``."""

    def transform(path, module, wrapper):
        sites = tree.sites_in(path)
        if not sites:
            return None
        spell = _WithToTryFinally(wrapper, sites, tree)
        new = module.visit(spell)
        return new if spell.changed else None

    return _rewrite_files(tree, transform)


REWRITES: dict[str, Callable[[Tree], bool]] = {
    "alias-imports": alias_imports,
    "rename-bindings": rename_bindings,
    "module-constants": module_constants,
    "django-settings": django_settings,
    "client-factory": client_factory,
    "client-singleton": client_singleton,
    "client-on-self": client_on_self,
    "helper-in-module": helper_in_module,
    "helper-in-same-module": helper_in_same_module,
    "guard-class": guard_class,
    "decorator-factory": decorator_factory,
    "with-to-try-finally": with_to_try_finally,
}
