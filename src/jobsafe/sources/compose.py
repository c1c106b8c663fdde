"""docker compose files: services as workloads — how many copies run (``deploy.replicas``,
``scale``, ``deploy.mode: global``), what they run, which Dockerfile builds them and what
volumes they mount."""
from __future__ import annotations

import os
import shlex

from ..model import Span
from .workloads import Container, Volume, Workload
from .yamlfile import YNode


def compose_services(path: str, rel: str, doc: YNode, files: dict) -> list[Workload]:
    services = doc.get("services")
    if services is None or not isinstance(services.value, dict):
        return []
    named = _named_volumes(path, doc)
    base = os.path.dirname(rel)
    found = []
    for name, service in services.items():
        if not isinstance(service.value, dict):
            continue
        copies, evidence, note = 1, Span(path, service.key_line or service.line), ""
        node = service.get("deploy", "replicas") or service.get("scale")
        if service.text("deploy", "mode") == "global":
            mode = service.get("deploy", "mode")
            copies, evidence, note = 2, Span(path, mode.key_line or mode.line), \
                "deploy.mode global: one container on every node"
        elif node is not None:
            try:
                copies = int(str(node.value))
            except ValueError:
                copies = 1  # an interpolated ${VARIABLE}
            evidence, note = Span(path, node.key_line or node.line), f"{copies} replicas"
        command = service.get("command")
        # what the container runs: its entrypoint, then its command (nextcloud's cron
        # service is `entrypoint: /cron.sh` alone)
        parts = [_words(service.get("entrypoint")), _words(command)]
        line = " ".join(p for p in parts if p) or None
        if command is None or command.value is None:
            command = service.get("entrypoint")
        container = Container(name, service.text("image") or "", line,
                              Span(path, command.line, command.column) if line else None,
                              _mounts(path, service, named), _dockerfile(service, base, files),
                              service.text("container_name"))
        found.append(Workload("compose service", name, copies, evidence, note, [container]))
    return found


def _words(node: YNode | None) -> str | None:
    """A compose ``command``/``entrypoint`` (a list or a string) as one shell line."""
    if node is None or node.value is None:
        return None
    if isinstance(node.value, list):
        return shlex.join(str(n.value) for n in node.elements() if n.value is not None)
    return str(node.value)


def _dockerfile(service: YNode, base: str, files: dict) -> str | None:
    build = service.get("build")
    if build is None:
        return None
    if isinstance(build.value, dict):
        context = build.text("context") or "."
        dockerfile = build.text("dockerfile") or "Dockerfile"
    else:
        context, dockerfile = str(build.value), "Dockerfile"
    rel = os.path.normpath(os.path.join(base, context, dockerfile))
    return files[rel].display if rel in files else None


def _named_volumes(path: str, doc: YNode) -> dict[str, Volume]:
    """Top-level volumes; an ``nfs`` type in ``driver_opts`` or a network driver makes it a
    network filesystem."""
    out = {}
    for name, spec in doc.items_at("volumes"):
        span = Span(path, spec.key_line or spec.line)
        fstype = (spec.text("driver_opts", "type") or "").lower()
        driver = (spec.text("driver") or "local").lower()
        if fstype.startswith(("nfs", "cifs", "smb", "ceph", "glusterfs")):
            address = spec.text("driver_opts", "o") or ""
            out[name] = Volume(name, "network", f"{fstype} volume {address}".strip(), span)
        elif driver != "local" and any(t in driver for t in ("nfs", "efs", "netapp", "ceph",
                                                               "gluster", "azurefile")):
            out[name] = Volume(name, "network", f"volume driver {driver}", span)
        else:
            out[name] = Volume(name, "compose", "named volume", span)
    return out


def _mounts(path: str, service: YNode, named: dict[str, Volume]) -> list[tuple[str, Volume]]:
    mounts = []
    for item in service.list_at("volumes"):
        span = Span(path, item.line)
        if isinstance(item.value, dict):
            source, target = item.text("source") or "", item.text("target") or ""
        else:
            parts = str(item.value or "").split(":")
            source, target = (parts[0], parts[1]) if len(parts) > 1 else ("", parts[0])
        if not target.startswith("/"):
            continue
        if source in named:
            mounts.append((target, named[source]))
        elif source.startswith((".", "/", "~", "$")):
            mounts.append((target, Volume(source, "bind", source, span)))
        else:  # an anonymous volume: the container's own
            mounts.append((target, Volume(source, "other", "anonymous volume", span)))
    return mounts
