"""In-process schedules as projects write them: Celery beat entries in a dict of any name,
merged later; one entry set by subscript; ``app.conf.update(beat_schedule=...)``; Django's
upper-case setting; day names as Celery reads them."""
import pytest
from conftest import run_analysis

TASKS = "from celery import shared_task\n\n\n" + "\n\n".join(
    f"@shared_task\ndef {name}():\n    print('{name}')\n"
    for name in ("digest", "cleanup", "notify", "report", "weekly", "sweep"))


def celery_jobs(analysis):
    return {job.command: job.schedule for job in analysis.project.jobs if job.source == "celery"}


def test_beat_entries_in_a_dict_of_any_name_merged_later(write_tree):
    root = write_tree({
        "proj/__init__.py": "", "proj/tasks.py": TASKS,
        "proj/celery_beat.py": (
            "from celery.schedules import crontab\n\n"
            "PERIODIC_TASKS_ALL = {\n"
            "    'digest': {'task': 'proj.tasks.digest', 'schedule': crontab(minute='*/15')},\n"
            "    'cleanup': {'task': 'proj.tasks.cleanup', 'schedule': 3600.0},\n"
            "}\n"),
        "proj/settings.py": (
            "from proj.celery_beat import PERIODIC_TASKS_ALL\n\n"
            "CELERY_BEAT_SCHEDULE = dict(PERIODIC_TASKS_ALL)\n"),
    })
    jobs = celery_jobs(run_analysis(root))
    assert jobs["proj.tasks.digest"].cron == "*/15 * * * *"
    assert jobs["proj.tasks.cleanup"].min_interval_seconds == 3600
    assert len(jobs) == 2  # the merge is not a second copy


def test_subscript_entry_conf_update_and_day_names(write_tree):
    root = write_tree({
        "proj/__init__.py": "", "proj/tasks.py": TASKS,
        "proj/celery.py": (
            "from celery import Celery\nfrom celery.schedules import crontab\n\n"
            "app = Celery('proj')\n"
            "app.conf.update(beat_schedule={\n"
            "    'notify': {'task': 'proj.tasks.notify', 'schedule': 120},\n"
            "    'weekly': {'task': 'proj.tasks.weekly',\n"
            "               'schedule': crontab(hour=7, minute=0, day_of_week='monday')},\n"
            "})\n"
            "app.conf.beat_schedule['report'] = {\n"
            "    'task': 'proj.tasks.report', 'schedule': crontab(hour=2, minute=30)}\n"),
    })
    jobs = celery_jobs(run_analysis(root))
    assert jobs["proj.tasks.notify"].min_interval_seconds == 120
    assert jobs["proj.tasks.weekly"].cron == "0 7 * * mon"
    assert jobs["proj.tasks.report"].cron == "30 2 * * *"
    assert not [f for f in run_analysis(root).findings if f.rule == "JOB900"]


def test_a_dict_of_other_things_is_no_schedule(write_tree):
    root = write_tree({
        "proj/__init__.py": "", "proj/tasks.py": TASKS,
        "proj/config.py": "ROUTES = {'sweep': {'task': 'proj.tasks.sweep', 'queue': 'low'}}\n",
    })
    assert celery_jobs(run_analysis(root)) == {}


# -- a Celery task's own time limit is its job's runtime bound

LIMITED = '''{imports}
from django.core.cache import cache


{decorator}
def sync(*args):
    if not cache.add("lock:sync", 1, 240):
        return
    try:
        print("syncing")
    finally:
        cache.delete("lock:sync")
'''


@pytest.mark.parametrize("imports, decorator, bound", [
    ("from celery import shared_task", "@shared_task(time_limit=3600)", 3600),
    ("from proj.celery import app\nfrom proj.limits import HOUR",
     "@app.task(bind=True, time_limit=HOUR, soft_time_limit=HOUR - 60)", 3600),
    ("from datetime import timedelta\n\nfrom celery import shared_task as task",
     "@task(time_limit=timedelta(minutes=90).total_seconds())", 5400),
    ("from celery import shared_task\nfrom django.conf import settings",
     "@shared_task(time_limit=settings.TASKS_TIME_LIMIT * 2)", 3600),
    # a soft limit only raises inside the task, which may catch it: no bound
    ("from celery import shared_task", "@shared_task(soft_time_limit=3600)", None),
    # another library's decorator: not the worker's limit
    ("from proj.limits import throttle", "@throttle(time_limit=3600)", None),
])
def test_a_celery_tasks_time_limit_bounds_its_job(write_tree, imports, decorator, bound):
    root = write_tree({
        "proj/__init__.py": "",
        "proj/limits.py": "HOUR = 60 * 60\n\n\ndef throttle(**kw):\n    return lambda f: f\n",
        "proj/settings.py": "TASKS_TIME_LIMIT = 30 * 60\n",
        "manage.py": "import os\n\nos.environ.setdefault('DJANGO_SETTINGS_MODULE', "
                     "'proj.settings')\n",
        "proj/celery.py": "from celery import Celery\n\napp = Celery('proj')\n"
                          "app.conf.beat_schedule = {'sync': {'task': 'proj.tasks.sync', "
                          "'schedule': 300.0}}\n",
        "proj/tasks.py": LIMITED.format(imports=imports, decorator=decorator),
    })
    analysis = run_analysis(root)
    [job] = [job for job in analysis.project.jobs if job.source == "celery"]
    assert job.runtime_bound_seconds == bound
    lines = LIMITED.format(imports=imports, decorator=decorator).split("\n")
    if bound is None:
        assert analysis.findings == []
    else:  # the four-minute lock is lost by a run the worker lets go on
        [finding] = analysis.findings
        assert finding.rule == "JOB207"
        assert "cache.add" in lines[finding.span.line - 1]
        assert [lines[r.span.line - 1] for r in finding.related] == [decorator]


@pytest.mark.parametrize("settings, decorator, bound, line", [
    ({"proj/settings.py": "DEBUG = False\nCELERY_TASK_TIME_LIMIT = 60 * 60\n"},
     "@shared_task", 3600, "CELERY_TASK_TIME_LIMIT = 60 * 60"),
    # a settings class (django-configurations), Celery 3's name
    ({"proj/settings/base.py": "class Base:\n    CELERYD_TASK_TIME_LIMIT = 1800\n"},
     "@shared_task", 1800, "    CELERYD_TASK_TIME_LIMIT = 1800"),
    # the task's own limit comes first
    ({"proj/settings.py": "CELERY_TASK_TIME_LIMIT = 60\n"}, "@shared_task(time_limit=600)",
     600, "@shared_task(time_limit=600)"),
    # settings modules that disagree (which one runs is the deployment's choice): unknown
    ({"proj/settings/base.py": "CELERY_TASK_TIME_LIMIT = 3600\n",
      "proj/settings/production.py": "from .base import *\n\nCELERY_TASK_TIME_LIMIT = 120\n"},
     "@shared_task", None, None),
    # not a settings module
    ({"proj/limits.py": "CELERY_TASK_TIME_LIMIT = 3600\n"}, "@shared_task", None, None),
])
def test_the_workers_time_limit_from_djangos_settings(write_tree, settings, decorator,
                                                       bound, line):
    root = write_tree({
        "proj/__init__.py": "", **settings,
        "proj/celery.py": "from celery import Celery\n\napp = Celery('proj')\n"
                          "app.config_from_object('django.conf:settings', namespace='CELERY')\n"
                          "app.conf.beat_schedule = {'sync': {'task': 'proj.tasks.sync', "
                          "'schedule': 300.0}}\n",
        "proj/tasks.py": LIMITED.format(imports="from celery import shared_task",
                                        decorator=decorator),
    })
    analysis = run_analysis(root)
    [job] = [job for job in analysis.project.jobs if job.source == "celery"]
    assert job.runtime_bound_seconds == bound
    if bound is None:
        assert analysis.findings == []
    else:
        [finding] = analysis.findings
        assert finding.rule == "JOB207"
        [related] = finding.related
        assert (root / related.span.path).read_text().split("\n")[related.span.line - 1] == line


@pytest.mark.parametrize("conf, bound", [
    ("app.conf.task_time_limit = 10 * 60\n", 600),
    ("LIMIT = 900\napp.conf.update(task_time_limit=LIMIT, worker_prefetch_multiplier=1)\n", 900),
    ("\n\ndef configure(celery):\n    celery.conf.update(task_time_limit=1200)\n", 1200),
    ("app.conf.task_soft_time_limit = 600\n", None),
])
def test_the_workers_time_limit_from_the_apps_conf(write_tree, conf, bound):
    root = write_tree({
        "proj/__init__.py": "",
        "proj/celery.py": "from celery import Celery\n\napp = Celery('proj')\n" + conf +
                          "app.conf.beat_schedule = {'sync': {'task': 'proj.tasks.sync', "
                          "'schedule': 300.0}}\n",
        "proj/tasks.py": LIMITED.format(imports="from celery import shared_task",
                                        decorator="@shared_task"),
    })
    analysis = run_analysis(root)
    [job] = [job for job in analysis.project.jobs if job.source == "celery"]
    assert job.runtime_bound_seconds == bound
    assert [f.rule for f in analysis.findings] == (["JOB207"] if bound else [])
    if bound:
        [related] = analysis.findings[0].related
        assert related.span.path == "proj/celery.py"


def test_the_apps_conf_alone_makes_a_module_worth_reading(write_tree):
    """A module that only configures the app (its beat schedule in Django's settings) is
    read for the limit."""
    root = write_tree({
        "proj/__init__.py": "",
        "proj/celery.py": "from celery import Celery\n\napp = Celery('proj')\n"
                          "app.conf.task_time_limit = 3600\n",
        "proj/settings.py": "CELERY_BEAT_SCHEDULE = {'sync': {'task': 'proj.tasks.sync', "
                            "'schedule': 300.0}}\n",
        "proj/tasks.py": LIMITED.format(imports="from celery import shared_task",
                                        decorator="@shared_task"),
    })
    [job] = [job for job in run_analysis(root).project.jobs if job.source == "celery"]
    assert job.runtime_bound_seconds == 3600
