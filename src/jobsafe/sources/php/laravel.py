"""Laravel's scheduler as a source: the tasks ``app/Console/Kernel.php``'s ``schedule()``,
``routes/console.php`` and ``bootstrap/app.php``'s ``withSchedule`` declare, each with the
cron expression its frequency methods build (the methods splice fields exactly as
``Illuminate\\Console\\Scheduling\\ManagesFrequencies`` does), and the cache store its
mutexes live in."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from tree_sitter import Node

from ...model import LockScope, Span
from .syntax import PhpFile, arguments, number_value, string_value, walk

#: ``Schedule::MONDAY`` ... as Laravel numbers them (cron's: Sunday is 0)
_DAYS = {"SUNDAY": 0, "MONDAY": 1, "TUESDAY": 2, "WEDNESDAY": 3, "THURSDAY": 4, "FRIDAY": 5,
         "SATURDAY": 6}
#: methods that set one field of the expression to a constant
_MINUTE_STEPS = {"everyMinute": "*", "everyTwoMinutes": "*/2", "everyThreeMinutes": "*/3",
                 "everyFourMinutes": "*/4", "everyFiveMinutes": "*/5",
                 "everyTenMinutes": "*/10", "everyFifteenMinutes": "*/15",
                 "everyThirtyMinutes": "*/30"}
_HOUR_STEPS = {"everyOddHour": "1-23/2", "everyEvenHour": "0-22/2", "everyTwoHours": "*/2",
               "everyThreeHours": "*/3", "everyFourHours": "*/4", "everySixHours": "*/6"}
_SECOND_STEPS = {"everySecond": 1, "everyTwoSeconds": 2, "everyFiveSeconds": 5,
                 "everyTenSeconds": 10, "everyFifteenSeconds": 15, "everyTwentySeconds": 20,
                 "everyThirtySeconds": 30}
_WEEKDAY_METHODS = {"mondays": "1", "tuesdays": "2", "wednesdays": "3", "thursdays": "4",
                    "fridays": "5", "saturdays": "6", "sundays": "0", "weekdays": "1-5",
                    "weekends": "6,0"}
#: a chained method whose name is computed (``->{$frequency}()``)
DYNAMIC = "{…}"
#: how a task is declared: ``$schedule->command(...)`` and the others
TASK_KINDS = ("command", "job", "call", "exec")
#: ``withoutOverlapping()``'s default expiry, in minutes (``Event::$expiresAt``)
MUTEX_MINUTES = 1440


class NotStatic(Exception):
    """A frequency argument that is not a literal: the schedule is set, but not known."""


@dataclass
class Task:
    """One scheduled task, as its statement declares it."""

    kind: str  # command | job | call | exec
    span: Span  # the statement's first line
    what: str  # the command line, job class or callable, as written
    target: Node | None  # the first argument
    chain: list[tuple[str, Node]]  # the methods chained on it, in call order
    #: the arguments after the first, as written (``['--only-db']``): they select work
    extra: str = ""
    #: the ``if`` branches the statement sits in, as (line of the if, "then" or "else"):
    #: tasks in two branches of one ``if`` never both run
    branches: tuple[tuple[int, str], ...] = ()
    expression: str | None = "* * * * *"  # None: set by a call jobsafe cannot evaluate
    repeat_seconds: int | None = None
    methods: list[str] = field(default_factory=list)  # frequency methods, as written

    def option(self, name: str) -> Node | None:
        return next((call for method, call in self.chain if method == name), None)

    def has(self, name: str) -> bool:
        return any(method == name for method, _ in self.chain)

    @property
    def days_only(self) -> bool:
        """Days set (``->weekends()``) and no time: Laravel runs it every minute of them."""
        frequency = [m for m, _ in self.chain if m in FREQUENCY_METHODS]
        return bool(frequency) and all(m in _WEEKDAY_METHODS or m == "days" for m in frequency)

    def label(self, php: PhpFile) -> str:
        """What the task is called: its ``->name()``/``->description()``, else what it
        runs on one line (a closure's first words)."""
        for method in ("name", "description"):
            call = self.option(method)
            args = arguments(call) if call is not None else []
            named = string_value(args[0], php) if args else None
            if named:
                return named
        text = " ".join(self.what.split())
        return text if len(text) <= 60 else text[:59] + "…"


def _splice(expression: str, position: int, value: str) -> str:
    fields = expression.split()
    fields[position - 1] = value
    return " ".join(fields)


def _text(value: str | float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


class _Args:
    """A frequency call's arguments as PHP values (strings and numbers), defaults filled."""

    def __init__(self, call: Node, php: PhpFile):
        self.nodes = arguments(call)
        self.php = php

    def get(self, index: int, default: str | float | None = None) -> str | float:
        if index >= len(self.nodes):
            if default is None:
                raise NotStatic()
            return default
        return self._value(self.nodes[index])

    def _value(self, node: Node) -> str | float:
        """A literal, a ``Schedule::MONDAY`` constant, or an array of them (joined by
        commas, as ``implode(',', ...)`` does)."""
        text = string_value(node, self.php)
        if text is not None:
            return text
        number = number_value(node, self.php)
        if number is not None:
            return number
        day = self.php.text_of(node).rsplit("::", 1)[-1]
        if day in _DAYS:
            return float(_DAYS[day])
        if node.type == "array_creation_expression":
            return ",".join(_text(self._value(element.named_children[-1]))
                            for element in node.named_children if element.named_children)
        raise NotStatic()

    def all(self) -> list[str]:
        return [_text(self.get(i)) for i in range(len(self.nodes))]


def _daily_at(expression: str, time: str | float) -> str:
    segments = _text(time).split(":")  # dailyAt(3) is 03:00
    minute = str(int(segments[1])) if len(segments) == 2 else "0"
    return _splice(_splice(expression, 1, minute), 2, str(int(segments[0])))


def apply_frequency(task: Task, method: str, call: Node, php: PhpFile) -> None:
    """Apply one chained method to the task's expression, as Laravel does."""
    a = _Args(call, php)
    e = task.expression
    if e is None:
        return
    if method == "cron":
        value = a.get(0)
        task.expression = str(value)
    elif method in _SECOND_STEPS:
        task.repeat_seconds = _SECOND_STEPS[method]
        task.expression = _splice(e, 1, "*")
    elif method in _MINUTE_STEPS:
        task.expression = _splice(e, 1, _MINUTE_STEPS[method])
    elif method == "hourly":
        task.expression = _splice(e, 1, "0")
    elif method == "hourlyAt":
        task.expression = _splice(_splice(e, 1, _text(a.get(0))), 2, "*")
    elif method in _HOUR_STEPS:
        task.expression = _splice(_splice(e, 1, _text(a.get(0, 0.0))), 2, _HOUR_STEPS[method])
    elif method == "daily":
        task.expression = _splice(_splice(e, 1, "0"), 2, "0")
    elif method in ("at", "dailyAt"):
        task.expression = _daily_at(e, a.get(0))
    elif method in ("twiceDaily", "twiceDailyAt"):
        hours = f"{_text(a.get(0, 1.0))},{_text(a.get(1, 13.0))}"
        offset = _text(a.get(2, 0.0)) if method == "twiceDailyAt" else "0"
        task.expression = _splice(_splice(e, 1, offset), 2, hours)
    elif method in _WEEKDAY_METHODS:
        task.expression = _splice(e, 5, _WEEKDAY_METHODS[method])
    elif method == "days":
        task.expression = _splice(e, 5, ",".join(a.all()))
    elif method == "weekly":
        task.expression = _splice(_splice(_splice(e, 1, "0"), 2, "0"), 5, "0")
    elif method == "weeklyOn":
        task.expression = _splice(_daily_at(e, a.get(1, "0:0")), 5, _text(a.get(0)))
    elif method == "monthly":
        task.expression = _splice(_splice(_splice(e, 1, "0"), 2, "0"), 3, "1")
    elif method == "monthlyOn":
        task.expression = _splice(_daily_at(e, a.get(1, "0:0")), 3, _text(a.get(0, 1.0)))
    elif method == "twiceMonthly":
        days = f"{_text(a.get(0, 1.0))},{_text(a.get(1, 16.0))}"
        task.expression = _splice(_daily_at(e, a.get(2, "0:0")), 3, days)
    elif method == "lastDayOfMonth":
        # Laravel writes the last day of the month in which the schedule is read, which
        # is read again each minute: the last day of every month
        task.expression = _splice(_daily_at(e, a.get(0, "0:0")), 3, "L")
    elif method == "quarterly":
        task.expression = "0 0 1 1-12/3 " + e.split()[4]
    elif method == "quarterlyOn":
        task.expression = _splice(_splice(_daily_at(e, a.get(1, "0:0")), 3,
                                          _text(a.get(0, 1.0))), 4, "1-12/3")
    elif method == "yearly":
        task.expression = "0 0 1 1 " + e.split()[4]
    elif method == "yearlyOn":
        task.expression = _splice(_splice(_daily_at(e, a.get(2, "0:0")), 3,
                                          _text(a.get(1, 1.0))), 4, _text(a.get(0, 1.0)))
    else:
        return
    task.methods.append(php.text_of(call.child_by_field_name("name") or call) +
                        php.text_of(call.child_by_field_name("arguments") or call))


FREQUENCY_METHODS = frozenset({
    "cron", *_SECOND_STEPS, *_MINUTE_STEPS, "hourly", "hourlyAt", *_HOUR_STEPS, "daily", "at",
    "dailyAt", "twiceDaily", "twiceDailyAt", *_WEEKDAY_METHODS, "days", "weekly", "weeklyOn",
    "monthly", "monthlyOn", "twiceMonthly", "lastDayOfMonth", "quarterly", "quarterlyOn",
    "yearly", "yearlyOn"})


#: Laravel's scheduler and its facade, as a file's names resolve
_SCHEDULERS = {"Illuminate\\Console\\Scheduling\\Schedule", "Illuminate\\Support\\Facades\\Schedule"}


def _laravels(php: PhpFile, name: str, forwarders: frozenset[str] = frozenset()) -> bool:
    """``Schedule`` names Laravel's scheduler: imported from Illuminate, the global alias,
    or an app's class that forwards its static calls to it (``forwarders``); not an app's
    own class of that name otherwise."""
    full = php.qualified(name.lstrip("?"))
    return full in _SCHEDULERS or full in forwarders or (
        name.lstrip("?\\") == "Schedule" and "Schedule" not in php.imports)


def _schedule_receivers(php: PhpFile) -> set[str]:
    """What holds the scheduler in this file: parameters typed ``Schedule``, the
    conventional ``$schedule``, ``app(Schedule::class)``, and variables or properties
    assigned from one of them (``$this->scheduleInstance = $schedule``)."""
    names = {"$schedule"}
    for node in walk(php.root):
        if node.type == "simple_parameter":
            kind = node.child_by_field_name("type")
            name = node.child_by_field_name("name")
            if kind is not None and name is not None and _laravels(php, php.text_of(kind)):
                names.add(php.text_of(name))
    assignments = [(php.text_of(left), php.text_of(right))
                   for n in walk(php.root) if n.type == "assignment_expression"
                   for left, right in [(n.child_by_field_name("left"),
                                        n.child_by_field_name("right"))]
                   if left is not None and right is not None]
    for _ in range(2):
        for left, right in assignments:
            if right in names or re.fullmatch(r"(?:app|resolve)\(\s*\\?[\w\\]*Schedule::class\s*\)",
                                              right):
                names.add(left)
    return names


def forwards_to_scheduler(php: PhpFile, cls_node: Node) -> bool:
    """A class whose ``__callStatic`` passes its calls on to Laravel's scheduler (monica's
    ``App\\Console\\Scheduling\\Schedule``): its static calls declare tasks."""
    text = php.text_of(cls_node)
    return "__callStatic" in text and any(
        full in _SCHEDULERS for full in php.imports.values()) and re.search(
        r"function\s+__callStatic[\s\S]*?\b\w+::\$\w+\(", text) is not None


def _is_scheduler(node: Node, php: PhpFile, receivers: set[str]) -> bool:
    if node.type in ("variable_name", "member_access_expression", "function_call_expression"):
        text = php.text_of(node)
        return text in receivers or re.fullmatch(
            r"(?:app|resolve)\(\s*\\?[\w\\]*Schedule::class\s*\)", text) is not None
    if node.type in ("name", "qualified_name"):  # Schedule::command(...) through the facade
        return _laravels(php, php.text_of(node))
    return False


def scheduled_tasks(php: PhpFile, forwarders: frozenset[str] = frozenset()) -> list[Task]:
    """Every task the file declares: chains of calls whose innermost call is
    ``$schedule->command|job|call|exec(...)`` or ``Schedule::…(...)``, also when the task
    is kept in a variable and configured by later statements (``$fetch =
    $schedule->command(...); … $fetch->everyFiveMinutes();``). ``forwarders``: the
    app's classes that pass their static calls on to the scheduler."""
    receivers = _schedule_receivers(php)
    tasks: list[Task] = []
    kept: dict[str, Task] = {}  # task variables
    groups: list[tuple[Node, list[tuple[str, Node]]]] = []  # (closure, attributes)
    for statement in walk(php.root):
        if statement.type != "expression_statement" or not statement.named_children:
            continue
        expression = statement.named_children[0]
        variable = None
        if expression.type == "assignment_expression":
            left, right = expression.child_by_field_name("left"), \
                expression.child_by_field_name("right")
            if left is None or right is None or left.type != "variable_name":
                continue
            variable, expression = php.text_of(left), right
        chain, node = _chain(expression, php, receivers)
        root = php.text_of(node)
        if root not in kept:
            # a kept task configured inside an expression: match arms, ternaries
            # (``match ($f) { 'hourly' => $task->hourly(), … }``): set by code
            for call in _calls_on(expression, kept, php):
                task = kept[php.text_of(call.child_by_field_name("object") or call)]
                name = call.child_by_field_name("name")
                method = php.text_of(name) if name is not None and name.type == "name" \
                    else DYNAMIC
                task.chain.append((method, call))
                _apply(task, method, call, php, unknown=True)
        if root in kept and variable is None:  # more configuration of a kept task
            task = kept[root]
            conditional = len(_branches(statement, php)) > len(task.branches)
            for method, call in reversed(chain):
                task.chain.append((method, call))
                _apply(task, method, call, php, unknown=conditional)
            continue
        name = node.child_by_field_name("name")
        holder = node.child_by_field_name("object") if node.type == "member_call_expression" \
            else node.child_by_field_name("scope") if node.type == "scoped_call_expression" \
            else None
        if name is None or holder is None:
            continue
        forwarded = holder.type in ("name", "qualified_name") and \
            php.qualified(php.text_of(holder)) in forwarders
        if not forwarded and not _is_scheduler(holder, php, receivers):
            continue
        if chain and chain[0][0] == "group":
            # Schedule::daily()->onOneServer()->group(fn () => …): the tasks declared in
            # the closure take these attributes first (Laravel 11's event attributes)
            closure = next(iter(arguments(chain[0][1])), None)
            if closure is not None:
                groups.append((closure, [(php.text_of(name), node)] + list(reversed(chain[1:]))))
            continue
        if php.text_of(name) not in TASK_KINDS:
            continue
        args = arguments(node)
        first = args[0] if args else None
        what = (string_value(first, php) or php.text_of(first)) if first is not None else ""
        inherited = [pair for closure, attributes in groups
                     if closure.start_byte <= statement.start_byte < closure.end_byte
                     for pair in attributes]
        task = Task(php.text_of(name), php.span(statement, whole=False), what, first,
                    inherited + list(reversed(chain)),
                    extra=" ".join(" ".join(php.text_of(a).split()) for a in args[1:]),
                    branches=_branches(statement, php))
        for method, call in task.chain:
            _apply(task, method, call, php)
        if forwarded:  # the app's class decides when (monica: a when() gate per frequency)
            task.expression = None
            said = ", ".join(string_value(a, php) or php.text_of(a) for a in args[1:]) \
                or "its frequency"
            task.methods = [f"{said} through {php.qualified(php.text_of(holder))}"]
        if _never_due(task, php):
            continue  # ->skip(fn () => true): a probe of the mutex name, never run
        tasks.append(task)
        if variable is not None:
            kept[variable] = task
    return tasks


def _never_due(task: Task, php: PhpFile) -> bool:
    """``->skip(true)``/``->skip(fn () => true)`` or ``->when(false)``: never run."""
    for method, literal in (("skip", "true"), ("when", "false")):
        call = task.option(method)
        args = arguments(call) if call is not None else []
        if args:
            text = "".join(php.text_of(args[0]).split()).lower()
            if text in (literal, f"fn()=>{literal}", f"function(){{return{literal};}}"):
                return True
    return False


def _calls_on(expression: Node, kept: dict[str, Task], php: PhpFile) -> list[Node]:
    """Method calls made directly on a kept task's variable inside an expression."""
    if not kept:
        return []
    return [n for n in walk(expression) if n.type == "member_call_expression" and n != expression
            and (obj := n.child_by_field_name("object")) is not None
            and obj.type == "variable_name" and php.text_of(obj) in kept]


def _chain(expression: Node, php: PhpFile,
           receivers: set[str]) -> tuple[list[tuple[str, Node]], Node]:
    """The method calls chained on an expression, outermost first, and what they start
    from (the task's declaring call, or the variable that keeps it)."""
    chain: list[tuple[str, Node]] = []
    node = expression
    while node.type in ("member_call_expression", "nullsafe_member_call_expression"):
        name = node.child_by_field_name("name")
        receiver = node.child_by_field_name("object")
        if name is None or receiver is None or _is_scheduler(receiver, php, receivers):
            break
        # a method named at run time (``$task->{$config['frequency']}()``)
        chain.append((php.text_of(name) if name.type == "name" else DYNAMIC, node))
        node = receiver
        if node.type == "variable_name":
            break
    return chain, node


def _apply(task: Task, method: str, call: Node, php: PhpFile, unknown: bool = False) -> None:
    """One chained method; a frequency set in a branch of its own, by a value not known
    statically or by a method named at run time leaves the schedule unknown (set by code)."""
    if (unknown and method in FREQUENCY_METHODS) or method == DYNAMIC:
        task.expression = None
        task.methods.append(php.text_of(call.child_by_field_name("name") or call) + "(…)")
        return
    try:
        apply_frequency(task, method, call, php)
    except (NotStatic, ValueError, IndexError):
        task.expression = None
        task.methods.append(php.text_of(call.child_by_field_name("name") or call) + "(…)")


def _branches(node: Node, php: PhpFile | None = None,
              depth: int = 0) -> tuple[tuple[int, str], ...]:
    """The ``if``/``else`` branches and ``switch`` cases around a statement, innermost
    last, as (line of the ``if`` or ``switch``, which branch); for a statement in a method
    that the class calls from one place (``$this->pullImages()`` in an ``else``), the
    branches around that call too."""
    found = []
    child, current = node, node.parent
    while current is not None:
        if current.type in ("case_statement", "default_statement"):
            parent = current.parent.parent if current.parent is not None else None
            found.append((parent.start_point.row + 1 if parent is not None else 0,
                          f"case {current.start_point.row + 1}"))
        elif current.type == "if_statement":
            # the clause the statement is in: the body, or an elseif/else clause
            branch = "then" if child == current.child_by_field_name("body") else \
                f"{child.type} {child.start_point.row + 1}"
            found.append((current.start_point.row + 1, branch))
        elif current.type == "method_declaration" and php is not None and depth < 3:
            caller = _only_call_site(current, php)
            if caller is not None:
                return _branches(caller, php, depth + 1) + tuple(reversed(found))
            break
        child, current = current, current.parent
    return tuple(reversed(found))


def _only_call_site(method: Node, php: PhpFile) -> Node | None:
    """The one ``$this->name()`` call of a method in its class, if it has exactly one."""
    name = method.child_by_field_name("name")
    body = method.parent
    if name is None or body is None:
        return None
    wanted = php.text_of(name)
    sites = [n for n in walk(body) if n.type == "member_call_expression"
             and (obj := n.child_by_field_name("object")) is not None
             and php.text_of(obj) == "$this"
             and (called := n.child_by_field_name("name")) is not None
             and php.text_of(called) == wanted]
    return sites[0] if len(sites) == 1 else None


# ------------------------------------------------------------------------------ cache store

#: cache drivers local to a host or to a process (redis, database, memcached, dynamodb and
#: the others: every server sees their keys)
HOST_STORES = frozenset({"file", "apc"})
PROCESS_STORES = frozenset({"array", "null"})

_ENV_STORE = re.compile(r"^\s*(CACHE_STORE|CACHE_DRIVER)\s*=\s*['\"]?([A-Za-z0-9_-]*)", re.M)
_CONFIG_STORE = re.compile(r"['\"](\w+)['\"]\s*=>\s*\[\s*['\"]driver['\"]\s*=>\s*['\"](\w+)['\"]")
_CONFIG_DEFAULT = re.compile(
    r"['\"]default['\"]\s*=>\s*(?:env\(\s*['\"](\w+)['\"]\s*(?:,\s*['\"](\w*)['\"])?\s*\)|"
    r"['\"](\w+)['\"])")


@dataclass(frozen=True)
class CacheStore:
    """The cache store a Laravel app's mutexes use, and where the tree says so."""

    driver: str  # the default store's name, which is its driver unless ``stores`` says
    span: Span | None  # None: Laravel's own default, nothing in the tree says
    #: the configuration's stores: (name, driver) — ``'lock' => ['driver' => 'database']``
    stores: tuple[tuple[str, str], ...] = ()

    def driver_of(self, store: str | None = None) -> str:
        """The driver of a named store (the default store when None)."""
        name = store or self.driver
        return dict(self.stores).get(name, name)

    def scope_of(self, store: str | None = None) -> LockScope:
        driver = self.driver_of(store)
        return "process" if driver in PROCESS_STORES else \
            "host" if driver in HOST_STORES else "cluster"

    @property
    def scope(self) -> LockScope:
        return self.scope_of()


def cache_store(config: tuple[str, str] | None, env: tuple[str, str] | None) -> CacheStore:
    """The default store from ``config/cache.php`` (``env('CACHE_STORE', 'database')``) and
    the environment example the project ships (``CACHE_STORE=redis``); ``config`` and
    ``env`` are (display path, text)."""
    variable, fallback, span = None, None, None
    stores: tuple[tuple[str, str], ...] = ()
    if config is not None:
        m = _CONFIG_DEFAULT.search(config[1])
        if m:
            variable, fallback = m.group(1), m.group(2) or m.group(3)
            span = Span(config[0], config[1].count("\n", 0, m.start()) + 1)
        stores = tuple(_CONFIG_STORE.findall(config[1]))
    if env is not None:
        for m in _ENV_STORE.finditer(env[1]):
            if (variable is None or m.group(1) == variable) and m.group(2):
                return CacheStore(m.group(2), Span(env[0], env[1].count("\n", 0, m.start()) + 1),
                                  stores)
    if fallback:
        return CacheStore(fallback, span, stores)
    # Laravel 11's default is the database store; older skeletons used files
    return CacheStore("database" if variable == "CACHE_STORE" else "file", span, stores)
