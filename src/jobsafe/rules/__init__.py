"""Rules: one class per rule, registered by subclassing ``Rule``.

Rules read the ``Project`` model only, never file syntax. Each family lives in its own
module: overlap (1xx), locks (2xx), topology (3xx), idempotency (4xx), meta (9xx).
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Iterator

from ..config import ConfigError, Settings
from ..model import (
    Applicability,
    Confidence,
    Finding,
    Fix,
    Message,
    Project,
    Related,
    Severity,
    SourceFamily,
    Span,
    TextEdit,
)


class Rule:
    """A rule's class is the one place its id, name, severity, sources and fix
    applicability are declared; its document's front matter is checked against them."""

    id: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    summary: ClassVar[str]
    #: the fix this rule's findings may carry, by applicability; None: no automatic fix
    fix: ClassVar[Applicability | None] = None
    #: the source families the rule applies to (documentation and `jobsafe rules`)
    sources: ClassVar[tuple[SourceFamily, ...]] = ()
    #: computed outside ``check`` (JOB901 is decided after suppression)
    deferred: ClassVar[bool] = False

    registry: ClassVar[dict[str, type["Rule"]]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "id" not in cls.__dict__:
            return  # an abstract helper base, not a rule
        assert cls.id not in Rule.registry, f"duplicate rule id {cls.id}"
        assert all(r.name != cls.name for r in Rule.registry.values()), f"duplicate name {cls.name}"
        Rule.registry[cls.id] = cls

    def __init__(self, settings: Settings):
        self.settings = settings

    def check(self, project: Project) -> Iterator[Finding]:
        raise NotImplementedError

    @classmethod
    def fixable(cls) -> bool:
        return cls.fix is not None

    def finding(self, span: Span, message: Message, basis: Iterable[object],
                job: str | None = None, related: tuple[Related, ...] | list[Related] = (),
                edits: tuple[TextEdit, ...] = (), fix_message: str = "",
                unsafe: bool = False) -> Finding:
        """A finding; ``basis``: the facts it rests on (jobs, locks, topology evidence),
        whose weakest confidence is the finding's; ``edits`` (with ``fix_message``) make
        its fix, of the rule's declared applicability (``unsafe``: this one changes what
        the code does although the rule's usually does not)."""
        fix = None
        if edits:
            assert self.fix is not None, f"{self.id} declares no fix"
            fix = Fix(fix_message, edits, "unsafe" if unsafe else self.fix)
        return Finding(self.id, self.name, self.settings.severity_for(self.id, self.severity),
                       span, message, job, tuple(related), fix=fix,
                       confidence=Confidence.weakest(basis))


def all_rules() -> dict[str, type[Rule]]:
    """Every registered rule, by id (importing the families registers them)."""
    from . import idempotency, locks, meta, overlap, topology  # noqa: F401

    return dict(sorted(Rule.registry.items()))


def resolve_selector(selector: str) -> list[str]:
    """Rule ids for an id (``JOB101``), a name (``unguarded-job``) or a prefix (``JOB1``)."""
    rules = all_rules()
    sel = selector.strip()
    if sel.upper() in ("ALL", "JOB"):
        return list(rules)
    by_name = [r.id for r in rules.values() if r.name == sel.lower()]
    if by_name:
        return by_name
    ids = [rid for rid in rules if rid.startswith(sel.upper())]
    if not ids:
        raise ConfigError(f"unknown rule or prefix {selector!r} (see `jobsafe rules`)")
    return ids


def enabled_rules(settings: Settings, select: tuple[str, ...] = (),
                  ignore: tuple[str, ...] = ()) -> list[str]:
    """Ids enabled by config plus command-line --select/--ignore (the command line wins)."""
    chosen = select or settings.select
    ids = set(all_rules()) if not chosen else {i for s in chosen for i in resolve_selector(s)}
    for s in settings.ignore + ignore:
        ids -= set(resolve_selector(s))
    if select:
        ids |= {i for s in select for i in resolve_selector(s)}
        ids -= {i for s in ignore for i in resolve_selector(s)}
    return sorted(ids)
