"""Ansible: ``cron:`` tasks are cron jobs, and the inventory says on how many hosts."""
from __future__ import annotations

import configparser
import re
from dataclasses import dataclass

from ..model import Span
from .yamlfile import YNode

CRON_MODULES = {"cron", "ansible.builtin.cron", "ansible.legacy.cron"}
_TASK_LISTS = ("tasks", "pre_tasks", "post_tasks", "handlers")
_SPECIAL = {"reboot": "@reboot", "yearly": "@yearly", "annually": "@annually",
            "monthly": "@monthly", "weekly": "@weekly", "daily": "@daily", "hourly": "@hourly"}


@dataclass
class CronTask:
    span: Span  # the task's job line
    schedule: str  # a crontab expression or macro
    command: str
    user: str | None
    cron_file: str | None
    hosts: str | None  # the play's host pattern, when known
    task_span: Span


def cron_tasks(path: str, doc: YNode, role_hosts: dict[str, str]) -> list[CronTask]:
    """Cron tasks of a playbook (plays with hosts) or a task file (a role's tasks)."""
    found: list[CronTask] = []
    items = doc.elements()
    if not items:
        return found
    if any(item.get("hosts") is not None for item in items):
        for play in items:
            hosts = play.text("hosts")
            for key in _TASK_LISTS:
                found += _tasks(path, play.list_at(key), hosts)
        return found
    role = _role_of(path)
    return _tasks(path, items, role_hosts.get(role) if role else None)


def play_roles(doc: YNode) -> dict[str, str]:
    """role name -> host pattern, for the roles plays include."""
    out = {}
    for play in doc.elements():
        hosts = play.text("hosts")
        roles = play.get("roles")
        if hosts is None or roles is None:
            continue
        for role in roles.elements():
            name = role.text("role") or role.text("name") if isinstance(role.value, dict) else role.value
            if name:
                out[str(name)] = hosts
    return out


def _role_of(path: str) -> str | None:
    m = re.search(r"(?:^|/)roles/([^/]+)/tasks/", path)
    return m.group(1) if m else None


def _tasks(path: str, tasks: list[YNode], hosts: str | None) -> list[CronTask]:
    found = []
    for task in tasks:
        if not isinstance(task.value, dict):
            continue
        for key in ("block", "rescue", "always"):
            found += _tasks(path, task.list_at(key), hosts)
        args = next((a for a in (task.get(m) for m in CRON_MODULES) if a is not None), None)
        if args is None:
            continue
        if not isinstance(args.value, dict) or args.text("state") == "absent" or \
                args.text("disabled") in ("true", "yes", "True"):
            continue
        job = args.get("job")
        if job is None or job.value is None:
            continue
        special = args.text("special_time")
        if special:
            schedule = _SPECIAL.get(special, f"@{special}")
        else:
            schedule = " ".join(args.text(k) or "*" for k in ("minute", "hour", "day", "month",
                                                               "weekday"))
        found.append(CronTask(Span(path, job.key_line or job.line), schedule, str(job.value),
                              args.text("user"), args.text("cron_file"), hosts,
                              Span(path, task.line)))
    return found


# --------------------------------------------------------------------------- inventory


def ini_inventory(path: str, text: str) -> dict[str, tuple[int, Span]]:
    """group -> (number of hosts, where the group is declared), children counted."""
    parser = configparser.ConfigParser(allow_no_value=True, delimiters=("=",), strict=False,
                                       interpolation=None)
    parser.optionxform = str  # type: ignore[assignment, method-assign]  # keep host names' case
    try:
        parser.read_string(text)
    except configparser.Error:
        return {}
    lines = text.split("\n")

    def line_of(section):
        return next((i + 1 for i, line in enumerate(lines) if line.strip() == f"[{section}]"), 1)

    hosts: dict[str, set[str]] = {}
    children: dict[str, list[str]] = {}
    for section in parser.sections():
        names = [k.split()[0] for k in parser[section]]
        if section.endswith(":children"):
            children[section[: -len(":children")]] = names
        elif not section.endswith(":vars"):
            hosts.setdefault(section, set()).update(_expand(n) for n in names)
    return _count(hosts, children, {g: Span(path, line_of(g)) for g in set(hosts) | set(children)})


def yaml_inventory(path: str, doc: YNode) -> dict[str, tuple[int, Span]]:
    hosts: dict[str, set[str]] = {}
    children: dict[str, list[str]] = {}
    where: dict[str, Span] = {}

    def walk(name: str, node: YNode):
        where[name] = Span(path, node.key_line or node.line)
        if not isinstance(node.value, dict):
            return
        for host, _ in node.items_at("hosts"):
            hosts.setdefault(name, set()).add(_expand(host))
        for child, child_node in node.items_at("children"):
            children.setdefault(name, []).append(child)
            walk(child, child_node)

    for name, node in doc.items():
        walk(name, node)
    return _count(hosts, children, where)


def _expand(host: str) -> str:
    return host  # ranges such as web[1:3] count as one host: conservative


def _count(hosts, children, where) -> dict[str, tuple[int, Span]]:
    def members(group, seen):
        if group in seen:
            return set()
        seen.add(group)
        out = set(hosts.get(group, ()))
        for child in children.get(group, ()):
            out |= members(child, seen)
        return out
    return {g: (len(members(g, set())), where[g]) for g in where}
