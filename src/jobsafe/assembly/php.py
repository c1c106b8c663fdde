"""Laravel scheduler tasks as jobs: each task with its schedule, its overlap mutex
(``withoutOverlapping()``), its per-firing claim (``onOneServer()``) in the app's cache
store, and the code it runs (an artisan command's class, a queued job, a closure, a shell
command)."""
from __future__ import annotations

import re
from dataclasses import replace
from functools import partial

from tree_sitter import Node

from ..link import DISPATCH_COMMANDS, targets_for
from ..model import UNKNOWN_TTL, Confidence, Entry, Job, Lock, LockScope, Schedule, Target
from ..paths import is_test_path
from ..schedule import cron_schedule_or_never, expand_macro
from ..sources.php.index import PhpClass, command_names
from ..sources.php.code import SYMFONY_HOST_STORES
from ..sources.php.laravel import MUTEX_MINUTES, Task, forwards_to_scheduler, scheduled_tasks
from ..sources.php.symfony import Recurring, handles, recurring_messages, symfony_cron
from ..sources.php.syntax import PhpFile, arguments, constant_values, number_value, string_value
from ..sources.shell import Locator, analyze
from ..timespec import ScheduleError
from .context import Step


class PhpAssembly(Step):
    def run(self) -> None:
        index = self.tree.php
        hazards = index.marked("hazards")
        for rel in index.marked("schedule"):
            if not is_test_path(rel):
                # (kept parsed when its hazards are read next: parsed once)
                self.guarded(index.files[rel].display,
                             partial(self._tasks, rel, rel in hazards))
        for rel in index.marked("symfony-schedule"):
            if not is_test_path(rel):
                self.guarded(index.files[rel].display, partial(self._recurring, rel))
        for rel in hazards:
            self.guarded(index.files[rel].display, partial(self._code, rel))
        self.project.parse_errors.extend(index.errors)

    def _forwarders(self) -> frozenset[str]:
        """The project's classes that pass their static calls on to Laravel's scheduler."""
        if self._forwarding is None:
            index = self.tree.php
            self._forwarding = frozenset(
                cls.fqn for rel in index.marked("forwards") for cls in index.classes_in(rel)
                if forwards_to_scheduler(cls.php, cls.node))
        return self._forwarding

    _forwarding: frozenset[str] | None = None

    def _code(self, rel: str) -> None:
        """Locks and hazards of every function in the file, scheduled or not (as for
        Python: a lock's defects are defects wherever it is taken)."""
        php = self.tree.php.parsed(rel, keep=False)
        if php is None:
            return
        analyzer = self.tree.php_analyzer
        for code in analyzer.every_function(php):
            self.project.code_locks.extend(code.locks)
            # an idempotency key is judged where a job reaches the call (a refund a user
            # clicks in the web UI is not a job's side effect)
            self.project.code_facts.extend(f for f in code.facts if not f.kind.startswith("key-"))
        self.texts.setdefault(php.display, ("php", php.text))

    def _tasks(self, rel: str, keep: bool) -> None:
        php = self.tree.php.parsed(rel, keep=keep)
        if php is None:
            return
        tasks = scheduled_tasks(php, self._forwarders())
        if tasks:
            self.tree.php.report_errors(rel)
            self.texts.setdefault(php.display, ("php", php.text))
        for task in tasks:
            self.guarded(php.display, partial(self._job, php, task))

    def _job(self, php: PhpFile, task: Task) -> None:
        text = "->".join(task.methods) or "everyMinute() (no frequency set)"
        zone_call = task.option("timezone")
        zone = string_value(arguments(zone_call)[0], php) \
            if zone_call is not None and arguments(zone_call) else None
        never = None
        if task.expression is None:
            schedule = Schedule(text=text, kind="templated", timezone=zone)
        elif task.repeat_seconds:
            schedule = Schedule(text=text, kind="interval", timezone=zone,
                                min_interval_seconds=task.repeat_seconds,
                                runs_per_day=86400 / task.repeat_seconds)
        else:
            try:
                # (each minute's schedule:run asks whether the local time is due)
                schedule, never = cron_schedule_or_never(text, task.expression, zone,
                                                         runtime="every-match")
            except ScheduleError as exc:
                self.error(php.display, f"invalid Laravel schedule: {exc}", task.span.line)
                return
            schedule = replace(schedule, text=text)
        target, cls = self._target(php, task)
        store = self.tree.php_settings.cache
        scope: LockScope = store.scope if store is not None else "cluster"
        confidence = Confidence.HIGH if store is not None and store.span is not None else \
            Confidence.MEDIUM
        locks: tuple[Lock, ...] = ()
        overlap = task.option("withoutOverlapping")
        queued = task.kind == "job" and cls is not None and cls.queued
        if queued and cls is not None:
            # the task only dispatches the job: its mutex covers the dispatch, and the
            # job's own guards (ShouldBeUnique, WithoutOverlapping middleware) cover the run
            locks = _queue_guards(cls, confidence, scope)
        elif overlap is not None:
            args = arguments(overlap)
            minutes = number_value(args[0], php, constant_values(php, php.root)) if args \
                else MUTEX_MINUTES
            locks = (Lock(kind="cache-lock", scope=scope, span=task.span,
                          key=task.label(php),
                          # an expiry not known statically is set, not missing
                          ttl_seconds=minutes * 60 if minutes else UNKNOWN_TTL,
                          stale_handling="ttl", try_lock=True, result_checked=True,
                          release="finally", api="withoutOverlapping()",
                          ttl_span=task.span, confidence=confidence),)
        one_server = None
        if task.has("onOneServer"):
            one_server = Lock(kind="cache-lock", scope=scope, span=task.span,
                              key=task.label(php), ttl_seconds=3600,
                              stale_handling="ttl", try_lock=True, result_checked=True,
                              api="onOneServer()", confidence=confidence)
        options = tuple((method, self._words(php, call)) for method, call in task.chain
                        if method in ("runInBackground", "environments", "between",
                                      "unlessBetween", "evenInMaintenanceMode", "timezone"))
        if queued:
            options += (("queued", "dispatched to the queue"),)
            if overlap is not None:
                options += (("withoutOverlapping", "covers the dispatch only"),)
        options += tuple(("branch", f"{line}:{side}") for line, side in task.branches)
        if task.days_only:
            options += (("days-only", "every minute of the days"),)
        self.project.jobs.append(Job(
            # a queued job's $timeout ends a run that takes longer (the worker kills it)
            runtime_bound_seconds=cls.timeout if queued and cls is not None else None,
            id=f"laravel:{task.span.path}:{task.span.line}", source="laravel", span=task.span,
            schedule=schedule, command=f"{task.kind}: {task.label(php)}",
            targets=(target,) if target is not None else (), locks=locks, options=options,
            never_runs=never, one_per_firing=one_server))

    def _recurring(self, rel: str) -> None:
        """The recurring messages of Symfony schedules as jobs, each with the code that
        handles its message and the lock its schedule takes per firing."""
        for cls in self.tree.php.classes_in(rel):
            for message in recurring_messages(cls):
                self.guarded(cls.php.display, partial(self._message_job, cls, message))

    def _message_job(self, provider: PhpClass, message: Recurring) -> None:
        php, index = provider.php, self.tree.php
        text = f"{'cron' if message.cron is not None else 'every'}({message.frequency})"
        never = None
        if message.cron:
            expression = expand_macro(message.cron) or symfony_cron(message.cron) or \
                message.cron
            try:
                schedule, never = cron_schedule_or_never(text, expression)
            except ScheduleError as exc:
                self.error(php.display, f"invalid Symfony schedule: {exc}", message.span.line)
                return
            schedule = replace(schedule, text=text)
        elif message.every_seconds:
            schedule = Schedule(text=text, kind="interval",
                                min_interval_seconds=int(message.every_seconds),
                                runs_per_day=86400 / message.every_seconds)
        else:
            schedule = Schedule(text=text, kind="templated")
        entry = None
        if message.handler is not None and message.handler.method("__invoke", index):
            entry = self._class_entry(message.handler, "__invoke")
        elif message.command is not None:
            cls = index.command(message.command, ("execute", "__invoke"))
            if cls is not None:
                method = next(m for m in ("execute", "__invoke") if cls.method(m, index))
                entry = self._class_entry(cls, method)
        elif message.message is not None:
            found = index.message_handler(php.qualified(message.message), handles)
            if found is not None:
                entry = self._class_entry(*found)
        what = message.command or (message.message or "a message").rsplit("\\", 1)[-1]
        # the message's arguments select the work (ReverifyDomains([PENDING]) is not
        # ReverifyDomains([ACTIVE, WARNING]))
        target = Target((what,), message.span, entry is not None, entry,
                        " ".join(filter(None, (f"{entry.path}::{entry.function}" if entry
                                               else what, message.arguments_text))))
        claim = None
        if message.lock is not None:
            store = re.search(r"new\s+\\?(?:[\w\\]*\\)?(\w+Store)\b",
                              php.text_of(provider.methods.get("getSchedule") or provider.node))
            settings = self.tree.php_settings
            scope: LockScope = ("host" if store.group(1) in SYMFONY_HOST_STORES else "cluster") \
                if store else settings.lock_scope or "host"  # the framework's default store
            claim = Lock(kind="symfony-lock", scope=scope, span=php.span(message.lock, whole=False),
                         stale_handling="ttl", try_lock=True, result_checked=True,
                         api="Schedule::lock()",
                         confidence=Confidence.HIGH if store or settings.lock_scope
                         else Confidence.MEDIUM)
        self.project.jobs.append(Job(
            id=f"symfony:{message.span.path}:{message.span.line}", source="symfony",
            span=message.span, schedule=schedule, command=f"message: {what}",
            targets=(target,), options=(("transport", f"scheduler_{message.schedule}"),),
            never_runs=never, one_per_firing=claim))

    def _class_entry(self, cls: PhpClass, method: str) -> Entry:
        owner, _ = cls.method(method, self.tree.php) or (cls, None)
        code = self.tree.php_analyzer.entry(owner, method)
        return self.tree.php_entry(cls.php.display, "function", f"{cls.name}::{method}", code)

    @staticmethod
    def _words(php: PhpFile, call: Node) -> str:
        return ", ".join(string_value(a, php) or php.text_of(a) for a in arguments(call))

    def _target(self, php: PhpFile, task: Task) -> tuple[Target | None, PhpClass | None]:
        """What the task runs, with the code it reaches, and the class it runs."""
        tree, analyzer = self.tree, self.tree.php_analyzer
        first = task.target
        if task.kind == "exec":
            locate = Locator(php.display, task.what, task.span.line, task.span.column)
            facts = analyze(task.what, locate)
            found = targets_for(facts.invocations, tree, facts.cd, None, locate)
            return (found[0][0] if found else None), None
        if first is None:
            return None, None
        cls, method = None, None
        if task.kind == "command":
            named = _class_constant(first, php)
            if named is not None:
                cls = tree.php.klass(php.qualified(named))
                method = "handle"
            elif string_value(first, php) is None:
                # a command named by code (Schedule::command($config['command'])): its work
                # is not known, nor the same as another such task's
                unknown = f"{task.what} ({php.display}:{task.span.line})"
                return Target((unknown,), task.span, False, None, unknown), None
            else:
                command = task.what.split()[0] if task.what.split() else ""
                if command in DISPATCH_COMMANDS:
                    return None, None
                cls = tree.php.command(command, ("handle", "__invoke"))
                method = "handle"
        elif task.kind == "job" or task.kind == "call":
            if first.type in ("anonymous_function", "arrow_function"):
                code = analyzer.closure(php, first)
                has_name = task.option("name") is not None or task.option("description") is not None
                # a named closure is shown by its name (``Kernel.php:prune-tokens()``)
                closure = tree.php_entry(php.display, "function" if has_name else "php",
                                         task.label(php) if has_name else None, code)
                return Target(("closure",), task.span, True, closure,
                              f"{php.display}:{first.start_point.row + 1}"), None
            named = _class_constant(first, php) or _created_class(first, php)
            method = "handle" if task.kind == "job" else "__invoke"
            if first.type == "array_creation_expression" and len(first.named_children) == 2:
                pair = [c.named_children[-1] for c in first.named_children if c.named_children]
                if len(pair) == 2:
                    named = _class_constant(pair[0], php) or _created_class(pair[0], php)
                    method = string_value(pair[1], php) or method
            cls = tree.php.klass(php.qualified(named)) if named else None
        if cls is None or method is None or cls.method(method, tree.php) is None:
            # a command of the framework or a package (``queue:restart``): not the
            # project's code, as a crontab line running a system tool is not
            # (its arguments select the work: `--model ActivityLog` is not `--model Webhook`)
            return Target(tuple(filter(None, (task.what, task.extra))), task.span, False, None,
                          " ".join(filter(None, (task.what, task.extra)))), None
        owner, _ = cls.method(method, tree.php) or (cls, None)
        code = analyzer.entry(owner, method)
        function = f"{cls.name}::{method}"
        entry: Entry = tree.php_entry(cls.php.display, "artisan" if task.kind == "command"
                                      else "function", function, code)
        args = task.what.split()[1:] + ([task.extra] if task.extra else []) \
            if task.kind == "command" else []
        # a command named by its class is the same work as its name on a crontab line
        names = command_names(cls.php.text_of(cls.node)) if task.kind == "command" else []
        name = names[0] if names else (task.what.split()[0] if task.what.split() else "")
        return Target((task.what,), task.span, True, entry,
                      " ".join([entry.path, name, *args]).strip()), cls


def _queue_guards(cls: PhpClass, confidence: Confidence, scope: LockScope) -> tuple[Lock, ...]:
    """A queued job's own overlap guard: ``implements ShouldBeUnique`` (a cache lock held
    until the job is processed) or the ``WithoutOverlapping`` job middleware."""
    if cls.interfaces & {"ShouldBeUnique", "ShouldBeUniqueUntilProcessing"}:
        api = "ShouldBeUnique"
    elif re.search(r"\bWithoutOverlapping\b", cls.php.text_of(cls.node)):
        api = "WithoutOverlapping middleware"
    else:
        return ()
    return (Lock(kind="cache-lock", scope=scope, span=cls.php.span(cls.node, whole=False),
                 key=cls.name, ttl_seconds=UNKNOWN_TTL, stale_handling="ttl", try_lock=True,
                 result_checked=True, release="finally", api=api, confidence=confidence),)


def _class_constant(node: Node, php: PhpFile) -> str | None:
    """``Charge::class`` -> ``Charge``."""
    if node.type == "class_constant_access_expression":
        text = php.text_of(node)
        if text.endswith("::class"):
            return text[:-len("::class")]
    return None


def _created_class(node: Node, php: PhpFile) -> str | None:
    """``new ChargeDue($x)`` -> ``ChargeDue``."""
    if node.type == "object_creation_expression":
        name = next((c for c in node.named_children if c.type in ("name", "qualified_name")), None)
        return php.text_of(name) if name is not None else None
    return None

