"""jobsafe's own failures, kept apart from findings about the analysed files.

A bug in a front end or a rule must never look like a clean run: it is not a finding that
``--select`` or a suppression could hide, but an ``InternalError`` that the command line
names on stderr, with exit status 2, after everything else has been reported. The test
suite sets ``JOBSAFE_RAISE_INTERNAL_ERRORS=1`` so that such a bug raises instead, and a
broken parser cannot pass a test by producing nothing.
"""
from __future__ import annotations

import os
from dataclasses import dataclass

RAISE_ENV = "JOBSAFE_RAISE_INTERNAL_ERRORS"


@dataclass(frozen=True)
class InternalError:
    """Where jobsafe failed (a file, or a rule id) and the exception, in one line."""

    where: str
    message: str

    @classmethod
    def of(cls, where: str, exc: BaseException) -> "InternalError":
        return cls(where, f"{type(exc).__name__}: {exc}".splitlines()[0])


def raise_internal_errors() -> bool:
    """Strict mode: let an internal error propagate (the test suite's setting)."""
    return os.environ.get(RAISE_ENV) == "1"
