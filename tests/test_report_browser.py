"""The HTML report in a real browser: headless Chromium loads it from disk, runs its script
without a console message, and shows the table and the week. Skipped without Chromium
(Debian's `chromium` package; `.ci/run` installs it where it can)."""
import re
import sys

import pytest
from click.testing import CliRunner

from conftest import FIXTURES
from jobsafe.cli import main

sys.path.insert(0, str(FIXTURES.parents[1] / "scripts"))
import chromium  # noqa: E402

EXAMPLE = FIXTURES.parents[1] / "examples" / "legacy-billing"
pytestmark = pytest.mark.skipif(chromium.BINARY is None, reason="Chromium is not installed")


@pytest.mark.parametrize("tree", [EXAMPLE, FIXTURES], ids=["example", "fixtures"])
def test_report_loads_in_chromium_and_shows_table_and_week(tree, tmp_path):
    page = tmp_path / "audit.html"
    result = CliRunner().invoke(main, ["jobs", "--format", "html", "-o", str(page), str(tree)])
    assert result.exit_code == 0, result.output
    jobs = page.read_text().count('<tr id="job-')

    shot = tmp_path / "audit.png"
    profile = tmp_path / "profile"
    result, console = chromium.run(profile, "--window-size=1400,1600", f"--screenshot={shot}",
                                   page.as_uri())
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", result.stderr[-2000:]
    assert shot.stat().st_size > 20_000  # a rendered page, not a blank one
    assert console == []

    result, console = chromium.run(profile, "--dump-dom", page.as_uri())
    dom = result.stdout
    assert console == [] and 'data-ready="true"' in dom  # the script ran to its end
    assert len(re.findall(r'<tr id="job-\d+"', dom)) == jobs > 0
    assert len(re.findall(r'<td class="l\d" data-hour="\d+"', dom)) == 168
    assert f"{jobs} of {jobs} jobs" in dom

    # a link to a view of the table: the script filters and sorts from the address
    unguarded = int(re.search(r'data-flag="unguarded">[^<]*</button></td><td class="num[^"]*">'
                              r"(\d+)", dom).group(1))
    result, console = chromium.run(profile, "--dump-dom", page.as_uri() + "#flag=unguarded&sort=2")
    assert console == []
    assert f"{unguarded} of {jobs} jobs" in result.stdout
    assert 'aria-sort="ascending"><button type="button" data-col="2">' in result.stdout


def test_hover_click_sort_and_filter_in_the_page(tmp_path):
    """The page's script driven as a reader would: a cell's hover box names its jobs, a click
    on the cell filters the table to them, a header sorts, the search box filters."""
    page_file = tmp_path / "audit.html"
    result = CliRunner().invoke(main, ["jobs", "--format", "html", "-o", str(page_file),
                                       str(EXAMPLE)])
    assert result.exit_code == 0, result.output
    page = chromium.Page(tmp_path / "profile", page_file.as_uri())
    try:
        assert page.evaluate("document.body.dataset.ready") == "true"
        # Monday 02:00-02:59 (Berlin): reconcile at 02:15 and invoices at 02:30
        tip = page.evaluate("""(() => {
            const td = document.querySelector('td[data-hour="2"]');
            td.dispatchEvent(new MouseEvent("mouseenter"));
            const tip = document.getElementById("tip");
            return [tip.hidden, tip.querySelector("strong").textContent,
                    [...tip.querySelectorAll("li")].map(li => li.textContent)];
        })()""")
        hidden, head, items = tip
        assert not hidden and head == "Mon 02:00–02:59 · 2 jobs (and 5 every hour)"
        assert any(item.endswith("deploy/crontab:9 · At 02:30 (Europe/Berlin) (once)")
                   for item in items)
        assert sum(item.endswith("(every hour)") for item in items) == 5
        shown = page.evaluate("""(() => {
            document.querySelector('td[data-hour="2"]').click();
            return [document.getElementById("shown").textContent,
                    document.querySelectorAll("#inventory tbody tr:not([hidden])").length];
        })()""")
        assert shown == ["7 of 10 jobs starting Mon 02:00–02:59", 7]
        order = page.evaluate("""(() => {
            document.getElementById("clear").click();
            document.querySelector('th button[data-col="2"]').click();  // Every, ascending
            return [...document.querySelectorAll("#inventory tbody tr")].map(
                tr => tr.cells[2].dataset.sort);
        })()""")
        known = [float(v) for v in order if v]
        assert known == sorted(known) and order[-1] == ""  # @reboot has no interval: last
        found = page.evaluate("""(() => {
            const search = document.getElementById("search");
            search.value = "refresh_rates";
            search.dispatchEvent(new Event("input"));
            return document.getElementById("shown").textContent;
        })()""")
        assert found == "1 of 10 jobs"
        assert page.console == []
    finally:
        page.close()


def test_excerpts_are_single_spaced_paths_are_from_the_root_and_monthly_jobs_are_apart(
        tmp_path, monkeypatch):
    """Analysed from its parent folder: the page names files from the analysed root; a
    monthly job is listed as 'some weeks', not drawn on every weekday; code excerpts show
    one line of code per line of text."""
    repo = tmp_path / "repo"
    (repo / "deploy").mkdir(parents=True)
    (repo / "bin").mkdir()
    (repo / "deploy/crontab").write_text("# monthly\n0 3 1 * * /srv/app/bin/report.py\n"
                                         "30 4 * * * flock -n /var/lock/x /srv/app/bin/x.py\n")
    (repo / "bin/report.py").write_text("print('report')\n")
    (repo / "bin/x.py").write_text("print('x')\n")
    monkeypatch.chdir(tmp_path)
    page_file = tmp_path / "audit.html"
    assert CliRunner().invoke(main, ["jobs", "--format", "html", "-o", str(page_file),
                                     "repo"]).exit_code == 0
    html = page_file.read_text()
    assert "repo/deploy/crontab" not in html and "deploy/crontab:2" in html
    page = chromium.Page(tmp_path / "profile", page_file.as_uri())
    try:
        assert page.evaluate("document.body.dataset.ready") == "true"
        some = page.evaluate("document.getElementById('some-weeks').textContent")
        assert "deploy/crontab:2" in some and "deploy/crontab:3" not in some
        # the monthly job is in no cell; the daily one is in all seven 04:00 cells
        drawn = page.evaluate("""(() => [...document.querySelectorAll('td[data-hour]')]
            .filter(td => td.textContent.trim() !== '').map(td => +td.dataset.hour))()""")
        assert drawn == [day * 24 + 4 for day in range(7)]
        gaps = page.evaluate("""(() => {
            const lines = [...document.querySelector('pre.excerpt').querySelectorAll('.line')];
            return lines.slice(1).map((line, i) => [
                line.getBoundingClientRect().top - lines[i].getBoundingClientRect().top,
                lines[i].getBoundingClientRect().height]);
        })()""")
        assert gaps and all(abs(gap - height) < 0.5 for gap, height in gaps)
        assert page.console == []
    finally:
        page.close()
