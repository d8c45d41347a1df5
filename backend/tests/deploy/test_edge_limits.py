"""The reverse proxy example (deploy/nginx.conf.example) applies the API's own edge limits
(http_limits.py, config.py), and the compose file, which has no proxy (docs/deploying.md),
leaves those limits on."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from sanitas.config import Settings
from sanitas.web.http_limits import MAX_BODY_BYTES, MAX_HEADER_BYTES

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def _directive(text: str, name: str) -> list[str]:
    found = re.findall(rf"^\s*{name}\s+([^;]+);", text, re.MULTILINE)
    assert found, f"{name} missing"
    return found[0].split()


def test_the_nginx_example_applies_the_api_limits():
    text = (DEPLOY / "nginx.conf.example").read_text()
    defaults = Settings()
    assert _directive(text, "client_max_body_size") == [f"{MAX_BODY_BYTES // 1024}k"]
    count, size = _directive(text, "large_client_header_buffers")
    assert int(count) * int(size.rstrip("k")) * 1024 == MAX_HEADER_BYTES
    assert _directive(text, "client_header_timeout") == [
        f"{defaults.http_head_timeout_seconds:g}s"]
    zone, per_address = _directive(text, "limit_conn")
    assert zone == "sanitas_per_address"
    assert int(per_address) == defaults.http_connections_per_address
    assert "zone=sanitas_per_address:" in text
    assert _directive(text, "limit_conn_status") == ["429"]
    assert '"error":"too_many_connections"' in text


def test_compose_publishes_the_api_with_its_edge_limits_on():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    api = compose["services"]["api"]
    assert api["command"] == ["serve"]  # serve: the edge protocol, not a bare uvicorn
    environment = {**compose["x-sanitas"]["environment"], **api.get("environment", {})}
    for name in ("SANITAS_HTTP_HEAD_TIMEOUT_SECONDS", "SANITAS_HTTP_CONNECTIONS_PER_ADDRESS"):
        assert str(environment.get(name, "default")) not in ("0", "0.0"), name
    assert "nginx" not in compose["services"]  # why not: docs/deploying.md
    assert "No reverse proxy in the compose file" in (
        DEPLOY.parent / "docs" / "deploying.md").read_text()
