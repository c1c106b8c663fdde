"""In-process schedules as projects write them: Celery beat entries in a dict of any name,
merged later; one entry set by subscript; ``app.conf.update(beat_schedule=...)``; Django's
upper-case setting; day names as Celery reads them."""
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
