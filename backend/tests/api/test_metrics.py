"""GET /metrics (sanitas/web/metrics.py): off without a token, bearer-only with one, the series it
promises; a real Prometheus (Debian's package) scrapes a running server; promtool checks the
alert rules in deploy/prometheus against recorded series."""

from __future__ import annotations

import random
import re
import shutil
import socket
import string
import subprocess
import time
from pathlib import Path

import httpx
import psutil
import pytest

from sanitas.engine.report import Result
from sanitas.web import metrics
from tests.api.polling import wait_for
from tests.factories import auth_headers, make_user, pdf_bytes
from tests.live_server import app_server, free_port, start_server, stop_server

TOKEN = "metrics-token-for-tests-0123456789"
DEPLOY = Path(__file__).resolve().parents[3] / "deploy" / "prometheus"


def _value(text: str, series: str) -> float:
    match = re.search(rf"^{re.escape(series)} (\S+)$", text, re.MULTILINE)
    assert match, f"{series} not in the metrics"
    return float(match.group(1))


def test_metrics_are_off_without_a_token(api):
    assert api.get("/metrics").status_code == 404


def test_metrics_need_the_bearer_token(settings, live, db_session):
    settings.metrics_token = TOKEN
    assert live.get("/metrics").status_code == 404
    assert live.get("/metrics", headers={"Authorization": "Bearer wrong"}).status_code == 404
    headers = auth_headers(settings, db_session, make_user(db_session))
    upload = live.post("/api/upload/single", files={"file": ("a.pdf", pdf_bytes())},
                       headers=headers)
    file_id = upload.json()["data"]["fileId"]
    assert wait_for(live, headers, file_id)["file"]["status"] == "COMPLETED"
    live.get(f"/api/process/status/{file_id}", headers=headers)
    answer = live.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    text = answer.text
    # calls by route template, never by raw path
    assert _value(text, 'sanitas_http_requests_total{method="GET",'
                        'route="/api/process/status/{file_id}",status="200"}') >= 1
    assert file_id not in text
    assert _value(text, 'sanitas_job_duration_seconds_count{family="pdf",mode="basic",'
                        'result="ok"}') >= 1  # counted by this process, every test
    assert _value(text, "sanitas_queue_depth") == 0
    assert _value(text, "sanitas_sandbox_starts_total") >= 1
    assert _value(text, 'sanitas_files{status="COMPLETED"}') == 1
    jobs = [line for line in text.splitlines() if line.startswith("sanitas_jobs{")]
    assert len(jobs) == 1 and 'state="completed"' in jobs[0] and jobs[0].endswith(" 1.0")
    assert _value(text, 'sanitas_storage_bytes{kind="original"}') == len(pdf_bytes())


@pytest.mark.skipif(not shutil.which("prometheus"), reason="Debian's prometheus is installed "
                    "by scripts/install.sh --with-test-tools")
def test_a_real_prometheus_scrapes_the_server(settings, tmp_path):
    settings.metrics_token = TOKEN
    with app_server(settings) as port:
        httpx.get(f"http://127.0.0.1:{port}/health")
        web = free_port()
        config = tmp_path / "prometheus.yml"
        config.write_text(
            "global: {scrape_interval: 1s}\n"
            "scrape_configs:\n"
            "  - job_name: sanitas\n"
            f"    authorization: {{credentials: {TOKEN}}}\n"
            f"    static_configs: [{{targets: ['127.0.0.1:{port}']}}]\n")
        prometheus = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'db'}",
             f"--web.listen-address=127.0.0.1:{web}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            found: list = []
            while time.monotonic() < deadline and not found:
                time.sleep(1)
                try:
                    answer = httpx.get(f"http://127.0.0.1:{web}/api/v1/query",
                                       params={"query": 'sanitas_http_requests_total'
                                                        '{route="/health"}'}).json()
                except httpx.HTTPError:
                    continue
                found = answer.get("data", {}).get("result", [])
            assert found, "Prometheus never stored a sample from /metrics"
            up = httpx.get(f"http://127.0.0.1:{web}/api/v1/query",
                           params={"query": 'up{job="sanitas"}'}).json()["data"]["result"]
            assert up and up[0]["value"][1] == "1"
        finally:
            prometheus.terminate()
            prometheus.wait(timeout=20)


@pytest.mark.skipif(not shutil.which("promtool"), reason="promtool comes with prometheus")
def test_alert_rules_fire_on_recorded_series():
    done = subprocess.run(["promtool", "test", "rules", "alerts_test.yml"], cwd=DEPLOY,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_dashboard_and_rules_use_only_metrics_the_server_exports():
    """Every sanitas_* name in the Grafana dashboard and the alert rules is one metrics.py
    defines (a renamed metric must not leave an empty panel or a silent alert)."""
    import json

    from sanitas.web import metrics

    exported = {"sanitas_queue_depth", "sanitas_jobs", "sanitas_files", "sanitas_storage_bytes"}
    for family in (metrics.REQUESTS, metrics.LATENCY, metrics.JOB_SECONDS, metrics.FINDINGS,
                   metrics.REJECTIONS, metrics.SANDBOX_FAILURES, metrics.SANDBOX_STARTS,
                   metrics.SANDBOX_TIMEOUTS):
        for sample in family.collect()[0].samples or []:
            exported.add(sample.name)
        name = family._name  # the base name prometheus-client keeps
        exported |= {name, f"{name}_total", f"{name}_bucket", f"{name}_count", f"{name}_sum"}
    dashboard = json.loads((DEPLOY.parent / "grafana" / "sanitas-dashboard.json").read_text())
    expressions = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    expressions.append((DEPLOY / "alerts.yml").read_text())
    used = {name for text in expressions for name in re.findall(r"sanitas_[a-z_]+", text)}
    assert used and used <= exported, used - exported


def test_a_celery_worker_serves_its_own_metrics_with_the_same_token(settings, live):
    from sanitas.web.metrics import serve_worker_metrics

    settings.metrics_token = TOKEN
    settings.metrics_host, settings.metrics_port = "127.0.0.1", free_port()
    server = serve_worker_metrics(settings)
    try:
        base = f"http://127.0.0.1:{settings.metrics_port}"
        assert httpx.get(f"{base}/metrics").status_code == 404
        assert httpx.get(f"{base}/other", headers={"Authorization": f"Bearer {TOKEN}"}
                         ).status_code == 404
        answer = httpx.get(f"{base}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
        assert answer.status_code == 200 and "sanitas_queue_depth 0.0" in answer.text
    finally:
        server.shutdown()


# -- bounded labels ------------------------------------------------------------------------------
def pipelined(port: int, methods: list[str], path: str = "/health", batch: int = 250) -> dict:
    """One request per method on one connection, `batch` at a time (pipelined): how many
    answers came with each status."""
    statuses: dict[str, int] = {}
    with socket.create_connection(("127.0.0.1", port), timeout=60) as sock:
        buffer = b""
        for start in range(0, len(methods), batch):
            chunk = methods[start:start + batch]
            sock.sendall(b"".join(b"%s %s HTTP/1.1\r\nHost: x\r\n\r\n"
                                  % (m.encode(), path.encode()) for m in chunk))
            answered = 0
            while answered < len(chunk):
                end = buffer.find(b"\r\n\r\n")
                head = buffer[:end].lower() if end >= 0 else b""
                length = (int(head.split(b"content-length:")[1].split(b"\r\n")[0])
                          if b"content-length:" in head else 0)
                if end < 0 or len(buffer) < end + 4 + length:
                    piece = sock.recv(1 << 16)
                    assert piece, "the server closed the connection"
                    buffer += piece
                    continue
                status = head.split(b" ", 2)[1].decode()
                statuses[status] = statuses.get(status, 0) + 1
                buffer = buffer[end + 4 + length:]
                answered += 1
    return statuses


def random_methods(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["X" + "".join(rng.choices(string.ascii_uppercase + string.digits, k=10))
            for _ in range(n)]


def test_random_methods_leave_memory_and_metrics_bounded(tmp_path):
    """20,000 calls with made-up methods (any token is a method to the HTTP parser) to the
    real `sanitas serve`: they once made a series each (~5 KB of memory apiece, a 36 MB
    scrape); now they are one `other` value, and the process stays within a few MB."""
    port = free_port()
    proc = start_server(tmp_path, port, {"SANITAS_METRICS_TOKEN": TOKEN})
    try:
        server = psutil.Process(proc.pid)
        assert pipelined(port, random_methods(1000, 1)) == {"501": 1000}  # warm up
        before = server.memory_info().rss
        started = time.monotonic()
        assert pipelined(port, random_methods(20_000, 2)) == {"501": 20_000}
        took = time.monotonic() - started
        grown = server.memory_info().rss - before
        assert grown < 8 * 1024 * 1024, f"grew {grown / 2**20:.1f} MB"
        answer = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=60,
                           headers={"Authorization": f"Bearer {TOKEN}"})
        assert answer.status_code == 200
        assert len(answer.content) < 200 * 1024, len(answer.content)
        assert _value(answer.text, 'sanitas_http_requests_total{method="other",'
                                   'route="unmatched",status="501"}') == 21_000
        assert "XA" not in answer.text and "XB" not in answer.text
        print(f"20,000 calls in {took:.1f} s; RSS {before / 2**20:.1f} MB, then "
              f"+{grown / 2**20:.1f} MB; /metrics {len(answer.content)} bytes")
    finally:
        stop_server(proc)


def test_metrics_off_make_no_series(api, settings):
    assert not settings.metrics_token

    def counted() -> float:
        return sum(s.value for s in metrics.REQUESTS.collect()[0].samples
                   if s.name.endswith("_total") and s.labels["route"] == "/health")

    before = counted()
    assert api.get("/health").status_code == 200
    assert api.request("XNEVERSEEN", "/health").status_code == 501
    assert counted() == before
    settings.metrics_token = TOKEN  # read at each call
    assert api.get("/health").status_code == 200
    assert counted() == before + 1


def test_unknown_methods_are_one_value_and_answered_501(api, settings):
    settings.metrics_token = TOKEN
    for method in ("XONE", "XTWO", "PROPFIND"):
        answer = api.request(method, "/api/files")
        assert answer.status_code == 501
        assert answer.json() == {"success": False, "message": "This method is not supported.",
                                 "error": "not_implemented"}
        assert answer.headers["x-content-type-options"] == "nosniff"
    assert api.request("PATCH", "/health").status_code == 405  # a known one: routed
    text = api.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
    assert 'method="other",route="unmatched",status="501"' in text
    assert 'method="PATCH",route="/health",status="405"' in text
    assert "XONE" not in text and "PROPFIND" not in text


def test_job_labels_from_the_sandbox_are_bounded():
    """A sandbox's answer is untrusted: made-up finding kinds, modes and codes are counted
    under fixed values, never as new series."""
    result = Result.from_json({
        "status": "rejected", "code": "made_up_code", "detectedType": "pdf" * 10,
        "findings": [{"kind": f"kind-{i}", "location": "x", "action": "removed"}
                     for i in range(50)] + [{"kind": "macro", "location": "y"}]}, name="f")
    metrics.job_finished(result, "mode-from-nowhere", 0.5)
    exported = "\n".join(
        f"{sample.name}{sample.labels}" for family in (
            metrics.JOB_SECONDS, metrics.FINDINGS, metrics.REJECTIONS)
        for sample in family.collect()[0].samples)
    assert "kind-" not in exported and "mode-from-nowhere" not in exported
    assert "made_up_code" not in exported and "pdfpdf" not in exported
    assert "'kind': 'other'" in exported and "'kind': 'macro'" in exported
    assert "'mode': 'other'" in exported and "'family': 'unknown'" in exported
    assert "'code': 'damaged'" in exported  # Result.from_json's own safe value
    for family in (metrics.REQUESTS, metrics.LATENCY, metrics.JOB_SECONDS, metrics.FINDINGS,
                   metrics.REJECTIONS, metrics.SANDBOX_TIMEOUTS, metrics.WEBHOOK_DELIVERIES):
        for sample in family.collect()[0].samples:
            for name, value in sample.labels.items():
                assert len(value) <= 64, (family, name, value)
