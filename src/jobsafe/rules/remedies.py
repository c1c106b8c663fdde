"""How fixes spell their remedies: a duration in each tool's syntax, a crontab command
wrapped in front of its first word, a YAML key inserted at a block mapping's indentation.

Every edit is text at a recorded position; nothing is re-serialised, so comments, key order
and indentation stay as written.
"""
from __future__ import annotations

import math
import re

from ..edits import argument_edits
from ..model import ArgumentSlot, KeySlot, Span, TextEdit

#: a command the shell runs as one program with its arguments (and output redirections):
#: a prefix in front of its first word wraps all of it
_WORD = r"[\w./:@+=,-]+"
_REDIRECT = r"\d?>>?\s*" + _WORD + r"|2>&1|<\s*" + _WORD
_SIMPLE = re.compile(rf"{_WORD}(?:\s+(?:{_REDIRECT}|{_WORD}))*")
#: commands the shell runs itself: ``timeout cd`` would fail
_BUILTINS = {"cd", "export", "source", ".", "exec", "set", "ulimit", "umask", "test", "[",
             "eval", "trap", "wait", "read", "unset", "alias", "if", "for", "while", "case"}


def coreutils_duration(seconds: float) -> str:
    """``timeout``'s spelling: 5m, 1h, 2d, 90s (whole units, rounded up)."""
    whole = math.ceil(seconds)
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if whole % size == 0:
            return f"{whole // size}{unit}"
    return f"{whole}s"


def systemd_duration(seconds: float) -> str:
    """A unit file's spelling: 5min, 1h, 2d, 90s."""
    spelled = coreutils_duration(seconds)
    return spelled[:-1] + "min" if spelled.endswith("m") else spelled


def wrap_crontab_command(command: str, at: Span, prefix: str) -> tuple[TextEdit, ...]:
    """Edits that run the crontab command ``command`` (written at ``at``) under ``prefix``
    (``flock -n /var/lock/x.lock timeout 5m``): in front of it when it is one program,
    else around ``sh -c '…'`` (timeout signals the whole process group it starts, so the
    shell's children go too). No edits when the line cannot be wrapped exactly: a ``%``
    (cron's stdin separator) in it, or a single quote in a command that needs the shell."""
    command = command.strip()
    first = command.split(maxsplit=1)[0] if command else ""
    if not command or "%" in command:
        return ()
    start = Span(at.path, at.line, at.column, at.line, at.column)
    if _SIMPLE.fullmatch(command) and first not in _BUILTINS and "=" not in first:
        return (TextEdit(start, prefix + " "),)
    if "'" in command:
        return ()
    end = Span(at.path, at.end_line, at.end_column, at.end_line, at.end_column)
    return TextEdit(start, prefix + " sh -c '"), TextEdit(end, "'")


def yaml_keys(slot: KeySlot, lines: list[str]) -> TextEdit:
    """Insert ``lines`` (relative to the mapping: nested ones indented by two more) as keys
    of the block mapping ``slot`` belongs to, at its indentation."""
    indent = " " * slot.indent
    return TextEdit(slot.at, "".join(indent + line + "\n" for line in lines))


def delete_line(span: Span) -> TextEdit:
    """Remove the line of ``span``, with its line break."""
    return TextEdit(Span(span.path, span.line, 1, span.line + 1, 1), "")


def ttl_edits(slot: ArgumentSlot, seconds: float, why: str) -> tuple[TextEdit, ...]:
    """Set the lock call's TTL to ``seconds``, with ``why`` in a comment."""
    amount = seconds / slot.unit
    return argument_edits(slot, str(int(amount)) if float(amount).is_integer()
                          else f"{amount:g}", why)
