"""The HTML report in a real browser: headless Chromium loads it from disk, runs its script
without a console message, and shows the table and the week. Skipped without Chromium
(Debian's `chromium` package; `.ci/run` installs it where it can)."""
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from jobsafe.cli import main

EXAMPLE = FIXTURES.parents[1] / "examples" / "legacy-billing"
CHROMIUM = next(filter(None, map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))),
                None)
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed")


def chromium(tmp_path, *args):
    """Headless, as root, with no network chatter; its log (console included) on stderr."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}",
               "--enable-logging=stderr", "--v=0", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=180)
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return result, console


@pytest.mark.parametrize("tree", [EXAMPLE, FIXTURES], ids=["example", "fixtures"])
def test_report_loads_in_chromium_and_shows_table_and_week(tree, tmp_path):
    page = tmp_path / "audit.html"
    result = CliRunner().invoke(main, ["jobs", "--format", "html", "-o", str(page), str(tree)])
    assert result.exit_code == 0, result.output
    jobs = page.read_text().count('<tr id="job-')

    shot = tmp_path / "audit.png"
    result, console = chromium(tmp_path, "--window-size=1400,1600", f"--screenshot={shot}",
                               page.as_uri())
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", result.stderr[-2000:]
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
    assert console == []

    result, console = chromium(tmp_path, "--dump-dom", page.as_uri())
    dom = result.stdout
    assert console == [] and 'data-ready="true"' in dom  # the script ran to its end
    assert len(re.findall(r'<tr id="job-\d+"', dom)) == jobs > 0
    assert len(re.findall(r'<td class="l\d" data-hour="\d+"', dom)) == 168
    assert f"{jobs} of {jobs} jobs" in dom

    # a link to a view of the table: the script filters and sorts from the address
    unguarded = int(re.search(r'data-flag="unguarded">[^<]*</button></td><td class="num[^"]*">'
                              r"(\d+)", dom).group(1))
    result, console = chromium(tmp_path, "--dump-dom", page.as_uri() + "#flag=unguarded&sort=2")
    assert console == []
    assert f"{unguarded} of {jobs} jobs" in result.stdout
    assert 'aria-sort="ascending"><button type="button" data-col="2">' in result.stdout
