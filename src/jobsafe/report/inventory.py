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
from ..schedule import format_duration
from .markdown import cell


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
        "runtime_bound_seconds": job.runtime_bound_seconds,
        "replicas": {"count": job.replicas, "path": job.replicas_evidence.path,
                     "line": job.replicas_evidence.line, "evidence": job.replicas_note}
        if job.replicas is not None and job.replicas_evidence else None,
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


def _protection(job: Job) -> tuple[str, str, str]:
    guard = ", ".join(f"{g.kind}{'' if g.blocking else ' -n'}" for g in job.guards) or "none"
    locks = ", ".join(f"{lock.kind} ({lock.scope})" for lock in job.all_locks) or "none"
    bound = format_duration(job.runtime_bound_seconds) if job.runtime_bound_seconds else "none"
    return guard, locks, bound


def render_inventory_markdown(analysis: Analysis) -> str:
    by_job = _rules_by_job(analysis)
    out = ["| Job | Schedule | Every | Runs | Guard | Locks | Time limit | Findings |",
           "|---|---|---|---|---|---|---|---|"]
    for job in _sorted_jobs(analysis):
        guard, locks, bound = _protection(job)
        every = format_duration(job.schedule.min_interval_seconds) if job.schedule.recurring else "at boot"
        out.append(f"| {cell(job.span.path)}:{job.span.line} | {cell(job.schedule.text)} | {every} "
                   f"| {cell(job.command[:80])} | {cell(guard)} | {cell(locks)} | {bound} "
                   f"| {', '.join(by_job.get(job.id, [])) or '-'} |")
    return "\n".join(out) + "\n"


def print_inventory(analysis: Analysis, console: Console) -> None:
    by_job = _rules_by_job(analysis)
    table = Table(title=f"{len(analysis.project.jobs)} scheduled jobs", show_lines=False)
    for col in ("job", "schedule", "every", "command", "guard", "locks", "time limit", "findings"):
        table.add_column(col, overflow="fold")
    for job in _sorted_jobs(analysis):
        guard, locks, bound = _protection(job)
        every = format_duration(job.schedule.min_interval_seconds) if job.schedule.recurring else "at boot"
        table.add_row(escape(f"{job.span.path}:{job.span.line}"), escape(job.schedule.text), every,
                      escape(job.command[:80]), escape(guard), escape(locks), bound,
                      ", ".join(by_job.get(job.id, [])) or "-")
    console.print(table)
