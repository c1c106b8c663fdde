"""Property-based tests: every parser, on generated and mutated input, either gives a result or
jobsafe's own parse error — never another exception — within a bounded time per input.

Budgets are small so that the suite stays fast; ``scripts/fuzz.py`` runs the same entry
points for as long as you like under a coverage-guided fuzzer.
"""
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobsafe.calendar import parse_calendar
from jobsafe.schedule import ScheduleError, cron_schedule
from jobsafe.sources.crontab import parse_crontab
from jobsafe.sources.dockerfile import parse_dockerfile
from jobsafe.sources.python.module import parse_module
from jobsafe.sources.shell import Locator, analyze
from jobsafe.sources.supervisor import supervisor_programs
from jobsafe.sources.systemd import parse_unit
from jobsafe.sources.yamlfile import YamlError, load_documents

FIXTURES = Path(__file__).parent / "fixtures"
BUDGET = settings(max_examples=150, deadline=3000, suppress_health_check=[HealthCheck.too_slow])


def _seeds(*suffixes: str, names: tuple[str, ...] = ()) -> list[str]:
    out = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file() and (path.suffix in suffixes or path.name in names):
            out.append(path.read_text(encoding="utf-8", errors="replace"))
    return out


def mutated(seeds: list[str], alphabet: str):
    """A real fixture with random edits: deletions, duplications and inserted characters."""
    @st.composite
    def build(draw):
        text = draw(st.sampled_from(seeds))
        for _ in range(draw(st.integers(0, 6))):
            if not text:
                break
            i = draw(st.integers(0, len(text) - 1))
            j = draw(st.integers(i, min(len(text), i + 40)))
            edit = draw(st.sampled_from(["delete", "duplicate", "insert"]))
            if edit == "delete":
                text = text[:i] + text[j:]
            elif edit == "duplicate":
                text = text[:j] + text[i:j] + text[j:]
            else:
                text = text[:i] + draw(st.text(alphabet, max_size=12)) + text[i:]
        return text
    return build()


CRON_CHARS = "0123456789*/,-@ \t\n#%\\=abcdefghijklmnopqrstuvwxyzJANFEBMONSUN?LW"
SHELL_CHARS = "abcdflmnorstuwxy -|&;<>()$`'\"\\{}[]*?!#\n=/.~0123456789"
UNIT_CHARS = "[]=\n\\ \t#;ServiceTimerOnCalendarExecStartType%ins-:0123456789*./"
YAML_CHARS = "abck :-\n\t[]{}&*!|>'\"#%@,?0123456789"
PY_CHARS = "abcdefilmnorstuwy _.()[]{}:=,\n\t \"'#@0123456789+-*/\\"


@BUDGET
@given(st.one_of(st.text(CRON_CHARS, max_size=300),
                 mutated(_seeds(".cron", names=("crontab",)), CRON_CHARS)),
       st.booleans())
def test_crontab_parser(text, system):
    result = parse_crontab("crontab", text, system=system)
    lines = text.count("\n") + 1
    assert all(1 <= e.span.line <= lines for e in result.entries)
    assert all(1 <= error.span.line <= lines for error in result.errors)


@BUDGET
@given(st.text(CRON_CHARS, max_size=60))
def test_cron_expressions(expr):
    try:
        schedule = cron_schedule(expr, expr)
    except ScheduleError:
        return
    assert schedule.runs_per_day is None or schedule.runs_per_day >= 0


@BUDGET
@given(st.text("0123456789*/,-.:~ \tMonTueWedThuFriSatSunminutelyhourlydailyweeklyUTC", max_size=60))
def test_calendar_expressions(expr):
    try:
        parse_calendar(expr)
    except ScheduleError:
        pass


@BUDGET
@given(st.one_of(st.text(UNIT_CHARS, max_size=400),
                 mutated(_seeds(".service", ".timer"), UNIT_CHARS)))
def test_unit_files(text):
    unit, errors = parse_unit("job.service", "job.service", text)
    lines = text.count("\n") + 1
    assert all(1 <= a.span.line <= lines for keys in unit.sections.values()
               for values in keys.values() for a in values)


@BUDGET
@given(st.one_of(st.text(UNIT_CHARS + "program:numprocscommand", max_size=400),
                 mutated(_seeds(".conf"), UNIT_CHARS + "program:numprocs")))
def test_supervisor_configs(text):
    lines = text.count("\n") + 1
    for program in supervisor_programs("shop.conf", text):
        assert program.copies >= 1 and 1 <= program.evidence.line <= lines
        assert 1 <= program.containers[0].command_span.line <= lines


@BUDGET
@given(st.one_of(st.text(SHELL_CHARS, max_size=300), mutated(_seeds(".sh"), SHELL_CHARS)))
def test_shell_commands(text):
    analyze(text, Locator("crontab", text))


@BUDGET
@given(st.one_of(st.text(CRON_CHARS + SHELL_CHARS, max_size=300),
                 mutated(_seeds(names=("Dockerfile",)), SHELL_CHARS)))
def test_dockerfiles(text):
    parse_dockerfile("Dockerfile", text)


@BUDGET
@given(st.one_of(st.text(YAML_CHARS, max_size=400), mutated(_seeds(".yaml", ".yml"), YAML_CHARS)))
def test_yaml_front_end(text):
    try:
        docs = load_documents(text)
    except YamlError:
        return
    assert isinstance(docs, list)


@settings(max_examples=80, deadline=5000, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(PY_CHARS, max_size=300), mutated(_seeds(".py"), PY_CHARS)))
def test_python_front_end(text):
    facts = parse_module("job.py", text)
    assert facts.error is None or facts.error.message


@settings(max_examples=25, deadline=10_000, suppress_health_check=[HealthCheck.too_slow,
                                                                   HealthCheck.function_scoped_fixture])
@given(crontab=mutated(_seeds(".cron", names=("crontab",)), CRON_CHARS),
       manifest=mutated(_seeds(".yaml"), YAML_CHARS),
       module=mutated(_seeds(".py"), PY_CHARS))
def test_whole_pipeline_never_raises(tmp_path_factory, crontab, manifest, module):
    from conftest import run_analysis

    root = tmp_path_factory.mktemp("tree")
    (root / "crontab").write_text(crontab, encoding="utf-8", errors="surrogateescape")
    (root / "k8s.yaml").write_text(manifest, encoding="utf-8", errors="surrogateescape")
    (root / "job.py").write_text(module, encoding="utf-8", errors="surrogateescape")
    analysis = run_analysis(root)
    internal = [f for f in analysis.findings if "internal error" in f.message]
    assert not internal, internal
