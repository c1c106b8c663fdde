"""The prefilter only saves time: with it and without it (vocabulary, test code), every
fixture tree gives the same findings."""
import pytest

from conftest import FIXTURES, run_analysis
from jobsafe.sources.python import index
from jobsafe.sources.python.index import may_matter

CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())


def _findings(root):
    return sorted((f.rule, f.span.path, f.span.line, f.message) for f in run_analysis(root).findings)


@pytest.mark.parametrize("case", CASES)
def test_no_fixture_finding_is_lost_to_the_prefilter(case, monkeypatch):
    with_prefilter = _findings(FIXTURES / case)
    monkeypatch.setattr(index, "worth_parsing", lambda rel, text: True)
    assert _findings(FIXTURES / case) == with_prefilter


def test_prefilter_tokens_come_from_the_recognisers():
    from jobsafe.sources.python import idempotency, lock_calls, schedulers
    v = index.vocabulary()
    for module in (idempotency, lock_calls, schedulers):
        for token in module.PREFILTER_TOKENS:
            if isinstance(token, str):
                assert token in v.words.pattern
            else:
                assert list(token) in [[w.pattern for w in c] for c in v.conjunctions]


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
])
def test_prefilter_reads_code_not_documentation(source, matters):
    assert may_matter(source) is matters
