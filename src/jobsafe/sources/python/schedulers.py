"""In-process schedulers declared in Python: Celery beat, APScheduler, ``schedule``, Huey,
django-crontab's ``CRONJOBS`` and django-cron's ``CronJobBase`` classes. Each entry becomes a scheduled job linked to the function it
runs, so the lock and idempotency analysis applies to it."""
from __future__ import annotations

import re

import libcst as cst

from .facts import ScheduledCall
from .values import argument

#: words without which a module declares no schedule (the prefilter)
PREFILTER_TOKENS = (r"(?i)beat_schedule", "CELERYBEAT", "add_job", "scheduled_job",
                    r"every\(", "periodic_task", "CRONJOBS", "Scheduler", "CronJobBase",
                    "run_pending", "add_periodic_task",
                    # a scheduler made in another module, started here (its kind is the
                    # tree's to tell): ``from .extensions import scheduler; scheduler.start()``
                    r"sched\w*\.start\(",
                    # Celery beat entries in a dict of any name: {"x": {"task": …, "schedule": …}}
                    (r"[\"']task[\"']\s*:", r"[\"']schedule[\"']\s*:"))
_BEAT_NAMES = ("beat_schedule", "CELERYBEAT_SCHEDULE", "CELERY_BEAT_SCHEDULE")
_CELERY_CRONTAB = {"celery.schedules.crontab"}
_CLOCK = re.compile(r"^([01]?\d|2[0-3]):[0-5]\d(?::[0-5]\d)?$")  # "10:30", "02:30:00"
_HUEY_PERIODIC = {"periodic_task", "db_periodic_task"}
_SCHEDULE_NODES = frozenset({cst.Assign, cst.Call, cst.FunctionDef, cst.ClassDef})
_APS_DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_UNITS = {"second": 1, "seconds": 1, "minute": 60, "minutes": 60, "hour": 3600, "hours": 3600,
          "day": 86400, "days": 86400, "week": 604800, "weeks": 604800}


def scheduled_calls(an, nodes) -> list[ScheduledCall]:
    found: list[ScheduledCall] = []
    for node in nodes:
        if type(node) not in _SCHEDULE_NODES:  # exact types: see module._PREPASS_NODES
            continue
        if isinstance(node, cst.Assign) and isinstance(node.value, (cst.Dict, cst.List)):
            target = node.targets[0].target
            if isinstance(node.value, cst.Dict) and _beat_entries(an, node.value):
                # a beat schedule, whatever its name (PERIODIC_TASKS = {...} merged later)
                found += _beat_schedule(an, node.value)
            elif isinstance(target, cst.Subscript) and isinstance(node.value, cst.Dict) and \
                    an.code(target.value).endswith(_BEAT_NAMES):
                found += _beat_entry(an, node, node.value)  # conf.beat_schedule["x"] = {...}
            elif an.code(target) == "CRONJOBS" and isinstance(node.value, cst.List):
                found += _cronjobs(an, node.value)
        elif isinstance(node, cst.Call):
            found += _call(an, node)
        elif isinstance(node, cst.FunctionDef):
            found += _decorated(an, node)
        elif isinstance(node, cst.ClassDef) and any(
                "django_cron.CronJobBase" in an.qualified(base.value) or
                an.code(base.value).rsplit(".", 1)[-1] == "CronJobBase" for base in node.bases):
            found += _django_cron(an, node)
    return found


def _beat_entries(an, value: cst.Dict) -> bool:
    """A dict of Celery beat entries: some value is a dict with "task" and "schedule"."""
    return any(isinstance(e, cst.DictElement) and isinstance(e.value, cst.Dict) and
               {"task", "schedule"} <= {an.eval.string(k.key) for k in e.value.elements
                                        if isinstance(k, cst.DictElement)}
               for e in value.elements)


def _beat_schedule(an, value: cst.Dict) -> list[ScheduledCall]:
    out = []
    for element in value.elements:
        if isinstance(element, cst.DictElement) and isinstance(element.value, cst.Dict):
            out += _beat_entry(an, element, element.value)
    return out


def _beat_entry(an, at, value: cst.Dict) -> list[ScheduledCall]:
    """One beat entry ``{"task": ..., "schedule": ...}``, reported at ``at``."""
    entry = {an.eval.string(e.key): e.value for e in value.elements
             if isinstance(e, cst.DictElement)}
    task = an.eval.string(entry.get("task"))
    if not task or "schedule" not in entry:
        return []
    cron, interval, text = _celery_schedule(an, entry["schedule"])
    return [ScheduledCall("celery", an.span(at), task, cron, interval, text)]


def _celery_schedule(an, node):
    if isinstance(node, cst.Call) and (an.qualified(node.func) & _CELERY_CRONTAB or
                                       an.code(node.func) == "crontab"):
        fields = []
        for key, pos in (("minute", 0), ("hour", 1), ("day_of_month", 3), ("month_of_year", 4),
                         ("day_of_week", 2)):
            text = _field(an, argument(node, key, pos))
            if text is None:
                return None, None, an.code(node)  # computed at run time: when is unknown
            if key == "day_of_week":  # Celery reads a day's name by its first three letters
                text = re.sub(r"[A-Za-z]+", lambda m: m.group(0)[:3].lower(), text)
            fields.append(text.replace(" ", ""))
        return " ".join(fields), None, an.code(node)
    seconds = an.eval.number(node)
    return None, seconds, an.code(node)


def _field(an, value) -> str | None:
    """A cron field written in code: ``"*/15"``, ``5``, or absent (``*``); None when it is
    computed (``f"*/{INTERVAL}"`` of an imported constant)."""
    if value is None:
        return "*"
    text = an.eval.string(value)
    if text is None:
        number = an.eval.number(value)
        text = str(int(number)) if number is not None and number == int(number) else None
    return text


def _cronjobs(an, value: cst.List) -> list[ScheduledCall]:
    out = []
    for element in value.elements:
        item = element.value
        if isinstance(item, (cst.Tuple, cst.List)) and len(item.elements) >= 2:
            expr = an.eval.string(item.elements[0].value)
            target = an.eval.string(item.elements[1].value)
            if expr and target:
                out.append(ScheduledCall("cron", an.span(item), target.replace(":", "."),
                                         expr if not expr.startswith("@") else None, None, expr))
    return out


def _call(an, call: cst.Call) -> list[ScheduledCall]:
    func = call.func
    if not isinstance(func, cst.Attribute):
        return []
    method = func.attr.value
    if method == "add_job" and call.args:
        return _apscheduler(an, call, argument(call, "func", 0), argument(call, "trigger", 1), call)
    if method == "do" and call.args:
        return _schedule_lib(an, call)
    if method == "update" and an.code(func.value).endswith("conf"):  # app.conf.update(...)
        schedule = next((a.value for a in call.args if a.keyword is not None and
                         a.keyword.value.endswith(_BEAT_NAMES)), None)
        return _beat_schedule(an, schedule) if isinstance(schedule, cst.Dict) else []
    if method == "add_periodic_task" and len(call.args) >= 2:
        cron, interval, text = _celery_schedule(an, call.args[0].value)
        sig = call.args[1].value
        target = an.code(sig.func.value) if isinstance(sig, cst.Call) and \
            isinstance(sig.func, cst.Attribute) and sig.func.attr.value in ("s", "si") else an.code(sig)
        return [ScheduledCall("celery", an.span(call), target, cron, interval, text)]
    return []


_APS_OPTIONS = ("max_instances", "coalesce", "misfire_grace_time")
#: CronTrigger's fields, most significant first, and the values of those it fills in
_APS_FIELDS = ("year", "month", "day", "week", "day_of_week", "hour", "minute", "second")
_APS_DEFAULTS = {"month": "1", "day": "1", "day_of_week": "*", "hour": "0", "minute": "0"}


def _apscheduler(an, call, target, trigger, where) -> list[ScheduledCall]:
    if target is None:
        return []
    kind = an.eval.string(trigger) if trigger is not None else None
    options = tuple((key, an.code(value)) for key in _APS_OPTIONS
                    if (value := argument(call, key, None)) is not None)
    name = an.eval.string(target) or an.code(target)
    if kind == "cron":
        given = {key for key in _APS_FIELDS if argument(call, key, None) is not None}
        # APScheduler's CronTrigger: fields more significant than the least significant one
        # given default to "*", the less significant ones to their minimum (hour=3 is 03:00)
        last = max((_APS_FIELDS.index(key) for key in given), default=-1)
        fields = []
        for key in ("minute", "hour", "day", "month", "day_of_week"):
            if key not in given and _APS_FIELDS.index(key) > last:
                fields.append(_APS_DEFAULTS[key])
                continue
            text = _field(an, argument(call, key, None))
            if text is None:
                return [ScheduledCall("apscheduler", an.span(where), name, None, None,
                                      an.code(call), options)]
            if key == "day_of_week" and text.isdigit():
                text = _APS_DAYS[int(text) % 7]  # APScheduler counts from Monday
            fields.append(text)
        return [ScheduledCall("apscheduler", an.span(where), name, " ".join(fields), None,
                              an.code(call), options)]
    if kind == "interval":
        seconds = sum((an.eval.number(argument(call, unit, None)) or 0) * size
                      for unit, size in _UNITS.items() if unit.endswith("s"))
        return [ScheduledCall("apscheduler", an.span(where), name, None, seconds or None,
                              an.code(call), options)]
    return []


def _schedule_lib(an, call: cst.Call) -> list[ScheduledCall]:
    """``schedule.every(5).minutes.do(job)``, ``schedule.every().day.at("10:30").do(job)``."""
    if not isinstance(call.func, cst.Attribute):
        return []
    chain = call.func.value
    parts, count, at = [], 1.0, None
    node = chain
    while isinstance(node, (cst.Attribute, cst.Call)):
        if isinstance(node, cst.Attribute):
            parts.append(node.attr.value)
            node = node.value
        else:
            inner = node.func
            if isinstance(inner, cst.Attribute) and inner.attr.value == "every" and node.args:
                count = an.eval.number(node.args[0].value) or 1.0
            if isinstance(inner, cst.Attribute) and inner.attr.value == "at" and node.args:
                at = an.eval.string(node.args[0].value)
            node = inner
    if "every" not in parts and not (isinstance(node, cst.Name) and node.value == "every"):
        return []
    target = an.code(call.args[0].value)
    unit = next((p for p in parts if p in _UNITS), None)
    if at and unit in ("day", "days") and count == 1 and _CLOCK.match(at):
        hour, minute = at.split(":")[:2]
        return [ScheduledCall("schedule", an.span(call), target, f"{int(minute)} {int(hour)} * * *",
                              None, an.code(call))]
    if unit is None:
        return []
    return [ScheduledCall("schedule", an.span(call), target, None, count * _UNITS[unit],
                          an.code(call))]


def _decorated(an, func: cst.FunctionDef) -> list[ScheduledCall]:
    out = []
    for decorator in func.decorators:
        d = decorator.decorator
        if not isinstance(d, cst.Call) or not isinstance(d.func, cst.Attribute):
            continue
        method = d.func.attr.value
        # the unit's name: a task defined inside a registration function is outer.inner
        if method == "scheduled_job":
            out += _apscheduler(an, d, cst.Name(an.function_name(func)), argument(d, "trigger", 0),
                                func)
        elif method in _HUEY_PERIODIC and d.args:
            cron, interval, text = _celery_schedule(an, d.args[0].value)
            out.append(ScheduledCall("huey", an.span(func), an.function_name(func), cron,
                                     interval, text))
    return out


_DJANGO_CRON_OPTIONS = ("ALLOW_PARALLEL_RUNS", "DJANGO_CRON_LOCK_TIME")


def _django_cron(an, cls: cst.ClassDef) -> list[ScheduledCall]:
    """``class Sync(CronJobBase): RUN_EVERY_MINS = 5; schedule = Schedule(run_every_mins=
    RUN_EVERY_MINS)`` runs ``Sync.do`` (from ``manage.py runcrons``)."""
    attributes = {}
    for stmt in cls.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.Assign) and isinstance(small.targets[0].target, cst.Name):
                    attributes[small.targets[0].target.value] = small.value
    schedule = attributes.get("schedule")
    if not isinstance(schedule, cst.Call):
        return []

    def value(name):
        node = argument(schedule, name, None)
        return attributes.get(node.value, node) if isinstance(node, cst.Name) else node

    options = tuple((key, an.code(attributes[key])) for key in _DJANGO_CRON_OPTIONS
                    if key in attributes)
    target, span, text = f"{cls.name.value}.do", an.span(cls), an.code(schedule)
    minutes = an.eval.number(value("run_every_mins"))
    if minutes:
        return [ScheduledCall("django-cron", span, target, None, minutes * 60, text, options)]
    times = value("run_at_times")
    clock = sorted({an.eval.string(e.value) or "" for e in times.elements}) \
        if isinstance(times, (cst.List, cst.Tuple)) else []
    if clock and all(_CLOCK.match(t) for t in clock):
        hours = sorted({int(t.split(":")[0]) for t in clock})
        minutes_set = sorted({int(t.split(":")[1]) for t in clock})
        if len(minutes_set) == 1:  # the same minute: one cron expression says it exactly
            cron = f"{minutes_set[0]} {','.join(map(str, hours))} * * *"
            return [ScheduledCall("django-cron", span, target, cron, None, text, options)]
    return [ScheduledCall("django-cron", span, target, None, None, text, options)]
