"""Idempotency: where a key (or an artifact's path) comes from, followed through a function.

A local, flow-insensitive data flow: each name gets the origin of what was last assigned to
it — tuple unpacking, f-strings, ``%``/``.format``, ``str()``, ``hashlib`` digests, dict
literals and ``d[k] = v``, ``**kwargs`` and the return values of simple helpers in the same
module. Origins are ranked: a value that changes every run (``uuid4()``, ``time.time()``,
``datetime.now()`` to the second) beats one from a record created in this run
(``Model.objects.create()``, ``cursor.lastrowid``), which beats anything stable.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import libcst as cst

from ...model import CodeFact, FactKind, Span, TextEdit
from .syntax import walk
from .values import argument

PER_RUN_CALLS = {
    "uuid.uuid1": "uuid.uuid1()", "uuid.uuid4": "uuid.uuid4()",
    "random.random": "random.random()", "random.randint": "random.randint()",
    "random.choice": "random.choice()", "random.getrandbits": "random.getrandbits()",
    "random.randrange": "random.randrange()", "secrets.token_hex": "secrets.token_hex()",
    "secrets.token_urlsafe": "secrets.token_urlsafe()", "secrets.token_bytes": "secrets.token_bytes()",
    "secrets.randbits": "secrets.randbits()", "secrets.choice": "secrets.choice()",
    "os.urandom": "os.urandom()", "time.time": "time.time()", "time.time_ns": "time.time_ns()",
    "time.monotonic": "time.monotonic()", "time.perf_counter": "time.perf_counter()",
    "datetime.datetime.now": "datetime.now()", "datetime.datetime.utcnow": "datetime.utcnow()",
    "django.utils.timezone.now": "timezone.now()", "os.getpid": "os.getpid()",
    "builtins.id": "id()", "arrow.now": "arrow.now()", "arrow.utcnow": "arrow.utcnow()",
    "pendulum.now": "pendulum.now()",
}
STABLE_UUIDS = {"uuid.uuid3", "uuid.uuid5"}
#: strftime directives finer than a day: a path or key with them changes within a day
_TIME_OF_DAY = re.compile(r"%[HIMSfpsXTcr]")
PASS_THROUGH = {"builtins.str", "builtins.repr", "builtins.format", "builtins.bytes",
                "builtins.int", "builtins.hex", "base64.b64encode", "base64.urlsafe_b64encode"}
HASHES = {"hashlib.sha256", "hashlib.sha1", "hashlib.md5", "hashlib.sha512", "hashlib.blake2b",
          "hashlib.new", "hmac.new"}
KEY_HEADERS = {"idempotency-key", "x-idempotency-key", "paypal-request-id", "idempotency_key"}
KEY_KEYWORDS = {"idempotency_key", "IdempotencyKey", "ClientToken", "ClientRequestToken",
                "MessageDeduplicationId", "idempotencyKey", "request_id_header"}
_KEY_NAME = re.compile(r"(?i)idempoten|dedup")
#: Stripe resources whose create() moves money
STRIPE_RESOURCES = {"PaymentIntent", "Charge", "Refund", "Transfer", "Payout"}
STRIPE_SERVICES = {"payment_intents", "charges", "refunds", "transfers", "payouts"}
WRITE_CALLS = {"to_csv", "to_excel", "to_parquet", "to_json", "savefig", "write_text",
               "write_bytes"}


@dataclass(frozen=True)
class Origin:
    rank: int  # 2 per run, 1 fresh record
    what: str
    span: Span


def _worst(*origins: Origin | None) -> Origin | None:
    found = [o for o in origins if o is not None]
    return max(found, key=lambda o: o.rank) if found else None


_FLOW_NODES = frozenset({cst.Call, cst.Assign, cst.AnnAssign, cst.AugAssign})


class KeyFlow:
    """Origins of values in one function (``an`` is the module analyser, for metadata)."""

    def __init__(self, an, nodes, helpers: dict[str, Origin | None]):
        self.an = an
        self.nodes = nodes
        self.helpers = helpers  # module functions -> origin of what they return
        self.names: dict[str, Origin | None] = {}
        self.assigned: dict[str, cst.BaseExpression] = {}  # name -> last expression assigned
        self.dicts: dict[str, dict[str, cst.BaseExpression]] = {}
        self.added: set[str] = set()  # objects passed to session.add()
        self.host_origins: dict[int, Origin | None] = {}  # node id -> _host_origin's answer
        self._run()

    # -- assignments, in source order
    def _run(self) -> None:
        for node in self.nodes:
            if type(node) not in _FLOW_NODES:  # exact types: see module._PREPASS_NODES
                continue
            if type(node) is cst.Call:
                self._note_session_add(node)
            if type(node) is cst.Assign:
                for target in node.targets:
                    self._assign(target.target, node.value)
            elif type(node) is cst.AnnAssign and node.value is not None:
                self._assign(node.target, node.value)
            elif type(node) is cst.AugAssign:
                name = self.an.code(node.target)
                self.names[name] = _worst(self.names.get(name), self.origin(node.value))

    def _assign(self, target, value) -> None:
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List)):
            for t, v in zip(target.elements, value.elements):
                self._assign(t.value, v.value)
            return
        if isinstance(target, (cst.Tuple, cst.List)):
            # obj, created = Model.objects.get_or_create(...): stable, as is each element
            origin = self.origin(value)
            for t in target.elements:
                self.names[self.an.code(t.value)] = origin
            return
        name = self.an.code(target)
        if isinstance(target, cst.Subscript):  # headers["Idempotency-Key"] = value
            base = self.an.code(target.value)
            key = self._subscript_key(target)
            if base in self.dicts:  # only dicts whose every key is known
                if key is None:
                    del self.dicts[base]
                else:
                    self.dicts[base][key] = value
            return
        self.assigned[name] = value
        if isinstance(value, cst.Dict) and all(isinstance(e, cst.DictElement) for e in value.elements):
            self.dicts[name] = {k: v for k, v in self._dict_items(value)}
        elif isinstance(value, cst.Call) and self.an.qualified(value.func) == {"builtins.dict"} \
                and all(a.keyword is not None for a in value.args):
            self.dicts[name] = {a.keyword.value: a.value for a in value.args
                                if a.keyword is not None}
        else:
            self.dicts.pop(name, None)
        self.names[name] = self.origin(value)

    def _note_session_add(self, call: cst.Call) -> None:
        func = call.func
        if isinstance(func, cst.Attribute) and func.attr.value in ("add", "add_all") and \
                "session" in self.an.code(func.value).lower() and call.args:
            self.added.add(self.an.code(call.args[0].value))

    def _subscript_key(self, node: cst.Subscript) -> str | None:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            return self.an.eval.string(node.slice[0].slice.value)
        return None

    def _dict_items(self, node: cst.Dict):
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                key = self.an.eval.string(element.key)
                if key is not None:
                    yield key, element.value

    # -- origin of an expression
    def origin(self, node, depth: int = 0) -> Origin | None:
        if node is None or depth > 12:
            return None
        an = self.an
        kind = type(node)  # (exact types: isinstance goes through ABCMeta)
        if kind is cst.Name:
            return self.names.get(node.value)
        if kind is cst.Attribute:
            text = an.code(node)
            if text in self.names:
                return self.names[text]
            base = an.code(node.value)
            if node.attr.value in ("id", "pk", "uuid", "number") and base in self.added:
                return Origin(1, f"{base}.{node.attr.value} of a record added in this run",
                              an.span(node))
            if node.attr.value == "lastrowid":
                return Origin(1, "cursor.lastrowid", an.span(node))
            return self.origin(node.value, depth + 1)
        if isinstance(node, cst.Call):
            return self._call_origin(node, depth)
        if isinstance(node, cst.FormattedString):
            return _worst(*(self.origin(p.expression, depth + 1) for p in node.parts
                            if isinstance(p, cst.FormattedStringExpression)
                            and not _day_format(p, an)))
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Modulo) and an.eval.string(node.left):
                return self.origin(node.right, depth + 1)
            return _worst(self.origin(node.left, depth + 1), self.origin(node.right, depth + 1))
        if isinstance(node, (cst.Tuple, cst.List)):
            return _worst(*(self.origin(e.value, depth + 1) for e in node.elements))
        if isinstance(node, cst.Subscript):
            base = an.code(node.value)
            key = self._subscript_key(node)
            if base in self.dicts and key in self.dicts[base]:
                return self.origin(self.dicts[base][key], depth + 1)
            return self.origin(node.value, depth + 1)
        if isinstance(node, cst.ConcatenatedString):
            return _worst(self.origin(node.left, depth + 1), self.origin(node.right, depth + 1))
        return None

    def _call_origin(self, call: cst.Call, depth: int) -> Origin | None:
        an = self.an
        names = an.qualified(call.func)
        if isinstance(call.func, cst.Name) and call.func.value.startswith("create_"):
            return Origin(1, f"{call.func.value}()", an.span(call))
        for name in sorted(names):
            if name in PER_RUN_CALLS:
                return Origin(2, PER_RUN_CALLS[name], an.span(call))
            if name in STABLE_UUIDS:
                return _worst(*(self.origin(a.value, depth + 1) for a in call.args))
            if name in self.helpers:
                return self.helpers[name]
        func = call.func
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = an.code(func.value)
            if method == "strftime":
                fmt = an.eval.string(argument(call, "format", 0)) or ""
                if not _TIME_OF_DAY.search(fmt):
                    return None  # a date or a period: the same for every run that day
                return self.origin(func.value, depth + 1)
            if method in ("date", "today") or (method == "replace" and _truncates(call)):
                return None
            if method == "create" and receiver.endswith(".objects"):
                return Origin(1, f"{receiver}.create()", an.span(call))
            if method in ("get_or_create", "update_or_create", "get", "filter", "first"):
                return None
            if method in ("hexdigest", "digest", "encode", "decode", "lower", "upper", "strip",
                          "isoformat", "format", "join", "replace", "timestamp"):
                parts = [self.origin(func.value, depth + 1)]
                parts += [self.origin(a.value, depth + 1) for a in call.args]
                return _worst(*parts)
            if method in ("fetchone", "fetchall", "scalar", "scalar_one", "first") and \
                    self._inserted(func.value):
                return Origin(1, "INSERT … RETURNING", an.span(call))
        if names & (PASS_THROUGH | HASHES) or (isinstance(func, cst.Name) and
                                                func.value in ("str", "format")):
            return _worst(*(self.origin(a.value, depth + 1) for a in call.args))
        return None

    def _inserted(self, cursor) -> bool:
        text = self.an.code(cursor)
        for node in self.nodes:
            if type(node) is cst.Call and type(node.func) is cst.Attribute and \
                    node.func.attr.value == "execute" and self.an.code(node.func.value) == text:
                sql = self.an.eval.string(argument(node, None, 0)) or ""
                if re.search(r"(?is)\binsert\b.*\breturning\b", sql):
                    return True
        return False


HOST_CALLS = {"socket.gethostname": "socket.gethostname()", "platform.node": "platform.node()",
              "socket.getfqdn": "socket.getfqdn()", "os.uname": "os.uname()"}


def _host_origin(an, flow: KeyFlow, node, depth: int = 0) -> Origin | None:
    """A value that differs per host (hostname, node name) inside an expression (each node
    judged once per function: names assigned from names would repeat the walk)."""
    if node is None or depth > 8:
        return None
    key = id(node)
    if key not in flow.host_origins:
        flow.host_origins[key] = None  # a cycle of assignments finds nothing more
        flow.host_origins[key] = _find_host_origin(an, flow, node, depth)
    return flow.host_origins[key]


def _find_host_origin(an, flow: KeyFlow, node, depth: int) -> Origin | None:
    if isinstance(node, cst.Name) and node.value in flow.assigned:
        return _host_origin(an, flow, flow.assigned[node.value], depth + 1)
    if isinstance(node, cst.Call):
        for name in an.qualified(node.func):
            if name in HOST_CALLS:
                return Origin(2, HOST_CALLS[name], an.span(node))
    for child in walk(node):
        kind = type(child)  # (exact types: isinstance goes through ABCMeta)
        if kind is cst.Call:
            for name in an.qualified(child.func):
                if name in HOST_CALLS:
                    return Origin(2, HOST_CALLS[name], an.span(child))
        if kind is cst.Name and child.value in flow.assigned and depth < 8:
            found = _host_origin(an, flow, flow.assigned[child.value], depth + 1)
            if found is not None:
                return found
    return None


def _day_format(part: cst.FormattedStringExpression, an) -> bool:
    """``f"{now:%Y-%m-%d}"``: a date, the same all day."""
    spec = part.format_spec
    if not spec:
        return False
    text = "".join(an.code(p) for p in spec)
    return not _TIME_OF_DAY.search(text)


def _truncates(call: cst.Call) -> bool:
    return any(a.keyword is not None and a.keyword.value in ("hour", "minute", "second")
               for a in call.args)


# --------------------------------------------------------------------------- sinks


def helper_origins(an, units) -> dict[str, Origin | None]:
    """What each function of the module returns (two rounds: helpers calling helpers)."""
    helpers: dict[str, Origin | None] = {}
    for _ in range(2):
        for unit in units:
            if not isinstance(unit.node, cst.FunctionDef) or "." in unit.name:
                continue
            nodes = an._nodes_of(unit)
            flow = KeyFlow(an, nodes, helpers)
            returned = [flow.origin(n.value) for n in nodes if type(n) is cst.Return]
            helpers[unit.name] = _worst(*returned)
    return helpers


def key_origin(an, flow: KeyFlow, node) -> Origin | None:
    """What makes a lock key differ between runs or hosts, if anything does."""
    return _worst(flow.origin(node), _host_origin(an, flow, node))


def argument_origins(an, flow: KeyFlow, call: cst.Call) -> tuple[tuple[str, str, Span], ...]:
    """The arguments of a call that differ per host or per run: (position "#i" or keyword,
    what makes them so, where) — a helper taking a lock with a key it is given needs them."""
    out = []
    position = 0
    for arg in call.args:
        if arg.star:
            continue
        key = arg.keyword.value if arg.keyword is not None else f"#{position}"
        if arg.keyword is None:
            position += 1
        origin = key_origin(an, flow, arg.value)
        if origin is not None:
            out.append((key, origin.what, origin.span))
    return tuple(out)


def key_facts(an, nodes, helpers, acquisitions=(), flow: KeyFlow | None = None) -> list[CodeFact]:
    """JOB401-JOB404 facts of one function, and JOB304 for its cluster locks' keys."""
    if not any(type(n) is cst.Call for n in nodes):
        return []
    flow = flow or KeyFlow(an, nodes, helpers)
    facts: list[CodeFact] = []
    for lock, at, _ in acquisitions:
        key = an.lock_keys.get(id(at))
        origin = key_origin(an, flow, key) if key is not None else None
        if origin is not None and lock.scope == "cluster":
            facts.append(CodeFact("lock-key-per-host", an.span(at), origin.what, lock,
                                  origin=origin.span))
    for call in (n for n in nodes if type(n) is cst.Call):
        facts += _key_sinks(an, flow, call)
        missing = _missing_key(an, flow, call)
        if missing is not None:
            api, key = missing
            facts.append(CodeFact("key-missing", an.span(call), f"{api} without {key}", api=api,
                                  key=key))
        facts += _artifact_paths(an, flow, call, nodes)
    return facts


def _api_name(an, call: cst.Call) -> str:
    return an.code(call.func)[:60]


def _key_sinks(an, flow: KeyFlow, call: cst.Call) -> list[CodeFact]:
    keys: list[tuple[str, cst.BaseExpression]] = []
    for arg in call.args:
        if arg.keyword is not None and (arg.keyword.value in KEY_KEYWORDS or
                                        _KEY_NAME.search(arg.keyword.value)):
            keys.append((arg.keyword.value, arg.value))
        else:  # headers=, options=, body=, a request dict, **kwargs: keys inside dicts
            keys += _dict_keys(an, flow, arg.value)
    facts = []
    for name, value in keys:
        origin = flow.origin(value)
        if origin is None:
            continue
        kind: FactKind = "key-per-run" if origin.rank == 2 else "key-fresh-record"
        remedy = _stable_key(an, flow, call, value) if kind == "key-per-run" else ()
        facts.append(CodeFact(kind, an.span(call), origin.what, origin=origin.span,
                              api=_api_name(an, call), key=name, remedy=remedy))
    return facts


#: attributes and names that identify what a call is about, or the period it is for
_IDENTIFIER = re.compile(r"(?:^|_)(?:id|pk|uuid|period|period_start|date|month)$")


def _stable_key(an, flow: KeyFlow, call: cst.Call, key: cst.BaseExpression
                ) -> tuple[TextEdit, ...]:
    """An edit that builds the key from the stable identifiers the call already passes
    (``customer=sub.customer_id``, ``period=invoice.period``): the same work gives the same
    key on a rerun. None when the call passes no such value (a key from something else
    would be a guess)."""
    found: dict[str, None] = {}
    inside_key = {id(n) for n in walk(key)} | {id(key)}
    for arg in call.args:
        for node in (arg.value, *walk(arg.value)):
            name = node.attr.value if isinstance(node, cst.Attribute) else \
                node.value if isinstance(node, cst.Name) else None
            if name is None or id(node) in inside_key or not _IDENTIFIER.search(name) or \
                    flow.origin(node) is not None:
                continue
            if isinstance(node, cst.Name) and isinstance(an._parent.get(node), cst.Attribute):
                continue  # the base of an attribute, not a value of its own
            found.setdefault(an.code(node))
    if not found:
        return ()
    stem = re.sub(r"[^a-z0-9]+", "-", an.code(call.func).rsplit(".", 2)[-2].lower() if
                  "." in an.code(call.func) else an.code(call.func).lower()).strip("-")
    parts = "-".join("{" + text + "}" for text in list(found)[:3])
    return (TextEdit(an.span(key), f'f"{stem}-{parts}"'),)


def _dict_keys(an, flow: KeyFlow, node) -> list[tuple[str, cst.BaseExpression]]:
    items: dict[str, cst.BaseExpression] = {}
    if type(node) is cst.Dict:
        items = dict(flow._dict_items(node))
    else:
        items = flow.dicts.get(an.code(node), {})
    return [(k, v) for k, v in items.items()
            if k.lower() in KEY_HEADERS or k in KEY_KEYWORDS or _KEY_NAME.search(k)]


def _has_key(an, flow: KeyFlow, call: cst.Call, keys: set[str], containers=()) -> bool | None:
    """Whether the call passes one of ``keys``; None when ``**kwargs`` hides the answer."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in keys:
            return True
        if arg.keyword is not None and arg.keyword.value in containers or (
                arg.keyword is None and not arg.star and containers == ("*positional",)):
            if any(k in keys for k, _ in _all_items(an, flow, arg.value)):
                return True
        if arg.star == "**":
            items = _all_items(an, flow, arg.value)
            if not items or any(k in keys for k, _ in items):
                return None
    return False


def _all_items(an, flow: KeyFlow, node):
    if isinstance(node, cst.Dict):
        return list(flow._dict_items(node))
    return list(flow.dicts.get(an.code(node), {}).items())


def _missing_key(an, flow: KeyFlow, call: cst.Call) -> tuple[str, str] | None:
    names = an.qualified(call.func)
    func = call.func
    stripe_module = next((n for n in names if n.startswith("stripe.") and
                          n.split(".")[1] in STRIPE_RESOURCES and n.endswith(".create")), None)
    if stripe_module:
        return _report(_has_key(an, flow, call, {"idempotency_key"}), stripe_module,
                       "idempotency_key=")
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    receiver = an.code(func.value)
    last = receiver.rsplit(".", 1)[-1]
    if method == "create" and last in STRIPE_SERVICES and \
            "stripe" in receiver.lower() + _root_binding(an, func.value):
        return _report(_has_key(an, flow, call, {"idempotency_key"}, ("options",)),
                       f"StripeClient {last}.create", "options={'idempotency_key': …}")
    square = "square" in receiver.lower() + _root_binding(an, func.value)
    if square and (method == "create_payment" or (method == "create" and last == "payments")):
        return _report(_has_key(an, flow, call, {"idempotency_key"}, ("*positional", "body")),
                       f"Square {method}", "idempotency_key")
    if method == "payments" and ("adyen" in receiver.lower() or last == "payments_api"):
        return _report(_has_key(an, flow, call, {"idempotency_key"}), "Adyen payments",
                       "idempotency_key=")
    if method == "run_instances":
        return _report(_has_key(an, flow, call, {"ClientToken"}), "EC2 run_instances",
                       "ClientToken=")
    if method == "send_message":
        url = an.eval.string(argument(call, "QueueUrl", None)) or ""
        fifo = url.endswith(".fifo") or any(a.keyword is not None and a.keyword.value == "MessageGroupId"
                                            for a in call.args)
        if fifo:
            return _report(_has_key(an, flow, call, {"MessageDeduplicationId"}),
                           "SQS FIFO send_message", "MessageDeduplicationId=")
    return None


def _root_binding(an, node) -> str:
    """Lower-cased qualified name of what the receiver's root name was created from."""
    root = node
    while isinstance(root, cst.Attribute):
        root = root.value
    return " ".join(sorted(an.qualified(root))).lower() + " " + \
        " ".join(sorted(an.client_kinds.get(an.code(root), ()))).lower()


def _report(has: bool | None, api: str, key: str) -> tuple[str, str] | None:
    """(the API, the key it lacks) when the call has no key."""
    return None if has is not False else (api, key)


def _artifact_paths(an, flow: KeyFlow, call: cst.Call, nodes) -> list[CodeFact]:
    func = call.func
    names = an.qualified(func)
    target = None
    if names & {"builtins.open", "io.open"}:
        mode = an.eval.string(argument(call, "mode", 1)) or "r"
        if any(c in mode for c in "wax"):
            target = argument(call, "file", 0)
    elif isinstance(func, cst.Attribute):
        method = func.attr.value
        if method in WRITE_CALLS:
            target = func.value if method in ("write_text", "write_bytes") else argument(call, None, 0)
        elif method in ("upload_file", "upload_fileobj"):
            target = argument(call, "Key", 2)
        elif method == "put_object":
            target = argument(call, "Key", None)
    if target is None:
        return []
    origin = flow.origin(target)
    if origin is None or origin.rank != 2:
        return []
    text = an.code(target)
    removed = any(isinstance(n, cst.Call) and an.qualified(n.func) & {"os.remove", "os.unlink"}
                  and n.args and an.code(n.args[0].value) == text for n in nodes)
    if removed:
        return []  # a temporary file, removed in the same run
    return [CodeFact("path-per-run", an.span(call), origin.what, origin=origin.span,
                     api=_api_name(an, call))]
