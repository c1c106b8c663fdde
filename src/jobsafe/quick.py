"""The pre-commit fast path: named files that cannot change any finding, known without
analysing the tree again.

A full run that uses the cache records what its answer depended on: the stamp of every file
whose content may matter (of a kind jobsafe reads, or read, or sniffed), the entries of
every folder it walked, and which Python modules it never read as code (the prefilter
passed over them and nothing reached them: no job runs them, no code imports from them). A later ``check`` given file names answers from that record, with the
recorded counts and no findings, when

- every other file, and every folder's list of entries, is exactly as recorded, and
- each named file is one of those unread modules, and its new text still holds none of the
  prefilter's words (a superset of what would make it read now) and no suppression comment.

Then nothing the full analysis would read has changed, so it would report nothing about the
named files either. Anything else — another kind of file, a new file, a word, another output
format — is analysed in full.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

from .discover import names_digest, read_text

#: the words a suppression comment starts with (``# jobsafe: ignore[...]``,
#: ``# noqa: JOB101``), in any case
_SUPPRESSION_WORDS = ("jobsafe", "noqa")

Stamp = tuple[int, int, int]  # (mtime in ns, size, inode)


@dataclass(frozen=True)
class Record:
    """Paths relative to the analysis root, which is part of the record's key."""
    #: every file whose content may matter: of a kind jobsafe reads, read, or sniffed
    stamps: dict[str, Stamp]
    #: every folder walked ("" for the root): (its modification time in ns, the digest of
    #: its entry names)
    folders: dict[str, tuple[int, str]]
    quiet: frozenset[str]  # the Python modules not read as code
    config: tuple[str, Stamp] | None  # the configuration in use (absolute), and its stamp
    #: literals one of which any prefilter word contains, and the names of the project's
    #: lock abstractions: a module whose text has none stays quiet
    hints: tuple[str, ...]
    files: int  # the counts the summary line showed
    jobs: int
    skipped: tuple[tuple[str, str], ...]  # (display path, reason): the summary's notes


def _stamp(path: str) -> Stamp:
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _changed(root: str, stamps: dict[str, Stamp], skip: set[str]) -> bool:
    stat, prefix = os.stat, os.path.join(root, "")
    for rel, (mtime, size, inode) in stamps.items():
        if rel not in skip:
            st = stat(prefix + rel)
            if st.st_mtime_ns != mtime or st.st_size != size or st.st_ino != inode:
                return True
    return False


def _key(cache, root: str, cwd: str, config: str | None) -> str:
    return cache.key("quick", f"{root}\0{cwd}\0{config or ''}", "")


def record(cache, root: str, cwd: str, config: str | None, stamped: list[str],
           folders: list[tuple[str, int, str]], quiet: set[str], hints: tuple[str, ...],
           files: int, jobs: int, skipped: list[tuple[str, str]]) -> None:
    """Write the record of a full run (paths absolute, under ``root``; the folders as
    discovery walked them)."""
    prefix = root.rstrip(os.sep) + os.sep

    def rel(path: str) -> str:  # (relpath is 4 µs a call, and a tree has thousands of files)
        if path.startswith(prefix) and os.path.normpath(path) == path:
            return path[len(prefix):]
        return os.path.relpath(path, root) if path != root else ""

    try:
        stamps = {rel(path): _stamp(path) for path in stamped}
        used = (os.path.realpath(config), _stamp(config)) if config is not None else None
    except OSError:
        return  # something moved while the run read it: no record, the next run is full
    entries = {rel(folder): (mtime, digest) for folder, mtime, digest in folders}
    cache.put(_key(cache, root, cwd, config), Record(
        stamps, entries, frozenset(rel(path) for path in quiet), used, hints, files, jobs,
        tuple(sorted(skipped))))


def answer(cache, root: str, cwd: str, config: str | None, named: list[str]) -> Record | None:
    """The record, when it shows the named files (absolute) cannot change any finding."""
    found = cache.get(_key(cache, root, cwd, config))
    names = {os.path.relpath(path, root) for path in named}
    if not isinstance(found, Record) or not names or not names <= found.quiet:
        return None
    if not all(_still_quiet(path, found.hints) for path in named):
        return None
    try:
        if _changed(root, found.stamps, names) or \
                found.config is not None and _stamp(found.config[0]) != found.config[1]:
            return None
        # a folder's time changes with its list of entries; an editor that saves by renaming
        # a new file into place changes it too, so there the names are compared
        saved_in = {os.path.dirname(rel) for rel in names}
        for folder, (mtime, digest) in found.folders.items():
            path = os.path.join(root, folder)
            if os.stat(path).st_mtime_ns != mtime and (
                    folder not in saved_in or names_digest(os.listdir(path)) != digest):
                return None
    except OSError:
        return None
    return found


def _still_quiet(path: str, hints: tuple[str, ...]) -> bool:
    """The module's text holds no prefilter word and no suppression comment."""
    text = read_text(path).content
    if text is None:
        return False  # unreadable, binary or too large: the full run says which
    lowered = text.lower()
    return not any(word in lowered for word in _SUPPRESSION_WORDS) and \
        not any(hint in text for hint in hints)
