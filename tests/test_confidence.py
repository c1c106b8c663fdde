"""Confidence beside severity, and findings whose message keeps its parts (issue 21)."""
import json

import pytest
from click.testing import CliRunner
from conftest import run_analysis

from jobsafe.cli import main
from jobsafe.model import Confidence, Message, message, prose
from jobsafe.report.audit import _message_html
from jobsafe.sources.kubernetes import Catalog, classify_claim

CRONTAB = """\
*/5 * * * * app python /srv/app/direct.py
*/5 * * * * app python /srv/app/factory.py
*/5 * * * * app python /srv/app/guessed.py
"""
#: one hazard (a Redis lock released by a plain call: JOB203), its client reached three ways
DIRECT = """\
import redis


def main():
    r = redis.Redis()
    lock = r.lock("report", timeout=60)
    if not lock.acquire(blocking=False):
        return
    work()
    lock.release()


def work():
    pass


main()
"""
FACTORY = DIRECT.replace("import redis\n", "from app.clients import get_redis\n") \
    .replace("redis.Redis()", "get_redis()").replace('"report"', '"export"')
GUESSED = DIRECT.replace("import redis\n", "from vendor.connections import connect\n") \
    .replace("r = redis.Redis()", "r = connect()").replace("r.lock", "redis_client.lock") \
    .replace("r = connect()", "redis_client = connect()").replace('"report"', '"digest"')
CLIENTS = "import redis\n\n\ndef get_redis():\n    return redis.Redis.from_url('redis://cache/0')\n"


@pytest.fixture
def locks_tree(write_tree):
    return write_tree({"crontab": CRONTAB, "direct.py": DIRECT, "factory.py": FACTORY,
                       "guessed.py": GUESSED, "app/__init__.py": "", "app/clients.py": CLIENTS})


def test_a_lock_is_as_sure_as_the_way_its_receiver_was_known(locks_tree):
    found = {f.span.path: f for f in run_analysis(locks_tree).findings if f.rule == "JOB203"}
    assert {path: f.confidence for path, f in found.items()} == {
        "direct.py": Confidence.HIGH,      # redis.Redis() in the function: parsed
        "factory.py": Confidence.MEDIUM,   # the type followed through get_redis()
        "guessed.py": Confidence.LOW,      # only the variable's name says Redis
    }


def test_min_confidence_filters_findings_and_the_command_line_wins(locks_tree, monkeypatch):
    monkeypatch.chdir(locks_tree)

    def paths(*args):
        result = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json",
                                           "--select", "JOB203", *args])
        return sorted(f["path"] for f in json.loads(result.output)["findings"])

    assert paths() == ["direct.py", "factory.py", "guessed.py"]
    assert paths("--min-confidence", "medium") == ["direct.py", "factory.py"]
    assert paths("--min-confidence", "high") == ["direct.py"]
    (locks_tree / ".jobsafe.toml").write_text('min-confidence = "high"\n')
    assert paths() == ["direct.py"]
    assert paths("--min-confidence", "low") == ["direct.py", "factory.py", "guessed.py"]
    (locks_tree / ".jobsafe.toml").write_text('min-confidence = "certain"\n')
    result = CliRunner().invoke(main, ["check", "--no-cache", "."])
    assert result.exit_code == 2 and "min-confidence: expected low, medium or high" in result.output


def test_confidence_and_arguments_in_json_and_sarif(locks_tree, monkeypatch):
    monkeypatch.chdir(locks_tree)
    out = CliRunner().invoke(main, ["check", "--no-cache", "--format", "json", "--select",
                                    "JOB203"]).output
    finding = next(f for f in json.loads(out)["findings"] if f["path"] == "factory.py")
    assert finding["confidence"] == "medium"
    assert finding["arguments"] == {"lock": "redis-lock lock export",
                                    "held": "until its 1 min TTL expires"}
    sarif = json.loads(CliRunner().invoke(main, ["check", "--no-cache", "--format", "sarif",
                                                 "--select", "JOB203"]).output)
    ranks = sorted(r["properties"]["confidence"] for r in sarif["runs"][0]["results"])
    assert ranks == ["high", "low", "medium"]


def test_a_crontab_known_by_its_content_alone_is_low_confidence(write_tree):
    root = write_tree({"ops/schedule.txt": "*/5 * * * * /srv/app/bin/sync.py\n",
                       "bin/sync.py": "print('sync')\n",
                       "deploy/crontab": "*/5 * * * * /srv/app/bin/sync.py --full\n"})
    unguarded = {f.span.path: f.confidence for f in run_analysis(root).findings
                 if f.rule == "JOB101"}
    assert unguarded == {"ops/schedule.txt": Confidence.LOW, "deploy/crontab": Confidence.HIGH}


def test_a_network_storage_class_by_its_provisioner_or_only_by_its_name():
    catalog = Catalog(claims={"by-driver": ("shared-fs", None, ()),
                              "by-name": ("efs-sc", None, ())},
                      storage_classes={"shared-fs": "efs.csi.aws.com",
                                       "efs-sc": "example.com/custom"})
    assert classify_claim("by-driver", catalog)[::2] == ("network", Confidence.HIGH)
    assert classify_claim("by-name", catalog)[::2] == ("network", Confidence.LOW)


def test_the_weakest_fact_decides():
    assert Confidence.weakest(()) is Confidence.HIGH
    assert Confidence.weakest((Confidence.HIGH, Confidence.LOW, None)) is Confidence.LOW
    assert Confidence.weakest((Confidence.MEDIUM, object())) is Confidence.MEDIUM


def test_a_message_keeps_values_and_clauses_apart():
    held = message("until its {ttl} TTL expires", ttl="5 min")
    text = message("{lock} is released by a plain call: it stays held {held}; use `with`",
                   lock="redis-lock lock <k>", held=held)
    assert text.render() == ("redis-lock lock <k> is released by a plain call: it stays held "
                             "until its 5 min TTL expires; use `with`")
    # values are code, clauses are words, the template's backquotes are code; all escaped
    assert str(_message_html(text)) == (
        "<code>redis-lock lock &lt;k&gt;</code> is released by a plain call: it stays held "
        "until its <code>5 min</code> TTL expires; use <code>with</code>")
    assert prose("a {literal} brace").render() == "a {literal} brace"
    assert isinstance(prose("x"), Message)


def test_the_audit_page_shows_confidence(locks_tree, monkeypatch):
    monkeypatch.chdir(locks_tree)
    result = CliRunner().invoke(main, ["audit", "--no-cache", "--html", "audit.html"])
    assert result.exit_code == 0, result.output
    page = (locks_tree / "audit.html").read_text()
    assert page.count('class="confidence conf-low"') == 1
    assert page.count('class="confidence conf-medium"') == 1
    narrowed = CliRunner().invoke(main, ["audit", "--no-cache", "--min-confidence", "high",
                                         "--html", "high.html"])
    assert narrowed.exit_code == 0
    high = (locks_tree / "high.html").read_text()
    assert "confidence conf-high" in high and "confidence conf-low" not in high
