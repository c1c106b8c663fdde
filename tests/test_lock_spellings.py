"""Lock spellings real code uses, each beside a look-alike that takes no lock."""
import pytest

from conftest import run_analysis

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
