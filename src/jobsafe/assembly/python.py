"""Python modules: locks and hazards of all code, and jobs declared to in-process schedulers."""
from __future__ import annotations

import re
from dataclasses import replace
from functools import cached_property, partial

from ..model import Entry, Job, Lock, NeverRuns, ParseError, Schedule, Span, Target
from ..paths import is_test_path
from ..schedule import DAYS_AND_DIALECTS, cron_schedule_or_never
from ..sources.python.django_settings import is_settings_module
from ..sources.python.index import entry_code, resolve_function, task_function
from ..sources.python.semantics import Where
from ..sources.python.symbols import Value
from ..timespec import ScheduleError
from .context import Step

_DJANGO_CRON_SETTING = re.compile(
    r"^(DJANGO_CRON_LOCK_BACKEND|DJANGO_CRON_LOCK_TIME)\s*=\s*(.+?)\s*(?:#.*)?$", re.M)
#: the settings that give every task of a Celery worker its hard time limit
_WORKER_TIME_LIMITS = ("CELERY_TASK_TIME_LIMIT", "CELERYD_TASK_TIME_LIMIT")
_WORKER_TIME_LIMIT_LINE = re.compile(rf"^[ \t]*(?:{'|'.join(_WORKER_TIME_LIMITS)})\s*[:=]",
                                     re.MULTILINE)
#: django-cron's default: a cache key that lives a day (``DJANGO_CRON_LOCK_TIME``)
DJANGO_CRON_LOCK_TIME = 24 * 3600


def eval_number(text: str) -> float:
    """``3600``, ``60 * 60``, ``2*3600`` — the arithmetic settings files use for times."""
    value = 1.0
    for factor in text.replace(" ", "").split("*"):
        value *= float(factor)
    return value


class PythonAssembly(Step):
    """Locks and hazards of every module the prefilter keeps or that calls a lock
    abstraction of the project's, and the jobs of in-process schedulers (Celery beat,
    APScheduler, Huey, django-crontab, django-cron)."""

    _cron_settings: dict[str, tuple[str, Span]] | None = None

    def run(self) -> None:
        python = self.tree.python
        for rel in sorted(python.files):
            if python.analysed(rel):
                self.guarded(python.files[rel].display, partial(self._python, rel))
        self.project.parse_errors.extend(python.errors)
        self.project.internal_errors.extend(python.internal_errors)

    def _scheduled_call(self, rel: str, call) -> None:
        never = None
        if call.refused:  # the library raises on the schedule as written
            schedule = Schedule(text=call.text, kind="templated")
            never = NeverRuns("refused",
                              f"{call.refused} (`{' '.join(call.text.split())[:80]}`)")
        elif call.cron:
            dialect = call.source if call.source in DAYS_AND_DIALECTS else None
            try:
                schedule, never = cron_schedule_or_never(call.text or call.cron, call.cron,
                                                         dialect=dialect)
            except ScheduleError as exc:
                self.project.parse_errors.append(ParseError(call.span, f"invalid schedule: {exc}"))
                return
        elif call.interval:
            schedule = Schedule(text=call.text, kind="interval",
                                min_interval_seconds=int(call.interval),
                                runs_per_day=round(86400 / call.interval, 4))
        else:
            schedule = Schedule(text=call.text, kind="templated")
        index = self.tree.python
        found = resolve_function(index, rel, call.target)
        if found is None and call.source == "celery":
            found = task_function(index, call.target)
        if found is None and call.source != "celery":
            return  # a lambda or a builtin: nothing of the project's to analyse
        entry = None
        bound: tuple[float, Span] | None = None
        if found is not None:
            module_rel, function = found
            code = entry_code(index, module_rel, "function", function)
            if code.parsed:
                entry = Entry(index.files[module_rel].display, "function", function, code.locks,
                              facts=code.facts, files=code.files)
            if call.source == "celery":
                bound = self._task_time_limit(module_rel, function)
        if call.source == "celery" and bound is None:
            bound = self._worker_time_limit
        identity = f"{entry.path}::{entry.function}" if entry else call.target
        target = Target((call.target,), call.span, True, entry, identity)
        text = " ".join((call.text or call.target).split())
        locks = (self._django_cron_lock(call),) if call.source == "django-cron" and \
            dict(call.options).get("ALLOW_PARALLEL_RUNS") != "True" else ()
        self.project.jobs.append(Job(
            id=f"{call.source}:{call.span.path}:{call.span.line}", source=call.source,
            span=call.span, schedule=replace(schedule, text=text[:80]), command=call.target,
            targets=(target,), locks=locks, options=call.options, never_runs=never,
            runtime_bound_seconds=bound[0] if bound else None,
            runtime_bound_span=bound[1] if bound else None))

    def _task_time_limit(self, rel: str, function: str) -> tuple[float, Span] | None:
        """The hard time limit a Celery task is declared with (``time_limit=`` of its
        ``@app.task``/``@shared_task``), and where: the worker kills a run that outlasts
        it."""
        index = self.tree.python
        facts = index.module(rel)
        unit = facts.units.get(function) if facts is not None else None
        if unit is None or unit.time_limit is None:
            return None
        value, span = unit.time_limit
        seconds = index.semantics.number(value, Where(rel, function))
        return (seconds, span) if seconds is not None and seconds > 0 else None

    @cached_property
    def _worker_time_limit(self) -> tuple[float, Span] | None:
        """The hard time limit every task of the project's Celery workers gets, and where:
        from Django's settings (``CELERY_TASK_TIME_LIMIT``, or Celery 3's
        ``CELERYD_TASK_TIME_LIMIT``; at the top of a settings module or in a settings
        class) or the app's ``conf`` in a module read as code; only when they agree on
        one value."""
        index = self.tree.python
        found: dict[float, Span] = {}
        for rel, f in sorted(index.files.items()):
            written: list[tuple[Value, Span | None]] = []
            if is_settings_module(rel):
                facts = index.known(rel)
                written = [(value, None) for value in self._settings_time_limits(facts)] \
                    if facts is not None else []
            elif index.might_lock(rel):  # (a module the prefilter keeps: parsed already)
                facts = index.module(rel)
                if facts is not None and facts.worker_time_limit is not None:
                    written = [facts.worker_time_limit]
            for value, span in written:
                seconds = index.semantics.number(value, Where(rel))
                if seconds is not None and seconds > 0 and seconds not in found:
                    found[seconds] = span or self._setting_line(f)
        return next(iter(found.items())) if len(found) == 1 else None

    def _setting_line(self, f) -> Span:
        """Where a settings module sets the workers' time limit (its values carry no
        position of their own)."""
        text = self.peek(f) or ""
        at = _WORKER_TIME_LIMIT_LINE.search(text)
        return Span(f.display, text.count("\n", 0, at.start()) + 1 if at else 1)

    @staticmethod
    def _settings_time_limits(facts) -> list[Value]:
        """The values a settings module gives the workers' time limit: at its top level or
        in a settings class."""
        return [value for name in _WORKER_TIME_LIMITS
                for value in [facts.bindings.get(name)] if value is not None] + [
            value for info in facts.classes.values() for name in _WORKER_TIME_LIMITS
            for value, _ in info.attrs.get(name, ())]

    def _django_cron_lock(self, call) -> Lock:
        """The lock ``runcrons`` takes around each job class: a cache key (the default
        backend; cluster-wide when the cache is) or a file lock, per the settings."""
        settings = self._django_cron_settings()
        backend = settings.get("DJANGO_CRON_LOCK_BACKEND", ("CacheLock", None))
        own = dict(call.options).get("DJANGO_CRON_LOCK_TIME")
        ttl_text, ttl_span = (own, call.span) if own else \
            settings.get("DJANGO_CRON_LOCK_TIME", (None, None))
        try:
            ttl = float(eval_number(ttl_text)) if ttl_text else DJANGO_CRON_LOCK_TIME
        except ValueError:
            ttl = None
        if "FileLock" in backend[0]:
            return Lock(kind="flock", scope="host", span=call.span, api="django_cron FileLock",
                        stale_handling="kernel")
        if "DatabaseLock" in backend[0]:
            return Lock(kind="db-row-lock", scope="cluster", span=call.span,
                        api="django_cron DatabaseLock", stale_handling="none")
        return Lock(kind="cache-lock", scope="cluster", span=call.span, api="django_cron CacheLock",
                    key=call.target.rsplit(".", 1)[0], ttl_seconds=ttl, stale_handling="ttl",
                    atomic=False, ttl_span=ttl_span)

    def _django_cron_settings(self) -> dict[str, tuple[str, Span]]:
        if self._cron_settings is None:
            self._cron_settings = {}
            for rel, f in sorted(self.tree.python.files.items()):
                name = rel.rsplit("/", 1)[-1]
                if not ("settings" in rel.split("/")[:-1] or name.startswith("settings")):
                    continue
                text = self.peek(f) or ""
                for m in _DJANGO_CRON_SETTING.finditer(text):
                    line = text.count("\n", 0, m.start()) + 1
                    self._cron_settings.setdefault(m.group(1), (m.group(2).strip("'\""),
                                                                Span(f.display, line)))
        return self._cron_settings

    def _python(self, rel: str) -> None:
        module = self.tree.python.module(rel)
        if module is None:
            return
        if not is_test_path(rel):  # test code declares schedules to test the scheduler
            for call in module.schedules:
                self.guarded(module.path, partial(self._scheduled_call, rel, call))
        for unit in module.units.values():
            locks, facts = self.tree.python.unit_code(rel, unit)
            self.project.code_locks.extend(locks)
            self.project.code_facts.extend(facts)

