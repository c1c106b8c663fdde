"""Shell command analysis: wrappers, guards, runtime bounds, backgrounding, lock files."""
import pytest

from jobsafe.sources.shell import Locator, analyze


def facts(text):
    return analyze(text, Locator("crontab", text, 1, 1))


@pytest.mark.parametrize("command, blocking, wait", [
    ("flock /l cmd", True, None),
    ("flock -n /l cmd", False, None),
    ("flock --nonblock /l cmd", False, None),
    ("flock -xn /l cmd", False, None),
    ("flock -w 30 /l cmd", True, 30),
    ("flock -w30 /l cmd", True, 30),
    ("flock --wait=2m /l cmd", True, 120),
    ("flock --timeout 0 /l cmd", False, None),
    ("flock -s -E 3 -n /l -c 'cmd'", False, None),
    ("run-one cmd", False, None),
    ("lckdo /l cmd", False, None),
    ("lckdo -w /l cmd", True, None),
    ("lckdo -W 20 /l cmd", True, 20),
    ("setlock /l cmd", True, None),
    ("setlock -n /l cmd", False, None),
    ("solo -port=3001 cmd", False, None),
])
def test_guards(command, blocking, wait):
    (guard,) = facts(command).guards
    assert (guard.blocking, guard.wait_seconds) == (blocking, wait)


def test_wrappers_are_peeled_to_the_program():
    f = facts("cd /srv && env FOO=1 nice -n 10 ionice -c3 timeout -k 5 1h flock -n /l "
              "sudo -u app /srv/venv/bin/python -u job.py --all")
    (inv, guarded), = [(i, g) for i, g in f.invocations if i.argv[0].text != "cd"]
    assert [w.text for w in inv.argv] == ["/srv/venv/bin/python", "-u", "job.py", "--all"]
    assert guarded and f.runtime_bound == 3600 and f.cd == "/srv"


def test_sh_c_and_flock_c_strings_are_analysed():
    f = facts("sh -c 'flock -n /l python a.py'")
    assert f.guards and [w.text for w in f.invocations[0][0].argv] == ["python", "a.py"]
    assert f.guards[0].span.column == 8  # points into the quoted string


def test_fd_form_flock_guards_the_rest_of_the_subshell():
    f = facts("( flock -n 9 || exit 1; python a.py ) 9>/var/lock/a")
    assert f.guards[0].path == "/var/lock/a" and not f.guards[0].blocking
    assert all(g for _, g in f.invocations)


@pytest.mark.parametrize("command, escapes", [
    ("flock -n /l -c 'cmd &'", True),
    ("flock -n /l nohup cmd", False),
    ("flock -n /l -c 'nohup cmd &'", True),
    ("flock -n /l setsid -f cmd", True),
    ("flock -n /l setsid cmd", False),
    ("flock -n /l screen -dmS x cmd", True),
    ("flock -n /l tmux new -d cmd", True),
    ("flock -n /l docker run -d img", True),
    ("flock -n /l docker run --rm img", False),
    ("flock -n /l systemd-run cmd", True),
    ("flock -n /l systemd-run --scope cmd", False),
    ("flock -n /l -c 'a & b & wait'", False),
    ("flock -n /l cmd &", False),
    ("setsid -f flock -n /l cmd", False),
    ("nohup cmd &", False),
])
def test_work_escaping_the_guard(command, escapes):
    assert bool(facts(command).backgrounds) is escapes


def test_lock_file_forms():
    exists = facts("[ -f /tmp/l ] && exit 0; touch /tmp/l; work; rm /tmp/l").locks[0]
    assert exists.existence_test is not None and not exists.atomic
    mkdir = facts("mkdir /tmp/job.lock.d || exit 0; work").locks[0]
    assert mkdir.kind == "lock-dir" and mkdir.atomic and mkdir.existence_test is None
    noclobber = facts("set -C; echo $$ > /run/x.pid || exit; work").locks[0]
    assert noclobber.kind == "pid-file" and noclobber.atomic
    checked = facts("L=/tmp/l; [ -e $L ] && kill -0 $(cat $L) && exit; echo $$ > $L").locks[0]
    assert checked.stale_handling == "pid-check" and checked.path == "/tmp/l"
    assert facts("touch /tmp/marker; work").locks == []  # not tested, not checked: no lock
    assert facts("mkdir -p /tmp/dir; work").locks == []
    assert facts("mkdir /tmp/out || exit 0; work").locks == []  # an output folder, not a lock
    assert facts("[ -d /var/log/x ] || mkdir /var/log/x; work").locks == []  # ensures a dir
    assert facts("[ -f /tmp/seen ] || touch /tmp/seen").locks == []
    assert facts("if mkdir /tmp/l.d; then work; rmdir /tmp/l.d; fi").locks[0].kind == "lock-dir"
    # apt's time stamps: a missing stamp means "run now", not "locked"
    stamp = 'check() { if [ ! -f "$1" ]; then return 0; fi; return 1; }; touch /var/stamp'
    assert facts(stamp.replace("$1", "/var/stamp")).locks == []
    locked = "busy() { [ -f /run/app.lock ] && return 0; return 1; }; touch /run/app.lock"
    assert facts(locked).locks[0].path == "/run/app.lock"
    assert facts("exec 9>/tmp/l; [ -f /tmp/l ]; flock -n 9; touch /tmp/l").locks == []


def test_redirection_binds_to_the_last_command_of_a_list():
    f = facts("true && echo x >> /etc/crontab")
    echo = [i for i, _ in f.invocations if i.argv[0].text == "echo"][0]
    assert [w.text for _, w in echo.cmd.redirects] == ["/etc/crontab"]
