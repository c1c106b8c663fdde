"""Crontabs, cron.d files and the crontab lines Dockerfiles write or copy."""
from __future__ import annotations

import fnmatch
import os
import re
import shlex
from dataclasses import dataclass, field, replace
from functools import partial

from ..discover import SourceFile, is_sniffable, sniff_head
from ..link import RUN_PARTS_NAME, Resolved, build_job, is_script
from ..model import Confidence, CronFile, Guard, Job, NeverRuns, Span, Target
from ..paths import is_test_path
from ..schedule import cron_schedule
from ..sources.crontab import (
    CrontabDialect,
    cron_d_name_ok,
    looks_like_crontab,
    looks_like_system_crontab,
    parse_crontab,
)
from ..sources.compose import compose_services
from ..sources.dockerfile import (
    CopyHint,
    is_system_destination,
    parse_dockerfile,
    runner_files,
    serial_runner_files,
    supercronic_files,
    written_crontab_lines,
)
from ..sources.shell import SHELLS
from ..sources.supervisor import looks_like_supervisor, supervisor_programs
from ..sources.workloads import runs_cron_daemon
from ..sources.yamlfile import YamlError, load_documents
from .context import Step


@dataclass
class CronSource:
    file: SourceFile
    system: bool | None = None
    #: (cron.d name, the Dockerfile COPY line) for each copy into /etc/cron.d
    installs: list[tuple[str, Span]] = field(default_factory=list)
    #: a crontab by its content alone: neither its name nor an install says so
    sniffed: bool = False
    #: whose reading: Debian's cron, supercronic, another container runner (lenient)
    dialect: CrontabDialect = "debian"
    #: its runner never starts a job while its last run goes on: where that is said
    serial: Span | None = None

    @property
    def confidence(self) -> Confidence:
        return Confidence.LOW if self.sniffed else Confidence.HIGH


@dataclass
class CronImages:
    """Which images run cron jobs: what topology needs to find the containers of a job."""

    #: display path of a crontab -> display paths of the Dockerfiles that install it (a
    #: production and a development image often both do)
    installed_by: dict[str, list[str]] = field(default_factory=dict)
    #: display paths of Dockerfiles that install cron jobs
    dockerfiles: set[str] = field(default_factory=set)
    #: display path of a Dockerfile -> container paths of the scripts it copies in that
    #: start a cron daemon (``COPY *.sh /`` puts ``cron.sh``, ``exec busybox crond -f``, at
    #: ``/cron.sh``): a container running one runs that image's crontab
    daemon_scripts: dict[str, set[str]] = field(default_factory=dict)


#: the folders Debian's /etc/crontab hands run-parts, and when (anacron, when installed,
#: runs the daily, weekly and monthly ones at about the same times)
PERIODIC_FOLDERS = {"cron.hourly": "17 * * * *", "cron.daily": "25 6 * * *",
                    "cron.weekly": "47 6 * * 7", "cron.monthly": "52 6 1 * *"}


#: crontabs a runner started outside a Dockerfile reads: (all, those whose runner never
#: overlaps a job with itself, those supercronic reads)
_Started = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: a script that writes a crontab: into /etc/cron.d or /etc/crontab, or piped to crontab
_WRITES_CRON = re.compile(r"(?:echo|printf)\b[^\n]*(?:>>?\s*[\"']?/etc/cron|\|\s*crontab\b)")


def _shell_text(command: str) -> str:
    """The script a ``sh -c '…'`` command runs, else the command itself."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) >= 3 and os.path.basename(words[0]) in SHELLS and words[1] == "-c":
        return words[2]
    return command


class CronAssembly(Step):
    """Jobs of crontabs (found by name, by content, or as what a Dockerfile installs) and of
    the crontab lines Dockerfiles write."""

    def run(self) -> CronImages:
        self.images = CronImages()
        cron_sources: dict[str, CronSource] = {}
        for f in self.discovery.files:
            if f.kind == "crontab":
                cron_sources[f.rel] = CronSource(f)
        runners = self._started_runner_files()
        for f in self.discovery.files:
            if f.kind == "dockerfile":
                self.guarded(f.display, partial(self._dockerfile, f, cron_sources, runners))
        for f in self.discovery.files:
            if f.kind == "yaml":
                text = self.peek(f)
                if text and "crontab" in text and "services:" in text:
                    self.guarded(f.display, partial(self._compose_written, f, text))
            elif f.kind == "shell" and not is_test_path(f.rel):
                text = self.peek(f)
                if text and _WRITES_CRON.search(text):
                    self.guarded(f.display, partial(self._script_written, f, text))
        for f in self.discovery.files:
            if f.kind == "other" and f.rel not in cron_sources and is_sniffable(f.rel):
                head = sniff_head(f.abs)
                if head and not head.startswith("#!") and looks_like_crontab(head):
                    cron_sources[f.rel] = CronSource(f, sniffed=True)
        for rel in sorted(cron_sources):
            src = cron_sources[rel]
            self.guarded(src.file.display, partial(self._crontab, src))
        self._periodic_folders()
        return self.images

    def _periodic_folders(self) -> None:
        """Scripts in ``/etc/cron.daily`` and its siblings are jobs even when the tree has
        no ``/etc/crontab`` running them (a Debian package ships only the script): at the
        times Debian's ``/etc/crontab`` runs ``run-parts`` on the folder. Scripts that a
        crontab line of the tree already runs through ``run-parts`` are not repeated."""
        covered = {t.entry.path for job in self.project.jobs for t in job.targets
                   if t.role == "run-parts" and t.entry is not None}
        for f in self.discovery.files:
            parts = f.rel.split("/")
            if len(parts) < 3 or parts[-3] != "etc" or parts[-2] not in PERIODIC_FOLDERS or \
                    not RUN_PARTS_NAME.match(parts[-1]) or f.display in covered or \
                    not is_script(f):
                continue
            folder = parts[-2]
            span = Span(f.display, 1)
            entry = self.tree.entry(Resolved(f, "script"))
            path = f"/etc/{folder}/{parts[-1]}"
            schedule = cron_schedule(f"{folder} (run-parts)", PERIODIC_FOLDERS[folder])
            self.project.jobs.append(Job(
                id=f"cron:{f.display}", source="cron", span=span, schedule=schedule,
                command=f"run-parts /etc/{folder}: {parts[-1]}",
                targets=(Target((path,), span, False, entry, entry.path, "run-parts"),)))

    def _started_runner_files(self) -> _Started:
        """Container paths of crontabs that a cron runner is handed outside a Dockerfile —
        by a supervisor program (``command=supercronic -overlapping
        /etc/supercronic/crontab``), or supercronic by a script (an entrypoint's ``exec
        supercronic /app/crontab``, an s6 or runit service's ``run``) —, those of them
        whose runner never lets a job overlap itself, and those supercronic reads."""
        found: list[str] = []
        serial: list[str] = []
        supercronic: list[str] = []
        for f in self.discovery.files:
            commands: list[str] = []
            if f.rel.endswith((".conf", ".ini")):
                text = self.peek(f) or ""
                if looks_like_supervisor(text):
                    commands = [container.command or ""
                                for program in supervisor_programs(f.display, text)
                                for container in program.containers]
                    found += [path for c in commands for path in runner_files(c)]
            elif (f.kind == "shell" or f.rel.rsplit("/", 1)[-1] == "run") and \
                    not is_test_path(f.rel):
                text = self.peek(f) or ""
                if text.startswith("#!") and "supercronic" in text:
                    commands = [line for line in text.splitlines()
                                if "supercronic" in line and not line.lstrip().startswith("#")]
                    found += [path for c in commands for path in supercronic_files(c)]
            serial += [path for c in commands for path in serial_runner_files(c)]
            supercronic += [path for c in commands for path in supercronic_files(c)]
        return tuple(dict.fromkeys(found)), tuple(dict.fromkeys(serial)), \
            tuple(dict.fromkeys(supercronic))

    def _dockerfile(self, f: SourceFile, cron_sources: dict[str, CronSource],
                    runners: _Started = ((), (), ())) -> None:
        text = self.read(f, report=False)
        if text is None:
            return
        base = os.path.dirname(f.rel)
        found, serial, supercronic = runners
        result = parse_dockerfile(f.display, text, found, serial, supercronic,
                                  is_folder=partial(self._is_folder, base))
        for hint, workdir in result.context_copies:
            for path, rel in self._place(base, hint, workdir):
                if runs_cron_daemon(self.read(self.tree.files[rel], report=False)):
                    self.images.daemon_scripts.setdefault(f.display, set()).add(path)
        for entry in result.entries:
            self._add_cron_job(f.display, entry, base)
            self.images.dockerfiles.add(f.display)
        for hint in result.copies:
            for src in hint.sources:
                for rel in self._context_files(base, src):
                    target = cron_sources.setdefault(rel, CronSource(self.tree.files[rel]))
                    # (a file also installed with `crontab FILE`: its lines decide)
                    target.system = None if hint.reinstalled else \
                        is_system_destination(hint.dest)
                    target.dialect = hint.dialect
                    if hint.serial:
                        target.serial = Span(f.display, hint.line, 1, hint.line, 1)
                    self.images.installed_by.setdefault(self.tree.files[rel].display,
                                                        []).append(f.display)
                    self.images.dockerfiles.add(f.display)
                    if hint.dest.startswith("/etc/cron.d"):
                        name = rel.rsplit("/", 1)[-1] if hint.dest.endswith(("/", "cron.d")) \
                            else hint.dest.rsplit("/", 1)[-1]
                        target.installs.append((name, Span(f.display, hint.line, 1, hint.line, 1)))

    def _is_folder(self, base: str, src: str) -> bool:
        """Whether a COPY source names a folder of the build context (the Dockerfile's
        folder, or the tree's root)."""
        for context in (base, ""):
            rel = os.path.normpath(os.path.join(context, src.lstrip("/"))).lstrip("/")
            if rel in self.tree.files:
                return False
            prefix = "" if rel == "." else rel.rstrip("/") + "/"
            if any(r.startswith(prefix) for r in self.tree.files):
                return True
        return False

    def _place(self, base: str, hint: CopyHint, workdir: str) -> list[tuple[str, str]]:
        """Tell the tree where a COPY puts context files in the image, so that a command
        naming the container path finds the file (``COPY run.sh /usr/bin/run-job``); the
        (container path, tree path) of each file copied by name or pattern."""
        dest, folder = hint.landing(workdir)
        placed = []
        for src in hint.sources:
            rel = os.path.normpath(os.path.join(base, src.lstrip("/"))).lstrip("/")
            rel = "" if rel == "." else rel
            matched = [rel] if rel in self.tree.files else self._matching(rel)
            if matched:
                for one in matched:
                    path = f"{dest.rstrip('/')}/{one.rsplit('/', 1)[-1]}" \
                        if folder or len(matched) > 1 else dest
                    self.tree.place_file(path, self.tree.files[one])
                    placed.append((os.path.normpath(path), one))
            elif src.endswith("/") or src in (".", "./") or any(
                    r.startswith(rel + "/") for r in self.tree.files) or rel == "":
                # a folder: its content lands under dest (COPY . /var/www/html)
                self.tree.place_folder(dest, rel)
        return placed

    def _matching(self, pattern: str) -> list[str]:
        """The files of one folder a COPY source's wildcards name (``*.sh``)."""
        if not any(c in pattern for c in "*?["):
            return []
        folder, _, name = pattern.rpartition("/")
        prefix = f"{folder}/" if folder else ""
        return sorted(r for r in self.tree.files if r.startswith(prefix) and "/" not in
                      r[len(prefix):] and fnmatch.fnmatchcase(r[len(prefix):], name))

    def _context_files(self, base: str, src: str) -> list[str]:
        """Tree files a COPY source names (the Dockerfile's folder is the build context)."""
        for context in (base, ""):
            # a source is relative to the context ("/x" too); a name may start with a dot
            rel = os.path.normpath(os.path.join(context, src.lstrip("/"))).lstrip("/")
            rel = "" if rel == "." else rel
            if rel in self.tree.files:
                return [rel]
            if matched := self._matching(rel):
                return matched
            prefix = rel.rstrip("/") + "/"
            inside = sorted(r for r in self.tree.files if r.startswith(prefix) and "/" not in r[len(prefix):])
            if inside:
                return inside
        return []

    def _crontab(self, src: CronSource) -> None:
        f = src.file
        text = self.read(f, report=True)
        if text is None:
            return
        if text.startswith("#!") and not src.installs:
            del self.texts[f.display]  # a script named like a crontab (temp-cleanup.cron)
            return
        parts = f.rel.split("/")
        in_cron_d = len(parts) > 1 and parts[-2] == "cron.d"
        system = src.system
        if system is None:
            system = in_cron_d or f.rel == "etc/crontab" or f.rel.endswith("/etc/crontab") \
                or ("crontabs" not in parts[:-1] and looks_like_system_crontab(text))
        result = parse_crontab(f.display, text, system, dialect=src.dialect)
        self.project.parse_errors.extend(result.errors)
        first = result.entries[0].span if result.entries else Span(f.display, 1, 1, 1, 1)
        names: list[tuple[str | None, Span]] = [*src.installs] or [
            (parts[-1] if in_cron_d else None, first)]
        # cron skips a cron.d file whose every installed name breaks its naming rule (JOB110)
        ignored = None if any(name is None or cron_d_name_ok(name, src.dialect)
                              for name, _ in names) else \
            NeverRuns("file-skipped", f"cron ignores /etc/cron.d/{names[0][0]} (its name)")
        # Debian's cron drops a last line without a newline; the runners' parsers read it
        last = result.last_entry_unterminated if src.dialect in ("debian", "cronie") else None
        refused = next(((e.span.line, e.never_runs.text) for e in result.entries
                        if e.never_runs is not None and e.never_runs.why == "refused"), None)
        if refused is not None and not system and src.dialect in ("debian", "cronie"):
            # `crontab FILE` refuses the whole file (supercronic's reader says so itself)
            for entry in result.entries:
                if entry.never_runs is None:
                    entry.never_runs = NeverRuns(
                        "file-refused", f"`crontab FILE` refuses the file (line {refused[0]}: "
                                        f"{refused[1]})")
        for entry in result.entries:
            unterminated = last is not None and entry.span.line == last.line
            self._add_cron_job(f.display, entry, os.path.dirname(f.rel), ignored or (
                NeverRuns("unterminated", "cron does not run the last entry of a file without "
                                          "a final newline") if unterminated else None)
                or entry.never_runs, src.confidence, in_crontab=True, serial=src.serial)
        for i, (name, where) in enumerate(names):
            self.project.cron_files.append(CronFile(
                where, name, last if i == 0 else None, bool(result.entries), result.end_of_file,
                name_ignored=name is not None and not cron_d_name_ok(name, src.dialect),
                confidence=src.confidence))

    def _compose_written(self, f: SourceFile, text: str) -> None:
        """Crontab lines a compose service's command writes before it starts cron
        (firefly-iii's ``echo "0 3 * * * wget …" | crontab - && crond -f``): jobs of that
        service's container."""
        try:
            docs = load_documents(text)
        except YamlError:
            return  # (the manifest step reports what it cannot read)
        for doc in docs:
            for workload in compose_services(f.display, f.rel, doc, self.tree.files):
                for container in workload.containers:
                    span = container.command_span
                    if not container.command or span is None:
                        continue
                    for entry in written_crontab_lines(f.display, span.line, span.column,
                                                       _shell_text(container.command)):
                        self._add_cron_job(f.display, entry, os.path.dirname(f.rel),
                                           runs_in=container.name)

    def _script_written(self, f: SourceFile, text: str) -> None:
        """Crontab lines a script writes when it runs (a container's entrypoint that
        ``echo``s a line into /etc/cron.d, or pipes it to ``crontab -``): the jobs it
        installs."""
        entries = written_crontab_lines(f.display, 1, 1, text)
        if entries:
            self.texts.setdefault(f.display, ("shell", text))
        for entry in entries:
            self._add_cron_job(f.display, entry, os.path.dirname(f.rel))

    def _add_cron_job(self, path: str, entry, base: str, never_runs: NeverRuns | None = None,
                      confidence: Confidence = Confidence.HIGH, in_crontab: bool = False,
                      serial: Span | None = None, runs_in: str | None = None) -> None:
        """A job of a crontab entry (``in_crontab``: a line of a crontab file, which fixes
        may edit, not one a Dockerfile writes; ``serial``: where the runner that reads the
        file is said never to let a job overlap itself)."""
        job = build_job(f"cron:{path}:{entry.span.line}", "cron", entry.span, entry.schedule,
                        [(entry.command, entry.locator)], self.tree, base, entry.user, entry.env,
                        never_runs=never_runs)
        if serial is not None:
            job = replace(job, guards=(*job.guards, Guard("supercronic", False, None, serial)))
        locate = entry.locator
        command_at = Span(path, locate.line, locate.columns[0], locate.line,
                          locate.columns[-1] + 1) if in_crontab and locate.columns else None
        self.project.jobs.append(replace(job, confidence=confidence, command_at=command_at,
                                         runs_in=runs_in))


