"""What every assembly step shares, declared in one place: the files found, the tree they
form (code lookups, the Python index), the texts read so far, the settings, and the
``Project`` the steps fill. Anything else a step needs from another comes as an argument
and leaves as a return value, so the order of assembly is the order of the calls in
``analysis.build_project``."""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from ..config import Settings
from ..discover import Discovery, SourceFile, read_text
from ..errors import SHALLOW_DEPTH, InternalError, InternalRecursion, raise_internal_errors, text_depth
from ..link import Tree
from ..model import ParseError, Project, Span


@dataclass
class Context:
    cwd: str  # absolute: display paths are relative to it
    settings: Settings
    discovery: Discovery
    texts: dict[str, tuple[str, str]]  # display path -> (kind, text) of every file read
    tree: Tree
    project: Project

    def error(self, path: str, message: str, line: int = 1) -> None:
        self.project.parse_errors.append(ParseError(Span(path, line, 1, line, 1), message))

    def peek(self, f: SourceFile) -> str | None:
        """A file's text for a scan of the whole tree: the copy already read, else read
        without keeping it (the file is not analysed, only searched)."""
        if f.display in self.texts:
            return self.texts[f.display][1]
        return read_text(f.abs).content

    def read(self, f: SourceFile, report: bool) -> str | None:
        """A file's text, kept for suppressions, excerpts and fingerprints; with ``report``,
        a file that cannot be read is a JOB900."""
        text = read_text(f.abs)
        if text.content is None:
            # a program or archive that happens to carry a crontab's name is not a crontab
            if report and text.problem != "executable or archive":
                self.error(f.display, f"{f.kind} not analysed: {text.problem}")
            return None
        self.texts[f.display] = (f.kind, text.content)
        return text.content

    def guarded(self, path: str, step: Callable[[], object]) -> None:
        """Run one file's step: a file too deep to analyse is a JOB900, a bug in jobsafe an
        internal error (see ``errors``); either way the other files go on."""
        try:
            try:
                step()
            except RecursionError as exc:
                if self._depth(path) < SHALLOW_DEPTH:
                    raise InternalRecursion(f"recursion without end on {path}") from exc
                self.error(path, "file too deeply nested to analyse")
        except Exception as exc:
            if raise_internal_errors():
                raise
            self.project.internal_errors.append(InternalError.of(path, exc))

    def _depth(self, path: str) -> int:
        """How deeply the file at a display path nests (0: not a file, or unreadable)."""
        if path in self.texts:
            return text_depth(self.texts[path][1])
        text = read_text(os.path.join(self.cwd, path)).content if os.path.isfile(
            os.path.join(self.cwd, path)) else None
        return text_depth(text) if text is not None else 0

    def display(self, path: str) -> str:
        """An absolute path as findings show it."""
        return os.path.relpath(path, self.cwd).replace(os.sep, "/")


class Step:
    """Base of the assembly steps: the context's parts under short names, nothing else."""

    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.project = ctx.project
        self.tree = ctx.tree
        self.texts = ctx.texts
        self.settings = ctx.settings
        self.discovery = ctx.discovery
        self.read = ctx.read
        self.peek = ctx.peek
        self.error = ctx.error
        self.guarded = ctx.guarded
