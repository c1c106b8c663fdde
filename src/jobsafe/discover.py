"""Find the files to analyse: walk paths, honour .gitignore and excludes, classify kinds.

Symbolic links are followed only when they point inside the analysed root, and each real
directory is entered once, so link loops end. Reading is defensive: size limit, binary
detection, and a Latin-1 fallback for files that are not UTF-8 (cron reads bytes too).
"""
from __future__ import annotations

import fnmatch
import hashlib
import os
import stat
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import PathSpec

    from .cache import FileCache

#: directories never worth walking into
DEFAULT_EXCLUDES = (".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
                    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache",
                    ".jobsafe_cache", "site-packages", ".eggs")
MAX_FILE_BYTES = 10 * 1024 * 1024
_SNIFF_BYTES = 256 * 1024
_SNIFF_SUFFIXES = {"", ".txt", ".conf", ".cfg", ".tab"}
#: suffixes of files a deployment tool renders (Jinja for Ansible and Salt, ERB for
#: Puppet and Chef, Go templates): ``sync.timer.j2`` is the unit ``sync.timer``
TEMPLATE_SUFFIXES = ("j2", "jinja", "jinja2", "tmpl", "tpl", "erb", "template", "in")
_NOT_CRONTAB_SUFFIXES = {"gz", "bz2", "xz", "zst", "zip", "tar", "tgz", "md", "rst", "html", "py",
                         "sh", "j2", "jinja", "jinja2", "tmpl", "tpl", "erb", "mustache", "ejs",
                         "orig", "rej", "swp", "bak", "dpkg-dist", "dpkg-old", "ucf-dist",
                         "yml", "yaml", "json", "toml", "go", "rb", "js", "ts", "pl", "php"}
#: magic numbers of executables and archives: such a file is a program, not a broken crontab
_BINARY_MAGIC = (b"\x7fELF", b"\x1f\x8b", b"MZ", b"\xca\xfe\xba\xbe", b"\xcf\xfa\xed\xfe",
                 b"PK\x03\x04", b"BZh", b"\xfd7zXZ")


@dataclass(frozen=True)
class SourceFile:
    abs: str  # absolute path
    rel: str  # relative to the analysis root, "/" separated
    display: str  # relative to the working directory, "/" separated
    kind: str  # crontab | dockerfile | python | shell | pyproject | other


@dataclass
class Discovery:
    root: str  # absolute analysis root
    files: list[SourceFile] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (display, reason)
    #: folders and files that could not be read: (display, reason), reported as JOB900
    unreadable: list[tuple[str, str]] = field(default_factory=list)
    #: every folder walked: (absolute path, modification time in ns, ``names_digest``)
    folders: list[tuple[str, int, str]] = field(default_factory=list)


def names_digest(names: Iterable[str]) -> str:
    """A digest of a folder's entry names (the pre-commit record compares folders by it)."""
    joined = "\0".join(sorted(names))
    return hashlib.sha256(joined.encode("utf-8", "surrogateescape")).hexdigest()[:16]


#: a folder's entry: (name, is a folder, is a file); both None for a symbolic link or an
#: entry that could not be examined (a listing holding one is not kept)
_Entry = tuple[str, bool | None, bool | None]
#: a listing taken this soon after its folder last changed is not kept: a change in the same
#: tick of the file system's clock leaves the folder's time as it was
_SETTLED_NS = 2_000_000_000


class Listings:
    """Each folder's entries as the last walk saw them, by the folder's modification time,
    like the stat index for files: a warm walk stats a folder instead of listing it. A
    folder's time changes whenever an entry is added, removed or renamed; a folder holding
    a symbolic link is listed every time (what a link points at changes elsewhere)."""

    def __init__(self, cache: FileCache, root: str):
        self.cache = cache
        self.key = cache.key("folder-listings", root, "")
        old = cache.get(self.key)
        self.old: dict[str, tuple[int, tuple[_Entry, ...], str]] = \
            old if isinstance(old, dict) else {}
        self.new: dict[str, tuple[int, tuple[_Entry, ...], str]] = {}
        self.now = time.time_ns()

    def known(self, folder: str, mtime: int) -> tuple[tuple[_Entry, ...], str] | None:
        """The folder's entries (sorted by name) and their names' digest, when its time is
        the one they were listed at."""
        found = self.old.get(folder)
        if found is None or found[0] != mtime:
            return None
        self.new[folder] = found
        return found[1], found[2]

    def record(self, folder: str, mtime: int, entries: tuple[_Entry, ...], digest: str) -> None:
        if self.now - mtime > _SETTLED_NS:
            self.new[folder] = (mtime, entries, digest)

    def save(self) -> None:
        if self.new != self.old:
            self.cache.put(self.key, self.new)


def display_path(abs_path: str, cwd: str) -> str:
    rel = os.path.relpath(abs_path, cwd)
    return rel.replace(os.sep, "/")


def classify(rel: str) -> str:
    """The kind of a file judged by its name alone ("other" when the name says nothing)."""
    parts = rel.split("/")
    name = parts[-1]
    parent = parts[-2] if len(parts) > 1 else ""
    lower = name.lower()
    suffix = lower.rsplit(".", 1)[-1] if "." in lower else ""
    if suffix in _NOT_CRONTAB_SUFFIXES or (suffix.isdigit() and len(suffix) == 1):
        pass  # archives, man pages, templates and code named after crontabs
    elif lower == "crontab" or lower.startswith("crontab.") or lower.endswith((".cron", ".crontab")) \
            or parent in ("cron.d", "crontabs"):
        return "crontab"
    if lower in ("dockerfile", "containerfile") or lower.startswith(("dockerfile.", "containerfile.")) \
            or lower.endswith(".dockerfile"):
        return "dockerfile"
    if lower.endswith((".py", ".pyw")):
        return "python"
    if lower.endswith((".sh", ".bash")):
        return "shell"
    if name in ("pyproject.toml", "setup.cfg"):
        return "pyproject"
    if lower.endswith((".timer", ".service")) or \
            lower.endswith(tuple(f".{unit}.{t}" for unit in ("timer", "service")
                                 for t in TEMPLATE_SUFFIXES)):
        return "systemd"
    if lower.endswith(".mount") or lower == "fstab" or lower.startswith("fstab."):
        return "mount"
    if lower.endswith((".yaml", ".yml")):
        return "yaml"
    if lower in ("hosts", "inventory", "hosts.ini", "inventory.ini") or (
            lower.endswith(".ini") and any(p in ("inventory", "inventories") for p in parts[:-1])):
        return "ansible-inventory"
    if lower.endswith(".conf") and parent.endswith((".service.d", ".timer.d")):
        return "systemd-dropin"
    return "other"


def is_sniffable(rel: str) -> bool:
    """Files whose content may reveal a crontab (no telling extension)."""
    return os.path.splitext(rel.rsplit("/", 1)[-1])[1].lower() in _SNIFF_SUFFIXES


class _Ignorer:
    """.gitignore files (nested ones included) plus configured exclude patterns."""

    def __init__(self, root: str, excludes: tuple[str, ...]):
        self.root = root
        self.excludes = excludes
        self.specs: dict[str, PathSpec] = {}

    def load(self, rel_dir: str, abs_dir: str) -> None:
        # only a walk needs it, not the pre-commit answer (see quick)
        from pathspec import GitIgnoreSpec

        gitignore = os.path.join(abs_dir, ".gitignore")
        try:
            with open(gitignore, encoding="utf-8", errors="replace") as fh:
                self.specs[rel_dir] = GitIgnoreSpec.from_lines(fh.read().splitlines())
        except OSError:
            pass

    def ignored(self, rel: str, is_dir: bool) -> bool:
        name = rel.rsplit("/", 1)[-1]
        if is_dir and name in DEFAULT_EXCLUDES:
            return True
        for pattern in self.excludes:
            p = pattern.rstrip("/")
            if fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) or rel.startswith(p + "/"):
                return True
        probe = rel + "/" if is_dir else rel
        for base, spec in self.specs.items():
            if base and not rel.startswith(base + "/"):
                continue
            if spec.match_file(probe[len(base) + 1:] if base else probe):
                return True
        return False


def find_root(paths: list[str]) -> str:
    """The analysis root: the one directory given, else the enclosing repository."""
    if len(paths) == 1 and os.path.isdir(paths[0]):
        return os.path.realpath(paths[0])
    start = os.path.realpath(os.path.dirname(os.path.abspath(paths[0])) if paths else os.getcwd())
    probe = start
    while True:
        if any(os.path.exists(os.path.join(probe, m)) for m in (".git", "pyproject.toml",
                                                                  ".jobsafe.toml")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            # no repository: the working directory when the files are in it, else the
            # first file's folder (not an unrelated working directory, walked whole)
            cwd = os.path.realpath(os.getcwd())
            within = all(os.path.realpath(os.path.abspath(p)).startswith(cwd + os.sep)
                         for p in paths)
            return cwd if paths and within else start
        probe = parent


def find_project_root(root: str, config: str | None) -> str:
    """The project root: the nearest folder at or above the analysis root that holds
    ``.git`` or the jobsafe configuration in use; the analysis root when there is none.
    Fingerprints are relative to it and the cache lives in it, so neither depends on the
    folder jobsafe runs from or on which subfolder is analysed."""
    config_dir = os.path.dirname(os.path.realpath(config)) if config else None
    probe = root
    while True:
        if probe == config_dir or os.path.exists(os.path.join(probe, ".git")):
            return probe
        parent = os.path.dirname(probe)
        if parent == probe:
            return root
        probe = parent


def discover(root: str, cwd: str, excludes: tuple[str, ...] = (),
             listings: Listings | None = None) -> Discovery:
    """Every file under ``root`` that is not ignored, with its kind; ``listings``: the
    folders' entries as the last walk saw them (read where still current, kept for the
    next walk)."""
    result = Discovery(root=root)
    ignorer = _Ignorer(root, excludes)
    real_root = os.path.realpath(root)
    visited: set[tuple[int, int]] = set()  # (device, inode) of each directory walked
    prefix = display_path(root, cwd)

    def inside(real: str) -> bool:
        return real == real_root or real.startswith(real_root + os.sep)

    def shown(rel: str) -> str:
        return rel if prefix == "." else f"{prefix}/{rel}"

    def walk(abs_dir: str, rel_dir: str) -> None:
        try:
            st = os.stat(abs_dir)
        except OSError as exc:
            result.unreadable.append((display_path(abs_dir, cwd),
                                      f"unreadable directory: {exc.strerror or exc}"))
            return
        if (st.st_dev, st.st_ino) in visited:
            return  # a symlink loop, or a second link to the same folder
        visited.add((st.st_dev, st.st_ino))
        known = listings.known(abs_dir, st.st_mtime_ns) if listings is not None else None
        if known is not None:
            entries, digest = known
            if any(name == ".gitignore" for name, _, _ in entries):
                ignorer.load(rel_dir, abs_dir)
        else:
            ignorer.load(rel_dir, abs_dir)
            listed = _listed(abs_dir, cwd, result)
            if listed is None:
                return
            entries, judged_later = listed
            digest = names_digest(name for name, _, _ in entries)
            if listings is not None and not judged_later:
                listings.record(abs_dir, st.st_mtime_ns, entries, digest)
        result.folders.append((abs_dir, st.st_mtime_ns, digest))
        for name, is_dir, is_file in entries:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            path = os.path.join(abs_dir, name)
            is_link = is_dir is None
            if is_link:  # judged here, every time
                examined = _examined(path, cwd, result)
                if examined is None:
                    continue
                is_link, is_dir, is_file = examined
            if is_link and not inside(os.path.realpath(path)):
                result.skipped.append((display_path(path, cwd),
                                       "symbolic link out of the analysed tree"))
                continue
            if ignorer.ignored(rel, bool(is_dir)):
                continue
            if is_dir:
                walk(path, rel)
            elif is_file:
                result.files.append(SourceFile(path, rel, shown(rel), classify(rel)))
            elif is_link:
                result.skipped.append((display_path(path, cwd), "broken symbolic link"))

    walk(root, "")
    return result


def _listed(abs_dir: str, cwd: str,
            result: Discovery) -> tuple[tuple[_Entry, ...], bool] | None:
    """A folder's entries sorted by name, as (name, is a folder, is a file) — both None for
    a symbolic link or an entry that could not be examined, judged where it is used — and
    whether any is so; None when the folder cannot be listed (noted as unreadable)."""
    try:
        scanned = sorted(os.scandir(abs_dir), key=lambda e: e.name)
    except OSError as exc:
        result.unreadable.append((display_path(abs_dir, cwd),
                                  f"unreadable directory: {exc.strerror or exc}"))
        return None
    entries: list[_Entry] = []
    judged_later = False
    for entry in scanned:
        try:
            if not entry.is_symlink():
                entries.append((entry.name, entry.is_dir(), entry.is_file()))
                continue
        except OSError:
            pass
        entries.append((entry.name, None, None))
        judged_later = True
    return tuple(entries), judged_later


def _examined(path: str, cwd: str, result: Discovery) -> tuple[bool, bool, bool] | None:
    """(is a link, is a folder, is a file) of an entry, following a link; None when it
    cannot be examined (noted) or is gone."""
    try:
        is_link = stat.S_ISLNK(os.lstat(path).st_mode)
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:  # a broken link
            return is_link, False, False
        return is_link, stat.S_ISDIR(mode), stat.S_ISREG(mode)
    except FileNotFoundError:
        return None
    except OSError as exc:
        result.unreadable.append((display_path(path, cwd),
                                  f"cannot be examined: {exc.strerror or exc}"))
        return None


@dataclass(frozen=True)
class Text:
    content: str | None
    problem: str | None = None


def read_text(abs_path: str, limit: int = MAX_FILE_BYTES) -> Text:
    """Read a file as text; ``problem`` says why it cannot be analysed."""
    try:
        size = os.path.getsize(abs_path)
        if size > limit:
            return Text(None, f"file too large to analyse ({size // (1024 * 1024)} MB, limit "
                              f"{limit // (1024 * 1024)} MB)")
        data = Path(abs_path).read_bytes()
    except OSError as exc:
        return Text(None, f"unreadable file: {exc.strerror or exc}")
    if b"\0" in data[:8192]:
        return Text(None, "executable or archive" if data.startswith(_BINARY_MAGIC)
                    else "binary file")
    try:
        return Text(data.decode("utf-8"))
    except UnicodeDecodeError:
        return Text(data.decode("latin-1"))


def sniff_head(abs_path: str) -> str | None:
    """The start of a small text file, for content sniffing; None for binaries."""
    try:
        with open(abs_path, "rb") as fh:
            data = fh.read(_SNIFF_BYTES + 1)
    except OSError:
        return None
    if len(data) > _SNIFF_BYTES or b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")
