"""Text edits that fixes are made of, shared by the front ends (which know where an
argument is written) and the rules (which know what it should say)."""
from __future__ import annotations

from .model import ArgumentSlot, TextEdit


def argument_edits(slot: ArgumentSlot, text: str, why: str) -> tuple[TextEdit, ...]:
    """Give the call's argument the value ``text``: replace it where it is written, else
    add it after the last argument; ``why`` goes into a comment at the line's end."""
    if slot.value is not None:
        edit = TextEdit(slot.value, text)
    else:
        edit = TextEdit(slot.after_arguments,
                        f"{'' if slot.first else ', '}{slot.keyword}={text}")
    if slot.line_end is None:
        return (edit,)
    return edit, TextEdit(slot.line_end, f"  # {why}")
