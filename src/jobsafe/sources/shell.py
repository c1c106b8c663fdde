"""Shell analysis: crontab commands, ``ExecStart=`` lines, container args and shell scripts.

Parsing is done by tree-sitter's bash grammar, which is complete (case statements,
arithmetic, here-documents) and error-tolerant, so a script with one broken construct
still yields the rest. On top of the tree this module extracts what the rules need:

* the simple commands in execution order, with whether each is backgrounded, waited
  for, or used as a condition;
* wrappers peeled off each command (``flock``, ``timeout``, ``nice``, ``sh -c`` ...), so
  that the guard, the runtime bound and the program finally run are known;
* lock files managed by shell code (test-then-create, ``mkdir`` locks) and their stale
  handling.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import get_args

from ..model import Background, Guard, GuardKind, Lock, LockKind, Span, StaleHandling
from ..timespec import COREUTILS, parse_duration


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


# --------------------------------------------------------------------------- positions


class Locator:
    """Maps byte offsets of analysed text to file spans.

    ``columns`` gives, for a single-line text, the 1-based file column of each character
    (crontab commands lose ``\\%`` escapes, so columns are not a plain offset).
    """

    def __init__(self, path: str, text: str, line: int = 1, column: int = 1,
                 columns: list[int] | None = None):
        self.path = path
        self.text = text
        self.line = line
        self.column = column
        self.columns = columns
        raw = text.encode("utf-8", "surrogateescape")
        self._ascii = len(raw) == len(text)
        #: positions map one to one onto the file (not inside a re-quoted string)
        self.exact = True
        self._line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]

    def _char(self, byte_offset: int) -> int:
        if self._ascii:
            return byte_offset
        raw = self.text.encode("utf-8", "surrogateescape")
        return len(raw[:byte_offset].decode("utf-8", "surrogateescape"))

    def _point(self, byte_offset: int) -> tuple[int, int]:
        idx = self._char(byte_offset)
        if self.columns is not None:
            idx = min(idx, len(self.columns) - 1)
            return self.line, self.columns[idx] if self.columns else self.column
        row = max(i for i, start in enumerate(self._line_starts) if start <= idx) \
            if len(self._line_starts) > 1 else 0
        col = idx - self._line_starts[row]
        if row == 0:
            return self.line, self.column + col
        return self.line + row, col + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self._point(start)
        end_line, end_col = self._point(end)
        return Span(self.path, line, col, end_line, end_col)

    def nested(self, text: str, byte_offset: int) -> "Locator":
        """A locator for a string embedded at ``byte_offset`` (``sh -c '...'``)."""
        line, col = self._point(byte_offset)
        if self.columns is not None:
            start = self._char(byte_offset)
            cols = self.columns[start:start + len(text)]
            cols += [cols[-1] if cols else col] * (len(text) - len(cols))
            nested = Locator(self.path, text, line, col, cols or [col])
        else:
            nested = Locator(self.path, text, line, col)
        nested.exact = False  # quotes and escapes of the outer string shift positions
        return nested


# --------------------------------------------------------------------------- syntax


@dataclass
class Word:
    text: str  # the literal value, variables expanded where known
    start: int
    end: int
    literal: bool = True  # False when it holds unexpanded parameters or substitutions


@dataclass
class Cmd:
    """A simple command as the shell runs it."""

    argv: list[Word]
    start: int
    end: int
    redirects: list[tuple[str, Word]] = field(default_factory=list)  # (operator, target)
    fd_redirects: dict[str, Word] = field(default_factory=dict)  # "9" -> target of 9>x
    background: bool = False
    waited: bool = False
    condition: bool = False
    noclobber: bool = False
    scope: int = 0  # id of the enclosing subshell/list, for fd-form flock scoping
    stmt: tuple[int, int] = (0, 0)  # byte range of the enclosing if/while/&&-list statement
    #: byte range of the innermost branch it runs in (a ``case`` item, an ``if``'s body);
    #: None at the script's top level
    branch: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return basename(self.argv[0].text) if self.argv else ""


@dataclass
class TestExpr:
    op: str
    operand: Word
    start: int
    end: int
    stmt: tuple[int, int] = (0, 0)
    negated: bool = False  # `[ ! -f x ]`: the branch runs when the file is absent


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


_STATEMENTS = {"list", "if_statement", "while_statement"}
_BOUNDARIES = {"program", "subshell", "compound_statement", "do_group", "function_definition",
               "command_substitution"}


def _statement_range(node) -> tuple[int, int]:
    """The outermost if/while/&&-list around a node, within its block."""
    found = (node.start_byte, node.end_byte)
    parent = node.parent
    while parent is not None and parent.type not in _BOUNDARIES:
        if parent.type in _STATEMENTS:
            found = (parent.start_byte, parent.end_byte)
        parent = parent.parent
    return found


def basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


class _Walker:
    """Flattens a bash syntax tree into commands and tests, in execution order."""

    def __init__(self, source: bytes, variables: dict[str, str]):
        self.src = source
        self.vars = dict(variables)
        self.cmds: list[Cmd] = []
        self.tests: list[TestExpr] = []
        self.noclobber = False
        self._scopes = 0
        self._branch: tuple[int, int] | None = None

    # -- words
    def word(self, node) -> Word:
        text, literal = self._literal(node)
        return Word(text, node.start_byte, node.end_byte, literal)

    def _literal(self, node) -> tuple[str, bool]:
        t = node.type
        raw = self.src[node.start_byte:node.end_byte].decode("utf-8", "surrogateescape")
        if t == "raw_string":
            return raw[1:-1], True
        if t == "ansi_c_string":
            return raw[2:-1], True
        if t in ("word", "number"):
            return re.sub(r"\\(.)", r"\1", raw), True
        if t in ("simple_expansion", "expansion"):
            name = self._expansion_name(node)
            if name is not None and name in self.vars:
                return self.vars[name], True
            return raw, False
        if t in ("string", "concatenation"):
            parts, literal = [], True
            pos = node.start_byte + (1 if t == "string" else 0)
            end = node.end_byte - (1 if t == "string" else 0)
            for child in node.children:
                if child.start_byte > pos:
                    parts.append(self.src[pos:child.start_byte].decode("utf-8", "surrogateescape"))
                if child.type == '"' or (not child.is_named and child.type in ('"', "$")):
                    pos = max(pos, child.end_byte)
                    continue
                text, lit = self._literal(child)
                parts.append(text)
                literal &= lit
                pos = child.end_byte
            if end > pos:
                parts.append(self.src[pos:end].decode("utf-8", "surrogateescape"))
            return "".join(parts), literal
        if t == "string_content":
            return raw, True
        return raw, False

    def _expansion_name(self, node) -> str | None:
        names = [c for c in node.children if c.type in ("variable_name", "special_variable_name")]
        if len(names) == 1 and len(node.named_children) == 1:
            return self.src[names[0].start_byte:names[0].end_byte].decode()
        return None

    # -- statements
    def walk(self, node, background=False, condition=False, scope=0):
        t = node.type
        if t in ("program", "compound_statement", "subshell", "do_group", "else_clause",
                 "elif_clause", "case_item", "ERROR", "function_definition"):
            inner = scope
            if t == "subshell":
                self._scopes += 1
                inner = self._scopes
            outer = self._branch
            if t in ("else_clause", "elif_clause", "case_item"):
                self._branch = (node.start_byte, node.end_byte)
            self._walk_sequence(node.children, background, condition, inner)
            self._branch = outer
            return
        if t == "list":
            children = list(node.children)
            for i, child in enumerate(children):
                if not child.is_named:
                    continue
                nxt = next((c for c in children[i + 1:] if not c.is_named), None)
                is_cond = nxt is not None and nxt.type in ("&&", "||")
                self.walk(child, background, condition or is_cond, scope)
            return
        if t in ("if_statement", "while_statement"):
            outer = self._branch
            for i, child in enumerate(node.children):
                if child.is_named:
                    is_cond = node.field_name_for_child(i) == "condition"
                    self._branch = outer if is_cond else (node.start_byte, node.end_byte)
                    self.walk(child, background, condition or is_cond, scope)
            self._branch = outer
            return
        if t == "negated_command":
            for child in node.named_children:
                self.walk(child, background, condition, scope)
            return
        if t == "pipeline":
            for child in node.named_children:
                self.walk(child, background, condition, scope)
            return
        if t == "redirected_statement":
            body = node.child_by_field_name("body")
            before = len(self.cmds)
            if body is not None:
                self.walk(body, background, condition, scope)
            redirects, fds = self._redirects(node)
            produced = self.cmds[before:]
            if not produced:
                self.cmds.append(Cmd([], node.start_byte, node.end_byte, redirects, fds,
                                     background, False, condition, self.noclobber, scope))
            elif body.type in ("subshell", "compound_statement"):
                for cmd in produced:
                    cmd.fd_redirects.update(fds)
            else:
                # tree-sitter-bash binds `a && b > f` as `(a && b) > f`; bash gives the
                # redirection to the last command of the list
                last = max(produced, key=lambda c: c.end)
                last.redirects.extend(redirects)
                last.fd_redirects.update(fds)
            return
        if t == "command":
            self._command(node, background, condition, scope)
            return
        if t == "test_command":
            self._test_command(node)
            return
        if t == "variable_assignment":
            self._assignment(node)
            return
        if t in ("declaration_command",):
            for child in node.named_children:
                if child.type == "variable_assignment":
                    self._assignment(child)
            return
        if t in ("for_statement", "c_style_for_statement", "case_statement"):
            for child in node.named_children:
                if child.type in ("do_group", "case_item", "compound_statement"):
                    self.walk(child, background, condition, scope)
            return
        for child in node.named_children:
            if child.type in ("command", "list", "pipeline", "subshell", "compound_statement",
                              "redirected_statement", "if_statement", "while_statement"):
                self.walk(child, background, condition, scope)

    def _walk_sequence(self, children, background, condition, scope):
        children = list(children)
        named = [(i, c) for i, c in enumerate(children) if c.is_named and c.type != "comment"]
        for pos, (i, child) in enumerate(named):
            nxt = children[i + 1] if i + 1 < len(children) else None
            bg = nxt is not None and not nxt.is_named and nxt.type == "&"
            before = len(self.cmds)
            self.walk(child, background or bg, condition, scope)
            if bg:
                later = [c for _, c in named[pos + 1:]]
                waited = any(self._mentions_wait(c) for c in later)
                for cmd in self.cmds[before:]:
                    cmd.waited = cmd.waited or waited

    def _mentions_wait(self, node) -> bool:
        if node.type == "command":
            name = node.child_by_field_name("name")
            return name is not None and self.src[name.start_byte:name.end_byte] == b"wait"
        return any(self._mentions_wait(c) for c in node.named_children)

    def _redirects(self, node):
        redirects, fds = [], {}
        for child in node.children:
            if child.type != "file_redirect":
                continue
            dest = child.child_by_field_name("destination")
            if dest is None:
                continue
            op = next((c.type for c in child.children if not c.is_named), ">")
            desc = child.child_by_field_name("descriptor")
            word = self.word(dest)
            if desc is not None:
                fds[self.src[desc.start_byte:desc.end_byte].decode()] = word
            if op in (">", ">>", ">|", "&>", "&>>") and (desc is None or desc.text in (b"1",)):
                redirects.append((op, word))
        return redirects, fds

    def _assignment(self, node):
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is None:
            return
        key = self.src[name.start_byte:name.end_byte].decode()
        if value is None:
            self.vars[key] = ""
            return
        text, literal = self._literal(value)
        if literal:
            self.vars[key] = text
        else:
            self.vars.pop(key, None)

    def _command(self, node, background, condition, scope):
        argv: list[Word] = []
        assignments = []
        for child in node.children:
            if child.type == "variable_assignment":
                assignments.append(child)
            elif child.type == "command_name":
                argv.append(self.word(child.named_children[0] if child.named_children else child))
            elif child.is_named and child.type not in ("file_redirect", "herestring_redirect",
                                                       "comment"):
                argv.append(self.word(child))
        redirects, fds = self._redirects(node)
        if not argv:
            for a in assignments:
                self._assignment(a)
            return
        cmd = Cmd(argv, node.start_byte, node.end_byte, redirects, fds, background, False,
                  condition, self.noclobber, scope, _statement_range(node), self._branch)
        self.cmds.append(cmd)
        name = cmd.name
        args = [w.text for w in argv[1:]]
        if name == "set":
            if "-C" in args or ("-o" in args and "noclobber" in args):
                self.noclobber = True
            if "+C" in args or ("+o" in args and "noclobber" in args):
                self.noclobber = False
        if name in ("test", "[") and len(args) >= 2:
            ops = [a for a in args if a.startswith("-") and len(a) == 2]
            if ops:
                op_index = args.index(ops[0])
                if op_index + 1 < len(args):
                    negated = "!" in args[:op_index] or node.parent.type == "negated_command"
                    self.tests.append(TestExpr(ops[0], argv[op_index + 2], node.start_byte,
                                               node.end_byte, _statement_range(node), negated))
        # process substitutions in arguments, e.g. PID=$(cat "$LOCK")
        for child in node.named_children:
            self._substitutions(child, scope)

    def _substitutions(self, node, scope):
        if node.type == "command_substitution":
            self._walk_sequence(node.children, False, False, scope)
            return
        for child in node.named_children:
            self._substitutions(child, scope)

    def _test_command(self, node):
        for expr in _descend(node, "unary_expression"):
            op = expr.child_by_field_name("operator")
            operands = [c for c in expr.named_children if c.type != "test_operator"]
            if op is not None and operands:
                negated = expr.parent.type == "unary_expression" or \
                    node.parent.type == "negated_command"
                self.tests.append(TestExpr(op.text.decode(), self.word(operands[0]),
                                           node.start_byte, node.end_byte, _statement_range(node),
                                           negated))
        for expr in _descend(node, "binary_expression"):
            op = expr.child_by_field_name("operator")
            if op is not None and op.text in (b"-nt", b"-ot"):
                for operand in expr.named_children:
                    if operand is not op:
                        self.tests.append(TestExpr(op.text.decode(), self.word(operand),
                                                   node.start_byte, node.end_byte,
                                                   _statement_range(node)))


def _descend(node, type_name):
    for child in node.named_children:
        if child.type == type_name:
            yield child
        yield from _descend(child, type_name)


@dataclass
class Script:
    cmds: list[Cmd]
    tests: list[TestExpr]
    variables: dict[str, str]
    source: bytes


def parse_script(text: str, variables: dict[str, str] | None = None) -> Script:
    source = text.encode("utf-8", "surrogateescape")
    tree = _parser().parse(source)
    walker = _Walker(source, variables or {})
    walker.walk(tree.root_node)
    return Script(walker.cmds, walker.tests, walker.vars, source)


# --------------------------------------------------------------------------- wrappers

#: the commands that guard the rest of the line, by name
GUARD_COMMANDS: dict[str, GuardKind] = {kind: kind for kind in get_args(GuardKind)
                                        if kind not in ("yacron", "ofelia")}  # (runners)
#: POSIX-style shells, by command name: the one list the shell front end and the link step use
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash"})
#: wrappers that run the rest of the line as a command: name -> options taking a value
_PLAIN_WRAPPERS: dict[str, set[str]] = {
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"},
    "chrt": {"-p"},
    "taskset": {"-p"},
    "nohup": set(),
    "time": {"-f", "-o", "--format", "--output"},
    "stdbuf": {"-i", "-o", "-e"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--user", "--group"},
    "runuser": {"-u", "-g", "-G", "--user", "--group"},
    "setuidgid": set(),
    "envuidgid": set(),
    "chpst": {"-u", "-U", "-e", "-n", "-l", "-L", "-m", "-d", "-o", "-p", "-f", "-c", "-r",
              "-t", "-b"},
    "exec": {"-a"},
    "command": set(),
    "builtin": set(),
    "cronic": set(),
    "chronic": set(),
    "ts": set(),
    "sem": set(),
}
#: wrappers whose first plain argument is not part of the command
_ARG_WRAPPERS = {"setuidgid": 1, "envuidgid": 1, "chpst": 0}


@dataclass
class Wrapper:
    name: str
    word: Word
    guard: Guard | None = None
    timeout: float | None = None
    escape: str | None = None  # how the rest detaches, if it does


@dataclass
class Invocation:
    """A simple command with its wrappers peeled off."""

    cmd: Cmd
    wrappers: list[Wrapper]
    argv: list[Word]  # what finally runs; empty when the wrappers run a -c string
    inline: tuple[Word, bool] | None = None  # (-c string, True when flock holds a lock for it)
    #: how many of the script's arguments a ``shift`` before it has dropped
    shifted: int = 0


def _opts(argv: list[Word], i: int, with_value: set[str]):
    """Skip options from index i; return (options, index of first operand)."""
    opts: list[tuple[str, str | None]] = []
    while i < len(argv):
        a = argv[i].text
        if a == "--":
            return opts, i + 1
        if not a.startswith("-") or a == "-":
            break
        if a.startswith("--") and "=" in a:
            k, v = a.split("=", 1)
            opts.append((k, v))
        elif a in with_value and i + 1 < len(argv):
            opts.append((a, argv[i + 1].text))
            i += 1
        elif not a.startswith("--") and len(a) > 2 and a[:2] in with_value:
            opts.append((a[:2], a[2:]))
        else:
            opts.append((a, None))
        i += 1
    return opts, i


def _flock(cmd: Cmd, argv: list[Word], locate: Locator) -> tuple[Wrapper, int, Word | None]:
    """Parse util-linux flock(1); return the wrapper, index of the command, -c string."""
    i, nonblock, wait, path, command_string = 1, False, None, None, None
    while i < len(argv):
        a = argv[i].text
        if a in ("-c", "--command") and i + 1 < len(argv):
            command_string = argv[i + 1]
            i += 2
            continue
        if a in ("-w", "--wait", "--timeout", "-E", "--conflict-exit-code") and i + 1 < len(argv):
            if a not in ("-E", "--conflict-exit-code"):
                wait = parse_duration(argv[i + 1].text, COREUTILS)
            i += 2
            continue
        if a.startswith(("--wait=", "--timeout=")):
            wait = parse_duration(a.split("=", 1)[1], COREUTILS)
        elif a in ("-n", "--nb", "--nonblock"):
            nonblock = True
        elif a.startswith("--"):
            pass
        elif a.startswith("-") and len(a) > 1:
            letters = a[1:]
            for k, ch in enumerate(letters):
                if ch == "n":
                    nonblock = True
                elif ch == "w":
                    rest = letters[k + 1:]
                    if rest:
                        wait = parse_duration(rest, COREUTILS)
                    elif i + 1 < len(argv):
                        wait = parse_duration(argv[i + 1].text, COREUTILS)
                        i += 1
                    break
                elif ch in "Ec":
                    if ch == "c" and i + 1 < len(argv):
                        command_string = argv[i + 1]
                    i += 1
                    break
        elif path is None:
            path = argv[i]
        else:
            break
        i += 1
    if wait is not None and wait <= 0:
        nonblock, wait = True, None
    word = argv[0]
    guard = Guard("flock", blocking=not nonblock, wait_seconds=None if nonblock else wait,
                  span=locate.span(word.start, cmd.end if command_string is None and i >= len(argv)
                                   else argv[min(i, len(argv)) - 1].end),
                  path=path.text if path is not None else None,
                  option_at=locate.span(word.end, word.end) if locate.exact else None)
    return Wrapper("flock", word, guard=guard), i, command_string


def _guard_wrapper(cmd: Cmd, argv: list[Word], name: GuardKind, locate: Locator):
    word = argv[0]
    if name == "lckdo":
        opts, i = _opts(argv, 1, {"-W", "-E"})
        flags = {k for k, _ in opts}
        wait = next((parse_duration(v, COREUTILS) for k, v in opts if k == "-W" and v), None)
        blocking = "-w" in flags or wait is not None
        path = argv[i].text if i < len(argv) else None
        span = locate.span(word.start, argv[min(i, len(argv) - 1)].end)
        return Wrapper(name, word, Guard(name, blocking, wait, span, path)), i + 1
    if name == "setlock":
        opts, i = _opts(argv, 1, set())
        letters = "".join(k[1:] for k, _ in opts)
        blocking = "n" not in letters or letters.rfind("N") > letters.rfind("n")
        path = argv[i].text if i < len(argv) else None
        span = locate.span(word.start, argv[min(i, len(argv) - 1)].end)
        return Wrapper(name, word, Guard(name, blocking, None, span, path)), i + 1
    if name == "solo":
        opts, i = _opts(argv, 1, set())
        return Wrapper(name, word, Guard(name, False, None, locate.span(word.start, word.end))), i
    # run-one family: never waits
    return Wrapper(name, word, Guard(name, False, None, locate.span(word.start, word.end))), 1


def _timeout(argv: list[Word]):
    opts, i = _opts(argv, 1, {"-s", "-k", "--signal", "--kill-after"})
    seconds = parse_duration(argv[i].text, COREUTILS) if i < len(argv) else None
    return seconds, i + 1


_ESCAPE_OPTS = {
    "systemd-run": {"-u", "--unit", "-p", "--property", "-d", "--description", "-M", "-H",
                    "--slice", "-E", "--setenv", "--uid", "--gid", "--nice", "--working-directory",
                    "--on-active", "--on-calendar", "--timer-property", "--path-property",
                    "--socket-property", "--on-boot", "--on-startup", "--on-unit-active",
                    "--on-unit-inactive", "--service-type"},
    "screen": {"-S", "-c", "-e", "-h", "-p", "-T", "-X", "-s", "-t", "-L", "-Logfile"},
}


@dataclass
class _Step:
    """What one wrapper does to the rest of the command line."""

    wrapper: Wrapper | None = None
    rest: list[Word] | None = None  # peel on: the command the wrapper runs
    inline: tuple[Word, bool] | None = None  # it runs a -c string: the peeling stops
    runs: list[Word] | None = None  # the peeling stops and this runs (tmux new, flock 9: [])


def _env(cmd, argv, locate) -> _Step:
    i = 1
    while i < len(argv) and (argv[i].text.startswith("-") or "=" in argv[i].text):
        i += 2 if argv[i].text in ("-u", "-C", "-S", "--unset", "--chdir") else 1
    return _Step(Wrapper("env", argv[0]), argv[i:])


def _flock_step(cmd, argv, locate) -> _Step:
    wrapper, i, command_string = _flock(cmd, argv, locate)
    if command_string is not None:
        return _Step(wrapper, inline=(command_string, True))
    if i >= len(argv):  # fd form (flock -n 9): the guard covers what follows
        return _Step(wrapper, runs=[])
    return _Step(wrapper, argv[i:])


def _guard_step(cmd, argv, locate) -> _Step:
    wrapper, i = _guard_wrapper(cmd, argv, GUARD_COMMANDS[basename(argv[0].text)], locate)
    return _Step(wrapper, argv[i:])


def _timeout_step(cmd, argv, locate) -> _Step:
    name = basename(argv[0].text)
    if name == "timeout":
        seconds, i = _timeout(argv)
    else:  # timelimit -t SECONDS
        opts, i = _opts(argv, 1, {"-t", "-T", "-s", "-S"})
        seconds = next((parse_duration(v, COREUTILS) for k, v in opts if k == "-t" and v), None)
    return _Step(Wrapper(name, argv[0], timeout=seconds), argv[i:])


def _shell_step(cmd, argv, locate) -> _Step | None:
    """``sh -c 'string'`` runs the string; ``busybox sh`` is ``sh``; ``sh script`` runs the
    script (the link step follows it)."""
    name = basename(argv[0].text)
    opts, i = _opts(argv, 1, {"-o", "+o"})
    flags = "".join(k.lstrip("-") for k, _ in opts if not k.startswith("--"))
    if name == "busybox" and i < len(argv) and argv[i].text in SHELLS:
        return _Step(rest=argv[i:])
    if "c" in flags and i < len(argv):
        return _Step(Wrapper(name, argv[0]), inline=(argv[i], False))
    return None


def _su_step(cmd, argv, locate) -> _Step | None:
    """``su [-s SHELL] USER -c 'string'`` (options before or after the user, ``-s/bin/sh``
    attached, ``--command=``) runs the string as that user."""
    i = 1
    while i < len(argv):
        word = argv[i].text
        if word in ("-c", "--command") and i + 1 < len(argv):
            return _Step(Wrapper("su", argv[0]), inline=(argv[i + 1], False))
        if word.startswith("--command="):
            value = argv[i]
            prefix = len("--command=")
            return _Step(Wrapper("su", argv[0]), inline=(
                Word(value.text[prefix:], value.start + prefix, value.end, value.literal),
                False))
        i += 2 if word in ("-s", "--shell", "-g", "--group", "-G", "--supp-group", "-w",
                           "--whitelist-environment") else 1
    return None  # an interactive shell


def _setsid_step(cmd, argv, locate) -> _Step:
    opts, i = _opts(argv, 1, set())
    flags = {k for k, _ in opts}
    detached = bool(flags & {"-f", "--fork"}) and not flags & {"-w", "--wait"}
    return _Step(Wrapper("setsid", argv[0], escape="setsid -f" if detached else None), argv[i:])


def _systemd_run_step(cmd, argv, locate) -> _Step:
    opts, i = _opts(argv, 1, _ESCAPE_OPTS["systemd-run"])
    waits = {k for k, _ in opts} & {"--wait", "--scope", "-t", "--pty", "-P", "--pipe"}
    return _Step(Wrapper("systemd-run", argv[0],
                         escape=None if waits else "systemd-run without --wait"), argv[i:])


def _screen_step(cmd, argv, locate) -> _Step:
    opts, i = _opts(argv, 1, _ESCAPE_OPTS["screen"])
    flags = "".join(k for k, _ in opts)
    detached = "-d" in flags and "m" in flags or "-D" in flags and "m" in flags
    return _Step(Wrapper("screen", argv[0], escape="screen -dm" if detached else None), argv[i:])


def _tmux_step(cmd, argv, locate) -> _Step:
    words = [w.text for w in argv[1:]]
    detached = any(w in ("new", "new-session") for w in words) and "-d" in words
    return _Step(Wrapper("tmux", argv[0], escape="tmux new -d") if detached else None, runs=argv)


def _container_run_step(cmd, argv, locate) -> _Step | None:
    name = basename(argv[0].text)
    if len(argv) < 2 or argv[1].text != "run":
        return None
    detached = any(w in ("-d", "--detach") or (not w.startswith("--") and "d" in w[1:]
                                               and len(w) <= 4)
                   for w in (a.text for a in argv[2:]) if w.startswith("-"))
    return _Step(Wrapper(name, argv[0], escape=f"{name} run -d") if detached else None,
                 runs=argv)


def _daemon_step(cmd, argv, locate) -> _Step:
    """Programs that start the rest in the background: ``start-stop-daemon --background``,
    ``daemonize``, ``at``, ``batch``."""
    name = basename(argv[0].text)
    escape: str | None = name
    if name == "start-stop-daemon":
        background = {w.text for w in argv[1:]} & {"--background", "-b"}
        escape = "start-stop-daemon --background" if background else None
    return _Step(Wrapper(name, argv[0], escape=escape) if escape else None, runs=argv)


def _project_runner_step(cmd, argv, locate) -> _Step | None:
    """``poetry run CMD``, ``uv run CMD`` ...: CMD in the project's environment."""
    if len(argv) > 2 and argv[1].text == "run":
        return _Step(Wrapper(basename(argv[0].text), argv[0]), argv[2:])
    return None


def _plain_step(cmd, argv, locate) -> _Step:
    name = basename(argv[0].text)
    opts, i = _opts(argv, 1, _PLAIN_WRAPPERS[name])
    i += _ARG_WRAPPERS.get(name, 0)
    if name == "nice" and i < len(argv) and re.fullmatch(r"-?\d+", argv[i].text):
        i += 1
    if name in ("chrt", "taskset") and i < len(argv):
        i += 1
    if name == "sudo":
        while i < len(argv) and "=" in argv[i].text:
            i += 1
    return _Step(Wrapper(name, argv[0]), argv[i:])


#: command name -> how it wraps the rest of the line
_WRAPPERS = {
    "env": _env, "flock": _flock_step, "timeout": _timeout_step, "timelimit": _timeout_step,
    "busybox": _shell_step, "setsid": _setsid_step, "systemd-run": _systemd_run_step,
    "su": _su_step,
    "screen": _screen_step, "tmux": _tmux_step, "docker": _container_run_step,
    "podman": _container_run_step, "start-stop-daemon": _daemon_step,
    "daemonize": _daemon_step, "at": _daemon_step, "batch": _daemon_step,
    **dict.fromkeys(set(GUARD_COMMANDS) - {"flock"}, _guard_step),
    **dict.fromkeys(SHELLS, _shell_step),
    **dict.fromkeys(("poetry", "pipenv", "pdm", "uv", "hatch", "rye"), _project_runner_step),
    **dict.fromkeys(_PLAIN_WRAPPERS, _plain_step),
}


def peel(cmd: Cmd, locate: Locator) -> Invocation:
    """Peel wrappers off a simple command."""
    argv = list(cmd.argv)
    wrappers: list[Wrapper] = []
    while argv:
        handler = _WRAPPERS.get(basename(argv[0].text))
        step = handler(cmd, argv, locate) if handler is not None else None
        if step is None:
            break
        if step.wrapper is not None:
            wrappers.append(step.wrapper)
        if step.inline is not None:
            return Invocation(cmd, wrappers, [], step.inline)
        if step.runs is not None:
            return Invocation(cmd, wrappers, step.runs)
        argv = step.rest or []
    return Invocation(cmd, wrappers, argv)


# --------------------------------------------------------------------------- analysis


@dataclass
class CommandFacts:
    """What a command line (or a script) does, for the schedule it belongs to."""

    invocations: list[tuple[Invocation, bool]] = field(default_factory=list)  # (inv, guarded)
    guards: list[Guard] = field(default_factory=list)
    timeouts: list[float] = field(default_factory=list)
    backgrounds: list[Background] = field(default_factory=list)  # escaping a guard
    detached: list[Background] = field(default_factory=list)  # any unwaited background work
    locks: list[Lock] = field(default_factory=list)
    cd: str | None = None

    @property
    def runtime_bound(self) -> float | None:
        finite = [t for t in self.timeouts if t]
        return min(finite) if finite else None


_MAX_DEPTH = 4


def analyze(text: str, locate: Locator, variables: dict[str, str] | None = None,
            guarded: bool = False, depth: int = 0) -> CommandFacts:
    """Analyse shell text: a crontab command, an ExecStart line, or a whole script."""
    facts = CommandFacts()
    script = parse_script(text, variables)
    _collect(script, locate, facts, guarded, depth)
    removed = _removed_paths(script)
    files = lock_files(script, locate, removed)
    facts.locks.extend(files + process_checks(script, locate))
    # work sent to the background after a lock file is taken outlives it: the script ends,
    # its trap or its last line removes the file, and the next run starts beside the work
    for lock in files:
        if lock.path in removed:
            facts.backgrounds.extend(b for b in facts.detached if b.span.line >= lock.span.line
                                     and b not in facts.backgrounds)
    return facts


def _collect(script: Script, locate: Locator, facts: CommandFacts, guarded: bool, depth: int):
    fd_guarded_scopes: set[int] = set()
    shifts: list[tuple[tuple[int, int] | None, int]] = []  # (branch, count), in order
    for cmd in script.cmds:
        if cmd.name == "cd" and len(cmd.argv) > 1 and facts.cd is None:
            facts.cd = cmd.argv[1].text
        if cmd.name == "shift":
            count = cmd.argv[1].text if len(cmd.argv) > 1 else "1"
            shifts.append((cmd.branch, int(count) if count.isdigit() else 1))
        inv = peel(cmd, locate)
        # (a shift in another branch — another case item — does not run before it)
        inv.shifted = sum(n for branch, n in shifts
                          if branch is None or branch[0] <= cmd.start < branch[1])
        in_guard = guarded or cmd.scope in fd_guarded_scopes
        escaped_in_guard = in_guard
        bound = None  # a timeout wrapped around what follows also bounds a lock wait inside it
        for w in inv.wrappers:
            if w.guard is not None:
                guard = w.guard
                if guard.blocking and bound is not None and (
                        guard.wait_seconds is None or bound < guard.wait_seconds):
                    guard = replace(guard, wait_seconds=bound)
                facts.guards.append(guard)
                if not inv.argv and inv.inline is None:  # flock -n 9 guards the rest of the scope
                    fd_guarded_scopes.add(cmd.scope)
                    path = cmd.fd_redirects.get(w.guard.path or "") if w.guard.path else None
                    if path is None:
                        path = _fd_target(script, w.guard.path)
                    if path is not None:
                        facts.guards[-1] = replace(guard, path=path.text)
                escaped_in_guard = True
            if w.timeout is not None:
                facts.timeouts.append(w.timeout)
                bound = w.timeout if bound is None else min(bound, w.timeout)
            if w.escape:
                bg = Background(w.escape, locate.span(w.word.start, w.word.end))
                facts.detached.append(bg)
                if escaped_in_guard:
                    facts.backgrounds.append(bg)
        if cmd.background and not cmd.waited and cmd.argv:
            how = "nohup … &" if any(w.name == "nohup" for w in inv.wrappers) else "&"
            bg = Background(how, locate.span(cmd.start, cmd.end))
            facts.detached.append(bg)
            if in_guard:
                facts.backgrounds.append(bg)
        if cmd.name == "disown":
            bg = Background("disown", locate.span(cmd.start, cmd.end))
            facts.detached.append(bg)
            if in_guard:
                facts.backgrounds.append(bg)
        if inv.inline is not None and depth < _MAX_DEPTH:
            word, _ = inv.inline
            nested_guard = in_guard or any(w.guard is not None for w in inv.wrappers)
            offset = word.start + (1 if locate.text.encode("utf-8", "surrogateescape")
                                   [word.start:word.start + 1] in (b"'", b'"') else 0)
            inner = analyze(word.text, locate.nested(word.text, offset), script.variables,
                            nested_guard, depth + 1)
            facts.invocations.extend(inner.invocations)
            facts.guards.extend(inner.guards)
            facts.timeouts.extend(inner.timeouts)
            facts.backgrounds.extend(inner.backgrounds)
            facts.detached.extend(inner.detached)
            facts.locks.extend(inner.locks)
            facts.cd = facts.cd or inner.cd
        elif inv.argv:
            facts.invocations.append((inv, in_guard or any(w.guard for w in inv.wrappers)))
            bound = _worker_bound([w.text for w in inv.argv])
            if bound is not None:
                facts.timeouts.append(bound)


def _worker_bound(argv: list[str]) -> float | None:
    """How long a Laravel ``artisan queue:work`` run can last when it bounds itself:
    ``--max-time=N``, else each job killed after ``--timeout=T`` (its worker exits), times
    ``--max-jobs`` when given."""
    if "queue:work" not in argv:
        return None
    options = dict(re.findall(r"--(max-time|timeout|max-jobs)=(\d+)", " ".join(argv)))
    if "max-time" in options:
        return float(options["max-time"])
    if "timeout" in options:
        return float(options["timeout"]) * int(options.get("max-jobs", 1))
    return None


def _fd_target(script: Script, fd: str | None) -> Word | None:
    """The file behind ``exec 9>/var/lock/x`` for the fd-form ``flock -n 9``."""
    if not fd:
        return None
    for cmd in script.cmds:
        if fd in cmd.fd_redirects:
            return cmd.fd_redirects[fd]
    return None


# --------------------------------------------------------------------------- lock files

_LOCKISH = re.compile(r"(?i)lock|lck|pid|running|mutex|busy|semaphore")
_EXISTENCE_OPS = {"-e", "-f", "-a", "-s", "-d", "-L", "-h"}
_CREATORS = {"touch", "echo", "printf", "cat", "date", "hostname", "true", ":", "tee"}
_PID_CHECKS = re.compile(r"\bkill\s+-0\b|\bkill\s+-s\s*0\b|\bps\s+(?:-\w*\s+)*-p\b|\bpgrep\b|"
                         r"\bpidof\b|/proc/\$|\bstart-stop-daemon\b.*--status|\bpid_exists\b")
_AGE_CHECKS = re.compile(r"\bfind\b[^\n;|&]*-(?:mmin|mtime|cmin|ctime|amin|newer)\b|"
                         r"\bstat\b[^\n;|&]*(?:-c|--format|-f)\s*['\"]?%[YZX]|\bdate\s+-r\b|"
                         r"\b(?:-nt|-ot)\b")


def _norm(path: str) -> str:
    return path.strip().strip("\"'").rstrip("/")


def lock_files(script: Script, locate: Locator, removed: set[str]) -> list[Lock]:
    """Lock/pid files and lock directories whose existence means "locked".

    A path counts as a lock when its presence makes the script stop: a test of its
    existence, or a checked atomic creation (``mkdir``, a ``noclobber`` redirect,
    ``ln -s``), in a statement that exits or returns. A checked creation whose path is
    removed later counts too (``if mkdir d; then work; rmdir d; fi``). ``[ -d d ] || mkdir d``
    only makes sure a directory exists: it is not a lock.
    """
    flocked = {_norm(w.text) for cmd in script.cmds for w in cmd.fd_redirects.values()}
    flocked |= {_norm(c.argv[i].text) for c in script.cmds if c.name in ("flock", "lckdo")
                for i in range(1, len(c.argv)) if not c.argv[i].text.startswith("-")}
    exits = [(c.start, c.name) for c in script.cmds if c.name in ("exit", "return")]

    def stops(stmt: tuple[int, int], path: str) -> bool:
        """An ``exit`` in the statement; a ``return`` only for a lock-like file name (a
        function that returns when a stamp file is missing is not taking a lock)."""
        return any(stmt[0] <= at < stmt[1] and (name == "exit" or _LOCKISH.search(path))
                   for at, name in exits)

    tests: dict[str, TestExpr] = {}
    #: existence tests whose statement holds the rest of the run (``[ -f L ] || { touch L;
    #: work; rm L; }``, ``if [ ! -f L ]; then touch L; …; fi``): a creation inside one, of a
    #: path removed later, is taken only when the path was absent
    enclosing: dict[str, list[TestExpr]] = {}
    for t in script.tests:
        key = _norm(t.operand.text)
        if t.op in _EXISTENCE_OPS and key and stops(t.stmt, key) and \
                (not t.negated or _LOCKISH.search(key)):
            tests.setdefault(key, t)
        elif t.op in _EXISTENCE_OPS and key in removed:
            enclosing.setdefault(key, []).append(t)
    source = script.source.decode("utf-8", "surrogateescape")
    locks: list[Lock] = []
    seen: set[str] = set()
    for cmd in script.cmds:
        for path, atomic in _creations(cmd):
            key = _norm(path.text)
            if not key or key in seen or key in flocked or key.startswith("/dev/"):
                continue
            # (the statement holds the work too: `[ -d D ] && mkdir -p D` only makes sure a
            # working directory exists, whatever runs after it)
            test = tests.get(key) or next(
                (t for t in enclosing.get(key, ()) if t.start < cmd.start < t.stmt[1] and any(
                    c is not cmd and t.stmt[0] <= c.start < t.stmt[1] and c.name not in (
                        "test", "[", "[[") for c in script.cmds)), None)
            test_before = test is not None and test.start < cmd.start
            checked = atomic and cmd.condition and (stops(cmd.stmt, key) or key in removed)
            writes_pid = any(w.text in ("$$", "$BASHPID") for w in cmd.argv)
            if not (test_before or checked) or not (
                    _LOCKISH.search(key) or key in removed or writes_pid):
                continue  # "do not overwrite" or a marker file, not a lock
            seen.add(key)
            stale: StaleHandling = "none"
            if _PID_CHECKS.search(source):
                stale = "pid-check"
            elif _AGE_CHECKS.search(source):
                stale = "age-check"
            kind: LockKind = "lock-dir" if cmd.name == "mkdir" else (
                "pid-file" if key.endswith(".pid") else "lock-file")
            locks.append(Lock(
                kind=kind, scope="host", span=locate.span(cmd.start, cmd.end), path=key,
                stale_handling=stale, blocking=False,
                existence_test=locate.span(test.start, test.end)
                if test is not None and test_before and not atomic else None,
                atomic=atomic,
            ))
    return locks


def process_checks(script: Script, locate: Locator) -> list[Lock]:
    """A guard that looks for a running copy and stops when it finds one (``pgrep -f sync
    && exit``, ``if ps aux | grep -q '[s]ync'; then exit; fi``): it goes with the process
    like a kernel lock, but checking and starting are two steps."""
    exits = [c.start for c in script.cmds if c.name == "exit"]
    found: list[Lock] = []
    for cmd in script.cmds:
        if not cmd.condition or not any(cmd.stmt[0] <= at < cmd.stmt[1] for at in exits):
            continue
        args = [w.text for w in cmd.argv[1:]]
        by_pattern = cmd.name in ("pgrep", "pidof") or cmd.name == "ps" and "-p" not in args \
            and any(c.name == "grep" and c.stmt == cmd.stmt for c in script.cmds)
        if not by_pattern:
            continue
        pattern = next((a for a in reversed(args) if not a.startswith("-")), None)
        span = locate.span(cmd.start, cmd.end)
        found.append(Lock(kind="process-check", scope="host", span=span, path=pattern,
                          stale_handling="kernel", release="process-exit", blocking=False,
                          existence_test=span, atomic=False, api=cmd.name))
    return found


def _removed_paths(script: Script) -> set[str]:
    """Paths the script removes: by ``rm``/``rmdir``/``unlink``, or in a ``trap`` it sets."""
    removed = {_norm(w.text) for c in script.cmds if c.name in ("rm", "rmdir", "unlink")
               for w in c.argv[1:] if not w.text.startswith("-")}
    def expanded(word: str) -> str:  # (a trap string in single quotes is expanded when run)
        return _VARIABLE.sub(lambda m: script.variables.get(m.group(1) or m.group(2),
                                                            m.group(0)), word)

    for cmd in script.cmds:
        if cmd.name == "trap" and len(cmd.argv) > 1:
            removed |= {_norm(expanded(m.group(1)))
                        for m in _TRAP_REMOVAL.finditer(cmd.argv[1].text)}
    return removed


_VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
#: a removal in a trap's command string: ``trap 'rm -f "$LOCK"' EXIT``
_TRAP_REMOVAL = re.compile(r"\b(?:rm|rmdir|unlink)(?:\s+-\w+)*\s+[\"']?([^\s\"';&|]+)")


def _creations(cmd: Cmd):
    """(path word, atomic) for each file or directory the command creates."""
    if cmd.name == "mkdir":
        args = [w for w in cmd.argv[1:] if not w.text.startswith("-")]
        flags = "".join(w.text for w in cmd.argv[1:] if w.text.startswith("-"))
        for w in args:
            yield w, "p" not in flags.replace("-parents", "p")
        return
    if cmd.name == "touch":
        for w in cmd.argv[1:]:
            if not w.text.startswith("-"):
                yield w, False
    if cmd.name == "ln" and any(w.text.startswith("-s") for w in cmd.argv[1:]):
        flags = "".join(w.text for w in cmd.argv[1:] if w.text.startswith("-"))
        plain = [w for w in cmd.argv[1:] if not w.text.startswith("-")]
        if len(plain) >= 2:
            yield plain[-1], "f" not in flags
    if not cmd.argv or cmd.name in _CREATORS:
        for op, target in cmd.redirects:
            if op in (">", ">>", "&>"):
                yield target, cmd.noclobber and op == ">"
