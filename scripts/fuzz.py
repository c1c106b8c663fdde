"""Coverage-guided fuzzing (atheris) of jobsafe's parsers, run by hand with a time budget.

    pip install atheris
    python scripts/fuzz.py crontab --seconds 300
    python scripts/fuzz.py all --seconds 60        # each target in turn

Targets: crontab, cron, calendar, unit, shell, dockerfile, yaml, python. The corpus starts
from the fixture files of the same kind. An input that raises anything but jobsafe's own
parse error is written to ``fuzz-crashes/TARGET-<hash>`` and the run stops with the
traceback: turn it into a regression fixture under ``tests/fixtures/`` (or a case in
``tests/test_robustness.py``) when you fix it.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"


def _targets():
    from jobsafe.calendar import parse_calendar
    from jobsafe.sources.ansible import cron_tasks, play_roles, yaml_inventory
    from jobsafe.sources.compose import compose_services
    from jobsafe.sources.kubernetes import Catalog, cronjobs, workloads
    from jobsafe.sources.workflows import scheduled_workflow
    from jobsafe.schedule import ScheduleError, cron_schedule
    from jobsafe.sources.crontab import parse_crontab
    from jobsafe.sources.dockerfile import parse_dockerfile
    from jobsafe.sources.python.module import parse_module
    from jobsafe.sources.shell import Locator, analyze
    from jobsafe.sources.systemd import parse_unit
    from jobsafe.sources.yamlfile import YamlError, load_documents

    def schedule(text):
        try:
            cron_schedule(text, text)
        except ScheduleError:
            pass

    def calendar(text):
        try:
            parse_calendar(text)
        except ScheduleError:
            pass

    def yaml(text):
        """The YAML reader and every front end that reads its documents."""
        try:
            docs = load_documents(text)
        except YamlError:
            return
        catalog = Catalog()
        catalog.read("m.yaml", docs)
        cronjobs("m.yaml", docs)
        workloads("m.yaml", docs, catalog)
        for doc in docs:
            compose_services("m.yaml", "m.yaml", doc, {})
            scheduled_workflow("m.yaml", doc)
            cron_tasks("m.yaml", doc, play_roles(doc))
            yaml_inventory("m.yaml", doc)

    # target: (function of the text, seed file suffixes or names)
    return {
        "crontab": (lambda t: parse_crontab("crontab", t, system=True), (".cron", "crontab")),
        "cron": (schedule, ()),
        "calendar": (calendar, ()),
        "unit": (lambda t: parse_unit("x.service", "x.service", t), (".service", ".timer")),
        "shell": (lambda t: analyze(t, Locator("x.sh", t)), (".sh",)),
        "dockerfile": (lambda t: parse_dockerfile("Dockerfile", t), ("Dockerfile",)),
        "yaml": (yaml, (".yaml", ".yml")),
        "python": (lambda t: parse_module("x.py", t), (".py",)),
    }


def _seed_corpus(kinds: tuple[str, ...]) -> str:
    folder = Path(tempfile.mkdtemp(prefix="jobsafe-fuzz-"))
    for path in FIXTURES.rglob("*"):
        if path.is_file() and (path.suffix in kinds or path.name in kinds):
            (folder / hashlib.sha1(str(path).encode()).hexdigest()).write_bytes(path.read_bytes())
    return str(folder)


def run_one(name: str, seconds: int) -> None:
    import atheris

    function, kinds = _targets()[name]
    atheris.instrument_all()  # coverage feedback from jobsafe's (and libcst's) Python code
    crashes = REPO / "fuzz-crashes"

    def test_one_input(data: bytes) -> None:
        text = data.decode("utf-8", "replace")
        try:
            function(text)
        except RecursionError:
            pass  # the callers turn it into a JOB900 "too deeply nested"
        except Exception:
            crashes.mkdir(exist_ok=True)
            (crashes / f"{name}-{hashlib.sha1(data).hexdigest()[:12]}").write_bytes(data)
            raise

    argv = [sys.argv[0], f"-max_total_time={seconds}", "-rss_limit_mb=2048", "-timeout=10"]
    if kinds:
        argv.append(_seed_corpus(kinds))
    atheris.Setup(argv, test_one_input)
    atheris.Fuzz()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=[*_targets(), "all"])
    parser.add_argument("--seconds", type=int, default=60)
    args = parser.parse_args()
    if args.target != "all":
        run_one(args.target, args.seconds)
        return 0
    failed = []
    for name in _targets():  # atheris.Fuzz() never returns: one process per target
        code = subprocess.call([sys.executable, __file__, name, "--seconds", str(args.seconds)])
        print(f"fuzz {name}: {'ok' if code == 0 else f'FAILED (exit {code})'}", flush=True)
        if code != 0:
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
