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
def test_redis_set_locks(tmp_path, body, expected):
    (tmp_path / "crontab").write_text("*/5 * * * * timeout 4m python3 /srv/jobs/sync.py\n")
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs/sync.py").write_text(JOB.format(body=body))
    [job] = run_analysis(tmp_path).project.jobs
    assert [(lock.kind, lock.ttl_seconds) for lock in job.all_locks] == expected
