"""Configuration: ``[tool.jobsafe]`` in pyproject.toml or a ``.jobsafe.toml`` (same keys).

Never fails open: an unknown key, a bad value or an unknown rule is a ConfigError that
the CLI turns into exit status 2 with the key's name.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from .levels import Confidence, Severity
from .timespec import SYSTEMD, parse_duration

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib


class ConfigError(Exception):
    pass


KEYS = {"select", "ignore", "extend-exclude", "per-file-ignores", "severity",
        "lock-expiry-max", "replicas", "strict", "min-confidence"}

def config_duration(value, key: str) -> float:
    """A duration setting: seconds as a number, or systemd's spelling (``24h``, ``90min``)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    seconds = parse_duration(value, SYSTEMD) if isinstance(value, str) else None
    if seconds is not None:
        return seconds
    raise ConfigError(f"{key}: expected a duration such as 24h, 90m or 3600, got {value!r}")


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    lock_expiry_max: float = 86400.0
    replicas: int | None = None
    strict: bool = False
    #: findings less sure than this are not reported
    min_confidence: Confidence = Confidence.LOW
    source: str | None = None  # the file the settings came from

    def severity_for(self, rule_id: str, default: Severity) -> Severity:
        return dict(self.severity).get(rule_id, default)


def find_config(start: str) -> tuple[str, dict] | None:
    """Walk up from ``start``; the first ``.jobsafe.toml`` or pyproject with the table wins."""
    probe = os.path.abspath(start)
    if os.path.isfile(probe):
        probe = os.path.dirname(probe)
    while True:
        dedicated = os.path.join(probe, ".jobsafe.toml")
        if os.path.isfile(dedicated):
            return dedicated, _load(dedicated, dedicated=True) or {}
        pyproject = os.path.join(probe, "pyproject.toml")
        if os.path.isfile(pyproject):
            table = _load(pyproject, dedicated=False)
            if table is not None:
                return pyproject, table
        parent = os.path.dirname(probe)
        if parent == probe:
            return None
        probe = parent


def _load(path: str, dedicated: bool) -> dict | None:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read configuration: {exc}") from None
    if dedicated:
        return data.get("tool", {}).get("jobsafe", data) if "tool" in data else data
    table = data.get("tool", {}).get("jobsafe")
    return table if isinstance(table, dict) else None


def load_settings(config_file: str | None, start: str, known_rules) -> Settings:
    """Settings from ``config_file`` or the nearest config above ``start``.

    ``known_rules`` resolves selectors (ids, names, prefixes) and raises on unknown ones.
    """
    if config_file is not None:
        if not os.path.isfile(config_file):
            raise ConfigError(f"{config_file}: no such configuration file")
        dedicated = not config_file.endswith("pyproject.toml")
        found: tuple[str, dict] | None = (config_file, _load(config_file, dedicated) or {})
    else:
        found = find_config(start)
    if found is None:
        return Settings()
    path, table = found
    return settings_from_table(table, path, known_rules)


def settings_from_table(table: dict, path: str, known_rules) -> Settings:
    unknown = sorted(set(table) - KEYS)
    if unknown:
        raise ConfigError(f"{path}: unknown configuration key {unknown[0]!r} "
                          f"(known: {', '.join(sorted(KEYS))})")

    def str_list(key) -> tuple[str, ...]:
        value = table.get(key, [])
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: {key}: expected a list of strings")
        return tuple(value)

    select, ignore = str_list("select"), str_list("ignore")
    for selector in select + ignore:
        known_rules(selector)
    per_file = table.get("per-file-ignores", {})
    if not isinstance(per_file, dict):
        raise ConfigError(f"{path}: per-file-ignores: expected a table of pattern = [rules]")
    pfi = []
    for pattern, rules in sorted(per_file.items()):
        rules = [rules] if isinstance(rules, str) else rules
        if not isinstance(rules, list):
            raise ConfigError(f"{path}: per-file-ignores.{pattern}: expected a list of rules")
        for r in rules:
            known_rules(r)
        pfi.append((pattern, tuple(rules)))
    sev = table.get("severity", {})
    if not isinstance(sev, dict):
        raise ConfigError(f"{path}: severity: expected a table of rule = level")
    severities = []
    for rule, level in sorted(sev.items()):
        try:
            level_value = Severity(level)
        except ValueError:
            raise ConfigError(f"{path}: severity.{rule}: expected error, warning or info, "
                              f"got {level!r}") from None
        for rule_id in known_rules(rule):
            severities.append((rule_id, level_value))
    replicas = table.get("replicas")
    if replicas is not None and (not isinstance(replicas, int) or isinstance(replicas, bool)
                                 or replicas < 1):
        raise ConfigError(f"{path}: replicas: expected a positive whole number")
    strict = table.get("strict", False)
    if not isinstance(strict, bool):
        raise ConfigError(f"{path}: strict: expected true or false")
    try:
        min_confidence = Confidence(table.get("min-confidence", "low"))
    except ValueError:
        raise ConfigError(f"{path}: min-confidence: expected low, medium or high, got "
                          f"{table.get('min-confidence')!r}") from None
    return Settings(
        select=select, ignore=ignore, extend_exclude=str_list("extend-exclude"),
        per_file_ignores=tuple(pfi), severity=tuple(severities),
        lock_expiry_max=config_duration(table.get("lock-expiry-max", "24h"), "lock-expiry-max"),
        replicas=replicas, strict=strict, min_confidence=min_confidence, source=path,
    )
