"""In-process schedulers declared in Python: Celery beat, APScheduler, ``schedule``, Huey,
django-crontab's ``CRONJOBS`` and django-cron's ``CronJobBase`` classes. Each entry becomes a scheduled job linked to the function it
runs, so the lock and idempotency analysis applies to it."""
from __future__ import annotations

import math
import re

import libcst as cst

from .facts import ScheduledCall
from .values import argument

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
        if type(node) is cst.Assign and type(node.value) in (cst.Dict, cst.List):
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


def worker_time_limit(an, nodes) -> cst.BaseExpression | None:
    """The expression a module sets a Celery app's ``task_time_limit`` to, through its
    ``conf``: ``app.conf.task_time_limit = 600`` or ``app.conf.update(task_time_limit=600)``
    (the last one written)."""
    found = None
    for node in nodes:
        if type(node) is cst.Assign and len(node.targets) == 1 and \
                an.code(node.targets[0].target).endswith("conf.task_time_limit"):
            found = node.value
        elif type(node) is cst.Call and isinstance(node.func, cst.Attribute) and \
                node.func.attr.value == "update" and an.code(node.func.value).endswith("conf"):
            found = argument(node, "task_time_limit", None) or found
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
    cron, interval, text, refused = _celery_schedule(an, entry["schedule"])
    return [ScheduledCall("celery", an.span(at), task, cron, interval, text, refused=refused)]


def _celery_schedule(an, node):
    """(cron, interval, text, refused) of a beat entry's schedule: ``crontab(...)`` read as
    Celery reads it, a number of seconds or a timedelta."""
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and \
            node.func.attr.value == "from_string" and \
            _is_crontab(an, node.func.value) and node.args:
        text = an.eval.string(node.args[0].value)
        if text is None:
            return None, None, an.code(node), None
        fields = text.split(" ")  # crontab.from_string: minute hour day month weekday
        if len(fields) != 5:
            return None, None, an.code(node), \
                f"Celery's crontab.from_string() needs 5 fields split by single spaces " \
                f"(found {len(fields)})"
        values = dict(zip(("minute", "hour", "day_of_month", "month_of_year", "day_of_week"),
                          ((_PyValue.TEXT, f) for f in fields)))
        cron, refused = _celery_crontab(values)
        return cron, None, an.code(node), refused
    if isinstance(node, cst.Call) and _is_crontab(an, node.func):
        values = {}
        for key, pos in _CELERY_ARGS:
            value = _py_value(an, argument(node, key, pos))
            if value is None:
                return None, None, an.code(node), None  # computed at run time: unknown
            values[key] = value
        cron, refused = _celery_crontab(values)
        return cron, None, an.code(node), refused
    seconds = an.eval.number(node)
    if seconds is not None and (not math.isfinite(seconds) or seconds >= _TIMEDELTA_SECONDS):
        return None, None, an.code(node), "Celery raises: the interval overflows a timedelta"
    return None, seconds if seconds is None or seconds > 0 else None, an.code(node), None


def _is_crontab(an, func) -> bool:
    return bool(an.qualified(func) & _CELERY_CRONTAB) or an.code(func) == "crontab"


#: crontab()'s parameters and their positions
_CELERY_ARGS = (("minute", 0), ("hour", 1), ("day_of_week", 2), ("day_of_month", 3),
                ("month_of_year", 4))


class _PyValue:
    """The kinds of Python value a schedule field is given as."""
    TEXT, INT, FLOAT, NUMBERS, ABSENT = "text", "int", "float", "numbers", "absent"


def _py_value(an, node):
    """(kind, value) of a field argument as written — absent, a string, an int, a float, a
    collection of ints (list, tuple, set, ``range(...)``) — or None when it is computed."""
    if node is None or an.eval.is_none(node):
        return (_PyValue.ABSENT, None)
    text = an.eval.string(node)
    if text is not None:
        return (_PyValue.TEXT, text)
    if isinstance(node, (cst.List, cst.Tuple, cst.Set)):
        items = [_whole(an.eval.number(e.value)) if not isinstance(e, cst.StarredElement)
                 else None for e in node.elements]
        if any(v is None for v in items):
            return None
        return (_PyValue.NUMBERS, [v for v in items if v is not None])
    if isinstance(node, cst.Call) and an.code(node.func) == "range" and 1 <= len(node.args) <= 3:
        bounds = [_whole(an.eval.number(a.value)) for a in node.args]
        if any(v is None for v in bounds) or bounds[-1] == 0 and len(bounds) == 3:
            return None
        # (no field holds more than 60 values: 61 of a range hold one out of bounds)
        return (_PyValue.NUMBERS, list(range(*(v for v in bounds if v is not None))[:61]))
    number = an.eval.number(node)
    if number is None:
        return None
    literal_float = isinstance(node, cst.Float) or (
        isinstance(node, cst.UnaryOperation) and isinstance(node.expression, cst.Float))
    if literal_float or not math.isfinite(number) or number != int(number):
        return (_PyValue.FLOAT, number)
    return (_PyValue.INT, int(number))


def _whole(value: float | None) -> int | None:
    """A whole number, or None (not a number, not finite, a fraction)."""
    if value is None or not math.isfinite(value) or value != int(value):
        return None
    return int(value)


def _number(text: str) -> int:
    """``int(text)`` as the libraries call it: a string Python refuses (more digits than
    it converts) makes them raise."""
    try:
        return int(text)
    except ValueError:
        raise _Refused(f"{text[:20]!r} is not a number") from None


class _Refused(Exception):
    """The library raises on this schedule: the scheduler never runs it."""


# -- Celery's crontab(): celery.schedules.crontab_parser, read as the library reads it -----

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_SUNDAY_FIRST = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
#: the most days each month has (February: 29), as crontab() checks a date can come
_MONTH_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_CELERY_RANGE_STEPS = re.compile(r"(\w+?)-(\w+)/(\w+)?")
_CELERY_RANGE = re.compile(r"(\w+?)-(\w+)")
_CELERY_STAR_STEPS = re.compile(r"\*/(\w+)?")
_CELERY_STAR = re.compile(r"^\*$")
#: field -> (how many values, the smallest)
_CELERY_SIZES = {"minute": (60, 0), "hour": (24, 0), "day_of_week": (7, 0),
                 "day_of_month": (31, 1), "month_of_year": (12, 1)}


def _celery_crontab(values) -> tuple[str | None, str | None]:
    """(the five-field expression, None) of crontab()'s arguments, or (None, why) when
    crontab() raises on them. Day-of-month and day-of-week must both match in Celery (the
    schedule's dialect says so); the weekdays count from Sunday = 0, as in cron."""
    sets = {}
    try:
        for key in ("hour", "minute", "day_of_week", "day_of_month", "month_of_year"):
            size, low = _CELERY_SIZES[key]
            sets[key] = _celery_field(key, values[key], size, low)
    except _Refused as exc:
        return None, f"Celery's crontab() raises on {key}: {exc}"
    if not any(day <= _MONTH_DAYS[month - 1] for month in sets["month_of_year"]
               for day in sets["day_of_month"]):
        return None, "Celery's crontab() raises: that day of the month never comes in " \
            "those months"
    return " ".join((_cron_text(sets["minute"], 0, 59), _cron_text(sets["hour"], 0, 23),
                     _cron_text(sets["day_of_month"], 1, 31),
                     _cron_text(sets["month_of_year"], 1, 12),
                     _cron_text(sets["day_of_week"], 0, 6, _SUNDAY_FIRST))), None


def _celery_field(key: str, value, size: int, low: int) -> set[int]:
    kind, raw = value
    if kind == _PyValue.ABSENT:
        found = set(range(low, low + size))
    elif kind == _PyValue.INT:
        found = {raw}
    elif kind == _PyValue.TEXT:
        found = set()
        for part in raw.split(","):
            if not part:
                raise _Refused("an empty part")
            found |= set(_celery_part(part, size, low))
    elif kind == _PyValue.NUMBERS:
        found = set(raw)
    else:
        raise _Refused(f"a {kind} value")
    bad = sorted(n for n in found if not low <= n < low + size)
    if bad:
        raise _Refused(f"{bad[0]} is not between {low} and {low + size - 1}")
    return found


def _celery_part(part: str, size: int, low: int) -> list[int]:
    if m := _CELERY_RANGE_STEPS.match(part):
        if not m.group(3):
            raise _Refused("a step with no number")
        return _celery_range(m.group(1), m.group(2), size, low)[::_celery_int(m.group(3))]
    if m := _CELERY_RANGE.match(part):
        return _celery_range(m.group(1), m.group(2), size, low)
    if m := _CELERY_STAR_STEPS.match(part):
        if not m.group(1):
            raise _Refused("a step with no number")
        return list(range(low, low + size))[::_celery_int(m.group(1))]
    if _CELERY_STAR.match(part):
        return list(range(low, low + size))
    return _celery_range(part, None, size, low)


def _celery_int(text: str) -> int:
    try:
        step = int(text)
    except ValueError:
        raise _Refused(f"step {text!r} is not a number") from None
    if step == 0:
        raise _Refused("a step of 0")
    return step


def _celery_range(first: str, last: str | None, size: int, low: int) -> list[int]:
    start = _celery_number(first, size, low)
    if last is None:
        return [start]
    end = _celery_number(last, size, low)
    if end < start:  # Celery wraps a descending range around the field's end
        return list(range(start, low + size)) + list(range(low, end + 1))
    return list(range(start, end + 1))


def _celery_number(text: str, size: int, low: int) -> int:
    """A number or a name: Celery tries a month's name, then a weekday's, by the first three
    letters, in every field."""
    if text.startswith("-"):
        raise _Refused("a negative number")
    try:
        number = int(text)
    except ValueError:
        short = text[:3].lower()
        if short in _MONTHS:
            number = _MONTHS.index(short) + 1
        elif short in _SUNDAY_FIRST:
            number = _SUNDAY_FIRST.index(short)
        else:
            raise _Refused(f"{text!r} is not a number or a name") from None
    if not low <= number < low + size:
        raise _Refused(f"{number} is not between {low} and {low + size - 1}")
    return number


def _cron_text(values: set[int], low: int, high: int, names: tuple[str, ...] = ()) -> str:
    """A set of values as a cron field: ``*``, ``*/15``, ``1-5``, ``mon-fri``, ``0,30``."""
    if values == set(range(low, high + 1)):
        return "*"
    if not names and len(values) > 2:
        for step in range(2, high - low + 1):
            if values == set(range(low, high + 1, step)):
                return f"*/{step}"
    ordered = sorted(values)
    runs: list[list[int]] = []
    for value in ordered:
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    shown = (lambda v: names[v]) if names else str
    return ",".join(f"{shown(r[0])}-{shown(r[-1])}" if len(r) > 2 else
                    ",".join(shown(v) for v in r) for r in runs)


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
        cron, interval, text, refused = _celery_schedule(an, call.args[0].value)
        sig = call.args[1].value
        target = an.code(sig.func.value) if isinstance(sig, cst.Call) and \
            isinstance(sig.func, cst.Attribute) and sig.func.attr.value in ("s", "si") else an.code(sig)
        return [ScheduledCall("celery", an.span(call), target, cron, interval, text,
                              refused=refused)]
    return []


_APS_OPTIONS = ("max_instances", "coalesce", "misfire_grace_time")
#: CronTrigger's fields, most significant first; the value each takes when it is less
#: significant than the last one given (more significant ones are "*"); their bounds
_APS_FIELDS = ("year", "month", "day", "week", "day_of_week", "hour", "minute", "second")
_APS_DEFAULTS = {"year": "*", "month": "1", "day": "1", "week": "*", "day_of_week": "*",
                 "hour": "0", "minute": "0", "second": "0"}
_APS_MIN = {"year": 1970, "month": 1, "day": 1, "week": 1, "day_of_week": 0, "hour": 0,
            "minute": 0, "second": 0}
_APS_MAX = {"year": 9999, "month": 12, "day": 31, "week": 53, "day_of_week": 6, "hour": 23,
            "minute": 59, "second": 59}
#: apscheduler.triggers.cron.expressions, as the library matches them (``match``: a name
#: expression reads a prefix, ``mon-fri/2`` is ``mon-fri``)
_APS_SEPARATOR = re.compile(" *, *")
_APS_ALL = re.compile(r"\*(?:/(?P<step>\d+))?$")
_APS_RANGE = re.compile(r"(?P<first>\d+)(?:-(?P<last>\d+))?(?:/(?P<step>\d+))?$")
_APS_NAMES = re.compile(r"(?P<first>[a-z]+)(?:-(?P<last>[a-z]+))?", re.I)
_APS_POSITION = re.compile(r"(?P<option>1st|2nd|3rd|4th|5th|last) +(?P<day>(?:\d+|\w+))", re.I)
_APS_LAST = re.compile(r"last", re.I)
_APS_POSITIONS = ("1st", "2nd", "3rd", "4th", "5th", "last")
#: the longest interval a timedelta holds (999999999 days)
_TIMEDELTA_SECONDS = 999999999 * 86400
#: IntervalTrigger's parameters, in their order
_APS_INTERVAL = (("weeks", 604800), ("days", 86400), ("hours", 3600), ("minutes", 60),
                 ("seconds", 1))


def _apscheduler(an, call, target, trigger, where) -> list[ScheduledCall]:
    if target is None:
        return []
    options = tuple((key, an.code(value)) for key in _APS_OPTIONS
                    if (value := argument(call, key, None)) is not None)
    name = an.eval.string(target) or an.code(target)
    kind = an.eval.string(trigger) if trigger is not None else None
    fields: dict[str, object] | None = None
    if kind in ("cron", "interval"):
        names = _APS_FIELDS if kind == "cron" else tuple(n for n, _ in _APS_INTERVAL)
        fields = {key: _py_value(an, argument(call, key, None)) for key in names}
    elif isinstance(trigger, cst.Call):
        kind, fields = _aps_trigger_object(an, trigger)
    if kind == "cron" and fields is not None:
        cron, interval, refused = _aps_cron(fields)
    elif kind == "interval" and fields is not None:
        cron, (interval, refused) = None, _aps_interval(fields)
    elif kind in ("cron", "interval"):  # a crontab text computed at run time
        cron, interval, refused = None, None, None
    else:
        return []
    return [ScheduledCall("apscheduler", an.span(where), name, cron, interval, an.code(call),
                          options, refused)]


def _aps_trigger_object(an, trigger: cst.Call) -> tuple[str | None, dict | None]:
    """``CronTrigger(...)``, ``CronTrigger.from_crontab("...")``, ``IntervalTrigger(...)``:
    (kind, {field: (kind, value)}); the fields are None when they are computed."""
    func = trigger.func
    if isinstance(func, cst.Attribute) and func.attr.value == "from_crontab" and \
            an.code(func.value).endswith("CronTrigger"):
        text = an.eval.string(argument(trigger, "expr", 0))
        if text is None:
            return "cron", None
        values = text.split()
        if len(values) != 5:
            return "cron", {"from_crontab": (_PyValue.TEXT, text)}
        return "cron", {key: (_PyValue.TEXT, value) for key, value in
                        zip(("minute", "hour", "day", "month", "day_of_week"), values)}
    callee = an.code(func)
    if callee.endswith("CronTrigger") or \
            "apscheduler.triggers.cron.CronTrigger" in an.qualified(func):
        names: tuple[str, ...] = _APS_FIELDS
        kind = "cron"
    elif callee.endswith("IntervalTrigger") or \
            "apscheduler.triggers.interval.IntervalTrigger" in an.qualified(func):
        names, kind = tuple(n for n, _ in _APS_INTERVAL), "interval"
    else:
        return None, None
    fields = {key: _py_value(an, argument(trigger, key, i)) for i, key in enumerate(names)}
    return kind, (None if any(v is None for v in fields.values()) else fields)


def _aps_interval(fields) -> tuple[float | None, str | None]:
    """IntervalTrigger's period in seconds (a zero interval is one second there)."""
    if any(v is None for v in fields.values()):
        return None, None
    total = 0.0
    for key, size in _APS_INTERVAL:
        kind, value = fields[key]
        if kind in (_PyValue.INT, _PyValue.FLOAT):
            total += value * size
        elif kind != _PyValue.ABSENT:
            return None, f"APScheduler's interval trigger raises on {key}: a {kind} value"
    if not math.isfinite(total) or abs(total) >= _TIMEDELTA_SECONDS:
        return None, "APScheduler's interval trigger raises: the interval overflows a timedelta"
    if total < 0:
        return None, None
    return (total or 1.0), None


def _aps_cron(fields) -> tuple[str | None, float | None, str | None]:
    """(five-field expression, interval, refused) of CronTrigger's fields as APScheduler 3
    reads them: the weekday counts from Monday = 0; the day field also takes ``last``,
    ``2nd wed``, ``last fri``; day and weekday must both match. What a five-field schedule
    cannot hold (a restricted year or ISO week, several seconds that are not one step on
    every minute) gives neither expression nor interval: the timing is not known."""
    if any(v is None for v in fields.values()):
        return None, None, None
    if "from_crontab" in fields:
        return None, None, "APScheduler's CronTrigger.from_crontab() raises: it needs 5 fields"
    given = [key for key in _APS_FIELDS if fields.get(key, (_PyValue.ABSENT, None))[0] !=
             _PyValue.ABSENT]
    parsed = {}
    try:
        for key in _APS_FIELDS:
            if key in given:
                kind, value = fields[key]
                if kind in (_PyValue.NUMBERS, _PyValue.FLOAT):
                    raise _Refused(f"{value!r} is no expression")
                text = str(value).strip()
            elif given and _APS_FIELDS.index(key) > _APS_FIELDS.index(given[-1]):
                text = _APS_DEFAULTS[key]
            else:
                text = "*"
            parsed[key] = [_aps_expression(key, e) for e in _APS_SEPARATOR.split(text)]
    except _Refused as exc:
        return None, None, f"APScheduler's CronTrigger raises on {key}: {exc}"
    sets = {key: set().union(*(e for e in parsed[key] if isinstance(e, set))) for key in parsed}
    every = {key: sets[key] == set(range(_APS_MIN[key], _APS_MAX[key] + 1)) for key in sets}
    if not every["year"] or not every["week"]:
        return None, None, None
    seconds = sorted(sets["second"])
    if len(seconds) > 1:
        steps = {(b - a) % 60 for a, b in zip(seconds, seconds[1:] + seconds[:1])}
        alone = all(every[k] for k in ("month", "day", "day_of_week", "hour", "minute"))
        return (None, float(steps.pop()), None) if alone and len(steps) == 1 else \
            (None, None, None)
    dow = {(d + 1) % 7 for d in sets["day_of_week"]}  # cron's numbering: Sunday = 0
    day_items = parsed["day"]
    positions = [e for e in day_items if isinstance(e, tuple)]
    if positions:
        if len(positions) != len(day_items):
            return None, None, None  # days and weekday positions mixed: not one cron field
        kept = sorted({p for p in positions if (p[1] + 1) % 7 in dow})
        if not kept:
            return None, None, None
        dom_text = "*"
        dow_text = ",".join(f"{(wd + 1) % 7}{'L' if n == 5 else f'#{n + 1}'}" for n, wd in kept)
    else:
        last = "L" in day_items
        dom_text = "*" if every["day"] else ",".join(
            t for t in (_cron_text(sets["day"], 1, 31) if sets["day"] else "",
                        "L" if last else "") if t)
        dow_text = _cron_text(dow, 0, 6, _SUNDAY_FIRST)
    return " ".join((_cron_text(sets["minute"], 0, 59), _cron_text(sets["hour"], 0, 23),
                     dom_text, _cron_text(sets["month"], 1, 12), dow_text)), None, None


def _aps_expression(key: str, text: str):
    """One expression of a CronTrigger field: a set of values, "L" (the month's last day)
    or (position, weekday from Monday = 0) for ``2nd wed``/``last fri``."""
    low, high = _APS_MIN[key], _APS_MAX[key]
    if m := _APS_ALL.match(text):
        step = _number(m.group("step")) if m.group("step") is not None else None
        if step == 0:
            raise _Refused("a step of 0")
        if step and step > high - low:
            raise _Refused(f"the step {step} is larger than the field's range")
        return set(range(low, high + 1, step or 1))
    if m := _APS_RANGE.match(text):
        first = _number(m.group("first"))
        last = _number(m.group("last")) if m.group("last") is not None else None
        step = _number(m.group("step")) if m.group("step") is not None else None
        return _aps_range(key, first, last, step)
    if key in ("month", "day_of_week") and (m := _APS_NAMES.match(text)):
        names = _MONTHS if key == "month" else _APS_DAYS
        first_name, last_name = m.group("first").lower(), (m.group("last") or "").lower()
        if first_name not in names or (last_name and last_name not in names):
            raise _Refused(f"{text!r} is no {key.replace('_', ' ')} name")
        offset = 1 if key == "month" else 0
        return _aps_range(key, names.index(first_name) + offset,
                          names.index(last_name) + offset if last_name else None, None)
    if key == "day" and (m := _APS_POSITION.match(text)):
        option, day = m.group("option").lower(), m.group("day").lower()
        if day not in _APS_DAYS:
            raise _Refused(f"{day!r} is no weekday name")
        return (_APS_POSITIONS.index(option), _APS_DAYS.index(day))
    if key == "day" and _APS_LAST.match(text):
        return "L"
    raise _Refused(f"{text!r} is no expression for {key}")


def _aps_range(key: str, first: int, last: int | None, step: int | None) -> set[int]:
    low, high = _APS_MIN[key], _APS_MAX[key]
    if step == 0:
        raise _Refused("a step of 0")
    if last is None and step is None:
        last = first
    if last is not None and first > last:
        raise _Refused(f"the range {first}-{last} runs backwards")
    if step and step > high - low:
        raise _Refused(f"the step {step} is larger than the field's range")
    if first < low or (last is not None and last > high):
        raise _Refused(f"a value outside {low}-{high}")
    if step and step > (last or high) - first:
        raise _Refused(f"the step {step} is larger than the range")
    return set(range(first, (high if last is None else last) + 1, step or 1))


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
            cron, text, refused = _huey_schedule(an, argument(d, "validate_datetime", 0))
            out.append(ScheduledCall("huey", an.span(func), an.function_name(func), cron,
                                     None, text, refused=refused))
    return out


# -- Huey's crontab(): huey.api.crontab, read as huey 2.x/3.x reads it -----------------------

#: crontab()'s parameters, in their order, and each field's values
_HUEY_ARGS = ("minute", "hour", "day", "month", "day_of_week")
_HUEY_VALUES = {"minute": range(60), "hour": range(24), "day": range(1, 32),
                "month": range(1, 13), "day_of_week": range(8)}  # (7 is Sunday too)
_HUEY_RANGE = re.compile(r"(\d+)-(\d+)(?:/(\d+))?")
_HUEY_EVERY = re.compile(r"\*/(\d+)")


def _huey_schedule(an, node) -> tuple[str | None, str, str | None]:
    """(cron, text, refused) of the test a Huey periodic task is given: ``crontab(...)``
    (its own dialect: numbers only, ``*/n`` nowhere in the weekday, every field must match);
    anything else is a function jobsafe does not read (unknown timing)."""
    text = an.code(node) if node is not None else ""
    if not isinstance(node, cst.Call) or not (
            {"huey.crontab", "huey.api.crontab"} & an.qualified(node.func) or
            an.code(node.func).rsplit(".", 1)[-1] == "crontab"):
        return None, text, None
    values = {key: _py_value(an, argument(node, key, i)) for i, key in enumerate(_HUEY_ARGS)}
    strict = argument(node, "strict", 5)
    if any(v is None for v in values.values()) or \
            (strict is not None and not (an.eval.truthy(strict) or an.eval.falsy(strict))):
        return None, text, None
    sets = {}
    try:
        for key in ("month", "day", "day_of_week", "hour", "minute"):
            sets[key] = _huey_field(key, values[key], strict is not None and
                                    an.eval.truthy(strict))
    except _Refused as exc:
        return None, text, f"Huey's crontab() raises on {key}: {exc}"
    return " ".join((_cron_text(sets["minute"], 0, 59), _cron_text(sets["hour"], 0, 23),
                     _cron_text(sets["day"], 1, 31), _cron_text(sets["month"], 1, 12),
                     _cron_text(sets["day_of_week"], 0, 6, _SUNDAY_FIRST))), text, None


def _huey_field(key: str, value, strict: bool) -> set[int]:
    kind, raw = value
    acceptable = _HUEY_VALUES[key]
    if kind == _PyValue.ABSENT:
        raw, kind = "*", _PyValue.TEXT
    if kind == _PyValue.INT:
        raw, kind = str(raw), _PyValue.TEXT
    if kind != _PyValue.TEXT:
        raise _Refused(f"a {kind} value is not a string")
    found: set[int] = set()
    for piece in raw.split(","):
        if piece == "*":
            found.update(acceptable)
        elif piece.isdigit():
            try:
                number = int(piece)
            except ValueError:
                raise _Refused(f"{piece!r} is not a number") from None
            if number not in acceptable:
                raise _Refused(f"{number} is not a valid input")
            found.add(number % 7 if key == "day_of_week" else number)
        elif m := _HUEY_RANGE.fullmatch(piece):
            low, high, step = _number(m.group(1)), _number(m.group(2)), \
                _number(m.group(3) or "1")
            if low not in acceptable or high not in acceptable:
                raise _Refused(f"{piece!r} is not a valid input")
            if step == 0:
                raise _Refused("a step of 0")
            top = 6 if key == "day_of_week" else acceptable[-1]
            values = list(range(low, high + 1)) if low <= high else \
                list(range(low, top + 1)) + list(range(acceptable[0], high + 1))
            found.update(v % 7 if key == "day_of_week" else v for v in values[::step])
        elif m := _HUEY_EVERY.fullmatch(piece):
            if key == "day_of_week":
                raise _Refused("*/n is not allowed in the day of the week")
            every = _number(m.group(1))
            if every == 0:
                raise _Refused("a step of 0")
            found.update(acceptable[::every])
        elif strict:
            raise _Refused(f"{piece!r} is not a valid input")
        # (otherwise Huey ignores a piece it does not read)
    if not found:
        raise _Refused(f"{raw!r} matches no values")
    return {v % 7 for v in found} if key == "day_of_week" else found  # ("*" holds 7)


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
