"""A module with no lock word of its own that takes a lock through one of the project's
abstractions (``claim_mirror(m)``, ``util.set_up_core_dir(d)``, a proxy) is read as code:
the lock is listed where it is taken, cold or from the cache (and where the abstraction
takes it, as before: only uses in modules the prefilter keeps move it there)."""
from __future__ import annotations

import pytest

from conftest import run_analysis
from jobsafe.config import Settings
from jobsafe.sources.python.semantics import UNKNOWN_KIND, Where
from jobsafe.sources.python.symbols import Global

HELPER = '''import fcntl

_HELD = []


def hold_dir(path):
    """Lock a folder until the process exits."""
    fh = open(f"{path}/.run", "w")
    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _HELD.append(fh)
    return fh
'''

CALLER = '''{imports}


def make_dirs(config):
    print("preparing", config)
    {call}
    print("ready")
'''


@pytest.mark.parametrize("imports, call", [
    ("from app.util import hold_dir", "hold_dir(config.work_dir)"),
    ("from app import util", "util.hold_dir(config.work_dir)"),
    ("import app.util as u", "u.hold_dir(config.work_dir)"),
    ("from app.util import hold_dir as keep", "keep(config.work_dir)"),
])
def test_a_caller_with_no_lock_word_takes_the_lock(write_tree, imports, call):
    root = write_tree({"app/__init__.py": "", "app/util.py": HELPER,
                       "app/main.py": CALLER.format(imports=imports, call=call)})
    analysis = run_analysis(root)
    places = sorted((lock.span.path.rsplit("/", 1)[-1], lock.function)
                    for lock in analysis.project.code_locks)
    assert places == [("main.py", "make_dirs"), ("util.py", "hold_dir")]


def test_a_module_that_only_mentions_the_name_is_not_read_as_code(write_tree):
    root = write_tree({"app/__init__.py": "", "app/util.py": HELPER,
                       "app/main.py": '"""See hold_dir."""\nNAME = "hold_dir"\n'})
    analysis = run_analysis(root)
    assert [lock.function for lock in analysis.project.code_locks] == ["hold_dir"]


def test_the_cache_gives_the_same_answer(write_tree, tmp_path_factory, monkeypatch):
    monkeypatch.setenv("JOBSAFE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    root = write_tree({"app/__init__.py": "", "app/util.py": HELPER,
                       "app/main.py": CALLER.format(imports="", call="pass")})
    from jobsafe.analysis import analyse
    from jobsafe.rules import all_rules

    def locks():
        monkeypatch.chdir(root)
        found = analyse(["."], Settings(), sorted(all_rules()), use_cache=True)
        return sorted((lock.span.path.rsplit("/", 1)[-1], lock.function)
                      for lock in found.project.code_locks)

    assert locks() == [("util.py", "hold_dir")]
    assert locks() == [("util.py", "hold_dir")]  # warm: the module's called names noted
    (root / "app/main.py").write_text(CALLER.format(imports="from app.util import hold_dir",
                                                    call="hold_dir('/srv')"))
    assert locks() == [("main.py", "make_dirs"), ("util.py", "hold_dir")]
    assert locks() == [("main.py", "make_dirs"), ("util.py", "hold_dir")]


# -- an object stored on ``self`` whose type only the subclasses' constructions tell, with a
# method named like a builtin's (``WorkQueue.get``) that claims a row and answers None when
# another worker has it

QUEUE = '''from peewee import CharField, Model


class QueueItem(Model):
    state_id = CharField()


class WorkQueue:
    def __init__(self, name):
        self._name = name

    def _attempt_to_claim_item(self, item):
        query = QueueItem.update(state_id="x").where(QueueItem.id == item.id,
                                                     QueueItem.state_id == item.state_id)
        changed = query.execute()
        return changed == 1

    def get(self):
        item = QueueItem.select().first()
        if item is None:
            return None
        was_claimed = self._attempt_to_claim_item(item)
        if not was_claimed:
            return None
        return {"id": item.id}
'''

BASE_WORKER = '''from threading import Lock


class QueueWorker:
    def __init__(self, queue, period=30):
        self._queue = queue
        self._guard = Lock()
        self._cache = {{}}

    def poll(self):
        with self._guard:
            {statement}
        print("work")
'''


@pytest.mark.parametrize("subclass, made", [
    ("class GCWorker(QueueWorker):\n    pass", "GCWorker(gc_queue, period=10)"),
    ("class GCWorker(QueueWorker):\n    def __init__(self, queue):\n"
     "        super().__init__(queue, period=10)", "GCWorker(gc_queue)"),
    ("class GCWorker(QueueWorker):\n    def __init__(self, queue):\n"
     "        super(GCWorker, self).__init__(queue)", "GCWorker(queue=gc_queue)"),
    ("", "QueueWorker(gc_queue)"),
])
@pytest.mark.parametrize("statement, claimed", [
    ("self.item = self._queue.get()", True),
    ("item = self._queue.get()\n            if item is None:\n                return", True),
    # a dict's get, on the same object
    ("self.item = self._cache.get('x')", False),
])
def test_a_claim_through_an_attribute_typed_by_the_constructions(write_tree, subclass, made,
                                                                 statement, claimed):
    worker = ("import fcntl\n\nfrom app import gc_queue\nfrom workers.base import QueueWorker\n\n\n"
              f"{subclass}\n\n\ndef main():\n    {made}.poll()\n\n\n"
              "def hold(fh):\n    fcntl.flock(fh, fcntl.LOCK_EX)\n")
    root = write_tree({"data/__init__.py": "", "data/queue.py": QUEUE,
                       "app.py": "from data.queue import WorkQueue\n\ngc_queue = WorkQueue('gc')\n",
                       "workers/__init__.py": "",
                       "workers/base.py": BASE_WORKER.format(statement=statement),
                       "workers/gc.py": worker})
    analysis = run_analysis(root)
    claims = sorted((lock.span.path.rsplit("/", 1)[-1], lock.function)
                    for lock in analysis.project.code_locks if lock.kind == "db-claim")
    # (an abstraction nobody uses keeps its lock where it is written)
    assert claims == ([("base.py", "QueueWorker.poll")] if claimed else
                      [("queue.py", "WorkQueue.get")])


def test_a_new_abstraction_is_looked_for_in_unchanged_modules(write_tree, tmp_path_factory,
                                                              monkeypatch):
    """The stat index notes which abstraction names each passed-over module calls; when
    the project gains an abstraction, an unchanged module that calls it is read again."""
    monkeypatch.setenv("JOBSAFE_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    plain = "def hold_dir(path):\n    return path\n"
    root = write_tree({"app/__init__.py": "", "app/util.py": plain,
                       "app/main.py": CALLER.format(imports="from app.util import hold_dir",
                                                    call="hold_dir(config.work_dir)")})
    from jobsafe.analysis import analyse
    from jobsafe.rules import all_rules

    def locks():
        monkeypatch.chdir(root)
        found = analyse(["."], Settings(), sorted(all_rules()), use_cache=True)
        return sorted((lock.span.path.rsplit("/", 1)[-1], lock.function)
                      for lock in found.project.code_locks)

    assert locks() == []
    assert locks() == []  # warm: main.py noted as calling none of the (no) abstractions
    (root / "app/util.py").write_text(HELPER)
    assert locks() == [("main.py", "make_dirs"), ("util.py", "hold_dir")]
    assert locks() == [("main.py", "make_dirs"), ("util.py", "hold_dir")]


def test_a_caller_module_is_read_in_full_when_the_semantics_asks_first(tmp_path):
    """The semantics may ask for a module's functions before the analysis has parsed it
    (quay: a worker's ``model.mark_build_archived()``, a method of a data-model object in a
    module read only because it calls the claim helper): once the module is known to call
    an abstraction, what the semantics reads is the parsed module, not its light summary
    (which has no functions, so the method's kind was unknown and cached so)."""
    from pathlib import Path

    from jobsafe.discover import SourceFile
    from jobsafe.sources.python.index import PythonIndex

    files = {"app/__init__.py": "", "app/util.py": HELPER,
             "app/model.py": "from app.util import hold_dir\n\n\nclass Model:\n"
                             "    def prepare(self, path):\n        return hold_dir(path)\n"}
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    index = PythonIndex({rel: SourceFile(str(tmp_path / rel), rel, rel, "python")
                         for rel in files}, lambda f: Path(f.abs).read_text())
    assert not index.might_lock("app/model.py") and index.calls_abstraction("app/model.py")
    assert "Model.prepare" in index.known("app/model.py").units


def _index_of(tmp_path, files: dict[str, str]):
    from pathlib import Path

    from jobsafe.discover import SourceFile
    from jobsafe.sources.python.index import PythonIndex

    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    return PythonIndex({rel: SourceFile(str(tmp_path / rel), rel, rel, "python")
                        for rel in files}, lambda f: Path(f.abs).read_text())


@pytest.mark.parametrize("made", ["threading.Semaphore(4)", "asyncio.Lock()",
                                  "multiprocessing.RLock()"])
def test_a_lock_of_the_process_threads_makes_no_lock_name(tmp_path, made):
    """A function that makes or releases a lock of its own process's threads
    (``threading.Semaphore``) does not reach a job's guard: neither it nor its callers are
    lock names (mlflow: one ``Semaphore`` in a pool class made a thousand names of the
    project, and every module calling one was read in full), while a Redis lock's are."""
    module = made.split(".")[0]
    pool = (f"import {module}\n\nimport redis\n\n\nclass Pool:\n"
            f"    def __init__(self):\n        self._slots = {made}\n\n"
            "    def release_slot(self):\n        self._slots.release()\n\n\n"
            "def submit(pool):\n    return Pool()\n\n\n"
            "def job_lock():\n    return redis.Redis().lock('job', timeout=60)\n\n\n"
            "def nightly():\n    with job_lock():\n        pass\n")
    index = _index_of(tmp_path, {"app/__init__.py": "", "app/pool.py": pool})
    assert index.might_lock("app/pool.py")
    assert {"Pool", "submit"}.isdisjoint(index.lock_names)
    assert {"job_lock", "nightly"} <= index.lock_names


@pytest.mark.parametrize("body, read", [
    ("    return IMPL.claim_trigger(trigger_id)\n", True),
    ("    return _through(trigger_id)\n\n\ndef _through(trigger_id):\n"
     "    return IMPL.claim_trigger(trigger_id)\n", True),
    ("    IMPL.claim_trigger(trigger_id)\n    return True\n", False),
])
def test_a_passed_over_function_is_read_in_full_for_what_it_returns(tmp_path, body, read):
    """A function of a module the prefilter passed over is read in full when the type of
    what it gives is asked and it returns the call of a lock name (oslo's facade:
    ``return IMPL.claim_trigger(...)``): a call it only makes is followed where the job
    calls it, not by reading every such module for the semantics."""
    backend = ("import redis\n\n\ndef claim_trigger(trigger_id):\n"
               "    return redis.Redis().set(f'trigger:{trigger_id}', 1, nx=True, ex=60)\n")
    facade = ("from app import backend as IMPL\n\n\n"
              f"def claim_trigger(trigger_id):\n{body}")
    index = _index_of(tmp_path, {"app/__init__.py": "", "app/backend.py": backend,
                                 "app/api.py": facade})
    assert not index.might_lock("app/api.py") and "claim_trigger" in index.lock_names
    assert index.semantics.kind(Global("claim_trigger"), Where("app/api.py")) == (
        "function:app/api.py:claim_trigger" if read else UNKNOWN_KIND)
