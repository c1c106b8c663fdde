"""docker compose files: how many copies of a service run, and which Dockerfile builds it."""
from __future__ import annotations

import os

from ..model import Span
from .yamlfile import YNode


def compose_replicas(rel: str, doc: YNode, files: dict) -> list[tuple[str, int, Span]]:
    """(Dockerfile rel path, replicas, evidence) for services built from the tree with
    ``deploy.replicas`` or ``scale`` above one."""
    services = doc.get("services")
    if services is None or not isinstance(services.value, dict):
        return []
    base = os.path.dirname(rel)
    found = []
    for name, service in services.items():
        node = service.get("deploy", "replicas") or service.get("scale")
        try:
            replicas = int(str(node.value)) if node is not None else 1
        except ValueError:
            continue
        if replicas <= 1:
            continue
        build = service.get("build")
        if build is None:
            continue
        if isinstance(build.value, dict):
            context = build.text("context") or "."
            dockerfile = build.text("dockerfile") or "Dockerfile"
        else:
            context, dockerfile = str(build.value), "Dockerfile"
        path = os.path.normpath(os.path.join(base, context, dockerfile))
        if path in files:
            found.append((path, replicas, Span(doc_path(rel, files), node.key_line or node.line)))
    return found


def doc_path(rel: str, files: dict) -> str:
    return files[rel].display if rel in files else rel
