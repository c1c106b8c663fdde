"""A module with no lock word of its own that takes a lock through one of the project's
abstractions (``claim_mirror(m)``, ``util.set_up_core_dir(d)``, a proxy) is read as code:
the lock is listed where it is taken, cold or from the cache, and the abstraction is judged
at that use rather than where it is written."""
from __future__ import annotations

import pytest

from conftest import run_analysis
from jobsafe.config import Settings

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
    assert places == [("main.py", "make_dirs")]


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
    assert locks() == [("main.py", "make_dirs")]
    assert locks() == [("main.py", "make_dirs")]
