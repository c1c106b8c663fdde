"""Which modules reach libcst: a fast scan of the text for the recognisers' own words.

``words`` lists the words of each recogniser (lock calls, database locks, idempotency,
schedulers): regular expressions, and tuples of them that must all appear. A module is
parsed for its own sake when one of them appears in its code — not in docstrings, comments
or prose strings — and it is not test code. ``tests/test_prefilter.py`` proves that no
fixture finding is lost.

Python's ``re`` tries every branch of a long alternation at every position, so each word
also carries literal strings one of which every match contains ("lock" for
``(?<![bcBC])lock``): ``str.__contains__`` rules most files out first, three times faster
than the regular expressions alone, with the same verdicts.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from ...paths import is_test_path
from .words import ALL


@dataclass(frozen=True)
class Word:
    pattern: re.Pattern
    #: literals one of which every match contains (empty: none could be derived)
    cores: tuple[str, ...]

    @classmethod
    def of(cls, regex: str) -> "Word":
        cores = tuple(_longest_literal(branch) for branch in _branches(regex))
        return cls(re.compile(regex), cores if all(cores) else ())

    def found(self, text: str) -> bool:
        if self.cores and not any(core in text for core in self.cores):
            return False
        return self.pattern.search(text) is not None


@dataclass(frozen=True)
class Vocabulary:
    words: tuple[Word, ...]  # any one of them makes a module worth parsing
    conjunctions: tuple[tuple[Word, ...], ...]  # all the words of one of them do
    #: literals of the words and first conjuncts: a text with none of them cannot match
    hints: tuple[str, ...] | None


@cache
def vocabulary() -> Vocabulary:
    """Built on first use (compiling the expressions takes a few milliseconds)."""
    words = tuple(Word.of(t) for t in ALL if isinstance(t, str))
    conjunctions = tuple(tuple(Word.of(w) for w in t) for t in ALL if isinstance(t, tuple))
    firsts = [*words, *(c[0] for c in conjunctions)]
    hints = tuple(sorted({core for w in firsts for core in w.cores})) \
        if all(w.cores for w in firsts) else None
    return Vocabulary(words, conjunctions, hints)


#: documentation does not run: docstrings (a triple-quoted string that opens a module or
#: follows a ``def``/``class`` line), whole-line comments, and prose in one-line strings
#: (``Field(description="...")``) are blanked before the test
_DOCUMENTATION = re.compile(r"(?:\A|:[ \t]*(?:#[^\n]*)?\n)[ \t]*[rRuU]?(\"\"\"|\'\'\')[\s\S]*?\1|"
                            r"^[ \t]*#[^\n]*|"
                            r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'", re.M)


_SQL = re.compile(r"\s*(?:select|update|insert|delete|lock|with)\s", re.I)


def _blank(match: re.Match) -> str:
    text = match.group(0)
    if text[0] in "\"'" and text[1:2] != text[0]:  # a one-line string literal
        # paths, keys, headers and SQL stay; sentences go
        prose = text.count(" ") >= 3 and "(" not in text and not _SQL.match(text[1:])
        return "''" if prose else text
    return ""


def worth_parsing(rel: str, text: str) -> bool:
    """Whether a module is analysed for its own sake. Test code is not: it takes locks to
    exercise them, and the rules count its locks only when a job runs it, which parses it
    then (reachability does not ask the prefilter). Other code is, when its vocabulary says
    it can matter."""
    return not is_test_path(rel) and may_matter(text)


def may_matter(text: str) -> bool:
    """Whether a module can hold a lock, a schedule or a side effect jobsafe judges."""
    v = vocabulary()
    if v.hints is not None and not any(hint in text for hint in v.hints):
        return False
    code = _DOCUMENTATION.sub(_blank, text)
    # a conjunction's later words are plain screens (``.filter(``), tried before its first,
    # which may be a dear expression (``= ... .update(`` scans the line after every ``=``)
    return any(w.found(code) for w in v.words) or any(
        all(w.found(code) for w in reversed(conjunction)) for conjunction in v.conjunctions)


# -- literals of a regular expression


def _branches(regex: str) -> list[str]:
    """The top-level alternatives of a regular expression."""
    out, current, depth, i = [], "", 0, 0
    while i < len(regex):
        c = regex[i]
        if c == "\\":
            current += regex[i:i + 2]
            i += 2
            continue
        if c == "[":
            end = _class_end(regex, i)
            current += regex[i:end + 1]
            i = end + 1
            continue
        depth += (c == "(") - (c == ")")
        if c == "|" and depth == 0:
            out.append(current)
            current = ""
        else:
            current += c
        i += 1
    return [*out, current]


def _class_end(regex: str, start: int) -> int:
    """The index of the ``]`` closing the character class that opens at ``start``."""
    i = start + 1
    if regex[i:i + 1] == "^":
        i += 1
    if regex[i:i + 1] == "]":
        i += 1
    while regex[i] != "]":
        i += 2 if regex[i] == "\\" else 1
    return i


def _group_end(regex: str, start: int) -> int:
    depth, i = 0, start
    while True:
        c = regex[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _class_end(regex, i) + 1
            continue
        depth += (c == "(") - (c == ")")
        if depth == 0:
            return i
        i += 1


def _longest_literal(branch: str) -> str:
    """The longest run of characters every match of ``branch`` (no top-level ``|``) holds in
    a row: groups, classes, ``.`` and anchors end a run; ``?``, ``*`` and ``{`` also take
    back the character they make optional."""
    runs, current, i = [], "", 0
    while i < len(branch):
        c = branch[i]
        if c == "\\":
            escaped = branch[i + 1]
            if escaped.isalnum():  # \s, \w, \d, \b ...: not a literal
                runs.append(current)
                current = ""
            else:
                current += escaped
            i += 2
        elif c in "([":
            runs.append(current)
            current = ""
            i = (_group_end(branch, i) if c == "(" else _class_end(branch, i)) + 1
        elif c in "?*{":
            runs.append(current[:-1])
            current = ""
            i = branch.index("}", i) + 1 if c == "{" else i + 1
        elif c in "+.^$":
            runs.append(current)
            current = ""
            i += 1
        else:
            current += c
            i += 1
    runs.append(current)
    return max(runs, key=len)
