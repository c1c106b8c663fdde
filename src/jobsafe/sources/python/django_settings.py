"""Django's ``CACHES`` setting, read from a project's settings modules with ``ast``.

A ``cache.add(key, ...)`` lock is only as wide as the cache backend behind the alias it
uses: Django's default ``LocMemCache`` lives in one process, ``FileBasedCache`` on one
host, the rest (Redis, Memcached, the database) are shared. Nothing is imported or run.
"""
from __future__ import annotations

import ast
import posixpath
from collections.abc import Iterable

from ...model import LockScope
from .light import python_parse

#: backends (by their class name) whose entries do not leave the process or the host;
#: ``DummyCache`` stores nothing, so each ``add`` succeeds: it keeps out no other run
_LOCAL_BACKENDS: dict[str, LockScope] = {"LocMemCache": "process", "DummyCache": "process",
                                          "FileBasedCache": "host"}


def is_settings_module(rel: str) -> bool:
    """A module that configures Django (``settings.py``, ``settings/production.py``,
    ``local_settings.py``), not one for tests: those often swap in a local cache."""
    folder, name = posixpath.split(rel)
    if "test" in name:
        return False
    return name == "settings.py" or name.startswith("settings_") or \
        name.endswith("_settings.py") or posixpath.basename(folder) == "settings"


def cache_backends(texts: Iterable[str]) -> dict[str, list[str | None]]:
    """Per cache alias, the ``BACKEND`` each settings module gives it (None: not a literal);
    under ``"*"``, a None for each ``CACHES`` built by code, which may set any alias."""
    found: dict[str, list[str | None]] = {}
    for text in texts:
        try:
            tree = python_parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        for node in tree.body:
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    for alias, backend in _assigned(target, node.value):
                        found.setdefault(alias, []).append(backend)
    return found


def alias_scope(found: dict[str, list[str | None]], alias: str) -> LockScope | None:
    """The widest scope the settings give the alias's backend; None (keep the library's
    default) when one of them is not a literal or is shared, or no settings name it."""
    scopes: list[LockScope] = []
    for backend in found.get(alias, []) + (found.get("*", []) if alias in found else []):
        local = _LOCAL_BACKENDS.get(backend.rsplit(".", 1)[-1]) if backend else None
        if local is None:
            return None
        scopes.append(local)
    if not scopes:
        return None
    return "host" if "host" in scopes else "process"  # the widest of them


def _assigned(target: ast.expr, value: ast.expr) -> list[tuple[str, str | None]]:
    """(alias, backend) pairs an assignment at module level sets: ``CACHES = {...}``,
    ``CACHES["default"] = {...}``, ``CACHES["default"]["BACKEND"] = "..."``."""
    if isinstance(target, ast.Name) and target.id == "CACHES":
        if not isinstance(value, ast.Dict):
            return [("*", None)]  # built by code (env.cache()): any alias, any backend
        return [(_string(key) or "*", _backend(entry) if key is not None else None)
                for key, entry in zip(value.keys, value.values)]
    if isinstance(target, ast.Subscript):
        alias = _string(target.slice)
        if isinstance(target.value, ast.Name) and target.value.id == "CACHES" and alias:
            return [(alias, _backend(value))]
        inner = target.value
        if alias == "BACKEND" and isinstance(inner, ast.Subscript) and \
                isinstance(inner.value, ast.Name) and inner.value.id == "CACHES":
            name = _string(inner.slice)
            return [(name, _string(value))] if name else []
    return []


def _backend(entry: ast.expr) -> str | None:
    if not isinstance(entry, ast.Dict):
        return None
    for key, value in zip(entry.keys, entry.values):
        if _string(key) == "BACKEND":
            return _string(value)
    return None


def _string(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) \
        else None
