"""The text report as a person reads it: at 80 and 100 columns, in a pipe, with -q."""
import io

import pytest
from click.testing import CliRunner
from rich.console import Console

from conftest import run_analysis
from jobsafe.cli import main
from jobsafe.model import Span
from jobsafe.report.text import caret, excerpt, print_text

LONG = ("*/5 * * * * cd /srv/billing && venv/bin/python manage.py charge_subscriptions "
        ">> /var/log/billing/charge.log 2>&1\n")


def _render(root, width, **options):
    analysis = run_analysis(root)
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    print_text(analysis, console, analysis.line_text, **options)
    return out.getvalue()


@pytest.mark.parametrize("width", [80, 100])
def test_a_terminal_report_fits_its_width(write_tree, width):
    root = write_tree({"deploy/crontab": LONG, "manage.py": "print(1)\n",
                       "billing/management/commands/charge_subscriptions.py":
                           "from django.core.management.base import BaseCommand\n"
                           "class Command(BaseCommand):\n    def handle(self, *a, **k):\n        pass\n"})
    text = _render(root, width)
    assert "JOB101" in text
    assert max(len(line) for line in text.splitlines()) <= width
    assert "`*/5 * * * *`" in text  # a schedule in backticks is never split across lines
    source = next(line for line in text.splitlines() if "   1 | " in line)
    assert source.endswith("…")  # clipped, and says so
    marks = next(line for line in text.splitlines() if "^" in line)
    assert marks.strip() == "^" * len("*/5 * * * *")  # the schedule, not the whole line
    assert marks.index("^") == source.index("*/5")


def test_in_a_pipe_each_finding_is_one_line(write_tree, monkeypatch):
    monkeypatch.chdir(write_tree({"deploy/crontab": LONG, "manage.py": "print(1)\n"}))
    out = CliRunner().invoke(main, ["check", "--select", "JOB101"]).output
    finding = [line for line in out.splitlines() if "JOB101" in line]
    assert len(finding) == 1 and finding[0].endswith("a lock taken there is not seen)")


def test_plurals_and_quiet(write_tree, monkeypatch):
    monkeypatch.chdir(write_tree({"crontab": "*/5 * * * * /srv/app/bin/sync.py\n",
                                  "bin/sync.py": "print(1)\n"}))
    out = CliRunner().invoke(main, ["check"]).output
    assert "Found 1 finding (1 warning) in 2 files, 1 scheduled job." in out
    quiet = CliRunner().invoke(main, ["check", "-q"]).output
    assert quiet.splitlines() == [line for line in out.splitlines() if "JOB101" in line]
    monkeypatch.chdir(write_tree({"crontab": "@reboot /usr/sbin/x\n"}))
    assert CliRunner().invoke(main, ["check", "-q", "crontab"]).output == ""


def test_the_caret_marks_a_yaml_key_and_survives_tabs():
    assert caret('  schedule: "*/5 * * * *"', Span("k.yaml", 7)) == (2, 10)
    assert caret("ExecStart=/srv/bin/sync.sh --full", Span("x.service", 4, 1, 4, 34)) == (0, 9)
    shown, at, length = excerpt("\t\tif not r.set(k, 1, nx=True):", Span("x.py", 1, 10, 1, 30), 70)
    assert shown.startswith("        if not")  # tabs expanded to 4
    assert shown[at:at + length] == "r.set(k, 1, nx=True)"


def test_a_token_beyond_the_width_is_still_shown():
    line = "x = " + "a" * 150 + " + r.lock('k')"
    shown, at, length = excerpt(line, Span("x.py", 1, 158, 1, 169), 60)
    assert len(shown) <= 60 and shown.startswith("…")
    assert shown[at:at + length] == "r.lock('k')"


def test_top_level_help_is_not_cut():
    out = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    commands = out.split("Commands:")[1].strip().splitlines()
    assert len(commands) == 5 and not any(line.endswith("...") for line in commands)


def _inventory(root, width):
    from jobsafe.report.inventory import print_inventory

    analysis = run_analysis(root)
    out = io.StringIO()
    print_inventory(analysis, Console(file=out, width=width, force_terminal=True,
                                      color_system=None))
    return out.getvalue()


@pytest.mark.parametrize("width", [80, 100, 160])
def test_the_jobs_table_reads_at_any_width(width):
    from conftest import FIXTURES

    text = _inventory(FIXTURES.parent.parent / "examples" / "legacy-billing", width)
    lines = text.splitlines()
    assert max(len(line) for line in lines) <= width
    header = next(line for line in lines if line.startswith("job"))
    assert header.split() == ["job", "schedule", "every", "guard", "limit", "findings"]
    assert "deploy/crontab:6" in text  # the file name and line survive, folders are cut
    assert "…" in text  # text that does not fit says so
    assert "JOB102, JOB104" in text


def test_the_markdown_inventory_says_where_a_command_is_cut(write_tree):
    from jobsafe.report.audit import build_audit, render_markdown_inventory

    long = "/srv/app/bin/x.py " + " ".join(f"--option-{i}" for i in range(40))
    analysis = run_analysis(write_tree({"crontab": f"*/5 * * * * {long}\n", "bin/x.py": "pass\n"}))
    row = next(line for line in render_markdown_inventory(build_audit(analysis)).splitlines()
               if line.startswith("| crontab:1"))
    assert "--option-3" in row and "…" in row and "--option-39" not in row
