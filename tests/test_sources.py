"""Front ends and the link step: crontab syntax, file recognition, what a command runs."""
import pytest

from conftest import run_analysis
from jobsafe.sources.crontab import parse_crontab
from jobsafe.sources.dockerfile import parse_dockerfile

PY = "print('job')\n"


def jobs_by_line(analysis, path="crontab"):
    return {j.span.line: j for j in analysis.project.jobs if j.span.path == path}


def test_percent_ends_the_command_and_escaped_percent_stays():
    result = parse_crontab("crontab", r"0 1 * * * tar czf /b/$(date +\%F).tgz /srv%line one%two" "\n",
                           system=False)
    (entry,) = result.entries
    assert entry.command == "tar czf /b/$(date +%F).tgz /srv"
    assert entry.locator.columns[entry.command.index("/srv")] == 39


def test_environment_macros_user_field_and_timezone():
    text = ('SHELL=/bin/bash\nCRON_TZ="Europe/Paris"\n@daily root /usr/bin/a\n'
            '@reboot root /usr/bin/b\n5 4 * jan,JUL sun-sat www-data /usr/bin/c\n')
    result = parse_crontab("etc/crontab", text, system=True)
    a, b, c = result.entries
    assert (a.user, a.command, a.schedule.min_interval_seconds) == ("root", "/usr/bin/a", 86400)
    assert a.schedule.timezone == "Europe/Paris" and a.env["SHELL"] == "/bin/bash"
    assert b.schedule.kind == "reboot" and b.schedule.min_interval_seconds is None
    assert c.user == "www-data" and c.command == "/usr/bin/c"
    assert not result.errors


def test_cron_files_recognised_by_name_and_content(write_tree):
    root = write_tree({
        "ops/schedule": "# jobs\n*/5 * * * * /srv/bin/job.py\n",  # sniffed by content
        "ops/notes.txt": "Remember: * * * * * is every minute\n",  # prose, not a crontab
        "deploy/cron.d/app": "*/5 * * * * root /srv/bin/job.py --a\n",
        "deploy/app.crontab": "*/5 * * * * /srv/bin/job.py --b\n",
        "crontabs/deploy": "*/5 * * * * /srv/bin/job.py --c\n",
        "bin/job.py": PY,
    })
    analysis = run_analysis(root)
    paths = sorted(j.span.path for j in analysis.project.jobs)
    assert paths == ["crontabs/deploy", "deploy/app.crontab", "deploy/cron.d/app", "ops/schedule"]
    assert jobs_by_line(analysis, "deploy/cron.d/app")[1].user == "root"


def test_gitignored_and_excluded_files_are_skipped(write_tree):
    from jobsafe.config import Settings

    root = write_tree({".gitignore": "build/\n*.bak.cron\n", "build/crontab": "* * * * * /x\n",
                       "old.bak.cron": "* * * * * /x\n", "vendor/crontab": "* * * * * /x\n",
                       "crontab": "0 3 * * * /usr/bin/true\n"})
    analysis = run_analysis(root, Settings(extend_exclude=("vendor",)))
    assert [j.span.path for j in analysis.project.jobs] == ["crontab"]


def test_targets_python_module_console_script_manage_py_and_scripts(write_tree):
    root = write_tree({
        "crontab": "\n".join([
            "*/5 * * * * cd /srv && venv/bin/python -u -m reports.nightly --all",
            "*/5 * * * * /srv/venv/bin/sync-orders --since 1h",
            "*/5 * * * * /srv/manage.py clearsessions",
            "*/5 * * * * python3 /srv/manage.py charge",
            "*/5 * * * * bash /opt/app/scripts/rotate.sh",
            "*/5 * * * * python3 -m http.server",
            "*/5 * * * * /usr/bin/python3 -c 'print(1)'",
        ]) + "\n",
        "pyproject.toml": '[project]\nname = "shop"\n[project.scripts]\nsync-orders = "shop.sync:main"\n',
        "src/reports/nightly.py": PY, "src/shop/sync.py": PY,
        "manage.py": PY, "billing/management/commands/charge.py": PY,
        "scripts/rotate.sh": "#!/bin/sh\necho\n",
    })
    jobs = jobs_by_line(run_analysis(root))
    entry = {n: (j.targets[-1].entry.path if j.targets[-1].entry else None) for n, j in jobs.items()}
    project = {n: j.runs_project_code for n, j in jobs.items()}
    assert entry[1] == "src/reports/nightly.py"
    assert (entry[2], jobs[2].targets[-1].entry.function) == ("src/shop/sync.py", "main")
    assert entry[3] is None and project[3]  # a Django command of Django itself: still project code
    assert entry[4] == "billing/management/commands/charge.py"
    assert entry[5] == "scripts/rotate.sh"
    assert not project[6] and not project[7]


def test_dockerfile_crontab_lines_and_copies():
    text = ("FROM debian\n"
            "RUN (crontab -l; echo '*/5 * * * * /app/run.sh') | crontab -\n"
            "RUN printf '0 1 * * * root /a\\n0 2 * * * root /b\\n' > /etc/cron.d/jobs\n"
            "COPY --chown=root jobs.cron /etc/cron.d/jobs\n"
            "COPY --from=builder /x /etc/cron.d/x\n")
    result = parse_dockerfile("Dockerfile", text)
    assert [(e.span.line, e.command, e.user) for e in result.entries] == [
        (2, "/app/run.sh", None), (3, "/a", "root"), (3, "/b", "root")]
    assert [(c.line, c.sources, c.dest) for c in result.copies] == [
        (4, ["jobs.cron"], "/etc/cron.d/jobs")]



@pytest.mark.parametrize("build, source", [
    # wger's demo image: the folder is a build argument's default
    ("ARG DOCKER_DIR=./extras/docker/demo\nCOPY ${DOCKER_DIR}/crontab /etc/cron.d/app",
     "./extras/docker/demo/crontab"),
    ("ENV CRON_DIR docker/cron\nCOPY $CRON_DIR/app /etc/cron.d/app", "docker/cron/app"),
    ("ENV BASE=docker APP=cron\nCOPY ${BASE}/${APP}/app ${DEST:-/etc/cron.d/app}",
     "docker/cron/app"),
    # a global ARG is known in a stage only when the stage declares it again
    ("ARG D=docker\nFROM debian\nARG D\nCOPY ${D}/app /etc/cron.d/app", "docker/app"),
    ("ARG D=docker\nFROM debian\nCOPY ${D}/app /etc/cron.d/app", "${D}/app"),
    # no default: left as written (the build decides)
    ("ARG D\nCOPY ${D}/app /etc/cron.d/app", "${D}/app"),
])
def test_a_copys_build_variables_are_expanded(build, source):
    text = build if build.startswith("ARG D=docker") else "FROM debian\n" + build
    result = parse_dockerfile("Dockerfile", text + "\n")
    assert [(c.sources, c.dest) for c in result.copies] == [([source], "/etc/cron.d/app")]


def test_a_cron_d_file_copied_through_a_build_argument_has_its_user_field(write_tree):
    """Read as a user crontab, the user field ``wger`` became the command (a console
    script of the same name), and the fix put ``flock`` in the user's place."""
    root = write_tree({
        "extras/docker/demo/Dockerfile": "FROM python:3.12\nARG DOCKER_DIR=./extras/docker/demo\n"
                                         "RUN apt-get install -y cron\n"
                                         "COPY ${DOCKER_DIR}/crontab /etc/cron.d/wger\n"
                                         "CMD [\"cron\", \"-f\"]\n",
        "extras/docker/demo/crontab": "@daily     wger /home/wger/venvwrapper clearsessions\n",
    })
    [job] = run_analysis(root).project.jobs
    assert (job.user, job.command) == ("wger", "/home/wger/venvwrapper clearsessions")


def test_apscheduler_cron_fields_below_the_last_given_take_their_minimum(write_tree):
    root = write_tree({"clock.py": "\n".join([
        "from apscheduler.schedulers.blocking import BlockingScheduler",
        "scheduler = BlockingScheduler()",
        "def work():",
        "    pass",
        'scheduler.add_job(work, "cron", hour=3)',
        'scheduler.add_job(work, "cron", day_of_week="mon")',
        'scheduler.add_job(work, "cron", minute="*/10")',
        'scheduler.add_job(work, "cron", hour="*/2", minute=15)',
        "scheduler.start()",
    ]) + "\n"})
    crons = [j.schedule.cron for j in sorted(run_analysis(root).project.jobs,
                                             key=lambda j: j.span.line)]
    assert crons == ["0 3 * * *", "0 0 * * mon", "*/10 * * * *", "15 */2 * * *"]


def test_a_namespace_package_is_imported_by_its_unique_dotted_ending(tmp_path):
    """``from crashstats.cron import LOCK_TTL`` where ``webapp/`` is on the path and
    ``webapp/crashstats/`` has no ``__init__.py`` (a PEP 420 namespace package): the one
    module whose path ends so; an ending two modules share resolves to neither."""
    cron = tmp_path / "webapp" / "crashstats" / "cron"
    cron.mkdir(parents=True)
    (cron / "__init__.py").write_text("LOCK_TTL = 2 * 3600\n")
    (cron / "jobs.py").write_text(
        "import redis\nfrom crashstats.cron import LOCK_TTL\nfrom common.limits import WAIT\n"
        "r = redis.Redis()\n\n\ndef run():\n"
        "    with r.lock('cron', timeout=LOCK_TTL, blocking_timeout=WAIT):\n"
        "        pass\n")
    for app in ("one", "two"):  # common/limits.py twice, in no package: ambiguous
        limits = tmp_path / app / "common"
        limits.mkdir(parents=True)
        (limits / "limits.py").write_text(f"WAIT = {len(app)}\n")
    # inside a package, `sklearn.base` is the library, not the package's own sklearn/base.py
    plugin = tmp_path / "mlflow" / "sklearn"
    plugin.mkdir(parents=True)
    for folder in (tmp_path / "mlflow", plugin):
        (folder / "__init__.py").write_text("")
    (plugin / "base.py").write_text("TTL = 5\n")
    (plugin / "job.py").write_text(
        "import redis\nfrom sklearn.base import TTL\nr = redis.Redis()\n\n\ndef run():\n"
        "    with r.lock('fit', timeout=TTL):\n        pass\n")
    locks = run_analysis(tmp_path).project.code_locks
    lock = next(lock for lock in locks if lock.span.path.endswith("jobs.py"))
    assert lock.ttl_seconds == 7200
    assert lock.blocking is None  # WAIT: set, and not known
    library = next(lock for lock in locks if lock.span.path.endswith("job.py"))
    assert library.ttl_seconds != 5


def test_modules_below_a_django_manage_py_are_imported_from_its_folder(tmp_path):
    """socorro: ``webapp/`` holds ``manage.py`` and an ``__init__.py`` of its own, and its
    code imports ``crashstats.cron``: the script's folder is on the path, so the package is
    ``crashstats``, not ``webapp.crashstats``. Without the script the name is the library's."""
    cron = tmp_path / "webapp" / "crashstats" / "cron"
    cron.mkdir(parents=True)
    for folder in (tmp_path / "webapp", tmp_path / "webapp" / "crashstats", cron):
        (folder / "__init__.py").write_text("")
    (cron / "__init__.py").write_text("LOCK_TTL = 2 * 3600\n")
    (cron / "jobs.py").write_text(
        "import redis\nfrom crashstats.cron import LOCK_TTL\nr = redis.Redis()\n\n\n"
        "def run():\n    with r.lock('cron', timeout=LOCK_TTL):\n        pass\n")

    def ttl():
        locks = run_analysis(tmp_path).project.code_locks
        return next(lock for lock in locks if lock.span.path.endswith("jobs.py")).ttl_seconds

    assert ttl() != 7200
    (tmp_path / "webapp" / "manage.py").write_text("import sys\n")
    assert ttl() == 7200


def test_a_packages_cron_daily_script_is_a_job_unless_a_crontab_runs_its_folder(tmp_path):
    """dokuwiki's Debian package ships etc/cron.daily/dokuwiki and no /etc/crontab: the
    script runs at Debian's cron.daily time; a tree whose crontab runs run-parts on the
    folder has that line's job instead (not a second one)."""
    from conftest import run_analysis

    script = tmp_path / "etc/cron.daily/dokuwiki"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\nfind /var/cache/dokuwiki -mtime +30 -delete\n")
    (tmp_path / "etc/cron.daily/README.txt").write_text("not run: run-parts skips the name\n")
    jobs = run_analysis(tmp_path).project.jobs
    assert [(j.span.path, j.schedule.cron) for j in jobs] == [
        ("etc/cron.daily/dokuwiki", "25 6 * * *")]
    (tmp_path / "etc/crontab").write_text(
        "SHELL=/bin/sh\n25 6 * * * root cd / && run-parts --report /etc/cron.daily\n")
    jobs = run_analysis(tmp_path).project.jobs
    assert [j.span.path for j in jobs] == ["etc/crontab"]


@pytest.mark.parametrize("handler, rules", [
    ("except Exception:", []),  # rolled back exactly when the publish fails
    ("except BaseException:", []),
    ("except:", []),
    ("except ConnectionError:", ["JOB203"]),  # other errors skip the release
])
def test_a_marker_rolled_back_in_a_handler_of_every_exception(write_tree, handler, rules):
    """onyx's queued-task marker: SET NX EX, kept after a successful publish (it expires),
    deleted when the publish raises."""
    code = ("import redis\n\nr = redis.Redis()\n\n\ndef enqueue(file_id, send):\n"
            "    if not r.set(f'queued:{file_id}', 1, nx=True, ex=600):\n        return False\n"
            f"    try:\n        send(file_id)\n    {handler}\n"
            "        r.delete(f'queued:{file_id}')\n        raise\n    return True\n")
    root = write_tree({"tasks.py": code})
    assert [f.rule for f in run_analysis(root).findings] == rules
