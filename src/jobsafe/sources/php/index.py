"""The project's PHP code as a lookup: classes by name, global functions, artisan commands
by signature and Symfony console commands by name. Files are found by a text scan and
parsed when a job reaches them; ``vendor/`` is the dependencies' code, not the project's."""
from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tree_sitter import Node

from ...discover import SourceFile, read_text
from ...model import ParseError, Span
from ...paths import is_test_path
from .syntax import (
    PhpFile,
    arguments,
    call_name,
    number_value,
    parse,
    path_name,
    string_constants,
    walk,
)

#: what the analysis looks for in a file, found by the text scan
MARKS = {
    # something named schedule that is called (``$schedule->command(``, ``Schedule::job(``,
    # ``app(Schedule::class)->``): not the word in a translation file
    "schedule": re.compile(r"(?i)schedule\w*(?:::class\s*\))?\s*(?:->|::)\s*\w+\s*\("),
    # the vocabulary of locks, exits around them, and payment keys
    "hazards": re.compile(r"(?i)flock\s*\(|LOCK_(?:EX|NB|SH)|(?:->|::)lock\s*\(|createLock|"
                          r"LockableTrait|GET_LOCK|advisory_(?:xact_)?lock|Cache::|cache\(\)|"
                          r"\.lock\b|\$\w*lock\w*|lock_?file|\.pid\b|pid_?file|running_?file|"
                          r"\.running\b|idempoten|"
                          r"stripe|dedup"),
    "symfony-schedule": re.compile(r"RecurringMessage::|AsCronTask|AsPeriodicTask"),
    "handler": re.compile(r"AsMessageHandler|MessageHandlerInterface"),
    "forwards": re.compile(r"function\s+__callStatic"),
    # code that reads a file's age (stale handling of a lock file, wherever it is)
    "ages": re.compile(r"\b(?:filemtime|filectime)\s*\("),
}
#: most pieces of an include path that are filled from a script's command line
_MAX_FILLED = 2
_DECLARATION = re.compile(r"^\s*(?:(?:abstract|final|readonly)\s+)*(?:class|trait|enum)\s+(\w+)",
                          re.M)
_FUNCTION = re.compile(r"^function\s+&?(\w+)\s*\(", re.M)
#: how a command class names itself: Laravel's ``$signature``/``$name``, Symfony's
#: ``#[AsCommand(name: ...)]``, ``$defaultName``, ``setName()``/``parent::__construct()``
_COMMAND_NAME = re.compile(
    r"""(?:\$signature|\$name|\$defaultName)\s*=\s*['"]\s*([\w:.-]+)|"""
    r"""AsCommand\((?:\s*name\s*:|[^)]*?\bname\s*:|\s*)\s*['"]([\w:.-]+)|"""
    r"""->setName\(\s*['"]([\w:.-]+)|parent::__construct\(\s*['"]([\w:.-]+)""")


_COMMAND_CONSTANT = re.compile(
    r"""(?:\$signature|\$name|\$defaultName)\s*=\s*(?:self|static)::(\w+)|"""
    r"""AsCommand\((?:[^)]*?\bname\s*:|\s*)\s*(?:self|static)::(\w+)|"""
    r"""->setName\(\s*(?:self|static)::(\w+)""")


@dataclass
class PhpClass:
    name: str
    fqn: str
    php: PhpFile
    node: Node
    methods: dict[str, Node] = field(default_factory=dict)
    #: property name (no ``$``) -> class FQN, from declarations and promoted parameters
    properties: dict[str, str] = field(default_factory=dict)
    traits: set[str] = field(default_factory=set)
    interfaces: set[str] = field(default_factory=set)  # short names
    parent: str | None = None
    #: a queued job's retry setting (``$tries = 20``) and where it is
    retries: tuple[str, Span] | None = None
    #: a queued job's time limit in seconds (``public $timeout = 120``): the worker kills
    #: a run that takes longer
    timeout: float | None = None

    def method(self, name: str, index: PhpIndex, depth: int = 0) -> tuple[PhpClass, Node] | None:
        if name in self.methods:
            return self, self.methods[name]
        parent = self.parent_class(index)
        if parent is not None and depth < 8:
            return parent.method(name, index, depth + 1)
        return None

    @property
    def queued(self) -> bool:
        """A job Laravel puts on the queue when dispatched (``implements ShouldQueue``)."""
        return bool(self.interfaces & {"ShouldQueue", "ShouldBeUnique",
                                       "ShouldBeUniqueUntilProcessing"})

    def parent_class(self, index: PhpIndex) -> PhpClass | None:
        return index.klass(self.parent) if self.parent else None


def read_class(php: PhpFile, node: Node) -> PhpClass:
    name_node = node.child_by_field_name("name")
    name = php.text_of(name_node) if name_node is not None else ""
    cls = PhpClass(name, f"{php.namespace}\\{name}" if php.namespace else name, php, node)
    for child in node.named_children:
        if child.type == "base_clause" and child.named_children:
            cls.parent = php.qualified(php.text_of(child.named_children[0]))
        elif child.type == "class_interface_clause":
            cls.interfaces |= {php.text_of(n).rsplit("\\", 1)[-1] for n in child.named_children}
    body = node.child_by_field_name("body")
    for member in body.named_children if body is not None else ():
        if member.type == "method_declaration":
            method = member.child_by_field_name("name")
            if method is not None:
                cls.methods[php.text_of(method)] = member
                if php.text_of(method) == "__construct":
                    _promoted(php, member, cls)
        elif member.type == "use_declaration":
            for used in member.named_children:
                cls.traits.add(php.text_of(used).rsplit("\\", 1)[-1])
        elif member.type == "property_declaration":
            _property(php, member, cls)
    return cls


def _promoted(php: PhpFile, constructor: Node, cls: PhpClass) -> None:
    """``__construct(private BillingService $billing)`` and ``$this->x = $x`` of typed
    parameters: the properties' classes."""
    params = constructor.child_by_field_name("parameters")
    typed = {}
    for param in params.named_children if params is not None else ():
        kind, name = param.child_by_field_name("type"), param.child_by_field_name("name")
        if kind is None or name is None:
            continue
        full = php.qualified(php.text_of(kind).lstrip("?"))
        typed[php.text_of(name)] = full
        if param.type == "property_promotion_parameter":
            cls.properties[php.text_of(name).lstrip("$")] = full
    for node in walk(constructor):
        if node.type == "assignment_expression":
            left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
            if left is not None and right is not None and left.type == "member_access_expression" \
                    and php.text_of(left).startswith("$this->") and php.text_of(right) in typed:
                cls.properties.setdefault(php.text_of(left)[7:], typed[php.text_of(right)])


def _property(php: PhpFile, member: Node, cls: PhpClass) -> None:
    kind = member.child_by_field_name("type")
    for element in member.named_children:
        if element.type != "property_element":
            continue
        name = element.child_by_field_name("name")
        if name is None:
            continue
        prop = php.text_of(name).lstrip("$")
        if kind is not None:
            cls.properties[prop] = php.qualified(php.text_of(kind).lstrip("?"))
        value = element.child_by_field_name("default_value")
        if prop == "timeout":
            limit = number_value(value, php)
            cls.timeout = limit if limit and limit > 0 else None
        elif prop == "tries":
            tries = number_value(value, php)
            if tries is not None and tries > 1:
                cls.retries = (php.text_of(member).rstrip(";").strip(), php.span(member))
        elif prop == "backoff" and value is not None and cls.retries is None:
            cls.retries = (php.text_of(member).rstrip(";").strip(), php.span(member))


class PhpIndex:
    """Project PHP files by what they declare; each parsed once."""

    def __init__(self, files: dict[str, SourceFile], source: Callable[[SourceFile, str], str | None]):
        self.files = {rel: f for rel, f in files.items()
                      if rel.endswith(".php") and not _dependency(rel)}
        self.source = source
        self._parsed: dict[str, PhpFile | None] = {}
        self._marks: dict[str, frozenset[str]] | None = None
        self._classes: dict[str, list[str]] = {}  # short name -> files
        self._functions: dict[str, list[str]] = {}
        self._commands: dict[str, list[str]] = {}
        self.errors: list[ParseError] = []
        self._reported: set[str] = set()
        self._classes_in: dict[str, list[PhpClass]] = {}
        self._klass: dict[str, PhpClass | None] = {}
        self._function_at: dict[str, tuple[PhpFile, Node] | None] = {}
        self._rel_of: dict[str, str] | None = None  # display path -> rel
        self._aged: frozenset[str] | None = None
        self._by_name: dict[str, list[str]] | None = None  # file name -> rels

    # -- text scan
    def _scan(self) -> dict[str, frozenset[str]]:
        """Each file's declarations and marks, from its text (not kept: the scan reads
        every PHP file of the project, the analysis few of them)."""
        if self._marks is None:
            self._marks = {}
            for rel, f in sorted(self.files.items()):
                text = read_text(f.abs).content
                if not text:
                    continue
                self._marks[rel] = frozenset(m for m, pattern in MARKS.items()
                                             if pattern.search(text))
                for name in _DECLARATION.findall(text):
                    self._classes.setdefault(name, []).append(rel)
                for name in _FUNCTION.findall(text):
                    self._functions.setdefault(name, []).append(rel)
                for name in command_names(text):
                    self._commands.setdefault(name, []).append(rel)
        return self._marks

    @property
    def scanned(self) -> list[str]:
        """Display paths of the PHP files the scan read."""
        return [self.files[rel].display for rel in self._scan()]

    def marked(self, mark: str) -> list[str]:
        """The files whose text has a mark (see ``MARKS``), in path order."""
        return sorted(rel for rel, marks in self._scan().items() if mark in marks)

    def parsed(self, rel: str, keep: bool = True) -> PhpFile | None:
        """The file's tree; with ``keep`` False, not kept for later lookups unless it
        already is (a file read once for its own hazards need not stay in memory)."""
        if rel in self._parsed:
            return self._parsed[rel]
        f = self.files.get(rel)
        text = self.source(f, "php") if f is not None else None
        php = parse(f.display, text) if f is not None and text is not None else None
        if keep:
            self._parsed[rel] = php
        return php

    def rel_of(self, php: PhpFile) -> str | None:
        """The tree-relative path of a parsed file."""
        if self._rel_of is None:
            self._rel_of = {f.display: rel for rel, f in self.files.items()}
        return self._rel_of.get(php.display)

    def report_errors_of(self, php: PhpFile) -> None:
        """``report_errors`` for a parsed file (a class found by a lookup)."""
        rel = self.rel_of(php)
        if rel is not None:
            self.report_errors(rel)

    def report_errors(self, rel: str) -> None:
        """A syntax error in a file a job runs is a JOB900 (once per file)."""
        php = self.parsed(rel)
        if php is None or rel in self._reported:
            return
        self._reported.add(rel)
        error = php.first_error()
        if error is not None:
            self.errors.append(ParseError(php.span(error, whole=False),
                                          "PHP syntax error: the code after it is read as far "
                                          "as the parser could recover"))

    # -- lookups
    def classes_in(self, rel: str) -> list[PhpClass]:
        if rel not in self._classes_in:
            php = self.parsed(rel)
            self._classes_in[rel] = [] if php is None else [
                read_class(php, n) for n in walk(php.root) if n.type == "class_declaration"]
        return self._classes_in[rel]

    def klass(self, fqn: str | None) -> PhpClass | None:
        if not fqn:
            return None
        if fqn not in self._klass:
            self._klass[fqn] = self._find_class(fqn)
        return self._klass[fqn]

    def _find_class(self, fqn: str) -> PhpClass | None:
        short = fqn.rsplit("\\", 1)[-1]
        self._scan()
        found = [c for rel in self._classes.get(short, []) for c in self.classes_in(rel)
                 if c.name == short]
        exact = [c for c in found if c.fqn == fqn.lstrip("\\")]
        if exact:
            return exact[0]
        return found[0] if len(found) == 1 else None

    def function(self, name: str) -> tuple[PhpFile, Node] | None:
        if name not in self._function_at:
            self._function_at[name] = self._find_function(name)
        return self._function_at[name]

    def _find_function(self, name: str) -> tuple[PhpFile, Node] | None:
        self._scan()
        hits = self._functions.get(name, [])
        if len(hits) != 1:
            return None
        php = self.parsed(hits[0])
        if php is None:
            return None
        for node in walk(php.root):
            if node.type == "function_definition":
                n = node.child_by_field_name("name")
                if n is not None and php.text_of(n) == name:
                    return php, node
        return None

    def included(self, pieces: list[str | None], directories: tuple[str, ...],
                 words: tuple[str, ...]) -> list[str]:
        """The project files an ``include`` of a path made of ``pieces`` loads. A relative
        path is tried against each of ``directories`` (the working directory, then the
        including file's, as PHP does); pieces not known statically are filled from the
        command-line ``words`` of the script run (a front controller that loads the module
        its command line names: ``include 'modules/lh' . $part . '.php'`` run as
        ``cron.php -c cron/webhook``). A base directory that is not known
        (``$config['base_path'] . '/lib/poller.php'``, ``ROOT . '/lib/x.php'``) is the one
        that holds the only project file with that path."""
        unknown = pieces.count(None)
        if len(pieces) == 2 and pieces[0] is None and (pieces[1] or "").startswith("/"):
            tail = posixpath.normpath(pieces[1] or "").lstrip("/")
            if self._by_name is None:
                self._by_name = {}
                for rel in self.files:
                    self._by_name.setdefault(rel.rsplit("/", 1)[-1], []).append(rel)
            hits = [r for r in self._by_name.get(tail.rsplit("/", 1)[-1], [])
                    if r == tail or r.endswith("/" + tail)]
            if len(hits) == 1:
                return hits
        if unknown > _MAX_FILLED or (unknown and not words):
            return []
        found: list[str] = []
        for fill in itertools.product(words, repeat=unknown):
            given = iter(fill)
            path = "".join(p if p is not None else next(given) for p in pieces)
            for base in ("",) if path.startswith("/") else directories:
                rel = posixpath.normpath(posixpath.join("/", base, path)).lstrip("/")
                if rel in self.files:
                    if rel not in found:
                        found.append(rel)
                    break
        return found

    def aged_names(self) -> frozenset[str]:
        """The names of files whose age the project's code reads (``filemtime($dir .
        self::RUNNING_FILE)``): a lock file of that name has stale handling, also when
        another job does the check and clears it."""
        if self._aged is None:
            names: set[str] = set()
            for rel in self.marked("ages"):
                php = None if is_test_path(rel) else self.parsed(rel, keep=False)
                if php is None:
                    continue
                strings: dict[int, dict[str, str]] = {}
                for node in walk(php.root):
                    if node.type != "function_call_expression" or \
                            call_name(node, php) not in ("filemtime", "filectime"):
                        continue
                    owner = _enclosing_class(node) or php.root
                    if owner.start_byte not in strings:
                        strings[owner.start_byte] = string_constants(php, owner)
                    args = arguments(node)
                    name = path_name(args[0] if args else None, php, strings[owner.start_byte])
                    if name:
                        names.add(name)
            self._aged = frozenset(names)
        return self._aged

    def message_handler(self, message: str, handles: Callable[[PhpClass, str], str | None]
                        ) -> tuple[PhpClass, str] | None:
        """The class and method that handle a Messenger message class."""
        for rel in self.marked("handler"):
            for cls in self.classes_in(rel):
                method = handles(cls, message)
                if method is not None:
                    return cls, method
        return None

    def command(self, name: str, entry_methods: tuple[str, ...]) -> PhpClass | None:
        """The command class registered as ``name``: a class declaring it that has one of
        ``entry_methods`` (``handle`` for artisan, ``execute`` for Symfony)."""
        self._scan()
        for rel in self._commands.get(name, []):
            for cls in self.classes_in(rel):
                if any(cls.method(m, self) for m in entry_methods) and \
                        name in _names_of(cls):
                    return cls
        return None


def _names_of(cls: PhpClass) -> set[str]:
    """The command names a class declares (its own text, attributes included)."""
    return set(command_names(cls.php.text_of(cls.node)))


def command_names(text: str) -> list[str]:
    """Command names as literals, or through a class constant (``setName(self::NAME)``
    with ``const NAME = 'app:sync'``)."""
    found = [next(g for g in m.groups() if g) for m in _COMMAND_NAME.finditer(text)]
    for named in _COMMAND_CONSTANT.finditer(text):
        constant = next(g for g in named.groups() if g)
        m = re.search(rf"\bconst\s+{constant}\s*=\s*['\"]([\w:.-]+)", text)
        if m:
            found.append(m.group(1))
    return found


def _enclosing_class(node: Node) -> Node | None:
    parent = node.parent
    while parent is not None and parent.type != "class_declaration":
        parent = parent.parent
    return parent


def _dependency(rel: str) -> bool:
    parts = rel.split("/")
    return "vendor" in parts[:-1] or "node_modules" in parts[:-1]
