"""What a Laravel or Symfony app's configuration says about where its locks live: the
default cache store (Laravel's mutexes and ``Cache::lock``) and ``LOCK_DSN`` (Symfony's
lock component), read from ``config/cache.php`` and the environment files the project
ships (``.env.example``, ``.env.dist``, Symfony's committed ``.env``)."""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ...discover import SourceFile
from ...model import LockScope
from .laravel import CacheStore, cache_store

_ENV_FILES = (".env.example", ".env_example", ".env.dist", ".env.sample", ".env", ".env.docker",
              ".env.production.example")
_LOCK_DSN = re.compile(r"^\s*LOCK_DSN\s*=\s*['\"]?([A-Za-z0-9_+-]+)", re.M)
_LOCK_CONFIG = re.compile(r"^\s+lock:\s*['\"]?([^'\"\s#]+)", re.M)
_STORE_CLASS = re.compile(
    r"Lock\\+Store\\+(\w+Store)\b|\bnew\s+\\?(?:[\w\\]*\\)?((?:Flock|Semaphore|InMemory|Redis|"
    r"Pdo|DoctrineDbal|DoctrineDbalPostgreSql|PostgreSql|Memcached|MongoDb|Zookeeper|Combined)"
    r"Store)\b")
_CLUSTER_DSN = ("redis", "rediss", "memcached", "mysql", "pgsql", "postgres", "postgresql",
                "mongodb", "zookeeper", "dynamodb", "sqlsrv", "oci", "sqlite")


@dataclass(frozen=True)
class PhpSettings:
    cache: CacheStore | None  # None: no Laravel cache configuration in the tree
    lock_scope: LockScope | None  # Symfony's LOCK_DSN: None when the tree does not say


def app_settings(files: dict[str, SourceFile],
                 read: Callable[[SourceFile], str | None]) -> PhpSettings:
    def first(names: tuple[str, ...]) -> tuple[str, str] | None:
        for rel in sorted(files, key=lambda r: (r.count("/"), r)):
            if rel.rsplit("/", 1)[-1] in names or rel in names:
                text = read(files[rel])
                if text is not None:
                    return files[rel].display, text
        return None

    config = first(("config/cache.php",)) if "config/cache.php" in files else next(
        ((files[r].display, t) for r in sorted(files) if r.endswith("/config/cache.php")
         for t in [read(files[r])] if t is not None), None)
    env = first(_ENV_FILES)
    cache = cache_store(config, env) if config is not None or (
        env is not None and "CACHE_" in env[1]) else None
    scope: LockScope | None = None
    configured = first(("lock.yaml",)) or first(("framework.yaml",))
    m = _LOCK_CONFIG.search(configured[1]) if configured is not None else None
    if configured is not None and m and not m.group(1).startswith("%env("):
        # framework: lock: 'redis://…' written in the configuration
        scope = _dsn_scope(m.group(1))
    elif env is not None and (m := _LOCK_DSN.search(env[1])):
        scope = _dsn_scope(m.group(1))
    else:
        # the lock factory wired in the service configuration (relay: a PostgreSqlStore)
        services = first(("services.php",)) or first(("services.yaml",))
        m = _STORE_CLASS.search(services[1]) if services is not None else None
        store = next((g for g in m.groups() if g), None) if m else None
        if store:
            scope = "host" if store in ("FlockStore", "SemaphoreStore", "InMemoryStore") \
                else "cluster"
    return PhpSettings(cache, scope)


def _dsn_scope(dsn: str) -> LockScope | None:
    scheme = dsn.split(":")[0].lower()
    return "cluster" if scheme.startswith(_CLUSTER_DSN) else "host" \
        if scheme in ("flock", "semaphore") else None
