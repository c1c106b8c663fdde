"""Bad input gives JOB900 or a clean skip, never a traceback, and never stops the rest."""
import os

import pytest

from conftest import run_analysis

GOOD = "*/5 * * * * /srv/app/bin/sync.py\n"
SYNC = "#!/usr/bin/env python3\nprint('sync')\n"


def rules_at(analysis, path):
    return sorted(f.rule for f in analysis.findings if f.span.path == path)


def test_binary_crontab_is_job900_and_others_still_analysed(write_tree):
    root = write_tree({"crontab": b"*/5 * * \x00\x13" + bytes(range(256)) * 4,
                       "deploy/app.cron": GOOD, "bin/sync.py": SYNC})
    analysis = run_analysis(root)
    assert rules_at(analysis, "crontab") == ["JOB900"]
    assert "binary" in [f for f in analysis.findings if f.rule == "JOB900"][0].message
    assert rules_at(analysis, "deploy/app.cron") == ["JOB101"]


def test_programs_and_man_pages_named_crontab_are_skipped(write_tree):
    root = write_tree({"usr/bin/crontab": b"\x7fELF\x02\x01\x01\x00" + bytes(64),
                       "usr/share/man/man1/crontab.1.gz": b"\x1f\x8b\x08\x00" + bytes(64),
                       "deploy/crontab.j2": "{{ minute }} * * * * /srv/app/bin/sync.py\n",
                       "deploy/app.cron": GOOD, "bin/sync.py": SYNC})
    analysis = run_analysis(root)
    assert sorted((f.span.path, f.rule) for f in analysis.findings) == [
        ("deploy/app.cron", "JOB101")]


def test_latin1_crontab_is_analysed(write_tree):
    root = write_tree({"crontab": "# Sauvegarde journali\xe8re\n".encode("latin-1") + GOOD.encode(),
                       "bin/sync.py": SYNC})
    assert rules_at(run_analysis(root), "crontab") == ["JOB101"]


def test_invalid_line_among_valid_ones(write_tree):
    """The rest of the file is still read. A user crontab with a line cron refuses is
    refused whole by `crontab FILE` (its valid job never runs: no JOB101, in the inventory
    as "never runs"); in a cron.d file, cron skips the bad line and runs the others."""
    root = write_tree({"crontab": "99 * * * * /x\n" + GOOD + "* * * *\n", "bin/sync.py": SYNC,
                       "etc/cron.d/sync": "99 * * * * root /x\n" + GOOD.replace(
                           " * * * * ", " * * * * root ", 1) + "* * * *\n"})
    analysis = run_analysis(root)
    found = sorted((f.span.path, f.span.line, f.rule) for f in analysis.findings)
    assert found == [("crontab", 1, "JOB113"), ("crontab", 3, "JOB900"),
                     ("etc/cron.d/sync", 1, "JOB113"), ("etc/cron.d/sync", 2, "JOB101"),
                     ("etc/cron.d/sync", 3, "JOB900")]
    valid = next(j for j in analysis.project.jobs if j.span.path == "crontab" and
                 j.span.line == 2)
    assert valid.never_runs is not None and valid.never_runs.why == "file-refused"


def test_empty_files(write_tree):
    root = write_tree({"crontab": "", "etc/cron.d/empty": "", "Dockerfile": "", "bin/x.sh": ""})
    analysis = run_analysis(root)
    assert analysis.findings == []


def test_huge_crontab_is_reported_not_read(write_tree):
    root = write_tree({"deploy/app.cron": GOOD, "bin/sync.py": SYNC})
    with open(root / "crontab", "wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB without writing them
    analysis = run_analysis(root)
    assert rules_at(analysis, "crontab") == ["JOB900"]
    assert "too large" in [f for f in analysis.findings if f.rule == "JOB900"][0].message
    assert rules_at(analysis, "deploy/app.cron") == ["JOB101"]


def test_symlink_loop_and_link_out_of_root(write_tree, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "crontab").write_text(GOOD)
    root = write_tree({"app/crontab": GOOD, "bin/sync.py": SYNC})
    os.symlink(root / "app", root / "app" / "loop")
    os.symlink(outside, root / "elsewhere")
    os.symlink(root / "missing", root / "dangling")
    analysis = run_analysis(root)
    assert sorted({f.span.path for f in analysis.findings}) == ["app/crontab"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_unreadable_crontab(write_tree):
    root = write_tree({"crontab": GOOD, "bin/sync.py": SYNC})
    os.chmod(root / "crontab", 0)
    assert rules_at(run_analysis(root), "crontab") == ["JOB900"]


def test_shell_syntax_the_parser_cannot_finish(write_tree):
    script = "#!/bin/sh\nif [ -f /tmp/l ]; then\n  case $x in\n  *) ((( ;;\nfi\ntouch /tmp/l\n"
    root = write_tree({"crontab": "*/5 * * * * /srv/bin/broken.sh\n", "bin/broken.sh": script,
                       "other.cron": GOOD, "bin/sync.py": SYNC})
    analysis = run_analysis(root)
    assert rules_at(analysis, "other.cron") == ["JOB101"]


def test_deeply_nested_command(write_tree):
    nested = "sh -c " + "'sh -c " * 50 + "x" + "'" * 50
    root = write_tree({"crontab": f"*/5 * * * * {nested}\n" + GOOD, "bin/sync.py": SYNC})
    analysis = run_analysis(root)
    assert rules_at(analysis, "crontab") == ["JOB101"]


def test_templated_and_odd_crontab_lines(write_tree):
    text = "{{ cron_minute }} * * * * /srv/app/bin/sync.py\n" + GOOD + "@every 5m /x\n"
    root = write_tree({"crontab": text, "bin/sync.py": SYNC})
    found = sorted((f.span.line, f.rule) for f in run_analysis(root).findings)
    assert found == [(1, "JOB900"), (2, "JOB101"), (3, "JOB900")]


def test_analysed_code_is_never_run(write_tree, tmp_path_factory):
    marker = tmp_path_factory.mktemp("m") / "ran"
    payload = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('x')\n"
    root = write_tree({"crontab": "*/5 * * * * python3 /srv/bin/job.py\n*/5 * * * * /srv/bin/j.sh\n",
                       "bin/job.py": payload, "bin/j.sh": f"#!/bin/sh\ntouch {marker}\n"})
    run_analysis(root)
    assert not marker.exists()


def test_python_syntax_error_latin1_and_nesting(write_tree):
    root = write_tree({
        "crontab": "*/5 * * * * python3 /srv/jobs/broken.py\n*/5 * * * * python3 /srv/jobs/nested.py\n"
                   "1 * * * * python3 /srv/jobs/chain.py\n2 * * * * python3 /srv/jobs/wrapped.py\n",
        "jobs/broken.py": "import fcntl\ndef main(:\n    fcntl.flock(1, fcntl.LOCK_EX)\n",
        "jobs/latin1.py": "# R\xe9sum\xe9 des verrous\nimport fcntl\nLOCK = open('/tmp/l', 'w')\n".encode("latin-1"),
        "jobs/nested.py": "import json\nx = " + "+".join(["1"] * 20000) + "\n",
        "jobs/brackets.py": "lock = " + "[" * 5000 + "]" * 5000 + "\n",
        # under 20 KB, which once let them reach libcst unchecked: a crash of the process
        # (9,000 additions) and jobsafe's own stack blamed (6,000 over lines in brackets)
        "jobs/chain.py": "import json\nx = " + "+".join(["1"] * 9000) + "\n",
        "jobs/wrapped.py": "import json\nx = (" + " +\n".join(["1"] * 6000) + ")\n",
    })
    analysis = run_analysis(root)
    errors = {(f.span.path, f.rule) for f in analysis.findings if f.rule == "JOB900"}
    assert errors == {("jobs/broken.py", "JOB900"), ("jobs/nested.py", "JOB900"),
                      ("jobs/brackets.py", "JOB900"), ("jobs/chain.py", "JOB900"),
                      ("jobs/wrapped.py", "JOB900")}
    broken = [f for f in analysis.findings if f.span.path == "jobs/broken.py"][0]
    assert broken.span.line in (2, 3) and "syntax error" in broken.message
    # the unparseable entry mentions a lock: JOB101 stays quiet for it; the other is flagged
    assert [(f.span.line, f.rule) for f in analysis.findings if f.span.path == "crontab"] == [
        (2, "JOB101"), (3, "JOB101"), (4, "JOB101")]


def test_large_generated_module_is_skipped_unless_scheduled(write_tree):
    generated = "import fcntl\n" + "".join(f"LOCK_{i} = {i}\n" for i in range(120_000))
    root = write_tree({"app/generated_pb2.py": generated, "jobs/big.py": generated,
                       "crontab": "*/5 * * * * python3 /srv/jobs/big.py\n"})
    analysis = run_analysis(root)
    # not analysed, and it mentions fcntl: JOB101 gives it the benefit of the doubt
    assert sorted((f.span.path, f.rule) for f in analysis.findings) == [("jobs/big.py", "JOB900")]
    assert "too large" in analysis.findings[0].message


def test_bad_unit_files(write_tree):
    root = write_tree({
        "units/bad.timer": "[Timer]\nOnCalendar=every tuesday-ish\nOnCalendar=*:0/20\n",
        "units/bad.service": "[Service]\nType=oneshot\nTimeoutStartSec=soon\nExecStart=/bin/true\n",
        "units/binary.service": b"\x00\x01\x02[Service]\x00",
        "units/orphan.timer": "[Timer]\nOnCalendar=daily\n",  # no service in the tree
        "units/noexec.timer": "[Timer]\nOnCalendar=daily\n",
        "units/noexec.service": "[Service]\nType=oneshot\n",
        "units/garbage.service": "no sections at all\njust text\n",
        "units/continued.service": "[Service]\nExecStart=/bin/echo \\\n  continued\n",
    })
    analysis = run_analysis(root)
    found = sorted((f.span.path, f.span.line, f.rule) for f in analysis.findings)
    assert ("units/bad.timer", 2, "JOB900") in found  # the invalid OnCalendar line
    assert ("units/bad.service", 3, "JOB900") in found  # the invalid time span
    assert ("units/binary.service", 1, "JOB900") in found
    assert not [f for f in found if f[0] in ("units/garbage.service", "units/orphan.timer",
                                            "units/noexec.timer", "units/continued.service")]
    bad = [j for j in analysis.project.jobs if j.id == "systemd:units/bad.timer"][0]
    assert bad.schedule.min_interval_seconds == 1200  # the valid line still counts


def test_hostile_yaml(write_tree, tmp_path_factory):
    marker = tmp_path_factory.mktemp("y") / "pwned"
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(9))
    root = write_tree({
        "k8s/bomb.yaml": "apiVersion: v1\nkind: ConfigMap\n" + bomb,
        "k8s/tag.yaml": f"apiVersion: v1\nkind: Pod\nx: !!python/object/apply:os.system ['touch {marker}']\n",
        "k8s/tabs.yaml": "apiVersion: v1\nkind: Pod\nspec:\n\tcontainers: []\n",
        "k8s/dupes.yaml": "apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: a}\nspec:\n"
                          "  schedule: '*/5 * * * *'\n  schedule: '0 0 * * *'\n",
        "k8s/latin1.yaml": "apiVersion: v1\nkind: ConfigMap\ndata: {k: \xe9t\xe9}\n".encode("latin-1"),
        "k8s/huge.yaml": "apiVersion: v1\nkind: List\nitems:\n" + "  - {kind: ConfigMap}\n" * 60_000,
    })
    analysis = run_analysis(root)
    assert not marker.exists()
    errors = {f.span.path for f in analysis.findings if f.rule == "JOB900"}
    assert errors == {"k8s/bomb.yaml", "k8s/tabs.yaml"}
    assert [path for path, _ in analysis.project.skipped] == ["k8s/huge.yaml"]  # a note
    dupes = [j for j in analysis.project.jobs if j.span.path == "k8s/dupes.yaml"]
    assert [j.schedule.text for j in dupes] == ["*/5 * * * *"]  # duplicate keys: the first wins


def test_inputs_the_fuzzer_found():
    """Regression cases from scripts/fuzz.py: each once raised out of a parser."""
    from jobsafe.sources.python.module import parse_module
    from jobsafe.sources.shell import Locator, analyze

    shell = "#\nflock -#ock -#!/1in#!kock -#oc/o/-nld\n"  # -c as the last flock argument
    analyze(shell, Locator("x.sh", shell))
    python = 'import filelock\nwith filelock.FileLock("/tmp/a\x00.lock"):\n    pass\n'
    facts = parse_module("x.py", python)  # NUL in a string literal: Python refuses the value
    assert facts.error is None and facts.units["<module>"].locks
    huge = "import redis\nwith redis.Redis().lock('a', timeout=1" + "0" * 400 + "):\n    pass\n"
    assert parse_module("y.py", huge).units["<module>"].locks  # an integer too big for float
    times = ("from django_cron import CronJobBase, Schedule\nclass C(CronJobBase):\n"
             "    schedule = Schedule(run_at_times=['1:)))30', '25:00'])\n"
             "import schedule\nschedule.every().day.at('x:y').do(f)\n")
    assert parse_module("z.py", times).error is None  # clock times that are not times


def test_100_mb_files_and_10000_deep_nesting(write_tree):
    """Huge files of every kind are refused by size, deep nesting by depth; the rest of the
    tree is still analysed, within seconds."""
    import time

    root = write_tree({"crontab": GOOD, "bin/sync.py": SYNC,
                       "jobs/parens.py": "x = " + "(" * 10_000 + "1" + ")" * 10_000 + "\n",
                       "k8s/deep.yaml": "apiVersion: v1\nkind: List\nitems: " + "[" * 10_000 + "]" * 10_000 + "\n",
                       "etc/deep.service": "[Service]\nExecStart=/bin/sh -c " + "'$(" * 3000 + ")'" * 3000 + "\n"})
    for name in ("jobs/huge.py", "k8s/huge.yaml", "etc/huge.service", "etc/cron.d/huge"):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(b"# ")
            fh.truncate(100 * 1024 * 1024)  # sparse: 100 MB without writing them
    start = time.perf_counter()
    analysis = run_analysis(root)
    assert time.perf_counter() - start < 60  # generous: only a hang fails this
    assert not [f for f in analysis.findings if "internal error" in f.message]
    assert "JOB101" in {f.rule for f in analysis.findings}  # the good crontab is still read


def test_sarif_carries_no_raw_control_characters():
    import json as _json

    from jobsafe.analysis import Analysis
    from jobsafe.model import Finding, Project, Severity, Span, message
    from jobsafe.report import render

    span = Span("deploy/\x1b[31mred\x07.cron", 3)
    finding = Finding("JOB101", "unguarded-job", Severity.WARNING, span,
                      message("line one\r\n{text}", text="::error::x\x00\x1b]8;;http://evil\x07"))
    out = render("sarif", Analysis(Project(root="."), [finding]))
    assert not [c for c in out if ord(c) < 0x20 and c not in "\n "]
    result = _json.loads(out)["runs"][0]["results"][0]
    assert result["message"]["text"].startswith("line one\r\n::error::x")


def test_newer_python_syntax_is_code_not_a_syntax_error():
    """PEP 695 generics parse with libcst's newest grammar whatever Python runs jobsafe;
    a big module CPython here cannot parse is not called broken for that."""
    from jobsafe.sources.python.module import parse_module

    generic = "def take[T](fh: T) -> T:\n    return fh\n\ntype Handle = int\n"
    padding = "".join(f"X_{i} = {i}\n" for i in range(3000))  # over the depth-check size
    for text in (generic, padding + generic):
        assert parse_module("m.py", text).error is None
    assert parse_module("m.py", "def broken(:\n    pass\n").error is not None


def test_extensionless_python_script_reaching_a_lock_class(write_tree):
    """A timer's script without ``.py`` whose lock comes through a class of another module
    (the index learns of the script only when the unit runs it)."""
    root = write_tree({
        "util/gc.timer": "[Timer]\nOnCalendar=hourly\n",
        "util/gc.service": "[Service]\nType=oneshot\nTimeoutStartSec=1h\nExecStart=/usr/sbin/gc\n",
        "util/gc": "#!/usr/bin/python3\nfrom app.locking import Guard\n\n"
                   "def main():\n    with Guard('/var/lock/gc.lock'):\n        print('gc')\n\n"
                   "if __name__ == '__main__':\n    main()\n",
        "app/__init__.py": "",
        "app/locking.py": "import fcntl\n\nclass Guard:\n"
                          "    def __init__(self, path):\n        self.path = path\n\n"
                          "    def __enter__(self):\n        self.fh = open(self.path, 'w')\n"
                          "        fcntl.flock(self.fh, fcntl.LOCK_EX)\n        return self\n\n"
                          "    def __exit__(self, *exc):\n        self.fh.close()\n",
    })
    analysis = run_analysis(root)
    assert not analysis.project.internal_errors
    job = next(j for j in analysis.project.jobs if j.id.startswith("systemd"))
    assert [(lock.kind, lock.path) for lock in job.all_locks] == [("flock", "/var/lock/gc.lock")]


def test_the_code_read_gets_no_warnings_of_python_about_it(recwarn):
    """An invalid escape in the analysed code is the user's business: CPython's warning
    about it must not reach jobsafe's output (``light`` and the settings reader too)."""
    import warnings

    from jobsafe.sources.python.django_settings import cache_backends
    from jobsafe.sources.python.light import light_facts

    warnings.simplefilter("always")
    text = 'import re\nPATTERN = re.compile("\\s+")\nCACHES = {}\n'
    assert light_facts("m.py", text) is not None
    assert cache_backends([text]) == {}
    assert not [w for w in recwarn if issubclass(w.category, (DeprecationWarning,
                                                              SyntaxWarning))]


def test_a_local_defined_by_itself_is_followed_a_bounded_depth(write_tree):
    """``path = os.path.join(path, "x")``: the value of ``path`` refers to itself (koji's
    save_failed_tree.py); reading it must end, not recurse until Python's stack runs out."""
    job = ("import fcntl\nimport os\n\n\ndef main(full=False):\n"
           "    path = os.getcwd()\n"
           "    if not full:\n        path = os.path.join(path, 'builddir')\n"
           "    if not os.path.exists(path):\n        raise SystemExit(1)\n"
           "    fh = open(path + '.lock', 'w')\n"
           "    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    print('work')\n\n\n"
           "if __name__ == '__main__':\n    main()\n")
    root = write_tree({"crontab": "*/5 * * * * timeout 4m python3 /srv/jobs/save.py\n",
                       "jobs/save.py": job})
    analysis = run_analysis(root)
    assert not analysis.internal_errors
    [job_] = analysis.project.jobs
    assert [lock.kind for lock in job_.all_locks] == ["flock"]


def test_an_escape_python_warns_about_is_not_jobsafe_s_warning():
    """``"\\c"`` in the user's strings: Python warns when the literal is evaluated (a
    SyntaxWarning from 3.12, printed by default); that is the code's business, not output of
    jobsafe's."""
    import warnings

    from jobsafe.sources.python.module import parse_module

    source = ('import redis\nD = {"a\\c": 1}\nr = redis.Redis()\n'
              'if not r.set("lo\\ck", 1, nx=True, ex=60):\n    pass\n')
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        facts = parse_module("x.py", source)
    assert [str(w.message) for w in seen] == []
    assert facts.error is None and facts.internal_error is None
    assert [lock.kind for unit in facts.units.values() for lock in unit.locks] == ["redis-key"]
