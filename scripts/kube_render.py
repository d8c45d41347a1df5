"""Renders deploy/kubernetes/ the way `kubectl kustomize` does for what its kustomization uses
(resources, namespace, images), without kubectl: one multi-document YAML on stdout. (For this
kustomization the output equals `kubectl kustomize deploy/kubernetes`, object for object.)

    scripts/kube_render.py [--image NAME:TAG] [--with icap.yaml] [--secret FILE]
                           [--set KEY=VALUE ...] [--podman] [--kinds Deployment,ConfigMap,...]

--image replaces the kustomization's image for `sanitas`; --with adds optional resources the
kustomization leaves commented out; --secret adds a Secret manifest (the example's shape);
--set overrides ConfigMap keys; --kinds keeps only those kinds and prints the others'
kind/name on stderr as skipped.

--podman adapts the result to what `podman kube play` 4.3 (Debian 12) can run, each change a
gap of that version measured by scripts/container-kube-test.sh (docs/deploying.md):
  - a Job becomes a Pod with the Job's pod template (kube play has no Jobs);
  - the Secret becomes a ConfigMap `<name>-secret` and `secretRef`s point to it (kube play
    stores a played Secret as YAML and then fails to read it back as JSON);
  - containers' ports are dropped, probes get the port numbers instead of names (kube play
    publishes every containerPort on the host, so two pods with the same port collide);
  - each emptyDir volume is named after its workload and Deployments get one replica (kube play
    turns an emptyDir into one named volume shared by every pod that names it the same way);
  - a pod's `seccompProfile` of type Localhost is also given as the older annotation
    `seccomp.security.alpha.kubernetes.io/pod: localhost/<file name>`, the only form kube play
    reads; it takes one file name under --seccomp-profile-root (no sub-directory), so that
    option names the folder that holds the profile (profiles/ on a node);
  - a container with `procMount: Unmasked` runs `privileged: true` instead: kube play 4.3
    ignores procMount (the container's /proc stays masked and bubblewrap cannot mount its own)
    and has no other way to unmask it. This widens those pods (all capabilities, no seccomp
    filter; their root is still the unprivileged user namespace of `hostUsers: false`), so the
    kube test shows the manifests run, not that their exact security context suffices: that
    is shown by the podman run and compose tests, which pass the same options as flags.
Used by scripts/container-kube-test.sh; needs PyYAML (the backend's venv has it)."""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path

import yaml

KUBE = Path(__file__).resolve().parents[1] / "deploy" / "kubernetes"
CLUSTER_SCOPED = {"Namespace", "ClusterRole", "ClusterRoleBinding", "PersistentVolume",
                  "StorageClass", "CustomResourceDefinition"}


def load(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def containers(doc: dict) -> list[dict]:
    spec = doc.get("spec", {})
    pod = spec.get("template", {}).get("spec", spec) if doc["kind"] != "Pod" else spec
    return [*pod.get("initContainers", []), *pod.get("containers", [])]


def render(image: str | None, extra: list[str], secret: Path | None,
           settings: dict[str, str]) -> list[dict]:
    (kustomization,) = load(KUBE / "kustomization.yaml")
    namespace = kustomization.get("namespace")
    images = {i["name"]: f"{i.get('newName', i['name'])}:{i.get('newTag', 'latest')}"
              for i in kustomization.get("images", [])}
    if image:
        images["sanitas"] = image
    docs: list[dict] = []
    for name in [*kustomization["resources"], *extra]:
        docs += load(KUBE / name)
    if secret is not None:
        docs += load(secret)
    for doc in docs:
        if namespace and doc["kind"] not in CLUSTER_SCOPED:
            doc["metadata"]["namespace"] = namespace
        if doc["kind"] == "ConfigMap":
            doc["data"].update(settings)
        for container in containers(doc):
            container["image"] = images.get(container["image"], container["image"])
    return docs


def for_podman(docs: list[dict]) -> list[dict]:
    secrets = {d["metadata"]["name"] for d in docs if d["kind"] == "Secret"}
    out: list[dict] = []
    for doc in docs:
        if doc["kind"] == "Secret":
            data = {**doc.get("stringData", {}), **{
                k: base64.b64decode(v).decode() for k, v in doc.get("data", {}).items()}}
            doc = {"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {**doc["metadata"], "name": f"{doc['metadata']['name']}-secret"},
                   "data": data}
        elif doc["kind"] == "Job":
            template = doc["spec"]["template"]
            doc = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {**template.get("metadata", {}),
                                "name": doc["metadata"]["name"],
                                "namespace": doc["metadata"].get("namespace")},
                   "spec": {**template["spec"], "restartPolicy": "Never"}}
        if doc["kind"] in ("Deployment", "Pod"):
            workload = doc["metadata"]["name"]
            pod = doc["spec"]["template"]["spec"] if doc["kind"] == "Deployment" else doc["spec"]
            if doc["kind"] == "Deployment":
                doc["spec"]["replicas"] = 1
            seccomp = pod.get("securityContext", {}).get("seccompProfile", {})
            if seccomp.get("type") == "Localhost":
                meta = doc["spec"]["template"]["metadata"] if doc["kind"] == "Deployment" \
                    else doc["metadata"]
                meta.setdefault("annotations", {})["seccomp.security.alpha.kubernetes.io/pod"] = \
                    f"localhost/{Path(seccomp['localhostProfile']).name}"
            renamed = {}
            for volume in pod.get("volumes", []):
                if "emptyDir" in volume:
                    renamed[volume["name"]] = volume["name"] = f"{workload}-{volume['name']}"
            for container in pod["containers"]:
                for mount in container.get("volumeMounts", []):
                    mount["name"] = renamed.get(mount["name"], mount["name"])
                named = {p["name"]: p["containerPort"] for p in container.pop("ports", [])
                         if "name" in p}
                for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                    for how in ("httpGet", "tcpSocket"):
                        check = container.get(probe, {}).get(how)
                        if check and check["port"] in named:
                            check["port"] = named[check["port"]]
                context = container.get("securityContext", {})
                if context.get("procMount") == "Unmasked":
                    del context["procMount"]
                    context["privileged"] = True
                for source in container.get("envFrom", []):
                    if source.get("secretRef", {}).get("name") in secrets:
                        source["configMapRef"] = {
                            "name": f"{source.pop('secretRef')['name']}-secret"}
        out.append(doc)
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--image")
    parser.add_argument("--with", dest="extra", action="append", default=[])
    parser.add_argument("--secret", type=Path)
    parser.add_argument("--set", dest="settings", action="append", default=[])
    parser.add_argument("--podman", action="store_true",
                        help="adapt to podman kube play 4.3 (see above)")
    parser.add_argument("--kinds", help="comma-separated kinds to keep")
    args = parser.parse_args()
    settings = dict(s.split("=", 1) for s in args.settings)
    docs = render(args.image, args.extra, args.secret, settings)
    if args.podman:
        docs = for_podman(docs)
    if args.kinds:
        keep = set(args.kinds.split(","))
        for doc in docs:
            if doc["kind"] not in keep:
                print(f"skipped {doc['kind']}/{doc['metadata']['name']}", file=sys.stderr)
        docs = [d for d in docs if d["kind"] in keep]
    yaml.safe_dump_all(docs, sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
