"""Network filesystems mounted on the hosts: ``fstab`` lines and systemd ``.mount`` units in
the tree. A ``flock``/``lockf`` lock file under such a mount point behaves as the mount
decides (NFS maps it to byte-range locks through lockd; some mounts ignore it), and a stuck
server blocks the process that waits on it."""
from __future__ import annotations

from ..model import Mount, Span
from .systemd import parse_unit

NETWORK_TYPES = frozenset({
    "nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "fuse.glusterfs", "fuse.sshfs",
    "sshfs", "lustre", "gpfs", "beegfs", "efs", "fuse.s3fs", "davfs", "9p", "afs", "ocfs2"})


def fstab_mounts(path: str, text: str) -> list[Mount]:
    """``server:/export  /srv/shared  nfs4  defaults  0 0``"""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if len(fields) >= 3 and fields[2].lower() in NETWORK_TYPES and fields[1].startswith("/"):
            found.append(Mount(fields[1], "network", f"{fields[2]} mount of {fields[0]}",
                               Span(path, number)))
    return found


def mount_unit(name: str, path: str, text: str) -> list[Mount]:
    """A ``.mount`` unit: ``[Mount] What=… Where=… Type=nfs``."""
    unit, _errors = parse_unit(name, path, text)
    what, where, fstype = (unit.last("Mount", key) for key in ("What", "Where", "Type"))
    if fstype is None or where is None or fstype.value.lower() not in NETWORK_TYPES:
        return []
    source = what.value if what is not None else "?"
    return [Mount(where.value, "network", f"{fstype.value} mount of {source}", fstype.span)]
