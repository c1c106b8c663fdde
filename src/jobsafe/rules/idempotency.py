"""4xx: a second run must not repeat side effects."""
from __future__ import annotations

from ..model import Severity, message
from .common import FactRule


class NondeterministicIdempotencyKey(FactRule):
    id = "JOB401"
    name = "nondeterministic-idempotency-key"
    severity = Severity.ERROR
    summary = "An idempotency or de-duplication key derived from a value that changes every run."
    fix = "unsafe"  # a rerun of the same work is now recognised as a repeat
    fix_message = "build the key from the stable identifiers the call already passes"
    sources = ("python", "php")
    fact_kind = "key-per-run"

    def message(self, fact):
        return message("{key} for {api} comes from {origin}, a new value on every run: a "
                       "rerun is not recognised as a repeat and the side effect happens again; "
                       "build the key from stable identifiers (the record's id and the billing "
                       "period)", key=str(fact.key), api=str(fact.api), origin=fact.detail)


class KeyFromFreshRecord(FactRule):
    id = "JOB402"
    name = "key-from-fresh-record"
    severity = Severity.ERROR
    summary = "An idempotency key derived from the id of a record created in the same run."
    sources = ("python", "php")
    fact_kind = "key-fresh-record"

    def message(self, fact):
        return message("{key} for {api} comes from {origin}: a rerun creates a new record "
                       "and so a new key, and the call repeats; key it on what the record "
                       "stands for (get_or_create on stable fields, or the subscription and "
                       "period)", key=str(fact.key), api=str(fact.api), origin=fact.detail)


class MissingIdempotencyKey(FactRule):
    id = "JOB403"
    name = "missing-idempotency-key"
    severity = Severity.WARNING
    summary = "A state-changing call to an API that supports idempotency keys, made without one."
    sources = ("python", "php")
    fact_kind = "key-missing"

    def message(self, fact):
        return message("{api} is called without {key}: a retried or rerun job repeats the "
                       "side effect (a second charge, a second instance); pass a key built "
                       "from stable identifiers", api=str(fact.api), key=str(fact.key))


class NondeterministicOutputPath(FactRule):
    id = "JOB404"
    name = "nondeterministic-output-path"
    severity = Severity.INFO
    summary = "An artifact written to a path built from the current time or a random id."
    sources = ("python",)
    fact_kind = "path-per-run"
    jobs_only = True  # a queue or cache writing unique files by design is not a job artifact

    def message(self, fact):
        return message("{api} writes to a path built from {origin}: a rerun writes a second "
                       "artifact (and sends or uploads it again) instead of replacing the "
                       "first; name it after the period being processed", api=str(fact.api),
                       origin=fact.detail)
