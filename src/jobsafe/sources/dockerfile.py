"""Dockerfiles as a cron source: crontab lines written by ``RUN``, files ``COPY``-ed into
``/etc/cron.d`` or ``/etc/crontab``, and files a container's cron runner reads
(``supercronic FILE``, ``go-crond FILE``, ``RUN crontab FILE``: user crontabs, no user
field)."""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from .crontab import CronEntry, CrontabDialect, parse_crontab
from .shell import Locator, parse_script

_INSTRUCTION = re.compile(r"^\s*([A-Za-z]+)\s+(.*)$", re.S)
#: Vixie/Debian cron, and busybox crond (Alpine) which reads /etc/crontabs/USER
_CRON_PATH = re.compile(r"^/etc/(?:crontab|cron\.d/.*|crontabs/.+)$|^/var/spool/cron/(?:crontabs/)?.+$")


def is_cron_destination(dest: str) -> bool:
    return bool(_CRON_PATH.match(dest)) or dest.rstrip("/") in ("/etc/cron.d", "/var/spool/cron/crontabs")


#: cron runners given their crontab as an argument: supercronic [flags] FILE, go-crond
#: [flags] [USER:]FILE, crontab FILE (which installs it as the user's crontab)
_RUNNER = re.compile(r"(?:^|[\s/'\"])(supercronic|go-crond|crontab)\b")


def runner_files(command: str, workdir: str = "/") -> list[str]:
    """The crontab files a command hands a cron runner, as container paths (a relative
    one from ``workdir``): the runner's last argument that is not an option, before the
    command ends (``supercronic -prometheus-listen-address :9746 /app/crontab``)."""
    return [path for path, _ in _runner_reads(command, workdir)]


def supercronic_files(command: str, workdir: str = "/") -> list[str]:
    """The crontab files a command hands supercronic (read in its own dialect)."""
    return [path for path, runner in _runner_reads(command, workdir) if runner == "supercronic"]


def _runner_reads(command: str, workdir: str) -> list[tuple[str, str]]:
    """(container path, runner) of each crontab file a command hands a cron runner."""
    words = [w.strip("'\",[]") for w in re.split(r"[\s,]+", command) if w.strip("'\",[]")]
    found = []
    for i, word in enumerate(words):
        name = word.rsplit("/", 1)[-1]
        if name not in ("supercronic", "go-crond", "crontab"):
            continue
        args = []
        for arg in words[i + 1:]:
            if arg in ("&&", "||", ";", "|", "&") or arg.endswith(";"):
                break
            args.append(arg)
        positional = [a for a in args if not a.startswith("-")]
        if not positional or (name == "crontab" and args and args[0].startswith("-")):
            continue  # crontab -l, crontab -r: no file installed
        path = positional[-1].split(":", 1)[1] if name == "go-crond" and ":" in positional[-1] \
            else positional[-1]
        path = path if path.startswith("/") else workdir.rstrip("/") + "/" + path
        # (`crontab /etc/cron.d/x` installs what cron reads anyway, and /etc/crontab is
        # read as cron's; a runner given a file under /etc/crontabs reads it itself)
        if not (path.startswith("/etc/cron") and (name == "crontab" or
                                                  is_system_destination(path))):
            found.append((path, name))
    return found


def installed_crontabs(command: str, workdir: str = "/") -> list[str]:
    """The files a command installs with ``crontab FILE`` (as container paths), also those
    under /etc/cron.d."""
    words = [w.strip("'\",[]") for w in re.split(r"[\s,]+", command) if w.strip("'\",[]")]
    found = []
    for i, word in enumerate(words):
        if word.rsplit("/", 1)[-1] != "crontab" or i + 1 >= len(words):
            continue
        path = words[i + 1]
        if path.startswith("-") or path in ("&&", "||", ";", "|"):
            continue  # crontab -l, crontab -u user FILE is not read here
        found.append(path if path.startswith("/") else workdir.rstrip("/") + "/" + path)
    return found


def serial_runner_files(command: str, workdir: str = "/") -> list[str]:
    """The crontab files a command hands supercronic without ``-overlapping``: supercronic
    waits for a job to finish before it starts that job again (its README, "Duplicate
    Jobs"), so their jobs never overlap themselves."""
    if "supercronic" not in command or re.search(r"(?:^|[\s\"',\[])--?overlapping\b", command):
        return []
    return [path for path in runner_files(command, workdir)
            if re.search(r"supercronic\b[^&|;]*" + re.escape(path.rsplit("/", 1)[-1]), command)]


def is_system_destination(dest: str) -> bool:
    return dest == "/etc/crontab" or dest.startswith("/etc/cron.d")


@dataclass
class CopyHint:
    line: int
    column: int
    sources: list[str]
    dest: str
    #: the file a container's own runner reads (supercronic …), not cron's
    runner: bool = False
    #: that runner never starts a job while its last run goes on (supercronic's default)
    serial: bool = False
    #: put where cron reads it and also installed with ``crontab FILE`` (clist, unfold):
    #: which reading is the working one, the file's own lines tell
    reinstalled: bool = False
    #: the runner that reads it is supercronic
    supercronic: bool = False
    #: the image's cron daemon is cronie (see ``runs_cronie``)
    cronie: bool = False

    def landing(self, workdir: str) -> tuple[str, bool]:
        """Where the copy lands in the image (a relative destination from ``workdir``), and
        whether that is a folder the sources go into."""
        dest = self.dest if self.dest.startswith("/") else workdir.rstrip("/") + "/" + self.dest
        folder = dest.endswith(("/", "/.")) or self.dest in (".", "./") or len(self.sources) > 1
        return dest.removesuffix("/.").rstrip("/") or "/", folder

    @property
    def dialect(self) -> CrontabDialect:
        """How the file is read: by supercronic, by another runner leniently, by cronie
        when the image runs it, by busybox's crond (``/etc/crontabs``), else as Debian's
        cron reads it."""
        return file_dialect(self.supercronic, self.runner, self.dest, self.cronie)


def file_dialect(supercronic: bool, runner: bool, dest: str | None,
                 cronie: bool = False) -> CrontabDialect:
    """The dialect of a crontab file: supercronic's when supercronic reads it, lenient when
    another runner does, cronie's when the image's daemon is cronie, busybox's crond's in
    ``/etc/crontabs`` (Alpine's), Debian's cron's otherwise."""
    return "supercronic" if supercronic else "lenient" if runner else "cronie" if cronie else \
        "busybox" if dest is not None and dest.startswith("/etc/crontabs/") else "debian"


#: base images of the RPM family, whose cron daemon is cronie
_CRONIE_IMAGES = re.compile(r"(?:^|/)(?:fedora|centos|rockylinux|almalinux|ubi\d*(?:-\w+)?|"
                            r"amazonlinux|oraclelinux|opensuse/\w+|rhel\d*)(?:[:@]|$)", re.I)
#: a package manager installing cronie (``dnf install -y cronie``, ``apk add cronie``)
_CRONIE_INSTALL = re.compile(r"\b(?:dnf|yum|microdnf|zypper|apk)\b[^;&|]*?\b(?:install|add|in)"
                             r"\b[^;&|]*?(?<![\w-])cronie(?![\w-])")


def runs_cronie(text: str) -> bool:
    """Whether an image's cron daemon is cronie: the Dockerfile installs the ``cronie``
    package, or its last stage starts from an RPM-family image (Fedora, RHEL's UBI, Rocky,
    AlmaLinux, CentOS, Amazon Linux, Oracle Linux, openSUSE)."""
    base = None
    for _, _, instruction, args in _instructions(text):
        if instruction == "FROM" and args.split():
            base = next((w for w in args.split() if not w.startswith("--")), None)
        elif instruction == "RUN" and _CRONIE_INSTALL.search(args.replace("\\\n", " ")):
            return True
    return base is not None and _CRONIE_IMAGES.search(base) is not None


@dataclass
class DockerfileResult:
    entries: list[CronEntry] = field(default_factory=list)
    copies: list[CopyHint] = field(default_factory=list)
    #: container paths of crontabs a cron runner reads (supercronic FILE ...)
    runner_files: list[str] = field(default_factory=list)
    #: those whose runner never lets a job overlap itself (supercronic without -overlapping)
    serial_files: list[str] = field(default_factory=list)
    #: those supercronic reads
    supercronic_files: list[str] = field(default_factory=list)
    #: container paths given to ``crontab FILE`` (a user crontab of the image)
    installed: list[str] = field(default_factory=list)
    #: every COPY/ADD of the build context, with the WORKDIR it is made in (where each
    #: file lands in the image: a crontab's ``/usr/bin/cron-script`` is the context's
    #: ``docker/cron-script.sh``)
    context_copies: list[tuple[CopyHint, str]] = field(default_factory=list)


def _instructions(text: str):
    """(line, column of the arguments, instruction, raw argument text) per instruction."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#"):
            i += 1
            continue
        start = i
        body = [line]
        while body[-1].rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            nxt = lines[i]
            if nxt.lstrip().startswith("#"):
                # Docker drops comment lines inside an instruction; keep the line numbering
                nxt = " " * max(len(nxt) - 1, 0) + "\\"
            body.append(nxt)
        i += 1
        joined = "\n".join(body)
        m = _INSTRUCTION.match(joined)
        if m:
            column = joined.index(m.group(2)) + 1 if m.group(2) else 1
            yield start + 1, column, m.group(1).upper(), m.group(2)


def parse_dockerfile(path: str, text: str, runners: tuple[str, ...] = (),
                     serial: tuple[str, ...] = (), supercronic: tuple[str, ...] = (),
                     is_folder: Callable[[str], bool] | None = None) -> DockerfileResult:
    """``runners``: container paths that a cron runner started elsewhere reads (a
    supervisor program running ``supercronic /etc/supercronic/crontab``); ``serial``: those
    of them whose runner does not let a job overlap itself; ``supercronic``: those of them
    supercronic reads; ``is_folder``: whether a COPY source is a folder of the build
    context (what it holds is copied)."""
    result = DockerfileResult(runner_files=list(runners), serial_files=list(serial),
                              supercronic_files=list(supercronic))
    copies: list[tuple[CopyHint, str]] = []  # (the copy, the WORKDIR it is made in)
    instructions = []
    workdir = "/"
    variables = _BuildVariables()
    for line, column, instruction, args in _instructions(text):
        variables.read(instruction, args)
        if instruction in ("WORKDIR", "COPY", "ADD"):  # (the shell expands RUN's itself)
            args = variables.expand(args)
        if instruction == "WORKDIR" and args.strip():
            target = args.strip().strip("'\"")
            workdir = target if target.startswith("/") else workdir.rstrip("/") + "/" + target
        instructions.append((line, column, instruction, args, workdir))
        if instruction in ("RUN", "CMD", "ENTRYPOINT") and _RUNNER.search(args):
            result.installed.extend(installed_crontabs(args.replace("\\\n", " "), workdir))
            result.runner_files.extend(runner_files(args.replace("\\\n", " "), workdir))
            result.serial_files.extend(serial_runner_files(args.replace("\\\n", " "), workdir))
            result.supercronic_files.extend(supercronic_files(args.replace("\\\n", " "),
                                                              workdir))
    cronie = runs_cronie(text)
    for line, column, instruction, args, workdir in instructions:
        if instruction in ("COPY", "ADD"):
            hint = _copy(line, column, args)
            if hint is not None:
                copies.append((hint, workdir))
        elif instruction == "RUN" and not args.lstrip().startswith("["):
            result.entries.extend(written_crontab_lines(path, line, column, args,
                                                        result.runner_files, workdir,
                                                        result.supercronic_files, cronie))
    result.context_copies = copies
    folders = is_folder or (lambda source: False)

    def copied(hint: CopyHint, at: str, source: str, file: str) -> str | None:
        # a folder copied whole (`COPY . /app`, `COPY docker/cron /etc/cron`) is followed to
        # the files supercronic reads; the other runners' files keep the matching they had
        return _copied_as(hint, at, source, file,
                          folders if file in result.supercronic_files else None)

    for hint, at in copies:
        if is_cron_destination(hint.dest):
            # a crontab put where cron looks, but read by a runner (supervisord runs
            # `supercronic /etc/crontabs/app`): the runner's file
            read = [f for f in result.runner_files
                    if any(copied(hint, at, source, f) is not None for source in hint.sources)]
            if read:
                hint = CopyHint(hint.line, hint.column, hint.sources, hint.dest, True,
                                any(f in result.serial_files for f in read),
                                supercronic=any(f in result.supercronic_files for f in read))
            elif any(copied(hint, at, source, f) is not None
                     for f in result.installed for source in hint.sources):
                hint = replace(hint, reinstalled=True)
            result.copies.append(replace(hint, cronie=cronie))
            continue
        sources = list(dict.fromkeys(
            found for source in hint.sources for file in result.runner_files
            if (found := copied(hint, at, source, file)) is not None))
        waits = any(copied(hint, at, source, file) is not None
                    for source in hint.sources for file in result.serial_files)
        read_by_supercronic = any(copied(hint, at, source, file) is not None
                                  for source in hint.sources for file in result.supercronic_files)
        if sources:
            result.copies.append(CopyHint(hint.line, hint.column, sources, hint.dest, True,
                                          waits, supercronic=read_by_supercronic))
        installed = list(dict.fromkeys(  # copied anywhere, then `crontab FILE`: a user crontab
            found for source in hint.sources for file in result.installed
            if (found := _copied_as(hint, at, source, file, folders)) is not None
            and found not in sources))
        if installed:
            result.copies.append(CopyHint(hint.line, hint.column, installed, hint.dest,
                                          cronie=cronie))
    return result


_REFERENCE = re.compile(r"\$\{(\w+)(?::([-+])([^}]*))?\}|\$(\w+)")
_ASSIGNMENT = re.compile(r"""(\w+)=("[^"]*"|'[^']*'|\S*)""")


class _BuildVariables:
    """The values ``ARG`` defaults and ``ENV`` give while a Dockerfile is read, and what
    they make of ``${NAME}`` in the instructions Docker expands them in (``COPY
    ${DOCKER_DIR}/crontab /etc/cron.d/app``). A build argument is taken at its default
    (``--build-arg`` may change it); a name with no known value is left as written."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}
        self.global_args: dict[str, str] = {}  # ARGs before the first FROM
        self.staged = False

    def read(self, instruction: str, args: str) -> None:
        if instruction == "FROM":
            self.staged, self.values = True, {}  # a stage starts with none of them
        elif instruction == "ARG":
            for word in args.split():
                name, _, value = word.partition("=")
                known = self.expand(value.strip("'\"")) if "=" in word else \
                    self.global_args.get(name) if self.staged else None
                target = self.values if self.staged else self.global_args
                if known is None:
                    target.pop(name, None)
                else:
                    target[name] = known
        elif instruction == "ENV":
            pairs = _ASSIGNMENT.findall(args)
            if not pairs and len(args.split(None, 1)) == 2:  # ENV NAME value (legacy)
                name, value = args.split(None, 1)
                pairs = [(name, value.strip())]
            for name, value in pairs:
                self.values[name] = self.expand(value.strip("'\""))

    def expand(self, text: str) -> str:
        def value(m: re.Match) -> str:
            name = m.group(1) or m.group(4)
            known = self.values.get(name)
            if m.group(2) == "-":
                return known if known else m.group(3)
            if m.group(2) == "+":
                return m.group(3) if known else ""
            return known if known is not None else m.group(0)

        return _REFERENCE.sub(value, text) if "$" in text else text


def _copied_as(hint: CopyHint, workdir: str, source: str, file: str,
               is_folder: Callable[[str], bool] | None = None) -> str | None:
    """The build-context path a COPY puts at the container path ``file`` (``COPY crontab
    /app/crontab``; ``COPY crontab .`` in WORKDIR /app; ``COPY . .``: the file of the same
    relative path), or None. With ``is_folder`` (whether a source is a folder), a folder
    is followed wherever it is copied (``COPY . /app``, ``COPY docker/s6-rc.d
    /etc/s6-overlay/s6-rc.d``: what it holds lands there)."""
    dest, folder = hint.landing(workdir)
    if is_folder is not None and (
            source in (".", "./") or source.endswith("/") or is_folder(source)):
        folder = True
        source = source if source.endswith("/") or source in (".", "./") else source + "/"
    if not folder:
        return source if dest == file and not source.endswith("/") and source != "." else None
    if not file.startswith(dest.rstrip("/") + "/"):
        return None
    inside = file[len(dest.rstrip("/")) + 1:]
    if source in (".", "./") or source.endswith("/"):
        return (source.rstrip("/") + "/" + inside).removeprefix("./")
    return source if source.rstrip("/").rsplit("/", 1)[-1] == inside else None


def _copy(line: int, column: int, args: str) -> CopyHint | None:
    args = args.replace("\\\n", " ")
    if args.lstrip().startswith("["):
        try:
            words = [str(w) for w in json.loads(args)]
        except (ValueError, TypeError):
            return None
    else:
        words = args.split()
    if any(w.startswith("--from") for w in words):
        return None
    words = [w for w in words if not w.startswith("--")]
    if len(words) < 2:
        return None
    return CopyHint(line, column, words[:-1], words[-1])


def written_crontab_lines(path: str, line: int, column: int, args: str,
                          runner_files: Sequence[str] = (), workdir: str = "/",
                          supercronic_files: Sequence[str] = (),
                          cronie: bool = False) -> list[CronEntry]:
    """Crontab lines a command writes — a Dockerfile's RUN, a compose service's command
    (``echo … >> /etc/crontab``, ``… | crontab -``, or into a file a cron runner reads: a
    user crontab; ``supercronic_files``: those of them supercronic reads; ``cronie``: the
    image's cron daemon is cronie)."""
    script = parse_script(args)
    locate = Locator(path, args, line, column)
    piped_to_crontab = re.search(r"\|\s*crontab\b", args) is not None
    entries: list[CronEntry] = []
    for cmd in script.cmds:
        if cmd.name not in ("echo", "printf") or len(cmd.argv) < 2:
            continue
        dests = [w.text if w.text.startswith("/") else workdir.rstrip("/") + "/" + w.text
                 for op, w in cmd.redirects]
        target = next((d for d in dests if is_cron_destination(d) or d in runner_files), None)
        if target is None and not piped_to_crontab:
            continue
        words = [w for w in cmd.argv[1:] if not (w.text.startswith("-") and len(w.text) <= 3)]
        if not words:
            continue
        content = " ".join(w.text for w in words)
        if cmd.name == "printf" or "-e" in [w.text for w in cmd.argv[1:]]:
            content = content.replace("\\n", "\n")
        system = target is not None and is_system_destination(target)
        sub = locate.span(words[0].start, words[0].end)
        dialect = file_dialect(target in supercronic_files, target in runner_files, target,
                               cronie)
        parsed = parse_crontab(path, content, system, dialect=dialect)
        for entry in parsed.entries:
            entry.span = locate.span(cmd.start, cmd.end)
            entry.locator = Locator(path, entry.command, sub.line, sub.column + 1)
            entry.locator.exact = False  # inside an echo'd string
            entries.append(entry)
    return entries
