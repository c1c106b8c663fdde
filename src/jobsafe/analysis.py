"""The pipeline: discover → parse → link → Project → rules → suppress → baseline.

Every file's front end runs under its own guard, so one file that breaks a parser gives a
JOB900 finding and the rest of the tree is still analysed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .assembly.context import Context
from .assembly.cron import CronAssembly
from .assembly.deploy import ManifestAssembly
from .assembly.php import PhpAssembly
from .assembly.python import PythonAssembly
from .assembly.systemd import SystemdAssembly
from .assembly.topology import TopologyAssembly
from .baseline import assign_fingerprints
from .config import Settings
from .discover import Listings, discover, find_project_root, find_root, is_sniffable
from .errors import InternalError, raise_internal_errors
from .link import Tree
from .model import Finding, MessageArg, Progress, Project, message, prose
from .rules import Rule, all_rules, resolve_selector
from .sources.python.index import PARALLEL_MIN_FILES, start_forkserver
from .suppress import (
    Suppression,
    apply_suppressions,
    parse_suppressions,
    per_file_ignored,
)


@dataclass
class Analysis:
    project: Project
    findings: list[Finding]  # reported (not suppressed), sorted
    suppressed: list[Finding] = field(default_factory=list)
    #: findings a baseline already knows (``baseline_state`` "unchanged"), not reported
    baselined: list[Finding] = field(default_factory=list)
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)  # display -> (kind, text)
    cwd: str = "."  # the folder display paths are relative to (absolute)
    project_root: str = "."  # absolute: see ``discover.find_project_root``

    @property
    def internal_errors(self) -> list[InternalError]:
        return self.project.internal_errors

    @property
    def files_read(self) -> int:
        """Files analysed: read, or known unchanged and irrelevant from the cache."""
        return len(self.project.files)

    def line_text(self, path: str, line: int) -> str | None:
        return _line(self.texts, path, line)


@dataclass
class _Read:
    """What a run read, for the pre-commit fast path's record (absolute paths)."""
    stamped: list[str]  # the files whose content the answer may depend on
    folders: list[tuple[str, int, str]]  # (folder, mtime, digest of its names)
    #: Python modules never read as code: passed over by the prefilter, reached by nothing
    quiet: set[str]
    #: the names of the project's lock abstractions a module may call: a quiet module that
    #: comes to mention one is read as code
    abstractions: tuple[str, ...] = ()


def build_project(root: str, cwd: str, settings: Settings, workers: int = 1, cache=None,
                  progress: Progress | None = None
                  ) -> tuple[Project, dict[str, tuple[str, str]], _Read]:
    """Parse the tree under ``root`` into a Project, one source family after another; also
    the texts read (display path -> (kind, text)) for suppressions and excerpts, and what
    was read as code."""
    listings = Listings(cache, root) if cache is not None else None
    discovery = discover(root, cwd, settings.extend_exclude, listings)
    if listings is not None:
        listings.save()
    texts: dict[str, tuple[str, str]] = {}
    tree = Tree(discovery, texts)
    tree.python.cache = cache
    if cache is not None:
        from .cache import StatIndex

        tree.python.stats = StatIndex(cache, f"{root}\0{cwd}")
    project = Project(root=os.path.relpath(root, cwd).replace(os.sep, "/"))
    ctx = Context(cwd, settings, discovery, texts, tree, project)
    _preload_python(tree, workers, progress)
    images = CronAssembly(ctx).run()
    SystemdAssembly(ctx).run()
    manifests = ManifestAssembly(ctx).run()
    PythonAssembly(ctx).run()
    PhpAssembly(ctx).run()
    TopologyAssembly(ctx, manifests, images).run()  # after every source made its jobs
    for display, reason in dict.fromkeys(discovery.unreadable):
        ctx.error(display, f"not analysed: {reason}")
    project.files = sorted(set(texts) | tree.python.unread | set(tree.php.scanned))
    if tree.python.stats is not None:
        tree.python.stats.save()
    consulted = tree.python.consulted()
    quiet = {f.abs for rel, f in tree.python.files.items()
             if f.kind == "python" and rel not in consulted
             and texts.get(f.display, ("python", ""))[0] == "python"}
    # a file of no kind jobsafe reads, that it did not read nor sniff, cannot matter while
    # it has that name (a renamed or new one changes its folder's entries)
    read = set(texts) | set(tree.php.scanned)
    stamped = [f.abs for f in discovery.files
               if f.kind != "other" or f.display in read or is_sniffable(f.rel)]
    abstractions = tuple(sorted(tree.python.called_abstractions)) if quiet else ()
    return project, texts, _Read(stamped, discovery.folders, quiet, abstractions)


def _preload_python(tree: Tree, workers: int, progress: Progress | None) -> None:
    """The prefilter over every module, then the kept ones parsed (in worker processes when
    there are enough of them), then those that call a lock abstraction of the kept ones."""
    python = tree.python
    matter = []
    to_parse = 0
    for done, rel in enumerate(sorted(python.files), 1):
        if python.might_lock(rel):
            matter.append(rel)
            if not python.parsed(rel):
                to_parse += 1
                if to_parse == PARALLEL_MIN_FILES and workers > 1:
                    start_forkserver()  # (the workers will be needed: ready them meanwhile)
        if progress is not None and (done % 50 == 0 or done == len(python.files)):
            progress("scanning Python", done, len(python.files))
    python.preload(matter, workers, progress)
    # then the modules that call a lock abstraction those define
    python.preload([rel for rel in sorted(python.files) if python.calls_abstraction(rel)],
                   workers, progress)
    python.note_abstractions()


def analyse(paths: list[str], settings: Settings, rule_ids: list[str],
            cwd: str | None = None, workers: int | None = None, use_cache: bool = False,
            progress: Progress | None = None) -> Analysis:
    """``workers``: processes for parsing (default: one per core); ``use_cache``: read and
    write ``.jobsafe_cache`` beside the configuration (or at the root); ``progress``: told
    how the reading and parsing advance."""
    cwd = os.path.realpath(cwd or os.getcwd())
    paths = paths or ["."]
    root = find_root(paths)
    project_root = find_project_root(root, settings.source)
    cache = None
    if use_cache:
        from .cache import FileCache

        cache = FileCache.of_project(project_root)
    project, texts, read = build_project(root, cwd, settings, workers or os.cpu_count() or 1,
                                         cache, progress)
    if cache is not None:
        cache.prune()
    rules: list[Rule] = [all_rules()[i](settings) for i in rule_ids]
    findings: list[Finding] = []
    for rule in rules:
        if not rule.deferred:
            findings.extend(_run_rule(rule, project))
    findings = [f for f in findings if not per_file_ignored(f, settings.per_file_ignores,
                                                            resolve_selector)]
    scope = _Scope.of(paths, cwd, root, settings.source)
    if scope is not None:
        # a job is in scope when its schedule entry or any code it runs was named; a
        # finding, when its evidence was (a compose file's new replica count: JOB301)
        in_scope = {j.id for j in project.jobs if j.span.path in scope or
                    any(p in scope for e in j.entries for p in e.files)}
        findings = [f for f in findings if f.span.path in scope or f.job in in_scope or
                    any(r.span.path in scope for r in f.related)]
    suppressions = {path: parse_suppressions(path, text, kind)
                    for path, (kind, text) in texts.items()}
    for span, codes, reason in project.annotation_ignores:
        suppressions.setdefault(span.path, []).append(
            Suppression(span, -1, codes, reason, lines=(span.line, span.end_line)))
    apply_suppressions(findings, suppressions)
    if "JOB901" in rule_ids:
        findings.extend(_unused(suppressions, scope, settings))
    assign_fingerprints(findings, lambda p, n: _line(texts, p, n),
                        lambda p: os.path.relpath(os.path.join(cwd, p), project_root))
    findings.sort(key=lambda f: f.sort_key)
    reported = [f for f in findings if f.suppressed is None]
    suppressed = [f for f in findings if f.suppressed is not None]
    if cache is not None and not project.internal_errors:
        _record(cache, root, cwd, settings, read, project)
    return Analysis(project, reported, suppressed, texts=texts, cwd=cwd,
                    project_root=project_root)


def _record(cache, root: str, cwd: str, settings: Settings, read: _Read,
            project: Project) -> None:
    """The pre-commit fast path's record of this run, with the prefilter's words: a quiet
    module that comes to hold one of them is read again."""
    from . import quick
    from .sources.python import prefilter

    hints = prefilter.vocabulary().hints
    if hints is None:
        return
    quick.record(cache, root, cwd, settings.source, read.stamped, read.folders, read.quiet,
                 (*hints, *read.abstractions), len(project.files), len(project.jobs),
                 project.skipped)


def _run_rule(rule: Rule, project: Project) -> list[Finding]:
    """A rule's findings; a bug in one rule is an internal error, and the others still run."""
    try:
        return list(rule.check(project))
    except Exception as exc:
        if raise_internal_errors():
            raise
        project.internal_errors.append(InternalError.of(f"rule {rule.id}", exc))
        return []


def _unused(suppressions: dict[str, list[Suppression]], scope, settings) -> list[Finding]:
    rule = all_rules()["JOB901"](settings)
    out = []
    for path, sups in suppressions.items():
        if scope is not None and path not in scope:
            continue
        for sup in sups:
            if not sup.used:
                what: MessageArg = ", ".join(sup.codes) if sup.codes else prose("all rules")
                if sup.misplaced is not None:
                    text = message("suppression of {rules} at the end of a {kind} line "
                                   "suppresses nothing: such lines have no trailing comments "
                                   "(the text belongs to the line); put the comment on a line "
                                   "of its own above it", rules=what, kind=sup.misplaced)
                else:
                    text = message("suppression of {rules} matches no finding; remove it",
                                   rules=what)
                out.append(rule.finding(sup.span, text, ()))
    return out


class _Scope:
    """What to report on when the analysis root is wider than the paths named (pre-commit
    file names, or several folders): files named, and everything under folders named."""

    def __init__(self, files: set[str], folders: tuple[str, ...]):
        self.files, self.folders = files, folders

    @classmethod
    def of(cls, paths: list[str], cwd: str, root: str, config: str | None) -> "_Scope | None":
        """None (everything) for the root itself, or when the configuration in use is
        among the files named: a changed config can change any finding."""
        if len(paths) == 1 and os.path.isdir(paths[0]) and os.path.realpath(paths[0]) == root:
            return None
        if config is not None and any(os.path.realpath(p) == os.path.realpath(config)
                                      for p in paths):
            return None
        display = [os.path.relpath(os.path.realpath(p), cwd).replace(os.sep, "/") for p in paths]
        files = {d for d, p in zip(display, paths) if os.path.isfile(p)}
        folders = tuple("" if d == "." else d.rstrip("/") + "/" for d, p in zip(display, paths)
                        if os.path.isdir(p))
        return cls(files, folders)

    def __contains__(self, path) -> bool:
        return path is not None and (path in self.files or path.startswith(self.folders))


def _line(texts: dict[str, tuple[str, str]], path: str, line: int) -> str | None:
    entry = texts.get(path)
    if entry is None:
        return None
    lines = entry[1].split("\n")
    return lines[line - 1] if 0 < line <= len(lines) else None
