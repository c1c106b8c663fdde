"""The prefilter only saves time: with it and without it (vocabulary, test code), every
fixture tree gives the same findings."""
import subprocess
import sys

import pytest

from conftest import FIXTURE_CASES, FIXTURES, run_analysis
from jobsafe.sources.python import prefilter
from jobsafe.sources.python import words as words_of
from jobsafe.sources.python.prefilter import Word, may_matter


def _findings(root):
    return sorted((f.rule, f.span.path, f.span.line, f.message) for f in run_analysis(root).findings)


@pytest.mark.parametrize("case", FIXTURE_CASES)
def test_no_fixture_finding_is_lost_to_the_prefilter(case, monkeypatch):
    with_prefilter = _findings(FIXTURES / case)
    monkeypatch.setattr(prefilter, "worth_parsing", lambda rel, text: True)
    assert _findings(FIXTURES / case) == with_prefilter


def test_the_vocabulary_holds_every_recognisers_words():
    v = prefilter.vocabulary()
    words = [w.pattern.pattern for w in v.words]
    conjunctions = [[w.pattern.pattern for w in c] for c in v.conjunctions]
    for recogniser in (words_of.LOCK_CALLS, words_of.DB_LOCKS, words_of.IDEMPOTENCY,
                       words_of.SCHEDULERS):
        assert recogniser
        for token in recogniser:
            if isinstance(token, str):
                assert token in words
            else:
                assert list(token) in conjunctions
    assert v.hints  # every word gave literals: the quick test applies


def test_the_vocabulary_is_built_without_libcst():
    """A run whose modules all come from the cache prefilters the changed ones without
    loading libcst (a tenth of a second of every pre-commit run)."""
    code = ("import sys; from jobsafe.sources.python import prefilter; "
            "assert prefilter.vocabulary().words; print('libcst' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize("regex, cores", [
    (r"(?<![bcBC])(?<!skip_)lock", ("lock",)),
    (r"nx\s*=", ("nx",)),
    (r"cache\.add\(|caches\[.*\]\.add\(", ("cache.add(", "caches[")),
    (r"(?<![\w.])square[._\s]|squareup", ("square", "squareup")),
    (r"send_message\(", ("send_message(",)),
    (r"colou?r", ("colo",)),
    (r"ab{2}c", ("a",)),  # "b" may repeat: "a" and "c" are sure, the first is kept
    (r"(?:x|y)", ()),  # no literal every match holds: the regular expression alone decides
])
def test_every_match_of_a_word_holds_one_of_its_literals(regex, cores):
    assert Word.of(regex).cores == cores


def test_literals_never_change_a_verdict():
    """On every fixture file and the recognisers' own sources, a word is found exactly
    where its regular expression matches."""
    from jobsafe.sources.python import db_locks, idempotency, lock_calls, schedulers
    texts = [p.read_text(errors="replace") for p in sorted(FIXTURES.rglob("*")) if p.is_file()]
    texts += [open(m.__file__).read() for m in (idempotency, lock_calls, schedulers, db_locks,
                                                 prefilter, words_of)]
    v = prefilter.vocabulary()
    for word in [*v.words, *(w for c in v.conjunctions for w in c)]:
        for text in texts:
            assert word.found(text) == (word.pattern.search(text) is not None)


@pytest.mark.parametrize("source, matters", [
    ('import fcntl\nfcntl.flock(fh, fcntl.LOCK_EX)\n', True),
    ('cur.execute("select pg_try_advisory_lock(42)")\n', True),
    ('headers = {"Idempotency-Key": key}\n', True),
    ('def f():\n    """Acquire the lease, then dedup the items."""\n    return 1\n', False),
    ('# a lock would be nice here\nx = 1\n', False),
    ('Field(description="the user will re-acquire conflicting fields owned by others")\n', False),
    ('def block_size():\n    return clock()\n', False),
    ('if queryset.exists():\n    items.add(x)\n', False),
    ('created = timezone.now()\nname = str(uuid.uuid4())\n', False),
    ('path = f"/out/{uuid.uuid4()}.csv"\ndf.to_csv(path)\n', True),
    ('if os.path.exists(FLAG):\n    sys.exit()\nopen(FLAG, "w")\nos.remove(FLAG)\n', True),
    ('from django.core.cache import cache\nif cache.add(key, 1, 60):\n    run()\n', True),
    # a claim as black lays it out: the model's name after the parenthesis, or below it
    ('updated = (\n    Manifest.update(size=1)\n    .where(Manifest.id == 1)\n    .execute()\n)\n'
     'if updated != 1:\n    return\n', True),
    ('updated = (\n    Manifest\n    .update(size=1)\n    .where(Manifest.id == 1)\n    .execute()\n)\n',
     True),
    ('total = (\n    1\n    + 2\n)\nitems.update(extra)\n', False),
])
def test_prefilter_reads_code_not_documentation(source, matters):
    assert may_matter(source) is matters
