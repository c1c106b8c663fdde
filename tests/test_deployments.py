"""Deployment front ends: workloads and their copies, volumes, claims and host mounts."""
import pytest

from jobsafe.analysis import analyse
from jobsafe.config import Settings
from jobsafe.rules import all_rules
from jobsafe.sources.compose import compose_services
from jobsafe.sources.dockerfile import runner_files, serial_runner_files
from jobsafe.sources.kubernetes import Catalog, classify_claim, workloads
from jobsafe.sources.mounts import fstab_mounts, mount_unit
from jobsafe.sources.workloads import celery_role, image_name, runs_cron_daemon
from jobsafe.sources.yamlfile import load_documents

from conftest import run_analysis


@pytest.mark.parametrize("command, role", [
    ("celery -A proj beat -l info", "beat"),
    ("celery -A proj worker -B", "worker -B"),
    ("celery -A proj worker -l info -B", "worker -B"),
    ("celery -A proj worker --beat --concurrency 4", "worker -B"),
    ("celery -A proj worker -E", "worker"),
    ("sh -c 'celery -A proj worker'", "worker"),
    ("python -m proj.beat", None),
    ("gunicorn app:app", None),
])
def test_celery_roles(command, role):
    assert celery_role(command) == role


def test_image_names_and_cron_daemons():
    assert image_name("registry.example.com:5000/team/billing-cron:1.4") == "billing-cron"
    assert image_name("app@sha256:abc") == "app"
    assert runs_cron_daemon("cron -f") and runs_cron_daemon("/usr/local/bin/supercronic /c")
    assert not runs_cron_daemon("python cronjobs.py")


def test_autoscaler_raises_the_copies_and_daemonsets_run_everywhere():
    docs = load_documents(
        "kind: Deployment\napiVersion: apps/v1\nmetadata: {name: web}\nspec:\n  replicas: 2\n"
        "---\nkind: HorizontalPodAutoscaler\napiVersion: autoscaling/v2\nmetadata: {name: web}\n"
        "spec:\n  scaleTargetRef: {kind: Deployment, name: web}\n  maxReplicas: 8\n"
        "---\nkind: DaemonSet\napiVersion: apps/v1\nmetadata: {name: agent}\nspec: {}\n")
    catalog = Catalog()
    catalog.read("m.yaml", docs)
    found = {w.name: w for w in workloads("m.yaml", docs, catalog)}
    assert (found["web"].copies, found["web"].evidence.line) == (8, 12)
    assert found["agent"].copies > 1 and "DaemonSet" in found["agent"].note


def test_claims_are_classified_by_class_volume_and_access_mode():
    docs = load_documents(
        "kind: StorageClass\napiVersion: v1\nmetadata: {name: fast}\nprovisioner: ebs.csi.aws.com\n"
        "---\nkind: StorageClass\napiVersion: v1\nmetadata: {name: shared}\n"
        "provisioner: nfs.csi.k8s.io\n"
        "---\nkind: PersistentVolume\napiVersion: v1\nmetadata: {name: pv1}\n"
        "spec: {nfs: {server: nas, path: /x}}\n"
        "---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: a}\n"
        "spec: {storageClassName: fast, accessModes: [ReadWriteOnce]}\n"
        "---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: b}\n"
        "spec: {storageClassName: shared}\n"
        "---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: c}\n"
        "spec: {volumeName: pv1}\n"
        "---\nkind: PersistentVolumeClaim\napiVersion: v1\nmetadata: {name: d}\n"
        "spec: {accessModes: [ReadWriteMany]}\n")
    catalog = Catalog()
    catalog.read("s.yaml", docs)
    kinds = {claim: classify_claim(claim, catalog)[0] for claim in "abcde"}
    assert kinds == {"a": "other", "b": "network", "c": "network", "d": "shared", "e": "other"}


def test_compose_services_volumes_and_copies():
    docs = load_documents(
        "services:\n  w:\n    image: w\n    deploy: {mode: global}\n"
        "    volumes: [nas:/srv, ./data:/data, /scratch]\n"
        "  x:\n    image: x\n    scale: ${N}\n"
        "volumes:\n  nas:\n    driver_opts: {type: nfs, o: addr=1.2.3.4}\n")
    services = {w.name: w for w in compose_services("c.yml", "c.yml", docs[0], {})}
    assert services["w"].copies > 1 and services["x"].copies == 1
    mounts = {path: volume.kind for path, volume in services["w"].containers[0].mounts}
    assert mounts == {"/srv": "network", "/data": "bind", "/scratch": "other"}


def test_fstab_and_mount_units():
    fstab = "# comment\n/dev/sda1 / ext4 defaults 0 1\nnas:/e /mnt/e nfs4 defaults 0 0\n" \
            "//srv/share /mnt/s cifs credentials=/x 0 0\n"
    assert [(m.path, m.span.line) for m in fstab_mounts("fstab", fstab)] == \
        [("/mnt/e", 3), ("/mnt/s", 4)]
    unit = "[Mount]\nWhat=nas:/x\nWhere=/srv/x\nType=nfs\n"
    assert [m.path for m in mount_unit("srv-x.mount", "srv-x.mount", unit)] == ["/srv/x"]
    local = "[Mount]\nWhat=/dev/sdb\nWhere=/srv/y\nType=ext4\n"
    assert mount_unit("srv-y.mount", "srv-y.mount", local) == []


def test_supervisor_programs_with_continuations_comments_and_numprocs():
    from jobsafe.sources.supervisor import supervisor_programs

    text = "\n".join([
        "[supervisord]",
        "nodaemon=true",
        "[program:beat]",
        "; the scheduler",
        "command=celery -A shop beat",
        "    --loglevel info ; trailing comment",
        "numprocs = 3 ; per core",
        "[program:nocommand]",
        "numprocs=4",
        "[program:web]",
        "command=gunicorn shop.wsgi -w 4",
        "[group:all]",
        "programs=beat,web",
    ]) + "\n"
    beat, web = supervisor_programs("deploy/shop.conf", text)
    assert (beat.name, beat.copies, beat.evidence.line) == ("beat", 3, 7)
    assert beat.containers[0].command == "celery -A shop beat --loglevel info"
    assert beat.containers[0].command_span.line == 5
    assert beat.note == "numprocs=3 in supervisor program beat"
    assert (web.name, web.copies, web.note) == ("web", 1, "")


@pytest.mark.parametrize("command, files", [
    ('["supercronic", "-passthrough-logs", "/app/jobs.cron"]', ["/app/jobs.cron"]),
    ("supercronic -split-logs -json /srv/crontab", ["/srv/crontab"]),
    ("/usr/local/bin/go-crond --allow-unprivileged root:/app/cron", ["/app/cron"]),
    ("crontab /app/crontab && cron -f", ["/app/crontab"]),
    ("cron -f", []),
    ("supercronic /etc/crontab", []),  # a cron path: read as cron reads it
    ("supercronic -prometheus-listen-address :9746 /app/crontab", ["/app/crontab"]),
    ('["supercronic", "crontab"]', ["/app/crontab"]),  # relative to WORKDIR /app
    ("crontab -l", []),
])
def test_the_crontab_a_container_cron_runner_reads(command, files):
    assert runner_files(command, "/app") == files


@pytest.mark.parametrize("command, serial", [
    ("supercronic /app/crontab", ["/app/crontab"]),
    ("supercronic -overlapping /app/crontab", []),
    ('["supercronic", "/app/crontab"]', ["/app/crontab"]),
    ('["supercronic", "-overlapping", "/app/crontab"]', []),  # the exec form (AzuraCast)
])
def test_supercronic_overlapping_in_both_forms(command, serial):
    assert serial_runner_files(command) == serial


def test_github_runs_a_schedule_at_most_every_five_minutes(write_tree):
    root = write_tree({".github/workflows/poll.yml": (
        "name: Poll\non:\n  schedule:\n    - cron: '* * * * *'\njobs:\n  poll:\n"
        "    runs-on: ubuntu-latest\n    steps:\n      - run: echo poll\n")})
    (job,) = run_analysis(root).project.jobs
    assert job.schedule.min_interval_seconds == 300 and job.schedule.runs_per_day == 288


@pytest.mark.parametrize("supervised,rules", [(True, []), (False, ["JOB110"])])
def test_a_crontab_that_supervisor_hands_supercronic_is_read_in_supercronics_way(
        tmp_path, supervised, rules):
    """pelican's spelling: supervisord runs supercronic on a crontab the Dockerfile copied;
    supercronic reads a last line without a newline, Debian's cron drops it (JOB110)."""
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker/crontab").write_text("* * * * * php /var/www/html/artisan schedule:run")
    (tmp_path / "Dockerfile").write_text("FROM php:8.3\nCOPY . /var/www/html\n"
                                         "COPY docker/crontab /etc/supercronic/crontab\n")
    (tmp_path / "artisan").write_text("#!/usr/bin/env php\n<?php\n")
    if supervised:
        (tmp_path / "docker/supervisord.conf").write_text(
            "[program:supercronic]\ncommand=supercronic -overlapping /etc/supercronic/crontab\n")
    assert [f.rule for f in run_analysis(tmp_path).findings] == rules


@pytest.mark.parametrize("flags,rules", [("", ["JOB104"]), ("-overlapping ", ["JOB101"])])
def test_supercronic_waits_for_a_job_unless_told_to_overlap(tmp_path, flags, rules):
    """stripe-mirakl-connector's spelling: supervisord runs supercronic on the crontab.
    Without -overlapping supercronic never starts a job beside its last run (a guard: no
    JOB101), and a hung run then holds every later one (JOB104)."""
    (tmp_path / "docker").mkdir()
    (tmp_path / "docker/crontab").write_text("*/5 * * * * php /app/bin/sync.php\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/sync.php").write_text("<?php\nsync_all();\n")
    (tmp_path / "Dockerfile").write_text("FROM php:8.3\nCOPY . /app\n"
                                         "COPY docker/crontab /etc/supercronic/crontab\n")
    (tmp_path / "docker/supervisord.conf").write_text(
        f"[program:cron]\ncommand=supercronic {flags}/etc/supercronic/crontab\n")
    assert [f.rule for f in run_analysis(tmp_path).findings] == rules


def test_a_crontab_in_etc_crontabs_read_by_supercronic_is_the_runners(tmp_path):
    """stripe-mirakl-connector: COPY crontab /etc/crontabs/connector-crontab, and supervisord
    runs `supercronic … /etc/crontabs/connector-crontab`: supercronic's file, its jobs guarded
    by supercronic's wait."""
    (tmp_path / "config").mkdir()
    (tmp_path / "config/crontab").write_text("*/5 * * * * php /app/bin/sync.php\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/sync.php").write_text("<?php\nsync_all();\n")
    (tmp_path / "Dockerfile").write_text("FROM php:8.3\nCOPY . /app\n"
                                         "COPY config/crontab /etc/crontabs/connector-crontab\n")
    (tmp_path / "config/supervisord.conf").write_text(
        "[program:cron]\ncommand=supercronic -split-logs /etc/crontabs/connector-crontab\n")
    assert [f.rule for f in run_analysis(tmp_path).findings] == ["JOB104"]


LIFESPAN_APP = (
    "from contextlib import asynccontextmanager\n"
    "from apscheduler.schedulers.asyncio import AsyncIOScheduler\n"
    "from fastapi import FastAPI\n\n"
    "scheduler = AsyncIOScheduler()\n\n\n"
    "@asynccontextmanager\nasync def lifespan(app):\n"
    "    scheduler.add_job(poll, 'interval', seconds=30)\n"
    "    scheduler.start()\n    yield\n\n\n"
    "app = FastAPI(lifespan=lifespan)\n\n\nasync def poll():\n    pass\n")


@pytest.mark.parametrize("server, copies", [
    ("command: uvicorn main:app --host 0.0.0.0 --workers 4", 4),
    ('command: ["uvicorn", "main:app", "--workers", "3"]', 3),
    ("command: hypercorn main:app -w 2", 2),
    ("command: gunicorn -k uvicorn.workers.UvicornWorker -w ${WEB_WORKERS:-4} main:app", 4),
    ("command: uvicorn main:app --host 0.0.0.0", None),  # one process
    ("command: uvicorn main:app --ws auto --workers 1", None),
])
def test_a_scheduler_in_the_lifespan_of_an_app_served_by_several_workers(write_tree, server,
                                                                          copies):
    """FastAPI's lifespan starts the scheduler in every worker process the server forks."""
    root = write_tree({"main.py": LIFESPAN_APP,
                       "docker-compose.yml": f"services:\n  api:\n    build: .\n    {server}\n"})
    found = [f for f in run_analysis(root).findings if f.rule == "JOB107"]
    assert [(f.span.path, f.span.line) for f in found] == ([("main.py", 11)] if copies else [])
    if copies:
        assert f"{copies} worker processes" in found[0].message


EXTENSIONS = ("from apscheduler.schedulers.background import BackgroundScheduler\n\n"
              "scheduler = BackgroundScheduler()\n"
              "scheduler.add_job(print, 'interval', minutes=5)\n")
FACTORY = ("from flask import Flask\n\nfrom .extensions import scheduler\n\n\n"
           "def create_app():\n    app = Flask(__name__)\n    scheduler.start()\n"
           "    return app\n")
HOOKS = "from app.extensions import scheduler\n\nworkers = 4\n\n\ndef {hook}(server, *args):\n    scheduler.start()\n"


@pytest.mark.parametrize("files, expected", [
    # the app factory starts a scheduler made in another module: every worker imports it
    ({"app/__init__.py": FACTORY, "Procfile": "web: gunicorn 'app:create_app()' -w 3\n"},
     [("app/__init__.py", 8, "every process that imports it")]),
    # the same through a module object
    ({"app/__init__.py": FACTORY.replace("from .extensions import scheduler",
                                         "from . import extensions").replace(
        "    scheduler.start()", "    extensions.scheduler.start()"),
      "Procfile": "web: gunicorn 'app:create_app()' -w 3\n"},
     [("app/__init__.py", 8, "every process that imports it")]),
    # preloaded: the factory runs once, in gunicorn's master, before the fork
    ({"app/__init__.py": FACTORY,
      "Procfile": "web: gunicorn 'app:create_app()' -w 3 --preload\n"}, []),
    ({"app/__init__.py": FACTORY, "gunicorn.conf.py": "workers = 3\npreload_app = True\n"}, []),
    # a per-worker hook runs in each worker, preloaded or not
    ({"gunicorn.conf.py": HOOKS.format(hook="post_fork") + "preload_app = True\n"},
     [("gunicorn.conf.py", 7, "each worker process as it starts")]),
    # master hooks run once
    ({"gunicorn.conf.py": HOOKS.format(hook="when_ready")}, []),
    ({"gunicorn.conf.py": HOOKS.format(hook="on_starting")}, []),
    # a FastAPI startup handler registered by a call is per worker, preloaded or not
    ({"main.py": "from fastapi import FastAPI\n\nfrom app.extensions import scheduler\n\n\n"
                 "def start():\n    scheduler.start()\n\n\napp = FastAPI()\n"
                 "app.add_event_handler('startup', start)\n",
      "Procfile": "web: gunicorn -k uvicorn.workers.UvicornWorker -w 4 --preload main:app\n"},
     [("main.py", 7, "each worker process as it starts")]),
    # preloaded, but the app also runs in three replicas: each copy's master starts one
    ({"app/__init__.py": FACTORY,
      "Procfile": "web: gunicorn 'app:create_app()' -w 3 --preload\n",
      "docker-compose.yml": "services:\n  web:\n    build: .\n    command: gunicorn "
                            "'app:create_app()' --preload\n    deploy:\n      replicas: 3\n"},
     [("app/__init__.py", 8, "every process that imports it")]),
])
def test_schedulers_started_by_start_up_hooks(write_tree, files, expected):
    root = write_tree({"app/extensions.py": EXTENSIONS, **files})
    found = [f for f in run_analysis(root).findings if f.rule == "JOB107"]
    assert [(f.span.path, f.span.line) for f in found] == [(p, line) for p, line, _ in expected]
    for finding, (_, _, where) in zip(found, expected):
        assert where in finding.message


STARTER = ("from apscheduler.schedulers.background import BackgroundScheduler\n\n"
           "scheduler = BackgroundScheduler()\n\n\n"
           "def start_scheduler():\n    scheduler.add_job(print, 'interval', minutes=1)\n"
           "    scheduler.start()\n")


@pytest.mark.parametrize("config, reported", [
    # a function that starts the scheduler, called only from a master hook: once
    ("from app import start_scheduler\n\nworkers = 4\n\n\ndef when_ready(server):\n"
     "    start_scheduler()\n", False),
    # ... called from a per-worker hook: in each worker
    ("from app import start_scheduler\n\nworkers = 4\n\n\ndef post_fork(server, worker):\n"
     "    start_scheduler()\n", True),
    # the count read from the environment with a default
    ("import os\n\nfrom app import start_scheduler\n\n"
     "workers = int(os.environ.get('GUNICORN_WORKERS', 6))\n\n\n"
     "def post_worker_init(worker):\n    start_scheduler()\n", True),
])
def test_who_calls_the_function_that_starts_the_scheduler(write_tree, config, reported):
    """StefanCryptoTradingBot's and QuestByCycle's spelling: ``start_scheduler()`` from
    gunicorn's ``when_ready`` runs once, in the master."""
    root = write_tree({"app/__init__.py": STARTER, "gunicorn_config.py": config})
    found = [f for f in run_analysis(root).findings if f.rule == "JOB107"]
    assert [(f.span.path, f.span.line) for f in found] == (
        [("app/__init__.py", 8)] if reported else [])


def test_worker_counts_in_a_start_script_continued_over_lines(write_tree):
    """spiff-arena's boot script: no extension, ``--workers`` on a continuation line."""
    boot = ("#!/usr/bin/env bash\nset -e\nexec gunicorn \\\n  --bind 0.0.0.0:8000 \\\n"
            "  --workers=4 \\\n  app:app\n")
    root = write_tree({"app/__init__.py": STARTER + "\n\nstart_scheduler()\n",
                       "bin/boot_server": boot})
    found = [f for f in run_analysis(root).findings if f.rule == "JOB107"]
    assert [(f.span.path, f.span.line) for f in found] == [("app/__init__.py", 8)]
    assert "4 worker processes" in found[0].message


def test_a_scheduler_started_paused_runs_no_job(write_tree):
    code = STARTER.replace("scheduler.start()", "scheduler.start(paused=True)")
    root = write_tree({"app/__init__.py": code + "\n\nstart_scheduler()\n",
                       "Procfile": "web: gunicorn app:app -w 4\n"})
    assert not [f for f in run_analysis(root).findings if f.rule == "JOB107"]


def test_a_schedule_loop_a_timer_rearms_is_a_scheduler(write_tree):
    """khoj's spelling: ``threading.Timer(60, poll)`` where ``poll`` runs
    ``schedule.run_pending()`` and arms the next timer, started when each worker imports
    the app."""
    app = ("import threading\n\nimport schedule\n\n\n"
           "def poll():\n    timer = threading.Timer(60.0, poll)\n    timer.daemon = True\n"
           "    timer.start()\n    schedule.run_pending()\n\n\npoll()\n")
    root = write_tree({"main.py": app,
                       "gunicorn-config.py": "import os\n\nworkers = int(os.environ.get("
                                             "'GUNICORN_WORKERS', 6))\n"})
    found = [f for f in run_analysis(root).findings if f.rule == "JOB107"]
    assert [(f.span.path, f.span.line) for f in found] == [("main.py", 7)]


def test_a_crontab_two_dockerfiles_install_links_to_either_image(write_tree):
    """pelican's spelling: Dockerfile and Dockerfile.dev both copy the crontab; the compose
    service builds the first, in three replicas."""
    dockerfile = ("FROM php:8.3-cli\nCOPY docker/crontab /etc/crontabs/root\n"
                  "CMD [\"crond\", \"-f\"]\n")
    root = write_tree({
        "Dockerfile": dockerfile, "Dockerfile.dev": dockerfile,
        "docker/crontab": "*/5 * * * * timeout 4m flock -n /tmp/sync.lock /app/bin/sync.sh\n",
        "bin/sync.sh": "#!/bin/sh\necho sync\n",
        "compose.yml": "services:\n  panel:\n    build: .\n    deploy:\n      replicas: 3\n"})
    found = [f.rule for f in run_analysis(root).findings]
    assert "JOB301" in found


def test_a_chart_template_reads_the_charts_values(write_tree):
    """A CronJob template's ``{{ .Values.x }}`` is the chart's values.yaml default; a label
    block a helper renders (``labels: {{- include … | nindent 4 }}`` with a label written
    under it) no longer drops the whole CronJob (netbox's chart)."""
    template = ("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: {{ .Release.Name }}\n"
                "  labels: {{- include \"common.labels\" . | nindent 4 }}\n"
                "    app.kubernetes.io/component: cron\nspec:\n"
                "  schedule: {{ .Values.cron.schedule | quote }}\n"
                "  concurrencyPolicy: Forbid\n  jobTemplate:\n    spec:\n"
                "      activeDeadlineSeconds: {{ .Values.cron.deadline }}\n"
                "      template:\n        spec:\n          containers:\n"
                "            - name: c\n              image: app\n"
                "              command: [\"python\", \"/app/sync.py\"]\n")
    root = write_tree({"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n",
                       "chart/values.yaml": "cron:\n  schedule: \"0 3 * * *\"\n  deadline: 600\n",
                       "chart/templates/cron.yaml": template})
    jobs = [j for j in run_analysis(root).project.jobs if j.source == "k8s"]
    assert [(j.schedule.text, j.runtime_bound_seconds) for j in jobs] == [("0 3 * * *", 600)]


@pytest.mark.parametrize("script, reported", [
    ("#!/bin/sh\nset -e\nexec celery --app=dojo beat -l info\n", True),
    # a role chosen at run time: which program runs is not known here
    ("#!/bin/sh\ncase \"$ROLE\" in\n  beat) exec celery --app=dojo beat ;;\n"
     "  *) exec celery --app=dojo worker ;;\nesac\n", False),
])
def test_a_service_whose_entrypoint_script_execs_celery_beat(write_tree, script, reported):
    """DefectDojo's compose: ``entrypoint: ['/bin/sh', '/entrypoint-celery-beat.sh']``."""
    root = write_tree({
        "docker/entrypoint-celery-beat.sh": script,
        "docker-compose.yml": "services:\n  celerybeat:\n    image: dojo\n    entrypoint: "
                              "['/bin/sh', '/entrypoint-celery-beat.sh']\n    deploy:\n"
                              "      replicas: 2\n"})
    found = [f for f in run_analysis(root).findings if f.rule == "JOB107"]
    assert bool(found) == reported


@pytest.mark.parametrize("entrypoint, linked", [
    # DefectDojo's spelling: a forwarder that waits for the database, then the script
    ("['/wait-for-it.sh', 'db:5432', '-t', '30', '--', '/entrypoint-celery-worker.sh']", True),
    ("['/entrypoint-celery-worker.sh']", True),
    ("['/wait-for-it.sh', 'db:5432', '--', 'python', 'serve.py']", False),
])
def test_a_beat_schedule_runs_in_the_workers_an_entrypoint_script_starts(write_tree,
                                                                          entrypoint, linked):
    root = write_tree({
        "proj/celery.py": "from celery import Celery\nfrom celery.schedules import crontab\n"
                          "app = Celery('proj')\napp.conf.beat_schedule = {'sync': {\n"
                          "    'task': 'proj.tasks.sync', 'schedule': crontab(minute=0)}}\n",
        "docker/entrypoint-celery-worker.sh": "#!/bin/bash\nset -e\nexec celery --app=proj \\\n"
                                              "    worker \\\n  --loglevel=info\n",
        "docker-compose.yml": f"services:\n  worker:\n    image: proj\n"
                              f"    entrypoint: {entrypoint}\n"})
    jobs = [j for j in run_analysis(root).project.jobs if j.source == "celery"]
    assert jobs and all((j.workload is not None) == linked for j in jobs)
    if linked:
        assert jobs[0].workload.name == "worker"


@pytest.mark.parametrize("line", [
    'schedule: "{{ .Values.cron.schedule }}"',  # inside quotes already
    "schedule: {{ .Values.cron.schedule | toYaml }}",  # an inline scalar, not a block
    "schedule: {{ .Values.cron.schedule | quote }}",
])
def test_chart_values_keep_the_line_yaml(write_tree, line):
    template = ("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: c\nspec:\n"
                f"  {line}\n  concurrencyPolicy: Forbid\n  jobTemplate:\n    spec:\n"
                "      activeDeadlineSeconds: 60\n      template:\n        spec:\n"
                "          containers:\n            - name: c\n              image: app\n")
    root = write_tree({"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n",
                       "chart/values.yaml": "cron:\n  schedule: \"0 3 * * *\"\n",
                       "chart/templates/cron.yaml": template})
    analysis = run_analysis(root)
    assert [j.schedule.text for j in analysis.project.jobs] == ["0 3 * * *"]
    assert not analysis.project.parse_errors


def test_a_crontab_line_a_compose_command_writes(write_tree):
    """firefly-iii's spelling: ``sh -c "echo '…' | crontab - && crond -f"`` as a service's
    command: a cron job of that service, in its replicas."""
    root = write_tree({
        "bin/sync.sh": "#!/bin/sh\necho sync\n",
        "docker-compose.yml": (
            "services:\n  cron:\n    image: alpine\n    command: sh -c \"echo '*/5 * * * * "
            "timeout 4m flock -n /tmp/sync.lock /app/bin/sync.sh' | crontab - && crond -f\"\n"
            "    deploy:\n      replicas: 2\n")})
    analysis = run_analysis(root)
    jobs = [j for j in analysis.project.jobs if j.source == "cron"]
    assert [(j.schedule.text, j.replicas.count if j.replicas else None) for j in jobs] == [
        ("*/5 * * * *", 2)]
    assert "JOB301" in [f.rule for f in analysis.findings]


def test_crontab_lines_an_entrypoint_script_writes(write_tree):
    """zulip's spelling: an entrypoint that writes lines into /etc/cron.d when it runs; a
    ``printf`` format whose schedule comes from a variable gives no job and no error."""
    script = ("#!/bin/bash\nif [ \"$AUTO_BACKUP\" = True ]; then\n"
              "  printf '%s cd /;/sbin/entrypoint.sh app:backup\\n' \"$INTERVAL\" "
              ">/etc/cron.d/autobackup\nfi\n"
              "echo '*/10 * * * * app /srv/app/bin/digest.sh' > /etc/cron.d/digest\n"
              "exec supervisord\n")
    root = write_tree({"docker/entrypoint.sh": script,
                       "bin/digest.sh": "#!/bin/sh\necho digest\n"})
    analysis = run_analysis(root)
    assert [(j.span.path, j.span.line, j.schedule.text) for j in analysis.project.jobs] == [
        ("docker/entrypoint.sh", 5, "*/10 * * * *")]
    assert [f.rule for f in analysis.findings] == ["JOB101"]
    assert not analysis.project.parse_errors


@pytest.mark.parametrize("every, refused", [("2562047h", False), ("2562048h", True),
                                            ("99999999999999h", True)])
def test_an_every_longer_than_go_holds_is_refused(write_tree, every, refused):
    """Go's time.Duration holds 2^63-1 ns (2562047h47m16.854775807s): robfig/cron, so
    Kubernetes, refuses a longer ``@every``."""
    root = write_tree({"cj.yaml": (
        "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: x\nspec:\n"
        f"  schedule: \"@every {every}\"\n  concurrencyPolicy: Forbid\n  jobTemplate:\n"
        "    spec:\n      activeDeadlineSeconds: 60\n      template:\n        spec:\n"
        "          containers:\n            - name: c\n              image: app\n")})
    found = [f for f in run_analysis(root).findings if f.rule == "JOB113"]
    assert bool(found) == refused
    assert all("crontab FILE" not in f.message for f in found)


@pytest.mark.parametrize("fixture, job, expected", [
    ("topology", "cron:worker/jobs.cron:2",
     ("compose service", "worker", 3)),
    ("topology", "cron:worker/single.cron:1",
     ("compose service", "single", 1)),
    ("k8s_cronjobs", "k8s:deploy/cronjobs.yaml:rollup",
     ("CronJob", "rollup", 1)),
    ("ansible", "ansible:site.yml:10", ("host group", "web", 3)),
    # a Laravel task runs where `artisan schedule:run` runs: the crontab's container
    ("laravel_scheduler", "laravel:app/Console/Kernel.php:16",
     ("compose service", "scheduler", 3)),
])
def test_the_inventory_names_the_workload_that_runs_each_job(fixture, job, expected):
    jobs = {j.id: j for j in run_analysis(f"tests/fixtures/{fixture}").project.jobs}
    workload = jobs[job].workload
    assert workload is not None and (workload.kind, workload.name, workload.copies) == expected


def test_a_crontab_no_workload_runs_has_none():
    jobs = run_analysis("tests/fixtures/never_runs").project.jobs
    assert all(j.workload is None for j in jobs if j.source == "cron")


@pytest.mark.parametrize("value, refused", [('""', False), ("Europe/Berln", True),
                                            ("Europe/Berlin", False)])
def test_a_charts_time_zone_value(write_tree, value, refused):
    """netbox's chart: ``{{- if .Values.housekeeping.timezone }}`` around ``timeZone:``,
    with ``timezone: ""`` in values.yaml — the key is not rendered, nothing is refused."""
    template = ("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: c\nspec:\n"
                "  schedule: \"0 3 * * *\"\n  {{- if .Values.timezone }}\n"
                "  timeZone: {{ .Values.timezone }}\n  {{- end }}\n"
                "  concurrencyPolicy: Forbid\n  jobTemplate:\n    spec:\n"
                "      activeDeadlineSeconds: 60\n      template:\n        spec:\n"
                "          containers:\n            - name: c\n              image: app\n")
    root = write_tree({"chart/Chart.yaml": "apiVersion: v2\nname: c\nversion: 1.0.0\n",
                       "chart/values.yaml": f"timezone: {value}\n",
                       "chart/templates/cron.yaml": template})
    found = [f for f in run_analysis(root).findings if f.rule == "JOB113"]
    assert bool(found) == refused


@pytest.mark.parametrize("from_parent", [False, True])
@pytest.mark.parametrize("remote, linked", [
    ("https://github.com/pterodactyl/panel.git", True),
    ("git@github.com:pterodactyl/panel.git", True),
    ("https://github.com/someone/else.git", False),
])
def test_a_root_dockerfiles_image_named_after_the_repository(write_tree, monkeypatch, remote,
                                                             linked, from_parent):
    """pterodactyl's panel: the root Dockerfile installs the crontab, compose runs
    ``ghcr.io/pterodactyl/panel`` — the repository's own image, by the name of its remote."""
    root = write_tree({
        "Dockerfile": "FROM php:8.3-fpm-alpine\nCOPY .github/docker/crontab /etc/crontabs/root\n"
                      "CMD [\"crond\", \"-f\"]\n",
        ".github/docker/crontab": "* * * * * php /app/artisan schedule:run\n",
        "docker-compose.example.yml": "services:\n  panel:\n"
                                      "    image: ghcr.io/pterodactyl/panel:latest\n",
        ".git/config": f"[core]\n\tbare = false\n[remote \"origin\"]\n\turl = {remote}\n"
                       "\tfetch = +refs/heads/*:refs/remotes/origin/*\n"})
    if from_parent:  # `jobsafe check panel/` from the folder above: the same links
        monkeypatch.chdir(root.parent)
        project = analyse([root.name], Settings(), sorted(all_rules())).project
    else:
        project = run_analysis(root).project
    jobs = [j for j in project.jobs if j.source == "cron"]
    assert jobs and all((j.workload is not None) == linked for j in jobs)


@pytest.mark.parametrize("entrypoint, linked", [
    ("/cron.sh", True),                # the script the image starts crond with
    ("[\"/cron.sh\"]", True),
    ("sh /cron.sh", True),
    ("/entrypoint.sh", False),         # copied in too, but it starts no cron daemon
])
def test_a_service_running_the_script_an_image_starts_crond_with(write_tree, entrypoint,
                                                                 linked):
    """nextcloud's images: each variant's Dockerfile copies ``*.sh`` to ``/`` and installs
    a crontab; compose runs the published image with ``entrypoint: /cron.sh``, the copied
    script that execs busybox's crond: that service runs the image's crontab."""
    root = write_tree({
        "31/apache/Dockerfile": "FROM php:8.3-apache\n"
                                "RUN echo '*/5 * * * * php -f /var/www/html/cron.php' > "
                                "/var/spool/cron/crontabs/www-data\n"
                                "COPY *.sh upgrade.exclude /\nCMD [\"apache2-foreground\"]\n",
        "31/apache/cron.sh": "#!/bin/sh\nset -eu\nexec busybox crond -f -L /dev/stdout\n",
        "31/apache/entrypoint.sh": "#!/bin/sh\nexec \"$@\"\n",
        "31/apache/upgrade.exclude": "/config/\n",
        "stack.yml": f"services:\n  cron:\n    image: nextcloud\n    entrypoint: {entrypoint}\n",
    })
    [job] = [j for j in run_analysis(root).project.jobs if j.source == "cron"]
    assert (job.workload is not None) == linked
    if linked:
        assert (job.workload.name, job.workload.confidence.value) == ("cron", "medium")


@pytest.mark.parametrize("image, linked", [
    ("registry.example.com/tools/workorder-worker:latest", True),  # repository-suffix
    ("registry.example.com/tools/worker:1.2", True),
    ("registry.example.com/tools/other-worker:latest", False),
])
def test_a_crontab_copied_with_its_folder_and_installed_by_crontab_file(write_tree, image,
                                                                       linked):
    """workorder's worker image: ``COPY /src/app/worker .`` then ``RUN crontab
    /app/worker/crontab`` (a user crontab), run by the Deployment of the image named after
    the repository and the Containerfile's suffix."""
    root = write_tree({
        "deploy/container/Containerfile.worker":
            "FROM python:3.12\nRUN apt-get update && apt-get install -y cron\n"
            "WORKDIR /app/worker\nCOPY /src/app/worker .\nRUN crontab /app/worker/crontab\n"
            "CMD [\"./entry.sh\"]\n",
        "src/app/worker/crontab": "0 5 * * * /usr/local/bin/python3 /app/worker/main.py\n",
        "src/app/worker/main.py": "print('work')\n",
        "src/app/worker/entry.sh": "#!/bin/sh\ncron -f\n",
        "deploy/k8s/manifest.yaml": "kind: Deployment\napiVersion: apps/v1\nmetadata:\n"
                                    "  name: worker\nspec:\n  replicas: 1\n  template:\n"
                                    "    spec:\n      containers:\n        - name: w\n"
                                    f"          image: \"{image}\"\n",
        ".git/config": "[remote \"origin\"]\n\turl = https://github.com/x/workorder.git\n"})
    [job] = [j for j in run_analysis(root).project.jobs if j.source == "cron"]
    assert job.user is None and job.command.startswith("/usr/local/bin/python3")
    assert (job.workload is not None) == linked
