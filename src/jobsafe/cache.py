"""The per-file result cache, ``.jobsafe_cache/`` beside the configuration (like ruff's), or
where ``JOBSAFE_CACHE_DIR`` says.

What is cached is what one file yields on its own — a Python module's locks, hazards and
schedules — keyed by the file's content and display path, jobsafe's version and the cache
format. Everything that combines files (linking, topology, rules) is recomputed on every
run, so changing any input is always seen.

The cache lives in the analysed repository, and a pull request could commit a forged one.
Entries are therefore signed (HMAC-SHA256) with a key kept outside the repository, in the
user's cache directory: an entry that does not verify is ignored, so a pickle is only ever
loaded if this user's jobsafe wrote it. Writes go to a temporary file that is renamed into
place, so concurrent runs never see half an entry; the folder is pruned to a fixed size.
"""
from __future__ import annotations

import functools
import hashlib
import hmac
import os
import pickle

from . import __version__

CACHE_DIR = ".jobsafe_cache"
FORMAT = 3
MAX_BYTES = 256 * 1024 * 1024
_MAC = hashlib.sha256().digest_size


@functools.cache
def _code_stamp() -> str:
    """jobsafe's own modules by modification time and size: an edited checkout (or an
    upgrade that keeps the version number) never reads what older code cached."""
    package = os.path.dirname(os.path.abspath(__file__))
    stamps = []
    for folder, _dirs, files in os.walk(package):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:  # removed while an upgrade runs: the stamp changes anyway
                    continue
                stamps.append(f"{os.path.relpath(path, package)}:{st.st_mtime_ns}:{st.st_size}")
    return hashlib.sha256("\n".join(sorted(stamps)).encode()).hexdigest()[:16]


def _signing_key() -> bytes | None:
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = os.path.join(home, "jobsafe", "cache-key")
    try:
        with open(path, "rb") as fh:
            key = fh.read()
        if len(key) == 32:
            return key
    except OSError:
        pass
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        import secrets  # (only when a key is made; the pre-commit answer only reads)
        import tempfile

        key = secrets.token_bytes(32)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path))
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
        os.replace(tmp, path)  # two first runs at once: the last key wins, both still work
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


class FileCache:
    def __init__(self, directory: str, key: bytes):
        self.directory = directory
        self._key = key

    @classmethod
    def open(cls, directory: str) -> "FileCache | None":
        """The cache in ``directory``, created if needed; None when it cannot be used."""
        key = _signing_key()
        if key is None:
            return None
        try:
            os.makedirs(directory, exist_ok=True)
            ignore = os.path.join(directory, ".gitignore")
            if not os.path.exists(ignore):
                with open(ignore, "w", encoding="utf-8") as fh:
                    fh.write("# Created by jobsafe automatically.\n*\n")
        except OSError:
            return None
        return cls(directory, key)

    @classmethod
    def of_project(cls, project_root: str) -> "FileCache | None":
        """The project's cache: ``$JOBSAFE_CACHE_DIR``, else ``.jobsafe_cache`` in its root."""
        return cls.open(os.environ.get("JOBSAFE_CACHE_DIR") or
                        os.path.join(project_root, CACHE_DIR))

    def key(self, kind: str, name: str, text: str) -> str:
        digest = hashlib.sha256(f"{FORMAT}\0{__version__}\0{_code_stamp()}\0{kind}\0{name}\0"
                                .encode())
        digest.update(text.encode("utf-8", "surrogateescape"))
        return digest.hexdigest()

    def _path(self, key: str) -> str:
        return os.path.join(self.directory, key[:2], key[2:])

    def get(self, key: str):
        try:
            with open(self._path(key), "rb") as fh:
                blob = fh.read()
        except OSError:
            return None
        mac, payload = blob[:_MAC], blob[_MAC:]
        if not hmac.compare_digest(mac, hmac.new(self._key, payload, hashlib.sha256).digest()):
            return None
        try:
            return pickle.loads(payload)
        except Exception:  # an entry of an older format: recompute
            return None

    def put(self, key: str, value) -> None:
        import tempfile  # (a run that only reads, the pre-commit answer, never loads it)

        payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        blob = hmac.new(self._key, payload, hashlib.sha256).digest() + payload
        path = self._path(key)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only or full disk: the run goes on without caching

    def prune(self, max_bytes: int = MAX_BYTES) -> None:
        """Remove the least recently written entries until the folder is under 80 % of the
        limit (only when it is over the limit)."""
        entries = []
        for folder, _dirs, files in os.walk(self.directory):
            for name in files:
                if name == ".gitignore":
                    continue
                path = os.path.join(folder, name)
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                entries.append((st.st_mtime, st.st_size, path))
        total = sum(size for _, size, _ in entries)
        if total <= max_bytes:
            return
        for _, size, path in sorted(entries):
            try:
                os.remove(path)
            except OSError:
                continue
            total -= size
            if total <= max_bytes * 0.8:
                break


#: what a run notes about a file: a verdict, or a verdict with what it saw in it
Note = str | tuple[str, frozenset[str]]


class StatIndex:
    """What the last run learned about files it did not need to keep, by their (mtime, size,
    inode), like ruff's cache: a warm run stats such a file instead of reading it. Stamps are
    taken before a file is read, so a file changed while it is read is read again next time.
    """

    def __init__(self, cache: FileCache, name: str):
        self.cache = cache
        self.key = cache.key("stat-index", name, "")
        old = cache.get(self.key)
        self.old: dict[str, tuple] = dict(old) if isinstance(old, dict) else {}
        self.new: dict[str, tuple] = {}
        #: what the notes were taken against (the project's lock abstractions of that
        #: run), read from the last run and replaced for the next
        self._old_context: dict = self.old.pop("", (None, {}))[1]
        self.context: dict = dict(self._old_context)

    @staticmethod
    def stamp(path: str) -> tuple[int, int, int] | None:
        try:
            st = os.stat(path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def known(self, name: str, stamp: tuple) -> Note | None:
        """The note recorded for the file when it had this stamp, or None."""
        entry = self.old.get(name)
        return entry[1] if entry is not None and entry[0] == stamp else None

    def record(self, name: str, stamp: tuple, note: Note) -> None:
        self.new[name] = (stamp, note)

    def save(self) -> None:
        new = {**self.new, "": (None, self.context)}
        if new != {**self.old, "": (None, self._old_context)}:
            self.cache.put(self.key, new)
