"""``jobsafe jobs``: one row per scheduled job, with its protection layers."""
from __future__ import annotations

import json
from collections import defaultdict

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from .. import __version__
from ..analysis import Analysis
from ..model import Job
from ..paths import relative_to_root
from ..schedule import DIALECT_NAMES


def job_dict(job: Job, rules: list[str]) -> dict:
    s = job.schedule
    entry = next((t.entry for t in job.targets if t.entry is not None), None)
    guard = job.guards[0] if job.guards else None
    data = {
        "id": job.id, "source": job.source, "path": job.span.path, "line": job.span.line,
        "schedule": s.text,
    }
    if s.timezone:
        data["timezone"] = s.timezone
    if s.dialect:
        data["dialect"] = DIALECT_NAMES.get(s.dialect, s.dialect)
    data.update({
        "min_interval_seconds": s.min_interval_seconds,
        "runs_per_day": s.runs_per_day,
        "command": job.command,
        "entry": {"path": entry.path, "function": entry.function} if entry else None,
        "guard": {"kind": guard.kind, "blocking": guard.blocking,
                  "wait_seconds": guard.wait_seconds, "path": guard.path} if guard else None,
        "locks": [{"kind": lock.kind, "scope": lock.scope, "ttl_seconds": lock.ttl_seconds,
                   "stale_handling": lock.stale_handling, "path": lock.path, "key": lock.key,
                   "line": lock.span.line, "file": lock.span.path}
                  for lock in job.all_locks],
        "one_per_firing": {"api": job.one_per_firing.api, "scope": job.one_per_firing.scope}
        if job.one_per_firing is not None else None,
        "runtime_bound_seconds": job.runtime_bound_seconds,
        "replicas": {"count": job.replicas.count, "path": job.replicas.evidence.path,
                     "line": job.replicas.evidence.line, "evidence": job.replicas.note}
        if job.replicas is not None else None,
        "workload": {"kind": job.workload.kind, "name": job.workload.name,
                     "copies": job.workload.copies, "path": job.workload.evidence.path,
                     "line": job.workload.evidence.line,
                     "confidence": job.workload.confidence.value}
        if job.workload is not None else None,
        "mounts": [{"path": m.path, "kind": m.kind, "what": m.what, "file": m.span.path,
                    "line": m.span.line} for m in job.mounts],
        "scheduler_options": dict(job.options),
        "findings": rules,
    })
    if job.unit is not None:
        u = job.unit
        data["unit"] = {"timer": u.timer.path, "service": u.service, "type": u.type,
                        "kill_mode": u.kill_mode, "remain_after_exit": u.remain_after_exit is not None,
                        "timeout_start_seconds": u.timeout_start_seconds,
                        "runtime_max_seconds": u.runtime_max_seconds, "persistent": u.persistent,
                        "randomized_delay_seconds": u.randomized_delay_seconds,
                        "accuracy_seconds": u.accuracy_seconds}
    return data


def _rules_by_job(analysis: Analysis) -> dict[str, list[str]]:
    out: dict[str, set[str]] = defaultdict(set)
    for f in analysis.findings:
        if f.job:
            out[f.job].add(f.rule)
    return {k: sorted(v) for k, v in out.items()}


def _sorted_jobs(analysis: Analysis) -> list[Job]:
    return sorted(analysis.project.jobs, key=lambda j: (j.span.path, j.span.line, j.id))


def render_inventory_json(analysis: Analysis) -> str:
    by_job = _rules_by_job(analysis)
    doc = {"version": 1, "tool": {"name": "jobsafe", "version": __version__},
           "jobs": [job_dict(j, by_job.get(j.id, [])) for j in _sorted_jobs(analysis)]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def print_inventory(analysis: Analysis, console: Console) -> None:
    """A table that reads at 80 columns: each cell on lines of its own, cut with "…" where
    it does not fit (the JSON and HTML inventories carry everything)."""
    from rich import box

    from .audit import build_audit, clip
    from .text import plural

    rows = build_audit(analysis).rows
    table = Table(title=plural(len(rows), "scheduled job"), box=box.SIMPLE_HEAD, pad_edge=False,
                  show_edge=False)
    fixed = {"every": 6, "limit": 5, "findings": 14}
    # what is left after the fixed columns and the three spaces between two columns
    flexible = max(30, console.width - sum(fixed.values()) - 3 * 5)
    widths = {"job": flexible * 4 // 10, "schedule": flexible * 3 // 10, **fixed}
    widths["guard"] = flexible - widths["job"] - widths["schedule"]
    for col in ("job", "schedule", "every", "guard", "limit", "findings"):
        table.add_column(col, overflow="ellipsis", no_wrap=True, width=widths[col])
    for r in rows:
        job = r.job
        command = clip(job.command, 200)
        findings = sorted({v.finding.rule for v in r.findings})
        where = f"{relative_to_root(job.span.path, analysis.project.root)}:{job.span.line}"
        if len(where) > widths["job"]:  # keep the file name and line, cut the folders
            where = "…" + where[len(where) - widths["job"] + 1:]
        # an in-process scheduler's own dialect (cron's and systemd's go without saying)
        dialect = f" ({DIALECT_NAMES[job.schedule.dialect]})" if job.schedule.dialect in \
            ("celery", "apscheduler", "huey") else ""
        table.add_row(escape(where) + f"\n[dim]{escape(command)}[/]",
                      escape(job.schedule.text) + f"\n[dim]{escape(r.words + dialect)}[/]",
                      r.every or "-", escape(r.guard or "none"), r.bound or "none",
                      "\n".join(", ".join(findings[i:i + 2]) for i in range(0, len(findings), 2))
                      or "-")
    console.print(table)
