"""The result cache and parallel parsing: same findings as a plain run, cross-file results
recomputed, forged entries ignored."""
import json
import os

from click.testing import CliRunner

from jobsafe.cache import CACHE_DIR, FileCache
from jobsafe.cli import main

CRON = "*/5 * * * * root timeout 4m flock -n /tmp/sync.lock python3 /app/bin/sync.py\n"
DOCKERFILE = 'FROM python:3.12-slim\nCOPY jobs.cron /etc/cron.d/jobs\nCMD ["cron", "-f"]\n'
DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
spec:
  replicas: {replicas}
  template:
    spec:
      containers:
        - name: worker
          image: registry.example.com/worker:1
"""


def _check(root, *args):
    result = CliRunner().invoke(main, ["check", "--format", "json", "--exit-zero", *args, str(root)])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["findings"]


def test_editing_replicas_changes_the_findings_of_a_warm_run(write_tree, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    monkeypatch.delenv("JOBSAFE_CACHE_DIR")
    root = write_tree({"worker/Dockerfile": DOCKERFILE, "worker/jobs.cron": CRON,
                       "bin/sync.py": "import fcntl\nprint('sync')\n",
                       "k8s/worker.yaml": DEPLOYMENT.format(replicas=1)})
    monkeypatch.chdir(root)
    assert [f["rule"] for f in _check(".")] == []
    assert os.path.isdir(root / CACHE_DIR)
    (root / "k8s/worker.yaml").write_text(DEPLOYMENT.format(replicas=3))
    assert [f["rule"] for f in _check(".")] == ["JOB301"]


def test_cached_and_parallel_runs_match_a_plain_run(write_tree, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    # sizes in another order than the paths (the pool parses the longest first)
    files = {f"jobs/job{i}.py": "import redis\nr = redis.Redis()\n"
                                 f"if __name__ == '__main__':\n    lock = r.lock('job{i}')\n"
                                 "    lock.acquire()\n" + "# padding\n" * (i * 7 % 30)
             for i in range(30)}
    root = write_tree(files)
    monkeypatch.chdir(root)
    plain = _check(".", "--no-cache", "--jobs", "1")
    assert len(plain) == 30
    assert _check(".", "--jobs", "2") == plain  # cold, parsed in two worker processes
    assert _check(".", "--jobs", "2") == plain  # warm, from the cache


def test_a_forged_cache_entry_is_never_loaded(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    monkeypatch.chdir(tmp_path)
    cache = FileCache.open(str(tmp_path / CACHE_DIR))
    key = cache.key("python", "job.py", "print(1)\n")
    cache.put(key, {"ok": True})
    assert cache.get(key) == {"ok": True}
    entry = os.path.join(cache.directory, key[:2], key[2:])
    forged = b"\0" * 32 + b"cos\nsystem\n(S'touch pwned'\ntR."  # a pickle that runs a command
    with open(entry, "wb") as fh:
        fh.write(forged)
    assert cache.get(key) is None
    assert not os.path.exists("pwned")


def test_prune_keeps_the_cache_bounded(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    cache = FileCache.open(str(tmp_path / CACHE_DIR))
    for i in range(20):
        cache.put(cache.key("python", f"m{i}.py", "x"), b"x" * 1000)
    cache.prune(max_bytes=10_000)
    sizes = [os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(cache.directory)
             for f in fs if f != ".gitignore"]
    assert sum(sizes) <= 10_000 and sizes


def test_a_warm_run_stats_unchanged_irrelevant_modules_instead_of_reading_them(
        write_tree, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    root = write_tree({
        "crontab": "*/5 * * * * python3 /app/jobs/sync.py\n",
        "jobs/sync.py": "from app import helpers\nhelpers.run()\n",
        "app/helpers.py": "def run():\n    return 1\n",
        "app/models.py": "class Order:\n    pass\n",
        "app/legacy.py": "import os\nos.system('true')  # jobsafe: ignore[JOB101]\n",
    })
    read = []
    import jobsafe.link

    real = jobsafe.link.read_text
    monkeypatch.setattr(jobsafe.link, "read_text", lambda path: read.append(path) or real(path))
    monkeypatch.chdir(root)
    cold = CliRunner().invoke(main, ["check", "--format", "json", "--exit-zero", "."]).output
    cold_reads = {os.path.relpath(p, root) for p in read}
    assert {"app/models.py", "app/helpers.py", "app/legacy.py"} <= cold_reads
    read.clear()
    from jobsafe.sources.python import prefilter

    scanned = []
    real_scan = prefilter.worth_parsing
    monkeypatch.setattr(prefilter, "worth_parsing",
                        lambda rel, text: scanned.append(rel) or real_scan(rel, text))
    warm = CliRunner().invoke(main, ["check", "--format", "json", "--exit-zero", "."]).output
    assert scanned == ["app/legacy.py"]  # kept or passed over before, unchanged: not scanned
    warm_reads = {os.path.relpath(p, root) for p in read}
    assert warm == cold  # the same findings (JOB901 in legacy.py too) and the same file count
    assert json.loads(warm)["summary"]["files"] == 5
    assert "app/models.py" not in warm_reads  # unchanged, no lock word, no suppression
    assert {"app/legacy.py", "app/helpers.py"} <= warm_reads  # a suppression; a job runs it
    # an edit that brings a lock is seen at once: the stamp no longer matches
    (root / "app" / "models.py").write_text(
        "import fcntl\nclass Order:\n    def save(self):\n        fh = open('/tmp/o.lock', 'w')\n"
        "        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)\n")
    edited = CliRunner().invoke(main, ["check", "--format", "json", "--exit-zero", "--no-cache",
                                       "."]).output
    assert edited != cold
    assert CliRunner().invoke(main, ["check", "--format", "json", "--exit-zero", "."]).output \
        == edited


def test_cache_keys_change_when_jobsafe_itself_changes(tmp_path):
    """An edited checkout never reads what the older code cached."""
    from jobsafe import cache

    before = FileCache(str(tmp_path), b"k" * 32).key("python", "a.py", "x = 1\n")
    source = cache.__file__
    st = os.stat(source)
    cache._code_stamp.cache_clear()
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # as an edit would
    try:
        assert FileCache(str(tmp_path), b"k" * 32).key("python", "a.py", "x = 1\n") != before
    finally:
        os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
        cache._code_stamp.cache_clear()
    assert FileCache(str(tmp_path), b"k" * 32).key("python", "a.py", "x = 1\n") == before


def test_the_facts_of_every_fixture_module_survive_pickling():
    """What a worker hands back and the cache stores: the frozen records pickle as calls of
    their constructors (``pickled_as_call``), so a field left out would be lost here."""
    import pickle
    from pathlib import Path

    from jobsafe.model import Span
    from jobsafe.sources.python.module import parse_module
    from jobsafe.sources.python.symbols import UNKNOWN, Call, Const, Imported

    fixtures = Path(__file__).parent / "fixtures"
    checked = 0
    for path in sorted(fixtures.rglob("*.py")):
        facts = parse_module(path.name, path.read_text(encoding="utf-8"))
        if not facts.units:
            continue
        again = pickle.loads(pickle.dumps(facts, protocol=pickle.HIGHEST_PROTOCOL))
        assert again == facts, path
        sites = [site for unit in facts.units.values() for site in unit.callsites]
        assert all(a == b for a, b in zip(sites, [s for u in again.units.values()
                                                   for s in u.callsites]))
        checked += 1
    assert checked > 100
    call = Call(Imported("redis.Redis"), (("#0", Const(1)),), True, Span("a.py", 3, 2, 4, 5))
    for record in (call, UNKNOWN, Span("a.py", 7)):
        assert pickle.loads(pickle.dumps(record)) == record
        assert record.__reduce__()[0] is type(record)


def test_the_pool_hands_each_modules_facts_back_in_the_order_asked():
    """The longest modules are parsed first; the answers still come back in order (from
    workers forked by a server that imported the parser before they were asked for)."""
    from jobsafe.sources.python.index import _parse_in_pool, start_forkserver

    start_forkserver()
    jobs = [(f"m{i}.py", "import fcntl\n" + "x = 1\n" * (i * 7 % 30)) for i in range(30)]
    assert [facts.path for facts in _parse_in_pool(jobs, 2)] == [path for path, _ in jobs]


def test_a_kept_hash_is_the_values_hash_and_is_not_pickled():
    """``hash_once`` keeps the generated hash (equal values, equal hashes, the span left
    out as before), a changed copy computes its own, and a pickled value arrives without
    the hash of the process that made it (string hashes differ between processes)."""
    import pickle
    import subprocess
    import sys
    from dataclasses import replace

    from jobsafe.model import Span
    from jobsafe.sources.python.symbols import Attr, Call, Const, Imported, Param

    call = Call(Attr(Imported("redis.Redis"), "lock"), (("#0", Param("key")),), False,
                Span("a.py", 3))
    same = Call(Attr(Imported("redis.Redis"), "lock"), (("#0", Param("key")),), False,
                Span("b.py", 9))
    assert hash(call) == hash(same) and call == same
    assert hash(call) == hash((call.func, call.args, call.star))  # the generated hash's
    other = replace(call, args=(("#0", Const("jobs")),))
    assert other != call and hash(other) == hash((other.func, other.args, other.star))
    hash(call)
    assert pickle.loads(pickle.dumps(call))._hash == 0
    # made in another process (another string hash seed), used as a key here
    code = ("import pickle, sys; from jobsafe.model import Span; "
            "from jobsafe.sources.python.symbols import Attr, Call, Imported, Param; "
            "c = Call(Attr(Imported('redis.Redis'), 'lock'), (('#0', Param('key')),), False,"
            " Span('a.py', 3)); hash(c); sys.stdout.buffer.write(pickle.dumps(c))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    made = pickle.loads(subprocess.run([sys.executable, "-c", code], env=env,
                                       capture_output=True, check=True).stdout)
    assert {call: "found"}.get(made) == "found"
