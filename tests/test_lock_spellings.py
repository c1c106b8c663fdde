"""Lock spellings real code uses, each beside a look-alike that takes no lock."""
from pathlib import Path

import pytest

from conftest import run_analysis
from jobsafe.sources.python.module import parse_module

JOB = '''import redis

r = redis.Redis()


def main():
{body}
    print("working")


if __name__ == "__main__":
    main()
'''

WATCHED = '''    pipe = r.pipeline()
    try:
        pipe.watch("lock:sync")
        if pipe.get("lock:sync"):
            return
        pipe.multi()
        pipe.set("lock:sync", "me", {ttl})
        pipe.execute()
    except redis.WatchError:
        return
    finally:
        pipe.reset()'''


WITH_PIPELINE = '''    with r.pipeline() as pipe:
        try:
            pipe.watch("lock:sync")
            if pipe.get("lock:sync"):
                return
            pipe.multi()
            pipe.set("lock:sync", "me", 600)
            pipe.execute()
        except redis.WatchError:
            return'''


@pytest.mark.parametrize("body, expected", [
    (WITH_PIPELINE, [("redis-key", 600.0)]),
    # Redis's optimistic check-and-set: the transaction fails if another client set the
    # key after WATCH; the TTL is set's third argument
    (WATCHED.format(ttl="600"), [("redis-key", 600.0)]),
    (WATCHED.format(ttl="ex=600"), [("redis-key", 600.0)]),
    (WATCHED.format(ttl="px=600000"), [("redis-key", 600.0)]),
    (WATCHED.format(ttl="").replace('"me", )', '"me")'), [("redis-key", None)]),
    ('    if not r.set("lock:sync", "me", 600, nx=True):\n        return',
     [("redis-key", 600.0)]),
    # no WATCH of that key, no NX: a plain write
    (WATCHED.format(ttl="600").replace('pipe.watch("lock:sync")', 'pipe.watch("other")'), []),
    ('    r.set("lock:sync", "me", 600)', []),
])
def test_redis_set_locks(write_tree, body, expected):
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "jobs/sync.py": JOB.format(body=body)})
    [job] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.ttl_seconds) for lock in job.all_locks] == expected


DJANGO_JOB = '''from django.db import connection, transaction
from psycopg2.sql import SQL, Identifier

from app.models import Task


def main():
    with transaction.atomic():
{body}
    print("working")


if __name__ == "__main__":
    main()
'''

CLAIM_SQL = '"UPDATE app_task SET owner = %s WHERE id IN (SELECT id FROM app_task ' \
    'WHERE owner IS NULL LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id"'


@pytest.mark.parametrize("body, expected", [
    # psycopg2's composed SQL: the template, its placeholders filled with what they quote
    ('        connection.cursor().execute(SQL("LOCK {} IN EXCLUSIVE MODE NOWAIT").format(\n'
     '            Identifier("app_task")))', [("db-row-lock", "app_task")]),
    ('        connection.cursor().execute("LOCK {} IN EXCLUSIVE MODE".format("app_task"))',
     [("db-row-lock", "app_task")]),
    ('        connection.cursor().execute(SQL("SELECT * FROM {}").format(Identifier("t")))', []),
    # a claim in SQL held by a local name, run by Django's Manager.raw
    (f'        query = {CLAIM_SQL}\n        rows = list(Task.objects.raw(query, ["me"]))\n'
     '        if not rows:\n            return', [("db-claim", "app_task")]),
    (f'        query = {CLAIM_SQL}\n        cur = connection.cursor()\n'
     '        cur.execute(query, ["me"])\n        if not cur.fetchall():\n            return',
     [("db-claim", "app_task")]),
    # an update that clears the owner, its count checked: the release, not a claim
    ('        rows = Task.objects.filter(pk=1, owner="me").update(owner=None)\n'
     '        if rows != 1:\n            raise RuntimeError("lost the claim")', []),
])
def test_database_lock_spellings(write_tree, body, expected):
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/models.py": "from django.db import models\n\n\n"
        "class Task(models.Model):\n    owner = models.CharField(max_length=50, null=True)\n",
        "jobs/sync.py": DJANGO_JOB.format(body=body),
    }
    root = write_tree(files)
    [job] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.key) for lock in job.all_locks] == expected


PID_LOCK = '''import fcntl
import os
{imports}


class PidLock:
    def __init__(self, target):
        self.target = target

    def _try_lock(self, pid):
        fd = os.open(self.target, os.O_CREAT | os.O_RDWR, 0o644)
        try:
{lock}
            old = os.read(fd, 20)
            if old and os.access("/proc/%d" % int(old), os.F_OK):
                return int(old)
            os.lseek(fd, 0, os.SEEK_SET)
            os.write(fd, str(pid).encode())
            return pid
        finally:
            os.close(fd)

    def __enter__(self):
        if self._try_lock(os.getpid()) != os.getpid():
            raise SystemExit("busy")
        return self

    def __exit__(self, *exc):
        os.unlink(self.target)
'''

PID_JOB = '''from app.pidlock import PidLock


def main():
    with PidLock("/var/run/sync.pid"):
        print("working")


if __name__ == "__main__":
    main()
'''

HELPERS = '''import fcntl


def exclusive(fd):
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def note(fd):
    print("opened", fd)
'''


@pytest.mark.parametrize("imports, lock, expected", [
    # the PID in the file is the lock; the flock only makes reading and writing it atomic
    ("", "            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)", ["pid-file"]),
    ("", "            fcntl.lockf(fd, fcntl.LOCK_EX)", ["pid-file"]),
    # the flock taken by a project helper given the descriptor
    ("from app.fdtools import exclusive", "            exclusive(fd)", ["pid-file"]),
    ("from app import fdtools", "            fdtools.exclusive(fd)", ["pid-file"]),
    # a helper given the descriptor that locks nothing: no lock is seen
    ("from app.fdtools import note", "            note(fd)", []),
])
def test_pid_written_under_a_short_kernel_lock(write_tree, imports, lock, expected):
    assert _pid_locks_held(write_tree, PID_LOCK.format(imports=imports, lock=lock)) == expected


FLOCKED = "            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)"


@pytest.mark.parametrize("old, new, expected", [
    # the PID's origin, not its name: a parameter every caller gives os.getpid()
    ("def _try_lock(self, pid):", "def _try_lock(self, owner):", ["pid-file"]),
    # the file's own old content written back: not this process's id
    ("str(pid)", "str(me)", []),
    # something else written: a marker, not a process id
    ("os.write(fd, str(pid).encode())", 'os.write(fd, b"busy")', []),
])
def test_pid_lock_follows_the_value_not_its_name(write_tree, old, new, expected):
    text = PID_LOCK.format(imports="", lock=FLOCKED).replace(old, new)
    if new == "def _try_lock(self, owner):":
        text = text.replace("str(pid)", "str(owner)").replace("return pid", "return owner")
    if new == "str(me)":  # a value of the file's own: me = the old content
        text = text.replace("os.lseek(fd, 0, os.SEEK_SET)", "me = old\n            "
                            "os.lseek(fd, 0, os.SEEK_SET)")
    assert _pid_locks_held(write_tree, text) == expected


def _pid_locks_held(write_tree, pidlock: str) -> list[str]:
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/fdtools.py": HELPERS,
        "app/pidlock.py": pidlock,
        "jobs/sync.py": PID_JOB,
    })
    [job] = run_analysis(root).project.jobs
    held = [lock for lock in job.all_locks if lock.span.path == "jobs/sync.py"]
    assert all(lock.scope == "host" and lock.ttl_seconds is None and lock.release == "with"
               and lock.stale_handling == "pid-check" for lock in held)
    return [lock.kind for lock in held]


GUARD = '''import fcntl
import os


class Guard:
    def __init__(self, path, auto=True):
        self.fh = open(path + ".flock", "w")
        self._exclusive()
        if auto:
            self.start()

    def _exclusive(self):
        fcntl.flock(self.fh, fcntl.LOCK_EX)

    def _unlock(self):
{unlock}

    def start(self):
        self._unlock()

    def report(self):
        print(self.fh.name)
'''

GUARD_JOB = '''from app.guard import Guard


def main():
    guard = Guard("/var/run/sync", auto=False)
    print("checking")
    guard.{method}()
    print("working")


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("unlock, method, released_at", [
    # a later method of the object lets go of the flock it took when made: held until there
    ("        fcntl.flock(self.fh, fcntl.LOCK_UN)\n        self.fh.close()", "start", 7),
    ("        self.fh.close()", "start", 7),
    ("        os.close(self.fh.fileno())", "start", 7),
    # a method that lets nothing go: held until main() returns and drops the object
    ("        self.fh.close()", "report", None),
    ("        print('kept')", "start", None),
])
def test_a_later_method_of_the_object_lets_its_lock_go(write_tree, unlock, method, released_at):
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/guard.py": GUARD.format(unlock=unlock),
        "jobs/sync.py": GUARD_JOB.format(method=method),
    })
    [job] = run_analysis(root).project.jobs
    [lock] = [lock for lock in job.all_locks if lock.span.path == "jobs/sync.py"]
    assert (lock.kind, lock.span.line) == ("flock", 5)
    if released_at is None:
        assert (lock.release, lock.scope_lines[1]) == ("finally", 8)
    else:
        assert (lock.release, lock.scope_lines[1]) == ("plain", released_at)


@pytest.mark.parametrize("use, released", [
    # the object never leaves main(): dropped when main() returns, its file closed
    ("    guard.report()", "finally"),
    ("    print(guard.fh.name)", "finally"),
    # it leaves: returned, stored, passed on, made global — held for as long as that lasts
    ("    return guard", "process-exit"),
    ("    KEPT.append(guard)", "process-exit"),
    ("    print(guard)", "process-exit"),
    ("    global guard", "process-exit"),
])
def test_an_object_dropped_on_return_lets_its_lock_go(write_tree, use, released):
    job = ("from app.guard import Guard\n\nKEPT = []\n\n\ndef main():\n"
           + ("    global guard\n" if "global" in use else "")
           + '    guard = Guard("/var/run/sync", auto=False)\n'
           + ("" if "global" in use else use + "\n")
           + "    print('working')\n\n\nif __name__ == '__main__':\n    main()\n")
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/guard.py": GUARD.format(unlock="        pass"),
        "jobs/sync.py": job,
    })
    [job_] = run_analysis(root).project.jobs
    [lock] = [lock for lock in job_.all_locks if lock.span.path == "jobs/sync.py"]
    assert lock.kind == "flock" and lock.release == released


# -- oslo.db's compare-and-set claim, reached through the ways OpenStack projects reach it

OSLO_BACKEND = '''from oslo_db.sqlalchemy import enginefacade, update_match

from app.models import Trigger


def model_query(model):
    return enginefacade.writer.get_sessionmaker()().query(model)


def claim_trigger(trigger_id, due_at):
{claim}
'''

CLAIM_BY_EXCEPTION = '''    specimen = Trigger(id=trigger_id, next_execution_time=due_at)
    try:
        model_query(Trigger).update_on_match(specimen=specimen, surrogate_key="id",
                                             values={"next_execution_time": None})
    except update_match.NoRowsMatched:
        return False
    return True'''

CLAIM_BY_COUNT = '''    specimen = Trigger(id=trigger_id, next_execution_time=due_at)
    try:
        trigger = model_query(Trigger).update_on_match(specimen=specimen, surrogate_key="id",
                                                       values={"next_execution_time": None})
        return trigger, 1
    except update_match.NoRowsMatched:
        return None, 0'''

FACADES = {
    # oslo.db picks the backend module by a name in a mapping (a module constant)
    "mapping": 'from oslo_db import api as db_api\n\n_BACKEND_MAPPING = {"sqlalchemy": '
               '"app.db.backend"}\nIMPL = db_api.DBAPI("sqlalchemy", backend_mapping='
               '_BACKEND_MAPPING)\n',
    "inline mapping": 'from oslo_db.api import DBAPI\n\nIMPL = DBAPI("sqlalchemy", '
                      'backend_mapping={"sqlalchemy": "app.db.backend"})\n',
    "importlib": 'import importlib\n\nIMPL = importlib.import_module("app.db.backend")\n',
    "import_string": 'from django.utils.module_loading import import_string\n\n'
                     'IMPL = import_string("app.db.backend")\n',
    "plain import": 'from app.db import backend as IMPL\n',
}

CALLERS = {
    "tested": '    if not db_api.claim_trigger(1, now):\n        return',
    "count": '    _, claimed = db_api.claim_trigger(1, now)\n    if claimed != 1:\n        return',
    "helper": '    if not _claim(now):\n        return',
    # the answer dropped: the claim guards nothing of this job's
    "discarded": '    db_api.claim_trigger(1, now)',
}


@pytest.mark.parametrize("facade", FACADES)
@pytest.mark.parametrize("caller, claim, expected", [
    ("tested", CLAIM_BY_EXCEPTION, ["db-claim"]),
    ("count", CLAIM_BY_COUNT, ["db-claim"]),
    ("helper", CLAIM_BY_EXCEPTION, ["db-claim"]),
    ("discarded", CLAIM_BY_EXCEPTION, []),
])
def test_oslo_db_claims_through_a_backend_chosen_by_name(write_tree, facade, caller, claim,
                                                         expected):
    job = ("from datetime import datetime\n\nfrom app.db import api as db_api\n\n\n"
           "def _claim(now):\n    return db_api.claim_trigger(1, now)\n\n\n"
           f"def main():\n    now = datetime.now()\n{CALLERS[caller]}\n    print('fire')\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({
        "crontab": "* * * * * timeout 50s python3 /srv/jobs/fire.py\n",
        "app/__init__.py": "", "app/db/__init__.py": "",
        "app/models.py": "class Trigger:\n    pass\n",
        "app/db/api.py": FACADES[facade] + "\n\ndef claim_trigger(trigger_id, due_at):\n"
                         "    return IMPL.claim_trigger(trigger_id, due_at)\n",
        "app/db/backend.py": OSLO_BACKEND.format(claim=claim),
        "jobs/fire.py": job,
    })
    analysis = run_analysis(root)
    [job_] = analysis.project.jobs
    at_entry = [lock.kind for lock in job_.all_locks if lock.span.path == "jobs/fire.py"]
    assert at_entry == expected
    assert [f.rule for f in analysis.findings] == ([] if expected else ["JOB101"])


def test_a_name_that_imports_nothing_of_the_tree_is_no_module(write_tree):
    """``import_module`` of a library module (or of a name only known at run time) gives
    nothing to follow: the job is unguarded."""
    root = write_tree({
        "crontab": "* * * * * timeout 50s python3 /srv/jobs/fire.py\n",
        "app/__init__.py": "", "app/db/__init__.py": "",
        "app/models.py": "class Trigger:\n    pass\n",
        "app/db/api.py": "import importlib\nimport os\n\nIMPL = importlib.import_module("
                         "os.environ['DB_BACKEND'])\n\n\ndef claim_trigger(trigger_id, due_at):"
                         "\n    return IMPL.claim_trigger(trigger_id, due_at)\n",
        "app/db/backend.py": OSLO_BACKEND.format(claim=CLAIM_BY_EXCEPTION),
        "jobs/fire.py": "from app.db import api as db_api\n\n\ndef main():\n"
                        "    if not db_api.claim_trigger(1, None):\n        return\n\n\n"
                        "if __name__ == '__main__':\n    main()\n",
    })
    assert [f.rule for f in run_analysis(root).findings] == ["JOB101"]


# -- a key written only if absent is a lock when it is used as one, not when it caches data

CACHE_JOB = '''import os

import redis
from django.core.cache import cache

r = redis.Redis()


def main():
    locales = ["de", "en"]
{body}
    print("working")


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("body, kinds, rules", [
    # cache population: the first writer wins, nobody asks who won
    ('    cache.add("dashboard:locales", sorted(locales), 3600)', [], []),
    ('    cache.add(f"report:{locales[0]}", locales, 86400 * 30)', [], []),
    ('    r.set("stats:locales", ",".join(locales), nx=True, ex=60)', [], []),
    # a marker under a lock's name, its answer ignored: a lock whose result is not checked
    ('    cache.add("sync-lock", True, 240)', ["cache-key"], ["JOB215"]),
    ('    cache.add("sync:running", os.getpid(), 240)', ["cache-key"], ["JOB215"]),
    ('    r.set("lock:sync", 1, nx=True, ex=240)', ["redis-key"], ["JOB215"]),
    # the answer decides: a lock, whatever the value
    ('    if not cache.add("dashboard:locales", sorted(locales), 240):\n        return',
     ["cache-key"], []),
])
def test_a_key_added_if_absent_is_a_lock_only_when_used_as_one(write_tree, body, kinds, rules):
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "jobs/sync.py": CACHE_JOB.format(body=body)})
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    assert [lock.kind for lock in job.all_locks] == kinds
    assert sorted(f.rule for f in analysis.findings if f.rule != "JOB101") == rules
    assert any(f.rule == "JOB101" for f in analysis.findings) == (not kinds)


# -- a key set only if absent that no run deletes: every caller keeps it its whole TTL

MARKER = '''import datetime as dt

import redis
from django.core.cache import cache

r = redis.Redis()
DAY = 24 * 60 * 60


def allowance(user):
{body}
    return "sent"
'''


@pytest.mark.parametrize("body, rules", [
    # a once-a-day allowance (pretalx), in any spelling of the day: not a lock a crash
    # leaves behind, whatever its TTL
    (('    if not cache.add(f"free:{user}", True, timeout=dt.timedelta(hours=24)'
      '.total_seconds()):\n        return None'), []),
    ('    if not cache.add(f"free:{user}", True, DAY * 2):\n        return None', []),
    ('    if not r.set(f"free:{user}", 1, nx=True, ex=DAY):\n        return None', []),
    # deleted when the work is done: a crash leaves it held for the day
    (('    if not cache.add(f"free:{user}", True, DAY * 2):\n        return None\n'
      '    try:\n        print(user)\n    finally:\n        cache.delete(f"free:{user}")'),
     ["JOB205"]),
])
def test_a_key_no_run_deletes_is_no_lock_a_crash_leaves_behind(write_tree, body, rules):
    root = write_tree({"app/notify.py": MARKER.format(body=body)})
    analysis = run_analysis(root)
    assert [lock.kind for lock in analysis.project.code_locks] in (["cache-key"], ["redis-key"])
    assert [f.rule for f in analysis.findings] == rules


def test_a_key_no_run_deletes_outlasting_the_interval_keeps_every_run_out(write_tree):
    """Scheduled more often than its TTL, the same marker blocks runs after every run,
    not only after a crash, and the message says so."""
    root = write_tree({
        "crontab": "*/10 * * * * timeout 9m python3 /srv/jobs/poll.py\n",
        "jobs/poll.py": "from django.core.cache import cache\n\n\ndef main():\n"
                        "    if not cache.add('lock:poll', 1, 3600):\n        return\n"
                        "    print('polling')\n\n\nif __name__ == '__main__':\n    main()\n"})
    [finding] = run_analysis(root).findings
    assert finding.rule == "JOB205"
    assert "nothing deletes it, so every run blocks the next 5 runs" in finding.message


# -- a try-lock's flag handed through a wrapper's **kwargs (AWX's advisory_lock)

PGLOCK_WRAPPER = '''from contextlib import contextmanager

from django_pglocks import advisory_lock as django_pglocks_advisory_lock


@contextmanager
def advisory_lock(*args, lock_session_timeout_milliseconds=0, **kwargs):
    with django_pglocks_advisory_lock(*args, **kwargs) as internal_lock:
        yield internal_lock
'''


@pytest.mark.parametrize("given, rules", [
    ("wait=False", []),  # tries once and yields the answer, which the job tests
    ("wait=True", ["JOB102"]),
    ("lock_session_timeout_milliseconds=500", ["JOB102"]),  # django-pglocks waits by default
])
def test_a_try_lock_flag_handed_on_through_kwargs(write_tree, given, rules):
    root = write_tree({
        "app/__init__.py": "", "app/pglock.py": PGLOCK_WRAPPER,
        "app/celery.py": "from celery import Celery\n\napp = Celery('app')\n"
                         "app.conf.beat_schedule = {'sync': {'task': 'app.tasks.sync', "
                         "'schedule': 900.0}}\n",
        "app/tasks.py": "from celery import shared_task\n\nfrom app.pglock import advisory_lock\n"
                        "\n\n@shared_task\ndef sync():\n"
                        f"    with advisory_lock('sync', {given}) as acquired:\n"
                        "        if acquired is False:\n            return\n"
                        "        print('syncing')\n"})
    assert [f.rule for f in run_analysis(root).findings] == rules


# -- a source folder the build installs under the project's name (autotools' lib/ as the
# package) is imported by that name

INSTALLED_HELPER = '''import fcntl

_HANDLES = []


def take(path):
    fh = open(path, "w")
    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _HANDLES.append(fh)
    return fh
'''


@pytest.mark.parametrize("origin, folders, guarded", [
    ("https://github.com/acme/widget.git", ("lib",), True),
    ("git@github.com:acme/widget.git", ("lib",), True),
    # the project is called something else: `widget` is a library, not this tree
    ("https://github.com/acme/gadget.git", ("lib",), False),
    # two folders that could be the package: not guessed
    ("https://github.com/acme/widget.git", ("lib", "python"), False),
])
def test_a_source_folder_installed_under_the_projects_name(write_tree, origin, folders,
                                                           guarded):
    files = {".git/config": f'[remote "origin"]\n\turl = {origin}\n',
             "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/run.py\n",
             "jobs/run.py": "from widget import locks\n\n\ndef main():\n"
                            "    locks.take('/var/lock/run')\n    print('work')\n\n\n"
                            "if __name__ == '__main__':\n    main()\n"}
    for folder in folders:
        files[f"{folder}/__init__.py"] = ""
        files[f"{folder}/locks.py"] = INSTALLED_HELPER
    analysis = run_analysis(write_tree(files))
    [job] = analysis.project.jobs
    assert [lock.kind for lock in job.all_locks] == (["flock"] if guarded else [])
    assert any(f.rule == "JOB101" for f in analysis.findings) is not guarded


# -- a lock object a project factory makes and the job acquires: one lock, with the wait the
# acquisition gives and the TTL the factory is given through **kwargs

LOCK_FACTORY = '''import redis_lock
from django.core.cache import caches


def get_redis_lock(name, **kwargs):
    client = caches["redis"].client.get_client()
    return redis_lock.Lock(client, name, **kwargs)
'''


@pytest.mark.parametrize("made, acquired, expected", [
    ('get_redis_lock("sync-lock", expire=120)', "lock.acquire(timeout=5)", (5.0, 120.0)),
    ('get_redis_lock("sync-lock", expire=120)', "lock.acquire(blocking=False)", (None, 120.0)),
    # a TTL only the run knows: set, not missing
    ('get_redis_lock("sync-lock", expire=ttl)', "lock.acquire(timeout=5)", (5.0, -1.0)),
])
def test_a_lock_object_from_a_factory_is_one_lock(write_tree, made, acquired, expected):
    job = ("import os\n\nfrom app.utils import get_redis_lock\n\n\ndef main():\n"
           "    ttl = int(os.environ['TTL'])\n"
           f"    lock = {made}\n    if not {acquired}:\n        return\n"
           "    try:\n        print('work')\n    finally:\n        lock.release()\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 90s python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "", "app/utils.py": LOCK_FACTORY,
                       "jobs/sync.py": job})
    analysis = run_analysis(root)
    [lock] = analysis.project.jobs[0].all_locks
    assert (lock.wait_seconds, lock.ttl_seconds) == expected
    assert not analysis.findings


# -- peewee's spellings: a conditional update whose row count decides, and for_update()

PEEWEE_JOB = '''import os

from peewee import CharField, Model


class Job(Model):
    owner = CharField(null=True)


def claim(me):
    query = Job.update(owner=me).where(Job.id == 1, Job.owner.is_null())
    updated = query.execute()
    return Job.get_by_id(1) if updated else None


def main():
    me = str(os.getpid())
{body}
    print("working")


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("body, expected", [
    ('    if Job.update(owner=me).where(Job.id == 1, Job.owner.is_null()).execute() == 0:\n'
     '        return', [("db-claim", None)]),
    ('    if claim(me) is None:\n        return', [("db-claim", None)]),
    ('    rows = list(Job.select().where(Job.id == 1).for_update())\n'
     '    if not rows:\n        return', [("db-row-lock", True)]),
    ('    rows = list(Job.select().for_update("FOR UPDATE SKIP LOCKED"))\n'
     '    if not rows:\n        return', [("db-row-lock", False)]),
    # a plain write, its count unread; a select that locks nothing
    ('    Job.update(owner=me).where(Job.id == 1).execute()', []),
    ('    rows = list(Job.select().where(Job.id == 1).for_update(for_update=False))', []),
    ('    claim(me)', []),
])
def test_peewee_lock_spellings(write_tree, body, expected):
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "jobs/sync.py": PEEWEE_JOB.format(body=body)})
    [job] = run_analysis(root).project.jobs
    locks = [lock for lock in job.all_locks if lock.function == "main"]
    assert [(lock.kind, lock.blocking if lock.kind == "db-row-lock" else None)
            for lock in locks] == expected


# -- "did I claim it" helpers as real code returns the answer, and the chain black writes

CLAIM_HELPER = """from peewee import CharField, Model


class Mirror(Model):
    owner = CharField(null=True)


def claim(mirror_id, me):
    query = Mirror.update(owner=me).where(Mirror.id == mirror_id, Mirror.owner.is_null())
    updated = query.execute()
{answer}
"""


@pytest.mark.parametrize("answer, claimed", [
    ("    return Mirror.get_by_id(mirror_id) if updated else None", True),
    ("    return updated == 1", True),
    ("    return updated > 0", True),
    ("    return bool(updated)", True),
    # the claim's own count compared where it is returned (quay's update_sync_status,
    # mark_build_archived): the helper answers with it
    ("    return query.execute() == 1", True),
    ("    return (\n        query.execute()\n    ) > 0", True),
    ("    return bool(query.execute())", True),
    ("    if not updated:\n        return None\n    return Mirror.get_by_id(mirror_id)", True),
    # what a call is given: the row, or None (pulpcore's ``next(iter(qs), None)``)
    ("    return next(iter(range(updated)), None)", True),
    # the count is only logged, or quoted in a message: the helper answers nothing with it
    ("    print(updated)\n    return None", False),
    ("    return f'{updated} mirrors claimed'", False),
])
def test_a_claim_helper_answers_in_the_spellings_real_code_uses(write_tree, answer, claimed):
    helper = CLAIM_HELPER.format(answer=answer)
    if "query.execute()" in answer:  # the count is not kept in a name first
        helper = helper.replace("    updated = query.execute()\n", "")
    job = ("import os\n\nfrom app.mirrors import claim\n\n\ndef main():\n"
           "    if not claim(1, str(os.getpid())):\n        return\n    print('sync')\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "", "app/mirrors.py": helper, "jobs/sync.py": job})
    analysis = run_analysis(root)
    [job_] = analysis.project.jobs
    # taken where the caller tests the answer
    assert [(lock.kind, lock.span.path) for lock in job_.all_locks] == \
        ([("db-claim", "jobs/sync.py")] if claimed else [])
    assert any(f.rule == "JOB101" for f in analysis.findings) is not claimed


@pytest.mark.parametrize("update, claimed", [
    ("Deal.objects.filter(pk=deal_id, owner=None).update(owner='me')", True),
    ("self.model.objects.filter(pk=deal_id, owner=None).update(owner='me')", True),
    # by its key alone: the count says the row exists, not that this run got there first
    ("Deal.objects.filter(pk=deal_id).update(owner='me')", False),
    ("Deal.update(owner='me').where(Deal.id == deal_id).execute()", False),
    # an API client's ``crm.objects`` is no model manager
    ("client.crm.objects.basic_api.update(object_type='deals', object_id=deal_id, "
     "simple_public_object_input=deal)", False),
])
def test_a_model_manager_not_an_api_client(update, claimed):
    helper = ("from django.db import models\nfrom hubspot import HubSpot\n\n\n"
              "class Deal(models.Model):\n"
              "    owner = models.CharField(max_length=10, null=True)\n\n\n"
              "class Syncer:\n    model = Deal\n\n    def push(self, deal_id, deal=None):\n"
              "        client = HubSpot(access_token='t')\n"
              f"        result = {update}\n        if not result:\n            return None\n"
              "        return result\n")
    facts = parse_module("app/deals.py", helper)
    assert [lock.kind for lock in facts.units["Syncer.push"].locks] == \
        (["db-claim"] if claimed else [])


def test_a_claim_in_a_comprehension_s_condition(write_tree):
    """mistral's ``[job for job in jobs if self._capture(job)]``: the claims decide which
    jobs run."""
    job = ("import os\n\nfrom app.mirrors import claim\n\n\ndef main():\n"
           "    me = str(os.getpid())\n"
           "    mine = [m for m in range(3) if claim(m, me)]\n"
           "    if not mine:\n        return\n    print('sync', mine)\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "",
                       "app/mirrors.py": CLAIM_HELPER.format(answer="    return updated == 1"),
                       "jobs/sync.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [lock.kind for lock in job_.all_locks] == ["db-claim"]


def test_a_claim_tested_where_it_is_made_and_a_count_only_logged(write_tree):
    helper = CLAIM_HELPER.format(answer="    return None").replace(
        "    updated = query.execute()\n",
        "    if query.execute():\n        return Mirror.get_by_id(mirror_id)\n")
    helper += ("\n\ndef propagate(status):\n"
               "    return Mirror.update(owner=status).where(Mirror.owner.is_null()).execute()\n")
    job = ("import os\n\nfrom app.mirrors import claim, propagate\n\n\ndef main():\n"
           "    count = propagate('sync')\n    print('moved', count)\n"
           "    if not claim(1, str(os.getpid())):\n        return\n    print('sync')\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "", "app/mirrors.py": helper, "jobs/sync.py": job})
    [job_] = run_analysis(root).project.jobs
    # the claim, taken where its answer is tested; the bulk update's count decides nothing
    assert [(lock.kind, lock.span.path.rsplit("/", 1)[-1], lock.span.line)
            for lock in job_.all_locks] == [("db-claim", "sync.py", 9)]


@pytest.mark.parametrize("loop, storm", [
    # one claim retried until it is free, with no deadline
    ("    while True:\n        if claim(1, me):\n            break\n        time.sleep(1)", True),
    # a loop over work: each turn claims the item it fetched
    ("    while True:\n        item = next_item()\n        if not claim(item, me):\n"
     "            time.sleep(1)\n            continue\n        print('work', item)", False),
    # a loop that stops when it is refused, the answer kept and read back
    ("    while True:\n        state.taken = claim(1, me)\n        taken = state.taken\n"
     "        if taken is None:\n            break\n        print('work')\n        time.sleep(1)",
     False),
])
def test_a_spin_loop_is_one_lock_retried_not_a_loop_over_work(write_tree, loop, storm):
    job = ("import os\nimport time\n\nfrom app.mirrors import claim\n\n\n"
           "def next_item():\n    return int(time.time())\n\n\ndef main():\n"
           f"    me = str(os.getpid())\n    state = type('State', (), {{}})()\n{loop}\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    helper = CLAIM_HELPER.format(answer="    return updated == 1")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "", "app/mirrors.py": helper, "jobs/sync.py": job})
    analysis = run_analysis(root)
    assert any(f.rule == "JOB208" for f in analysis.findings) is storm


LEASED_CLAIM = """from datetime import datetime, timedelta

from peewee import CharField, DateTimeField, Model

LEASE = 60 * 60 * 12


class Mirror(Model):
    owner = CharField(null=True)
    expires_at = DateTimeField(null=True)


def claim(mirror, me, lease=LEASE):
    now = datetime.utcnow()
{check}
    expires = now + timedelta(seconds={seconds})
    query = Mirror.update(owner=me, expires_at=expires).where(
        Mirror.id == mirror.id, Mirror.owner == mirror.owner)
    return query.execute() == 1
"""


@pytest.mark.parametrize("check, seconds, ttl", [
    # the lease is read back as the claim's expiry: it expires by it
    ("    if mirror.owner and mirror.expires_at and now < mirror.expires_at:\n"
     "        return False", "LEASE", 43200.0),
    ("    if mirror.owner and now <= mirror.expires_at:\n        return False", "lease", 43200.0),
    # written, never compared: a note, not an expiry
    ("    print(mirror.expires_at)", "LEASE", None),
])
def test_a_claim_that_writes_its_lease(write_tree, check, seconds, ttl):
    job = ("import os\n\nfrom app.mirrors import claim\n\n\ndef main(mirror):\n"
           "    if not claim(mirror, str(os.getpid())):\n        return\n    print('sync')\n\n\n"
           "if __name__ == '__main__':\n    main(None)\n")
    root = write_tree({"crontab": "0 3 * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "",
                       "app/mirrors.py": LEASED_CLAIM.format(check=check, seconds=seconds),
                       "jobs/sync.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.ttl_seconds) for lock in job_.all_locks] == [("db-claim", ttl)]


def test_a_lease_from_a_time_the_caller_gives(write_tree):
    helper = LEASED_CLAIM.format(check="    if now <= mirror.expires_at:\n        return False",
                                 seconds="LEASE")
    helper = helper.replace("def claim(mirror, me, lease=LEASE):\n    now = datetime.utcnow()\n",
                            "def claim(mirror, me, now, lease=LEASE):\n")
    job = ("import os\nfrom datetime import datetime\n\nfrom app.mirrors import claim\n\n\n"
           "def main(mirror):\n    if not claim(mirror, str(os.getpid()), datetime.utcnow()):\n"
           "        return\n    print('sync')\n\n\nif __name__ == '__main__':\n    main(None)\n")
    root = write_tree({"crontab": "0 3 * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "", "app/mirrors.py": helper, "jobs/sync.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.ttl_seconds) for lock in job_.all_locks] == [("db-claim", 43200.0)]


@pytest.mark.parametrize("chain", [
    # black's layout: the model's name after the opening parenthesis, the steps below
    "    updated = (\n        Job.update(owner=me)\n"
    "        .where(Job.id == 1, Job.owner.is_null())\n        .execute()\n    )\n",
    "    updated = (\n        Job\n        .update(owner=me)\n"
    "        .where(Job.id == 1, Job.owner.is_null())\n        .execute()\n    )\n",
    "    updated = Job.update(owner=me).where(Job.id == 1, Job.owner.is_null()).execute()\n",
])
def test_a_claim_chain_over_lines_is_a_claim(write_tree, chain):
    body = chain + "    if updated != 1:\n        return"
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "jobs/sync.py": PEEWEE_JOB.format(body=body)})
    [job] = run_analysis(root).project.jobs
    assert [lock.kind for lock in job.all_locks if lock.function == "main"] == ["db-claim"]


# -- a row lock written as SQL and run by a project helper (``_fetchMulti(query, data)``),
# held in the caller's transaction; the statement chosen by a parameter says how it waits

SQL_RUNNER = """from app.context import context


def fetch_all(query, values):
    cursor = context.cnx.cursor()
    cursor.execute(query, values)
    rows = cursor.fetchall()
    cursor.close()
    return rows


def log_query(query, values):
    print(query, values)
    return [1]


def db_lock(name, wait=True):
    data = {{"name": name}}
    if wait:
        query = "SELECT name FROM locks WHERE name=%(name)s FOR UPDATE"
    else:
        query = "SELECT name FROM locks WHERE name=%(name)s FOR UPDATE SKIP LOCKED"
    {inner}
    if rows:
        return True
    raise LookupError(name)
"""


@pytest.mark.parametrize("inner, call, expected", [
    ("rows = fetch_all(query, data)", "db_lock('sync', wait=False)", ("main", False, True)),
    ("rows = fetch_all(query, data)", "db_lock('sync')", ("main", True, False)),
    ("rows = fetch_all(query, data)", "db_lock('sync', wait=WAIT)", ("main", False, True)),
    # its own transaction block lets go of the row before it returns: not the caller's
    ("with context.cnx.transaction():\n        rows = fetch_all(query, data)",
     "db_lock('sync', wait=False)", ("db_lock", True, False)),
    # a helper that does not run the statement it is given
    ("rows = log_query(query, data)", "db_lock('sync', wait=False)", None),
])
def test_row_lock_sql_run_by_a_project_helper(write_tree, inner, call, expected):
    job = ("from app.db import db_lock\n\nWAIT = False\n\n\ndef main():\n"
           f"    if not {call}:\n        return\n    print('sync')\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "",
                       "app/context.py": "import threading\ncontext = threading.local()\n",
                       "app/db.py": SQL_RUNNER.format(inner=inner), "jobs/sync.py": job})
    analysis = run_analysis(root)
    [job_] = analysis.project.jobs
    locks = [(lock.kind, lock.function, lock.blocking, lock.try_lock)
             for lock in job_.all_locks]
    if expected is None:
        assert locks == []
        assert any(f.rule == "JOB101" for f in analysis.findings)
    else:
        assert locks == [("db-row-lock", *expected)]
        assert not [f for f in analysis.findings if f.rule == "JOB215"]


# -- a function reached through a late-bound proxy (peewee's ``Proxy``, initialised at
# start-up with what the database supports), and a lock taken on one branch of ``a if p
# else b`` as the caller's argument picks it

PROXY_DB = """{imports}


def real_for_update(query, skip_locked=False):
    return query.for_update("FOR UPDATE SKIP LOCKED") if skip_locked else query.for_update()


def null_for_update(query, skip_locked=False):
    return query


def real_xact_lock(lock_id):
    db.execute_sql("SELECT pg_advisory_xact_lock(%s)", (lock_id,))


def null_xact_lock(lock_id):
    pass


SPECIALISED = {{"sqlite": null_for_update}}


class CallableProxy({base}):
    def __call__(self, *args, **kwargs):
        return self.obj(*args, **kwargs)


db = {base}()
db_for_update = CallableProxy()
db_xact_lock = CallableProxy()


class Job(Model):
    owner = CharField(null=True)


def configure(driver):
    db_for_update.initialize({for_update})
    db_xact_lock.initialize(null_xact_lock if driver == "sqlite" else real_xact_lock)
"""


@pytest.mark.parametrize("imports, base, for_update", [
    ("from peewee import *", "Proxy", "SPECIALISED.get(driver, real_for_update)"),
    ("from peewee import CharField, Model, Proxy", "Proxy", "real_for_update"),
    ("import peewee\nfrom peewee import CharField, Model", "peewee.Proxy",
     "real_for_update if driver != 'sqlite' else null_for_update"),
    ("from peewee import CharField, DatabaseProxy, Model", "DatabaseProxy",
     "SPECIALISED[driver]"),
])
@pytest.mark.parametrize("statement, expected", [
    ("row = db_for_update(Job.select().where(Job.id == 1)).get()", (True, False)),
    ("row = db_for_update(Job.select().where(Job.id == 1), skip_locked=True).get()",
     (False, True)),
    ("db_xact_lock(42)", "pg-advisory"),
])
def test_a_lock_reached_through_a_late_bound_proxy(write_tree, imports, base, for_update,
                                                  statement, expected):
    if for_update == "SPECIALISED[driver]" and "for_update" not in statement:
        pytest.skip("one spelling of the choice is enough for the advisory lock")
    job = ("from app.db import Job, db, db_for_update, db_xact_lock\n\n\ndef main():\n"
           f"    with db.atomic():\n        {statement}\n        print('sync')\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    if for_update == "SPECIALISED[driver]":
        # a lookup with no default: only the listed driver, which locks nothing
        expected = None
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "",
                       "app/db.py": PROXY_DB.format(imports=imports, base=base,
                                                    for_update=for_update),
                       "jobs/sync.py": job})
    [job_] = run_analysis(root).project.jobs
    taken = [lock for lock in job_.all_locks if lock.function == "main"]
    if expected is None:
        assert taken == []
    elif expected == "pg-advisory":
        assert [(lock.kind, lock.release) for lock in taken] == [("pg-advisory", "transaction")]
    else:
        assert [(lock.kind, lock.blocking, lock.try_lock) for lock in taken] == \
            [("db-row-lock", *expected)]


def test_a_class_with_its_own_initialize_is_no_proxy(write_tree):
    helper = PROXY_DB.format(imports="from peewee import CharField, Model", base="Holder",
                             for_update="real_for_update")
    helper = helper.replace("class CallableProxy(Holder):",
                            "class Holder:\n    def initialize(self, obj):\n"
                            "        self.other = obj\n\n\nclass CallableProxy(Holder):")
    job = ("from app.db import Job, db_for_update\n\n\ndef main():\n"
           "    row = db_for_update(Job.select().where(Job.id == 1)).get()\n"
           "    print(row)\n\n\nif __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "", "app/db.py": helper, "jobs/sync.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [lock for lock in job_.all_locks if lock.function == "main"] == []


# -- a lock library's decorator, and Redis's fork valkey under its own name

CELERY_TASKS = '''from celery import shared_task
{imports}


{decorators}
def sync_contacts():
    print("syncing")
'''


@pytest.mark.parametrize("imports, decorators, expected", [
    ("from mitol.common.decorators import single_task",
     "@shared_task\n@single_task(30)", [("redis-lock", 30.0)]),
    ("from mitol.common import decorators",
     "@shared_task\n@decorators.single_task(10, key='contacts')", [("redis-lock", 10.0)]),
    # a project decorator of the same name that takes no lock
    ("def single_task(timeout):\n    return lambda f: f",
     "@shared_task\n@single_task(30)", []),
])
def test_a_lock_librarys_decorator(write_tree, imports, decorators, expected):
    root = write_tree({
        "app/__init__.py": "", "app/tasks.py": CELERY_TASKS.format(imports=imports,
                                                                    decorators=decorators),
        "app/celery.py": "from celery import Celery\n\napp = Celery('app')\n"
                         "app.conf.beat_schedule = {'sync': {'task': 'app.tasks.sync_contacts',"
                         " 'schedule': 300.0}}\n",
    })
    [job] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.ttl_seconds) for lock in job.all_locks] == expected


@pytest.mark.parametrize("imports, lock", [
    ("import valkey as redis\nfrom valkey.lock import Lock",
     "Lock(redis.Valkey(), 'sync', timeout=60, blocking_timeout=1)"),
    ("import valkey", "valkey.StrictRedis().lock('sync', timeout=60, blocking_timeout=1)"),
])
def test_valkey_is_redis_under_another_name(write_tree, imports, lock):
    job = (f"{imports}\n\n\ndef main():\n    lock = {lock}\n    if not lock.acquire():\n"
           "        return\n    try:\n        print('work')\n    finally:\n"
           "        lock.release()\n\n\nif __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 50s python3 /srv/jobs/sync.py\n",
                       "jobs/sync.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.ttl_seconds) for lock in job_.all_locks] == [("redis-lock", 60.0)]


GET_OR_CREATE = '''def secret(name):
    value = r.get(name)
    if value is not None:
        return value
    new_value = os.urandom(16).hex()
    if r.setnx(name, new_value):
        return new_value
    return r.get(name)
'''


@pytest.mark.parametrize("body, helpers, expected", [
    # an expiry at an absolute time: set, its length not known statically
    ('    if not r.set("lock:sync", "me", nx=True, exat=int(time.time()) + 600):\n'
     '        return', "", [("redis-key", -1.0)]),
    # get-or-create: a value stored for good and read back is no lock
    ('    key = secret("app:secret")', GET_OR_CREATE, []),
    # a lock a class takes in one method and lets go of in another keeps being one
    ('    guard = Guard("sync")\n    if not guard.acquire():\n        return',
     'class Guard:\n    def __init__(self, key):\n        self.key = key\n'
     '        self.token = os.urandom(8).hex()\n\n    def acquire(self):\n'
     '        return r.set(self.key, self.token, nx=True)\n\n    def release(self):\n'
     '        r.delete(self.key)\n', [("redis-key", None)]),
])
def test_set_if_absent_keys_that_are_locks_and_that_are_not(write_tree, body, helpers,
                                                           expected):
    job = ("import os\nimport time\n\nimport redis\n\nr = redis.Redis()\n\n\n" + helpers +
           f"\n\ndef main():\n{body}\n    print('work')\n\n\nif __name__ == '__main__':\n"
           "    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "jobs/sync.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.ttl_seconds, lock.function) for lock in job_.all_locks] == [
        (*e, "main") for e in expected]


@pytest.mark.parametrize("lock, expected", [
    ('apt_pkg.FileLock("/var/lib/apt/lists/lock")', [("lockf", "host", "with")]),
    ("apt_pkg.SystemLock()", [("lockf", "host", "with")]),
    ('apt_pkg.Cache()', []),
])
def test_python_apts_locks(write_tree, lock, expected):
    job = (f"import apt_pkg\n\n\ndef main():\n    with {lock}:\n        print('update')\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/upd.py\n",
                       "jobs/upd.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.scope, lock.release) for lock in job_.all_locks] == expected


# -- a claim taken two calls down through classmethods, raising when another run holds it,
# and a sweeper elsewhere in the tree that lets old claims go

CLAIM_SERVICE = '''import contextlib
import os

from app.models import Entry, db


class QueueService:
    @classmethod
    def _claim(cls, entry_id):
        me = str(os.getpid())
        db.session.query(Entry).filter(Entry.id == entry_id, Entry.locked_by.is_(None)).update(
            {"locked_by": me})
        entry = db.session.query(Entry).filter(Entry.id == entry_id).first()
        if entry.locked_by != me:
            raise RuntimeError("claimed by another run")

    @classmethod
    def _claim_with_retries(cls, entry_id):
        return cls._claim(entry_id)

    @classmethod
    @contextlib.contextmanager
    def claimed(cls, entry_id):
        cls._claim_with_retries(entry_id)
        try:
            yield
        finally:
            db.session.query(Entry).filter(Entry.id == entry_id).update({"locked_by": None})
'''

SWEEPER = '''import datetime

from app.models import {model}, db


def remove_stale_claims():
    cutoff = datetime.datetime.now() - datetime.timedelta(minutes=4)
    for entry in {model}.query.filter({model}.locked_at <= cutoff).all():
        entry.locked_by = None
        db.session.add(entry)
    db.session.commit()
'''


#: mistral's job store: the rows to claim are those never claimed or claimed long ago, so
#: an old claim is taken over after the limit
PICKER = '''import datetime

import sqlalchemy as sa
from django.db.models import Q

from app.models import {model}, db


def claimable(now):
    column = {model}.locked_at
    cutoff = now - datetime.timedelta(minutes=4)
    return {query}
'''
SA_QUERY = "db.session.query({model}).filter(sa.or_({empty}, {older})).all()"


def _picker(model: str, empty: str, older: str) -> str:
    query = SA_QUERY.format(model=model, empty=empty, older=older)
    return PICKER.format(model=model, query=query)


@pytest.mark.parametrize("sweeper, expected, rules", [
    (None, ("none", None), ["JOB206"]),
    (SWEEPER.format(model="Entry"), ("age-check", 240.0), []),
    # a sweeper of another model lets these claims go no sooner
    (SWEEPER.format(model="Other"), ("none", None), ["JOB206"]),
    (_picker("Entry", "column == sa.null()", "column <= cutoff"), ("age-check", 240.0), []),
    (_picker("Entry", "Entry.locked_at.is_(None)", "Entry.locked_at < cutoff"),
     ("age-check", 240.0), []),
    (_picker("Entry", "column == None", "Entry.locked_at <= cutoff"), ("age-check", 240.0), []),
    (PICKER.format(model="Entry", query="Entry.objects.filter(Q(locked_at__isnull=True) | "
                                        "Q(locked_at__lt=cutoff))"), ("age-check", 240.0), []),
    # empty in one column, old in another: no claim is taken over by age
    (_picker("Entry", "Entry.locked_by == None", "column <= cutoff"), ("none", None),
     ["JOB206"]),
    (_picker("Other", "column == sa.null()", "column <= cutoff"), ("none", None), ["JOB206"]),
    # a date to compare with, not a cutoff computed back from now: no claim's age
    (_picker("Entry", "column == sa.null()", "column <= now"), ("none", None), ["JOB206"]),
    (PICKER.format(model="Entry", query="Entry.objects.filter(Q(locked_at__lte=now) | "
                                        "Q(locked_at__isnull=True))"), ("none", None), ["JOB206"]),
])
def test_a_claim_two_calls_down_and_its_sweeper(write_tree, sweeper, expected, rules):
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/work.py\n",
        "app/__init__.py": "", "app/models.py": "db = None\n\n\nclass Entry:\n    pass\n\n\n"
                                                 "class Other:\n    pass\n",
        "app/queue.py": CLAIM_SERVICE,
        "jobs/work.py": "from app.queue import QueueService\n\n\ndef main():\n"
                        "    with QueueService.claimed(1):\n        print('work')\n\n\n"
                        "if __name__ == '__main__':\n    main()\n",
    }
    if sweeper:
        files["app/sweeper.py"] = sweeper
    analysis = run_analysis(write_tree(files))
    [job] = analysis.project.jobs
    [lock] = job.all_locks
    assert (lock.kind, lock.span.path, lock.span.line) == ("db-claim", "jobs/work.py", 5)
    assert (lock.stale_handling, lock.ttl_seconds) == expected
    assert sorted(f.rule for f in analysis.findings) == rules


# -- a helper that hands back a locking query: the caller runs it, in its transaction

LOCK_OBJECTS = '''from django.db import transaction

from app.models import Stock


def refreshed():
    with transaction.atomic():
        return Stock.objects.select_for_update().get(pk=1)


def for_update(qs):
    return qs.order_by("pk").select_for_update(of=("self",))


def stock_qs_for_update():
    return for_update(Stock.objects.all())


def stock_for_update(pk):
    return for_update(Stock.objects.filter(pk=pk)).first()
'''


@pytest.mark.parametrize("body, expected", [
    ("        rows = list(stock_qs_for_update().filter(id__in=[1, 2]))", [("db-row-lock", 13)]),
    ("        rows = list(for_update(Stock.objects.filter(id=1)))", [("db-row-lock", 13)]),
    # the rows a helper's locking query fetched, handed back (quay's _item_by_id_for_update)
    ("        rows = [stock_for_update(1)]", [("db-row-lock", 13)]),
    # a helper that returns a plain query locks nothing
    ("        rows = list(plain_qs().filter(id__in=[1, 2]))", []),
    # one that locks in a transaction of its own lets go when that ends: its lock stays
    # in the helper
    ("        rows = [refreshed()]", []),
])
def test_a_locking_query_handed_back_is_taken_where_it_runs(write_tree, body, expected):
    job = ("from django.db import transaction\n\nfrom app.lock_objects import for_update, "
           "refreshed, stock_for_update, stock_qs_for_update\nfrom app.models import Stock\n\n\n"
           "def plain_qs():\n    return Stock.objects.all()\n\n\n"
           f"def main():\n    with transaction.atomic():\n{body}\n        print(rows)\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
                       "app/__init__.py": "", "app/lock_objects.py": LOCK_OBJECTS,
                       "app/models.py": "from django.db import models\n\n\n"
                                        "class Stock(models.Model):\n    pass\n",
                       "jobs/sync.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.span.line) for lock in job_.all_locks
            if lock.span.path == "jobs/sync.py"] == expected


# -- a service registry (pyramid_services): the object comes from a registration by name

SERVICES_INIT = '''from app.services import queue


def includeme(config):
    config.register_service_factory({registration}, name="queue_service")
    config.register_service_factory("app.services.mail.factory", name="mailer")
'''
QUEUE_SERVICE = '''class JobQueueService:
    def __init__(self, db):
        self._db = db

    def get(self, name, limit):
        query = self._db.query(Job).filter(Job.name == name)
        return query.limit(limit).with_for_update(skip_locked=True).all()


def factory(context, request):
    return JobQueueService(request.db)
'''
MAIL_SERVICE = '''class MailService:
    def get(self, name, limit):
        return []


def factory(context, request):
    return MailService()
'''
SYNC_SERVICE = '''class SyncService:
    def __init__(self, queue_service):
        self._queue = queue_service

    def sync(self, limit):
        jobs = self._queue.get(name="sync", limit=limit)
        return len(jobs)


def factory(context, request):
    return SyncService(queue_service=request.find_service({lookup}))
'''
SERVICE_TASKS = '''from app.celery import celery


@celery.task
def sync_slim(limit):
    svc = celery.request.find_service({lookup})
    jobs = svc.get(name="slim", limit=limit)
    return jobs
'''


@pytest.mark.parametrize("registration", [
    '"app.services.queue.factory"',  # the factory by its dotted name
    "queue.factory",  # the factory itself
    "queue.JobQueueService",  # the class as its own factory
    '"app.services.queue.factory", iface=queue.JobQueueService',
])
@pytest.mark.parametrize("lookup, expected", [
    ('name="queue_service"', True),
    ("JobQueueService", True),  # by its interface: the class itself
    ('name="mailer"', False),  # another service, which locks nothing
])
def test_a_lock_of_a_service_the_registry_hands_out(write_tree, registration, lookup,
                                                     expected):
    """h: ``request.find_service(name="queue_service")`` hands out the ``JobQueueService``
    registered under that name; its ``get()`` claims rows with ``SKIP LOCKED`` wherever
    a service or a task calls it, also in modules with no lock word."""
    imports = "from app.services.queue import JobQueueService\n\n\n" \
        if lookup == "JobQueueService" else ""
    root = write_tree({
        "app/__init__.py": "", "app/celery.py": "celery = object()\n",
        "app/services/__init__.py": SERVICES_INIT.format(registration=registration),
        "app/services/queue.py": QUEUE_SERVICE, "app/services/mail.py": MAIL_SERVICE,
        "app/services/sync.py": imports + SYNC_SERVICE.format(lookup=lookup),
        "app/tasks.py": imports + SERVICE_TASKS.format(lookup=lookup)})
    locks = run_analysis(root).project.code_locks
    used = sorted((lock.span.path, lock.kind, lock.try_lock) for lock in locks
                  if not lock.span.path.endswith("queue.py"))
    assert used == ([("app/services/sync.py", "db-row-lock", True),
                     ("app/tasks.py", "db-row-lock", True)] if expected else [])


# -- a pid lock whose test is a helper's answer, held by a context manager class

PID_LOCK_HELPER = '''import os
import time

from app import system
{store_import}


def check_lock_info():
{check}


class RetryLock:
    def __init__(self, *_args, lock_holder, sleep_time=10, max_retries=12):
        self.lock_holder = lock_holder
        self.sleep_time = sleep_time
        self.max_retries = max_retries

    def grab_lock(self):
        (lock_pid, holder) = check_lock_info()
        if lock_pid > 0:
            raise RuntimeError(holder)
{write}

    def __enter__(self):
        tries = 0
        while True:
            try:
                self.grab_lock()
                break
            except RuntimeError:
                tries += 1
                if tries >= self.max_retries:
                    raise
                time.sleep(self.sleep_time)

    def __exit__(self, *exc):
{remove}
'''
PID_FILE_CHECK = '''    if not os.path.exists(LOCK_PATH):
        return (-1, "")
    with open(LOCK_PATH) as f:
        pid = int(f.read())
    try:
        os.kill(pid, 0)
        return (pid, "")
    except OSError:
        return (-1, "")'''
PID_STORE_CHECK = '''    data = lock_data_file.read()
    if not data:
        return (-1, "")
    try:
        system.subp(["ps", data.lock_pid])
        return (int(data.lock_pid), data.lock_holder)
    except OSError:
        return (-1, "")'''
RETRY_LOCK_JOB = '''from app import lock


def main():
    with lock.RetryLock(lock_holder="timer job"):
        print("work")


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("store_import, check, write, remove", [
    ('LOCK_PATH = "/var/lib/app/lock"', PID_FILE_CHECK,
     '        with open(LOCK_PATH, "w") as f:\n            f.write(str(os.getpid()))',
     "        os.remove(LOCK_PATH)"),
    # ubuntu-pro-client: a JSON file behind a project object, read, written, deleted
    ('from app.files import DataObjectFile\n\nlock_data_file = DataObjectFile("lock")',
     PID_STORE_CHECK,
     "        lock_data_file.write(dict(lock_pid=str(os.getpid()), holder=self.lock_holder))",
     "        lock_data_file.delete()"),
])
def test_a_pid_lock_tested_through_a_helpers_answer(write_tree, store_import, check, write,
                                                    remove):
    """ubuntu-pro-client's ``RetryLock``: ``grab_lock`` refuses when ``check_lock_info()``
    names a live holder, then writes its own pid; ``__exit__`` removes it. The lock is taken
    at each ``with RetryLock(...)``, released by the ``with``; its test and write are two
    steps (JOB201)."""
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/app/job.py\n", "app/__init__.py": "",
        "app/lock.py": PID_LOCK_HELPER.format(store_import=store_import, check=check,
                                              write=write, remove=remove),
        "app/job.py": RETRY_LOCK_JOB})
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    assert [(lock.span.path, lock.span.line, lock.kind, lock.release, lock.stale_handling)
            for lock in job.all_locks] == [("app/job.py", 5, "pid-file", "with", "pid-check")]
    assert sorted(f.rule for f in analysis.findings) == ["JOB201"]


@pytest.mark.parametrize("grab", [
    # the pid recorded for others to read, nothing refused: a daemon's pid record
    "        lock_data_file.write(dict(lock_pid=str(os.getpid())))",
    # a refusal on something else than the store's answer
    "        if self.sleep_time > 60:\n            raise RuntimeError('too slow')\n"
    "        lock_data_file.write(dict(lock_pid=str(os.getpid())))",
    # written to a local object, not a store the module keeps
    "        record = DataObjectFile('lock')\n        (lock_pid, holder) = check_lock_info()\n"
    "        if lock_pid > 0:\n            raise RuntimeError(holder)\n"
    "        record.write(dict(lock_pid=str(os.getpid())))",
])
def test_a_pid_written_without_a_test_of_its_store_is_no_lock(write_tree, grab):
    helper = PID_LOCK_HELPER.format(
        store_import='from app.files import DataObjectFile\n\nlock_data_file = DataObjectFile("lock")',
        check=PID_STORE_CHECK, write="", remove="        lock_data_file.delete()")
    helper = helper.replace(
        "        (lock_pid, holder) = check_lock_info()\n        if lock_pid > 0:\n"
        "            raise RuntimeError(holder)\n", grab + "\n")
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/app/job.py\n", "app/__init__.py": "",
        "app/lock.py": helper, "app/job.py": RETRY_LOCK_JOB})
    [job] = run_analysis(root).project.jobs
    assert list(job.all_locks) == []


# -- a query builder of the project's whose option adds FOR UPDATE (koji's QueryProcessor)

QUERY_BUILDER = '''class QueryProcessor:
    def __init__(self, tables=None, clauses=None, values=None, opts=None, for_update=False):
        self.tables = tables
        self.clauses = clauses
        self.values = values
        if opts:
            self.opts = opts
        else:
            self.opts = {{}}
        self.for_update = for_update

    def get_query(self):
        query = "SELECT * FROM %s WHERE %s" % (self.tables[0], " AND ".join(self.clauses))
        if {test}:
            query += "{sql}"
        return query

    def execute(self):
        return _run(self.get_query(), self.values)


def _run(sql, values):
    return []
'''
QUERY_JOB = '''from app.db import QueryProcessor


def main():
    query = QueryProcessor(tables=["task"], clauses=["id = %(id)i"], values={{"id": 1}},
                           {given})
    rows = query.execute()
    print(rows)


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("test, given", [
    ("self.opts.get('rowlock')", "opts={'rowlock': True}"),
    ("self.opts['rowlock']", "opts={'rowlock': True, 'asList': True}"),
    ("'rowlock' in self.opts", "opts={'rowlock': 1}"),
    ("self.for_update", "for_update=True"),
])
@pytest.mark.parametrize("sql, waits", [("\\\\n FOR UPDATE", True),
                                        (" FOR UPDATE SKIP LOCKED", False)])
def test_a_query_builder_option_that_locks_rows(write_tree, test, given, sql, waits):
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/app/job.py\n", "app/__init__.py": "",
        "app/db.py": QUERY_BUILDER.format(test=test, sql=sql),
        "app/job.py": QUERY_JOB.format(given=given)})
    [job] = run_analysis(root).project.jobs
    assert [(lock.span.line, lock.kind, lock.release, lock.blocking) for lock in job.all_locks] \
        == [(5, "db-row-lock", "transaction", waits)]


@pytest.mark.parametrize("test, given", [
    ("self.opts.get('rowlock')", "opts={'rowlock': False}"),  # asked not to
    ("self.opts.get('rowlock')", "opts={'countOnly': True}"),  # another option
    ("self.opts.get('countOnly')", "opts={'rowlock': True}"),  # an option the class ignores
    ("self.for_update", "opts={'rowlock': True}"),  # the flag is another parameter
])
def test_a_query_builder_not_asked_to_lock(write_tree, test, given):
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/app/job.py\n", "app/__init__.py": "",
        "app/db.py": QUERY_BUILDER.format(test=test, sql=" FOR UPDATE"),
        "app/job.py": QUERY_JOB.format(given=given)})
    [job] = run_analysis(root).project.jobs
    assert list(job.all_locks) == []


def test_a_librarys_class_given_a_lock_option_is_no_row_lock(write_tree):
    """Only the project's classes are read: ``lockfile.LockFile(path, lock_timeout=5)`` is
    judged by its own recogniser, if any."""
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/app/job.py\n", "app/__init__.py": "",
        "app/job.py": QUERY_JOB.format(given="opts={'rowlock': True}").replace(
            "from app.db import QueryProcessor", "from sqlbuilder import QueryProcessor")})
    [job] = run_analysis(root).project.jobs
    assert list(job.all_locks) == []


def test_a_lock_class_given_a_lock_option_is_still_entered(write_tree):
    """``with Guard("sync", lock=True)``: the option's name is a query builder's, the class
    a guard whose ``__enter__`` takes a Redis lock: the lock is taken at the ``with``."""
    guard = ("import redis\n\nr = redis.Redis()\n\n\nclass Guard:\n"
             "    def __init__(self, name, lock=True):\n        self.name = name\n"
             "        self.lock = lock\n        self._held = None\n\n"
             "    def __enter__(self):\n        if self.lock:\n"
             "            self._held = r.lock(self.name, timeout=600)\n"
             "            if not self._held.acquire(blocking=False):\n"
             "                raise SystemExit(0)\n\n"
             "    def __exit__(self, *exc):\n        if self._held is not None:\n"
             "            self._held.release()\n")
    job = ("from app.guard import Guard\n\n\ndef main():\n    with Guard('sync', lock=True):\n"
           "        print('work')\n\n\nif __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/app/job.py\n",
                       "app/__init__.py": "", "app/guard.py": guard, "app/job.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [(lock.span.path, lock.span.line, lock.kind, lock.release)
            for lock in job_.all_locks] == [("app/job.py", 5, "redis-lock", "with")]


def test_a_pid_file_rewritten_while_its_lock_is_held_is_one_lock(write_tree):
    """Flexget's ``start()``: a running daemon found by a helper's answer is handed the
    command; otherwise ``with self.acquire_lock():`` takes the pid file, and the command it
    runs rewrites the file (``write_lock()``, a new pid after daemonising). The rewrite is
    no second lock, and the daemon check no lock test of its own."""
    manager = '''import contextlib
import os
import sys


class Manager:
    lockfile = "/var/run/app.lock"

    def _read_lock(self):
        if os.path.exists(self.lockfile):
            with open(self.lockfile) as f:
                return {"pid": int(f.read())}
        return None

    def check_lock(self):
        return self._read_lock() is not None

    def check_ipc_info(self):
        info = self._read_lock()
        return info if info and "port" in info else None

    def write_lock(self):
        with open(self.lockfile, "w") as f:
            f.write(str(os.getpid()))

    def release_lock(self):
        os.remove(self.lockfile)

    @contextlib.contextmanager
    def acquire_lock(self):
        if self.check_lock():
            sys.exit(1)
        self.write_lock()
        try:
            yield
        finally:
            self.release_lock()

    def handle_cli(self):
        self.write_lock()

    def start(self):
        ipc_info = self.check_ipc_info()
        if ipc_info:
            return None
        with self.acquire_lock():
            self.handle_cli()
        return None
'''
    job = ("from app.manager import Manager\n\n\ndef main():\n    Manager().start()\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/app/job.py\n",
                       "app/__init__.py": "", "app/manager.py": manager, "app/job.py": job})
    analysis = run_analysis(root)
    [job_] = analysis.project.jobs
    assert [(lock.kind, lock.span.path, lock.span.line, lock.release)
            for lock in job_.all_locks] == [("pid-file", "app/manager.py", 46, "with")]
    # the test and the write are two steps (JOB201); nothing tells a dead holder (JOB202)
    assert sorted((f.rule, f.span.line) for f in analysis.findings) == [("JOB201", 31),
                                                                        ("JOB202", 46)]


# -- forwarding helpers: a claim's chain split across helpers of the module that take the
#    query as a parameter (``def _claim(qs): return qs.update(...)``)
FORWARDED_JOB = '''from datetime import timedelta

from django.db import IntegrityError
from django.utils import timezone

from app.models import Task

HOLD = timedelta(minutes=4)
{helpers}

def main():
    now = timezone.now()
{body}
    print("working")


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("helpers, body, expected", [
    # the chain rebuilt through two helpers: the claim, with the expiry of its condition
    ("def _pick(qs, pk, locked_at__lt):\n    return qs.filter(pk=pk, locked_at__lt=locked_at__lt)"
     "\n\n\ndef _mark(qs, locked_at):\n    return qs.update(locked_at=locked_at)\n",
     "    claimed = _mark(_pick(Task.objects, pk=1, locked_at__lt=now - HOLD), locked_at=now)\n"
     "    if not claimed:\n        return",
     [("db-claim", "Task", 240.0)]),
    # one helper, a docstring, the query passed by keyword, a default for the field
    ('def _mark(qs, when=None):\n    """Claim it."""\n    return qs.update(locked_at=when)\n',
     "    if not _mark(qs=Task.objects.filter(pk=1, locked_at=None), when=now):\n        return",
     [("db-claim", "Task", None)]),
    # a unique row made through a helper, stopped by IntegrityError
    ("def _insert(manager, name):\n    return manager.create(name=name)\n",
     "    try:\n        _insert(Task.objects, name=\"sync\")\n    except IntegrityError:\n"
     "        return",
     [("db-claim", "Task", None)]),
    # the helper's answer not looked at: no claim of the caller's
    ("def _mark(qs, locked_at):\n    return qs.update(locked_at=locked_at)\n",
     "    _mark(Task.objects.filter(pk=1, locked_at=None), locked_at=now)", []),
    # a helper that does more than forward its parameters is not rebuilt
    ("def _mark(qs, locked_at):\n    print(qs)\n    return qs.update(locked_at=locked_at)\n",
     "    if not _mark(Task.objects.filter(pk=1, locked_at=None), locked_at=now):\n        return",
     []),
])
def test_claim_through_forwarding_helpers(write_tree, helpers, body, expected):
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "", "app/models.py": "from django.db import models\n\n\n"
        "class Task(models.Model):\n    locked_at = models.DateTimeField(null=True)\n",
        "jobs/sync.py": FORWARDED_JOB.format(helpers=helpers, body=body),
    })
    [job] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.key, lock.ttl_seconds) for lock in job.all_locks] == expected


def test_raising_claim_in_a_helper_is_answered_by_its_callers_handler(write_tree):
    """oslo.db's ``update_on_match`` raises NoRowsMatched: a helper that only forwards it
    leaves the answer to the caller's ``except``, which tells its own caller."""
    backend = '''from oslo_db.sqlalchemy import update_match


def _match(query, specimen, values):
    return query.update_on_match(specimen, "id", values)


def claim(query, specimen, values):
    try:
        _match(query, specimen, values)
    except update_match.NoRowsMatched:
        return False
    return True
'''
    job = ("from app.backend import claim\n\n\ndef main(query, row):\n"
           "    if not claim(query, row, {'state': 'running'}):\n        return\n"
           "    print('running')\n\n\nif __name__ == '__main__':\n    main(None, None)\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/app/job.py\n",
                       "app/__init__.py": "", "app/backend.py": backend, "app/job.py": job})
    [job_] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.span.path, lock.span.line) for lock in job_.all_locks] == \
        [("db-claim", "app/job.py", 5)]


def test_claim_through_forwarding_helpers_of_another_module(write_tree):
    """The helpers in a module of their own: the index hands them to the module that calls
    them, which reads the chain at its call; a helper that reads a name of its own module
    is not handed over (the name means something else at the call)."""
    helpers = ('"""Query helpers."""\nimport logging\n\n\n'
               "def pick(qs, pk, locked_at__lt):\n"
               "    return qs.filter(pk=pk, locked_at__lt=locked_at__lt)\n\n\n"
               "def mark(qs, locked_at):\n    return qs.update(locked_at=locked_at)\n\n\n"
               "def mark_logged(qs, locked_at):\n"
               "    return qs.update(locked_at=locked_at, by=logging.getLogger())\n")
    body = ("    claimed = {mark}(queries.pick(Task.objects, pk=1, locked_at__lt=now - HOLD),"
            " locked_at=now)\n    if not claimed:\n        return")
    for mark, expected in (("queries.mark", [("db-claim", "Task", 240.0)]),
                           ("queries.mark_logged", [])):
        job = FORWARDED_JOB.format(helpers="", body=body.format(mark=mark)).replace(
            "from app.models import Task", "from app import queries\nfrom app.models import Task")
        root = write_tree({
            "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
            "app/__init__.py": "", "app/queries.py": helpers,
            "app/models.py": "from django.db import models\n\n\n"
            "class Task(models.Model):\n    locked_at = models.DateTimeField(null=True)\n",
            "jobs/sync.py": job,
        })
        [job_] = run_analysis(root).project.jobs
        assert [(lock.kind, lock.key, lock.ttl_seconds) for lock in job_.all_locks] == expected


def test_forwarding_helper_of_a_module_read_lightly(write_tree):
    """A helpers module no recogniser keeps (read with ``ast`` only) hands its forwarders
    over too: the unique row its ``create`` makes, stopped by IntegrityError."""
    body = ("    try:\n        rows.insert(Task.objects, name='sync')\n"
            "    except IntegrityError:\n        return")
    job = FORWARDED_JOB.format(helpers="", body=body).replace(
        "from app.models import Task", "from app import rows\nfrom app.models import Task")
    root = write_tree({
        "crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n",
        "app/__init__.py": "",
        "app/rows.py": "def insert(manager, name):\n    return manager.create(name=name)\n",
        "app/models.py": "from django.db import models\n\n\n"
        "class Task(models.Model):\n    name = models.CharField(max_length=20, unique=True)\n",
        "jobs/sync.py": job,
    })
    [job_] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.api) for lock in job_.all_locks] == [("db-claim", "unique insert")]


# -- a claim whose own condition lets a stale one be taken over: the status is not the
#    claimed one, or the time the claim wrote is older than a limit
STALE_JOB = '''from datetime import datetime, timedelta

from peewee import CharField, DateTimeField, Model
import sqlalchemy as sa

STALE_HOURS = 6


class Item(Model):
    status = CharField()
    claimed_at = DateTimeField(null=True)


def main(session, table):
{body}
    print("working")


if __name__ == "__main__":
    main(None, None)
'''


@pytest.mark.parametrize("body, expected", [
    # peewee: the threshold in a local, the update writing the clock to that column
    ("    stale = datetime.utcnow() - timedelta(hours=STALE_HOURS)\n"
     "    rows = (Item.update(status='running', claimed_at=datetime.utcnow())\n"
     "            .where(Item.id == 1, (Item.status != 'running') | (Item.claimed_at < stale))\n"
     "            .execute())\n    if rows == 0:\n        return", 6 * 3600.0),
    # SQLAlchemy's or_(), the cutoff written in place
    ("    rows = session.query(Item).filter(Item.id == 1, sa.or_(Item.status != 'running',\n"
     "        Item.claimed_at <= datetime.utcnow() - timedelta(minutes=30))).update(\n"
     "        {'status': 'running'}, claimed_at=datetime.utcnow())\n"
     "    if not rows:\n        return", 1800.0),
    # the old column is one the claim does not write: no takeover of this claim
    ("    stale = datetime.utcnow() - timedelta(hours=STALE_HOURS)\n"
     "    rows = (Item.update(status='running')\n"
     "            .where(Item.id == 1, (Item.status != 'running') | (Item.claimed_at < stale))\n"
     "            .execute())\n    if rows == 0:\n        return", None),
    # newer than the cutoff: rows claimed lately, no expiry
    ("    stale = datetime.utcnow() - timedelta(hours=STALE_HOURS)\n"
     "    rows = (Item.update(status='running', claimed_at=datetime.utcnow())\n"
     "            .where(Item.id == 1, (Item.status != 'running') | (Item.claimed_at > stale))\n"
     "            .execute())\n    if rows == 0:\n        return", None),
    # tested before the claim: skipped while the time it writes is newer than a cutoff
    ("    now = datetime.utcnow()\n    cutoff = now - timedelta(hours=STALE_HOURS)\n"
     "    row = Item.get_by_id(1)\n    if row.claimed_at is not None and row.claimed_at > cutoff:\n"
     "        return\n"
     "    rows = (Item.update(claimed_at=now)\n"
     "            .where(Item.id == 1, Item.claimed_at == row.claimed_at).execute())\n"
     "    if rows == 0:\n        return", 6 * 3600.0),
    # ... a column the claim does not write: no takeover
    ("    now = datetime.utcnow()\n    cutoff = now - timedelta(hours=STALE_HOURS)\n"
     "    row = Item.get_by_id(1)\n    if row.seen_at > cutoff:\n        return\n"
     "    rows = (Item.update(status='running')\n"
     "            .where(Item.id == 1, Item.status != 'running').execute())\n"
     "    if rows == 0:\n        return", None),
])
def test_claim_taken_over_when_stale(write_tree, body, expected):
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/app/job.py\n",
                       "app/job.py": STALE_JOB.format(body=body)})
    [job] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.ttl_seconds) for lock in job.all_locks] == [("db-claim", expected)]


@pytest.mark.parametrize("scanner_body", [
    # the lock in the method the proxy calls
    "    def perform_scan(self, size=None):\n        with open('/run/scan.lock', 'w') as fh:\n"
    "            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
    "            print('indexing', size)\n",
    # ... or in a method of its own that it calls
    "    def perform_scan(self, size=None):\n        return self._scan_batch(size)\n\n"
    "    def _scan_batch(self, size):\n        with open('/run/scan.lock', 'w') as fh:\n"
    "            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
    "            print('indexing', size)\n",
])
def test_job_reaches_a_lock_through_a_proxy_of_a_passed_over_module(write_tree, scanner_body):
    """A worker holds a module-level proxy (``self._model = scanner``) whose method
    forwards to the object it was configured with (``self._model.perform_scan()`` again, in a
    module no recogniser keeps): the job reaches the implementation's lock, as it does when
    it calls the implementation itself."""
    proxy = ("from app.v4 import Scanner, NoopScanner\n\n\nclass Proxy:\n"
             "    def configure(self, app):\n        try:\n            self._model = Scanner(app)\n"
             "        except ValueError:\n            self._model = NoopScanner()\n"
             "        return self\n\n    def perform_scan(self, size=None):\n"
             "        return self._model.perform_scan(size)\n\n\nscanner = Proxy()\n")
    v4 = ("import fcntl\n\n\nclass Scanner:\n    def __init__(self, app):\n        self.app = app\n\n"
          f"{scanner_body}\n\n"
          "class NoopScanner:\n    def perform_scan(self, size=None):\n        return None\n")
    worker = ("from app.model import scanner\n\n\nclass Worker:\n    def __init__(self):\n"
              "        self._model = scanner\n\n    def run(self):\n        self._model.perform_scan(10)\n\n\n"
              "if __name__ == '__main__':\n    Worker().run()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/app/worker.py\n",
                       "app/__init__.py": "", "app/model.py": proxy, "app/v4.py": v4,
                       "app/worker.py": worker})
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    assert [(lock.kind, lock.span.path) for lock in job.all_locks] == [("flock", "app/v4.py")]
    assert "JOB101" not in {f.rule for f in analysis.findings}


HANDED_STATE = '''import fcntl
import os


def lock_file(fd):
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)


def open_state(path):
    fd = os.open(path, os.O_RDWR | os.O_CREAT)
    lock_file(fd)
    return os.fdopen(fd, "w+")


class State:
    def __init__(self, statefile):
        self.statefile = statefile

    def save(self):
        self.statefile.write("{{}}")

    def close(self):
        self.statefile.close()


def watch():
    statefile = open_state("/run/watch.state")
    notepad = State(statefile)
    print("watching")
    notepad.save()
    notepad.{last}()
    return 0


def main():
    return watch()


if __name__ == "__main__":
    main()
'''


@pytest.mark.parametrize("last, expected", [
    # the wrapper's close() closes the locked file: let go of there, inside watch()
    ("close", [("flock", 27, "plain")]),
    # nothing closes it: held when watch() returns, so taken at its call
    ("save", [("flock", 36, "process-exit")]),
])
def test_locked_file_handed_to_an_object_that_closes_it(write_tree, last, expected):
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/app/watch.py\n",
                       "app/watch.py": HANDED_STATE.format(last=last)})
    [job] = run_analysis(root).project.jobs
    assert [(lock.kind, lock.span.line, lock.release) for lock in job.all_locks
            if lock.span.line > 12] == expected


DAEMON = '''import sys

from app.instance import Instance


class Daemon:
    def __init__(self):
        self.instance = Instance("daemon")

    def daemonize(self):
        print("detaching")
        self.instance.write_lock()

    def start(self):
        if self.instance.is_locked():
            sys.exit("already running")
        self.daemonize()
        try:
            print("serving")
        finally:
            {release}


if __name__ == "__main__":
    Daemon().start()
'''


@pytest.mark.parametrize("release, expected", [
    # tested in start(), written in the daemonize() it calls, removed in start()'s finally
    ("self.instance.release_lock()", [("pid-file", 12, "finally")]),
    # a method of its own that does not touch the object: nothing is driven there
    ("print('stopped')", [("pid-file", 12, "none")]),
])
def test_pid_protocol_driven_across_methods_of_the_holder(write_tree, release, expected):
    """backintime's Daemon: the object it holds (``self.appInstance``) is tested in one
    method and written in another that the first calls."""
    instance = (Path(__file__).parent / "fixtures/pid_protocols/app/instance.py").read_text()
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/app/daemon.py\n",
                       "app/__init__.py": "", "app/instance.py": instance,
                       "app/daemon.py": DAEMON.format(release=release)})
    analysis = run_analysis(root)
    [job] = analysis.project.jobs
    assert [(lock.kind, lock.span.line, lock.release) for lock in job.all_locks
            if lock.span.path == "app/daemon.py"] == expected
    # the test and the write are two steps: two starts can both pass the test (JOB201)
    assert ("JOB201", "app/daemon.py", 15) in {(f.rule, f.span.path, f.span.line)
                                               for f in analysis.findings}
