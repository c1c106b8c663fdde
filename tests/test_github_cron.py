"""GitHub Actions schedules, read as GitHub's workflow parser reads them: the cases of its
own tests (actions/languageservices, workflow-parser/src/model/converter/cron.test.ts)."""
import pytest

from jobsafe.github_cron import refusal

VALID = ["0 0 * * *", "0 000 001 * *", "15 * * * *", "2,10 4,5 * * *", "30 4-6 * * *",
         "0 4-4 * * *", "20/15 * * * *", "30 5,17 * * *", "28 */4 * * *", "28 5,*/4 * * *",
         "28 5,*/4,6-8 * * *", "0 0 * * SUN", "0 0 * * SUN-TUE", "0 0 * * SUN-2",
         "0 2-4/5 * * *", "0   0  *  *               *"]
INVALID = ["0 0 * *", "0 0 * * * * *", "0 -1 * * *", "0 1- * * *", "0 /1 * * *",
           "0 1/ * * *", "0 ,1 * * *", "0 1, * * *", "0 5--5 * * *", "0 *//5 * * *",
           "0 */* * * *", "0 5/* * * *", "0 *-4 5-* *-* *", "0 ,, * * *", ", , , , ,",
           "0 ** * * *", "0 0 * * BUN", "0 0 * SUN JAN", "0 0 * * FRI-TUE", "0 12-4 * * *",
           "0 */0 * * *", "0 2/4-5 * * *", "0 2-4-6 * * *", "0 2/4/6 * * *",
           "0 * * */FEB */TUE",
           # and what the parser's rules refuse beyond its own tests
           "@daily", "0 0 * * 7", "*/60 * * * *", "0 0 ? * *", "0 0 L * *"]


@pytest.mark.parametrize("cron", VALID)
def test_github_accepts(cron):
    assert refusal(cron) is None


@pytest.mark.parametrize("cron", INVALID)
def test_github_refuses(cron):
    assert refusal(cron) is not None
