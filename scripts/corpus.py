"""Fixed, versioned corpora of real files, fetched from the package registries into a cache
outside the repository. Shared by ``sweep.py`` (robustness) and ``benchmark.py`` (speed).

Debian packages come from ``apt-get download NAME=VERSION`` (falling back to the archive's
current version, with a note, when a pinned one has been superseded) and are unpacked with
``dpkg -x``; PyPI packages from ``pip download --no-deps`` (the sdist when there is one).
Nothing is installed, imported or run.

The cache is ``$JOBSAFE_CORPUS`` or ``~/.cache/jobsafe-corpus``.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("JOBSAFE_CORPUS") or Path.home() / ".cache" / "jobsafe-corpus")

#: Debian 12 packages that ship crontabs, cron.d files, timers, units and maintenance scripts
DEBIAN = """
cron=3.0pl1-162 cron-daemon-common=3.0pl1-162 sysstat=12.6.1-1 php-common=2:93
php8.2-common=8.2.36-1~deb12u1 logrotate=3.21.0-1 certbot=2.1.0-4 python3-certbot=2.1.0-4
man-db=2.11.2-2 debsums=3.0.2.1 popularity-contest=1.76 anacron=2.3-36 apticron=1.2.5+nmu1
rkhunter=1.4.6-11 chkrootkit=0.57-2+b9 awstats=7.8-3+deb12u2 tmpreaper=1.6.17
exim4-base=4.96-15+deb12u11 apt=2.6.2 dpkg=1.21.23 e2fsprogs=1.47.0-2+b2 plocate=1.1.18-1
mlocate=1.1.18-1 ntpsec=1.2.2+dfsg1-1+deb12u1 spamassassin=4.0.1-1~deb12u1
clamav-freshclam=1.4.6+dfsg-0+deb12u1 munin=2.0.73-1 munin-node=2.0.73-1 sa-exim=4.2.1-20+b1
fail2ban=1.0.2-2 unattended-upgrades=2.9.1+nmu3 needrestart=3.6-4+deb12u4
bsd-mailx=8.1.2-0.20220412cvs-1 mrtg=2.17.10-5+deb12u2 amavisd-new=1:2.13.0-3+deb12u1
atop=2.8.1-1+deb12u1 mdadm=4.2-5 backuppc=4.4.0-8 cacti=1.2.24+ds1-1+deb12u5
mailman3=3.3.8-2~deb12u2 sympa=6.2.70~dfsg-2+deb12u2 clamav-unofficial-sigs=3.7.2-2.1
roundcube-core=1.6.5+dfsg-1+deb12u13 logwatch=7.7-1 sendmail-base=8.17.1.9-2+deb12u2
ntp=1:4.2.8p15+dfsg-2~1.2.2+dfsg1-1+deb12u1 dma=0.13-1+b1 nagios4-common=4.4.6-4+deb12u2
bacula-director=9.6.7-7 btrfs-progs=6.2-1+deb12u2 smartmontools=7.3-1+b1
webalizer=2.23.08-3.3 php-horde=5.2.23+debian0-6 cyrus-common=3.6.1-4+deb12u5
inn2=2.7.1-1+deb12u1 leafnode=1.12.0-2 pflogsumm=1.1.5-8 htdig=1:3.2.0b6-19+b1
spamass-milter=0.4.0-2 fetchmail=6.4.37-1 apt-listchanges=3.24 checksecurity=2.0.16+nmu3
etckeeper=1.18.20-1 util-linux=2.38.1-5+deb12u3 systemd=252.39-1~deb12u2
postgresql-common=248+deb12u2 fwupd=2.0.20-1~deb12u2 xfsprogs=6.1.0-1 snapper=0.10.4-1
borgmatic=1.7.7-1 pcp=6.0.3-1.1 systemd-cron=1.15.19-5 apt-listbugs=0.1.40
docker-compose=1.29.2-3 podman-compose=1.0.3-3
""".split()

#: PyPI packages with lock, pid-file, scheduler, payment, deployment and workflow code
PYPI = """
filelock==4.3.1 portalocker==4.4.2 fasteners==0.20 lockfile==0.12.2 pid==3.0.4
zc.lockfile==4.0 tendo==0.3.0 python-redis-lock==4.0.1 pottery==3.0.1 redis==8.1.0
celery_once==3.0.1 django-crontab==0.7.1 django-cron==0.6.0 apscheduler==3.11.3
celery==5.7.0 django-celery-beat==2.9.0 huey==3.5.4 schedule==1.2.2 ansible-core==2.19.14
kubernetes==37.0.2 stripe==16.1.0 adyen==16.0.0 braintree==4.48.0 squareup==46.0.0.20260916
dj-stripe==2.11.0 django-payments==4.1.0 paypal-checkout-serversdk==1.0.3 pinax-stripe==4.4.0
kopf==1.45.2 dask-kubernetes==2026.3.0 kfp==2.17.3 jupyterhub-kubespawner==7.1.0
apache-airflow-providers-cncf-kubernetes==10.25.0 prefect-kubernetes==0.8.0 kr8s==0.20.15
dagster-k8s==0.29.27 dagster-celery-k8s==0.29.27 mlflow==3.18.0 flower==2.2.0 locust==2.47.0
tutor==22.0.3 seldon-core==1.18.2 pydantic-settings==2.16.3 sentry-sdk==2.75.0
""".split()

#: the benchmark's Python corpus
DJANGO = "django==5.2.19"
#: real trees dense in locks and schedulers (the speed issue's "lock-heavy" corpora)
LOCK_HEAVY = ["mlflow==3.18.0", "celery==5.7.0", "kubernetes==37.0.2",
              "apache-airflow-core==3.1.3"]


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)


def fetch_debian(specs: list[str] = DEBIAN) -> Path:
    """Unpack each package under CACHE/debian/NAME; returns that folder."""
    root = CACHE / "debian"
    downloads = CACHE / "deb"
    downloads.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        name = spec.split("=", 1)[0]
        target = root / name
        if target.exists():
            continue
        debs = sorted(downloads.glob(f"{name}_*.deb"))
        if not debs:
            result = _run(["apt-get", "download", spec], downloads)
            if result.returncode != 0:
                print(f"corpus: {spec} is no longer in the archive; taking the current "
                      f"{name}", file=sys.stderr)
                _run(["apt-get", "download", name], downloads)
            debs = sorted(downloads.glob(f"{name}_*.deb"))
        if not debs:
            print(f"corpus: could not download {name}", file=sys.stderr)
            continue
        target.mkdir(parents=True)
        _run(["dpkg", "-x", str(debs[-1]), str(target)], downloads)
    return root


def fetch_pypi(specs: list[str] = PYPI) -> Path:
    """Unpack each package under CACHE/pypi/NAME-VERSION; returns CACHE/pypi."""
    root = CACHE / "pypi"
    downloads = CACHE / "dist"
    downloads.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        target = root / spec.replace("==", "-")
        if target.exists():
            continue
        before = set(downloads.iterdir())
        pip = [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(downloads)]
        if _run([*pip, "--no-binary", ":all:", spec], downloads).returncode != 0:
            _run([*pip, spec], downloads)  # no sdist, or it needs a build: the wheel
        new = sorted(set(downloads.iterdir()) - before)
        if not new:
            print(f"corpus: could not download {spec}", file=sys.stderr)
            continue
        target.mkdir(parents=True)
        _unpack(new[-1], target)
    return root


def _unpack(archive: Path, target: Path) -> None:
    """Extract without trusting member names (no absolute paths, no ``..``, no links)."""
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.infolist():
                if _safe(member.filename):
                    zf.extract(member, target)
        return
    with tarfile.open(archive) as tf:
        members = [m for m in tf.getmembers() if _safe(m.name) and (m.isfile() or m.isdir())]
        if hasattr(tarfile, "data_filter"):
            tf.extractall(target, members=members, filter="data")
        else:
            tf.extractall(target, members=members)


def _safe(name: str) -> bool:
    return not name.startswith("/") and ".." not in Path(name).parts


def copies(source: Path, times: int, scratch: Path) -> Path:
    """``times`` copies of ``source`` side by side under ``scratch`` (for linearity runs)."""
    target = scratch / f"x{times}"
    if not target.exists():
        for i in range(times):
            shutil.copytree(source, target / f"copy{i}", symlinks=True)
    return target
