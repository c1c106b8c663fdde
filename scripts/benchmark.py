"""Speed and memory of jobsafe beside its peers, as whole processes, in one run.

    python scripts/benchmark.py            # 5 runs of each command
    python scripts/benchmark.py --runs 3 --no-peers

Corpus (fetched once into the cache of ``corpus.py``): the Django sdist, plus the crontabs,
cron.d files and systemd units of the Debian packages of the robustness sweep; and, each on
its own, the lock-heavy sdists of ``corpus.LOCK_HEAVY`` (mlflow, celery, the Kubernetes
client, Airflow's core). Prints each figure (median, min–max, peak RSS) and the ratios the
speed issue asks about. ``--findings DIR`` writes the findings of every corpus there as
JSON; ``--compare DIR`` says, corpus by corpus, whether they are byte-identical to an
earlier run's (the check that a speed change changed nothing else). Run by hand,
never in CI: the figures depend on the machine and on what else it is doing, so only ratios
measured in the same run mean anything.

Peers are found beside this Python (``bin/``) or on PATH: ``pip install bandit semgrep ruff``.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import corpus  # noqa: E402

HERE = Path(__file__).parent


def _schedule_file(rel: str) -> bool:
    """Crontabs, cron.d/cron.daily files and systemd units of a Debian package."""
    return rel.startswith("etc/cron") or "/systemd/system/" in f"/{rel}"


def build_corpus(scratch: Path) -> tuple[Path, Path, list[str]]:
    """(corpus root, Django folder inside it, three files for the pre-commit case)."""
    root = scratch / "corpus"
    if not root.exists():
        django = next(corpus.fetch_pypi([corpus.DJANGO]).glob(corpus.DJANGO.replace("==", "-")))
        shutil.copytree(django, root / "django", symlinks=True)
        debian = corpus.fetch_debian()
        for package in sorted(debian.iterdir()):
            for path in package.rglob("*"):
                rel = path.relative_to(package).as_posix()
                if path.is_file() and not path.is_symlink() and _schedule_file(rel):
                    target = root / "debian" / package.name / rel
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(path, target)
    django = root / "django"
    python_file = next(iter(sorted(django.glob("**/core/management/base.py"))))
    cron_file = next(iter(sorted((root / "debian").glob("*/etc/cron.d/*"))))
    unit_file = next(iter(sorted((root / "debian").glob("*/lib/systemd/system/*.timer"))))
    named = [str(p.relative_to(root)) for p in (python_file, cron_file, unit_file)]
    return root, django, named


def tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def measure(cmd: list[str], runs: int, cwd: Path, env: dict | None = None, before=None):
    """(wall times, peak RSS in MiB) of ``runs`` whole processes."""
    times, peak = [], 0.0
    for _ in range(runs):
        if before is not None:
            before()
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        _pid, _status, usage = os.wait4(proc.pid, 0)
        times.append(time.perf_counter() - start)
        peak = max(peak, usage.ru_maxrss / 1024)
    return times, peak


def show(label: str, times: list[float], peak: float | None = None) -> float:
    median = statistics.median(times)
    memory = f"   {peak:7.0f} MiB" if peak is not None else ""
    print(f"{label:<44} {median:8.2f} s   ({min(times):.2f}–{max(times):.2f}){memory}")
    return median


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-peers", action="store_true", help="time jobsafe only")
    parser.add_argument("--scratch", default=str(corpus.CACHE / "bench"))
    parser.add_argument("--findings", help="write each corpus's findings (JSON) here")
    parser.add_argument("--compare", help="compare the findings with an earlier --findings")
    parser.add_argument("--no-lock-heavy", action="store_true",
                        help="skip the lock-heavy corpora")
    args = parser.parse_args()
    scratch = Path(args.scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    root, django, named = build_corpus(scratch)
    jobsafe = [sys.executable, "-m", "jobsafe", "check", "--exit-zero", "-q"]
    cache = Path(tempfile.mkdtemp(prefix="jobsafe-bench-cache-"))
    env = dict(os.environ, JOBSAFE_CACHE_DIR=str(cache))
    # as installed: pip writes jobsafe's bytecode at install time, so no run compiles it
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-c", "import compileall, os, jobsafe; "
                    "compileall.compile_dir(os.path.dirname(jobsafe.__file__), quiet=1)"],
                   env=env, check=True)
    files = sum(1 for p in root.rglob("*") if p.is_file())
    print(f"corpus: {root} ({files} files; Django {corpus.DJANGO.split('==')[1]}), "
          f"{args.runs} runs each, {os.cpu_count()} cores\n")
    print(f"{'command':<44} {'median':>10}   (min–max)        peak RSS")
    fig = {}
    fig["pass"] = show("python -c pass", *measure([sys.executable, "-c", "pass"], args.runs, root))
    fig["cold"] = show("jobsafe, cold (empty cache)", *measure(
        [*jobsafe, "."], args.runs, root, env, before=lambda: shutil.rmtree(cache, True)))
    fig["nocache"] = show("jobsafe --no-cache --jobs 1", *measure(
        [*jobsafe, "--no-cache", "--jobs", "1", "."], max(1, args.runs // 2), root, env))
    measure([*jobsafe, "."], 1, root, env)  # prime the cache
    fig["warm"] = show("jobsafe, warm (nothing changed)", *measure([*jobsafe, "."], args.runs,
                                                                    root, env))
    fig["precommit"] = show("jobsafe on 3 named files (pre-commit, warm)", *measure(
        [*jobsafe, *named], args.runs, root, env))
    measure([*jobsafe, *named], 1, root, env)  # a full run records what the fast path reads
    unrelated = quiet_modules(root, django, cache)
    fig["quiet"] = show("jobsafe on 3 unrelated edited modules (warm)", *measure(
        [*jobsafe, *unrelated], args.runs, root, env, before=lambda: touch(root, unrelated)))
    show("jobsafe on 3 named files, --no-cache", *measure(
        [*jobsafe, "--no-cache", *named], args.runs, root, env))
    show("jobsafe --version", *measure([sys.executable, "-m", "jobsafe", "--version"],
                                       args.runs, root))
    if not args.no_peers:
        peers = {
            "ruff": ["check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", "django"],
            "bandit": ["-r", "-q", "-f", "json", "-o", os.devnull, "django"],
            "semgrep": ["scan", "--config", str(HERE / "benchmark-rules.yml"), "--metrics",
                        "off", "--disable-version-check", "-q", "django"],
        }
        for name, peer_args in peers.items():
            exe = tool(name)
            if exe is None:
                print(f"{name:<44} not installed")
                continue
            fig[name] = show(f"{name} {' '.join(peer_args[:3])}", *measure(
                [exe, *peer_args], args.runs, root))
    if tool("pre-commit") and tool("git"):
        through_pre_commit(root, named, unrelated, scratch, args.runs, env, fig)
    heavy = {} if args.no_lock_heavy else lock_heavy(jobsafe, args.runs, env, cache)
    corpora = {"corpus": root, **{name: tree for name, (tree, _, _) in heavy.items()}}
    if args.findings or args.compare:
        same_findings(jobsafe, corpora, env, args.findings, args.compare)
    print("\nlinearity (jobsafe --no-cache on 1x, 2x, 4x copies of the corpus):")
    for times in (1, 2, 4):
        tree = root if times == 1 else corpus.copies(root, times, scratch)
        show(f"  {times}x", *measure([*jobsafe, "--no-cache", "."], max(1, args.runs // 2),
                                     tree, env))
    print("\nratios:")
    if "ruff" in fig:
        print(f"  cold / ruff --select ALL      {fig['cold'] / fig['ruff']:.2f}   (target <= 2)")
        print(f"  warm / ruff --select ALL      {fig['warm'] / fig['ruff']:.2f}   (target <= 1.5)")
    if "bandit" in fig:
        print(f"  cold / bandit                 {fig['cold'] / fig['bandit']:.3f}  (target <= 0.1)")
    if "semgrep" in fig:
        print(f"  cold / semgrep                {fig['cold'] / fig['semgrep']:.2f}")
    print(f"  pre-commit - python -c pass   {fig['precommit'] - fig['pass']:+.2f} s (target <= 0.3)")
    print(f"  unrelated - python -c pass    {fig['quiet'] - fig['pass']:+.2f} s (target <= 0.1)")
    if "hook-quiet" in fig:
        print(f"  pre-commit run, unrelated / relevant files: {fig['hook-quiet']:.2f} s / "
              f"{fig['hook-relevant']:.2f} s (pre-commit's own run: {fig['hook-none']:.2f} s)")
    for name, (_, cold, ruff) in heavy.items():
        if ruff is not None:
            print(f"  {name + ' cold / ruff':<29} {cold / ruff:.2f}   (target <= 2)")
    shutil.rmtree(cache, ignore_errors=True)
    return 0


def quiet_modules(root: Path, django: Path, cache: Path) -> list[str]:
    """Three Django modules a commit could touch that change no finding: not read as code
    by the last run, and holding none of the prefilter's words (what the fast path asks)."""
    from jobsafe import quick
    from jobsafe.cache import FileCache
    from jobsafe.config import load_settings
    from jobsafe.discover import find_root

    utils = str(next(django.glob("*/django/utils")))
    settings = load_settings(None, utils, lambda selector: [])
    store = FileCache.open(str(cache))
    analysed = find_root([os.path.join(utils, "text.py")])
    record = store.get(quick._key(store, analysed, os.path.realpath(root), settings.source)) \
        if store else None
    if not isinstance(record, quick.Record):
        raise SystemExit("benchmark: the warm run left no pre-commit record")
    modules = (os.path.join(analysed, rel) for rel in record.quiet)
    found = sorted(p for p in modules if p.startswith(os.path.realpath(utils)) and
                   quick._still_quiet(p, record.hints))[:3]
    return [os.path.relpath(p, os.path.realpath(root)) for p in found]


def touch(root: Path, files: list[str]) -> None:
    """An edit as a commit makes it: a line appended (the stamps change)."""
    for rel in files:
        with open(root / rel, "a", encoding="utf-8") as fh:
            fh.write("# edited\n")


def through_pre_commit(root: Path, named: list[str], unrelated: list[str], scratch: Path,
                       runs: int, env: dict, fig: dict) -> None:
    """``pre-commit run`` on a git copy of the corpus with jobsafe's hook (its file pattern;
    this Python's jobsafe as the entry), on staged edits of unrelated and relevant files."""
    import yaml

    repo = scratch / "git-corpus"
    if not repo.exists():
        shutil.copytree(root, repo, symlinks=True)
        git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.org"]
        subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
        subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
        subprocess.run([*git, "commit", "-qm", "corpus"], cwd=repo, check=True)
    (hook,) = yaml.safe_load((HERE.parent / ".pre-commit-hooks.yaml").read_text())
    config = {"repos": [{"repo": "local", "hooks": [{
        "id": "jobsafe", "name": "jobsafe", "language": "system", "files": hook["files"],
        "entry": f"{sys.executable} -m jobsafe check --exit-zero"}]}]}
    (repo / ".pre-commit-config.yaml").write_text(yaml.safe_dump(config))
    hook_env = dict(env, PRE_COMMIT_HOME=str(scratch / "pre-commit-home"))
    pre_commit = [tool("pre-commit"), "run", "jobsafe", "--files"]
    print()
    readme = [str(p.relative_to(repo)) for p in sorted(repo.glob("django/*/README.rst"))]
    for label, files, key in (("no file it reads", readme, "hook-none"),
                              ("3 unrelated modules", unrelated, "hook-quiet"),
                              ("3 relevant files", named, "hook-relevant")):
        subprocess.run([*pre_commit, *files], cwd=repo, env=hook_env, capture_output=True)
        fig[key] = show(f"pre-commit run jobsafe, {label}", *measure(
            [*pre_commit, *files], runs, repo, hook_env, before=lambda f=files: touch(repo, [
                p for p in f if p.endswith(".py")])))


def lock_heavy(jobsafe: list[str], runs: int, env: dict, cache: Path):
    """Cold jobsafe beside ruff --select ALL on each lock-heavy sdist: name -> (tree, jobsafe
    median, ruff median or None)."""
    out = {}
    pypi = corpus.fetch_pypi(corpus.LOCK_HEAVY)
    ruff = tool("ruff")
    print("\nlock-heavy corpora (cold jobsafe; ruff --select ALL --no-cache):")
    for spec in corpus.LOCK_HEAVY:
        tree = pypi / spec.replace("==", "-")
        if not tree.exists():
            print(f"  {spec:<42} not downloaded")
            continue
        name = spec.split("==")[0]
        cold = show(f"  jobsafe {name}", *measure([*jobsafe, "."], runs, tree, env,
                                                  before=lambda: shutil.rmtree(cache, True)))
        peer = show(f"  ruff {name}", *measure(
            [ruff, "check", "--select", "ALL", "--no-cache", "--exit-zero", "-q", "."], runs,
            tree)) if ruff else None
        out[name] = (tree, cold, peer)
    return out


def same_findings(jobsafe: list[str], corpora: dict, env: dict, write: str | None,
                  compare: str | None) -> None:
    """Each corpus's findings as JSON, written and/or compared byte for byte."""
    print("\nfindings:")
    for name, tree in corpora.items():
        cmd = [a for a in jobsafe if a != "-q"] + ["--no-cache", "--format", "json", "."]
        text = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True).stdout
        if write:
            Path(write).mkdir(parents=True, exist_ok=True)
            (Path(write) / f"{name}.json").write_text(text)
        if compare:
            before = Path(compare) / f"{name}.json"
            verdict = "no earlier run" if not before.exists() else \
                "identical" if before.read_text() == text else "DIFFERENT"
            print(f"  {name:<42} {verdict}")


if __name__ == "__main__":
    sys.exit(main())
