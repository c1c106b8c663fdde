"""Python modules: locks and hazards of all code, and jobs declared to in-process schedulers."""
from __future__ import annotations

from dataclasses import replace

from ..model import Entry, Job, ParseError, Schedule, Target
from ..schedule import ScheduleError, cron_schedule
from ..sources.python.index import entry_code, resolve_function
from . import is_test_path


class PythonSources:
    """Mixin of the Builder."""

    def _scheduled_call(self, rel: str, call) -> None:
        if call.cron:
            try:
                schedule = cron_schedule(call.text or call.cron, call.cron)
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
        if found is None and call.source != "celery":
            return  # a lambda or a builtin: nothing of the project's to analyse
        entry = None
        if found is not None:
            module_rel, function = found
            locks, hazards, parsed = entry_code(index, module_rel, "function", function)
            if parsed:
                entry = Entry(index.files[module_rel].display, "function", function, locks,
                              facts=hazards)
        identity = f"{entry.path}::{entry.function}" if entry else call.target
        target = Target((call.target,), call.span, True, entry, identity)
        text = " ".join((call.text or call.target).split())
        self.project.jobs.append(Job(
            id=f"{call.source}:{call.span.path}:{call.span.line}", source=call.source,
            span=call.span, schedule=replace(schedule, text=text[:80]), command=text,
            targets=(target,)))

    def _python(self, rel: str) -> None:
        module = self.tree.python.module(rel)
        if module is None:
            return
        if not is_test_path(rel):  # test code declares schedules to test the scheduler
            for call in module.schedules:
                self._guarded(module.path, lambda call=call: self._scheduled_call(rel, call))
        for unit in module.units.values():
            self.project.code_locks.extend(unit.locks)
            self.project.code_facts.extend(unit.facts)

