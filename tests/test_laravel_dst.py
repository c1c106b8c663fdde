"""Laravel tasks with ->timezone() on the days clocks change, compared with Laravel's own
answer (tests/oracles/laravel_oracle.py): recorded in tests/golden/laravel_dst.json, and
asked live when PHP and Debian's php-dragonmantank-cron-expression are installed."""
import datetime as dt
import json

import pytest

from oracles import laravel_oracle
from oracles.instants import instants

CASES = json.loads(laravel_oracle.GOLDEN.read_text())["cases"]


def _jobsafe_due(case: dict) -> list[int]:
    after = dt.datetime.fromtimestamp(case["from"] - 1, dt.timezone.utc)
    before = dt.datetime.fromtimestamp(case["to"], dt.timezone.utc)
    return [int(t) for t in instants(case["expression"], case["zone"], after, "every-match",
                                     before=before)]


def test_the_cases_cover_every_zone_and_change_day():
    assert len(CASES) == len(laravel_oracle.cases()) >= 100


@pytest.mark.parametrize("zone", sorted(laravel_oracle.CHANGE_DAYS))
def test_jobsafe_runs_laravel_tasks_as_laravel_does(zone):
    wrong = [(c["expression"], c["from"]) for c in CASES
             if c["zone"] == zone and _jobsafe_due(c) != c["due"]]
    assert not wrong


@pytest.mark.skipif(not laravel_oracle.available(),
                    reason="php or php-dragonmantank-cron-expression is not installed")
def test_the_recorded_answers_are_laravels():
    sample = CASES[::5]  # (every minute of two days is asked: a fifth keeps it quick)
    assert laravel_oracle.ask(sample) == [c["due"] for c in sample]
