"""Django's CACHES read from settings modules: the scope a cache.add lock gets."""
import pytest

from conftest import run_analysis
from jobsafe.sources.python.django_settings import alias_scope, cache_backends, is_settings_module

LOCMEM = '"django.core.cache.backends.locmem.LocMemCache"'
REDIS = '"django.core.cache.backends.redis.RedisCache"'
FILES = '"django.core.cache.backends.filebased.FileBasedCache"'


@pytest.mark.parametrize("settings, alias, scope", [
    ([f'CACHES = {{"default": {{"BACKEND": {LOCMEM}}}}}'], "default", "process"),
    ([f'CACHES = {{"default": {{"BACKEND": {REDIS}}}}}'], "default", None),
    ([f'CACHES = {{"default": {{"BACKEND": {FILES}, "LOCATION": "/tmp/c"}}}}'], "default", "host"),
    ([f'CACHES = {{}}\nCACHES["locks"] = {{"BACKEND": {LOCMEM}}}'], "locks", "process"),
    ([f'CACHES = {{"default": {{"BACKEND": {REDIS}}}}}\nCACHES["default"]["BACKEND"] = {LOCMEM}'],
     "default", None),  # two values written: the widest
    # split settings: the production module's shared backend wins over the base's local one
    ([f'CACHES = {{"default": {{"BACKEND": {LOCMEM}}}}}',
      f'CACHES = {{"default": {{"BACKEND": {REDIS}}}}}'], "default", None),
    ([f'CACHES = {{"default": {{"BACKEND": {LOCMEM}}}}}', 'CACHES = env.cache()'], "default", None),
    ([f'CACHES = {{"default": {{"BACKEND": os.environ["CACHE_BACKEND"]}}}}'], "default", None),
    ([f'CACHES = {{"default": {{"BACKEND": {LOCMEM}}}, **EXTRA}}'], "default", None),
    ([f'CACHES = {{"default": {{"BACKEND": {LOCMEM}}}}}'], "other", None),  # not named
    (['CACHES = {'], "default", None),  # a settings module that does not parse
])
def test_alias_scope_from_settings(settings, alias, scope):
    assert alias_scope(cache_backends(settings), alias) == scope


@pytest.mark.parametrize("rel, is_settings", [
    ("shop/settings.py", True), ("config/settings/production.py", True),
    ("local_settings.py", True), ("settings_prod.py", True),
    ("config/settings/test.py", False), ("test_settings.py", False), ("shop/models.py", False),
])
def test_settings_modules(rel, is_settings):
    assert is_settings_module(rel) is is_settings


COMMAND = '''from django.core.management.base import BaseCommand
{imports}


class Command(BaseCommand):
    def handle(self, *args, **options):
{body}
'''

SPELLINGS = {
    "module cache": ("from django.core.cache import cache",
                     "        if cache.add('k', 1, 240):\n            cache.delete('k')"),
    "aliased caches": ("from django.core.cache import caches as stores",
                       "        c = stores['default']\n        if c.add('k', 1, 240):\n"
                       "            c.delete('k')"),
    "module name": ("from django.core import cache as django_cache",
                    "        if django_cache.cache.add('k', 1, 240):\n"
                    "            django_cache.cache.delete('k')"),
    "project re-export": ("from shop.caching import cache",
                          "        if cache.add('k', 1, 240):\n            cache.delete('k')"),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
@pytest.mark.parametrize("backend, scope", [(LOCMEM, "process"), (REDIS, "cluster")])
def test_cache_lock_scope_follows_the_default_alias(write_tree, spelling, backend, scope):
    imports, body = SPELLINGS[spelling]
    files = {
        "crontab": "*/5 * * * * timeout 4m python3 /srv/manage.py sync\n",
        "manage.py": "import sys\nfrom django.core.management import execute_from_command_line\n"
                     "execute_from_command_line(sys.argv)\n",
        "shop/__init__.py": "", "shop/management/__init__.py": "",
        "shop/management/commands/__init__.py": "",
        "shop/settings.py": f'CACHES = {{"default": {{"BACKEND": {backend}}}}}\n',
        "shop/caching.py": "from django.core.cache import cache\n",
        "shop/management/commands/sync.py": COMMAND.format(imports=imports, body=body),
    }
    root = write_tree(files)
    project = run_analysis(root).project
    locks = [lock for job in project.jobs for lock in job.all_locks]
    assert [(lock.kind, lock.scope) for lock in locks] == [("cache-key", scope)]
