"""jobsafe's own failures, kept apart from findings about the analysed files.

A bug in a front end or a rule must never look like a clean run: it is not a finding that
``--select`` or a suppression could hide, but an ``InternalError`` that the command line
names on stderr, with exit status 2, after everything else has been reported. The test
suite sets ``JOBSAFE_RAISE_INTERNAL_ERRORS=1`` so that such a bug raises instead, and a
broken parser cannot pass a test by producing nothing.
"""
from __future__ import annotations

import os
import re
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


#: The shallowest input seen to exhaust Python's stack inside jobsafe is about 140 levels of
#: brackets; below this depth a ``RecursionError`` is jobsafe's own bug, not the input's.
SHALLOW_DEPTH = 50

_OPEN_CLOSE = re.compile(r"[(\[{]|[)\]}]")


def bracket_depth(text: str) -> int:
    """The deepest nesting of brackets of any kind in a text."""
    depth = deepest = 0
    for m in _OPEN_CLOSE.finditer(text):
        depth = depth + 1 if m.group() in "([{" else max(depth - 1, 0)
        deepest = max(deepest, depth)
    return deepest


_LOGICAL = re.compile(r"[(\[{]|[)\]}]|\\?\n")


def longest_logical_line(text: str) -> int:
    """The length of the longest logical line: physical lines joined inside brackets or
    after a backslash (brackets in strings and comments count too: an unbalanced one makes
    the rest of the text one line, which errs on the safe side)."""
    depth = start = longest = 0
    for m in _LOGICAL.finditer(text):
        token = m.group()
        if token[-1] == "\n":
            if depth == 0 and token == "\n":
                longest = max(longest, m.start() - start)
                start = m.end()
        elif token in "([{":
            depth += 1
        else:
            depth = max(depth - 1, 0)
    return max(longest, len(text) - start)


def text_depth(text: str) -> int:
    """How deeply a text nests: its deepest brackets, or its deepest indentation (in steps
    of two columns), whichever is more."""
    indent = max((len(line) - len(line.lstrip(" \t")) for line in text.splitlines()), default=0)
    return max(bracket_depth(text), indent // 2)


class InternalRecursion(RuntimeError):
    """A ``RecursionError`` on an input too shallow to explain it: jobsafe recursed without
    end. It is an internal error (exit 2), never a finding about the input."""
