"""GitHub Actions workflows: ``on.schedule`` as scheduled jobs."""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..model import KeySlot, Span
from .yamlfile import YNode

#: commands and actions that change something outside the runner
_STATEFUL_RUN = re.compile(
    r"\bgit\s+push\b|\bdeploy|\bkubectl\s+(?:apply|rollout|delete|scale|set)\b|"
    r"\bhelm\s+(?:upgrade|install)\b|\bterraform\s+(?:apply|destroy)\b|\baws\s+\w|\bgcloud\s|"
    r"\baz\s+\w|\bcurl\b[^\n]*(?:-X\s*(?:POST|PUT|PATCH|DELETE)|--data|-d\s)|\bgh\s+(?:release|pr|issue)\b|"
    r"\bnpm\s+publish\b|\btwine\s+upload\b|\bdocker\s+push\b|\bpsql\b|\bmysql\b|\bmanage\.py\b|"
    r"\bansible-playbook\b|\brsync\b|\bscp\b|\bssh\b", re.I)
_STATEFUL_ACTION = re.compile(
    r"deploy|publish|release|gh-pages|aws-actions/|azure/|google-github-actions/|"
    r"peter-evans/create-pull-request|stefanzweifel/git-auto-commit|EndBug/add-and-commit|"
    r"softprops/action-gh-release|docker/build-push-action|pypa/gh-action-pypi-publish|"
    r"actions/github-script|actions/stale|lock-threads", re.I)


#: a secret a step is given (``${{ secrets.NAME }}``): a credential for something outside
#: the runner; the repository's own token is judged by its permissions instead
_SECRET = re.compile(r"\$\{\{\s*secrets\.(?!GITHUB_TOKEN\b)([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


@dataclass
class ScheduledWorkflow:
    name: str
    crons: list[tuple[str, Span]]
    concurrency: bool
    state_change: Span | None  # the first step that changes external state
    state_what: str
    jobs_slot: KeySlot | None = None  # above the top-level ``jobs:`` key
    #: the longest a run can last on GitHub-hosted runners (its longest chain of jobs, each
    #: cut at its ``timeout-minutes``); None when nothing bounds it (a self-hosted runner,
    #: a timeout or runner given by an expression)
    max_run_seconds: float | None = None


def _write_scopes(permissions: YNode | None) -> tuple[int, str] | None:
    """(line, words) of the first write scope a ``permissions:`` block grants
    (``write-all``, ``contents: write``); None when it grants none."""
    if permissions is None:
        return None
    if permissions.value == "write-all":
        return permissions.key_line or permissions.line, "permissions: write-all"
    for scope, level in permissions.items():
        if level.value == "write" and scope in _WRITING_SCOPES:
            return level.key_line or level.line, f"permissions: {scope}: write"
    return None


#: token scopes whose write changes the repository or what it publishes (not reporting:
#: a scheduled CodeQL scan's security-events, checks, statuses; not id-token, which only
#: authenticates)
_WRITING_SCOPES = {"contents", "issues", "pull-requests", "packages", "deployments", "pages",
                   "discussions", "repository-projects", "actions"}


def _local_build(uses: str, step: YNode) -> bool:
    """``docker/build-push-action`` pushes only when told (``push: true``; it defaults to
    false): a build that stays on the runner changes nothing outside it."""
    if "docker/build-push-action" not in uses:
        return False
    push = step.get("with", "push")
    return push is None or str(push.value).lower() in ("false", "0", "")


_DB_CLIENT = re.compile(r"\b(?:psql|mysql)\b", re.I)
#: a database client's host option (``-h HOST``, ``--host=HOST``)
_DB_HOST = re.compile(r"(?:^|\s)(?:-h\s*|--host[=\s])\s*['\"]?([^\s'\"]+)")
_LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", "0.0.0.0"}


def _own_database(run: str, stateful: re.Match) -> bool:
    """A ``psql``/``mysql`` command against the runner itself, where a job's ``services:``
    container listens: every one of the command's lines that runs the client names a local
    host (and a client with no host connects locally too)."""
    if not _DB_CLIENT.fullmatch(stateful.group(0)):
        return False
    for line in run.splitlines():
        if _DB_CLIENT.search(line):
            hosts = _DB_HOST.findall(line)
            if any(host not in _LOCAL_HOSTS for host in hosts):
                return False
    return not any(_STATEFUL_RUN.search(line) and not _DB_CLIENT.search(line)
                   for line in run.splitlines())


_HOST_VARIABLES = re.compile(r"PGHOST|MYSQL_HOST|DB_HOST|DATABASE_URL|PGSERVICE")


def _remote_database_env(job: YNode, step: YNode) -> bool:
    """The step's or the job's environment points a database client at a host that is not
    the runner (``PGHOST: db.example.com``, a ``DATABASE_URL``, or one from an expression)."""
    for node in (job.get("env"), step.get("env")):
        for name, value in node.items() if node is not None and isinstance(node.value, dict) \
                else ():
            if _HOST_VARIABLES.search(str(name)) and not any(
                    host in str(value.value) for host in _LOCAL_HOSTS):
                return True
    return False


def is_workflow(rel: str) -> bool:
    return "/.github/workflows/" in f"/{rel}" and rel.endswith((".yml", ".yaml"))


def scheduled_workflow(path: str, doc: YNode, lines: list[str]) -> ScheduledWorkflow | None:
    """``lines``: the file's text, where ``${{ }}`` expressions are still as written."""
    on = doc.get("on") or doc.get("true")
    schedule = on.get("schedule") if on is not None else None
    if schedule is None:
        return None
    crons = []
    for item in schedule.elements():
        cron = item.get("cron")
        if cron is not None and cron.value:
            crons.append((str(cron.value), Span(path, cron.key_line or cron.line)))
    if not crons:
        return None
    jobs = doc.get("jobs")
    concurrency = doc.get("concurrency") is not None
    state, what = None, ""
    for _, job in (jobs.items() if jobs is not None else []):
        concurrency = concurrency or job.get("concurrency") is not None
        services = job.get("services")
        for step in job.list_at("steps"):
            run, uses = step.text("run"), step.text("uses")
            stateful = _STATEFUL_RUN.search(run) if run else None
            if stateful and services is not None and _own_database(run, stateful) and \
                    not _remote_database_env(job, step):
                stateful = None  # the job's own service container: gone with the run
            if state is None and stateful:
                state, what = Span(path, step.line), stateful.group(0).strip()
            elif state is None and uses and _STATEFUL_ACTION.search(uses) and \
                    not _local_build(uses, step):
                state, what = Span(path, step.line), uses
    if state is None:  # the workflow says it writes: its token's write scopes
        for node in [doc, *(job for _, job in (jobs.items() if jobs is not None else []))]:
            written = _write_scopes(node.get("permissions"))
            if written is not None:
                state, what = Span(path, written[0]), written[1]
                break
    if state is None:  # a command handed a credential for a service outside GitHub (an
        # action given one is judged by what it is: most upload reports, codecov, codacy)
        for _, job in (jobs.items() if jobs is not None else []):
            for step in job.list_at("steps"):
                given = [line for line in lines[step.line - 1:step.end_line]
                         if not line.lstrip().startswith("#")]
                secret = _SECRET.search("\n".join(given)) if step.text("run") and \
                    not step.text("uses") else None
                if state is None and secret:
                    state, what = Span(path, step.line), \
                        f"a step is given secrets.{secret.group(1)}"
    jobs_slot = KeySlot(Span(path, jobs.key_line, 1, jobs.key_line, 1), doc.column - 1) \
        if jobs is not None and jobs.key_line and not doc.flow else None
    # runs started by other events (a push) overlap scheduled ones whatever their length;
    # a manual run is the user's own doing
    automatic = [str(event) for event, _ in on.items() if str(event) not in _SCHEDULED] \
        if on is not None and isinstance(on.value, dict) else []
    return ScheduledWorkflow(doc.text("name") or path, crons, concurrency, state, what,
                             jobs_slot, None if automatic else _max_run_seconds(jobs))


_SCHEDULED = {"schedule", "workflow_dispatch"}


#: GitHub cancels a job that runs longer than its ``timeout-minutes``, 360 unless set
_DEFAULT_JOB_MINUTES = 360.0
#: labels of GitHub's own runners (the standard and the larger ones)
_HOSTED = re.compile(r"(?:ubuntu|windows|macos)-[\w.-]+$")


def _max_run_seconds(jobs: YNode | None) -> float | None:
    """How long a run can last at most: the longest chain of ``needs:`` through its jobs,
    each cut at its timeout. Only GitHub-hosted runners start a job soon after it is
    queued; on a self-hosted one it may wait in the queue, so nothing is bounded."""
    if jobs is None or not isinstance(jobs.value, dict) or not jobs.value:
        return None
    minutes: dict[str, float] = {}
    needs: dict[str, list[str]] = {}
    for name, job in jobs.items():
        runner = job.get("runs-on")
        labels = [runner.value] if runner is not None and isinstance(runner.value, str) else \
            [e.value for e in runner.elements()] if runner is not None and \
            isinstance(runner.value, list) else []
        if job.get("uses") is not None or not labels or not all(
                isinstance(label, str) and _HOSTED.match(label) for label in labels):
            return None  # a reusable workflow, a self-hosted or computed runner
        timeout = job.get("timeout-minutes")
        if timeout is None:
            minutes[name] = _DEFAULT_JOB_MINUTES
        else:
            try:
                minutes[name] = float(str(timeout.value))
            except ValueError:
                return None  # ${{ ... }}
        given = job.get("needs")
        needs[name] = [given.value] if given is not None and isinstance(given.value, str) \
            else [str(e.value) for e in given.elements()] if given is not None else []
    longest: dict[str, float] = {}

    def chain(name: str, seen: frozenset[str]) -> float | None:
        if name in seen or name not in minutes:
            return None  # a cycle, or a job that is not there: GitHub refuses the workflow
        if name not in longest:
            before = [chain(n, seen | {name}) for n in needs[name]]
            if any(b is None for b in before):
                return None
            longest[name] = minutes[name] + max((b for b in before if b is not None),
                                                default=0.0)
        return longest[name]

    totals = [chain(name, frozenset()) for name in minutes]
    return None if any(t is None for t in totals) else \
        max(t for t in totals if t is not None) * 60

