"""Every lock jobsafe sees in a tree, one per line — for reviewing its recognition against
what a person sees in the code (``python scripts/locks.py TREE [TREE ...]``).

For each lock: where it is taken, its kind, scope, time-to-live, key or path, how it is
released, and the jobs whose code reaches it (or "-" when no schedule in the tree runs it).
"""
from __future__ import annotations

import os
import sys

from jobsafe.analysis import analyse
from jobsafe.config import Settings
from jobsafe.rules import all_rules
from jobsafe.timespec import format_duration


def ttl_text(ttl: float | None) -> str:
    if ttl is None:
        return "no TTL"
    if ttl < 0:
        return "TTL set (not static)"
    return f"TTL {format_duration(ttl)}"


def main() -> int:
    for tree in sys.argv[1:]:
        old = os.getcwd()
        os.chdir(tree)
        try:
            analysis = analyse(["."], Settings(), sorted(all_rules()))
        finally:
            os.chdir(old)
        project = analysis.project
        by_span: dict = {}
        for job in project.jobs:
            for lock in job.all_locks:
                by_span.setdefault((lock.span, lock.taken_from), (lock, set()))[1].add(job.id)
        for lock in project.code_locks:
            by_span.setdefault((lock.span, lock.taken_from), (lock, set()))
        print(f"== {tree}: {len(project.jobs)} jobs, {len(by_span)} locks")
        for (span, _), (lock, jobs) in sorted(by_span.items(), key=lambda kv: kv[0][0]):
            where = lock.key or lock.path or ""
            print(f"  {span.path}:{span.line}  {lock.kind} ({lock.scope}) {ttl_text(lock.ttl_seconds)}"
                  f"  {where!r}  release={lock.release}  jobs={','.join(sorted(jobs)) or '-'}")
        rules = sorted({f.rule for f in analysis.findings})
        print(f"  findings: {len(analysis.findings)} {' '.join(rules)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
