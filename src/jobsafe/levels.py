"""How bad and how sure a finding is: apart from the model, so that reading the
configuration (which names them) does not load it — the pre-commit fast path reads the
configuration and little else."""
from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class Severity(str, Enum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return ("info", "warning", "error").index(self.value)


class Confidence(str, Enum):
    """How sure a finding is of the facts it rests on (bandit's idea, beside severity):
    ``high`` when each was parsed exactly, ``medium`` when one was inferred through the
    project's code (a receiver's type followed through a factory, a lock taken through a
    project abstraction), ``low`` when one rests on a name or a content sniff."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"

    @property
    def rank(self) -> int:
        return ("low", "medium", "high").index(self.value)

    @staticmethod
    def weakest(facts: Iterable[object]) -> Confidence:
        """The confidence of a conclusion drawn from ``facts`` (confidences, or facts that
        carry one; others are ignored)."""
        found = [c for c in (f if isinstance(f, Confidence) else getattr(f, "confidence", None)
                             for f in facts) if isinstance(c, Confidence)]
        return min(found, key=lambda c: c.rank, default=Confidence.HIGH)
