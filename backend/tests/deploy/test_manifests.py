"""The deployment files in deploy/: Kubernetes manifests valid against the API's schemas,
every setting they pass a real one, Compose and the kustomization consistent."""

from __future__ import annotations

from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from sanitas.config import Settings

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"
KUBE = DEPLOY / "kubernetes"
ALL_INTERFACES = "0.0.0.0"  # noqa: S104 (what the containers' services must bind)
SETTINGS = {f"SANITAS_{name.upper()}" for name in Settings.model_fields}


def _documents(path: Path) -> list[dict]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


MANIFESTS = sorted(p for p in KUBE.glob("*.yaml")
                   if p.name not in ("kustomization.yaml", "keda-scaledobject.yaml"))
# Valid manifests that the kustomization leaves out on purpose: the Secret is made by hand,
# ICAP and the mail filter are optional (their comments say how to add them).
NOT_LISTED = {"secret.example.yaml", "icap.yaml", "mail.yaml"}


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifests_are_valid_kubernetes(path):
    for document in _documents(path):
        kubernetes_validate.validate(document, "1.30.0", strict=True)


def test_the_kustomization_lists_every_manifest():
    listed = set(_documents(KUBE / "kustomization.yaml")[0]["resources"])
    assert listed == {p.name for p in MANIFESTS} - NOT_LISTED
    kustomization = (KUBE / "kustomization.yaml").read_text()
    assert "\n  # - icap.yaml\n" in kustomization  # the optional one is named where it is added
    assert "\n  # - mail.yaml\n" in kustomization


def test_every_setting_passed_is_a_real_one():
    config, secret = (_documents(KUBE / name)[0] for name in ("configmap.yaml",
                                                              "secret.example.yaml"))
    passed = set(config["data"]) | set(secret["stringData"])
    for path in MANIFESTS:
        for document in _documents(path):
            spec = document.get("spec", {}).get("template", {}).get("spec", {})
            for container in spec.get("containers", []):
                passed |= {e["name"] for e in container.get("env", [])}
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    passed |= set(compose["x-sanitas"]["environment"])
    assert passed <= SETTINGS, passed - SETTINGS


def test_workers_get_what_the_sandbox_needs_and_the_api_does_not():
    (api,) = [d for d in _documents(KUBE / "api.yaml") if d["kind"] == "Deployment"]
    workers = [d for d in _documents(KUBE / "workers.yaml") if d["kind"] == "Deployment"]
    (icap,) = [d for d in _documents(KUBE / "icap.yaml") if d["kind"] == "Deployment"]
    (mail,) = [d for d in _documents(KUBE / "mail.yaml") if d["kind"] == "Deployment"]
    api_pod = api["spec"]["template"]["spec"]
    assert api_pod["securityContext"]["runAsNonRoot"] is True
    for worker in [*workers, icap, mail]:  # ICAP and mail clean in the sandbox themselves
        pod = worker["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert container["securityContext"]["procMount"] == "Unmasked"
        assert pod["securityContext"]["seccompProfile"]["type"] == "Localhost"
        assert "SYS_ADMIN" not in container["securityContext"]["capabilities"]["add"]
    assert {w["spec"]["template"]["spec"]["containers"][0]["args"][-1] for w in workers} == \
        {"worker", "--no-beat"}  # exactly one scheduler
    assert icap["spec"]["template"]["spec"]["containers"][0]["args"][:3] == \
        ["icap", "--host", ALL_INTERFACES]  # reachable through its Service, not loopback only
    assert mail["spec"]["template"]["spec"]["containers"][0]["args"][:3] == \
        ["mail", "--listen", f"{ALL_INTERFACES}:10025"]


def test_compose_runs_icap_with_the_sandbox_options_and_a_health_check():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    icap, worker = compose["services"]["icap"], compose["services"]["worker"]
    assert icap["command"][:3] == ["icap", "--host", ALL_INTERFACES]
    assert icap["security_opt"] == worker["security_opt"]
    assert "OPTIONS icap://" in icap["healthcheck"]["test"][-1]
    mail = compose["services"]["mail"]  # the mail filter, only with --profile mail
    assert mail["profiles"] == ["mail"] and mail["security_opt"] == worker["security_opt"]
    assert mail["command"][:3] == ["mail", "--listen", f"{ALL_INTERFACES}:10025"]
    assert mail["ports"][0].startswith("${MAIL_BIND:-127.0.0.1}:")
    assert "EXPOSE 8000 1344" in (DEPLOY.parent / "Containerfile").read_text()


def test_the_schema_check_catches_a_mistake():
    (api,) = [d for d in _documents(KUBE / "api.yaml") if d["kind"] == "Deployment"]
    api["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGett"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(api, "1.30.0", strict=True)
