"""The pipeline: discover → parse → link → Project → rules → suppress → baseline.

Every file's front end runs under its own guard, so one file that breaks a parser gives a
JOB900 finding and the rest of the tree is still analysed.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .assembly.cron import CronSources, CronSource
from .assembly.deploy import DeploymentSources
from .assembly.python import PythonSources
from .assembly.systemd import SystemdSources
from .baseline import assign_fingerprints
from .config import Settings
from .errors import InternalError, raise_internal_errors
from .discover import (SourceFile, discover, find_project_root, find_root, is_sniffable, read_text,
                       sniff_head)
from .link import Tree
from .model import Finding, ParseError, Progress, Project, Span
from .rules import Rule, all_rules, resolve_selector
from .sources.kubernetes import Catalog
from .sources.workloads import Workload
from .sources.crontab import looks_like_crontab
from .suppress import Suppression, apply_suppressions, parse_suppressions, per_file_ignored


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


class Builder(CronSources, SystemdSources, DeploymentSources, PythonSources):
    """Parses the discovered files into a Project."""

    def __init__(self, root: str, cwd: str, settings: Settings, workers: int = 1, cache=None,
                 progress: Progress | None = None):
        self.root, self.cwd, self.settings = root, cwd, settings
        self.workers = workers
        self.progress = progress
        self.discovery = discover(root, cwd, settings.extend_exclude)
        self.texts: dict[str, tuple[str, str]] = {}  # display path -> (kind, text)
        #: display path of a crontab -> display path of the Dockerfile that installs it
        self.installed_by: dict[str, str] = {}
        self.cron_images: set[str] = set()  # display paths of Dockerfiles that install cron jobs
        self.manifests: list[tuple[str, list]] = []  # display path, YAML documents
        self.k8s_catalog = Catalog()
        self.workloads: list[Workload] = []
        #: containers of each CronJob job (for its volumes)
        self.job_containers: dict[str, list] = {}
        #: a web server workload with several copies: (copies, evidence, note)
        self.web_replicas: tuple[int, Span, str] | None = None
        self.ansible_docs: list[tuple[SourceFile, list]] = []
        self.tree = Tree(self.discovery, self.texts)
        self.tree.python.cache = cache
        if cache is not None:
            from .cache import StatIndex

            self.tree.python.stats = StatIndex(cache, f"{root}\0{cwd}")
        self.project = Project(root=os.path.relpath(root, cwd).replace(os.sep, "/"))

    def _tell(self, stage: str, done: int, total: int) -> None:
        if self.progress is not None:
            self.progress(stage, done, total)

    def error(self, path: str, message: str, line: int = 1) -> None:
        self.project.parse_errors.append(ParseError(Span(path, line, 1, line, 1), message))

    def peek(self, f: SourceFile) -> str | None:
        """A file's text for a scan of the whole tree: the copy already read, else read
        without keeping it (the file is not analysed, only searched)."""
        if f.display in self.texts:
            return self.texts[f.display][1]
        return read_text(f.abs).content

    def read(self, f: SourceFile, report: bool) -> str | None:
        text = read_text(f.abs)
        if text.content is None:
            # a program or archive that happens to carry a crontab's name is not a crontab
            if report and text.problem != "executable or archive":
                self.error(f.display, f"{f.kind} not analysed: {text.problem}")
            return None
        self.texts[f.display] = (f.kind, text.content)
        return text.content

    def build(self) -> Project:
        python = self.tree.python
        matter = []
        for done, rel in enumerate(sorted(python.files), 1):
            if python.might_lock(rel):
                matter.append(rel)
            if done % 50 == 0 or done == len(python.files):
                self._tell("scanning Python", done, len(python.files))
        python.preload(matter, self.workers, self.progress)
        cron_sources: dict[str, CronSource] = {}
        for f in self.discovery.files:
            if f.kind == "crontab":
                cron_sources[f.rel] = CronSource(f)
        for f in self.discovery.files:
            if f.kind == "dockerfile":
                self._guarded(f.display, lambda f=f: self._dockerfile(f, cron_sources))
        for f in self.discovery.files:
            if f.kind == "other" and f.rel not in cron_sources and is_sniffable(f.rel):
                head = sniff_head(f.abs)
                if head and not head.startswith("#!") and looks_like_crontab(head):
                    cron_sources[f.rel] = CronSource(f)
        for rel in sorted(cron_sources):
            src = cron_sources[rel]
            self._guarded(src.file.display, lambda src=src: self._crontab(src))
        self._guarded(self.project.root, self._systemd)
        for f in self.discovery.files:
            if f.kind == "yaml":
                self._guarded(f.display, lambda f=f: self._yaml(f))
        self._guarded(self.project.root, self._ansible)
        self._guarded(self.project.root, self._host_mounts)
        for rel, f in sorted(self.tree.python.files.items()):
            if self.tree.python.might_lock(rel):
                self._guarded(f.display, lambda rel=rel: self._python(rel))
        self.project.parse_errors.extend(self.tree.python.errors)
        for display, reason in dict.fromkeys(self.discovery.unreadable):
            self.error(display, f"not analysed: {reason}")
        self.project.internal_errors.extend(self.tree.python.internal_errors)
        self._guarded(self.project.root, self._topology)  # after every source made its jobs
        self.project.pooler = self._pooler()
        self.project.workers = self._workers() or self.web_replicas
        self.project.files = sorted(set(self.texts) | python.unread)
        return self.project

    def _pooler(self) -> Span | None:
        """Where the tree says connections are pooled per transaction (PgBouncer)."""
        for f in self.discovery.files:
            name = f.rel.rsplit("/", 1)[-1].lower()
            if name.startswith("pgbouncer") and name.endswith((".ini", ".conf")) or \
                    f.kind in ("python", "yaml"):
                text = self.texts[f.display][1] if f.display in self.texts else (
                    self.peek(f) if name.startswith("pgbouncer") else None)
                if not text or not any(hint in text for hint in _POOLER_HINTS):
                    continue
                m = _POOLER.search(text)
                if m:
                    line = text.count("\n", 0, m.start()) + 1
                    return Span(f.display, line)
        return None

    def _workers(self) -> tuple[int, Span, str] | None:
        """gunicorn/uWSGI worker processes, from configs and command lines in the tree."""
        for f in self.discovery.files:
            name = f.rel.rsplit("/", 1)[-1].lower()
            if not (name == "procfile" or name.startswith(("gunicorn", "uwsgi")) or
                    f.kind in ("dockerfile", "yaml", "shell") or name.endswith((".ini", ".conf"))):
                continue
            text = self.peek(f)
            if not text:
                continue
            for m in _WORKERS.finditer(text):
                value = next(g for g in m.groups() if g is not None)
                count = 2 if "cpu_count" in value else int(value) if value.isdigit() else 0
                if count > 1:
                    return (count, Span(f.display, text.count("\n", 0, m.start()) + 1),
                            f"{count} worker processes")
        return None

    def _guarded(self, path: str, parse) -> None:
        try:
            parse()
        except RecursionError:
            self.error(path, "file too deeply nested to analyse")
        except Exception as exc:  # a front-end bug must not stop the other files
            if raise_internal_errors():
                raise
            self.project.internal_errors.append(InternalError.of(path, exc))


_POOLER_HINTS = ("pool_mode", "POOL_MODE", "DISABLE_SERVER_SIDE_CURSORS", ":6432/")
_POOLER = re.compile(r"(?im)^\s*pool_mode\s*=\s*transaction\b|DISABLE_SERVER_SIDE_CURSORS['\"]?\s*[:=]\s*True|"
                     r"postgres(?:ql)?(?:\+\w+)?://[^\s'\"]*:6432/")


_WORKERS = re.compile(
    r"\bgunicorn\b[^\n]*?(?:-w\s*|--workers[= ])(\d+)|^\s*workers\s*=\s*([^\n#]+)|"
    r"^\s*processes\s*=\s*(\d+)|--processes[= ](\d+)|WEB_CONCURRENCY[=:]\s*['\"]?(\d+)", re.M)


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
        from .cache import CACHE_DIR, FileCache

        cache = FileCache.open(os.environ.get("JOBSAFE_CACHE_DIR") or
                               os.path.join(project_root, CACHE_DIR))
    builder = Builder(root, cwd, settings, workers or os.cpu_count() or 1, cache, progress)
    project = builder.build()
    if cache is not None:
        builder.tree.python.stats.save()
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
                    for path, (kind, text) in builder.texts.items()}
    for span, codes, reason in project.annotation_ignores:
        suppressions.setdefault(span.path, []).append(
            Suppression(span, -1, codes, reason, lines=(span.line, span.end_line)))
    apply_suppressions(findings, suppressions)
    if "JOB901" in rule_ids:
        findings.extend(_unused(suppressions, scope, settings))
    assign_fingerprints(findings, lambda p, n: _line(builder.texts, p, n),
                        lambda p: os.path.relpath(os.path.join(cwd, p), project_root))
    findings.sort(key=lambda f: f.sort_key)
    reported = [f for f in findings if f.suppressed is None]
    suppressed = [f for f in findings if f.suppressed is not None]
    return Analysis(project, reported, suppressed, texts=builder.texts, cwd=cwd,
                    project_root=project_root)


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
                what = ", ".join(sup.codes) if sup.codes else "all rules"
                if sup.misplaced is not None:
                    message = (f"suppression of {what} at the end of a {sup.misplaced} line "
                               f"suppresses nothing: such lines have no trailing comments (the "
                               f"text belongs to the line); put the comment on a line of its "
                               f"own above it")
                else:
                    message = f"suppression of {what} matches no finding; remove it"
                out.append(rule.finding(sup.span, message))
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
