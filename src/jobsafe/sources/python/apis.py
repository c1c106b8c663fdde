"""What jobsafe knows about lock libraries: constructors, their scope and their defaults.

Keyed by qualified name as libcst's QualifiedNameProvider reports it, so
``from filelock import FileLock as FL`` and ``import filelock`` both resolve.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ...model import LockKind, LockScope, StaleHandling


@dataclass(frozen=True)
class LockApi:
    kind: LockKind
    scope: LockScope
    #: how stale locks are handled by the library itself
    stale: StaleHandling = "kernel"
    #: keyword (or positional index) holding the time-to-live, and its unit in seconds
    ttl_arg: str | None = None
    ttl_pos: int | None = None
    ttl_unit: float = 1.0
    ttl_default: float | None = None  # the library's default TTL (None: never expires)
    #: keyword/positional of the acquisition timeout; the library's default (None: forever)
    wait_arg: str | None = None
    wait_pos: int | None = None
    wait_default: float | None = None
    #: keyword that turns renewal on (python-redis-lock's auto_renewal)
    renew_arg: str | None = None
    #: keyword/positional holding the path or key
    key_pos: int | None = 0
    key_arg: str | None = None
    #: acquired by the constructor itself (zc.lockfile, tendo, pid context)
    acquires_on_create: bool = False
    #: keyword of the constructor whose false value makes it a try-lock (``blocking=False``,
    #: django-pglocks' ``wait=False``)
    blocking_arg: str | None = None
    #: a database session lock: the connection holds it (JOB303 through a pooler)
    session: bool = False
    #: as a context manager that does not wait, it yields whether it got the lock (rather
    #: than raising, as redis-py's does)
    yields_acquired: bool = False


LOCK_CONSTRUCTORS: dict[str, LockApi] = {
    # host scope, released by the kernel when the process dies
    "filelock.FileLock": LockApi("filelock", "host", wait_arg="timeout", wait_pos=1,
                                 wait_default=None, key_arg="lock_file"),
    "filelock.UnixFileLock": LockApi("filelock", "host", wait_arg="timeout", wait_pos=1,
                                     key_arg="lock_file"),
    "filelock.SoftFileLock": LockApi("soft-filelock", "host", stale="none", wait_arg="timeout",
                                     wait_pos=1, key_arg="lock_file"),
    # taken by its write_lock(timeout=…) (exclusive); read_lock() is shared: readers do not
    # exclude each other, so it guards no job against its own next run
    "filelock.ReadWriteLock": LockApi("filelock", "host", wait_arg="timeout", wait_pos=1,
                                      key_arg="lock_file"),
    "portalocker.Lock": LockApi("portalocker", "host", wait_arg="timeout", wait_pos=2,
                                wait_default=5.0, key_arg="filename"),
    "portalocker.utils.Lock": LockApi("portalocker", "host", wait_arg="timeout", wait_pos=2,
                                      wait_default=5.0, key_arg="filename"),
    "portalocker.RLock": LockApi("portalocker", "host", wait_arg="timeout", wait_pos=2,
                                 wait_default=5.0, key_arg="filename"),
    "portalocker.RedisLock": LockApi("portalocker-redis", "cluster", stale="session",
                                     key_arg="channel", wait_arg="timeout", wait_default=None),
    "fasteners.InterProcessLock": LockApi("fasteners", "host", key_arg="path"),
    "fasteners.process_lock.InterProcessLock": LockApi("fasteners", "host", key_arg="path"),
    "zc.lockfile.LockFile": LockApi("zc.lockfile", "host", acquires_on_create=True,
                                    wait_default=0.0, key_arg="path"),
    "tendo.singleton.SingleInstance": LockApi("tendo", "host", acquires_on_create=True,
                                              wait_default=0.0, key_pos=None),
    # lock files whose existence means "locked"
    "lockfile.LockFile": LockApi("lockfile", "host", stale="none", wait_arg="timeout",
                                 key_arg="path"),
    "lockfile.LinkLockFile": LockApi("lockfile", "host", stale="none", wait_arg="timeout",
                                     key_arg="path"),
    "lockfile.MkdirLockFile": LockApi("lockfile", "host", stale="none", wait_arg="timeout",
                                      key_arg="path"),
    "lockfile.linklockfile.LinkLockFile": LockApi("lockfile", "host", stale="none",
                                                  wait_arg="timeout", key_arg="path"),
    "lockfile.mkdirlockfile.MkdirLockFile": LockApi("lockfile", "host", stale="none",
                                                    wait_arg="timeout", key_arg="path"),
    "lockfile.pidlockfile.PIDLockFile": LockApi("pid-file", "host", stale="none",
                                                wait_arg="timeout", key_arg="path"),
    "daemon.pidfile.PIDLockFile": LockApi("pid-file", "host", stale="none", wait_arg="timeout",
                                          key_arg="path"),
    "daemon.pidfile.TimeoutPIDLockFile": LockApi("pid-file", "host", stale="none",
                                                 wait_arg="acquire_timeout", wait_pos=1,
                                                 key_arg="path"),
    "pid.PidFile": LockApi("pid-file", "host", stale="pid-check", key_arg="pidname",
                           acquires_on_create=False, wait_default=0.0),
    # python-apt: fcntl record locks that raise when another process holds them
    "apt_pkg.FileLock": LockApi("lockf", "host", key_arg="file", key_pos=0, wait_default=0.0),
    "apt_pkg.SystemLock": LockApi("lockf", "host", key_pos=None, wait_default=0.0),
    # cluster scope
    "redis.lock.Lock": LockApi("redis-lock", "cluster", stale="ttl", ttl_arg="timeout",
                               ttl_pos=2, wait_arg="blocking_timeout", key_pos=1,
                               key_arg="name", blocking_arg="blocking"),
    "redis.asyncio.lock.Lock": LockApi("redis-lock", "cluster", stale="ttl", ttl_arg="timeout",
                                       ttl_pos=2, wait_arg="blocking_timeout", key_pos=1,
                                       key_arg="name", blocking_arg="blocking"),
    # PostgreSQL advisory locks through django-pglocks: a context manager, session-level
    # unless xact; ``wait=False`` tries once and yields whether it got it
    "django_pglocks.advisory_lock": LockApi("pg-advisory", "cluster", stale="session",
                                            key_arg="lock_id", key_pos=0, session=True,
                                            blocking_arg="wait", yields_acquired=True),
    "redis_lock.Lock": LockApi("python-redis-lock", "cluster", stale="ttl", ttl_arg="expire",
                               ttl_pos=2, renew_arg="auto_renewal", key_pos=1, key_arg="name",
                               wait_arg="timeout"),
    "pottery.Redlock": LockApi("redlock", "cluster", stale="ttl", ttl_arg="auto_release_time",
                               ttl_default=10.0, key_arg="key", key_pos=None),
    "pottery.redlock.Redlock": LockApi("redlock", "cluster", stale="ttl",
                                       ttl_arg="auto_release_time", ttl_default=10.0,
                                       key_arg="key", key_pos=None),
    # process scope
    "threading.Lock": LockApi("threading.Lock", "process", key_pos=None),
    "threading.RLock": LockApi("threading.RLock", "process", key_pos=None),
    "threading.Semaphore": LockApi("threading.Semaphore", "process", key_pos=None),
    "threading.BoundedSemaphore": LockApi("threading.BoundedSemaphore", "process", key_pos=None),
    "multiprocessing.Lock": LockApi("multiprocessing.Lock", "process", key_pos=None),
    "multiprocessing.RLock": LockApi("multiprocessing.RLock", "process", key_pos=None),
    "asyncio.Lock": LockApi("asyncio.Lock", "process", key_pos=None),
    "asyncio.Semaphore": LockApi("asyncio.Semaphore", "process", key_pos=None),
}

#: lock objects taken through a method that hands back the held lock: (constructor, method)
#: the API of a database claim that raises when another run holds the row (oslo.db's
#: ``update_on_match``: ``NoRowsMatched``): its answer is the exception, whatever is done
#: with its result
RAISING_CLAIM = "update_on_match"

ACQUIRING_METHODS = {("filelock.ReadWriteLock", "write_lock")}

#: redis-py client method ``r.lock(name, timeout=None, ..., blocking_timeout=None)``
REDIS_CLIENT_LOCK = LockApi("redis-lock", "cluster", stale="ttl", ttl_arg="timeout", ttl_pos=1,
                            wait_arg="blocking_timeout", key_pos=0, key_arg="name",
                            blocking_arg="blocking")
#: django-redis / django cache ``cache.lock(name, timeout=None)``
CACHE_LOCK = LockApi("cache-lock", "cluster", stale="ttl", ttl_arg="timeout", ttl_pos=1,
                     wait_arg="blocking_timeout", key_pos=0, key_arg="key",
                     blocking_arg="blocking")

#: Huey's ``huey.lock_task(lock_name, ttl=None)``, a context manager or a decorator: a key put
#: in the Huey storage if empty (a task that finds it taken is not run), deleted on exit; a
#: killed worker leaves it until its TTL or ``flush_locks()``. Its scope is the storage's.
HUEY_STORAGES: dict[str, LockScope] = {"huey.RedisHuey": "cluster", "huey.PriorityRedisHuey": "cluster",
                 "huey.RedisExpireHuey": "cluster", "huey.api.RedisHuey": "cluster",
                 "huey.contrib.djhuey.HUEY": "cluster", "huey.SqliteHuey": "host",
                 "huey.FileHuey": "host", "huey.MemoryHuey": "process"}


def huey_lock(scope: LockScope) -> LockApi:
    return LockApi("huey-lock", scope, stale="ttl", ttl_arg="ttl", ttl_pos=1, wait_default=0.0,
                   key_arg="lock_name", key_pos=0)


# django-huey's module-level helper uses the HUEY setting (Redis by default)
LOCK_CONSTRUCTORS["huey.contrib.djhuey.lock_task"] = huey_lock("cluster")
#: decorators of lock libraries that hold a lock around each call of what they decorate,
#: tried once (a busy lock skips the call or raises)
LOCK_DECORATORS = {
    # mitol-django-common: client.lock(f"task-lock:{key}", timeout=timeout)
    # .acquire(blocking=False) around a Celery task, released in a finally
    "mitol.common.decorators.single_task": LockApi("redis-lock", "cluster", stale="ttl",
                                                   ttl_arg="timeout", ttl_pos=0,
                                                   key_arg="key", key_pos=None),
}
#: valkey-py, Redis's fork, keeps redis-py's API under its own name
LOCK_CONSTRUCTORS["valkey.lock.Lock"] = LOCK_CONSTRUCTORS["redis.lock.Lock"]
LOCK_CONSTRUCTORS["valkey.asyncio.lock.Lock"] = LOCK_CONSTRUCTORS["redis.asyncio.lock.Lock"]

REDIS_CLIENT_FACTORIES = {"django_valkey.get_valkey_connection", "valkey.Valkey",
                          "valkey.Valkey.from_url", "valkey.from_url", "valkey.StrictValkey",
                          "valkey.Redis", "valkey.StrictRedis", "valkey.client.Valkey",
                          "valkey.asyncio.Valkey",
                          "redis.Redis", "redis.StrictRedis", "redis.from_url",
                          "redis.Redis.from_url", "redis.StrictRedis.from_url",
                          "redis.client.Redis", "redis.client.StrictRedis",
                          "redis.asyncio.Redis", "redis.asyncio.from_url",
                          "django_redis.get_redis_connection", "rediscluster.RedisCluster",
                          "redis.cluster.RedisCluster"}
DJANGO_CACHES = {"django.core.cache.cache", "django.core.cache.caches"}

KERNEL_LOCK_CALLS = {"fcntl.flock": "flock", "fcntl.lockf": "lockf", "portalocker.lock": "flock",
                     "portalocker.portalocker.lock": "flock"}
KERNEL_UNLOCK_FLAGS = {"fcntl.LOCK_UN", "portalocker.LOCK_UN", "portalocker.LockFlags.UNLOCK"}
NONBLOCK_FLAGS = {"fcntl.LOCK_NB", "portalocker.LOCK_NB", "portalocker.LockFlags.NON_BLOCKING"}

EXISTENCE_CHECKS = {"os.path.exists", "os.path.isfile", "os.path.isdir", "os.path.lexists",
                    "os.access", "pathlib.Path.exists", "pathlib.Path.is_file",
                    "pathlib.Path.is_dir"}
PATH_METHODS_EXIST = {"exists", "is_file", "is_dir"}
REMOVERS = {"os.remove", "os.unlink", "os.rmdir", "shutil.rmtree"}
AGE_CHECKS = {"os.path.getmtime", "os.path.getctime", "os.stat", "os.path.getatime"}

PROCESS_EXITS = {"sys.exit": "sys.exit()", "builtins.exit": "exit()", "builtins.quit": "quit()"}
HARD_EXITS = {"os._exit": "os._exit()", "os.abort": "os.abort()"}
FORKS = {"os.fork", "os.forkpty"}
MP_FORKS = {"multiprocessing.Process", "multiprocessing.Pool", "multiprocessing.pool.Pool",
            "concurrent.futures.ProcessPoolExecutor"}
SUBPROCESS = {"subprocess.Popen", "subprocess.run", "subprocess.call", "subprocess.check_call",
              "subprocess.check_output"}
SLEEPS = {"time.sleep", "asyncio.sleep"}
#: clock readings: a loop that compares one (or what is computed from one) to a limit ends
CLOCKS = {"time.time", "time.monotonic", "time.perf_counter", "time.monotonic_ns",
          "time.time_ns", "datetime.datetime.now", "datetime.datetime.utcnow",
          "django.utils.timezone.now"}
RETRY_DECORATORS = {"tenacity.retry", "backoff.on_exception", "backoff.on_predicate",
                    "retrying.retry", "retry.retry"}
CONTEXT_MANAGER_DECORATORS = {"contextlib.contextmanager", "contextlib.asynccontextmanager"}
THREAD_STARTS = {"threading.Thread", "threading.Timer", "concurrent.futures.ThreadPoolExecutor",
                 "concurrent.futures.thread.ThreadPoolExecutor", "asyncio.create_task",
                 "asyncio.gather", "asyncio.TaskGroup", "asyncio.ensure_future",
                 "multiprocessing.pool.ThreadPool"}

#: advisory locks in SQL text: function -> (session-level?, blocking?)
SQL_LOCKS = {
    "pg_advisory_lock": (True, True),
    "pg_try_advisory_lock": (True, False),
    "pg_advisory_xact_lock": (False, True),
    "pg_try_advisory_xact_lock": (False, False),
    "get_lock": (True, None),  # MySQL GET_LOCK(name, timeout): blocking depends on timeout
}

#: in-process schedulers that run jobs in a background thread of the importing process
BACKGROUND_SCHEDULERS = {
    "apscheduler.schedulers.background.BackgroundScheduler",
    "apscheduler.schedulers.asyncio.AsyncIOScheduler",
    "apscheduler.schedulers.gevent.GeventScheduler",
    "apscheduler.schedulers.tornado.TornadoScheduler",
    "apscheduler.schedulers.twisted.TwistedScheduler",
    "apscheduler.schedulers.qt.QtScheduler",
    "flask_apscheduler.APScheduler",
}


# -- kinds of values (``semantics``): what a library name, call, method or item gives

#: uncalled library names that are objects themselves
LIBRARY_OBJECTS = {
    "django.core.cache.cache": "django-cache",
    "django.core.cache.caches": "django-caches",
    "django.db.connection": "db-connection",
    "django.db.connections": "db-connections",
    "django.conf.settings": "settings",
}
#: the kind of a Huey instance (what its storage is) -> the scope of its locks
HUEY_LOCK_SCOPES: dict[str, LockScope] = {"huey:cluster": "cluster", "huey:host": "host",
                                          "huey:process": "process"}
#: library calls -> the kind of what they return
LIBRARY_CALLS = {
    **dict.fromkeys(REDIS_CLIENT_FACTORIES, "redis"),
    "redis.asyncio.StrictRedis": "redis", "redis.sentinel.Sentinel.master_for": "redis",
    "django_redis.get_redis_connection": "redis",
    "sqlalchemy.create_engine": "db-engine", "sqlalchemy.engine.create_engine": "db-engine",
    "sqlalchemy.orm.sessionmaker": "db-sessionmaker", "sqlalchemy.orm.Session": "db-session",
    "sqlalchemy.orm.scoped_session": "db-session",
    "psycopg2.connect": "db-connection", "psycopg.connect": "db-connection",
    "pymysql.connect": "db-connection", "MySQLdb.connect": "db-connection",
    "mysql.connector.connect": "db-connection", "sqlite3.connect": "db-connection",
    "psycopg2.pool.SimpleConnectionPool": "db-pool",
    "psycopg2.pool.ThreadedConnectionPool": "db-pool", "psycopg_pool.ConnectionPool": "db-pool",
    **{name: f"huey:{scope}" for name, scope in HUEY_STORAGES.items()},
    **dict.fromkeys(BACKGROUND_SCHEDULERS, "background-scheduler"),
    "stripe.StripeClient": "stripe-client",
}
#: library calls that import code by its dotted name, as (keyword, position) of the name
#: and the keyword of a mapping from that name to the module (oslo.db's ``DBAPI``): what
#: they return is that module, or the class or function the name ends in
DYNAMIC_IMPORTS = {
    "importlib.import_module": ("name", 0, None),
    "django.utils.module_loading.import_string": ("dotted_path", 0, None),
    "werkzeug.utils.import_string": ("import_name", 0, None),
    "oslo_utils.importutils.import_module": ("import_str", 0, None),
    "oslo_utils.importutils.import_class": ("import_str", 0, None),
    "oslo_db.api.DBAPI": ("backend_name", 0, "backend_mapping"),
}
#: library classes whose instances stand for whatever the program hands them at start-up,
#: by this method (peewee's ``db = Proxy()`` ... ``db.initialize(real_db)``): the proxy's
#: calls and attributes are those of every value the project initialises it with
LATE_BOUND_PROXIES = {"peewee.Proxy": "initialize", "peewee.DatabaseProxy": "initialize"}
#: service registries that hand out the project's objects by interface or name
#: (pyramid_services: ``config.register_service_factory(factory, iface=X, name="n")`` at
#: start-up, ``request.find_service(X)`` or ``find_service(name="n")`` in a view or a task):
#: method -> (keyword, position) of the factory or instance; the lookup's own are
#: ``iface``/0 and ``name``/2
SERVICE_REGISTRATIONS = {"register_service_factory": ("service_factory", 0),
                         "register_service": ("service", 0)}
SERVICE_LOOKUP = "find_service"
#: kinds whose methods give something of a known kind
OBJECT_KINDS = {"redis", "django-cache", "db-engine", "db-sessionmaker", "db-session",
                "db-connection", "db-pool", "db-cursor", "db-connections"}
METHOD_RESULTS = {
    ("db-engine", "connect"): "db-pooled-connection",
    ("db-engine", "begin"): "db-pooled-connection",
    ("db-engine", "raw_connection"): "db-pooled-connection",
    ("db-sessionmaker", "__call__"): "db-session",
    ("db-pool", "getconn"): "db-pooled-connection",
    ("db-pool", "connection"): "db-pooled-connection",
    ("db-connection", "cursor"): "db-cursor",
    ("db-pooled-connection", "cursor"): "db-cursor",
    ("db-session", "connection"): "db-connection",
    ("redis", "pipeline"): "redis",
}
#: ``base[key]`` of a kind
ITEM_KINDS = {"django-caches": "django-cache", "db-connections": "db-connection"}


def object_lock_api(name: str) -> LockApi | None:
    """The API of a lock object's constructor, by the name the analyser gives it."""
    if name == "redis.Redis.lock":
        return REDIS_CLIENT_LOCK
    if name == "cache.lock":
        return CACHE_LOCK
    if name == "huey.lock_task":
        return huey_lock("cluster")
    return LOCK_CONSTRUCTORS.get(name)

#: a path whose name calls it a lock (a file only its name says is one)
LOCKISH_PATH = re.compile(r"(?i)lock|lck|pid|running|mutex|busy|semaphore")
