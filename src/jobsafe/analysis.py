"""The pipeline: discover → parse → link → Project → rules → suppress → baseline.

Every file's front end runs under its own guard, so one file that breaks a parser gives a
JOB900 finding and the rest of the tree is still analysed.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from .baseline import assign_fingerprints
from .config import Settings
from .discover import (SourceFile, discover, find_root, is_sniffable, read_text,
                       sniff_head)
from .link import Tree, build_job
from .model import CronFile, Finding, ParseError, Project, Span
from .rules import Rule, all_rules, resolve_selector
from .sources.crontab import looks_like_crontab, looks_like_system_crontab, parse_crontab
from .sources.dockerfile import is_system_destination, parse_dockerfile
from .suppress import Suppression, apply_suppressions, parse_suppressions, per_file_ignored


@dataclass
class Analysis:
    project: Project
    findings: list[Finding]  # reported (not suppressed), sorted
    suppressed: list[Finding] = field(default_factory=list)
    texts: dict[str, tuple[str, str]] = field(default_factory=dict)  # display -> (kind, text)

    @property
    def files_read(self) -> int:
        return len(self.texts)

    def line_text(self, path: str, line: int) -> str | None:
        return _line(self.texts, path, line)


@dataclass
class _CronSource:
    file: SourceFile
    system: bool | None = None
    #: (cron.d name, the Dockerfile COPY line) for each copy into /etc/cron.d
    installs: list[tuple[str, Span]] = field(default_factory=list)


class Builder:
    """Parses the discovered files into a Project."""

    def __init__(self, root: str, cwd: str, settings: Settings):
        self.root, self.cwd, self.settings = root, cwd, settings
        self.discovery = discover(root, cwd, settings.extend_exclude)
        self.texts: dict[str, tuple[str, str]] = {}  # display path -> (kind, text)
        self.tree = Tree(self.discovery, self.texts)
        self.project = Project(root=os.path.relpath(root, cwd).replace(os.sep, "/"))

    def error(self, path: str, message: str, line: int = 1) -> None:
        self.project.parse_errors.append(ParseError(Span(path, line, 1, line, 1), message))

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
        cron_sources: dict[str, _CronSource] = {}
        for f in self.discovery.files:
            if f.kind == "crontab":
                cron_sources[f.rel] = _CronSource(f)
        for f in self.discovery.files:
            if f.kind == "dockerfile":
                self._guarded(f, lambda f=f: self._dockerfile(f, cron_sources))
        for f in self.discovery.files:
            if f.kind == "other" and f.rel not in cron_sources and is_sniffable(f.rel):
                head = sniff_head(f.abs)
                if head and not head.startswith("#!") and looks_like_crontab(head):
                    cron_sources[f.rel] = _CronSource(f)
        for rel in sorted(cron_sources):
            src = cron_sources[rel]
            self._guarded(src.file, lambda src=src: self._crontab(src))
        for rel, f in sorted(self.tree.python.files.items()):
            if self.tree.python.might_lock(rel):
                self._guarded(f, lambda rel=rel: self._python(rel))
        self.project.parse_errors.extend(self.tree.python.errors)
        self.project.files = sorted(self.texts)
        return self.project

    def _python(self, rel: str) -> None:
        module = self.tree.python.module(rel)
        if module is None:
            return
        for unit in module.units.values():
            self.project.code_locks.extend(unit.locks)
            self.project.code_facts.extend(unit.facts)

    def _guarded(self, f: SourceFile, parse) -> None:
        try:
            parse()
        except RecursionError:
            self.error(f.display, "file too deeply nested to analyse")
        except Exception as exc:  # a front-end bug must not stop the other files
            self.error(f.display, f"internal error while analysing this file: "
                                  f"{type(exc).__name__}: {exc}")

    def _dockerfile(self, f: SourceFile, cron_sources: dict[str, _CronSource]) -> None:
        text = self.read(f, report=False)
        if text is None:
            return
        result = parse_dockerfile(f.display, text)
        base = os.path.dirname(f.rel)
        for entry in result.entries:
            self._add_cron_job(f.display, entry, base)
        for hint in result.copies:
            for src in hint.sources:
                for rel in self._context_files(base, src):
                    target = cron_sources.setdefault(rel, _CronSource(self.tree.files[rel]))
                    target.system = is_system_destination(hint.dest)
                    if hint.dest.startswith("/etc/cron.d"):
                        name = rel.rsplit("/", 1)[-1] if hint.dest.endswith(("/", "cron.d")) \
                            else hint.dest.rsplit("/", 1)[-1]
                        target.installs.append((name, Span(f.display, hint.line, 1, hint.line, 1)))

    def _context_files(self, base: str, src: str) -> list[str]:
        """Tree files a COPY source names (the Dockerfile's folder is the build context)."""
        out = []
        for context in (base, ""):
            rel = os.path.normpath(os.path.join(context, src)).lstrip("./") if src not in (".", "./") \
                else context
            if rel in self.tree.files:
                return [rel]
            prefix = rel.rstrip("/") + "/"
            inside = sorted(r for r in self.tree.files if r.startswith(prefix) and "/" not in r[len(prefix):])
            if inside:
                return inside
        return out

    def _crontab(self, src: _CronSource) -> None:
        f = src.file
        text = self.read(f, report=True)
        if text is None:
            return
        if text.startswith("#!") and not src.installs:
            del self.texts[f.display]  # a script named like a crontab (temp-cleanup.cron)
            return
        parts = f.rel.split("/")
        in_cron_d = len(parts) > 1 and parts[-2] == "cron.d"
        system = src.system
        if system is None:
            system = in_cron_d or f.rel == "etc/crontab" or f.rel.endswith("/etc/crontab") \
                or ("crontabs" not in parts[:-1] and looks_like_system_crontab(text))
        result = parse_crontab(f.display, text, system)
        self.project.parse_errors.extend(result.errors)
        for entry in result.entries:
            self._add_cron_job(f.display, entry, os.path.dirname(f.rel))
        first = result.entries[0].span if result.entries else Span(f.display, 1, 1, 1, 1)
        names = list(src.installs) or [(parts[-1] if in_cron_d else None, first)]
        for i, (name, where) in enumerate(names):
            unterminated = result.last_entry_unterminated if i == 0 else None
            self.project.cron_files.append(CronFile(where, name, unterminated,
                                                    bool(result.entries)))

    def _add_cron_job(self, path: str, entry, base: str) -> None:
        job = build_job(f"cron:{path}:{entry.span.line}", "cron", entry.span, entry.schedule,
                        entry.command, entry.locator, self.tree, base, entry.user, entry.env)
        self.project.jobs.append(job)


def analyse(paths: list[str], settings: Settings, rule_ids: list[str],
            cwd: str | None = None) -> Analysis:
    cwd = os.path.realpath(cwd or os.getcwd())
    paths = paths or ["."]
    root = find_root(paths)
    builder = Builder(root, cwd, settings)
    project = builder.build()
    rules: list[Rule] = [all_rules()[i](settings) for i in rule_ids]
    findings: list[Finding] = []
    for rule in rules:
        if not rule.deferred:
            findings.extend(rule.check(project))
    findings = [f for f in findings if not per_file_ignored(f, settings.per_file_ignores,
                                                            resolve_selector)]
    scope = _named_files(paths, cwd)
    if scope is not None:
        job_paths = {j.id: j.span.path for j in project.jobs}
        findings = [f for f in findings if f.span.path in scope or job_paths.get(f.job) in scope]
    suppressions = {path: parse_suppressions(path, text, kind)
                    for path, (kind, text) in builder.texts.items()}
    apply_suppressions(findings, suppressions)
    if "JOB901" in rule_ids:
        findings.extend(_unused(suppressions, scope, settings))
    assign_fingerprints(findings, lambda p, n: _line(builder.texts, p, n))
    findings.sort(key=lambda f: f.sort_key)
    reported = [f for f in findings if f.suppressed is None]
    suppressed = [f for f in findings if f.suppressed is not None]
    return Analysis(project, reported, suppressed, builder.texts)


def _unused(suppressions: dict[str, list[Suppression]], scope, settings) -> list[Finding]:
    rule = all_rules()["JOB901"](settings)
    out = []
    for path, sups in suppressions.items():
        if scope is not None and path not in scope:
            continue
        for sup in sups:
            if not sup.used:
                what = ", ".join(sup.codes) if sup.codes else "all rules"
                out.append(rule.finding(sup.span, f"suppression of {what} matches no finding; "
                                                  f"remove it"))
    return out


def _named_files(paths: list[str], cwd: str) -> set[str] | None:
    """Display paths of files named on the command line (pre-commit mode), else None."""
    files = [p for p in paths if os.path.isfile(p)]
    if not files:
        return None
    return {os.path.relpath(os.path.realpath(p), cwd).replace(os.sep, "/") for p in files}


def _line(texts: dict[str, tuple[str, str]], path: str, line: int) -> str | None:
    entry = texts.get(path)
    if entry is None:
        return None
    lines = entry[1].split("\n")
    return lines[line - 1] if 0 < line <= len(lines) else None
