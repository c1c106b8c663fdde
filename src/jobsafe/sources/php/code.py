"""Locks, exits and idempotency keys in the PHP code a job runs.

The analysis starts at a job's entry (an artisan command's ``handle()``, a Symfony
command's ``execute()``, a queued job's ``handle()``, a scheduled closure) and follows the
project's own calls — ``$this->method()``, ``self::``/``static::``, and methods of
receivers whose class the code names (a typed parameter or property, constructor property
promotion, ``new Class``) — binding arguments to parameters, so a key built from a record
created two calls up is still that record's id. Each function's body is read in source order
with what PHP does: ``exit()``/``die()`` skip ``finally`` blocks (they run shutdown functions
and destructors only), a ``flock`` goes with the process, a cache lock stays until its TTL.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tree_sitter import Node

from ...model import (
    UNKNOWN_TTL,
    CodeFact,
    Confidence,
    FactKind,
    Lock,
    LockScope,
    Span,
    StaleHandling,
)
from .index import PhpClass, PhpIndex, read_class
from .laravel import CacheStore
from .symfony import handles
from .syntax import (
    CALL_NODES,
    PhpFile,
    arguments,
    call_name,
    constant_values,
    named_argument,
    number_value,
    path_name,
    path_pieces,
    string_constants,
    string_value,
    walk,
)

#: Laravel's ways of running a queued job: its ``handle()`` is the work
_DISPATCH_METHODS = {"dispatch", "dispatchSync", "dispatchNow", "dispatchIf", "dispatchUnless",
                     "dispatchAfterResponse"}
_DISPATCH_FUNCTIONS = {"dispatch", "dispatch_sync", "dispatch_now"}
#: Laravel's database cache store expires a lock taken for 0 seconds after a day
#: (``lock_timeout`` of its ``DatabaseStore``, 86400 unless configured)
DATABASE_LOCK_SECONDS = 86400.0
#: how deep calls into the project's code are followed
MAX_DEPTH = 5
_INCLUDE_NODES = frozenset({"include_expression", "include_once_expression",
                            "require_expression", "require_once_expression"})

# -- values that differ on every run, and records created in the run
_PER_RUN_FUNCTIONS = {"uniqid": "uniqid()", "random_bytes": "random_bytes()",
                      "random_int": "random_int()", "mt_rand": "mt_rand()", "rand": "rand()",
                      "time": "time()", "microtime": "microtime()", "hrtime": "hrtime()",
                      "getmypid": "getmypid()", "openssl_random_pseudo_bytes":
                      "openssl_random_pseudo_bytes()", "now": "now()"}
_PER_RUN_STATIC = {"uuid": "Str::uuid()", "orderedUuid": "Str::orderedUuid()",
                   "random": "Str::random()", "ulid": "Str::ulid()", "uuid4": "Uuid::uuid4()",
                   "uuid1": "Uuid::uuid1()", "uuid7": "Uuid::uuid7()", "v4": "Uuid::v4()",
                   "v1": "Uuid::v1()", "v7": "Uuid::v7()", "generate": "Ulid::generate()",
                   "now": "Carbon::now()"}
_PER_RUN_CLASSES = {"Str", "Uuid", "Ulid", "Carbon", "CarbonImmutable", "Date"}
#: functions whose result depends only on their arguments: a key's origin passes through
_PURE = {"md5", "sha1", "hash", "sprintf", "strval", "implode", "join", "json_encode",
         "hash_hmac", "base64_encode", "bin2hex", "strtolower", "strtoupper", "trim",
         "crc32", "serialize", "substr", "vsprintf", "str_replace"}
_CREATE_STATIC = {"create", "forceCreate", "insertGetId"}
_SQL_LOCK = re.compile(r"\b(GET_LOCK|pg_try_advisory_lock|pg_advisory_lock)\s*\(([^()]*)\)", re.I)
_SQL_UNLOCK = re.compile(r"\b(RELEASE_LOCK|RELEASE_ALL_LOCKS|pg_advisory_unlock(?:_all)?)\b", re.I)
_LOCKISH = re.compile(r"(?i)lock|\.pid\b|pid_?file|running|mutex|semaphore")
#: idempotency key names in payment options and request headers
KEY_NAMES = {"idempotency_key": "idempotency_key", "idempotency-key": "Idempotency-Key",
             "x-idempotency-key": "X-Idempotency-Key", "paypal-request-id": "PayPal-Request-Id",
             "clienttoken": "ClientToken", "clientrequesttoken": "ClientRequestToken",
             "messagededuplicationid": "MessageDeduplicationId"}
#: Stripe resources whose ``create`` moves money or makes an object that bills
STRIPE_CLASSES = {"Charge", "PaymentIntent", "Refund", "Transfer", "Payout"}
STRIPE_SERVICES = {"charges": "Charge", "paymentIntents": "PaymentIntent", "refunds": "Refund",
                   "transfers": "Transfer", "payouts": "Payout"}
#: Symfony Lock stores by class: where their locks are seen
SYMFONY_HOST_STORES = {"FlockStore", "SemaphoreStore", "InMemoryStore"}
_SLEEPS = {"sleep", "usleep", "time_nanosleep", "time_sleep_until"}


@dataclass(frozen=True)
class Origin:
    """Where a value comes from, when that matters for a key: a per-run value or a
    record created in this run."""

    kind: FactKind  # key-per-run | key-fresh-record
    detail: str
    span: Span


@dataclass
class _Held:
    """A lock acquired in the function being read, until its release is found."""

    lock: Lock
    handle: str | None  # the variable that holds it (``$fp``, ``$lock``)
    release_at: Span | None = None
    release: str = "none"
    #: lines of the branch taken when the lock is not acquired (exits there are fine)
    refused: tuple[int, int] | None = None
    #: released only in a ``catch``: kept after a run that succeeds (a throttle's spelling)
    release_in_catch: bool = False
    #: the lines of the loop that retries the acquisition (a removal there clears a
    #: stale lock before the next try; it is not the release)
    retry_loop: tuple[int, int] | None = None


@dataclass(frozen=True)
class _Summary:
    """What reading a function found, to replay at each of its calls."""

    locks: tuple[Lock, ...]
    facts: tuple[CodeFact, ...]
    files: tuple[str, ...]
    returns: tuple[Origin, ...]


@dataclass(frozen=True)
class ScriptRun:
    """How a PHP file was run as a script: the directory it runs in (relative to the tree)
    and its command-line words, which decide what a front controller includes."""

    directory: str
    words: tuple[str, ...] = ()


@dataclass
class PhpCode:
    locks: list[Lock] = field(default_factory=list)
    facts: list[CodeFact] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


@dataclass
class _Frame:
    php: PhpFile
    cls: PhpClass | None
    function: Node
    types: dict[str, str] = field(default_factory=dict)  # $var -> class FQN
    origins: dict[str, Origin] = field(default_factory=dict)
    values: dict[str, Node] = field(default_factory=dict)  # $var -> the expression assigned
    held: list[_Held] = field(default_factory=list)
    #: lock objects made but not yet acquired (``$lock = Cache::lock(...)``), by variable
    pending: dict[str, Lock] = field(default_factory=dict)
    #: lock-like paths whose existence was tested (``file_exists($lockFile)``), also by a
    #: caller: a helper that then creates the file completes the caller's test-then-create
    tested: dict[str, Span] = field(default_factory=dict)
    exits: list[tuple[Span, str]] = field(default_factory=list)
    returns: list[Origin] = field(default_factory=list)
    #: the lines of shutdown-function closures in this function
    shutdown_lines: list[tuple[int, int]] = field(default_factory=list)
    #: for a file's top-level code run as a script (or included by one): how it was run
    run: ScriptRun | None = None


class PhpAnalyzer:
    """Reads entries; each (file, class, method) once per binding of its parameters."""

    def __init__(self, index: PhpIndex, cache: CacheStore | None,
                 lock_store_scope: LockScope | None):
        self.index = index
        self.cache = cache  # the Laravel app's cache configuration (None: none in the tree)
        self._summaries: dict[tuple, _Summary] = {}
        self.lock_store_scope = lock_store_scope  # Symfony's LOCK_DSN

    def entry(self, cls: PhpClass, method: str) -> PhpCode:
        code = PhpCode()
        fn = cls.methods.get(method)
        if fn is None:
            return code
        self._function(cls.php, cls, fn, {}, code, 0, set())
        code.files = list(dict.fromkeys([cls.php.display, *code.files]))
        return code

    def every_function(self, php: PhpFile) -> list[PhpCode]:
        """Each function, method and closure of a file, and its top-level code, read on its
        own (calls into the project followed)."""
        found = [self.closure(php, php.root)]  # (its includes are read on their own)
        classes: dict[int, PhpClass] = {}
        for node in walk(php.root):
            if node.type in ("function_definition", "method_declaration", "anonymous_function",
                             "arrow_function"):
                cls = None
                if node.type == "method_declaration":
                    owner = node.parent.parent if node.parent is not None else None
                    if owner is not None and owner.type == "class_declaration":
                        cls = classes.setdefault(owner.start_byte, read_class(php, owner))
                code = PhpCode()
                self._function(php, cls, node, {}, code, 0, set())
                found.append(code)
        return found

    def script(self, php: PhpFile, words: tuple[str, ...] = ()) -> PhpCode:
        """A PHP file run as a script (with its command-line words): its top-level code,
        and the files it includes."""
        rel = self.index.rel_of(php)
        # (an option's value on its own too: ``--cronjob=cron/webhook``)
        words = tuple(dict.fromkeys(part for w in words for part in (w, w.partition("=")[2])
                                    if part))
        run = ScriptRun(rel.rpartition("/")[0], words) if rel is not None else None
        return self.closure(php, php.root, run)

    def closure(self, php: PhpFile, node: Node, run: ScriptRun | None = None
                ) -> PhpCode:
        code = PhpCode()
        self._function(php, None, node, {}, code, 0, set(), run=run)
        code.files = list(dict.fromkeys([php.display, *code.files]))
        return code

    # -- one function
    def _function(self, php: PhpFile, cls: PhpClass | None, fn: Node,
                  bound: dict[str, Origin], code: PhpCode, depth: int,
                  active: set, tested: dict[str, Span] | None = None,
                  run: ScriptRun | None = None) -> list[Origin]:
        tested = tested or {}
        key = (php.display, fn.start_byte, tuple(sorted(bound.items(), key=lambda kv: kv[0])),
               tuple(sorted(tested.items(), key=lambda kv: kv[0])), run)
        if key in active:
            return []
        # a function's summary (its locks, facts, files and returned origins) is computed
        # once per binding of its parameters and replayed at every call
        summary_key = (*key, depth > 0)
        summary = self._summaries.get(summary_key)
        if summary is None:
            summary = self._summarize(php, cls, fn, bound, depth, active | {key}, tested,
                                      run)
            self._summaries[summary_key] = summary
        code.locks.extend(summary.locks)
        code.facts.extend(summary.facts)
        code.files.extend(summary.files)
        return list(summary.returns)

    def _summarize(self, php: PhpFile, cls: PhpClass | None, fn: Node,
                   bound: dict[str, Origin], depth: int, active: set,
                   tested: dict[str, Span], run: ScriptRun | None) -> _Summary:
        code = PhpCode()
        frame = _Frame(php, cls, fn, origins=dict(bound), tested=dict(tested),
                       run=run if fn.type == "program" else None)
        self._parameters(frame)
        body = fn if fn.type == "program" else fn.child_by_field_name("body")
        if body is None:
            return _Summary((), (), (), ())
        code.files.append(php.display)
        for node in walk(body, into_functions=False):
            self._node(node, frame, code, depth, active)
        self._close(frame, code, body, depth)
        return _Summary(tuple(code.locks), tuple(code.facts), tuple(code.files),
                        tuple(frame.returns))

    def _parameters(self, frame: _Frame) -> None:
        params = frame.function.child_by_field_name("parameters")
        for param in params.named_children if params is not None else ():
            kind, name = param.child_by_field_name("type"), param.child_by_field_name("name")
            if kind is not None and name is not None:
                frame.types[frame.php.text_of(name)] = frame.php.qualified(
                    frame.php.text_of(kind).lstrip("?"))

    def _node(self, node: Node, frame: _Frame, code: PhpCode, depth: int, active: set) -> None:
        php = frame.php
        kind = node.type
        if kind == "assignment_expression":
            self._assign(node, frame)
        elif kind == "exit_statement":
            frame.exits.append((php.span(node, whole=False), php.text_of(node).split("(")[0]
                                .strip().rstrip(";") + "()"))
        elif kind == "return_statement" and node.named_children:
            origin = self.origin(node.named_children[0], frame)
            if origin is not None:
                frame.returns.append(origin)
        elif kind in ("while_statement", "do_statement", "for_statement"):
            self._loop(node, frame, code)
        elif kind in CALL_NODES:
            self._call(node, frame, code, depth, active)
        elif kind in _INCLUDE_NODES and node.named_children:
            self._include(node.named_children[0], frame, code, depth, active)
        elif kind == "array_creation_expression":
            self._key_array(node, frame, code)

    # -- values
    def _assign(self, node: Node, frame: _Frame) -> None:
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        if left is None or right is None or left.type != "variable_name":
            return
        name = frame.php.text_of(left)
        frame.values[name] = right
        origin = self.origin(right, frame)
        if origin is not None:
            frame.origins[name] = origin
        else:
            frame.origins.pop(name, None)
        typed = self._type_of(right, frame)
        if typed:
            frame.types[name] = typed

    def _type_of(self, node: Node, frame: _Frame) -> str | None:
        php = frame.php
        if node.type == "object_creation_expression":
            name = next((c for c in node.named_children if c.type in ("name", "qualified_name")),
                        None)
            return php.qualified(php.text_of(name)) if name is not None else None
        if node.type == "variable_name":
            return frame.types.get(php.text_of(node))
        if node.type in ("function_call_expression", "scoped_call_expression"):
            # the container: app(StripeClient::class), resolve(…), App::make(…)
            called = call_name(node, php)
            args = arguments(node)
            if called in ("app", "resolve", "App::make", "app()->make") and args and \
                    php.text_of(args[0]).endswith("::class"):
                return php.qualified(php.text_of(args[0])[:-len("::class")])
        if node.type == "member_access_expression" and frame.cls is not None:
            obj, name = node.child_by_field_name("object"), node.child_by_field_name("name")
            if obj is not None and name is not None and php.text_of(obj) == "$this":
                return frame.cls.properties.get(php.text_of(name))
        return None

    def origin(self, node: Node | None, frame: _Frame, depth: int = 0) -> Origin | None:
        """Where a key's value comes from, when it is a per-run value or a fresh record."""
        if node is None or depth > 12:
            return None
        php = frame.php
        kind = node.type
        if kind == "variable_name":
            return frame.origins.get(php.text_of(node))
        if kind in ("member_access_expression", "nullsafe_member_access_expression",
                    "subscript_expression", "parenthesized_expression", "cast_expression",
                    "argument"):
            inner = node.child_by_field_name("object") or (
                node.named_children[-1] if kind == "cast_expression" else
                node.named_children[0] if node.named_children else None)
            return self.origin(inner, frame, depth + 1)
        if kind in ("binary_expression", "encapsed_string", "string", "array_creation_expression",
                    "array_element_initializer"):
            for child in node.named_children:
                found = self.origin(child, frame, depth + 1)
                if found is not None:
                    return found
            return None
        if kind == "object_creation_expression":
            name = php.text_of(node).split("(")[0].replace("new", "", 1).strip()
            if name.lstrip("\\") in ("DateTime", "DateTimeImmutable", "Carbon"):
                args = [a for a in arguments(node)]
                if not args or string_value(args[0], php) in ("now", ""):
                    return Origin("key-per-run", f"`new {name}()`", php.span(node))
            return None
        if kind in CALL_NODES:
            return self._call_origin(node, frame, depth)
        return None

    def _call_origin(self, node: Node, frame: _Frame, depth: int) -> Origin | None:
        php = frame.php
        name = call_name(node, php)
        bare = name.rsplit("::", 1)[-1].lstrip("->")
        if node.type == "function_call_expression":
            if name in _PER_RUN_FUNCTIONS:
                return Origin("key-per-run", f"`{_PER_RUN_FUNCTIONS[name]}`", php.span(node))
            if name in _PURE or name in ("str", "strval"):
                for arg in arguments(node):
                    found = self.origin(arg, frame, depth + 1)
                    if found is not None:
                        return found
            return None
        if node.type == "scoped_call_expression":
            scope = php.text_of(node.child_by_field_name("scope") or node).lstrip("\\")
            short = scope.rsplit("\\", 1)[-1]
            if short in _PER_RUN_CLASSES and bare in _PER_RUN_STATIC:
                return Origin("key-per-run", f"`{short}::{bare}()`", php.span(node))
            if bare in _CREATE_STATIC and short[:1].isupper() and short not in STRIPE_CLASSES:
                return Origin("key-fresh-record", f"the record `{short}::{bare}()` creates "
                              "in this run", php.span(node, whole=False))
        receiver = node.child_by_field_name("object")
        if node.type in ("member_call_expression", "nullsafe_member_call_expression"):
            if bare in ("lastInsertId", "insertGetId"):
                return Origin("key-fresh-record", f"`{bare}()` of a row inserted in this run",
                              php.span(node))
            if bare in ("create", "forceCreate") and receiver is not None and \
                    receiver.type in CALL_NODES:  # $subscription->invoices()->create([...])
                return Origin("key-fresh-record", f"the record `{php.text_of(receiver)}"
                              f"->{bare}()` creates in this run", php.span(node, whole=False))
            if bare in ("toString", "toRfc4122", "toBase32", "__toString", "getTimestamp",
                        "format", "getKey") or (bare.startswith("get") and not arguments(node)):
                # a getter of a fresh record or a per-run value (``$invoice->getId()``)
                return self.origin(receiver, frame, depth + 1)
        return None

    # -- calls
    def _call(self, node: Node, frame: _Frame, code: PhpCode, depth: int, active: set) -> None:
        php = frame.php
        name = call_name(node, php)
        if name in ("die", "exit"):
            frame.exits.append((php.span(node, whole=False), f"{name}()"))
            return
        if name == "register_shutdown_function":
            for arg in arguments(node):
                frame.shutdown_lines.append((arg.start_point.row + 1, arg.end_point.row + 1))
        self._persisted(node, name, frame)
        self._lock_call(node, name, frame, code)
        self._payment_call(node, name, frame, code)
        if depth < MAX_DEPTH:
            self._follow(node, frame, code, depth, active)

    def _persisted(self, node: Node, name: str, frame: _Frame) -> None:
        """``$em->persist($invoice)`` (Doctrine) or ``$invoice->save()`` (Eloquent) of an
        object made with ``new`` in this run: a record created now, whose id is new."""
        php = frame.php
        if name == "->persist":
            args = arguments(node)
            made = args[0] if args else None
        elif name == "->save":
            made = node.child_by_field_name("object")
        else:
            return
        if made is None or made.type != "variable_name":
            return
        value = frame.values.get(php.text_of(made))
        if value is not None and value.type == "object_creation_expression":
            cls = php.text_of(value).split("(")[0].replace("new", "", 1).strip()
            frame.origins[php.text_of(made)] = Origin(
                "key-fresh-record", f"the `new {cls}` record this run {name[2:]}s",
                php.span(value, whole=False))

    def _follow(self, node: Node, frame: _Frame, code: PhpCode, depth: int, active: set) -> None:
        """Into a project function or method the call reaches, with its arguments bound."""
        target = self._callee(node, frame)
        if target is None:
            return
        cls, fn = target
        params = fn.child_by_field_name("parameters")
        names = [frame.php.text_of(p.child_by_field_name("name") or p) for p in
                 (params.named_children if params is not None else ())]
        bound = {}
        dispatched = frame.php.text_of(node.child_by_field_name("name") or
                                       node.child_by_field_name("function") or node) \
            in _DISPATCH_METHODS | _DISPATCH_FUNCTIONS
        for name, arg in zip([] if dispatched else names, arguments(node)):
            origin = self.origin(arg, frame)
            if origin is not None:
                bound[name] = origin
        php = cls.php if cls is not None else frame.php
        # (the caller's tested lock paths, for a helper in the same file that creates one)
        tested = frame.tested if php is frame.php else None
        returns = self._function(php, cls, fn, bound, code, depth + 1, active, tested)
        parent = node.parent
        if returns and parent is not None and parent.type == "assignment_expression":
            left = parent.child_by_field_name("left")
            if left is not None and left.type == "variable_name":
                frame.origins[frame.php.text_of(left)] = returns[0]

    def _include(self, path: Node, frame: _Frame, code: PhpCode, depth: int,
                 active: set) -> None:
        """Into the top-level code of the project file that an ``include``/``require`` in
        a script's top-level code loads (it runs in place, as part of the script)."""
        run = frame.run
        own = self.index.rel_of(frame.php)
        if run is None or own is None:
            return
        directory = own.rpartition("/")[0]
        pieces = path_pieces(path, frame.php, directory, self._strings(frame))
        directories = tuple(dict.fromkeys((run.directory, directory)))
        for rel in self.index.included(pieces, directories, run.words):
            php = self.index.parsed(rel, keep=False)
            if php is not None:
                self._function(php, None, php.root, {}, code, depth, active, run=run)

    def _strings(self, frame: _Frame) -> dict[str, str]:
        return string_constants(frame.php, frame.cls.node if frame.cls is not None
                                else frame.php.root)

    def _callee(self, node: Node, frame: _Frame) -> tuple[PhpClass | None, Node] | None:
        php = frame.php
        name_node = node.child_by_field_name("name") or node.child_by_field_name("function")
        if name_node is None:
            return None
        method = php.text_of(name_node)
        if node.type == "function_call_expression":
            if method in _DISPATCH_FUNCTIONS:  # dispatch(new ChargeInvoice($id))
                made = next(iter(arguments(node)), None)
                name = made.named_children[0] if made is not None and \
                    made.type == "object_creation_expression" and made.named_children else None
                queued = self.index.klass(php.qualified(php.text_of(name))) if name else None
                return queued.method("handle", self.index) if queued else None
            found = self.index.function(method)
            return (None, found[1]) if found is not None else None
        cls: PhpClass | None = None
        if node.type == "member_call_expression" and method == "dispatch":
            # Symfony Messenger: $bus->dispatch(new ProcessTransfer(...)) runs the message's
            # handler (on a worker, or at once for a sync transport)
            made = next(iter(arguments(node)), None)
            name = made.named_children[0] if made is not None and \
                made.type == "object_creation_expression" and made.named_children else None
            if name is not None:
                handler = self.index.message_handler(php.qualified(php.text_of(name)), handles)
                if handler is not None:
                    return handler[0].method(handler[1], self.index)
        if node.type == "scoped_call_expression":
            scope = php.text_of(node.child_by_field_name("scope") or node)
            cls = frame.cls if scope in ("self", "static") else \
                (frame.cls.parent_class(self.index) if scope == "parent" and frame.cls else
                 self.index.klass(php.qualified(scope)))
            if method in _DISPATCH_METHODS and scope not in ("self", "static", "parent"):
                # AutoBill::dispatch($invoice): the job's handle() runs (on a worker)
                return cls.method("handle", self.index) if cls is not None else None
        else:
            receiver = node.child_by_field_name("object")
            if receiver is None:
                return None
            if php.text_of(receiver) == "$this":
                cls = frame.cls
            else:
                typed = self._type_of(receiver, frame)
                cls = self.index.klass(typed) if typed else None
        if cls is None:
            return None
        found_method = cls.method(method, self.index)
        return found_method if found_method is not None else None

    # -- locks
    def _lock_call(self, node: Node, name: str, frame: _Frame, code: PhpCode) -> None:
        php = frame.php
        args = arguments(node)
        if name == "flock" and len(args) >= 2:
            flags = php.text_of(args[1])
            handle = php.text_of(args[0])
            if "LOCK_UN" in flags:
                self._released(frame, handle, node)
                return
            if "LOCK_EX" not in flags and "LOCK_SH" not in flags:
                return
            nb = "LOCK_NB" in flags
            path = self._path_of(args[0], frame)
            # flock($fp, LOCK_EX | LOCK_NB, $wouldBlock): the third argument tells
            checked = _tested(node) or len(args) > 2
            lock = Lock(kind="flock", scope="host", span=php.span(node), path=path,
                        stale_handling="kernel", blocking=not nb, try_lock=nb,
                        result_checked=checked if nb else None, api="flock()")
            self._acquired(frame, code, lock, handle, node)
        elif name == "->lock" or name.endswith("::lock"):
            self._cache_lock(node, name, frame, code)
        elif (name == "->add" or name.endswith("::add")) and len(args) >= 2:
            self._cache_add(node, args, frame, code)
        elif (name == "->forget" or name.endswith("::forget")) and args and \
                _laravel_cache(node, php) is not None:
            self._released(frame, php.text_of(args[0]), node)
        elif name in ("->get", "->block", "->acquire", "->acquireRead"):
            self._lock_object_call(node, frame, code)
        elif name in ("->release", "->forceRelease"):
            receiver = node.child_by_field_name("object")
            self._released(frame, php.text_of(receiver) if receiver is not None else None, node)
        elif name in ("->createLock", "->createLockFromKey"):
            self._symfony_lock(node, frame)
        elif name in ("unlink", "rmdir") and args:
            self._released(frame, self._path_text(args[0], frame), node)
        elif name in ("file_exists", "is_file") and args:
            self._existence_test(node, args[0], frame)
        elif name in ("touch", "file_put_contents", "fopen", "mkdir") and args:
            self._file_lock(node, name, args, frame, code)
        for arg in args:
            sql = string_value(arg, php) or (php.text_of(arg) if arg.type == "encapsed_string"
                                             else None)
            if sql:
                self._sql_lock(node, sql, frame, code)
        receiver = node.child_by_field_name("object")
        if name == "->lock" and receiver is not None and php.text_of(receiver) == "$this" and \
                frame.cls is not None and "LockableTrait" in frame.cls.traits:
            # Symfony's LockableTrait: a flock (or semaphore) lock, local to the host
            lock = Lock(kind="flock", scope="host", span=php.span(node), stale_handling="kernel",
                        blocking=bool(len(args) > 1 and php.text_of(args[1]) == "true"),
                        try_lock=True, result_checked=_tested(node),
                        api="LockableTrait::lock()", release="process-exit")
            self._acquired(frame, code, lock, None, node)

    def _cache_lock(self, node: Node, name: str, frame: _Frame, code: PhpCode) -> None:
        """``Cache::lock($name, $seconds)``, ``Cache::store('redis')->lock(...)``,
        ``cache()->lock(...)``: a Laravel atomic lock (seconds 0: no expiry)."""
        php = frame.php
        store = _laravel_cache(node, php)
        if store is None:
            return
        args = arguments(node)
        seconds = number_value(args[1], php, self._constants(frame)) if len(args) > 1 else 0.0
        known = len(args) < 2 or seconds is not None
        driver = self.cache.driver_of(store or None) if self.cache is not None else store
        if known and not seconds and driver == "database":
            seconds = DATABASE_LOCK_SECONDS  # the database store's own default expiry
        scope = self._store_scope(store or None)
        lock = Lock(kind="cache-lock", scope=scope or "cluster", span=php.span(node),
                    key=(string_value(args[0], php) or php.text_of(args[0])) if args else None,
                    ttl_seconds=(seconds or None) if known else UNKNOWN_TTL, stale_handling="ttl",
                    try_lock=True, api="Cache::lock()",
                    confidence=Confidence.HIGH if scope else Confidence.MEDIUM)
        parent = node.parent
        chained = parent is not None and parent.type == "member_call_expression" and \
            parent.child_by_field_name("object") == node
        if chained and parent is not None:  # Cache::lock(...)->get(): judged at the get()
            self._acquire_cache(parent, lock, None, frame, code)
        elif parent is not None and parent.type == "assignment_expression":
            left = parent.child_by_field_name("left")
            if left is not None:
                frame.pending[php.text_of(left)] = lock

    def _cache_add(self, node: Node, args: list[Node], frame: _Frame, code: PhpCode) -> None:
        """``if (!Cache::add($key, true, 1800)) return;``: a try-lock on a cache key
        (no TTL: kept until forgotten)."""
        php = frame.php
        store = _laravel_cache(node, php)
        if store is None or not _tested(node):
            return  # a plain cache write, not a claim
        ttl_node = args[2] if len(args) > 2 else None
        ttl = number_value(ttl_node, php, self._constants(frame)) if ttl_node is not None \
            else None
        if ttl_node is not None and ttl is None:
            ttl = UNKNOWN_TTL  # a Carbon date or a setting: set, not known
        scope = self._store_scope(store or None)
        lock = Lock(kind="cache-key", scope=scope or "cluster", span=php.span(node, whole=False),
                    key=string_value(args[0], php) or php.text_of(args[0]), ttl_seconds=ttl,
                    stale_handling="ttl", try_lock=True, result_checked=True, api="Cache::add()",
                    confidence=Confidence.HIGH if scope else Confidence.MEDIUM)
        self._acquired(frame, code, lock, php.text_of(args[0]), node)

    def _lock_object_call(self, node: Node, frame: _Frame, code: PhpCode) -> None:
        php = frame.php
        receiver = node.child_by_field_name("object")
        if receiver is None:
            return
        handle = php.text_of(receiver)
        lock = frame.pending.get(handle)
        if lock is None:
            return
        self._acquire_cache(node, lock, handle, frame, code)

    def _acquire_cache(self, call: Node, lock: Lock, handle: str | None, frame: _Frame,
                       code: PhpCode) -> None:
        php = frame.php
        method = php.text_of(call.child_by_field_name("name") or call)
        args = arguments(call)
        if method == "get" and args and args[0].type in ("anonymous_function", "arrow_function"):
            lock = replace(lock, release="with", result_checked=True)
        elif method == "get" or (method == "acquire" and not (args and php.text_of(args[0]) == "true")):
            lock = replace(lock, result_checked=_tested(call))
        elif method == "block" or method == "acquire":
            wait = number_value(args[0], php) if args and method == "block" else None
            lock = replace(lock, try_lock=False, blocking=True, wait_seconds=wait,
                           result_checked=None)
        else:
            return
        # the finding about the TTL points at the call that sets it (``Cache::lock(..., 0)``)
        lock = replace(lock, span=php.span(call, whole=False), ttl_span=lock.span)
        self._acquired(frame, code, lock, handle, call)

    def _symfony_lock(self, node: Node, frame: _Frame) -> None:
        """``$factory->createLock($resource, $ttl = 300.0, $autoRelease = true)``."""
        php = frame.php
        parent = node.parent
        if parent is None or parent.type != "assignment_expression":
            return
        left = parent.child_by_field_name("left")
        args = arguments(node)
        ttl_node = named_argument(node, "ttl", php) or (args[1] if len(args) > 1 else None)
        ttl = number_value(ttl_node, php, self._constants(frame)) if ttl_node is not None else 300.0
        no_ttl = ttl_node is not None and php.text_of(ttl_node).lower() == "null"
        auto = named_argument(node, "autoRelease", php) or (args[2] if len(args) > 2 else None)
        scope = self.lock_store_scope
        store = self._symfony_store(node, frame)
        if store is not None:
            scope = "host" if store in SYMFONY_HOST_STORES else "cluster"
        kernel = scope == "host"
        # (no store configured: the framework's default, a semaphore or flock: the host)
        lock = Lock(kind="symfony-lock", scope=scope or "host", span=php.span(node),
                    key=(string_value(args[0], php) or php.text_of(args[0])) if args else None,
                    ttl_seconds=None if (no_ttl or kernel or ttl is None) else ttl,
                    stale_handling="kernel" if kernel else "ttl" if (ttl or no_ttl) else "none",
                    try_lock=True, api="LockFactory::createLock()",
                    release="with" if auto is None or php.text_of(auto) != "false" else "unknown",
                    confidence=Confidence.HIGH if scope else Confidence.LOW)
        if left is not None:
            frame.pending[php.text_of(left)] = lock

    def _symfony_store(self, node: Node, frame: _Frame) -> str | None:
        """The store class of a factory made in sight: ``new LockFactory(new RedisStore(...))``."""
        php = frame.php
        receiver = node.child_by_field_name("object")
        made = frame.values.get(php.text_of(receiver)) if receiver is not None else None
        text = php.text_of(made) if made is not None else ""
        m = re.search(r"new\s+\\?(?:[\w\\]*\\)?(\w+Store)\b", text)
        if m:
            return m.group(1)
        return None

    def _store_scope(self, store: str | None) -> LockScope | None:
        """Where a cache store's locks live: the named store's driver, or the default."""
        if self.cache is not None:
            return self.cache.scope_of(store)
        return CacheStore(store, None).scope if store else None

    def _sql_lock(self, node: Node, sql: str, frame: _Frame, code: PhpCode) -> None:
        php = frame.php
        if _SQL_UNLOCK.search(sql):
            within = _inside(node, frame.shutdown_lines)
            for held in frame.held:
                if held.lock.session and held.release == "none":
                    held.release = "atexit" if within else self._release_kind(node, frame)
                    held.release_at = php.span(node, whole=False)
            return
        m = _SQL_LOCK.search(sql)
        if not m:
            return
        function = m.group(1).upper()
        args = [a.strip() for a in m.group(2).split(",")]
        try_lock, wait = True, None
        blocking: bool | None = False
        if function == "PG_ADVISORY_LOCK":
            try_lock, blocking = False, True
        elif function == "GET_LOCK" and len(args) > 1:
            try:
                wait = float(args[1])
            except ValueError:  # a bound parameter (``:timeout``): not known statically
                wait = None
                try_lock, blocking = False, None
            else:
                try_lock, blocking = wait == 0, wait != 0
                if wait < 0:
                    wait = None  # a negative timeout waits forever
        key = args[0] if args[0] and not args[0].startswith((":", "?", "$")) else None
        lock = Lock(kind="mysql-get-lock" if function == "GET_LOCK" else "pg-advisory",
                    scope="cluster", span=php.span(node, whole=False), key=key,
                    stale_handling="session", session=True, blocking=blocking, try_lock=try_lock,
                    wait_seconds=wait, result_checked=_tested(node) if try_lock else None,
                    api=m.group(1) + "()")
        self._acquired(frame, code, lock, None, node)

    # -- lock files
    def _path_text(self, node: Node, frame: _Frame) -> str:
        """A path's literal value, also through the variable it was assigned to."""
        value = string_value(node, frame.php)
        if value is None and node.type == "variable_name":
            value = string_value(frame.values.get(frame.php.text_of(node)), frame.php)
        return value if value is not None else frame.php.text_of(node)

    def _path_of(self, handle: Node, frame: _Frame) -> str | None:
        """The file a handle was opened on (``$fp = fopen($path, 'c')``)."""
        made = frame.values.get(frame.php.text_of(handle))
        if made is not None and made.type == "function_call_expression" and \
                call_name(made, frame.php) == "fopen":
            args = arguments(made)
            if args:
                path = args[0]
                value = string_value(path, frame.php)
                if value is None and path.type == "variable_name":
                    value = string_value(frame.values.get(frame.php.text_of(path)), frame.php)
                return value or frame.php.text_of(path)
        return None

    def _existence_test(self, node: Node, path: Node, frame: _Frame) -> None:
        text = self._path_text(path, frame)
        if _LOCKISH.search(text) or _LOCKISH.search(frame.php.text_of(path)):
            frame.tested[frame.php.text_of(path)] = frame.php.span(node, whole=False)

    def _file_lock(self, node: Node, name: str, args: list[Node], frame: _Frame,
                   code: PhpCode) -> None:
        php = frame.php
        path_text = php.text_of(args[0])
        shown = self._path_text(args[0], frame)
        if not (_LOCKISH.search(shown) or _LOCKISH.search(path_text)):
            return
        tested = frame.tested.get(path_text)
        mode = string_value(args[1], php) if len(args) > 1 else None
        if name == "fopen" and not (mode or "").startswith("x") and \
                (tested is None or not (mode or "").startswith(("w", "a"))):
            return  # opened for flock (or not after a test of its existence)
        atomic = (name == "fopen" and (mode or "").startswith("x")) or \
            (name == "mkdir" and _tested(node))
        if not atomic and tested is None:
            return
        body = php.text_of(frame.function)
        # an age: the lock's mtime, or a wait that gives up after a while (dokuwiki's
        # io_lock: "waited longer than 3 seconds? -> stale lock")
        stale: StaleHandling = "pid-check" if re.search(r"posix_kill|posix_getpgid|/proc/", body) else \
            "age-check" if re.search(r"filemtime|filectime|->getMTime|time\(\)\s*-", body) \
            else "none"
        if stale == "none" and path_name(args[0], php, self._strings(frame)) in \
                self.index.aged_names():
            stale = "age-check"  # another function (another job) reads its age
        lock = Lock(kind="lock-dir" if name == "mkdir" else "pid-file" if "pid" in shown.lower()
                    else "lock-file", scope="host", span=php.span(node, whole=False), path=shown,
                    stale_handling=stale, existence_test=tested if not atomic else None,
                    atomic=atomic,
                    api=f"{name}()")
        self._acquired(frame, code, lock, shown, node)

    # -- acquisition and release
    def _acquired(self, frame: _Frame, code: PhpCode, lock: Lock, handle: str | None,
                  node: Node) -> None:
        refused = _refused_branch(node)
        loop = _retry_loop(node)
        frame.held.append(_Held(replace(lock, function=_function_name(frame)), handle,
                                refused=refused, retry_loop=(loop.start_point.row + 1,
                                                             loop.end_point.row + 1)
                                if loop is not None else None))
        if lock.try_lock and lock.result_checked is False:
            code.facts.append(CodeFact("unchecked-try-lock", lock.span, lock.api or lock.kind,
                                       lock))
        if lock.try_lock and refused is not None:
            self._retried_by_queue(frame, code, lock, node, refused)

    def _released(self, frame: _Frame, handle: str | None, node: Node) -> None:
        for held in reversed(frame.held):
            if held.retry_loop is not None and \
                    held.retry_loop[0] <= node.start_point.row + 1 <= held.retry_loop[1]:
                continue  # clearing a stale lock before trying again, not the release
            if held.release == "none" and handle is not None and held.handle == handle:
                held.release = "atexit" if _inside(node, frame.shutdown_lines) else \
                    self._release_kind(node, frame)
                held.release_at = frame.php.span(node, whole=False)
                held.release_in_catch = _within(node, "catch_clause")
                return

    def _release_kind(self, node: Node, frame: _Frame) -> str:
        """A release in ``finally`` — or in a ``catch``, which runs exactly when an
        exception would skip a plain release — is not skipped by an exception."""
        return "finally" if _within(node, "finally_clause") or \
            _within(node, "catch_clause") else "plain"

    def _close(self, frame: _Frame, code: PhpCode, body: Node, depth: int) -> None:
        """The function's locks with their releases and scopes, and the exits inside them."""
        end = body.end_point.row + 1
        for held in frame.held:
            lock = held.lock
            if (held.release == "none" or held.release_in_catch) and lock.release != "with" and (
                    lock.kind == "cache-key" or
                    (lock.kind == "cache-lock" and lock.ttl_seconds is not None)):
                # never released (or only when the work fails): Cache::add stores a value
                # or gates a period, and an
                # expiring Cache::lock(k, 60)->get() is a throttle that lets one run in
                # per period — not locks around a run (a Cache::lock with no expiry at all
                # stays a lock held forever: JOB206)
                continue
            if depth > 0 and lock.kind == "flock" and held.release_at is not None and \
                    not self._runs_callback(frame, lock.span.line, held.release_at.line):
                # a helper that locks and unlocks around its own few lines (reading and
                # writing a PID file): a critical section, not the guard of the run
                continue
            release = lock.release if lock.release in ("with", "process-exit") else held.release
            if lock.stale_handling == "kernel" and release == "none":
                release = "process-exit"
            scope_end = held.release_at.line if held.release_at is not None else end
            lock = replace(lock, release=release,  # type: ignore[arg-type]
                           release_span=held.release_at if release == "plain" else None,
                           scope_lines=(lock.span.line, scope_end))
            code.locks.append(lock)
            if not lock.outlives_process or release in ("atexit", "with", "process-exit"):
                continue
            for span, what in frame.exits:
                if lock.holds(span.line) and not (held.refused and
                                                 held.refused[0] <= span.line <= held.refused[1]) \
                        and span.line != lock.span.line:
                    code.facts.append(CodeFact("exit-in-scope", span, f"`{what}`", lock))

    @staticmethod
    def _runs_callback(frame: _Frame, start: int, end: int) -> bool:
        """Whether the lines between a lock and its release call a callable the function
        was given (``$work()``, ``call_user_func($fn)``): a lock helper around the job."""
        for node in walk(frame.function):
            line = node.start_point.row + 1
            if not start < line < end or node.type != "function_call_expression":
                continue
            function = node.child_by_field_name("function")
            if function is not None and (function.type == "variable_name" or
                                         frame.php.text_of(function) in ("call_user_func",
                                                                         "call_user_func_array")):
                return True
        return False

    def _constants(self, frame: _Frame) -> dict[str, float]:
        return constant_values(frame.php, frame.cls.node if frame.cls is not None
                               else frame.php.root)

    # -- retries
    def _loop(self, node: Node, frame: _Frame, code: PhpCode) -> None:
        """``while (!flock($fp, LOCK_EX | LOCK_NB)) { usleep(…); }`` with no deadline."""
        php = frame.php
        condition = node.child_by_field_name("condition")
        body = node.child_by_field_name("body")
        if condition is None or body is None:
            return
        cond = php.text_of(condition)
        # only a try that does not wait (a GET_LOCK(x, 1) loop waits on purpose)
        if not re.search(r"LOCK_NB|->get\(\s*\)|->acquire\(\s*\)|GET_LOCK\([^,()]*,\s*0\s*\)|"
                         r"try_advisory", cond):
            return
        if re.search(r"[<>]=?|\$\w*(?:attempt|tries|retr|count|deadline)", cond.replace("->", "")):
            return  # a loop bounded by a counter or a deadline
        sleeps = [n for n in walk(body) if n.type == "function_call_expression" and
                  call_name(n, php) in _SLEEPS]
        exits = [n for n in walk(body) if n.type in ("break_statement", "return_statement",
                                                       "exit_statement", "throw_expression")]
        if sleeps and not exits:
            lock = None
            code.facts.append(CodeFact(
                "retry-on-lock", php.span(node, whole=False),
                f"a `{node.type.split('_')[0]}` loop around `{php.text_of(condition)[1:-1].strip()}` "
                f"with `{call_name(sleeps[0], php)}()` and no deadline", lock))

    def _retried_by_queue(self, frame: _Frame, code: PhpCode, lock: Lock, node: Node,
                          refused: tuple[int, int]) -> None:
        """A busy lock that throws in a queued job with retries: the queue retries it."""
        cls = frame.cls
        if cls is None or not cls.retries:
            return
        branch = _refused_node(node)
        if branch is None or not any(n.type == "throw_expression" for n in walk(branch)):
            return
        code.facts.append(CodeFact("retry-on-lock", cls.retries[1],
                                   f"the queue's retries (`{cls.retries[0]}`) of a job that "
                                   "throws when the lock is busy", lock))

    # -- payments
    def _payment_call(self, node: Node, name: str, frame: _Frame, code: PhpCode) -> None:
        api = self._stripe_api(node, name, frame)
        if api is None:
            return
        php = frame.php
        args = arguments(node)
        options = args[1] if len(args) > 1 else named_argument(node, "opts", php)
        span = php.span(node, whole=False)
        if options is None:
            code.facts.append(CodeFact("key-missing", span, api, api=api,
                                       key="idempotency_key"))
            return
        if options.type == "array_creation_expression" and not any(
                _element_key(e, php) == "idempotency_key" for e in options.named_children):
            code.facts.append(CodeFact("key-missing", span, api, api=api,
                                       key="idempotency_key"))

    def _stripe_api(self, node: Node, name: str, frame: _Frame) -> str | None:
        php = frame.php
        if name.endswith(("::create", "::createReversal")) and \
                node.type == "scoped_call_expression":
            scope = php.text_of(node.child_by_field_name("scope") or node)
            full = php.qualified(scope)
            short = full.rsplit("\\", 1)[-1]
            if full.startswith("Stripe\\") and short in STRIPE_CLASSES and \
                    (name.endswith("::create") or short == "Transfer"):
                return f"\\Stripe\\{short}::{name.rsplit('::', 1)[-1]}"
            return None
        if name not in ("->create", "->createReversal"):
            return None
        receiver = node.child_by_field_name("object")
        if receiver is None or receiver.type != "member_access_expression":
            return None
        service = php.text_of(receiver.child_by_field_name("name") or receiver)
        if service not in STRIPE_SERVICES:
            return None
        client = receiver.child_by_field_name("object")
        typed = self._type_of(client, frame) if client is not None else None
        if typed is None or typed.rsplit("\\", 1)[-1] != "StripeClient" or \
                (name == "->createReversal" and service != "transfers"):
            return None
        return f"StripeClient->{service}{name}"

    def _key_array(self, node: Node, frame: _Frame, code: PhpCode) -> None:
        """``['idempotency_key' => …]``, ``'Idempotency-Key' => …`` headers: the key's origin."""
        php = frame.php
        for element in node.named_children:
            key = _element_key(element, php)
            shown = KEY_NAMES.get((key or "").lower())
            if shown is None or len(element.named_children) < 2:
                continue
            origin = self.origin(element.named_children[-1], frame)
            if origin is None:
                continue
            call = _enclosing_call(node)
            if call is not None and _reads(call, php):
                continue  # a key on a read (PaymentIntent::retrieve) changes nothing
            api = call_name(call, php).lstrip("->") if call is not None else "the request"
            span = php.span(call, whole=False) if call is not None else php.span(element)
            code.facts.append(CodeFact(origin.kind, span, origin.detail, origin=origin.span,
                                       api=_api_text(call, php) if call is not None else api,
                                       key=shown))


# --------------------------------------------------------------------------- helpers

def _laravel_cache(call: Node, php: PhpFile) -> str | None:
    """For a call on Laravel's cache (``Cache::…``, ``cache()->…``,
    ``Cache::store('redis')->…``): the store it names ("" for the default); None for a
    call on something else."""
    receiver = call.child_by_field_name("object") or call.child_by_field_name("scope")
    text = php.text_of(receiver) if receiver is not None else ""
    head = text.split("::")[0].split("(")[0]
    if not (head in ("cache", "Cache", "\\Cache") or
            php.qualified(head).endswith("Facades\\Cache")):
        return None
    store = re.search(r"(?:store|driver)\(\s*['\"](\w+)['\"]", text)
    return store.group(1) if store else ""


def _reads(call: Node, php: PhpFile) -> bool:
    """A call that only reads (``retrieve``, ``all``, ``search``, ``get…``, ``list``)."""
    name = call_name(call, php).rsplit("::", 1)[-1].lstrip("->")
    return name in ("retrieve", "all", "search", "list") or name.startswith("get")


def _element_key(element: Node, php: PhpFile) -> str | None:
    if element.type != "array_element_initializer" or len(element.named_children) < 2:
        return None
    return string_value(element.named_children[0], php)


def _enclosing_call(node: Node) -> Node | None:
    current = node.parent
    while current is not None and current.type not in CALL_NODES:
        if current.type in ("expression_statement", "compound_statement"):
            return None
        current = current.parent
    return current


def _api_text(call: Node, php: PhpFile) -> str:
    """``$stripe->charges->create``, ``\\Stripe\\Charge::create``: the call without its
    arguments, one line."""
    args = call.child_by_field_name("arguments")
    text = php.text_of(call)[:(args.start_byte - call.start_byte) if args is not None else None]
    return " ".join(text.split())


def _tested(call: Node) -> bool:
    """Whether a call's result is used: a condition, an assignment, a return, an argument."""
    current = call.parent
    while current is not None and current.type in ("unary_op_expression",
                                                   "parenthesized_expression",
                                                   "error_suppression_expression",
                                                   "binary_expression", "cast_expression"):
        if current.parent is not None and current.parent.type in (
                "if_statement", "while_statement", "do_statement", "conditional_expression"):
            return True
        current = current.parent
    if current is None:
        return False
    return current.type not in ("expression_statement",)


def _refused_node(call: Node) -> Node | None:
    """The branch an ``if (!$lock->get())`` takes when the lock is busy (also
    ``if (($fp = @fopen($f, 'x')) === false)``, and ``$fp = @fopen($f, 'x');`` followed by
    ``if (!$fp)`` or ``if ($fp === false)``)."""
    assigned = _assigned_statement(call)
    if assigned is not None:
        variable, statement = assigned
        following = statement.next_named_sibling
        while following is not None and following.type == "comment":
            following = following.next_named_sibling
        condition = following.child_by_field_name("condition") \
            if following is not None and following.type == "if_statement" else None
        tested = next((n for n in walk(condition) if n.type == "variable_name" and
                       n.text == variable), None) if condition is not None else None
        return _branch_taken(tested, following) if tested is not None else None
    return _branch_taken(call, None)


def _assigned_statement(call: Node) -> tuple[bytes, Node] | None:
    """``$fp = @fopen(...);`` as a statement of its own: the variable and the statement."""
    current = call.parent
    while current is not None and current.type in ("error_suppression_expression",
                                                   "parenthesized_expression"):
        current = current.parent
    if current is None or current.type != "assignment_expression" or \
            current.parent is None or current.parent.type != "expression_statement":
        return None
    left = current.child_by_field_name("left")
    return (left.text, current.parent) if left is not None and \
        left.type == "variable_name" and left.text else None


def _branch_taken(call: Node, if_statement: Node | None) -> Node | None:
    """The branch of the enclosing ``if`` taken when ``call`` (or the variable tested)
    is false."""
    current = call.parent
    negated = False
    while current is not None and current.type in ("unary_op_expression",
                                                   "parenthesized_expression",
                                                   "error_suppression_expression",
                                                   "assignment_expression",
                                                   "binary_expression"):
        if current.type == "unary_op_expression" and current.text and current.text.startswith(b"!"):
            negated = not negated
        if current.type == "binary_expression":
            operator = current.child_by_field_name("operator")
            right = current.child_by_field_name("right")
            if operator is None or right is None or operator.text not in (
                    b"===", b"==", b"!==", b"!=") or (right.text or b"").lower() not in (b"false", b"null"):
                return None  # (a condition of another shape: not read)
            if operator.text in (b"===", b"=="):
                negated = not negated  # "=== false": the body runs when it failed
        current = current.parent
    if current is not None and current.type == "if_statement" and \
            if_statement is not None and current != if_statement:
        return None
    if current is None or current.type != "if_statement":
        return None
    if negated:
        return current.child_by_field_name("body")
    alternative = current.child_by_field_name("alternative")
    return alternative


def _retry_loop(call: Node) -> Node | None:
    """The ``while``/``do`` loop whose condition is this acquisition (``while
    (!@mkdir($lock)) { … }``), or whose body assigns its result that the condition tests."""
    current = call.parent
    while current is not None and current.type in ("unary_op_expression",
                                                   "parenthesized_expression",
                                                   "error_suppression_expression",
                                                   "assignment_expression", "binary_expression",
                                                   "expression_statement"):
        current = current.parent
    if current is not None and current.type in ("while_statement", "do_statement"):
        return current
    if current is not None and current.type == "compound_statement" and \
            current.parent is not None and current.parent.type in ("while_statement",
                                                                   "do_statement"):
        return current.parent
    return None


def _refused_branch(call: Node) -> tuple[int, int] | None:
    branch = _refused_node(call)
    return (branch.start_point.row + 1, branch.end_point.row + 1) if branch is not None else None


def _inside(node: Node, regions: list[tuple[int, int]]) -> bool:
    line = node.start_point.row + 1
    return any(a <= line <= b for a, b in regions)


def _within(node: Node, clause: str) -> bool:
    """Whether ``node`` is inside a clause of this type (``finally_clause``,
    ``catch_clause``) of its own function."""
    current = node.parent
    while current is not None:
        if current.type == clause:
            return True
        if current.type in ("method_declaration", "function_definition", "anonymous_function"):
            return False
        current = current.parent
    return False


def _function_name(frame: _Frame) -> str | None:
    name = frame.function.child_by_field_name("name")
    if name is None:
        return None
    text = frame.php.text_of(name)
    return f"{frame.cls.name}::{text}" if frame.cls is not None else text

