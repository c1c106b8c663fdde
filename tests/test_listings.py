"""A warm walk reads each settled folder's entries from the last walk's listings instead of
listing it, and finds exactly what a fresh walk finds."""
import os
import time

import pytest

from jobsafe import discover as discovery
from jobsafe.cache import FileCache
from jobsafe.discover import Listings, discover

HOUR_AGO = time.time_ns() - 3600 * 10**9


def _settle(root, when=HOUR_AGO):
    """Every folder's time in the past, as on a tree nobody is editing."""
    for folder, _, _ in os.walk(root):
        os.utime(folder, ns=(when, when))


def _tree(root):
    (root / "jobs").mkdir()
    (root / "jobs" / "nightly.py").write_text("import fcntl\n")
    (root / "etc" / "cron.d").mkdir(parents=True)
    (root / "etc" / "cron.d" / "billing").write_text("0 * * * * root /bin/true\n")
    (root / "build").mkdir()
    (root / "build" / "gen.py").write_text("x = 1\n")
    (root / ".gitignore").write_text("build/\n")
    _settle(root)


def _walk(root, store):
    listings = Listings(store, str(root)) if store is not None else None
    found = discover(str(root), str(root), (), listings)
    if listings is not None:
        listings.save()
    return found


def _seen(found):
    return ([(f.rel, f.kind) for f in found.files], found.skipped, found.unreadable,
            found.folders)


@pytest.fixture
def store(tmp_path):
    return FileCache.open(str(tmp_path / "cache"))


@pytest.fixture
def listed(monkeypatch):
    """The folders a walk lists (``os.scandir``)."""
    seen = []
    scandir = os.scandir

    def counting(path):
        seen.append(os.path.basename(path))
        return scandir(path)

    monkeypatch.setattr(discovery.os, "scandir", counting)
    return seen


def test_a_warm_walk_lists_no_settled_folder_and_finds_the_same(tmp_path, store, listed):
    root = tmp_path / "repo"
    root.mkdir()
    _tree(root)
    cold = _walk(root, store)
    assert listed  # the first walk lists every folder it enters
    listed.clear()
    warm = _walk(root, store)
    assert listed == []
    assert _seen(warm) == _seen(cold) == _seen(_walk(root, None))
    assert [f.rel for f in warm.files] == [".gitignore", "etc/cron.d/billing",
                                           "jobs/nightly.py"]  # build/ is ignored


def test_a_new_file_changes_its_folder_and_is_found(tmp_path, store, listed):
    root = tmp_path / "repo"
    root.mkdir()
    _tree(root)
    _walk(root, store)
    (root / "jobs" / "weekly.py").write_text("import fcntl\n")
    _settle(root / "jobs", HOUR_AGO + 10**9)  # another time than the one listed
    listed.clear()
    warm = _walk(root, store)
    assert listed == ["jobs"]
    assert "jobs/weekly.py" in [f.rel for f in warm.files]


def test_a_folder_changed_just_now_is_listed_again(tmp_path, store, listed):
    root = tmp_path / "repo"
    root.mkdir()
    _tree(root)
    now = time.time_ns()
    os.utime(root / "jobs", ns=(now, now))  # a change in this tick could leave it as is
    _walk(root, store)
    listed.clear()
    _walk(root, store)
    assert listed == ["jobs"]


def test_a_gitignore_edited_in_place_is_read_again(tmp_path, store):
    root = tmp_path / "repo"
    root.mkdir()
    _tree(root)
    _walk(root, store)
    (root / ".gitignore").write_text("")  # the folder's entries, and time, stay
    _settle(root)
    assert "build/gen.py" in [f.rel for f in _walk(root, store).files]


def test_a_folder_holding_a_link_is_listed_every_time(tmp_path, store, listed):
    root = tmp_path / "repo"
    root.mkdir()
    _tree(root)
    (root / "shared").mkdir()
    (root / "current").symlink_to(root / "shared")
    (root / "shared" / "job.py").write_text("import fcntl\n")
    _settle(root)
    _walk(root, store)
    listed.clear()
    warm = _walk(root, store)
    assert os.path.basename(root) in listed and "shared" not in listed
    assert _seen(warm) == _seen(_walk(root, None))
    assert "current/job.py" in {f.rel for f in warm.files}  # (shared/: the same folder)
    # what the link points at changes without its folder changing
    (root / "current").unlink()
    (root / "current").symlink_to(root / "gone")
    _settle(root)
    assert ("current", "broken symbolic link") in _walk(root, store).skipped


def test_a_listing_is_kept_per_root(tmp_path, store, listed):
    root = tmp_path / "repo"
    root.mkdir()
    _tree(root)
    _walk(root, store)
    listed.clear()
    _walk(root / "jobs", store)
    assert listed == ["jobs"]
