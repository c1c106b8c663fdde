"""The audit report (``jobsafe jobs --format html|markdown``, ``jobsafe audit``).

One model of the inventory — summary, one row per job, a week of firings, findings with
their code — rendered by a Jinja2 template to a single self-contained HTML file, or to
Markdown for a pull-request comment or a wiki page.
"""
from __future__ import annotations

import os
import string
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from .. import __version__
from ..analysis import Analysis
from ..fix import diff_of
from ..model import Finding, Job, Lock, Message
from ..paths import relative_to_root
from ..schedule import week_profile
from ..timespec import format_duration
from .words import in_words

#: what a finding's confidence says, for the audit page
CONFIDENCE_MEANS = {
    "high": "every fact it rests on was parsed exactly",
    "medium": "a fact was inferred through the project's code (a factory, a helper, "
              "a project lock class)",
    "low": "a fact rests on a name or a content sniff",
}
DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
#: lines of code shown above and below a finding
CONTEXT_LINES = 2
#: firings per week in an hour of the week from which a job counts as starting there every
#: week (a little under 1: the four years averaged hold a few leap and DST days)
EVERY_WEEK = 0.95
SOURCE_NAMES = {"cron": "crontab", "systemd": "systemd timer", "k8s": "Kubernetes CronJob",
                "gha": "GitHub Actions", "ansible": "Ansible cron task", "celery": "Celery beat",
                "apscheduler": "APScheduler", "schedule": "schedule", "huey": "Huey",
                "django-cron": "django-cron", "compose": "compose",
                "laravel": "Laravel scheduler", "symfony": "Symfony scheduler"}


@dataclass(frozen=True)
class Concern:
    """A summary count that also filters the table (``flag`` marks the rows)."""

    flag: str
    label: str
    count: int


@dataclass
class FindingView:
    index: int
    finding: Finding
    excerpt: list[tuple[int, str, bool]]  # (line number, text, inside the finding's span)
    row: int | None = None  # the job's row
    fix_diff: str | None = None  # its fix as a unified diff


@dataclass
class JobRow:
    index: int
    job: Job
    words: str
    every: str
    guard: str | None
    locks: list[str]
    bound: str | None
    replicas: str | None
    entry: str | None
    findings: list[FindingView] = field(default_factory=list)
    prefix: str = "."  # the analysed root: paths are shown relative to it

    @property
    def idempotency(self) -> list[str]:
        """The findings about side effects a rerun repeats (JOB4xx), with where they are."""
        return [f"{v.finding.rule} {v.finding.name} "
                f"({relative_to_root(v.finding.span.path, self.prefix)}:{v.finding.span.line})"
                for v in self.findings if v.finding.rule.startswith("JOB4")]

    @property
    def flags(self) -> list[str]:
        rules = {v.finding.rule for v in self.findings}
        if self.job.never_runs:
            return ["never"]
        # a dispatcher (``artisan schedule:run``) is not a job of its own: its tasks are
        recurring = self.job.schedule.recurring and not (
            self.job.targets and all(t.role == "dispatch" for t in self.job.targets))
        return [flag for flag, on in (
            ("unguarded", recurring and self.guard is None),
            ("multinode", "JOB301" in rules),
            ("unbounded", recurring and self.bound is None),
            ("repeats", any(r.startswith("JOB4") for r in rules)),
            ("findings", bool(rules))) if on]


@dataclass
class Audit:
    root: str
    #: the analysed root as a display path: paths on the page are shown relative to it
    prefix: str
    files: int
    rows: list[JobRow]
    findings: list[FindingView]
    #: (hour of the week, Monday 00:00 = 0) -> [(row index, firings per week in that hour)]:
    #: the hours a job starts in every week
    cells: dict[int, list[tuple[int, float]]]
    #: rows of jobs that start only in some weeks (monthly, on certain dates): drawn in
    #: every weekday's cell they would fill the grid, so they are listed beside it
    some_weeks: list[int] = field(default_factory=list)

    @property
    def by_source(self) -> list[tuple[str, int]]:
        counts = Counter(SOURCE_NAMES.get(r.job.source, r.job.source) for r in self.rows)
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))

    @property
    def fixable(self) -> tuple[int, int]:
        """(findings with a fix, of which safe ones)."""
        fixes = [v.finding.fix for v in self.findings if v.finding.fix is not None]
        return len(fixes), sum(1 for fix in fixes if fix.applicability == "safe")

    @property
    def concerns(self) -> list[Concern]:
        flags = Counter(flag for r in self.rows for flag in r.flags)
        return [Concern(flag, label, flags[flag]) for flag, label in (
            ("unguarded", "no overlap guard"),
            ("multinode", "host-local lock on several nodes"),
            ("unbounded", "no runtime bound"),
            ("repeats", "side effects repeated by a rerun"),
            ("findings", "with findings"),
            ("never", "never run (the scheduler skips them)"))]

    @property
    def by_rule(self) -> list[tuple[str, str, int, str]]:
        from ..rules import all_rules

        rules = all_rules()
        counts = Counter(v.finding.rule for v in self.findings)
        return [(rule, rules[rule].name if rule in rules else "", n,
                 rules[rule].summary if rule in rules else "")
                for rule, n in sorted(counts.items())]

    @property
    def off_clock(self) -> list[JobRow]:
        """Jobs that never appear on the week: at boot, templated, unknown schedules, jobs
        that never run."""
        on_clock = {i for jobs in self.cells.values() for i, _ in jobs} | set(self.some_weeks)
        return [r for r in self.rows if r.index not in on_clock]

    @cached_property
    def hourly(self) -> set[int]:
        """Rows of jobs that start in every hour of the week: the same in every cell, they are
        counted beside the week rather than in it, so fixed-time pile-ups stand out."""
        counts = Counter(i for jobs in self.cells.values() for i, _ in jobs)
        return {i for i, n in counts.items() if n == 168}

    def heat(self) -> list[list[int]]:
        """Jobs starting in each hour of the week (7 rows of 24), hourly ones left out."""
        hourly = self.hourly
        return [[sum(1 for i, _ in self.cells.get(day * 24 + hour, ()) if i not in hourly)
                 for hour in range(24)] for day in range(7)]

    def cells_map(self) -> dict[str, list[list[float]]]:
        """Each hour's jobs for the page's hover box, hourly ones apart:
        {hour: [[row, firings per week]]}, {"hourly": [[row, firings per hour]]}."""
        hourly = self.hourly
        out = {str(k): [[i, round(w, 3)] for i, w in v if i not in hourly]
               for k, v in sorted(self.cells.items())}
        out["hourly"] = [[i, round(w, 3)] for i, w in self.cells.get(0, ()) if i in hourly]
        return {k: v for k, v in out.items() if v}

    def shown(self, path: str) -> str:
        """A display path as the page shows it: relative to the analysed root."""
        return relative_to_root(path, self.prefix)

    def labels(self) -> list[str]:
        return [f"{self.shown(r.job.span.path)}:{r.job.span.line} · {r.words}" for r in self.rows]


def overlap_guard(job: Job) -> str | None:
    """What keeps a second copy of the job out, in a few words; None when nothing does.
    A ``flock`` is spelled the same whether the crontab line or the script takes it."""
    held = [guard_text(g.kind, g.path, "host", g.blocking) for g in job.guards]
    held += [lock_text(lock) for lock in job.guard_locks if lock.scope in ("host", "cluster")]
    claim = job.one_per_firing
    if claim is not None:  # one copy per firing (onOneServer, a locked schedule)
        held.append(f"{claim.api} per firing ({claim.scope})")
    if held:
        return ", ".join(dict.fromkeys(held))
    if job.source == "systemd":
        return "systemd (one active unit)"
    if job.k8s is not None and job.k8s.concurrency_policy in ("Forbid", "Replace"):
        return f"concurrencyPolicy: {job.k8s.concurrency_policy}"
    if job.workflow is not None and job.workflow.concurrency:
        return "concurrency group"
    options = dict(job.options)
    if job.source == "apscheduler" and options.get("max_instances", "1") == "1":
        return "max_instances=1 (one process)"
    return None


def guard_text(kind: str, where: str | None, scope: str, blocking: bool | None,
               ttl: float | None = None) -> str:
    """``flock -n /var/lock/x.lock (host)``, ``redis-key lock:x (cluster, TTL 10 min)``."""
    parts = [scope] + ([f"TTL {format_duration(ttl)}"] if ttl is not None else []) + (
        ["waits"] if blocking else [])
    name = f"{kind} -n" if kind == "flock" and blocking is False else kind
    return f"{name}{f' {where}' if where else ''} ({', '.join(parts)})"


def lock_text(lock: Lock) -> str:
    return guard_text(lock.kind, lock.path or lock.key, lock.scope,
                      lock.blocking if lock.kind == "flock" else None, lock.ttl_seconds)


def build_audit(analysis: Analysis) -> Audit:
    texts: dict[str, list[str]] = {}

    def excerpt(f: Finding) -> list[tuple[int, str, bool]]:
        if f.span.path not in texts:
            entry = analysis.texts.get(f.span.path)
            texts[f.span.path] = entry[1].splitlines() if entry else []
        lines = texts[f.span.path]
        first = max(1, f.span.line - CONTEXT_LINES)
        last = min(len(lines), f.span.end_line + CONTEXT_LINES)
        return [(n, lines[n - 1], f.span.line <= n <= f.span.end_line)
                for n in range(first, last + 1)]

    def text_of(path: str) -> str | None:
        entry = analysis.texts.get(path)
        return entry[1] if entry else None

    def from_root(path: str) -> str:  # a diff to apply in the analysed root
        return relative_to_root(path, analysis.project.root)

    # (one line of context: the page shows its excerpt beside it, and stays small)
    views = [FindingView(i, f, excerpt(f), fix_diff=diff_of(f, text_of, from_root, context=1))
             for i, f in enumerate(analysis.findings)]
    by_job: dict[str, list[FindingView]] = defaultdict(list)
    for view in views:
        if view.finding.job:
            by_job[view.finding.job].append(view)
    rows, cells, some_weeks = [], defaultdict(list), []

    def shown(path: str) -> str:
        return relative_to_root(path, analysis.project.root)

    jobs = sorted(analysis.project.jobs, key=lambda j: (j.span.path, j.span.line, j.id))
    for index, job in enumerate(jobs):
        s = job.schedule
        entry = next((t.entry for t in job.targets if t.entry is not None), None)
        row = JobRow(
            index=index, job=job,
            words=f"never runs: {job.never_runs.text}" if job.never_runs else in_words(s),
            every=format_duration(s.min_interval_seconds) if s.min_interval_seconds else "",
            guard=overlap_guard(job), locks=[lock_text(lock) for lock in job.all_locks],
            bound=format_duration(job.runtime_bound_seconds)
            if job.runtime_bound_seconds is not None else "set"  # by a template
            if job.k8s is not None and job.k8s.deadline_templated or
            job.unit is not None and job.unit.limit_templated else None,
            replicas=job.replicas.note if job.replicas else None,
            entry=(f"{shown(entry.path)}:{entry.function}()" if entry.function else
                   shown(entry.path)) if entry else None,
            findings=by_job.get(job.id, []), prefix=analysis.project.root)
        for view in row.findings:
            view.row = index
        profile = week_profile(s) if not job.never_runs else {}
        # an interval timer spreads evenly over the week; a clock schedule is drawn in the
        # hours it starts in every week
        weekly = profile if s.kind == "interval" else \
            {hour: n for hour, n in profile.items() if n >= EVERY_WEEK}
        for hour, per_week in sorted(weekly.items()):
            cells[hour].append((index, per_week))
        if profile and not weekly:
            some_weeks.append(index)
        rows.append(row)
    root = analysis.project.root
    if root in ("", "."):
        root = os.path.basename(os.getcwd()) or root
    return Audit(root, analysis.project.root, analysis.files_read, rows, views, dict(cells),
                 some_weeks)


def render_html(audit: Audit) -> str:
    from jinja2 import Environment, PackageLoader, select_autoescape

    from ..catalog import load_docs

    env = Environment(loader=PackageLoader("jobsafe.report", "templates"),
                      autoescape=select_autoescape(("html", "j2")), trim_blocks=True,
                      lstrip_blocks=True, keep_trailing_newline=True)
    env.policies["json.dumps_kwargs"] = {"sort_keys": True, "separators": (",", ":")}
    env.filters["message_html"] = _message_html
    env.filters["shown"] = audit.shown
    docs = load_docs()
    used = sorted({v.finding.rule for v in audit.findings})
    return env.get_template("audit.html.j2").render(
        audit=audit, version=__version__, days=DAYS, docs={r: docs[r] for r in used if r in docs},
        doc_html=_doc_html, source_names=SOURCE_NAMES, confidence_means=CONFIDENCE_MEANS)


def _message_html(parts: Message):
    """A finding's message with the values it names and the template's `backquoted` code
    as <code>, its clauses as words, everything else escaped."""
    from markupsafe import Markup

    return Markup(_html_of(parts, False))


def _html_of(parts: Message, in_code: bool) -> str:
    from markupsafe import escape

    args = dict(parts.args)
    out: list[str] = []
    for literal, name, _, _ in string.Formatter().parse(parts.template):
        for i, piece in enumerate(literal.split("`")):
            if i:
                in_code = not in_code
                out.append("<code>" if in_code else "</code>")
            out.append(str(escape(piece)))
        if name is None:
            continue
        value = args[name]
        if isinstance(value, Message):
            out.append(_html_of(value, in_code))
        else:
            shown = str(escape(value))
            out.append(shown if in_code or not shown else f"<code>{shown}</code>")
    return "".join(out)


def _doc_html(markdown: str) -> str:
    """A rule document as HTML; raw HTML in the Markdown is escaped, not passed through."""
    from markdown_it import MarkdownIt
    from markupsafe import Markup

    return Markup(MarkdownIt("commonmark", {"html": False}).render(markdown))


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, "…" saying where it was cut."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def render_markdown_inventory(audit: Audit) -> str:
    from .markdown import cell

    out = [f"## jobsafe audit of `{cell(audit.root)}`", "",
           f"{len(audit.rows)} scheduled jobs in {audit.files} files: "
           + ", ".join(f"{n} {cell(name)}" for name, n in audit.by_source) + ".", ""]
    out += [f"- **{c.count}** {c.label}" for c in audit.concerns]
    fixable, safe = audit.fixable
    if fixable:
        out.append(f"- **{fixable}** findings fixable: {safe} safe (`jobsafe check --fix`), "
                   f"{fixable - safe} unsafe (`--fix --unsafe-fixes`)")
    columns = ("Job", "Schedule", "Every", "Command", "Guard", "Locks", "Time limit", "Copies",
               "Findings")
    out += ["", "| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    for r in audit.rows:
        j = r.job
        out.append(" | ".join([
            f"| {cell(j.span.path)}:{j.span.line}",
            f"{cell(r.words)}<br><code>{cell(j.schedule.text)}</code>",
            r.every or "-", cell(clip(j.command, 120)) + (f"<br>→ {cell(r.entry)}" if r.entry else ""),
            cell(r.guard or "none"),
            cell(", ".join(r.locks) or "none"), r.bound or "none", cell(r.replicas or "-"),
            ", ".join(sorted({v.finding.rule for v in r.findings})) or "-"]) + " |")
    if audit.by_rule:
        out += ["", "| Rule | Findings | What it means |", "|---|---|---|"]
        out += [f"| {rule} {name} | {n} | {cell(summary)} |"
                for rule, name, n, summary in audit.by_rule]
    return "\n".join(out) + "\n"
