"""Command line: ``jobsafe check | jobs | rules | explain``.

Exit status: 0 no findings at or above the threshold, 1 findings, 2 usage, configuration
or internal error (a one-line message, never a traceback).
"""
from __future__ import annotations

import os
import sys

import click

from . import __version__
from .errors import raise_internal_errors
from .runtime import collect_less


class _Exit(click.ClickException):
    exit_code = 2

    def show(self, file=None):
        click.echo(f"jobsafe: error: {self.message}", err=True)


def _settings(config_file, paths):
    from .config import ConfigError, load_settings

    try:
        return load_settings(config_file, paths[0] if paths else ".", _resolve_selector)
    except ConfigError as exc:
        raise _Exit(str(exc)) from None


def _resolve_selector(selector: str) -> list[str]:
    """The rules loaded only when a configuration names some (the pre-commit answer reads
    the configuration, and most name none)."""
    from .rules import resolve_selector

    return resolve_selector(selector)


def _analyse(paths, settings, select=(), ignore=(), workers=None, use_cache=False):
    from .analysis import analyse
    from .config import ConfigError
    from .rules import enabled_rules

    try:
        rule_ids = enabled_rules(settings, tuple(select), tuple(ignore))
    except ConfigError as exc:
        raise _Exit(str(exc)) from None
    for p in paths:
        try:
            os.stat(p)
        except OSError as exc:
            raise _Exit(f"{p}: {(exc.strerror or str(exc)).lower()}") from None
    try:
        if sys.stderr.isatty():
            with _progress_bar() as progress:
                return analyse(list(paths), settings, rule_ids, workers=workers,
                               use_cache=use_cache, progress=progress)
        return analyse(list(paths), settings, rule_ids, workers=workers, use_cache=use_cache)
    except Exception as exc:  # the last line of defence: one line, no traceback
        if raise_internal_errors():
            raise
        raise _Exit(f"internal error: {type(exc).__name__}: {exc}") from None


class _progress_bar:
    """A bar per stage on stderr (files scanned, modules parsed), gone when the run ends."""

    def __enter__(self):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.bars = Progress(TextColumn("jobsafe: {task.description}"), BarColumn(),
                             MofNCompleteColumn(), console=Console(stderr=True), transient=True)
        self.tasks: dict[str, int] = {}
        self.bars.start()
        return self

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self.tasks:
            self.tasks[stage] = self.bars.add_task(stage, total=total)
        self.bars.update(self.tasks[stage], completed=done, total=total)

    def __exit__(self, *exc):
        self.bars.stop()


def _split(values) -> tuple[str, ...]:
    return tuple(v.strip() for value in values for v in value.split(",") if v.strip())


def _console(output):
    from rich.console import Console

    if output is not None:
        return Console(file=output, force_terminal=False, no_color=True, width=200,
                       highlight=False, emoji=False)
    # emoji=False: a location such as ``Kernel.php:100:17`` must not become an emoji
    console = Console(highlight=False, emoji=False)
    if not console.is_terminal:
        console = Console(highlight=False, width=160, emoji=False)
    return console


_MIN_CONFIDENCE = click.option(
    "--min-confidence", type=click.Choice(["low", "medium", "high"]), default=None,
    help="Report only findings at least this sure: high (parsed exactly), medium (inferred "
         "through the project's code), low (resting on a name or a content sniff). Default: "
         "the configuration's min-confidence, else low.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="jobsafe")
def main():
    """jobsafe: find scheduled jobs that can run twice, stay blocked forever, or repeat a
    side effect."""
    collect_less()


@main.command(short_help="Analyse paths and report findings (exit 1 when any).")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "sarif", "github", "markdown"]),
              default="text", show_default=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
              help="Write the report to FILE instead of standard output.")
@click.option("--select", multiple=True, help="Rules to enable: ids, names or prefixes (JOB2).")
@click.option("--ignore", multiple=True, help="Rules to disable: ids, names or prefixes.")
@click.option("--severity", type=click.Choice(["info", "warning", "error"]), default="info",
              show_default=True, help="Minimum severity shown and counted for the exit status.")
@_MIN_CONFIDENCE
@click.option("--config", "config_file", type=click.Path(dir_okay=False),
              help="Configuration file (pyproject.toml or .jobsafe.toml).")
@click.option("--baseline", type=click.Path(dir_okay=False),
              help="Report only findings that are not in this baseline file.")
@click.option("--write-baseline", type=click.Path(dir_okay=False),
              help="Record the current findings in a baseline file.")
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--statistics", is_flag=True, help="Show the number of findings per rule.")
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
@click.option("--jobs", "-j", "workers", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: automatic).")
@click.option("--fix", is_flag=True, help="Apply the safe fixes (those that keep what the code "
              "does).")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also the fixes that "
              "change behaviour (such as making a waiting lock skip).")
@click.option("--diff", is_flag=True, help="Print the fixes as a unified diff; change nothing.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no source or summary.")
def check(paths, fmt, output, select, ignore, severity, min_confidence, config_file, baseline,
          write_baseline, exit_zero, statistics, no_cache, workers, fix, unsafe_fixes, diff,
          quiet):
    """Analyse PATHS (default: the current directory) and report findings."""
    paths = paths or (".",)
    settings = _settings(config_file, paths)
    if fmt == "text" and output is None and not (no_cache or fix or diff or write_baseline) \
            and _answered_quietly(paths, settings, quiet, select, ignore, baseline):
        sys.exit(0)
    from .baseline import Baseline, BaselineError
    from .baseline import write_baseline as save_baseline
    from .model import Severity
    from .report import render

    analysis = _analyse(paths, settings, _split(select), _split(ignore), workers, not no_cache)
    threshold = Severity(severity).rank
    analysis.findings = [f for f in analysis.findings if f.severity.rank >= threshold]
    _keep_confident(analysis, min_confidence or settings.min_confidence)
    if write_baseline:
        try:
            save_baseline(write_baseline, analysis.findings, analysis.cwd)
        except OSError as exc:
            raise _Exit(f"cannot write {write_baseline}: {exc.strerror or exc}") from None
        click.echo(f"jobsafe: wrote {_count(len(analysis.findings), 'finding')} to "
                   f"{write_baseline}", err=True)
    if baseline:
        try:
            known = Baseline.read(baseline, analysis.cwd)
        except BaselineError as exc:
            raise _Exit(str(exc)) from None
        for f in analysis.findings:
            f.baseline_state = "unchanged" if known.knows(f) else "new"
        # SARIF keeps the unchanged results (code scanning expects them); the rest drop them
        analysis.baselined = [f for f in analysis.findings if f.baseline_state == "unchanged"]
        analysis.findings = [f for f in analysis.findings if f.baseline_state == "new"]
    if diff:  # like ruff --diff: the diff only, exit 1 when there is something to fix
        _exit(analysis, 1 if _apply_fixes(analysis, False, unsafe_fixes) else 0)
    if fix:
        _apply_fixes(analysis, True, unsafe_fixes)

    with _output(output) as stream:
        if fmt == "text":
            from .report.text import print_text

            print_text(analysis, _console(stream), analysis.line_text, quiet, statistics,
                       unsafe_fixes)
        else:
            options = {"baseline": bool(baseline)} if fmt == "sarif" else {}
            (stream or sys.stdout).write(render(fmt, analysis, **options))
    _exit(analysis, 0 if exit_zero or not analysis.findings else 1)


def _answered_quietly(paths, settings, quiet: bool, select, ignore, baseline) -> bool:
    """The pre-commit fast path (see ``quick``): print what the full run would print about
    named files that cannot change any finding, and say so; False to analyse in full. The
    options the full run checks even when it finds nothing (rule selectors, the baseline
    file) are checked here too, with the same errors."""
    if not all(os.path.isfile(p) for p in paths):
        return False
    from .cache import FileCache
    from .discover import find_project_root, find_root
    from .quick import answer

    root, cwd = find_root(list(paths)), os.path.realpath(os.getcwd())
    cache = FileCache.of_project(find_project_root(root, settings.source))
    if cache is None:
        return False
    found = answer(cache, root, cwd, settings.source, [os.path.realpath(p) for p in paths])
    if found is None:
        return False
    if select or ignore:
        from .config import ConfigError
        from .rules import enabled_rules

        try:
            enabled_rules(settings, tuple(_split(select)), tuple(_split(ignore)))
        except ConfigError as exc:
            raise _Exit(str(exc)) from None
    if baseline:
        from .baseline import Baseline, BaselineError

        try:
            Baseline.read(baseline, cwd)
        except BaselineError as exc:
            raise _Exit(str(exc)) from None
    if not quiet:
        color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
        click.echo(f"{click.style('No findings', fg='green') if color else 'No findings'} in "
                   f"{_count(found.files, 'file')}, {_count(found.jobs, 'scheduled job')}.")
        for path, reason in found.skipped:
            click.echo(click.style(f"note: {path} not analysed: {reason}", dim=True)
                       if color else f"note: {path} not analysed: {reason}")
    return True


def _keep_confident(analysis, least: str) -> None:
    """Drop the findings less sure than ``least`` (bandit's confidence filter)."""
    from .model import Confidence

    rank = Confidence(least).rank
    analysis.findings = [f for f in analysis.findings if f.confidence.rank >= rank]


def _count(n: int, noun: str) -> str:
    """``1 finding``, ``2 findings``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _exit(analysis, status: int) -> None:
    """Exit with ``status``, unless jobsafe failed somewhere: then, after everything else
    was reported, name each failure on stderr and exit 2, whatever was selected."""
    for error in analysis.internal_errors:
        click.echo(f"jobsafe: error: internal error in {error.where}: {error.message} "
                   f"(the rest was analysed; please report this)", err=True)
    sys.exit(2 if analysis.internal_errors else status)


def _apply_fixes(analysis, write: bool, unsafe: bool) -> int:
    """--diff prints the fixes; --fix writes them and drops the fixed findings. Safe fixes
    only, unless ``unsafe`` (ruff's model).

    Returns the number of files changed (or that would change)."""
    from .fix import FixConflict, fixed_texts, plan, unified_diff

    fixable = [f for f in analysis.findings
               if f.fix is not None and (unsafe or f.fix.applicability == "safe")]
    if not fixable:
        hidden = sum(1 for f in analysis.findings if f.fix is not None)
        click.echo("jobsafe: no fixable findings" + (
            f" ({hidden} unsafe fix{'' if hidden == 1 else 'es'} can be applied with "
            f"--unsafe-fixes)" if hidden else ""), err=True)
        return 0
    try:
        texts = fixed_texts(fixable)
    except (FixConflict, OSError) as exc:
        raise _Exit(f"cannot apply fixes: {exc}") from None
    if not write:
        for path, (original, fixed, _) in texts.items():
            sys.stdout.write(unified_diff(path, original, fixed))
        return len(texts)
    for path, (_, fixed, encoding) in texts.items():
        with open(path, "w", encoding=encoding, newline="") as fh:
            fh.write(fixed)
    fixed_ids = {id(f) for items in plan(fixable).values() for f in items}
    analysis.findings = [f for f in analysis.findings if id(f) not in fixed_ids]
    click.echo(f"jobsafe: fixed {_count(len(fixed_ids), 'finding')} in "
               f"{_count(len(texts), 'file')}", err=True)
    return len(texts)


@main.command(short_help="List every scheduled job with its protection layers.")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown", "html"]),
              default="text", show_default=True,
              help="html: one self-contained page (summary, table, week, findings).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True),
              help="Write the inventory to FILE instead of standard output.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False))
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
def jobs(paths, fmt, output, config_file, no_cache):
    """List every scheduled job found, with its protection layers."""
    paths = paths or (".",)
    settings = _settings(config_file, paths)
    analysis = _analyse(paths, settings, use_cache=not no_cache)
    if fmt == "text":
        from .report.inventory import print_inventory

        with _output(output) as stream:
            print_inventory(analysis, _console(stream))
    else:
        text = _inventory(fmt, analysis)
        with _output(output) as stream:
            (stream or sys.stdout).write(text)
    _exit(analysis, 0)


def _inventory(fmt: str, analysis, audit=None) -> str:
    """The inventory in ``fmt``; ``audit``: the audit model when the caller has built it."""
    if fmt == "json":
        from .report.inventory import render_inventory_json

        return render_inventory_json(analysis)
    from .report.audit import build_audit, render_html, render_markdown_inventory

    audit = audit or build_audit(analysis)
    return render_html(audit) if fmt == "html" else render_markdown_inventory(audit)


def _write(path: str, text: str) -> None:
    with _output(path) as stream:
        stream.write(text)


class _output:
    """``with _output(path) as stream``: the file opened for writing (None for standard
    output when ``path`` is None); a file that cannot be written is a one-line error, exit 2."""

    def __init__(self, path: str | None):
        self.path = path
        self.stream = None

    def __enter__(self):
        if self.path is not None:
            try:
                self.stream = open(self.path, "w", encoding="utf-8")
            except OSError as exc:
                raise _Exit(f"cannot write {self.path}: {exc.strerror or exc}") from None
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.close()


@main.command(short_help="Write the audit reports (HTML, Markdown, JSON).")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True),
              help="Write the HTML report to FILE (the default: jobsafe-audit.html).")
@click.option("--markdown", "markdown_file", type=click.Path(dir_okay=False, writable=True),
              help="Write the Markdown inventory to FILE.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False, writable=True),
              help="Write the JSON inventory to FILE.")
@_MIN_CONFIDENCE
@click.option("--config", "config_file", type=click.Path(dir_okay=False))
@click.option("--no-cache", is_flag=True, help="Do not read or write the result cache.")
def audit(paths, html_file, markdown_file, json_file, min_confidence, config_file, no_cache):
    """Audit a repository: the inventory and findings as reports, from one analysis.

    The same reports as `jobs --format html|markdown|json`; exits 0 whatever it finds
    (use `check` to gate CI)."""
    paths = paths or (".",)
    if not (html_file or markdown_file or json_file):
        html_file = "jobsafe-audit.html"
    settings = _settings(config_file, paths)
    analysis = _analyse(paths, settings, use_cache=not no_cache)
    _keep_confident(analysis, min_confidence or settings.min_confidence)
    from .report.audit import build_audit

    model = build_audit(analysis) if html_file or markdown_file else None  # built once
    for fmt, path in (("html", html_file), ("markdown", markdown_file), ("json", json_file)):
        if path:
            _write(path, _inventory(fmt, analysis, model))
            click.echo(f"jobsafe: wrote the {fmt} report of {len(analysis.project.jobs)} jobs and "
                       f"{len(analysis.findings)} findings to {path}", err=True)
    _exit(analysis, 0)


@main.command("rules", short_help="List every rule: id, name, severity, fixable.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def list_rules(fmt):
    """List every rule: id, name, default severity, fixable."""
    import json

    from .rules import all_rules

    rules = all_rules()
    if fmt == "json":
        click.echo(json.dumps([{"id": r.id, "name": r.name, "severity": r.severity.value,
                                "fix": r.fix, "summary": r.summary}
                               for r in rules.values()], indent=2))
        return
    from rich.table import Table

    table = Table(box=None, header_style="bold")
    for col in ("id", "name", "severity", "fix", "summary"):
        table.add_column(col)
    for r in rules.values():
        table.add_row(r.id, r.name, r.severity.value, r.fix or "-", r.summary)
    _console(None).print(table)


@main.command(short_help="Show a rule's document (by id or name).")
@click.argument("rule")
def explain(rule):
    """Show a rule's document (by id, e.g. JOB101, or name, e.g. unguarded-job)."""
    from .catalog import load_docs
    from .rules import all_rules

    wanted = rule.strip()
    match = next((r for r in all_rules().values()
                  if r.id == wanted.upper() or r.name == wanted.lower()), None)
    if match is None:
        raise _Exit(f"unknown rule {rule!r} (see `jobsafe rules`)")
    doc = load_docs().get(match.id)
    if doc is None:
        raise _Exit(f"no document for {match.id}")
    fix = f"Automatic fix ({match.fix}, `jobsafe check --fix" + (
        " --unsafe-fixes" if match.fix == "unsafe" else "") + f"`): {doc.meta.get('fix-does')}" \
        "\n\n" if match.fix else ""
    text = f"# {match.id} {match.name}\n\n{fix}{doc.body}"
    if sys.stdout.isatty():
        from rich.markdown import Markdown

        _console(None).print(Markdown(text))
    else:
        sys.stdout.write(text)

