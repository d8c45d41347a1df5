"""scripts/kube_render.py, which the kube container test plays: it renders the kustomization as
kustomize would (resources, namespace, image), and its --podman adaptation keeps what the pods
need while working around podman 4.3's gaps (docs/deploying.md)."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
_spec = importlib.util.spec_from_file_location("kube_render", ROOT / "scripts" / "kube_render.py")
assert _spec and _spec.loader
kube_render = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(kube_render)

SECRET = ROOT / "deploy" / "kubernetes" / "secret.example.yaml"


def _by_name(docs: list[dict]) -> dict[tuple[str, str], dict]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def test_render_sets_namespace_and_image_on_every_listed_object():
    docs = _by_name(kube_render.render("localhost/sanitas:test", [], None, {}))
    assert ("Deployment", "sanitas-worker") in docs and ("Job", "sanitas-migrate") in docs
    assert ("Deployment", "sanitas-icap") not in docs  # optional, only --with icap.yaml
    for (kind, _), doc in docs.items():
        assert doc["metadata"].get("namespace") == (None if kind == "Namespace" else "sanitas")
        for container in kube_render.containers(doc):
            assert container["image"] == "localhost/sanitas:test"


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_render_equals_kubectl_kustomize():
    kustomized = subprocess.run(["kubectl", "kustomize", str(ROOT / "deploy" / "kubernetes")],
                                capture_output=True, text=True, check=True).stdout
    theirs = _by_name([d for d in yaml.safe_load_all(kustomized) if d])
    assert _by_name(kube_render.render(None, [], None, {})) == theirs


def test_podman_adaptation_keeps_what_the_pods_need():
    docs = _by_name(kube_render.for_podman(kube_render.render(
        "localhost/sanitas:test", ["icap.yaml"], SECRET, {"SANITAS_S3_CREATE_BUCKET": "1"})))
    assert docs[("ConfigMap", "sanitas")]["data"]["SANITAS_S3_CREATE_BUCKET"] == "1"
    secret = docs[("ConfigMap", "sanitas-secret")]["data"]
    assert set(secret) == set(yaml.safe_load(SECRET.read_text())["stringData"])
    migrate = docs[("Pod", "sanitas-migrate")]
    assert migrate["spec"]["restartPolicy"] == "Never"
    assert migrate["spec"]["containers"][0]["args"] == ["migrate"]
    for name in ("sanitas-scheduler", "sanitas-worker", "sanitas-icap"):
        template = docs[("Deployment", name)]["spec"]["template"]
        pod, (container,) = template["spec"], template["spec"]["containers"]
        assert pod["hostUsers"] is False
        assert template["metadata"]["annotations"][
            "seccomp.security.alpha.kubernetes.io/pod"] == "localhost/sanitas.json"
        assert container["securityContext"]["privileged"] is True
        assert "procMount" not in container["securityContext"]
        assert {"configMapRef": {"name": "sanitas-secret"}} in container["envFrom"]
        assert "ports" not in container
        assert {v["name"] for v in pod["volumes"]} == {f"{name}-data", f"{name}-tmp"}
        assert {m["name"] for m in container["volumeMounts"]} == {f"{name}-data", f"{name}-tmp"}
    api = docs[("Deployment", "sanitas-api")]
    (container,) = api["spec"]["template"]["spec"]["containers"]
    assert container["readinessProbe"]["httpGet"]["port"] == 8000
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert api["spec"]["replicas"] == 1
