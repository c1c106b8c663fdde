"""9xx: findings about the analysis itself."""
from __future__ import annotations

from ..model import SOURCE_FAMILIES, Severity, message, prose
from . import Rule


class ParseErrorRule(Rule):
    id = "JOB900"
    name = "parse-error"
    severity = Severity.ERROR
    summary = "A recognised file could not be parsed; the rest of the analysis goes on."
    sources = SOURCE_FAMILIES

    def check(self, project):
        for error in project.parse_errors:
            yield self.finding(error.span, message("{error}", error=prose(error.message)), ())


class UnusedSuppression(Rule):
    id = "JOB901"
    name = "unused-suppression"
    severity = Severity.INFO
    summary = "A `jobsafe: ignore[...]` comment that suppressed nothing."
    sources = SOURCE_FAMILIES
    deferred = True  # decided by the suppression stage, after every other rule has run

    def check(self, project):
        return iter(())
