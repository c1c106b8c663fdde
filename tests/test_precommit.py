"""The pre-commit hook as users install it: which staged files run it."""
import re
from pathlib import Path

import pytest
import yaml

HOOKS = Path(__file__).resolve().parents[1] / ".pre-commit-hooks.yaml"

#: paths seen in public repositories, and whether the hook must run for them
RUNS = [
    "crontab", "deploy/crontab", "docker/cron/crontab.prod", "ops/app.cron", "conf/jobs.crontab",
    "etc/cron.d/certbot", "debian/cron.d/sysstat", "var/spool/cron/crontabs/www-data",
    "etc/cron.daily/logrotate", "Dockerfile", "docker/Dockerfile.worker", "Containerfile",
    "build/app.dockerfile", "billing/management/commands/charge.py", "bin/sync.sh",
    "scripts/backup.bash", "app/Console/Kernel.php", "routes/console.php",
    "k8s/cronjob.yaml", "charts/app/templates/cronjob.yml", ".github/workflows/nightly.yml",
    "systemd/backup.timer", "lib/systemd/system/backup.service", "srv-data.mount",
    "etc/systemd/system/backup.service.d/override.conf",
    "roles/app/templates/app.service.j2", "templates/crontab.erb", "deploy/cron.tmpl",
    "pyproject.toml", ".jobsafe.toml", "setup.cfg", "Procfile", "etc/fstab",
    "supervisor/conf.d/celery.conf", "etc/supervisord.conf", "pgbouncer.conf", "uwsgi.ini",
    "gunicorn.conf.py", "inventory", "ansible/hosts", "data/dnf-makecache.timer.in",
    "ofelia/config.ini", "deploy/yacron.yaml",
]
SKIPS = [
    "docs/crontab-guide.md", "src/crontab_utils/parse.go", "notes/crontab.md.orig/x.go",
    "README.md", "package.json", "static/app.js", "Makefile", "logo.png", "go.mod",
    "docs/Dockerfile-tips.txt", "cron_helpers/main.rs",
]


@pytest.fixture(scope="module")
def pattern():
    (hook,) = yaml.safe_load(HOOKS.read_text())
    return re.compile(hook["files"])


@pytest.mark.parametrize("path", RUNS)
def test_the_hook_runs_for_every_kind_jobsafe_reads(pattern, path):
    assert pattern.search(path), path


@pytest.mark.parametrize("path", SKIPS)
def test_the_hook_skips_files_that_only_mention_cron(pattern, path):
    assert not pattern.search(path), path
