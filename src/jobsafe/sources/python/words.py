"""The prefilter's words: for each recogniser, the words without which a module holds
nothing it recognises. Regular expressions; a tuple is a conjunction (every word of it must
appear).

Kept apart from the recognisers, which import libcst (a tenth of a second): a run whose
modules all come from the cache builds the prefilter from these and never loads it.
"""
from __future__ import annotations

from .apis import LOCK_DECORATORS

#: a lock this project recognises in a call (``lock_calls``). "lock" but not
#: "block"/"clock", nor ``skip_locked`` / ``SKIP LOCKED`` (a query's row locks, which no
#: recogniser models)
LOCK_CALLS = (r"(?<![bcBC])(?<!skip_)lock", "Lock", r"(?<![BC])(?<!SKIP )LOCK", "acquire",
              "setnx", r"nx\s*=",
              "advisory", "O_EXCL", r"(?<![A-Za-z])pid", "Pid", "PID", "SingleInstance",
              "Redlock", "QueueOnce", "Semaphore", "mutex",
              *(rf"\b{name.rsplit('.', 1)[-1]}\b" for name in LOCK_DECORATORS),
              r"cache\.add\(|caches\[.*\]\.add\(",  # Django's cache.add(key) as a lock
              # a service registry: what ``find_service`` hands out (``semantics``)
              r"\bregister_service(?:_factory)?\(",
              # a hand-made lock file without a lock-like name: tested, created
              # (what lock_calls' _creation recognises), removed
              (r"exists|isfile|is_file|access\(", r"lck|\.remove\(|unlink\(|rmdir\(",
               r"open\(|mkdir\(|touch\(|write_text\("))

#: a database lock (``db_locks``)
DB_LOCKS = ("select_for_update", "with_for_update", r"(?i)for\s+update",
            "update_on_match", r"\.for_update\(",
            r"(?i)\block\s+(?:table\s+)?\S+\s+in\s",
            # a claim: an update whose row count is kept, tested or returned
            (r"(?:=|\bif\b|\breturn\b|\bnot\b|\bwhile\b)[^\n#]*\.update\(",
             r"\.filter(?:_by)?\(|\.where\("),
            # ... as black writes it: `claimed = (` then the chain over lines,
            # `.update(` opening a line or right after the model's name
            (r"(?:=|\bif\b|\breturn\b|\bnot\b)\s*\(\n[^#;]{0,400}?\n\s*\.update\(",
             r"\.filter(?:_by)?\(|\.where\("),
            (r"(?:=|\bif\b|\breturn\b|\bnot\b)\s*\(\n[ \t]*[\w.]+\.update\(",
             r"\.filter(?:_by)?\(|\.where\("),
            (r"(?i)\bupdate\s+\w+\s+set\b", r"rowcount|returning|RETURNING"),
            (r"IntegrityError", r"\.create\(|\.get_or_create\(|force_insert"))

#: a side effect or key ``idempotency`` judges: a key or a payment API, or a value that
#: changes every run together with a write whose path could carry it (JOB404)
IDEMPOTENCY = ("idempoten", "Idempoten", "dedup", "Dedup", "ClientToken", "Request-Id",
               "stripe", "Stripe", r"(?<![\w.])square[._\s]|squareup", "adyen", "Adyen",
               "run_instances", r"send_message\(", "create_payment", "payments",
               (r"uuid|random|secrets|now\(|time\(|getpid|strftime",
                r"open\(|write_text|write_bytes|to_csv|to_excel|to_parquet|to_json|savefig|"
                r"put_object|upload_file"))

#: a schedule declared in code (``schedulers``)
SCHEDULERS = (r"(?i)beat_schedule", "CELERYBEAT", "add_job", "scheduled_job",
              r"every\(", "periodic_task", "CRONJOBS", "Scheduler", "CronJobBase",
              "run_pending", "add_periodic_task",
              # a scheduler made in another module, started here (its kind is the
              # tree's to tell): ``from .extensions import scheduler; scheduler.start()``
              r"sched\w*\.start\(",
              # a Celery app's hard time limit for its tasks (their jobs' runtime bound)
              "task_time_limit",
              # Celery beat entries in a dict of any name: {"x": {"task": …, "schedule": …}}
              (r"[\"']task[\"']\s*:", r"[\"']schedule[\"']\s*:"))

#: every recogniser's words, in the order the prefilter tries them
ALL = (*LOCK_CALLS, *DB_LOCKS, *IDEMPOTENCY, *SCHEDULERS)
