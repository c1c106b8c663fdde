"""Rule documents: one per rule, fixed sections, and examples that really run."""
import pytest

from conftest import run_analysis
from jobsafe.catalog import load_docs
from jobsafe.model import SOURCE_FAMILIES
from jobsafe.rules import all_rules

SECTIONS = ["What it flags", "Why it matters", "Example", "Use instead", "Does not flag"]
DEFAULT_PATHS = {"crontab": "crontab", "dockerfile": "Dockerfile", "sh": "script.sh",
                 "python": "job.py", "ini": "unit.service", "yaml": "manifest.yaml",
                 "text": "notes.txt", "php": "app/Console/Kernel.php"}


def test_every_rule_has_a_document_and_every_document_a_rule():
    docs, rules = load_docs(), all_rules()
    assert sorted(docs) == sorted(rules)


@pytest.mark.parametrize("rule_id", sorted(load_docs()))
def test_front_matter_says_what_the_rule_class_declares(rule_id):
    """The class is the one source of id, name, severity, sources and fix; the document's
    front matter (read as YAML) must say the same."""
    doc, rule = load_docs()[rule_id], all_rules()[rule_id]
    assert {k: v for k, v in doc.meta.items() if k != "fix-does"} == {
        "id": rule.id, "name": rule.name, "severity": rule.severity.value,
        "sources": list(rule.sources), "fix": rule.fix or "none"}
    assert set(rule.sources) <= set(SOURCE_FAMILIES) and rule.sources
    assert ("fix-does" in doc.meta) == (rule.fix is not None)
    assert doc.filename == f"{rule_id}-{doc.name}.md"


@pytest.mark.parametrize("rule_id", sorted(load_docs()))
def test_document_has_the_fixed_sections(rule_id):
    doc = load_docs()[rule_id]
    for title in SECTIONS:
        assert doc.section(title), f"{doc.filename} lacks section {title!r}"


def _write(tmp_path, examples):
    for ex in examples:
        path = tmp_path / (ex.path or DEFAULT_PATHS[ex.language])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(ex.code, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("rule_id", sorted(load_docs()))
def test_bad_example_yields_the_rule(rule_id, tmp_path):
    """Each bad example on its own (the blocks written next to each other, with no prose
    between, are one example's files): a PHP example must fire by itself, not ride on the
    Python one beside it."""
    bad = [e for e in load_docs()[rule_id].examples if e.verdict == "bad"]
    assert bad, "no bad example"
    for group in sorted({e.group for e in bad}):
        files = [e for e in bad if e.group == group]
        analysis = run_analysis(_write(tmp_path / str(group), files))
        assert rule_id in {f.rule for f in analysis.findings}, \
            f"example {group} ({', '.join(e.path or e.language for e in files)})"


@pytest.mark.parametrize("rule_id", sorted(load_docs()))
def test_good_example_is_clean_of_every_rule(rule_id, tmp_path):
    """A good example is what a reader copies: no rule may flag it at warning or error
    level (advice such as JOB111 may remain), it must parse, and its own rule stays quiet."""
    good = [e for e in load_docs()[rule_id].examples if e.verdict == "good"]
    assert good, "no good example"
    for group in sorted({e.group for e in good}):
        analysis = run_analysis(_write(tmp_path / str(group),
                                       [e for e in good if e.group == group]))
        assert rule_id not in {f.rule for f in analysis.findings}
        serious = [f"{f.rule} {f.span.path}:{f.span.line} {f.message}"
                   for f in analysis.findings
                   if f.severity.value != "info" or f.rule == "JOB900"]
        assert not serious
