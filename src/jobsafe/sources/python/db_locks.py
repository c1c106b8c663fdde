"""Locks written on the database, as applications write them:

* row locks: ``select_for_update()`` (Django), ``with_for_update()`` (SQLAlchemy), SQL with
  ``FOR UPDATE`` or ``LOCK TABLE``: held until the transaction ends (``nowait`` and
  ``skip_locked`` make them try-locks);
* claims: a conditional ``filter(...).update(...)`` (or SQL ``UPDATE ... WHERE``) whose row
  count decides whether this run goes on — the row stays claimed after a crash unless the
  condition lets an old claim be taken over (``locked_at__lt=now() - timedelta(...)``: an
  expiry) or the job sets it back (its release);
* oslo.db's ``query.update_on_match(specimen, surrogate_key, values)``: an update of the row
  only while it still matches the specimen, else ``NoRowsMatched`` — a claim by its own
  spelling;
* unique rows: a ``create()`` (or ``save(force_insert=True)``) that an ``IntegrityError``
  stops — the row is the lock.

A mixin of the module analyser; it needs no type of the receiver beyond the ORM spelling
itself (a query set, a query, a model manager), which is what sets these calls apart.
"""
from __future__ import annotations

import re
from functools import cached_property
from typing import TYPE_CHECKING

import libcst as cst

from ...model import Lock
from ...model import UNKNOWN_TTL
from . import apis
from .module_base import Assignments, ModuleBase
from .syntax import children, contains, names_read, walk
from .values import argument, literal

if TYPE_CHECKING:
    from .facts import Unit

#: what marks a receiver as a query (set): how the chain before the call was built
_QUERY_STEPS = ("filter", "filter_by", "exclude", "objects", "query", "where", "select_related",
                "all", "order_by", "select_for_update", "with_for_update", "using")
FOR_UPDATE = re.compile(r"\bfor\s+(?:no\s+key\s+)?update\b", re.I)
_LOCK_TABLE = re.compile(r"^\s*lock\s+(?:table\s+)?\"?\w+", re.I)
_UPDATE = re.compile(r"^\s*update\s+\"?(\w+)", re.I)
_EXPIRY_LOOKUP = re.compile(r"__(?:lt|lte)$")
#: the ORM calls a claim or a unique row is spelled with, which say nothing without the
#: query they are made on: a helper that makes one on a parameter is read at its calls
_FORWARDED_METHODS = frozenset({"update", "create", "get_or_create", "execute", "save"})
#: what a forwarding helper's returned chain is built of
_CHAIN_NODES = (cst.Call, cst.Attribute, cst.Name, cst.SimpleString, cst.Integer, cst.Float)

class DbLocks(ModuleBase):
    def _db_lock(self, call: cst.Call, unit: Unit, calls):
        """A database lock taken by ``call``, as (lock, node, handle), or None."""
        func = call.func
        if not isinstance(func, cst.Attribute):
            return None
        method = func.attr.value
        if method in ("select_for_update", "with_for_update"):
            outer = self._outermost(call)
            if method == "select_for_update" and isinstance(outer, cst.Call) and \
                    isinstance(outer.func, cst.Attribute) and outer.func.attr.value == "delete":
                return None  # Django's QuerySet.delete() drops the FOR UPDATE
            return self._row_lock(call, unit, self._chain_model(func.value),
                                  argument(call, "nowait", None), argument(call, "skip_locked", None))
        if method == "update" and self._is_query(func.value) and self._decides(call) and \
                not _clears_only(call) and not self._by_key_only(func.value):
            return self._claim(call, unit, calls, self._chain_model(func.value))
        if method == "update_on_match":  # NoRowsMatched decides, wherever it is caught
            return self._claim(call, unit, calls, self._chain_model(func.value),
                               api=apis.RAISING_CLAIM)
        if method == "for_update":  # peewee: query.for_update(), its SQL text as an option
            return self._peewee_row_lock(call, unit)
        if method == "execute" and not call.args and self._decides(call):
            # peewee: Model.update(...).where(...).execute(), the row count decides
            update = self._chain_call(func.value, "update")
            steps = self._steps(func.value)
            if update is not None and "where" in steps and steps[-1][:1].isupper() and \
                    not _clears_only(update) and not self._by_key_only(func.value):
                return self._claim(call, unit, calls, steps[-1])
        if method in ("create", "get_or_create") and self._is_query(func.value) and \
                self._stopped_by_integrity_error(call):
            return self._unique_row(call, unit, calls, self._chain_model(func.value))
        if method == "save" and self.eval.truthy(argument(call, "force_insert", None)) and \
                self._stopped_by_integrity_error(call):  # row = Lock(name=...); row.save(...)
            steps = self._steps(func.value)
            model = next((s for s in steps if s[:1].isupper()), steps[0] if steps else "?")
            return self._unique_row(call, unit, calls, model)
        return None

    @cached_property
    def _forwarders(self) -> dict[str, tuple[cst.FunctionDef, cst.Call]]:
        """The module's functions that only return a call chain made from their
        parameters (``def _claim(qs, at): return qs.update(claimed_at=at)``): name ->
        (function, the chain)."""
        found = {}
        for statement in self.module.body:
            chain = _forwarded_chain(statement)
            if chain is not None:
                found[statement.name.value] = (statement, chain)
        return found

    @cached_property
    def _forwarder_words(self) -> tuple[bool, bool]:
        """Whether the module names a query (``objects``, ``query``) and ``IntegrityError``:
        without them, ``_want_forwarder`` skips those tests (read once, not per call)."""
        text = self.module_text
        return "objects" in text or "query" in text, "IntegrityError" in text

    @cached_property
    def _imported_forwarders(self) -> dict[str, tuple[cst.FunctionDef, cst.Call]]:
        """The forwarding helpers of other modules this module was given (dotted name as
        imported -> (function, chain))."""
        found = {}
        for dotted, source in self.imported_forwarders.items():
            try:
                statement = cst.parse_statement(source)
            except cst.ParserSyntaxError:
                continue
            chain = _forwarded_chain(statement)
            if chain is not None and isinstance(statement, cst.FunctionDef):
                found[dotted] = (statement, chain)
        return found

    def exported_forwarders(self) -> dict[str, str]:
        """The forwarders other modules can read at their calls: those whose chain is made
        of their parameters alone (a name of this module means something else there)."""
        out = {}
        for name, (function, chain) in self._forwarders.items():
            params = {p.name.value for p in [*function.params.params,
                                               *function.params.kwonly_params]}
            if all(n.value in params for n in _chain_names(chain)):
                out[name] = self.code(function)
        return out

    def _want_forwarder(self, call: cst.Call) -> None:
        """Note a call of another module's function that may stand for a claim: given a
        query (``take(Job.objects, ...)``), stopped by ``IntegrityError``, or a statement
        of its own whose row owner is compared after it (``_owner_confirmed``). If that
        function forwards its parameters, the index reads this module again with it.
        (Asked of most calls: only cheap tests, the dearest last.)"""
        if not call.args:
            return
        names = self.qualified(call.func)
        if not names or any(n.startswith("builtins.") for n in names):
            return
        queries, integrity = self._forwarder_words
        if queries and any(
                type(n) is cst.Attribute and n.attr.value in ("objects", "query") and
                self._is_query(n) for arg in call.args for n in [arg.value, *walk(arg.value)]) \
                or integrity and self._stopped_by_integrity_error(call) or \
                isinstance(self._parent.get(call), cst.Expr) and self._owner_confirmed(call):
            self._wanted.update(names)  # and the helpers that build its arguments
            self._wanted.update(name for arg in call.args for n in [arg.value, *walk(arg.value)]
                                if isinstance(n, cst.Call)
                                for name in self.qualified(n.func)
                                if not name.startswith("builtins."))

    def _forwarded(self, call: cst.Call) -> cst.Call | None:
        """The chain a call of a forwarding helper of this module stands for, with the
        call's arguments in place of the parameters (``_claim(Job.objects.filter(id=i),
        now)``: ``Job.objects.filter(id=i).update(claimed_at=now)``), when it ends in a
        claim's call (a helper's ``select_for_update()`` is its own lock, taken at its
        calls)."""
        expanded = self._expanded(call)
        return expanded if expanded is not None and isinstance(expanded.func, cst.Attribute) \
            and expanded.func.attr.value in _FORWARDED_METHODS else None

    def _expanded(self, call: cst.Call, depth: int = 0) -> cst.Call | None:
        """``_forwarded`` for any chain; the arguments' own helpers are read the same way.
        The chain's new nodes are placed where the call is written (memoised per call)."""
        key = id(call)
        if key in self._expansions:
            return self._expansions[key]
        self._expansions[key] = None
        func = call.func
        helper = self._forwarders.get(func.value) if isinstance(func, cst.Name) else None
        if helper is None:
            helper = next((self._imported_forwarders[name] for name in
                           sorted(self.qualified(func)) if name in self._imported_forwarders),
                          None)
        if helper is None:
            self._want_forwarder(call)
        if helper is None or depth > 4 or any(arg.star for arg in call.args):
            return None
        function, chain = helper
        given = _bound(function, call)
        if given is None:
            return None
        made: list[cst.CSTNode] = []  # the chain's new nodes
        nested: list[cst.Call] = []  # the arguments' own chains, rebuilt

        def chain_of(node):
            if isinstance(node, cst.Name) and node.value in given:
                value = given[node.value]
                inner = self._expanded(value, depth + 1) if isinstance(value, cst.Call) \
                    else None
                if inner is None:
                    return value
                nested.append(inner)
                return inner
            if isinstance(node, cst.Call):
                new = cst.Call(func=chain_of(node.func), args=[
                    cst.Arg(value=chain_of(arg.value), keyword=arg.keyword) for arg in node.args])
            elif isinstance(node, cst.Attribute):
                new = cst.Attribute(value=chain_of(node.value), attr=node.attr)
            else:
                new = node.deep_clone()
            made.append(new)
            return new

        expanded = chain_of(chain)
        where, unit = self._ranges[id(call)], self._node_unit.get(id(call))
        self._parent.adopt(expanded, self._parent.get(call))
        inner = {id(node) for node in [*made, *nested]}
        for node in made:
            self._ranges[id(node)] = where
            if unit is not None:
                self._node_unit[id(node)] = unit
            for child in children(node):
                if id(child) in inner:  # (the arguments keep their own parents)
                    self._parent.adopt(child, node)
        self._grafted.extend(made)  # kept alive: the maps are keyed by id
        self._expansions[key] = expanded
        self._written[id(expanded)] = call
        return expanded

    def _written_as(self, node):
        """The call of a helper a rebuilt chain stands for (else the node itself): what
        the module's own statements contain."""
        return self._written.get(id(node), node)

    def _lock_option_given(self, call: cst.Call) -> bool:
        """A constructor given a true option whose name says lock (``opts={"rowlock":
        True}``, ``for_update=True``)."""
        for arg in call.args:
            if arg.keyword is not None and _LOCK_OPTION.fullmatch(arg.keyword.value) and \
                    self.eval.truthy(arg.value):
                return True
            if isinstance(arg.value, cst.Dict) and any(
                    isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and
                    _LOCK_OPTION.fullmatch(str(literal(e.key))) and self.eval.truthy(e.value)
                    for e in arg.value.elements):
                return True
        return False

    def _sql_db_lock(self, call: cst.Call, sql: str, unit: Unit, calls):
        """Row, table and claim locks written in SQL text."""
        if FOR_UPDATE.search(sql) and not _UPDATE.match(sql):
            lowered = sql.lower()
            return self._row_lock(call, unit, _table(sql),
                                  "nowait" in lowered, "skip locked" in lowered)
        if _LOCK_TABLE.match(sql):
            return self._row_lock(call, unit, _table(sql), "nowait" in sql.lower(), False)
        m = _UPDATE.match(sql)
        if m and " where " in f" {sql.lower()} " and (
                self._decides(call) or "returning" in sql.lower() or self._rowcount_read(call, calls)):
            return self._claim(call, unit, calls, m.group(1))
        return None

    def _claim_sweeps(self, unit: Unit, nodes, calls) -> list:
        """(model, age limit, function) of the claims a function sweeps: it selects rows of a model
        by a claimed-at column older than a limit (``Model.locked_at <= now - limit``, or
        ``locked_at__lt=``) and clears an owner on them (``entry.locked_by = None``,
        ``.update(locked_by=None)``), or it picks the rows to claim as those whose column is
        empty or older than a limit (``or_(col == null(), col <= now - limit)``: an old claim
        is taken over). The limit is the claim's expiry, wherever it is taken."""
        sweeps = []
        for c in calls:
            if isinstance(c.func, cst.Attribute) and c.func.attr.value in ("filter", "where"):
                for arg in c.args:
                    found = self._empty_or_older(arg.value)
                    if found is not None:
                        sweeps.append((found[0] or self._chain_model(c.func.value),
                                       self.sym.value(found[1], unit), unit.name))
        return sweeps + self._clearing_sweeps(unit, nodes, calls)

    def _empty_or_older(self, test) -> tuple[str | None, cst.BaseExpression] | None:
        """(model, limit) of ``or_(col == null(), col <= limit)`` (SQLAlchemy) or
        ``Q(col__isnull=True) | Q(col__lt=limit)`` (Django), the column the same in both."""
        if isinstance(test, cst.Call) and called_name(test) == "or_":
            parts = [a.value for a in test.args]
        elif isinstance(test, cst.BinaryOperation) and isinstance(test.operator, cst.BitOr):
            parts = [test.left, test.right]
        else:
            return None
        empty = {self._empty_column(p) for p in parts} - {None}
        for part in parts:
            column = self._compared_column(part)
            if column is None or column[1] not in empty:
                continue
            compared = [(cst.Arg(part), part.comparisons[0].comparator)] \
                if isinstance(part, cst.Comparison) else \
                [(a, a.value) for a in part.args if a.keyword is not None] \
                if isinstance(part, cst.Call) else []  # Q(col__lt=...)
            for arg, limit in compared:
                older = self._older_than(arg)
                # (a cutoff computed back from now: ``published_at__lte=today`` is no age)
                if older is not None and self._cutoff(limit):
                    return column[0], older[1]
        return None

    def _cutoff(self, node) -> bool:
        """``now - limit``, or a local bound to one."""
        if isinstance(node, cst.Name):
            node = self._local_chain(node)
        return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Subtract)

    def _compared_column(self, part) -> tuple[str | None, str] | None:
        """(model, column) a comparison or a ``Q(col__lookup=...)`` is about."""
        if isinstance(part, cst.Call) and called_name(part) == "Q":
            keyword = next((a.keyword.value for a in part.args if a.keyword is not None), None)
            return (None, keyword.split("__", 1)[0]) if keyword else None
        if isinstance(part, cst.Comparison):
            column = self._column(part.left)
            if column is not None:
                return column
        return None

    def _column(self, node) -> tuple[str | None, str] | None:
        """``Model.col`` (or a local bound to it): (Model, col)."""
        if isinstance(node, cst.Name):
            node = self._local_chain(node)
        if isinstance(node, cst.Attribute):
            base = node.value
            model = base.attr.value if isinstance(base, cst.Attribute) else \
                base.value if isinstance(base, cst.Name) else None
            return model, node.attr.value
        return None

    def _empty_column(self, part) -> str | None:
        """The column of ``col == None``, ``col == null()``, ``col.is_(None)``,
        ``Q(col__isnull=True)``."""
        if isinstance(part, cst.Call) and called_name(part) == "Q":
            return next((a.keyword.value[:-len("__isnull")] for a in part.args
                         if a.keyword is not None and a.keyword.value.endswith("__isnull")
                         and self.eval.truthy(a.value)), None)
        if isinstance(part, cst.Call) and isinstance(part.func, cst.Attribute) and \
                part.func.attr.value == "is_" and part.args and _null(part.args[0].value):
            column = self._column(part.func.value)
            return column[1] if column is not None else None
        if isinstance(part, cst.Comparison) and len(part.comparisons) == 1 and \
                isinstance(part.comparisons[0].operator, (cst.Equal, cst.Is)) and \
                _null(part.comparisons[0].comparator):
            column = self._column(part.left)
            return column[1] if column is not None else None
        return None

    def _clearing_sweeps(self, unit: Unit, nodes, calls) -> list:
        """The sweeps that clear the owner of the rows they select (``_claim_sweeps``)."""
        clears = any(type(n) is cst.Assign and isinstance(n.value, cst.Name) and
                     n.value.value == "None" and
                     any(isinstance(t.target, cst.Attribute) for t in n.targets)
                     for n in nodes) or any(
            isinstance(c.func, cst.Attribute) and c.func.attr.value == "update" and
            any(isinstance(x, cst.Name) and x.value == "None" for x in walk(c))
            for c in calls)  # (read from the nodes: this runs for every function)
        if not clears:
            return []
        sweeps = []
        for c in calls:
            if not (isinstance(c.func, cst.Attribute) and
                    c.func.attr.value in ("filter", "filter_by", "where", "exclude")):
                continue
            for arg in c.args:
                limit = self._older_than(arg)
                if limit is not None:
                    sweeps.append((self._chain_model(c.func.value) if
                                   not isinstance(limit[0], str) else limit[0],
                                   self.sym.value(limit[1], unit), unit.name))
        return sweeps

    def _older_than(self, arg: cst.Arg):
        """(model or None, the limit) of a filter argument that keeps rows older than a
        limit: ``Model.col <= limit`` / ``<``, or ``col__lt=limit`` / ``__lte``."""
        if arg.keyword is not None and _EXPIRY_LOOKUP.search(arg.keyword.value):
            return None, _age(arg.value)
        for node in [arg.value, *walk(arg.value)]:
            if isinstance(node, cst.Comparison) and len(node.comparisons) == 1 and \
                    isinstance(node.comparisons[0].operator,
                               (cst.LessThan, cst.LessThanEqual)):
                left = node.left  # Model.col, or a local bound to a model's column
                column = self._column(left) if isinstance(left, cst.Name) or \
                    isinstance(left, cst.Attribute) and isinstance(left.value, cst.Name) \
                    else None
                if column is not None and column[0] is not None:
                    return column[0], _age(node.comparisons[0].comparator)
        return None

    def _peewee_row_lock(self, call, unit):
        """``query.for_update()`` (``for_update=False``: none; the option's SQL text, such
        as ``"FOR UPDATE SKIP LOCKED"``, says how it waits)."""
        option = argument(call, "for_update", 0)
        if option is not None and self.eval.falsy(option):
            return None
        text = (self.eval.string(option) or "").lower() if option is not None else ""
        nowait = argument(call, "nowait", 1)
        return self._row_lock(call, unit, self._chain_model(call.func.value),
                              True if "nowait" in text else nowait, "skip locked" in text)

    def _chain_call(self, node, method: str):
        """The call of ``method`` in a call chain (a local followed to what it holds)."""
        for _ in range(40):
            if isinstance(node, cst.Name):
                node = self._local_chain(node)
                if node is None:
                    return None
            elif isinstance(node, cst.Call):
                if isinstance(node.func, cst.Attribute) and node.func.attr.value == method:
                    return node
                node = node.func
            elif isinstance(node, cst.Attribute):
                node = node.value
            else:
                return None
        return None

    # -- the three kinds
    def _row_lock(self, call, unit, model, nowait, skip_locked):
        try_lock = bool(nowait is True or (nowait is not None and nowait is not False and
                                           self.eval.truthy(nowait))) or \
            bool(skip_locked is True or (skip_locked is not None and skip_locked is not False
                                         and self.eval.truthy(skip_locked)))
        block = self._transaction_block(call)
        scope = (self.line(call), self.end_line(block) if block is not None else self.unit_end(unit))
        lock = Lock(kind="db-row-lock", scope="cluster", span=self.span(self._outermost(call)),
                    key=model, stale_handling="transaction", blocking=not try_lock,
                    api="select_for_update", try_lock=try_lock, result_checked=True,
                    release="transaction", scope_lines=scope, function=unit.name)
        return lock, call, None

    def _claim(self, call, unit, calls, model, api="conditional update"):
        expiry = self._expiry(call)
        limit = self._takeover_age(calls, model) if expiry is None else None
        if expiry is None and limit is None:
            limit = self._written_expiry(call)
        if expiry is None and limit is None:
            limit = self._stale_takeover(call) or self._skipped_while_newer(call)
        if limit is not None:  # a number, or a name only the tree can read
            number = self.eval.number(limit)
            expiry = number if number is not None else UNKNOWN_TTL
        release_call = self._reset(call, calls, model)
        release, release_span, end = self._release_kind(release_call, None, unit)
        # a claim that raises when another run holds the row is no try-lock to its caller:
        # the function returns only with the row claimed
        lock = Lock(kind="db-claim", scope="cluster", span=self.span(call), key=model,
                    ttl_seconds=expiry, stale_handling="age-check" if expiry is not None
                    else "none", blocking=False, api=api,
                    try_lock=not self._raises_unless_claimed(call),
                    result_checked=True, release=release, release_span=release_span,
                    scope_lines=(self.line(call), end), function=unit.name)
        if limit is not None and expiry == UNKNOWN_TTL:
            self._symbols(unit, lock, call, api,
                          ttl=self.sym.value(limit, unit))
        return lock, call, None

    def _unique_row(self, call, unit, calls, model):
        release_call = next((c for c in calls if self.line(c) > self.line(call) and
                             isinstance(c.func, cst.Attribute) and c.func.attr.value == "delete"
                             and self._chain_model(c.func.value) == model), None)
        release, release_span, end = self._release_kind(release_call, None, unit)
        lock = Lock(kind="db-claim", scope="cluster", span=self.span(call), key=model,
                    stale_handling="none", blocking=False, api="unique insert", try_lock=True,
                    result_checked=True, release=release, release_span=release_span,
                    scope_lines=(self.line(call), end), function=unit.name)
        return lock, call, None

    # -- what the spelling says
    def _steps(self, node) -> list[str]:
        """The method and attribute names of a call chain, outermost first; a local is
        followed to the chain it was assigned (``q = M.objects.filter(); q.update()``)."""
        steps: list[str] = []
        for _ in range(40):
            if isinstance(node, cst.Call):
                node = node.func
            elif isinstance(node, cst.Attribute):
                steps.append(node.attr.value)
                node = node.value
            elif isinstance(node, cst.Name):
                bound = self._local_chain(node)
                if bound is None:
                    steps.append(node.value)
                    break
                node = bound
            else:
                break
        return steps

    def _local_chain(self, name: cst.Name):
        """What a local name holds where it is used: its last assignment above the use in
        the function (``q = ...filter(a)`` ... ``q = ...filter(b)`` ... ``q.update()``)."""
        unit = self.unit_at(name)
        if not isinstance(unit.node, cst.FunctionDef):
            return None
        line = self.line(name)
        found = [(at, value) for at, value in self._assignments(unit.node).get(name.value, ())
                 if at < line]
        return max(found, key=lambda f: f[0])[1] if found else None

    def _assignments(self, function: cst.FunctionDef) -> Assignments:
        """A function's ``name = value`` statements by name, in order (read once per
        function: asked at each use of a local)."""
        found = self._assignments_of.get(id(function))
        if found is None:
            found = self._assignments_of[id(function)] = {}
            for n in self._unit_nodes(function):
                if type(n) is cst.Assign and len(n.targets) == 1 and \
                        isinstance(n.targets[0].target, cst.Name):
                    found.setdefault(n.targets[0].target.value, []).append(
                        (self.line(n), n.value))
        return found

    def _by_key_only(self, node) -> bool:
        """The chain selects its rows by primary key alone (``.filter(pk=x)``,
        ``.where(Model.id == x)``): its count says whether the row exists, not whether
        another run got there first (a counter or a status written unconditionally)."""
        conditions: list[cst.Arg] = []
        for _ in range(40):
            if isinstance(node, cst.Name):
                bound = self._local_chain(node)
                if bound is None:
                    break
                node = bound
            elif isinstance(node, cst.Call):
                if isinstance(node.func, cst.Attribute) and \
                        node.func.attr.value in ("filter", "filter_by", "where"):
                    conditions += node.args
                node = node.func
            elif isinstance(node, cst.Attribute):
                node = node.value
            else:
                break
        return bool(conditions) and all(_key_condition(arg) for arg in conditions)

    def _is_query(self, node) -> bool:
        """A query chain: one of its steps builds a query (``filter``, ``where`` ...), or
        it reads a model's manager (``Model.objects``, ``self.model.objects``,
        ``apps.get_model(...).objects``; not an API client's ``client.crm.objects``)."""
        steps = self._steps(node)
        return any(step in _QUERY_STEPS and (
            step != "objects" or i + 1 == len(steps) or steps[i + 1][:1].isupper() or
            steps[i + 1] in ("model", "cls", "get_model"))
            for i, step in enumerate(steps))

    def _chain_model(self, node) -> str:
        """What a chain locks, in words: the model or table at its root (SQLAlchemy's
        ``session.query(Model)``: its argument)."""
        for _ in range(8):  # q = session.query(Model) ... q.update(...)
            bound = self._local_chain(node) if isinstance(node, cst.Name) else None
            if bound is None:
                break
            node = bound
        for part in [node, *walk(node)]:
            if isinstance(part, cst.Call) and part.args and called_name(part) in (
                    "query", "model_query"):
                return self.code(part.args[0].value).rsplit(".", 1)[-1]
        steps = self._steps(node)
        for i, step in enumerate(steps):
            if step in ("objects", "query") and i + 1 < len(steps):
                return steps[i + 1]
        return steps[-1] if steps else "?"

    def _outermost(self, call):
        """The whole expression a chain step belongs to (``M.objects.select_for_update()
        .get(pk=1)``)."""
        node = call
        while True:
            parent = self._parent.get(node)
            if isinstance(parent, (cst.Attribute, cst.Call)) and (
                    not isinstance(parent, cst.Call) or parent.func is node):
                node = parent
                continue
            return node

    def _decides(self, call) -> bool:
        """The call's result decides what runs next: tested in an ``if``/``while``, returned,
        or assigned to a name a test then reads, or that a ``return`` then tells its caller
        (``return row if updated else None``, ``return updated == 1``)."""
        for parent in self.parents(call):
            if isinstance(parent, (cst.If, cst.While)):
                return _in_test(parent, self._written_as(call)) and not only_reports(parent)
            if isinstance(parent, cst.Return):
                return True
            if isinstance(parent, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                break
        name = self._assigned_to(call)
        if name is None:
            return self._owner_confirmed(call)
        unit = self.unit_at(call)
        read = re.compile(rf"\b{re.escape(name)}\b")
        return any(type(n) in (cst.If, cst.While) and self.line(n) > self.line(call) and
                   read.search(self.code(n.test)) and not only_reports(n) or
                   type(n) is cst.Return and n.value is not None and
                   self.line(n) > self.line(call) and name in answer_names(n.value)
                   for n in self._nodes_of(unit)) or self._owner_confirmed(call)

    def _raises_unless_claimed(self, call) -> bool:
        """Losing the claim raises: an ``if`` after it that tests its count, the name it is
        assigned to or the row's owner raises, and no ``return`` of the function tells."""
        unit = self.unit_at(call)
        name = self._assigned_to(call)
        line = self.line(call)
        tests = [n for n in self._nodes_of(unit) if type(n) is cst.If and self.line(n) > line]
        if any(type(n) is cst.Return and n.value is not None and self.line(n) > line
               for n in self._nodes_of(unit)):
            return False
        read = re.compile(rf"\b{re.escape(name)}\b") if name else None
        return any(any(isinstance(x, cst.Raise) for x in walk(n.body)) and (
            _in_test(n, self._written_as(call)) or
            read is not None and read.search(self.code(n.test)) or
            re.search(r"\.(?:locked_by|owner|claimed_by|holder)\b", self.code(n.test)))
            for n in tests)

    def _owner_confirmed(self, call) -> bool:
        """An update that writes who holds the row (``{"locked_by": me}``), its row count
        ignored, then the row read back and its owner compared (``if entry.locked_by !=
        me: raise``): the comparison decides, as the count would."""
        owners = []
        for arg in call.args:
            if arg.keyword is not None and isinstance(arg.value, (cst.Name, cst.Attribute)):
                owners.append((arg.keyword.value, self.code(arg.value)))
            elif isinstance(arg.value, cst.Dict):
                owners.extend((literal(element.key), self.code(element.value))
                              for element in arg.value.elements
                              if isinstance(element, cst.DictElement) and
                              isinstance(element.key, cst.SimpleString) and
                              isinstance(element.value, (cst.Name, cst.Attribute)))
        if not owners:
            return False
        unit = self.unit_at(call)
        for n in self._nodes_of(unit):
            if type(n) is not cst.If or self.line(n) <= self.line(call) or only_reports(n):
                continue
            test = self.code(n.test)
            if any(re.search(rf"\.{re.escape(field)}\s*(?:!=|==|is not|is)\s*"
                             rf"{re.escape(value)}\b", test) for field, value in owners) and \
                    any(isinstance(x, (cst.Raise, cst.Return, cst.Continue))
                        for x in walk(n.body)):
                return True
        return False

    def _rowcount_read(self, call, calls) -> bool:
        """``cursor.execute("UPDATE ...")`` then ``cursor.rowcount`` tested."""
        if not isinstance(call.func, cst.Attribute):
            return False
        receiver = self.code(call.func.value)
        unit = self.unit_at(call)
        return any(type(n) in (cst.If, cst.While) and self.line(n) > self.line(call) and
                   f"{receiver}.rowcount" in self.code(n.test) for n in self._nodes_of(unit))

    def _stopped_by_integrity_error(self, call) -> bool:
        """Inside a ``try`` whose ``except IntegrityError`` leaves (returns, raises, exits)."""
        for parent in self.parents(call):
            if isinstance(parent, cst.Try) and parent.body is not None:
                for handler in parent.handlers:
                    if handler.type is not None and "IntegrityError" in self.code(handler.type):
                        body = list(walk(handler.body))
                        return any(isinstance(n, (cst.Return, cst.Raise)) or
                                   self._is_exit_call(n) for n in body)
                return False
            if isinstance(parent, cst.FunctionDef):
                return False
        return False

    def _transaction_block(self, call):
        """The ``with transaction.atomic():`` (or ``session.begin()``) around a row lock."""
        for parent in self.parents(call):
            if isinstance(parent, cst.With) and any(
                    re.search(r"atomic|transaction|begin", self.code(item.item))
                    for item in parent.items):
                return parent
            if isinstance(parent, cst.FunctionDef):
                return None
        return None

    def _expiry(self, call) -> float | None:
        """An expiry in a claim's condition: ``locked_at__lt=now() - timedelta(minutes=5)``
        lets a claim older than that be taken over."""
        query = call.func.value if isinstance(call.func, cst.Attribute) else None
        nodes = [query, *walk(query)] if query is not None else []
        for node in nodes:
            if not isinstance(node, cst.Call):
                continue
            for arg in node.args:
                if arg.keyword is not None and _EXPIRY_LOOKUP.search(arg.keyword.value) and \
                        isinstance(arg.value, cst.BinaryOperation):
                    seconds = self.eval.number(arg.value.right)
                    if seconds is not None:
                        return seconds
        return None

    def _stale_takeover(self, call) -> cst.BaseExpression | None:
        """The age after which another run takes the claim over, written in its condition
        as an alternative: ``(Model.status != RUNNING) | (Model.claimed_at < now - LIMIT)``
        (``or_(...)``), the update setting that column to the clock. The age (LIMIT)."""
        clocked = self._clocked_columns(call)
        for node in walk(call) if clocked else ():
            parts = [node.left, node.right] if isinstance(node, cst.BinaryOperation) and \
                isinstance(node.operator, cst.BitOr) else \
                [a.value for a in node.args] if isinstance(node, cst.Call) and \
                called_name(node) == "or_" else []
            for part in parts:
                if not isinstance(part, cst.Comparison):
                    continue
                column = self._compared_column(part)
                if column is None or column[1] not in clocked or not isinstance(
                        part.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual)):
                    continue
                age = self._age_of_cutoff(part.comparisons[0].comparator)
                if age is not None:
                    return age
        return None

    def _update_of(self, call):
        """The ``update(...)`` call of a claim's chain: the call itself, or the one a
        peewee ``.execute()`` runs."""
        if not isinstance(call.func, cst.Attribute):
            return None
        return call if call.func.attr.value == "update" else \
            self._chain_call(call.func.value, "update")

    def _age_of_cutoff(self, node) -> cst.BaseExpression | None:
        """LIMIT of a cutoff ``now - LIMIT`` (or a local bound to one), else None."""
        if isinstance(node, cst.Name):
            node = self._local_chain(node) or node
        return _age(node) if self._cutoff(node) else None

    def _clocked_columns(self, call) -> set[str]:
        """The columns a claim's update sets to the clock (``claimed_at=utcnow()``, or a
        local bound to a clock reading): the time it was taken."""
        update = self._update_of(call)
        return {arg.keyword.value for arg in update.args if arg.keyword is not None and
                self._clock_reading(arg.value)} if isinstance(update, cst.Call) else set()

    def _skipped_while_newer(self, call) -> cst.BaseExpression | None:
        """The age after which a claim is taken again, tested before it: an ``if`` of the
        function that leaves (returns, continues, raises) while the time the claim writes
        is newer than a cutoff (``if state.notified_at > now - LIMIT: return False``, then
        ``update(notified_at=now)``). The age (LIMIT)."""
        clocked = self._clocked_columns(call)
        if not clocked:
            return None
        unit = self.unit_at(self._written_as(call))
        line = self.line(call)
        for node in self._nodes_of(unit):
            if type(node) is not cst.If or self.line(node) >= line or \
                    contains(node, self._written_as(call)) or not any(
                        isinstance(n, (cst.Return, cst.Continue, cst.Raise))
                        for n in walk(node.body)):
                continue
            for comparison in [node.test, *walk(node.test)]:
                if not isinstance(comparison, cst.Comparison) or \
                        len(comparison.comparisons) != 1:
                    continue
                target = comparison.comparisons[0]
                newer = isinstance(target.operator, (cst.GreaterThan, cst.GreaterThanEqual))
                older = isinstance(target.operator, (cst.LessThan, cst.LessThanEqual))
                held, cutoff = (comparison.left, target.comparator) if newer else \
                    (target.comparator, comparison.left) if older else (None, None)
                if not (isinstance(held, cst.Attribute) and held.attr.value in clocked):
                    continue  # (the time the claim writes, not another)
                age = self._age_of_cutoff(cutoff)
                if age is not None:
                    return age
        return None

    def _written_expiry(self, call) -> cst.BaseExpression | None:
        """The lease a claim writes (``expires_at=now + timedelta(seconds=LIMIT)``: a clock
        reading, or anything plus a ``timedelta``), when the module compares that column
        elsewhere (``Item.expires_at <= now``, ``if now > row.expires_at``,
        ``expires_at__lt=``): the claim expires by it. The added part."""
        update = self._update_of(call)
        for arg in update.args if isinstance(update, cst.Call) else ():
            value = arg.value
            if isinstance(value, cst.Name):  # expires = now + timedelta(...) above
                value = self._local_chain(value) or value
            if arg.keyword is None or not isinstance(value, cst.BinaryOperation) or \
                    not isinstance(value.operator, cst.Add):
                continue
            lease = value.right if self._clock_reading(value.left) or \
                self._duration(value.right) else \
                value.left if self._clock_reading(value.right) or self._duration(value.left) \
                else None
            column = re.escape(arg.keyword.value)
            if lease is not None and re.search(
                    rf"\b{column}\s*(?:<|>)|(?:<|>)=?\s*[\w.]*\b{column}\b|"
                    rf"\b{column}__(?:lt|lte|gt|gte)\b", self.module_text):
                return lease
        return None

    def _duration(self, node) -> bool:
        """``timedelta(...)``: added to a time (a parameter ``now``, a start), a lease."""
        return isinstance(node, cst.Call) and any(
            name.endswith("timedelta") for name in self.qualified(node.func))

    def _clock_reading(self, node) -> bool:
        """``now()``, ``datetime.utcnow()``, ``time.time()``, or a local assigned one."""
        if isinstance(node, cst.Name):
            node = self._local_chain(node)
        return isinstance(node, cst.Call) and bool(self.qualified(node.func) & apis.CLOCKS)

    def _takeover_age(self, calls, model) -> cst.BaseExpression | None:
        """An expiry checked beside the claim: a claim of the same model made only when
        the held one is older than a limit (``if (now - job.ongoing).seconds > MAX:``, then
        a compare-and-set on the old value) lets a stale claim be taken over."""
        for c in calls:
            if not (isinstance(c.func, cst.Attribute) and c.func.attr.value == "update" and
                    self._is_query(c.func.value) and self._chain_model(c.func.value) == model):
                continue
            for parent in self.parents(c):
                if isinstance(parent, cst.FunctionDef):
                    break
                if isinstance(parent, cst.If) and not contains(parent.test, c):
                    limit = self._age_limit(parent.test)
                    if limit is not None:
                        return limit
        return None

    def _age_limit(self, test) -> cst.BaseExpression | None:
        """LIMIT of ``age > LIMIT`` where the age is a difference (``now - claimed_at``)."""
        for node in [test, *walk(test)]:
            if not isinstance(node, cst.Comparison) or not any(
                    isinstance(n, cst.BinaryOperation) and isinstance(n.operator, cst.Subtract)
                    for n in [node.left, *walk(node.left)]):
                continue
            for target in node.comparisons:
                if isinstance(target.operator, (cst.GreaterThan, cst.GreaterThanEqual)) and \
                        isinstance(target.comparator, (cst.Name, cst.Attribute, cst.Integer,
                                                       cst.Float, cst.BinaryOperation, cst.Call)):
                    return target.comparator
        return None

    def _reset(self, call, calls, model):
        """A later update or delete of the same model: the claim's release."""
        for c in calls:
            if c is call or self.line(c) <= self.line(call) or not isinstance(c.func, cst.Attribute):
                continue
            if c.func.attr.value in ("update", "delete") and self._is_query(c.func.value) and \
                    self._chain_model(c.func.value) == model:
                return c
        return None


_REPORTING = frozenset({"print", "debug", "info", "warning", "warn", "error", "exception",
                        "critical", "log", "write", "emit"})


#: an option's name that says the query locks its rows (the whole name: ``blocking``,
#: ``lock_ttl`` and ``flock`` say something else)
_LOCK_OPTION = re.compile(r"(?i)(?:row_?)?lock(?:_?rows?)?|(?:select_|with_)?for_?update")


def class_like(call: cst.Call) -> bool:
    """``Name(...)``, ``module.Name(...)``: a call that may make an object of a class."""
    return (called_name(call) or "")[:1].isupper()


def _forwarded_chain(statement) -> cst.Call | None:
    """The call chain a module-level function only returns, when it is one (no decorator,
    no ``*args``/``**kwargs``; a docstring may come first)."""
    if not isinstance(statement, cst.FunctionDef) or statement.decorators or \
            statement.params.star_arg not in (None, cst.MaybeSentinel.DEFAULT) or \
            statement.params.star_kwarg is not None or \
            not isinstance(statement.body, cst.IndentedBlock):
        return None
    body = list(statement.body.body)
    if len(body) > 1 and _docstring(body[0]):
        body = body[1:]
    small = body[0].body[0] if len(body) == 1 and \
        isinstance(body[0], cst.SimpleStatementLine) and len(body[0].body) == 1 else None
    if isinstance(small, cst.Return) and isinstance(small.value, cst.Call) and \
            all(isinstance(n, (*_CHAIN_NODES, cst.Arg)) or not isinstance(
                n, cst.BaseExpression) for n in walk(small.value)):
        return small.value
    return None


def _chain_names(chain: cst.Call) -> list[cst.Name]:
    """The names a chain reads (not its attribute names or keywords)."""
    out = []
    for node in [chain, *walk(chain)]:
        if isinstance(node, cst.Call):
            out += [node.func] if isinstance(node.func, cst.Name) else []
            out += [a.value for a in node.args if isinstance(a.value, cst.Name)]
        elif isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name):
            out.append(node.value)
    return out


def _bound(function: cst.FunctionDef, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
    """What a call gives each parameter of ``function`` (a default where it gives none);
    None when it does not fit."""
    params = [*function.params.params, *function.params.kwonly_params]
    names = {param.name.value for param in params}
    positional = [arg.value for arg in call.args if arg.keyword is None]
    if len(positional) > len(function.params.params):
        return None
    given = {param.name.value: value for param, value in zip(function.params.params, positional)}
    given.update((arg.keyword.value, arg.value) for arg in call.args if arg.keyword is not None)
    for param in params:
        if param.name.value not in given:
            if param.default is None:
                return None
            given[param.name.value] = param.default
    return given if set(given) <= names else None


def _docstring(statement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and \
        isinstance(statement.body[0], cst.Expr) and \
        isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))


def _null(node) -> bool:
    """``None``, ``null()``, ``sa.null()``."""
    return isinstance(node, cst.Name) and node.value == "None" or \
        isinstance(node, cst.Call) and called_name(node) == "null" and not node.args


def _key_condition(arg: cst.Arg) -> bool:
    """``pk=x``, ``id=x``, ``Model.id == x``."""
    if arg.keyword is not None:
        return arg.keyword.value in ("pk", "id")
    test = arg.value
    return isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and \
        isinstance(test.comparisons[0].operator, cst.Equal) and \
        isinstance(test.left, cst.Attribute) and test.left.attr.value in ("pk", "id")


def only_reports(statement) -> bool:
    """An ``if`` whose branches only log or print (``if n: logger.debug(...)``): the
    count it tests decides nothing the job does."""
    if not isinstance(statement, cst.If):
        return False
    blocks = [statement.body]
    orelse = statement.orelse
    while orelse is not None:
        blocks.append(orelse.body)
        orelse = orelse.orelse if isinstance(orelse, cst.If) else None
    for block in blocks:
        for line in block.body:
            if not isinstance(line, cst.SimpleStatementLine):
                return False
            for small in line.body:
                call = small.value if isinstance(small, cst.Expr) else None
                func = call.func if isinstance(call, cst.Call) else None
                name = func.attr.value if isinstance(func, cst.Attribute) else \
                    func.value if isinstance(func, cst.Name) else None
                if name not in _REPORTING:
                    return False
    return True


def answer_names(expression) -> set[str]:
    """The names whose truth an expression answers with: the name itself, a comparison
    of it, ``not``/``bool()`` of it, ``row if name else None``, ``and``/``or`` of those,
    what a call is given (``next(iter(rows), None)``), an attribute or item of it — not a
    message or an object that only quotes it (``f"{n} updated"``, ``Response({...})``)."""
    if isinstance(expression, cst.Name):
        return {expression.value}
    if isinstance(expression, cst.Comparison):
        return names_read(expression)
    if isinstance(expression, cst.UnaryOperation) and isinstance(expression.operator, cst.Not):
        return answer_names(expression.expression)
    if isinstance(expression, cst.BooleanOperation):
        return answer_names(expression.left) | answer_names(expression.right)
    if isinstance(expression, cst.IfExp):
        return answer_names(expression.test)
    if isinstance(expression, (cst.Attribute, cst.Subscript)):  # row.id, rows[0]
        return answer_names(expression.value)
    if isinstance(expression, cst.Call):
        # next(iter(rows), None), bool(n): what the call is given; a constructor's object
        # (Response({...}), AttrDict(...)) is true whatever it holds
        if class_like(expression):
            return set()
        return {n for arg in expression.args for n in answer_names(arg.value)}
    return set()


def _in_test(statement, call) -> bool:
    test = statement.test
    return test is call or any(n is call for n in walk(test))


def _table(sql: str) -> str:
    m = re.search(r"\b(?:from|update|table|lock)\s+\"?(\w+)", sql, re.I)
    return m.group(1) if m else "?"


def _age(limit: cst.BaseExpression) -> cst.BaseExpression:
    """The age a cutoff stands for: ``b`` of ``a - b`` (``now - timedelta(minutes=5)``),
    else the cutoff itself (a local, followed by ``semantics``)."""
    if isinstance(limit, cst.BinaryOperation) and isinstance(limit.operator, cst.Subtract):
        return limit.right
    return limit


def called_name(call: cst.Call) -> str | None:
    """``f`` of ``f(...)`` and of ``x.f(...)``."""
    func = call.func
    return func.value if isinstance(func, cst.Name) else \
        func.attr.value if isinstance(func, cst.Attribute) else None


def _clears_only(call: cst.Call) -> bool:
    """An update that only sets columns to None (``.update(app_lock=None)``): a release of
    what a claim set, checked by its count, not a claim."""
    values = [a.value for a in call.args if a.keyword is not None]
    return bool(values) and len(values) == len(call.args) and all(
        isinstance(v, cst.Name) and v.value == "None" for v in values)
