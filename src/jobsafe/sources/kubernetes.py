"""Kubernetes manifests: CronJobs as scheduled jobs; Deployments, StatefulSets, DaemonSets and
HorizontalPodAutoscalers for how many copies run; volumes, claims and storage classes for what
a lock file is written to."""
from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from ..model import Confidence, K8sFacts, MountKind, Span
from .workloads import Container, Volume, Workload
from .yamlfile import TEMPLATE_VALUE, YNode

IGNORE_ANNOTATION = "jobsafe.dev/ignore"


@dataclass
class CronJobSpec:
    name: str
    schedule: str
    schedule_span: Span
    timezone: str | None
    facts: K8sFacts
    object_span: Span
    ignore: tuple[tuple[str, ...], str] | None
    containers: list[Container] = field(default_factory=list)
    parallelism: tuple[int, Span] | None = None  # pods started by every run

    @property
    def commands(self) -> list[tuple[str, Span]]:
        """One shell command line per container that sets one."""
        return [(c.command, c.command_span) for c in self.containers
                if c.command and c.command_span]


@dataclass
class Catalog:
    """Cluster objects that other objects refer to by name."""

    #: (target kind, target name) -> (maxReplicas, evidence)
    autoscalers: dict[tuple[str, str], tuple[int, Span]] = field(default_factory=dict)
    #: claim name -> (storage class, volume name, access modes)
    claims: dict[str, tuple[str | None, str | None, tuple[str, ...]]] = field(default_factory=dict)
    storage_classes: dict[str, str] = field(default_factory=dict)  # name -> provisioner
    #: persistent volume name -> what backs it ("nfs server:/path", "csi efs.csi.aws.com")
    volumes: dict[str, str] = field(default_factory=dict)

    def read(self, path: str, docs: list[YNode]) -> None:
        for doc in docs:
            kind, name = doc.text("kind"), doc.text("metadata", "name")
            if kind == "HorizontalPodAutoscaler":
                target = doc.get("spec", "scaleTargetRef")
                high = doc.get("spec", "maxReplicas")
                count = _integer(high)
                if target is not None and high is not None and count is not None:
                    self.autoscalers[(target.text("kind") or "", target.text("name") or "")] = \
                        (count, Span(path, high.key_line or high.line))
            elif kind == "PersistentVolumeClaim" and name:
                modes = tuple(str(m.value) for m in doc.list_at("spec", "accessModes"))
                self.claims[name] = (doc.text("spec", "storageClassName"),
                                     doc.text("spec", "volumeName"), modes)
            elif kind == "StorageClass" and name:
                self.storage_classes[name] = doc.text("provisioner") or ""
            elif kind == "PersistentVolume" and name:
                backing = _network_source(doc.get("spec"))
                if backing:
                    self.volumes[name] = backing


def cronjobs(path: str, docs: list[YNode]) -> list[CronJobSpec]:
    found = []
    for doc in docs:
        schedule = doc.get("spec", "schedule")
        if doc.text("kind") != "CronJob" or schedule is None:
            continue
        policy = doc.get("spec", "concurrencyPolicy")
        deadline = doc.text("spec", "jobTemplate", "spec", "activeDeadlineSeconds")
        containers = pod_containers(path, doc.get("spec", "jobTemplate", "spec", "template", "spec"))
        parallel = doc.get("spec", "jobTemplate", "spec", "parallelism")
        pods = _integer(parallel)
        name = doc.text("metadata", "name") or "cronjob"
        spec, job_spec = doc.get("spec"), doc.get("spec", "jobTemplate", "spec")
        facts = K8sFacts(
            name=name, concurrency_policy=str(policy.value) if policy is not None else None,
            policy_span=Span(path, policy.key_line or policy.line) if policy is not None else None,
            active_deadline_seconds=_number(deadline),
            deadline_templated=deadline is not None and TEMPLATE_VALUE in deadline,
            policy_value=policy.value_span(path) if policy is not None and
            isinstance(policy.value, str) else None,
            spec_slot=spec.key_slot(path) if spec is not None else None,
            job_spec_slot=job_spec.key_slot(path) if job_spec is not None else None)
        found.append(CronJobSpec(
            name=name, schedule=str(schedule.value), timezone=doc.text("spec", "timeZone"),
            schedule_span=Span(path, schedule.key_line or schedule.line, 1,
                               schedule.key_line or schedule.line, 1),
            facts=facts,
            object_span=Span(path, doc.line, 1, doc.end_line, 1), ignore=annotation_ignore(doc),
            containers=containers,
            parallelism=(pods, Span(path, parallel.key_line or parallel.line))
            if pods and parallel is not None else None))
    return found


_CONTROLLERS = ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet", "DeploymentConfig")


def workloads(path: str, docs: list[YNode], catalog: Catalog) -> list[Workload]:
    """Controllers that keep pods running, with how many copies the tree asks for.

    A Deployment without ``replicas`` runs one pod, unless an autoscaler may raise it."""
    found = []
    for doc in docs:
        kind, name = doc.text("kind"), doc.text("metadata", "name") or ""
        if kind not in _CONTROLLERS:
            continue
        containers = pod_containers(path, doc.get("spec", "template", "spec"))
        if kind == "DaemonSet":
            copies, evidence, note = 2, Span(path, doc.line), "a DaemonSet: one pod on every node"
        else:
            node = doc.get("spec", "replicas")
            count = _integer(node)
            copies, note = (count, f"{count} replicas") if count is not None else (1, "")
            evidence = Span(path, node.key_line or node.line) if node is not None else Span(path, doc.line)
            scaled = catalog.autoscalers.get((kind, name))
            if scaled is not None and scaled[0] > copies:
                copies, evidence = scaled
                note = f"an autoscaler may run up to {copies} replicas"
        found.append(Workload(kind, name, copies, evidence, note, containers))
    return found


def pod_containers(path: str, pod: YNode | None) -> list[Container]:
    """The containers of a pod spec, with command lines and mounted volumes."""
    if pod is None:
        return []
    volumes = {}
    for v in pod.list_at("volumes"):
        vname = v.text("name")
        if vname:
            volumes[vname] = _volume(path, v)
    out = []
    for container in pod.list_at("containers"):
        argv = [str(n.value) for n in container.list_at("command") + container.list_at("args")
                if n.value is not None]
        where = container.get("command") or container.get("args")
        mounts = []
        for m in container.list_at("volumeMounts"):
            mount_path, vname = m.text("mountPath"), m.text("name")
            if mount_path and vname in volumes:
                mounts.append((mount_path, volumes[vname]))
        out.append(Container(container.text("name") or "", container.text("image") or "",
                             shlex.join(argv) if argv else None,
                             Span(path, where.line, where.column) if argv and where else None,
                             mounts))
    return out


_NETWORK_PLUGINS = ("nfs", "cephfs", "glusterfs", "azureFile", "quobyte", "flocker")


def _volume(path: str, v: YNode) -> Volume:
    name = v.text("name") or ""
    span = Span(path, v.line)
    backing = _network_source(v)
    if backing:
        return Volume(name, "network", backing, span)
    if v.get("persistentVolumeClaim") is not None:
        return Volume(name, "pvc", v.text("persistentVolumeClaim", "claimName") or "", span)
    for kind in ("emptyDir", "hostPath"):
        if v.get(kind) is not None or (isinstance(v.value, dict) and kind in v.value):
            return Volume(name, kind, "", span)
    return Volume(name, "other", "", span)


def _network_source(spec: YNode | None) -> str | None:
    """What backs a volume or persistent volume when it is a network filesystem."""
    if spec is None:
        return None
    nfs = spec.get("nfs")
    if nfs is not None:
        return f"nfs {nfs.text('server') or ''}:{nfs.text('path') or ''}"
    for plugin in _NETWORK_PLUGINS[1:]:
        if isinstance(spec.value, dict) and plugin in spec.value:
            return plugin
    driver = spec.text("csi", "driver")
    if driver and is_network_provisioner(driver):
        return f"csi {driver}"
    return None


def is_network_provisioner(name: str) -> bool:
    """NFS, EFS, CephFS, Azure Files, Filestore, GlusterFS provisioners and CSI drivers."""
    lowered = name.lower()
    return any(token in lowered for token in ("nfs", "efs", "cephfs", "glusterfs", "azurefile",
                                              "file.csi.azure", "filestore", "netapp", "fsx"))


def classify_claim(claim: str, catalog: Catalog) -> tuple[MountKind, str, Confidence]:
    """A PVC's (kind, description, confidence): network, shared (ReadWriteMany of an
    unknown class) or other; a network class known only by its name is a low-confidence
    one."""
    storage_class, volume, modes = catalog.claims.get(claim, (None, None, ()))
    if volume and volume in catalog.volumes:
        return "network", f"PVC {claim} on {catalog.volumes[volume]}", Confidence.HIGH
    if storage_class:
        provisioner = catalog.storage_classes.get(storage_class, "")
        if is_network_provisioner(provisioner):
            return "network", f"PVC {claim} of class {storage_class}", Confidence.HIGH
        if is_network_provisioner(storage_class):
            return "network", f"PVC {claim} of class {storage_class}", Confidence.LOW
    if "ReadWriteMany" in modes:
        return "shared", f"PVC {claim} (ReadWriteMany)", Confidence.HIGH
    return "other", f"PVC {claim}", Confidence.HIGH


def annotation_ignore(doc: YNode) -> tuple[tuple[str, ...], str] | None:
    """``jobsafe.dev/ignore: "JOB105,JOB104 -- reason"`` on an object's metadata."""
    value = doc.text("metadata", "annotations", IGNORE_ANNOTATION)
    if value is None:
        return None
    codes, _, reason = value.partition(" -- ")
    return tuple(c.strip() for c in codes.split(",") if c.strip()), reason.strip()


def _integer(node: YNode | None) -> int | None:
    try:
        return int(str(node.value)) if node is not None and node.value is not None else None
    except ValueError:
        return None  # a template placeholder


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None
