"""Debian's cron dialect, compared with Debian's own ``crontab -n`` (issue 16).

The oracle is the ``crontab`` binary of Debian's ``cron`` package (``.ci/run`` downloads and
unpacks it into ``$JOBSAFE_ORACLES``; nothing is installed). It wants a ``crontab`` group
and a spool folder: it runs in a private mount namespace (``unshare -m``) over a copy of
``/etc/group`` and a tmpfs spool, so the host is left as it was. Without the binary or the
namespace the comparison skips; the dialect's reading is tested either way.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from jobsafe.debian_cron import MACROS, read_fields
from jobsafe.sources.crontab import parse_crontab

ORACLES = Path(os.environ.get("JOBSAFE_ORACLES", Path.home() / ".cache" / "jobsafe-oracles"))
CRONTAB = ORACLES / "debian-cron" / "usr" / "bin" / "crontab"

#: schedules (and whether Debian's cron accepts them), from the issue and cron's manual
CASES = [
    "5/15 * * * *", "0 0/6 * * *", "0 0 L * *", "0 0 1W * *", "@Daily", "@REBOOT", "@daily",
    "@midnight", "@reboot", "0 0 * * Mon-Sun", "0 0 1 Nov-Mar *", "0 0 * * 1#2",
    "0 0 30 2 *", "1,4,5 1-3 * * Wed-Sun", "*/5 * * * *", "0 0 * * 7", "0 0 * * 0-7",
    "0 0 * * SUN", "0 0 * * sun", "0-59/5 * * * *", "60 * * * *", "0 24 * * *", "0 0 0 * *",
    "0 0 * 13 *", "0 0 * * 8", "*/0 * * * *", "0 0 ? * *", "0 0 * * *", "5-1 * * * *",
    "0 0 * JAN-FEB *", "0 0 * * Mon,Tue", "0 0 * * mon-fri/2", "1-59/60 * * * *",
    "0 0 1,15 * 1-5", "*/7 */3 * * *", "0 12 * * 1-5/2", "15 3 1-7 * 1", "0 0 * * Monday",
    "0 0 1 January *", "0 0 31 * *", "@annually", "@yearly", "@monthly", "@weekly", "@hourly",
    "0 0 1 1-12/3 *", "0 0 * * */2", "*/15 9-17 * * mon-fri",
    # separators other than space and tab (a no-break space pasted from a web page)
    "*/5\u00a0* * * *", "0 0\u00a0* * *", "0\u2009* * * *", "0 0 * *\u00a01",
]


def _accepts(schedule: str) -> bool:
    """jobsafe's reading of Debian's cron, through the crontab reader itself (its field
    splitting included): does it accept the schedule?"""
    if schedule.startswith("@"):
        return schedule in MACROS
    result = parse_crontab("crontab", f"{schedule} true\n", False)
    return not result.errors and all(
        e.never_runs is None or e.never_runs.why != "refused" for e in result.entries)


def _oracle_available() -> bool:
    return CRONTAB.exists() and shutil.which("unshare") is not None and os.geteuid() == 0


def _crontab_n(tmp_path: Path, schedule: str) -> bool:
    group = tmp_path / "group"
    group.write_text(Path("/etc/group").read_text() + "crontab:x:999:\n")
    entry = tmp_path / "crontab"
    entry.write_text(f"{schedule} true\n")
    script = (f"mount --bind {group} /etc/group && mount -t tmpfs tmpfs /var/spool && "
              f"mkdir -p /var/spool/cron/crontabs && {CRONTAB} -n {entry}")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True,
                          text=True, timeout=30)
    return proc.returncode == 0


@pytest.mark.skipif(not _oracle_available(), reason="Debian's crontab (the oracle) not here")
@pytest.mark.parametrize("schedule", CASES)
def test_accepts_what_debians_crontab_accepts(schedule, tmp_path):
    assert _accepts(schedule) == _crontab_n(tmp_path, schedule)


@pytest.mark.parametrize("fields, reading", [
    ("5/15 * * * *", "refused"),
    ("0 0 * * 1#2", "0 0 * * 1"),              # text after '#' is ignored
    ("0 0 * * Mon-Sun", "never"),              # descending: empty, and the day of month is *
    ("0 0 1 Nov-Mar *", "never"),
    ("1,4,5 1-3 * * Wed-Sun", "never"),        # Wed-Sun is empty; day of month is *
    ("0 0 1 * Wed-Sun", "0 0 1 * *"),          # both restricted, the empty one never fires
    ("0 0 * * 7", "0 0 * * 7"),                 # as written: the libraries read 7 as Sunday too
])
def test_debian_reads_ranges_steps_and_comments_as_its_parser_does(fields, reading):
    got = read_fields(fields.split())
    if reading == "refused":
        assert got.refused is not None
    elif reading == "never":
        assert got.never is not None and got.expression is None
    else:
        assert got.expression == reading
