"""Symfony's Scheduler component as a source: the recurring messages a schedule provider
(``#[AsSchedule]``, ``getSchedule()``) adds with ``RecurringMessage::every()`` and
``::cron()``, and classes marked ``#[AsCronTask]``/``#[AsPeriodicTask]``; with the lock the
schedule takes per firing (``->lock($factory->createLock(...))``). A schedule runs in the
``messenger:consume scheduler_NAME`` workers: one worker handles its messages one after
another, several each generate every message unless the schedule is locked."""
from __future__ import annotations

import re
from dataclasses import dataclass

from tree_sitter import Node

from ...model import Span
from .index import PhpClass
from .syntax import PhpFile, arguments, call_name, named_argument, number_value, string_value, walk

_UNITS = {"second": 1, "sec": 1, "minute": 60, "min": 60, "hour": 3600, "day": 86400,
          "week": 7 * 86400, "month": 30 * 86400, "year": 365 * 86400}
_RELATIVE = re.compile(r"^\+?\s*(\d+)\s*(second|sec|minute|min|hour|day|week|month|year)s?$",
                       re.I)
_ISO = re.compile(r"^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$")


@dataclass
class Recurring:
    """One recurring message of a schedule."""

    span: Span
    cron: str | None  # RecurringMessage::cron / #[AsCronTask]
    every_seconds: float | None  # RecurringMessage::every / #[AsPeriodicTask]
    frequency: str  # as written
    message: str | None  # the message class (short name as written), or None
    command: str | None  # RunCommandMessage('app:x'): the console command it runs
    schedule: str  # the schedule's name (transport scheduler_NAME)
    lock: Node | None  # the argument of the schedule's ->lock(...)
    handler: PhpClass | None = None  # for #[AsCronTask] classes: the class itself
    arguments_text: str = ""  # the message's constructor arguments, as written


def every_seconds(text: str) -> float | None:
    """``'5 minutes'``, ``'1 day'``, ``'PT5M'``, ``3600``: Symfony's frequencies."""
    text = text.strip()
    if text.isdigit():
        return float(text)
    m = _RELATIVE.match(text)
    if m:
        return float(m.group(1)) * _UNITS[m.group(2).lower()]
    m = _ISO.match(text)
    if m and any(m.groups()):
        weeks, days, hours, minutes, seconds = (int(g or 0) for g in m.groups())
        return float(weeks * 604800 + days * 86400 + hours * 3600 + minutes * 60 + seconds)
    return None


#: where Symfony's scheduling attributes live (an app's own attribute of the same name
#: is not Symfony's)
_ATTRIBUTES = ("Symfony\\Component\\Scheduler\\Attribute\\",
               "Symfony\\Component\\Messenger\\Attribute\\")


def _attributes(node: Node, php: PhpFile, names: tuple[str, ...]) -> list[Node]:
    """The attributes of a class or method named one of ``names`` (``#[AsSchedule('main')]``),
    Symfony's own: imported from Symfony, or not imported at all."""
    attributes = node.child_by_field_name("attributes")
    found = []
    for attribute in walk(attributes) if attributes is not None else ():
        if attribute.type != "attribute" or not attribute.named_children:
            continue
        written = php.text_of(attribute.named_children[0])
        short = written.rsplit("\\", 1)[-1]
        full = php.qualified(written)
        if short in names and (full.startswith(_ATTRIBUTES) or
                               (written == short and short not in php.imports)):
            found.append(attribute)
    return found


def _attribute(node: Node, php: PhpFile, names: tuple[str, ...]) -> Node | None:
    return next(iter(_attributes(node, php, names)), None)


def _attribute_arg(attribute: Node, php: PhpFile, name: str, position: int) -> Node | None:
    """An attribute's argument by name, else at ``position`` (-1: by name only)."""
    params = attribute.child_by_field_name("parameters")
    positional = []
    for arg in params.named_children if params is not None else ():
        label = arg.child_by_field_name("name")
        values = [c for c in arg.named_children if c != label]
        if not values:
            continue
        if label is not None and php.text_of(label) == name:
            return values[-1]
        if label is None:
            positional.append(values[-1])
    return positional[position] if 0 <= position < len(positional) else None


def _attribute_args(attribute: Node) -> list[Node]:
    params = attribute.child_by_field_name("parameters")
    out = []
    for arg in params.named_children if params is not None else ():
        values = [c for c in arg.named_children if c != arg.child_by_field_name("name")]
        if values:
            out.append(values[-1])
    return out


def recurring_messages(cls: PhpClass) -> list[Recurring]:
    """The recurring messages a class declares: a schedule provider's ``getSchedule()``,
    or the class itself as cron or periodic tasks (each of its attributes one)."""
    php = cls.php
    found: list[Recurring] = []
    for task in _attributes(cls.node, php, ("AsCronTask", "AsPeriodicTask")):
        cron_task = php.text_of(task).lstrip().startswith("AsCronTask")
        first = _attribute_arg(task, php, "expression" if cron_task else "frequency", 0)
        text = string_value(first, php) if first is not None else None
        frequency = text if text is not None else (php.text_of(first) if first else "")
        schedule = _attribute_arg(task, php, "schedule", -1)
        name = (string_value(schedule, php) if schedule is not None else None) or "default"
        if cron_task:
            cron, seconds = (text if text is not None else ""), None
        else:
            cron = None
            seconds = every_seconds(text) if text is not None else \
                number_value(first, php) if first is not None else None
        found.append(Recurring(php.span(task, whole=False), cron, seconds, frequency,
                               cls.name, None, name, None, handler=cls))
    if found:
        return found
    provider = next(iter(_attributes(cls.node, php, ("AsSchedule",))), None)
    method = cls.methods.get("getSchedule")
    if method is None or (provider is None and "ScheduleProviderInterface" not in cls.interfaces):
        return found
    name = "default"
    if provider is not None and _attribute_args(provider):
        name = string_value(_attribute_args(provider)[0], php) or name
    lock = next((arguments(call)[0] for call in walk(method)
                 if call.type == "member_call_expression" and call_name(call, php) == "->lock"
                 and arguments(call)), None)
    for call in walk(method):
        if call.type != "scoped_call_expression":
            continue
        scope = php.text_of(call.child_by_field_name("scope") or call).rsplit("\\", 1)[-1]
        kind = call_name(call, php).rsplit("::", 1)[-1]
        if scope != "RecurringMessage" or kind not in ("every", "cron"):
            continue
        args = arguments(call)
        first = named_argument(call, "frequency" if kind == "every" else "expression", php) or \
            (args[0] if args else None)
        message = named_argument(call, "message", php) or (args[1] if len(args) > 1 else None)
        text = string_value(first, php) if first is not None else None
        frequency = text if text is not None else (php.text_of(first) if first is not None else "")
        seconds = None
        if kind == "every":
            seconds = every_seconds(text) if text is not None else number_value(first, php)
        message_class, command = _message(message, php)
        # a cron expression built by code (a variable) is set, not known: ""
        cron = (text if text is not None else "") if kind == "cron" else None
        found.append(Recurring(php.span(call, whole=False), cron, seconds, frequency,
                               message_class, command, name, lock,
                               arguments_text=_arguments_text(message, php)))
    return found


def symfony_cron(expression: str) -> str | None:
    """A Symfony cron expression as a plain one, for the schedule's shape: its hashed
    forms (``#hourly``, ``# # * * *``, ``#(0-29)``) fire at a minute derived from the
    message, the same number of times: read at the range's start. None when not cron."""
    text = expression.strip()
    macros = {"#hourly": "0 * * * *", "#daily": "0 0 * * *", "#midnight": "0 0 * * *",
              "#weekly": "0 0 * * 0", "#monthly": "0 0 1 * *", "#annually": "0 0 1 1 *",
              "#yearly": "0 0 1 1 *"}
    if text.lower() in macros:
        return macros[text.lower()]
    fields = text.split()
    if len(fields) != 5 or "#" not in text:
        return None
    return " ".join(re.sub(r"#\((\d+)-\d+\)", r"\1", f).replace("#", "0") for f in fields)


def _arguments_text(node: Node | None, php: PhpFile) -> str:
    """A message's constructor arguments on one line: they select the work."""
    listed = next((c for c in node.named_children if c.type == "arguments"), None) \
        if node is not None else None
    return " ".join(php.text_of(listed).split()) if listed is not None else ""


def _message(node: Node | None, php: PhpFile) -> tuple[str | None, str | None]:
    """The message's class, and for ``new RunCommandMessage('app:x …')`` the command."""
    if node is None or node.type != "object_creation_expression":
        return None, None
    name = next((c for c in node.named_children if c.type in ("name", "qualified_name")), None)
    if name is None:
        return None, None
    cls = php.text_of(name)
    if cls.rsplit("\\", 1)[-1] == "RunCommandMessage":
        listed = next((c for c in node.named_children if c.type == "arguments"), None)
        args = [a.named_children[-1] for a in (listed.named_children if listed else ())
                if a.type == "argument" and a.named_children]
        text = string_value(args[0], php) if args else None
        return cls, text.split()[0] if text and text.split() else None
    return cls, None


def handles(cls: PhpClass, message: str) -> str | None:
    """The method of a handler class that handles ``message`` (a short or qualified class
    name): ``__invoke(Message $m)`` of an ``#[AsMessageHandler]`` class, or a method the
    attribute marks."""
    php = cls.php
    short = message.rsplit("\\", 1)[-1]
    marked = _attribute(cls.node, php, ("AsMessageHandler",)) is not None or \
        "MessageHandlerInterface" in cls.interfaces
    for name, method in cls.methods.items():
        if not (marked and name == "__invoke") and \
                _attribute(method, php, ("AsMessageHandler",)) is None:
            continue
        params = method.child_by_field_name("parameters")
        first = params.named_children[0] if params is not None and params.named_children else None
        kind = first.child_by_field_name("type") if first is not None else None
        if kind is not None and php.text_of(kind).rsplit("\\", 1)[-1] == short:
            return name
    return None
