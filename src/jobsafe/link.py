"""The link step: from a scheduled command to the code it runs in the analysed tree.

A crontab says ``cd /srv/app && venv/bin/python manage.py charge``; the tree holds
``billing/management/commands/charge.py``. Resolution tries the path as written (the
analysed root standing in for ``/``), then the longest unique suffix of it among the tree's
files, then console scripts, modules and Django management commands.
"""
from __future__ import annotations

import configparser
import os
import re
import sys
from collections import defaultdict
from dataclasses import dataclass
from typing import Literal

from .discover import Discovery, SourceFile, read_text
from .model import Entry, EntryKind, Job, JobSource, Lock, Schedule, Span, Target
from .sources.php.apps import PhpSettings, app_settings
from .sources.php.code import PhpAnalyzer, PhpCode
from .sources.php.index import PhpIndex
from .sources.python.index import PythonIndex, entry_code
from .sources.shell import SHELLS, Invocation, Locator, analyze, basename

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

_PYTHON = re.compile(r"^(?:python|pypy)(?:\d+(?:\.\d+)?)?$")
_PY_OPTS_WITH_VALUE = {"-W", "-X", "--check-hash-based-pycs"}
#: interpreters that run a script file, by command name -> the entry kind they give it
_SCRIPT_INTERPRETERS: dict[str, EntryKind] = {
    **dict.fromkeys(SHELLS, "shell"), "perl": "perl", "ruby": "ruby", "php": "php",
    "node": "node", "Rscript": "Rscript", "lua": "lua", "tclsh": "tclsh"}
_DJANGO = {"manage.py", "django-admin", "django-admin.py"}
#: an interpreter named with its version (`php8.2`, `php84`, `ruby3.2`)
_VERSIONED = re.compile(r"^(php|ruby|perl|node)[\d.]+$")
#: runners of the project's own tasks: ``rake billing:charge``, ``rails runner``,
#: ``fab sync``, ``invoke sync``
_TASK_RUNNERS = {"rake", "rails", "fab", "invoke"}
#: package managers whose ``run NAME`` runs a script of the project's package.json
_PACKAGE_SCRIPTS = {"npm", "yarn", "pnpm"}
#: a positional parameter of a script (``$1``, ``${2}``)
_POSITIONAL = re.compile(r"\$\{?([1-9])\}?")
#: interpreter options followed by a value (not the script): ``php -d memory_limit=2G``
_VALUED_OPTIONS: dict[str, tuple[str, ...]] = {"php": ("-d", "-c", "-z"), "perl": ("-I", "-M"),
                                               "ruby": ("-I", "-r"), "node": ("-r", "--require")}
#: interpreter options whose value is the code to run: no script file follows
_INLINE_CODE: dict[str, tuple[str, ...]] = {
    "perl": ("-e", "-E"), "ruby": ("-e",), "php": ("-r",),
    "node": ("-e", "-p", "--eval", "--print")}
#: a script named by a path relative to the job's directory (``scripts/sync.js``)
_RELATIVE_SCRIPT = re.compile(r"(?:\./|\.\./)?[\w.-]+(?:/[\w.-]+)*\.\w+|\.{1,2}/[\w./-]+")
#: Laravel's and Symfony's (bin/console) command runners
_FRAMEWORK_CONSOLES: dict[str, EntryKind] = {"artisan": "artisan", "console": "console"}
#: the method a framework calls on a command class: Laravel's ``handle``, Symfony's
#: ``execute`` (or ``__invoke`` for invokable commands)
_COMMAND_METHODS: dict[str, tuple[str, ...]] = {"artisan": ("handle", "__invoke"),
                                                "console": ("execute", "__invoke")}
#: artisan commands that run Laravel's scheduler: its tasks are the jobs
DISPATCH_COMMANDS = ("schedule:run", "schedule:work")
#: lock vocabulary of Python source, for a module libcst cannot parse
_PY_LOCK_TOKENS = re.compile(
    r"\b(?:fcntl|lockf|flock|FileLock|SoftFileLock|filelock|portalocker|fasteners|"
    r"zc\.lockfile|LockFile|PIDLockFile|PidFile|pidfile|SingleInstance|redis_lock|"
    r"Redlock|pottery|advisory_lock|advisory_xact_lock|GET_LOCK|O_EXCL|cache\.add|"
    r"nx\s*=\s*True|setnx|celery_once|QueueOnce)\b")


#: lock vocabulary in languages jobsafe does not model (Perl, PHP, Ruby, ...)
_ANY_LOCK_TOKENS = re.compile(r"(?i)\bflock\b|\blockf\b|LOCK_(?:EX|NB)|lock_?file|pid_?file|"
                              r"\w+_lock\b|\block_\w+|\.lock\b|GET_LOCK|advisory_lock|"
                              r"\bmutex\b|\bsemaphore\b")


RUN_PARTS_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_PERL_USE = re.compile(r"^\s*use\s+([A-Z]\w*(?:::\w+)+)", re.M)


@dataclass(frozen=True)
class Resolved:
    file: SourceFile
    kind: EntryKind
    function: str | None = None
    #: the command-line words after a script: what a shell wrapper forwards with ``"$@"``,
    #: what a PHP front controller includes
    words: tuple[str, ...] = ()


def _repository_names(root: str) -> frozenset[str]:
    """What the project is named (its images, its installed package): the tree's folder
    and, in a git checkout, the repository its ``origin`` remote names (``…/panel.git``)."""
    names = {os.path.basename(root.rstrip(os.sep))}
    try:
        with open(os.path.join(root, ".git", "config"), encoding="utf-8",
                  errors="replace") as config:
            text = config.read(65536)
    except OSError:
        text = ""
    m = re.search(r'\[remote "origin"\][^\[]*?^\s*url\s*=\s*(\S+)', text, re.M)
    if m:
        names.add(m.group(1).rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1]
                  .removesuffix(".git"))
    return frozenset(n.lower() for n in names if n)


class Tree:
    """An index of the analysed files, for resolving what a command runs."""

    def __init__(self, discovery: Discovery, texts: dict[str, tuple[str, str]]):
        self.root = discovery.root
        self.discovery = discovery
        self.texts = texts  # display path -> (kind, text) of every file read
        self.files = {f.rel: f for f in discovery.files}
        self._by_name: dict[str, list[str]] = defaultdict(list)
        for rel in self.files:
            self._by_name[rel.rsplit("/", 1)[-1]].append(rel)
        self.console_scripts = self._console_scripts()
        self._entries: dict[str, Entry] = {}
        self.repository_names = _repository_names(discovery.root)
        self.python = PythonIndex({rel: f for rel, f in self.files.items()
                                   if rel.endswith((".py", ".pyw"))}, self.source,
                                  self.repository_names)
        self.php = PhpIndex(self.files, self.source)
        #: where Dockerfiles put tree files and folders in their images
        self._placed: dict[str, SourceFile] = {}
        self._placed_folders: list[tuple[str, str]] = []
        self._php_analyzer: PhpAnalyzer | None = None
        self._php_settings: PhpSettings | None = None

    @property
    def php_settings(self) -> PhpSettings:
        if self._php_settings is None:
            self._php_settings = app_settings(self.files, lambda f: self.source(f, "other"))
        return self._php_settings

    @property
    def php_analyzer(self) -> PhpAnalyzer:
        if self._php_analyzer is None:
            settings = self.php_settings
            self._php_analyzer = PhpAnalyzer(self.php, settings.cache, settings.lock_scope)
        return self._php_analyzer

    def php_entry(self, display: str, kind: EntryKind, function: str | None,
                  code: PhpCode) -> Entry:
        return Entry(display, kind, function, tuple(code.locks), facts=tuple(code.facts),
                     files=tuple(code.files) or (display,))

    def source(self, f: SourceFile, kind: str = "python") -> str | None:
        """A file's text, read once and kept for suppressions, excerpts and fingerprints."""
        if f.display in self.texts:
            return self.texts[f.display][1]
        read = read_text(f.abs)
        if read.content is not None:
            self.texts[f.display] = (kind, read.content)
        elif read.problem and read.problem.startswith("unreadable"):
            self.discovery.unreadable.append((f.display, read.problem))
        return read.content

    # -- lookups
    def _console_scripts(self) -> dict[str, str]:
        scripts: dict[str, str] = {}
        for rel, f in sorted(self.files.items()):
            name = rel.rsplit("/", 1)[-1]
            text = read_text(f.abs).content if name in ("pyproject.toml", "setup.cfg") else None
            if not text:
                continue
            if name == "pyproject.toml":
                try:
                    data = tomllib.loads(text)
                except (tomllib.TOMLDecodeError, ValueError):
                    continue
                project = data.get("project") if isinstance(data, dict) else None
                poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data, dict) else {}
                for table in ((project or {}).get("scripts"), poetry.get("scripts")):
                    if isinstance(table, dict):
                        scripts.update({k: v for k, v in table.items() if isinstance(v, str)})
            else:
                parser = configparser.ConfigParser()
                try:
                    parser.read_string(text)
                    raw = parser.get("options.entry_points", "console_scripts", fallback="")
                except configparser.Error:
                    continue
                for line in raw.splitlines():
                    if "=" in line:
                        k, v = line.split("=", 1)
                        scripts[k.strip()] = v.strip()
        return scripts

    def place_file(self, container_path: str, f: SourceFile) -> None:
        """A Dockerfile puts ``f`` at ``container_path`` in an image."""
        self._placed.setdefault(os.path.normpath(container_path), f)

    def place_folder(self, container_path: str, rel: str) -> None:
        """A Dockerfile puts the tree folder ``rel`` ("" for the context) at
        ``container_path``."""
        self._placed_folders.append((os.path.normpath(container_path), rel))

    def _placed_at(self, path: str) -> SourceFile | None:
        """The tree file a Dockerfile put at this container path."""
        path = os.path.normpath(path)
        if path in self._placed:
            return self._placed[path]
        for folder, rel in sorted(self._placed_folders, key=lambda p: -len(p[0])):
            if path.startswith(folder.rstrip("/") + "/"):
                inside = path[len(folder.rstrip("/")) + 1:]
                candidate = f"{rel}/{inside}" if rel else inside
                if candidate in self.files:
                    return self.files[candidate]
        return None

    def find(self, path: str, cwd: str | None = None, base: str | None = None) -> SourceFile | None:
        """The tree file a path in a command refers to, if exactly one fits: where a
        Dockerfile put it in the image, the path as written (the analysed root standing in
        for ``/``), or the longest unique suffix."""
        if not path or "$" in path or "`" in path:
            return None
        if path.startswith("/") or cwd:
            placed = self._placed_at(path if path.startswith("/") else
                                     os.path.join(cwd or "/", path))
            if placed is not None:
                return placed
        candidates = []
        if path.startswith("/"):
            candidates.append(path)
        else:
            for prefix in (cwd, base, ""):
                if prefix is not None:
                    candidates.append(os.path.normpath(os.path.join(prefix, path)))
        for cand in candidates:
            rel = cand.lstrip("/")
            if rel.startswith("./"):
                rel = rel[2:]
            if rel in self.files:
                return self.files[rel]
        for cand in candidates:
            parts = [p for p in cand.split("/") if p and p != "."]
            for k in range(len(parts) - 1, 1, -1):
                suffix = "/".join(parts[-k:])
                hits = [r for r in self._by_name.get(parts[-1], []) if r == suffix
                        or r.endswith("/" + suffix)]
                if len(hits) == 1:
                    return self.files[hits[0]]
            if parts:
                hits = self._by_name.get(parts[-1], [])
                if len(hits) == 1 and (len(parts) > 1 or not path.startswith("/")) \
                        and is_script(self.files[hits[0]]):
                    return self.files[hits[0]]
        return None

    def module(self, dotted: str) -> SourceFile | None:
        rel = dotted.replace(".", "/")
        for base in ("", "src/"):
            for cand in (f"{base}{rel}.py", f"{base}{rel}/__main__.py"):
                if cand in self.files:
                    return self.files[cand]
        hits = [r for r in self.files if r.endswith(f"/{rel}.py") or r.endswith(f"/{rel}/__main__.py")]
        return self.files[hits[0]] if len(hits) == 1 else None

    def run_parts(self, args: list[str], cwd: str | None, base: str | None) -> list[SourceFile]:
        """The scripts ``run-parts DIR`` runs: files named by run-parts' rule, in order."""
        folder = next((a for a in reversed(args) if not a.startswith("-")), None)
        if folder is None:
            return []
        rel_dir = os.path.normpath(os.path.join(cwd or "/", folder)).lstrip("/")
        names = sorted(r for r in self.files if r.startswith(rel_dir + "/")
                       and "/" not in r[len(rel_dir) + 1:]
                       and RUN_PARTS_NAME.match(r.rsplit("/", 1)[-1]))
        return [self.files[r] for r in names if is_script(self.files[r])]

    def management_command(self, name: str) -> SourceFile | None:
        hits = sorted(r for r in self._by_name.get(f"{name}.py", [])
                      if r.endswith(f"management/commands/{name}.py"))
        return self.files[hits[0]] if hits else None

    # -- entries
    def entry(self, resolved: Resolved) -> Entry:
        key = f"{resolved.file.rel}:{resolved.kind}:{resolved.function}:{resolved.words}"
        if key not in self._entries:
            # a placeholder first: scripts that run each other must not recurse forever
            self._entries[key] = Entry(resolved.file.display, resolved.kind, resolved.function)
            self._entries[key] = self._analyse_entry(resolved)
        return self._entries[key]

    def _analyse_entry(self, resolved: Resolved) -> Entry:
        f = resolved.file
        if resolved.kind in _COMMAND_METHODS and resolved.function:
            found = self._php_command(resolved)
            if found is not None:
                return found
        text = read_text(f.abs).content
        if text is None:
            return Entry(f.display, resolved.kind, resolved.function, files=(f.display,))
        if f.rel in self.php.files and (f.rel.endswith(".php") or _shebang(text) == "php"):
            php = self.php.parsed(f.rel)
            if php is not None:
                self.php.report_errors(f.rel)
                return self.php_entry(f.display, resolved.kind, None,
                                      self.php_analyzer.script(php, resolved.words))
        if f.rel.endswith((".py", ".pyw")) or _PYTHON.match(_shebang(text)):
            self.texts.setdefault(f.display, ("python", text))
            self.python.add(f.rel, f)
            code = entry_code(self.python, f.rel, resolved.kind, resolved.function)
            return Entry(f.display, resolved.kind, resolved.function, code.locks,
                         mentions_lock=not code.parsed and bool(_PY_LOCK_TOKENS.search(text)),
                         facts=code.facts, files=code.files or (f.display,))
        if _shebang(text) in SHELLS or f.rel.endswith(
                (".sh", ".bash")) or not _shebang(text) and not f.rel.endswith(".php"):
            self.texts[f.display] = ("shell", text)
            facts = analyze(text, Locator(f.display, text))
            locks = list(facts.locks)
            for g in facts.guards:
                locks.append(Lock(kind=g.kind, scope="host", span=g.span, path=g.path,
                                  stale_handling="kernel", blocking=g.blocking,
                                  wait_seconds=g.wait_seconds))
            # programs of the tree that this script runs in turn (munin-cron -> munin-update)
            nested = [self.entry(r) for r in self._nested(facts, f, resolved.words)]
            locks += [lock for e in nested for lock in e.locks if lock not in locks]
            mentions = any(e.mentions_lock for e in nested)
            files = tuple(dict.fromkeys((f.display, *(p for e in nested for p in e.files))))
            return Entry(f.display, "shell", None, tuple(locks), tuple(facts.detached),
                         tuple(facts.backgrounds), facts.runtime_bound, mentions_lock=mentions,
                         files=files)
        # perl, php, ruby ...: not modelled; a mention of locking keeps JOB101 quiet
        modules = self._perl_modules(text)
        mentions = bool(_ANY_LOCK_TOKENS.search(text)) or any(
            _ANY_LOCK_TOKENS.search(read_text(m.abs).content or "") for m in modules)
        return Entry(f.display, resolved.kind, resolved.function, mentions_lock=mentions,
                     files=(f.display, *(m.display for m in modules)))

    def _php_command(self, resolved: Resolved) -> Entry | None:
        """An artisan or Symfony console command's class, from the command name; the
        scheduler's own ``schedule:run`` is a dispatcher (its tasks are jobs of their own)."""
        name = resolved.function or ""
        if resolved.kind == "artisan" and name in DISPATCH_COMMANDS:
            return Entry(resolved.file.display, resolved.kind, name, files=(resolved.file.display,))
        methods = _COMMAND_METHODS[resolved.kind]
        cls = self.php.command(name, methods)
        if cls is None:
            return None
        method = next(m for m in methods if cls.method(m, self.php))
        self.php.report_errors_of(cls.php)
        return self.php_entry(cls.php.display, resolved.kind, f"{cls.name}::{method}",
                              self.php_analyzer.entry(cls, method))

    def _perl_modules(self, text: str) -> list[SourceFile]:
        """Tree files of the Perl modules a script uses (``use Munin::Master::Update``)."""
        found = []
        for name in _PERL_USE.findall(text):
            f = self.find("/" + name.replace("::", "/") + ".pm")
            if f is not None:
                found.append(f)
        return found

    def _nested(self, facts, script: SourceFile, words: tuple[str, ...]) -> list[Resolved]:
        """The programs of the tree a script runs, given the script's own arguments."""
        base = os.path.dirname(script.rel)
        found = []
        for inv, _ in facts.invocations:
            argv = _forwarded([w.text for w in inv.argv], words[inv.shifted:])
            if argv and basename(argv[0]) not in _PLUMBING:
                resolved, _ = self.resolve(argv, facts.cd, base)
                if resolved is not None and resolved.file.rel != script.rel:
                    found.append(resolved)
        return found

    # -- targets
    def resolve(self, argv: list[str], cwd: str | None, base: str | None) -> tuple[Resolved | None, bool]:
        """(resolved entry, runs project code) for a program and its arguments."""
        if not argv:
            return None, False
        name = _VERSIONED.sub(r"\1", basename(argv[0]))
        if name == "bundle" and argv[1:2] == ["exec"]:
            return self.resolve(argv[2:], cwd, base)
        if name in _TASK_RUNNERS or name in _PACKAGE_SCRIPTS and "run" in argv[1:2]:
            # the project's own tasks (a Rakefile, a fabfile, package.json's scripts),
            # whose code is not followed
            return None, True
        if _PYTHON.match(name):
            return self._python(argv, cwd, base)
        if name in _SCRIPT_INTERPRETERS:
            script = next(iter(_positional(argv[1:], _VALUED_OPTIONS.get(name, ()))), None)
            inline = _INLINE_CODE.get(name, ("-c",) if name in SHELLS else ())
            if script is None or set(inline) & set(argv[1:argv.index(script)]):
                return None, False
            if basename(script) in _FRAMEWORK_CONSOLES:
                f = self.find(script, cwd, base)
                kind = _FRAMEWORK_CONSOLES[basename(script)]
                return (Resolved(f, kind, _command_after(argv, script)) if f else None), True
            f = self.find(script, cwd, base)
            words = tuple(argv[argv.index(script) + 1:])
            # (a relative path is the project's own script, found or not)
            return (Resolved(f, _SCRIPT_INTERPRETERS[name], words=words) if f else None), \
                f is not None or _RELATIVE_SCRIPT.fullmatch(script) is not None
        if name in _DJANGO:
            return self._django(argv[1:]), True
        if name in _FRAMEWORK_CONSOLES and ("/" in argv[0] or name == "artisan"):
            f = self.find(argv[0], cwd, base)
            return (Resolved(f, _FRAMEWORK_CONSOLES[name], _command_after(argv, argv[0]))
                    if f else None), True
        if "/" in argv[0]:
            f = self.find(argv[0], cwd, base)
            if f is not None and is_script(f):
                return Resolved(f, "script", words=tuple(argv[1:])), True
            if f is None and argv[0].startswith(("./", "../")):
                return None, True  # a program of the project, run by its relative path
        if name in self.console_scripts:  # also /srv/venv/bin/NAME
            spec = self.console_scripts[name]
            module, _, func = spec.partition(":")
            f = self.module(module.strip())
            return (Resolved(f, "console-script", func.strip() or None) if f else None), True
        return None, False

    def _python(self, argv, cwd, base):
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            opt = argv[i]
            if opt == "-m" and i + 1 < len(argv):
                f = self.module(argv[i + 1])
                return (Resolved(f, "module") if f else None), f is not None
            if opt == "-c":
                return None, False
            if opt in _PY_OPTS_WITH_VALUE:
                i += 1
            i += 1
        if i >= len(argv):
            return None, False
        script = argv[i]
        if basename(script) in _DJANGO:
            return self._django(argv[i + 1:]), True
        f = self.find(script, cwd, base)
        return (Resolved(f, "python") if f else None), \
            f is not None or _RELATIVE_SCRIPT.fullmatch(script) is not None

    def _django(self, args):
        command = next((a for a in args if not a.startswith("-")), None)
        f = self.management_command(command) if command else None
        return Resolved(f, "manage.py", "handle") if f else None


def _command_after(argv: list[str], runner: str) -> str | None:
    """The command a console runner is given: ``php artisan billing:charge --force``,
    ``bin/console -e prod app:sync``."""
    words = argv[argv.index(runner) + 1:] if runner in argv else argv[1:]
    return next(iter(_positional(words, ("-e", "--env"))), None)


def _forwarded(argv: list[str], words: tuple[str, ...]) -> list[str]:
    """A command in a script with the script's own arguments put where it forwards them
    (``exec python manage.py "$@"``, ``"$1"``); parameters it was not given are empty."""
    def given(m: re.Match) -> str:
        index = int(m.group(1))
        return words[index - 1] if index <= len(words) else ""

    out: list[str] = []
    for word in argv:
        if word in ("$@", "${@}", "$*", "${*}"):
            out.extend(words)
        elif _POSITIONAL.fullmatch(word):
            out.extend(w for w in [_POSITIONAL.sub(given, word)] if w)
        else:  # also inside a word: ``/srv/jobs/"$1".py``
            out.append(_POSITIONAL.sub(given, word))
    return out


def _positional(words: list[str], valued: tuple[str, ...]) -> list[str]:
    """The words that are not options, skipping the values of options that take one
    (``php -d memory_limit=2G script.php``)."""
    found, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word in valued:
            skip = True
        elif not word.startswith("-"):
            found.append(word)
    return found


def _shebang(text: str) -> str:
    if not text.startswith("#!"):
        return ""
    words = text[2:].split("\n", 1)[0].split()
    if not words:
        return ""
    prog = basename(words[0])
    if prog == "env":
        rest = [w for w in words[1:] if not w.startswith("-")]
        prog = basename(rest[0]) if rest else ""
    return prog


def is_script(f: SourceFile) -> bool:
    """Text programs count as project code; compiled binaries do not."""
    if f.rel.endswith((".py", ".sh", ".bash", ".php", ".pl", ".rb", ".js")):
        return True
    try:
        with open(f.abs, "rb") as fh:
            head = fh.read(2)
    except OSError:
        return False
    return head == b"#!"


# --------------------------------------------------------------------------- jobs

#: shell built-ins and plumbing that never count as the work of a job
_PLUMBING = {"cd", "test", "[", "[[", "exit", "true", "false", ":", "echo", "printf", "sleep",
             "export", "set", "unset", "source", ".", "wait", "trap", "return", "local",
             "read", "rm", "mkdir", "touch", "cat", "date", "kill", "rmdir", "ulimit", "umask"}


def targets_for(invocations: list[tuple[Invocation, bool]], tree: Tree, cwd: str | None,
                base: str | None, locate: Locator) -> list[tuple[Target, bool]]:
    """(target, run under a guard) for each program a command runs."""
    out = []
    for inv, guarded in invocations:
        argv = [w.text for w in inv.argv]
        if not argv or basename(argv[0]) in _PLUMBING:
            continue
        if basename(argv[0]) == "run-parts":
            span = locate.span(inv.argv[0].start, inv.argv[-1].end)
            for f in tree.run_parts(argv[1:], cwd, base):
                part = tree.entry(Resolved(f, "script"))
                out.append((Target(tuple(argv), span, False, part, " ".join(argv), "run-parts"),
                            guarded))
            continue
        resolved, project = tree.resolve(argv, cwd, base)
        entry = tree.entry(resolved) if resolved else None
        if resolved is not None and entry is not None:
            script = basename(resolved.file.rel)
            args = [a for a in argv[1:] if basename(a) not in (script, *_DJANGO)]
            identity = " ".join([entry.path, *args])
        else:
            identity = " ".join(argv)
        span = locate.span(inv.argv[0].start, inv.argv[-1].end)
        # (also when the artisan file is not where the command says: it is the dispatcher)
        role: Literal["run", "dispatch"] = "dispatch" if any(
            basename(a) == "artisan" for a in argv) and any(
            a in DISPATCH_COMMANDS for a in argv) else "run"
        out.append((Target(tuple(argv), span, project, entry, identity.strip(), role), guarded))
    return out


def build_job(job_id: str, source: JobSource, span: Span, schedule: Schedule,
              commands: list[tuple[str, Locator]], tree: Tree, base: str | None,
              user: str | None = None, env: dict[str, str] | None = None,
              whole_unit_guarded: bool = False, **extra) -> Job:
    """Analyse the shell commands a schedule runs and link them to the code they run.

    ``whole_unit_guarded``: the scheduler itself keeps a second copy out (a systemd unit is
    never started twice), so any work sent to the background escapes that guard.
    """
    guards, timeouts, locks, backgrounds, targets = [], [], [], [], []
    for command, locate in commands:
        facts = analyze(command, locate, env, guarded=whole_unit_guarded)
        found = targets_for(facts.invocations, tree, facts.cd, base, locate)
        guards += facts.guards
        locks += facts.locks
        backgrounds += facts.backgrounds
        if facts.runtime_bound:
            timeouts.append(facts.runtime_bound)
        for target, guarded in found:
            if target.entry is not None:
                backgrounds += target.entry.backgrounds if guarded else target.entry.escapes
                if target.entry.runtime_bound_seconds:
                    timeouts.append(target.entry.runtime_bound_seconds)
        targets += [t for t, _ in found]
    return Job(id=job_id, source=source, span=span, schedule=schedule,
               command="\n".join(c for c, _ in commands), user=user, guards=tuple(guards),
               runtime_bound_seconds=min(timeouts) if timeouts else None,
               targets=tuple(targets), backgrounds=tuple(dict.fromkeys(backgrounds)),
               locks=tuple(locks), **extra)
