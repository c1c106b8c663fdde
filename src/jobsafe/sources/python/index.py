"""The tree's Python modules: parsed on demand, linked by the calls between functions.

An entry point (a script, ``python -m``, a management command's ``handle()``, a console
script's function) reaches the functions it calls, across modules of the tree; the locks
and hazards of everything it reaches are the entry code's.
"""
from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING

from ...errors import InternalError, raise_internal_errors
from ...model import CodeFact, Lock, ParseError, Progress, Span
from ...paths import is_test_path
from ...runtime import collect_less
from ...suppress import may_hold_suppressions
from . import prefilter
from .apis import SERVICE_LOOKUP
from .django_settings import is_settings_module
from .facts import MAIN, MODULE, ONCE_UNITS, ModuleFacts, Unit
from .light import light_facts, needs_full_parse
from .semantics import (
    HELD_ON_RETURN,
    Semantics,
    Where,
    claim_kept,
    entered_sites,
    is_service_lookup,
)
from .symbols import (
    LOCKISH_CALLS,
    Attr,
    Call,
    Const,
    CallSite,
    Global,
    Imported,
    Local,
    Param,
    SelfRef,
    Value,
    imported_names,
    makes_lock,
    partial_function,
    site_names,
    value_names,
)

if TYPE_CHECKING:
    from ...cache import FileCache, StatIndex

_MAX_UNITS = 400
#: method names the built-in types have (``set.add``, ``dict.get``): too common to follow
#: a site by
_BUILTIN_METHODS = frozenset(name for kind in (object, dict, list, set, str, bytes, int)
                             for name in dir(kind))
#: the stat index's notes: a module the prefilter passed over, with no suppression (not
#: read again while unchanged), and one it kept (not scanned again while unchanged)
_IRRELEVANT, _KEPT = "irrelevant", "kept"
#: below this many modules to parse, starting worker processes costs more than it saves
PARALLEL_MIN_FILES = 24


def _parse_one(job: tuple) -> ModuleFacts:
    """One module's facts; a bug in the analyser gives facts that say so (in a worker
    process too), not an exception that would stop every other module."""
    from .module import parse_module

    try:
        return parse_module(*job)
    except Exception as exc:
        if raise_internal_errors():
            raise
        return ModuleFacts(job[0], internal_error=InternalError.of(job[0], exc).message)


def start_forkserver() -> bool:
    """Start (once) the process the workers are forked from, with the parser imported —
    early, while the tree is still being scanned: each worker then parses from the start
    (importing libcst and the recognisers took each one 0.2 s before its first module).
    False where there is no forkserver: the workers are spawned and import them
    themselves."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        return False
    from multiprocessing import forkserver

    multiprocessing.set_forkserver_preload([__name__, f"{__package__}.module"])
    forkserver.ensure_running()
    return True


def _parse_in_pool(jobs: list[tuple[str, str]], workers: int,
                   progress: Progress | None = None) -> list[ModuleFacts | None]:
    """Parse in worker processes (forkserver: the parent may run a progress thread, which
    plain fork would copy mid-lock). Results come back in order; None where the pool broke."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    results: list[ModuleFacts | None] = [None] * len(jobs)
    # the longest modules first, one at a time: no worker is left parsing a large one alone
    # at the end (in path order, mlflow's took 7 % longer than its parse time split evenly)
    order = sorted(range(len(jobs)), key=lambda i: -len(jobs[i][1]))
    try:
        method = "forkserver" if start_forkserver() else "spawn"
        with ProcessPoolExecutor(max_workers=workers, initializer=collect_less,
                                 mp_context=multiprocessing.get_context(method)) as pool:
            parsed = pool.map(_parse_one, [jobs[i] for i in order])
            for done, (i, facts) in enumerate(zip(order, parsed), 1):
                results[i] = facts
                if progress is not None:
                    progress("parsing Python", done, len(jobs))
    except (BrokenProcessPool, OSError):
        pass
    return results


class PythonIndex:
    def __init__(self, files: dict, read, project_names: frozenset[str] = frozenset()):
        """``files``: rel -> SourceFile of every Python file; ``read(file)`` -> text or None;
        ``project_names``: what the project is called (see ``_installed_as``)."""
        self.files = files
        self.read = read
        self._modules: dict[str, ModuleFacts | None] = {}
        self.errors: list[ParseError] = []
        self.internal_errors: list[InternalError] = []
        self.cache: FileCache | None = None  # when the run uses one
        #: the stat index beside it: modules known unchanged and irrelevant
        self.stats: StatIndex | None = None
        #: display paths of modules the stat index vouched for, so never read
        self.unread: set[str] = set()
        self._matters: dict[str, bool] = {}
        #: modules the prefilter passed over, unread (the stat index vouched for them) ->
        #: the abstraction names of the last run that they call
        self._called: dict[str, frozenset[str]] = {}
        #: modules the prefilter passed over -> their stamp, for the note recorded once
        #: the abstraction names are known
        self._passed: dict[str, tuple] = {}
        self._callers: dict[str, bool] = {}
        self._light: dict[str, ModuleFacts | None] = {}
        self._forwarding: set[str] = set()  # modules being read again with forwarders
        self._forwarders_read: dict[str, dict[str, str]] = {}  # (from light facts)
        #: (function, use) of a module the prefilter passed over -> whether it may lock
        self._reaches: dict[tuple[tuple[str, str], str], bool] = {}
        #: id(use site) -> (the site, the names it may call): kept alive with its key
        self._site_names: dict[int, tuple[CallSite, set[str]]] = {}
        self._by_dotted = {self.dotted(rel): rel for rel in files}
        #: (module, function) -> whether only code that runs once calls it
        self._once: dict[tuple[str, str], bool] = {}
        #: a task name was looked for in the text of every module (``task_function``): any
        #: module's text may matter, not only what was read as code
        self.searched_texts = False
        packages = {rel.rsplit("/", 1)[0] for rel in files if rel.endswith("/__init__.py")}
        #: folders with an ``__init__.py``
        self.packages = packages
        for rel in files:  # certbot/src/certbot/x.py is imported as certbot.x
            name = _import_name(rel, packages)
            if name is None and "/src/" in rel:  # namespace packages: below the src folder
                name = self.dotted(rel.rsplit("/src/", 1)[1])
            if name is not None:
                self._by_dotted.setdefault(name, rel)
        for name, rel in _installed_as(files, packages, project_names):
            self._by_dotted.setdefault(name, rel)
        for name, rel in _below_scripts(files):
            self._by_dotted.setdefault(name, rel)
        self._rel_by_display = {f.display: rel for rel, f in files.items()}

    @staticmethod
    def dotted(rel: str) -> str:
        name = rel[:-3] if rel.endswith(".py") else rel
        if name.startswith("src/"):
            name = name[4:]
        if name.endswith("/__init__"):
            name = name[: -len("/__init__")]
        return name.replace("/", ".")

    @cached_property
    def semantics(self) -> Semantics:
        return Semantics(self)

    def unit_code(self, rel: str, unit: Unit, used: bool = False,
                  called: bool = False) -> tuple[list[Lock], list[CodeFact]]:
        """A unit's locks and hazards, as the whole tree tells them: a lock whose receiver
        only other modules can type is confirmed (or dropped, with the hazards about it).
        ``used``: a site the caller reaches takes this unit's escaping locks; ``called``:
        the caller's call takes the database claims this unit answers for."""
        where = Where(rel, unit.name)
        locks: dict[tuple[Span, Span | None], Lock] = {}
        abstraction = used or (rel, unit.name) in self.abstractions
        for lock in unit.locks:
            symbols = unit.lock_symbols.get(lock.span)
            if symbols is not None and symbols.escapes and (
                    abstraction or called and lock.kind == "db-claim"):
                continue  # a template: each use of it takes it (below, in its callers)
            confirmed = self.semantics.lock(lock, symbols, where)
            if confirmed is not None:
                locks[lock.span, None] = confirmed
        facts = [f if f.lock is None else replace(f, lock=locks[f.lock.span, None])
                 for f in unit.facts if f.lock is None or (f.lock.span, None) in locks]
        started = {f.span for f in facts if f.kind.endswith("scheduler-start")}
        facts += [fact for site in unit.callsites if site.span not in started
                  for fact in self._scheduler_start(site, unit, where)]
        if any(f.kind == "scheduler-start" for f in facts) and self.called_once(rel, unit.name):
            facts = [f for f in facts if f.kind != "scheduler-start"]
        spawn = self.module(rel)
        for site in unit.callsites:
            if spawn is None or _runs_entry_function(site, unit, spawn) or \
                    not self.may_take(site, unit, spawn):
                continue
            taken, hazards = self.semantics.at_use(site, where, unit.retries,
                                                   bool(spawn.spawn_context))
            if abstraction:  # what it holds on return or where it yields: taken at its uses
                kept = [lock for lock in taken if (lock.release not in HELD_ON_RETURN or
                                                   claim_kept(lock, site, unit)) and
                        not any(lock.holds(line) for line in unit.yield_lines)]
                hazards = [f for f in hazards if f.lock is None or f.lock in kept]
                taken = kept
            if called:  # "did I claim it", answered to the caller: taken at its call
                taken = [lock for lock in taken if lock.kind != "db-claim" or
                         lock.release != "none" or claim_kept(lock, site, unit)]
            for lock in taken:  # (two locks one call takes are two: keyed by their origin)
                locks.setdefault((lock.span, lock.taken_from), lock)
            facts += hazards
        for lock in self.semantics.driven_protocols(unit, where):
            locks.setdefault((lock.span, None), lock)
        return list(locks.values()), facts

    def called_once(self, rel: str, name: str, depth: int = 0) -> bool:
        """Whether every call of the module-level function ``name`` in the project is made
        by code that runs once however many workers serve the app (gunicorn's master hooks,
        the ``__main__`` block), directly or through functions called only from there. A
        function nothing in the project calls (a framework calls it) is not."""
        key = (rel, name)
        if key not in self._once:
            self._once[key] = False  # (a cycle of calls is not "once")
            self._once[key] = "." not in name and name not in (MODULE, MAIN) and \
                depth < 3 and self._callers_once(rel, name, depth)
        return self._once[key]

    def _callers_once(self, rel: str, name: str, depth: int) -> bool:
        target = f"{self.dotted(rel)}.{name}"
        called = re.compile(rf"\b{re.escape(name)}\s*\(")
        callers: list[tuple[str, str]] = []
        for other in sorted(self.files):
            text = self.read(self.files[other]) or ""
            if not called.search(text.replace(f"def {name}(", "")):
                continue
            facts = self.module(other)
            for unit in facts.units.values() if facts is not None else ():
                if target in unit.calls or other == rel and name in unit.calls:
                    callers.append((other, unit.name))
        return bool(callers) and all(unit in ONCE_UNITS or self.called_once(other, unit, depth + 1)
                                     for other, unit in callers)

    def _scheduler_start(self, site: CallSite, unit: Unit, where: Where) -> list[CodeFact]:
        """``scheduler.start()`` on a background scheduler another module makes (``from
        .extensions import scheduler``): started in every process that runs this code."""
        call = site.call
        if unit.name in ONCE_UNITS or site.use != "call" or call is None or \
                dict(call.args).get("paused") == Const(True):  # runs no job yet
            return []
        func = call.func
        receiver = Imported(func.dotted.rsplit(".", 1)[0]) \
            if isinstance(func, Imported) and func.dotted.endswith(".start") else \
            func.base if isinstance(func, Attr) and func.name == "start" else None
        if receiver is None or self.semantics.kind(receiver, where) != "background-scheduler":
            return []
        shown = receiver.dotted.rsplit(".", 1)[-1] if isinstance(receiver, Imported) else \
            _shown(receiver)
        return [CodeFact("worker-scheduler-start" if unit.per_worker else "scheduler-start",
                         site.span, f"{shown}.start()")]

    @cached_property
    def lock_names(self) -> frozenset[str]:
        """Names a use site must call (a function, class or method name) to reach a lock
        through the project's code: those of the functions holding a lock when they return
        or handing back a lock object, of lock classes, and of every function calling one of
        them, in modules the prefilter keeps. A site calling nothing of these is not
        followed (most calls: the ORM, logging, the standard library)."""
        names = set(LOCKISH_CALLS) | self.abstraction_names
        units = [(facts, unit) for facts in self._kept_modules for unit in facts.units.values()]
        grown = True
        while grown:  # and the functions that call those, in turn
            grown = False
            for facts, unit in units:
                own = _callable_names(unit.name)
                if own <= names:
                    continue
                if any(self.may_reach(site, unit, facts, names) for site in unit.callsites):
                    names.update(own)
                    grown = True
        return frozenset(names)

    @cached_property
    def _kept_modules(self) -> list[ModuleFacts]:
        """The parsed modules the prefilter keeps (asked once every module was scanned)."""
        return [facts for rel in sorted(self.files) if self.might_lock(rel)
                for facts in [self.module(rel)] if facts is not None and facts.error is None]

    @cached_property
    def abstraction_names(self) -> frozenset[str]:
        """The names of the project's own lock abstractions, in the modules the prefilter
        keeps: functions that hold a lock when they return or hand back a lock object (and,
        for methods, their own name), lock classes, and proxies initialised with one."""
        names: set[str] = set(LOCKISH_CALLS)
        kept = self._kept_modules
        for facts in kept:
            for cls, info in facts.classes.items():
                if imported_names({n for value in info.bases for n in value_names(value)},
                                  facts) & names \
                        or any(makes_lock(value) for values in info.attrs.values()
                               for value, _ in values):
                    names.add(cls)
            for unit in facts.units.values():
                made = [*unit.returns, *unit.local_values.values()]
                if _hands_back_lock(unit) or any(makes_lock(v) for v in made):
                    names.update(_callable_names(unit.name))
                    # a method that is the abstraction (``guard.single()``): also by its
                    # own name, for a receiver whose class a helper's parameter hides
                    method = unit.name.rsplit(".", 1)[-1] if "." in unit.name else ""
                    if method and method not in _BUILTIN_METHODS:
                        names.add(method)
        for facts in kept:  # a proxy initialised with one of them stands for it
            rel = self.rel_of(facts)
            for name, value in facts.bindings.items():
                if isinstance(value, Call) and any(
                        option.dotted.rsplit(".", 1)[-1] in names
                        for option in self.semantics.proxy_options(Global(name), Where(rel))):
                    names.add(name)
        return frozenset(names - set(LOCKISH_CALLS))

    @cached_property
    def typed_methods(self) -> dict[str, set[tuple[str, str]]]:
        """Methods named like a builtin's (``WorkQueue.get``) of the classes in
        ``lock_names`` that hold a lock on return or answer their caller for something that
        may take one (``if not self._claim(item): return None``): name -> (module, method
        unit). The name is not in ``lock_names`` (every ``.get(`` would be followed): a
        site calling one is followed when its receiver is an instance of the class, which
        costs a type inference per site, hence so few methods."""
        found: dict[str, set[tuple[str, str]]] = {}
        names = self.lock_names
        for facts in self._kept_modules:
            for unit in facts.units.values():
                cls, _, method = unit.name.rpartition(".")
                if method in _BUILTIN_METHODS and not method.startswith("__") and \
                        cls in names and cls in facts.classes and (
                            _hands_back_lock(unit) or any(
                                site.answered and site_names(site, unit, facts) & names
                                for site in unit.callsites)):
                    found.setdefault(method, set()).add((self.rel_of(facts), unit.name))
        return found

    def _typed_method_call(self, site: CallSite, unit: Unit, facts: ModuleFacts) -> bool:
        """A site calling one of ``typed_methods`` on an object the instance holds
        (``self._queue.get()``) or a local a service registry hands out, that is of that
        class. (Only such receivers: typing every ``kwargs.get()`` or ``local.get()`` costs
        more than the rest of the analysis.)"""
        func = site.callee.func if isinstance(site.callee, Call) else None
        if not isinstance(func, Attr) or func.name not in self.typed_methods or \
                not (isinstance(func.base, Attr) and isinstance(func.base.base, SelfRef) or
                     self._service_local(func.base, unit)):
            return False
        kind = self.semantics.kind(func.base, Where(self.rel_of(facts), unit.name))
        if not kind.startswith("instance:"):
            return False
        _, rel, cls = kind.split(":", 2)
        return self.semantics.class_method(rel, cls, func.name) in self.typed_methods[func.name]

    @staticmethod
    def _service_local(value, unit: Unit) -> bool:
        """A local bound to what a service registry hands out (``svc =
        request.find_service(name="queue")``)."""
        return isinstance(value, Local) and is_service_lookup(unit.local_values.get(value.name))

    @cached_property
    def called_abstractions(self) -> frozenset[str]:
        """The abstraction names a module may call by name (``claim_mirror(m)``,
        ``util.set_up_core_dir(d)``, ``Guard(...)``): module-level functions, classes and
        proxies, not methods (a method's receiver is typed only in a parsed module)."""
        top: set[str] = set()
        for facts in self._kept_modules:
            top.update(n for n in facts.units if "." not in n and n not in (MODULE, MAIN))
            top.update(facts.classes)
            top.update(facts.bindings)
        return frozenset(self.abstraction_names & top) | self.abstraction_services

    @cached_property
    def abstraction_services(self) -> frozenset[str]:
        """The names the project registers one of its lock abstractions under as a service
        (``register_service_factory(factory, name="queue_service")``): a module that asks
        for it by name (``find_service(name="queue_service")``) calls the abstraction."""
        semantics = self.semantics
        found = set()
        for method, registration, at in semantics.services():
            name = semantics.string(registration.arg("name", 3), at)
            kind = semantics.registered(method, registration, at)
            if name and kind.startswith("instance:") and \
                    kind.rsplit(":", 1)[-1] in self.abstraction_names:
                found.add(name)
        return frozenset(found)

    def calls_abstraction(self, rel: str) -> bool:
        """A module the prefilter passed over that calls one of the project's lock
        abstractions by name: a lock is taken there, through code the prefilter keeps.
        The stat index keeps, for each such module, which of the last run's abstraction
        names it calls: while the names are among those, a warm run does not read it."""
        if rel not in self._callers:
            names = self.called_abstractions
            found: frozenset[str] = frozenset()
            if not self.might_lock(rel) and not is_test_path(rel) and names:
                known = self._called.get(rel)
                if known is not None and self.stats is not None and \
                        names <= self.stats.context.get("abstractions", frozenset()):
                    found = known & names
                else:
                    found = _called_names(self.read(self.files[rel]) or "", names,
                                          self.abstraction_services)
            stamp = self._passed.get(rel)
            if stamp is not None and self.stats is not None:
                self.stats.record(self.files[rel].display, stamp, (_IRRELEVANT, found))
            self._callers[rel] = bool(found)
        return self._callers[rel]

    def note_abstractions(self) -> None:
        """Every module asked (``calls_abstraction``): the stat index's notes of what each
        passed-over module calls are about these names."""
        if self.stats is not None:
            self.stats.context["abstractions"] = self.called_abstractions

    def analysed(self, rel: str) -> bool:
        """Read as code: kept by the prefilter, or calling an abstraction of the project's."""
        return self.might_lock(rel) or self.calls_abstraction(rel)

    @cached_property
    def effect_methods(self) -> frozenset[str]:
        """Names of the methods that test, create or remove a lock-file path of their
        object (``Unit.path_effects``), in the modules the prefilter keeps: the only calls
        a caller can drive a lock-file protocol through (``semantics.driven_protocols``)."""
        names = set()
        for rel in sorted(self.files):
            facts = self.module(rel) if self.might_lock(rel) else None
            for unit in facts.units.values() if facts is not None else ():
                effects = unit.path_effects
                if effects is not None and "." in unit.name:
                    names.add(unit.name.rsplit(".", 1)[-1])
        return frozenset(names)

    def may_take(self, site: CallSite, unit: Unit, facts: ModuleFacts, depth: int = 0) -> bool:
        """Whether a use site may reach a lock through the project's code (see
        ``lock_names``), or through a function of a module the prefilter passed over (which
        ``lock_names`` does not read: a wrapper around a lock helper)."""
        if self.may_reach(site, unit, facts, self.lock_names) or \
                self._typed_method_call(site, unit, facts):
            return True
        func = site.callee.func if isinstance(site.callee, Call) else None
        if depth > 3:
            return False
        rel = self.rel_of(facts)
        if isinstance(func, Attr):
            target = self._typed_method(func, Where(rel, unit.name))
        elif isinstance(func, Imported) and not func.dotted.startswith(".") and \
                func.dotted.split(".", 1)[0] not in self._top_names:
            return False  # a library's (os.path.join, requests.get)
        elif isinstance(func, (Global, Imported)):
            target = self.semantics.resolve_dotted(rel, func.dotted) \
                if isinstance(func, Imported) else (rel, func.name)
        else:
            return False
        if target is None or not target[1] or self.might_lock(target[0]):
            return False  # a library's, or judged by lock_names
        if any(_handed_names(value) & self.lock_names for value in _handed(site, unit, facts)) \
                and self._calls_what_it_is_handed(*target):  # (the site's own test first)
            return self.module(target[0]) is not None  # retry(acquire_lock): read it
        key = (target, site.use)
        if key not in self._reaches:
            self._reaches[key] = False  # (a cycle reaches nothing)
            if not self._may_call_lock_name(target[0], target[1],
                                            methods=isinstance(func, Attr)):
                return False  # not worth a parse: it calls nothing that locks
            target_facts = self.module(target[0])
            inner = target_facts.units.get(target[1]) if target_facts is not None else None
            self._reaches[key] = inner is not None and target_facts is not None and (
                _hands_back_lock(inner) or any(self.may_take(s, inner, target_facts, depth + 1)
                                               for s in entered_sites(inner, site.use)))
        return self._reaches[key]

    def _typed_method(self, func: Attr, where: Where) -> tuple[str, str] | None:
        """(module, Class.method) of a method called on an object the unit holds or the
        module has (``self._model.index()``, ``model.index()`` with ``model =
        Proxy()``), when the method's name is one of a method that reaches a lock
        (``lock_method_names``): a class of a module the prefilter passed over may stand
        between the job and a lock class (a proxy, a facade). Only these receivers are
        typed, and only for these names (typing every call is too dear)."""
        if func.name not in self.lock_method_names or not (
                isinstance(func.base, (Global, Imported)) or
                isinstance(func.base, Attr) and isinstance(func.base.base, SelfRef)):
            return None
        kind = self.semantics.kind(func.base, where)
        if not kind.startswith("instance:"):
            return None
        _, rel, cls = kind.split(":", 2)
        return rel, f"{cls}.{func.name}"

    @cached_property
    def lock_method_names(self) -> frozenset[str]:
        """Names of the methods, in modules read as code (kept by the prefilter, or calling
        an abstraction of the project's), that take a lock or call something that may,
        themselves or through the methods they call by name (not a builtin's name: ``get``,
        ``run`` of dict or str)."""
        names = self.lock_names
        callers = [facts for rel in sorted(self.files) if self._callers.get(rel)
                   for facts in [self.module(rel)] if facts is not None and facts.error is None]
        methods = [(facts, unit, unit.name.rpartition(".")[2]) for facts in
                   [*self._kept_modules, *callers] for unit in facts.units.values()
                   if "." in unit.name and unit.name.rpartition(".")[2] not in _BUILTIN_METHODS]
        found = {method for facts, unit, method in methods if unit.locks or any(
            self.may_reach(site, unit, facts, names) for site in unit.callsites)}
        grown = True
        while grown:  # and the methods that call those by name (self._index(), x.scan())
            grown = False
            for _, unit, method in methods:
                if method not in found and any(
                        isinstance(site.callee, Call) and isinstance(site.callee.func, Attr)
                        and site.callee.func.name in found for site in unit.callsites):
                    found.add(method)
                    grown = True
        return frozenset(found)

    def may_reach(self, site: CallSite, unit: Unit, facts: ModuleFacts, names) -> bool:
        """A site calling one of ``names``, or whose callee cannot be named (a helper's
        parameter: ``receiver.acquire()``), or handing one of them to a function that
        calls what it is handed (``retry(acquire_lock, name)``)."""
        named = self._names(site, unit, facts)
        if not named or named & names:
            return True
        return bool(named & self._function_takers) and any(
            _handed_names(value) & names for value in _handed(site, unit, facts))

    def _names(self, site: CallSite, unit: Unit, facts: ModuleFacts) -> set[str]:
        """``site_names``, read once per site (asked once per round of ``lock_names`` and
        per use)."""
        named = self._site_names.get(id(site))
        if named is None:
            named = self._site_names[id(site)] = (site, site_names(site, unit, facts))
        return named[1]

    @cached_property
    def _function_takers(self) -> frozenset[str]:
        """Names of the functions, in modules the prefilter keeps, that call a function
        their caller hands them (``def retry(func, *args): return func(*args)``), or hand
        one of their parameters on to such a function: they take a lock when what they
        are handed does. (Naming every call of a parameter as a lock name instead made
        every caller of every such helper a lock name: Django's pre-commit run walked
        six times as many uses, for nothing.)"""
        units = [(facts, unit) for facts in self._kept_modules for unit in facts.units.values()]
        found: set[str] = set()
        grown = True
        while grown:  # (the helpers that hand their parameter on, in turn)
            grown = False
            for facts, unit in units:
                own = _callable_names(unit.name)
                if own and not own <= found and any(
                        self._takes_function(site, unit, facts, found)
                        for site in unit.callsites):
                    found.update(own)
                    grown = True
        return frozenset(found)

    def _calls_what_it_is_handed(self, rel: str, name: str) -> bool:
        """Whether a function of a module the prefilter passed over calls one of its
        parameters (from its light facts, or its full ones when it was parsed)."""
        facts = self.known(rel)
        if facts is None:
            return False
        unit = facts.units.get(name)
        if unit is not None:
            return any(self._takes_function(site, unit, facts, set()) for site in unit.callsites)
        return name in facts.param_callers

    def _takes_function(self, site: CallSite, unit: Unit, facts: ModuleFacts,
                        takers: set[str]) -> bool:
        """A site calling one of the unit's parameters, or what the object's constructor
        was handed (``self.fn = fn`` in ``__init__``, then ``self.fn()``), or handing one
        of the unit's parameters to a taker."""
        callee = site.callee
        if not isinstance(callee, Call):
            return False

        def own(value) -> bool:
            return isinstance(value, Param) and value.name in unit.params and \
                value.owner in ("", unit.name)

        func = callee.func
        if own(func):
            return True
        if isinstance(func, Attr) and isinstance(func.base, SelfRef):
            info = facts.classes.get(func.base.cls)
            kept = info.attrs.get(func.name, ()) if info is not None else ()
            if any(isinstance(value, Param) and written == f"{func.base.cls}.__init__"
                   for value, written in kept):
                return True
        return bool(self._names(site, unit, facts) & takers) and any(
            own(value) for value in _handed(site, unit, facts))

    def returns_lock_name(self, rel: str, name: str) -> bool:
        """Whether a function of a module the prefilter passed over returns what a call of
        one of ``lock_names`` gives (``return IMPL.claim(...)``), itself or through the
        module's own functions whose call it returns; asked once ``lock_names`` is known
        (before, while it is being found, no module is read in full for it)."""
        return "lock_names" in self.__dict__ and \
            self._may_call_lock_name(rel, name, methods=False, returned=True)

    def _may_call_lock_name(self, rel: str, name: str, methods: bool,
                            returned: bool = False) -> bool:
        """Whether a function of a module the prefilter passed over calls one of
        ``lock_names``, itself or through the module's own functions it calls (read from
        its light facts, before parsing the module in full); ``methods``: or, for a
        method called on an object (a proxy's ``self._model.index()``), one of
        ``lock_method_names``; ``returned``: only the calls it returns count."""
        facts = self.known(rel)
        if facts is None:
            return False
        if facts.units:  # parsed in full already
            return name in facts.units
        calls = facts.function_returns if returned else facts.function_calls
        seen, todo = {name}, [name]
        method_names = self.lock_method_names if methods and "." in name else frozenset()
        while todo and len(seen) < 8:
            called = calls.get(todo.pop(), frozenset())
            if not self.lock_names.isdisjoint(called) or not method_names.isdisjoint(called):
                return True
            local = {c for c in called if c in calls} - seen
            seen |= local
            todo += sorted(local)
        return False

    @cached_property
    def abstractions(self) -> set[tuple[str, str]]:
        """(module, unit) of every function or method of the tree that some use site in a
        module the prefilter keeps takes a lock through: its escaping locks are judged at
        those uses. (An abstraction nobody uses there keeps its locks where they are
        written: a use in a module read only because it calls one is listed besides, as a
        chain of such calls can run deeper than uses are followed.)"""
        return self._users_taken([(facts, unit) for facts in self._kept_modules
                                  for unit in facts.units.values()], calls=True)

    def used_by(self, units: list[tuple[ModuleFacts, Unit]]) -> set[tuple[str, str]]:
        """(module, unit) of the abstractions these units enter (a use in a module the
        prefilter passed over is not in ``abstractions``)."""
        return self._users_taken(units, calls=False)

    def _users_taken(self, units: list[tuple[ModuleFacts, Unit]],
                     calls: bool) -> set[tuple[str, str]]:
        """(module, unit) of what the use sites of these units take a lock through (a
        manager handed back, ``return lease(...)``, is entered by the caller); ``calls``:
        plain calls count too."""
        used: set[tuple[str, str]] = set()
        for facts, unit in units:
            rel = self.rel_of(facts)
            for site in entered_sites(unit, "with"):
                if (calls or site.use != "call") and \
                        not _runs_entry_function(site, unit, facts) and \
                        self.may_take(site, unit, facts):
                    used.update((r, name) for r, name, _ in self.semantics.users_of(
                        site.callee, site.use, Where(rel, unit.name)))
        return used

    def add(self, rel: str, f) -> None:
        """A Python file found by what runs it (a script without ``.py``)."""
        if rel not in self.files:
            self.files[rel] = f
            self._rel_by_display[f.display] = rel

    def rel_of(self, facts: ModuleFacts) -> str:
        """The tree-relative path of a parsed module (its facts know the display path)."""
        return self._rel_by_display[facts.path]

    def module_rel(self, dotted: str) -> str | None:
        """The tree's module (or package) with this dotted name; for a name of two parts
        or more that no root gives, the one module whose path ends so (a namespace
        package, imported from a folder above it that has no ``__init__.py``)."""
        found = self._by_dotted.get(dotted) or self._by_dotted.get(f"{dotted}.__init__")
        if found is None and "." in dotted:
            found = self._ending_in(dotted) or self._ending_in(f"{dotted}.__init__")
        return found

    @cached_property
    def _top_names(self) -> frozenset[str]:
        """Every part of the tree's dotted module names (an import of the tree's code
        starts with one of them; a namespace-package import may start at any)."""
        return frozenset(part for name in self._by_dotted for part in name.split("."))

    def _ending_in(self, dotted: str) -> str | None:
        """The one module whose path ends with ``dotted``, below a folder that is no
        package (so it can be on the path: ``webapp/`` for ``crashstats.cron``; not
        ``mlflow/`` for ``sklearn.base``, which is the library)."""
        as_path = "/" + dotted.replace(".", "/")
        owners = set()
        for rel in self._by_last_part.get(dotted.rsplit(".", 1)[-1], ()):
            module = rel[:-len(".py")] if rel.endswith(".py") else rel
            if not dotted.endswith(".__init__"):
                module = module.removesuffix("/__init__")  # the package itself
            if module.endswith(as_path) and module[:-len(as_path)] not in self.packages:
                owners.add(rel)
        return owners.pop() if len(owners) == 1 else None

    @cached_property
    def _by_last_part(self) -> dict[str, set[str]]:
        """The tree's modules by the last part of their dotted names."""
        out: dict[str, set[str]] = {}
        for name, rel in self._by_dotted.items():
            out.setdefault(name.rsplit(".", 1)[-1], set()).add(rel)
        return out

    def consulted(self) -> set[str]:
        """The modules whose text this run's answer depends on: parsed, read for their
        imports, constants and classes, or Django settings (read for ``CACHES``); every
        module once a task name was searched for in all of them."""
        if self.searched_texts:
            return set(self.files)
        return set(self._modules) | set(self._light) | {
            rel for rel in self.files if is_settings_module(rel)}

    def known(self, rel: str) -> ModuleFacts | None:
        """A module as the semantics reads it: in full when it was parsed or the prefilter
        keeps it or it makes clients or it was found to call an abstraction of the project's,
        else its imports, constants and classes (``light``)."""
        if rel in self._modules or self.might_lock(rel) or self._callers.get(rel):
            return self.module(rel)
        if rel not in self._light:
            f = self.files.get(rel)
            text = self.read(f) if f is not None else None
            if f is None or text is None:
                self._light[rel] = None
            elif needs_full_parse(text):
                return self.module(rel)
            else:
                self._light[rel] = self._read_light(f.display, text)
        return self._light[rel]

    def _read_light(self, display: str, text: str) -> ModuleFacts | None:
        """A module's light facts, from the cache when it has them."""
        cache = self.cache
        key = cache.key("python-light", display, text) if cache else None
        facts = cache.get(key) if cache and key else None
        if not isinstance(facts, ModuleFacts):
            facts = light_facts(display, text)
            if cache and key and facts is not None:
                cache.put(key, facts)
        return facts

    def module(self, rel: str) -> ModuleFacts | None:
        if rel not in self._modules:
            self._modules[rel] = None
            f = self.files.get(rel)
            text = self.read(f) if f is not None else None
            cache = self.cache
            if f is not None and text is not None:
                key = cache.key("python", f.display, text) if cache else None
                facts = cache.get(key) if cache and key else None
                if not isinstance(facts, ModuleFacts):
                    facts = _parse_one((f.display, text))
                    if cache and key and facts.internal_error is None:
                        # only the prefilter decides what is kept: cached facts of an entry
                        # it passes over serve the next run's reachability, nothing else
                        cache.put(key, facts)
                self._store(rel, self._with_forwarders(rel, facts, text))
        return self._modules[rel]

    def _with_forwarders(self, rel: str, facts: ModuleFacts, text: str) -> ModuleFacts:
        """The module read again with the forwarding helpers of other modules it calls
        with a query (``take(Job.objects, ...)`` and ``def take(qs, ...): return
        qs.update(...)`` elsewhere): the chain is then read at the call, as written there."""
        if not facts.forwarders_wanted or rel in self._forwarding:
            return facts  # (two modules that call each other's helpers: read once)
        self._forwarding.add(rel)
        try:
            given = self._forwarders_of(rel, facts.forwarders_wanted)
        finally:
            self._forwarding.discard(rel)
        if not given:
            return facts
        display = self.files[rel].display
        cache = self.cache
        key = cache.key("python-forwarded", display,
                        text + "\0" + repr(sorted(given.items()))) if cache else None
        again = cache.get(key) if cache and key else None
        if not isinstance(again, ModuleFacts):
            again = _parse_one((display, text, given))
            if cache and key and again.internal_error is None:
                cache.put(key, again)
        return again

    def _forwarders_in(self, rel: str) -> dict[str, str]:
        """A module's forwarding helpers: from its facts when it was parsed, else from its
        light facts (never a full parse for this: asked while modules are stored)."""
        parsed = self._modules.get(rel) or self._light.get(rel)
        if parsed is not None:
            return parsed.forwarders
        if rel not in self._forwarders_read:
            f = self.files.get(rel)
            text = self.read(f) if f is not None else None
            facts = self._read_light(f.display, text) if f is not None and text is not None \
                else None
            self._forwarders_read[rel] = facts.forwarders if facts is not None else {}
        return self._forwarders_read[rel]

    def _forwarders_of(self, rel: str, wanted: frozenset[str]) -> dict[str, str]:
        """The sources of the forwarding helpers among ``wanted`` (dotted as imported in
        ``rel``)."""
        given = {}
        for dotted in sorted(wanted):
            target = self.semantics.resolve_dotted(rel, dotted)
            if target is None or not target[1] or "." in target[1] or target[0] == rel:
                continue
            source = self._forwarders_in(target[0]).get(target[1])
            if source:
                given[dotted] = source
        return given

    def _store(self, rel: str, facts: ModuleFacts) -> None:
        if facts.error is not None and not facts.too_large:
            self.errors.append(facts.error)
        if facts.internal_error is not None:
            self.internal_errors.append(InternalError(facts.path, facts.internal_error))
        self._modules[rel] = facts

    def preload(self, rels: list[str], workers: int, progress: Progress | None = None) -> None:
        """Parse the modules the cache did not hold across ``workers`` processes, when there
        are enough of them to pay for starting the pool (a pre-commit run on a few files
        stays in this process)."""
        todo = []
        for rel in rels:
            if rel in self._modules:
                continue
            f = self.files[rel]
            text = self.read(f)
            if text is not None:
                todo.append((rel, f.display, text, self.cache.key("python", f.display, text)
                             if self.cache else None))
        if workers < 2 or len(todo) < PARALLEL_MIN_FILES:
            return  # module() parses them one by one, when asked
        results = _parse_in_pool([(display, text) for _, display, text, _ in todo], workers,
                                 progress)
        for (rel, _display, text, key), facts in zip(todo, results):
            if facts is None:
                continue  # the pool broke: module() parses it here
            if self.cache is not None and key and facts.internal_error is None:
                self.cache.put(key, facts)
            self._store(rel, self._with_forwarders(rel, facts, text))

    @property
    def parsed_count(self) -> int:
        """How many modules were asked for in full so far. It only grows, and what
        ``known`` answers for a module changes (from its light reading to its full one)
        only when it does."""
        return len(self._modules)

    def parsed(self, rel: str) -> bool:
        """Whether the module's facts are at hand (parsed, or from the cache)."""
        return self._modules.get(rel) is not None

    def might_lock(self, rel: str) -> bool:
        """The prefilter's verdict. A module it passes over is noted in the stat index (a
        warm run that finds it unchanged does not read it); one it keeps comes from the
        cache when it was parsed before."""
        if rel not in self._matters:
            self._matters[rel] = self._prefilter(rel)
        return self._matters[rel]

    def _prefilter(self, rel: str) -> bool:
        f = self.files.get(rel)
        if f is None:
            return False
        stats = self.stats
        stamp = stats.stamp(f.abs) if stats is not None else None
        note = stats.known(f.display, stamp) if stats is not None and stamp is not None \
            else None
        if stats is not None and stamp is not None and isinstance(note, tuple) and \
                note[0] == _IRRELEVANT:
            self.unread.add(f.display)
            self._called[rel] = note[1]
            self._passed[rel] = stamp
            return False
        text = self.read(f)
        if not text:
            return False
        if note != _KEPT and not prefilter.worth_parsing(rel, text):
            if stats is not None and stamp is not None and \
                    not may_hold_suppressions(text, "python"):
                # nothing in it can matter to a later run that finds it unchanged, but a
                # call of a lock abstraction: noted once the abstractions are known
                self._passed[rel] = stamp
            return False
        if stats is not None and stamp is not None:
            stats.record(f.display, stamp, _KEPT)
        if self.cache is not None:
            facts = self.cache.get(self.cache.key("python", f.display, text))
            if isinstance(facts, ModuleFacts):
                self._store(rel, self._with_forwarders(rel, facts, text))
        return True

    # -- reachability
    def entry_units(self, rel: str, kind: str, function: str | None) -> list[tuple[ModuleFacts, Unit]]:
        """Every unit an entry reaches, the entry's own first."""
        facts = self.module(rel)
        if facts is None or facts.error is not None:
            if facts is not None and facts.too_large and facts.error is not None and \
                    facts.error not in self.errors:
                self.errors.append(facts.error)  # a job runs it: say it was not analysed
            return []
        return self._reach(rel, entry_roots(facts, kind, function))

    def _reach(self, rel: str, roots: list[str]):
        seen: set[tuple[str, str]] = set()
        order: list[tuple[ModuleFacts, Unit]] = []
        queue = deque((rel, r) for r in roots)
        while queue and len(order) < _MAX_UNITS:
            module_rel, unit_name = queue.popleft()
            if (module_rel, unit_name) in seen:
                continue
            seen.add((module_rel, unit_name))
            facts = self.module(module_rel)
            if facts is None or unit_name not in facts.units:
                continue
            unit = facts.units[unit_name]
            order.append((facts, unit))
            targets = [self._resolve_call(module_rel, facts, unit_name, call)
                       for call in unit.calls]
            targets += [self._typed_method(site.callee.func, Where(module_rel, unit_name))
                        for site in unit.callsites if isinstance(site.callee, Call) and
                        isinstance(site.callee.func, Attr)]  # self._model.index()
            for target in targets:
                if target is None:
                    continue
                queue.append(target)
                target_facts = self.module(target[0])
                if target_facts is not None and target[1] in target_facts.classes:
                    # a lock wrapper class: constructing or entering it takes the lock
                    queue.extend((target[0], f"{target[1]}.{method}") for method in
                                 ("__init__", "__enter__", "__aenter__", "acquire"))
        return order

    def _resolve_call(self, rel: str, facts: ModuleFacts, caller: str, call: str):
        # self.method() inside a class
        if ".self." in call or call.startswith("self."):
            method = call.rsplit(".", 1)[-1]
            cls = caller.split(".")[0]
            return rel, f"{cls}.{method}"
        if call in facts.units or call in facts.classes:
            return rel, call
        if "<locals>" in call:
            return None
        if call.startswith("."):  # relative import: .locks.x, ..pkg.y
            level = len(call) - len(call.lstrip("."))
            package = self.dotted(rel).split(".")
            if not rel.endswith("__init__.py"):
                package = package[:-1]
            package = package[:len(package) - (level - 1)] if level > 1 else package
            call = ".".join([*package, call.lstrip(".")])
        parts = call.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            target_rel = self.module_rel(".".join(parts[:cut]))
            if target_rel is not None:
                return target_rel, ".".join(parts[cut:])
        return None


def _handed(site: CallSite, unit: Unit, facts: ModuleFacts) -> list[Value]:
    """The arguments a use site hands over: its call's, and those of the calls that made
    its receiver (``Runner(fn).go()``; ``r = Runner(fn)`` then ``r.go()``)."""
    handed: list[Value] = []
    node: Value | None = site.callee
    for _ in range(8):
        if isinstance(node, Local):
            node = unit.local_values.get(node.name)
        elif isinstance(node, Global):
            node = facts.bindings.get(node.name)
        if isinstance(node, Call):
            handed += [value for _, value in node.args]
            node = node.func
        if not isinstance(node, (Attr, Call, Local, Global)):
            break
        if isinstance(node, Attr):
            node = node.base
    return handed


def _handed_names(value: Value) -> set[str]:
    """The names a value handed to a helper may call: its own, and the function of a
    ``functools.partial`` made of it."""
    names = value_names(value)
    first = partial_function(value)
    return names | value_names(first) if first is not None else names


def _callable_names(unit: str) -> set[str]:
    """The name a use site calls a unit by: a function's (the outermost, for a decorator
    factory's wrapper), a method's class (``self.x()``, ``Guard()``, ``obj.run()`` name
    the class or an instance of it, not the method); none for the module body."""
    head = unit.split(".", 1)[0]
    return set() if head.startswith("<") else {head}


#: top-level folders a build installs as the project's package under the project's name
#: (ganeti's autotools install ``lib/`` as ``ganeti``)
_SOURCE_FOLDERS = ("lib", "python", "pylib")


def _installed_as(files, packages: set[str], project_names: frozenset[str]):
    """(dotted name, rel) of the modules of a source folder that is a package installed
    under the project's name, when the tree has exactly one such folder and no package of
    that name of its own: ``lib/utils/io.py`` is ``ganeti.utils.io``."""
    folders = [f for f in _SOURCE_FOLDERS if f in packages]
    names = {n.replace("-", "_") for n in project_names if n.replace("-", "_").isidentifier()}
    if len(folders) != 1 or not names:
        return
    folder = folders[0]
    taken = {rel.split("/", 1)[0] for rel in files if "/" in rel}
    for name in sorted(names - taken - {folder}):
        for rel in files:
            if rel.startswith(f"{folder}/"):
                inner = rel[len(folder) + 1:]
                yield (f"{name}.{PythonIndex.dotted(inner)}" if inner != "__init__.py"
                       else name), rel


def _below_scripts(files):
    """(dotted name, rel) of the modules below a folder that holds Django's ``manage.py``:
    Python puts the script's folder on the path, so ``webapp/crashstats/cron/__init__.py``
    is imported as ``crashstats.cron`` even when ``webapp/`` has an ``__init__.py``."""
    roots = {rel[:-len("manage.py")] for rel in files
             if rel.endswith("/manage.py")}
    if not roots:
        return
    for rel in files:
        folder = rel
        while "/" in folder:
            folder = folder.rsplit("/", 1)[0]
            if f"{folder}/" in roots:
                yield PythonIndex.dotted(rel[len(folder) + 1:]), rel
                break


def _import_name(rel: str, packages: set[str]) -> str | None:
    """The dotted name a module is imported by when the folder above its topmost package
    is on the path (a project's ``src/``, a monorepo's ``pkg/src/``): None when it is in
    no package."""
    folder = rel.rsplit("/", 1)[0] if "/" in rel else ""
    if folder not in packages:
        return None
    top = folder
    while "/" in top and top.rsplit("/", 1)[0] in packages:
        top = top.rsplit("/", 1)[0]
    root = top.rsplit("/", 1)[0] + "/" if "/" in top else ""
    name = rel[len(root):]
    name = name[:-3] if name.endswith(".py") else name
    if name.endswith("/__init__"):
        name = name[: -len("/__init__")]
    return name.replace("/", ".")


def resolve_function(index: PythonIndex, rel: str, name: str) -> tuple[str, str] | None:
    """(module rel, function) for a dotted or local name used in module ``rel``."""
    facts = index.module(rel)
    if facts is None:
        return None
    return index._resolve_call(rel, facts, "", name)


def task_function(index: PythonIndex, name: str) -> tuple[str, str] | None:
    """The function a task name stands for when it is no dotted path of the tree (Celery
    apps that name tasks after their functions, ``gen_task_name``): the one decorated
    top-level function of that name in the tree, if there is exactly one."""
    function = name.rsplit(".", 1)[-1]
    found = []
    index.searched_texts = True
    for rel, f in sorted(index.files.items()):
        text = index.read(f)
        if not text or f"def {function}(" not in text:
            continue
        facts = index.module(rel)
        unit = facts.units.get(function) if facts is not None else None
        if unit is not None and unit.decorators:
            found.append((rel, function))
    return found[0] if len(found) == 1 else None


@dataclass(frozen=True)
class EntryCode:
    """What the code an entry point reaches holds."""

    locks: tuple[Lock, ...]
    facts: tuple[CodeFact, ...]
    parsed: bool  # the entry module was parsed (else nothing is known of it)
    files: tuple[str, ...]  # display paths of the modules reached, the entry's own first


def entry_roots(facts: ModuleFacts, kind: str, function: str | None) -> list[str]:
    """The units an entry point starts in: the module body, the management command's
    ``handle`` or the function named, the ``__main__`` block."""
    roots = [MODULE]
    if kind == "manage.py":
        command = next((c for c, info in facts.classes.items() if "handle" in info.methods),
                       None)
        if command:
            roots.append(f"{command}.handle")
    elif function:
        roots.append(function)
    if facts.has_main:
        roots.append(MAIN)
    return roots


def entry_code(index: PythonIndex, rel: str, kind: str, function: str | None) -> EntryCode:
    units = index.entry_units(rel, kind, function)
    used = index.used_by(units)
    roots = entry_roots(units[0][0], kind, function) if units else []
    code = [index.unit_code(index.rel_of(module), unit,
                            (index.rel_of(module), unit.name) in used,
                            called=module is not units[0][0] or unit.name not in roots)
            for module, unit in units]
    return EntryCode(tuple(lock for locks, _ in code for lock in locks),
                     tuple(fact for _, facts in code for fact in facts),
                     bool(units), tuple(dict.fromkeys(module.path for module, _ in units)))


def _shown(value) -> str:
    """How code spells a receiver: ``jobs.scheduler``, ``self.scheduler``."""
    if isinstance(value, Attr):
        return f"{_shown(value.base)}.{value.name}"
    if isinstance(value, Global):
        return value.name
    if isinstance(value, Imported):
        return value.dotted.rsplit(".", 1)[-1]
    return "scheduler"


def _hands_back_lock(unit: Unit) -> bool:
    """Whether the function holds a lock when it returns or yields (its caller's use of it
    is the acquisition)."""
    return any(unit.lock_symbols.get(lock.span) is not None and
               unit.lock_symbols[lock.span].escapes and lock.scope != "process"
               for lock in unit.locks)


def _runs_entry_function(site: CallSite, unit: Unit, facts: ModuleFacts) -> bool:
    """``main()`` in the ``if __name__ == "__main__":`` block: the script's own entry
    function, whose locks are reported where it takes them (held until the process
    exits, not taken again at this call)."""
    callee = site.callee
    return unit.name == MAIN and site.use == "call" and isinstance(callee, Call) and \
        isinstance(callee.func, Global) and callee.func.name in facts.units


def _called_names(text: str, names: frozenset[str],
                  services: frozenset[str] = frozenset()) -> frozenset[str]:
    """Which of ``names`` the text calls (``name(``), imports under another name (``from
    app.util import hold as keep``) or asks a service registry for (``find_service(Queue)``),
    and which of ``services`` it asks for by name (``find_service(name="queue_service")``):
    each looked for as a substring first."""
    present = [name for name in names if name in text]
    if not present:
        return frozenset()
    alternatives = "|".join(map(re.escape, sorted(present)))
    pattern = r"\b(%s)\s*(?:\(|as\s+\w)" % alternatives
    found = set(re.findall(pattern, text))
    if SERVICE_LOOKUP in text:
        found.update(re.findall(r"%s\(\s*(?:iface\s*=\s*)?(?:\w+\.)*(%s)\b" % (
            SERVICE_LOOKUP, alternatives), text))
        quoted = [name for name in present if name in services]
        if quoted:
            found.update(re.findall(r"[\"'](%s)[\"']" % "|".join(map(re.escape, quoted)),
                                    text))
    return frozenset(found)
