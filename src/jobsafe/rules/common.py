"""What several rule families share: each lock or code fact once, with the first job that
reaches it, and the base class of rules that report one kind of code fact."""
from __future__ import annotations

from ..model import CodeFact, Job, Lock, Message, Related
from ..paths import is_test_path, relative_to_root
from . import Rule


def in_test_code(project, path: str) -> bool:
    return is_test_path(relative_to_root(path, project.root))


def locks_with_jobs(project) -> list[tuple[Lock, Job | None]]:
    """Each lock once (a module used by several jobs holds one lock), with its first job;
    locks in test code count only when a job runs that code."""
    seen: dict = {}
    for job in project.runnable_jobs:
        for lock in job.all_locks:
            seen.setdefault(lock.span, (lock, job))
    templates = _taken_through(project)
    for lock in project.code_locks:
        # (tests take locks to exercise them; an abstraction's lock is judged at its uses)
        if not in_test_code(project, lock.span.path) and lock.span not in templates:
            seen.setdefault(lock.span, (lock, None))
    return sorted(seen.values(), key=lambda pair: pair[0].span)


def _taken_through(project) -> set:
    """Spans of the locks that jobs take through a project abstraction, where it takes
    them: judged at each use, not a second time where they are written."""
    return {lock.taken_from for job in project.runnable_jobs for lock in job.all_locks
            if lock.taken_from is not None}


def facts_with_jobs(project, kind: str, jobs_only: bool = False) -> list[tuple[CodeFact, Job | None]]:
    """Facts of one kind, each with the first job whose entry code reaches it; with
    ``jobs_only``, only facts in code that a schedule runs."""
    seen: dict = {}
    for job in project.runnable_jobs:
        for entry in job.entries:
            for fact in entry.facts:
                if fact.kind == kind:
                    seen.setdefault(fact.span, (fact, job))
    if not jobs_only:
        templates = _taken_through(project)
        for fact in project.code_facts:
            if fact.kind == kind and not in_test_code(project, fact.span.path) and not (
                    fact.lock is not None and fact.lock.span in templates):
                seen.setdefault(fact.span, (fact, None))
    return sorted(seen.values(), key=lambda pair: pair[0].span)


def related_job(job: Job | None) -> list[Related]:
    return [Related(job.span, "scheduled here")] if job is not None else []


def job_id(job: Job | None) -> str | None:
    return job.id if job is not None else None


class FactRule(Rule):
    """Rules that report one kind of code fact, wherever the code is."""

    fact_kind = ""
    jobs_only = False  # only in code that a schedule runs
    #: what the fix the front end recorded for a fact does (rules that declare a fix)
    fix_message = ""

    def message(self, fact: CodeFact) -> Message:
        raise NotImplementedError

    def check(self, project):
        for fact, job in facts_with_jobs(project, self.fact_kind, self.jobs_only):
            related = [Related(fact.lock.span, "lock acquired here")] \
                if fact.lock is not None and fact.lock.span != fact.span else []
            if fact.origin is not None and fact.origin != fact.span:
                related.append(Related(fact.origin, "the value comes from here"))
            yield self.finding(fact.span, self.message(fact), (fact, fact.lock, job),
                               job_id(job), [*related, *related_job(job)],
                               edits=fact.remedy if self.fix else (),
                               fix_message=self.fix_message)
