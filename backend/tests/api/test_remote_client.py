"""`sanitas remote sanitize`, the command-line client, run as a program against a real
`sanitas serve`: clean copies saved with the server's report printed, a refused file, the
polling path (wait 0), JSON output, and the exit codes of `sanitas sanitize`."""

from __future__ import annotations

import json
import os
import subprocess
import zipfile
from pathlib import Path

import httpx
import pytest
from PIL import Image

from tests.engine.corpus import encrypted_pdf, hostile_jpeg
from tests.engine.corpus_office import hostile_docm
from tests.live_server import BIN, free_port, make_users, start_server, stop_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    data = tmp_path_factory.mktemp("remote-server")
    port = free_port()
    proc = start_server(data, port)
    base = f"http://127.0.0.1:{port}"
    try:
        headers = make_users(data, 1, role="USER")[0]
        secret = httpx.post(f"{base}/api/keys", headers=headers, json={"name": "cli"},
                            timeout=30).json()["data"]["secret"]
        yield base, secret
    finally:
        stop_server(proc)


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("remote-samples")
    docm = folder / "invoice.docm"
    docm.write_bytes(hostile_docm())
    return {"docm": docm, "jpeg": hostile_jpeg(folder / "holiday.jpg"),
            "locked": encrypted_pdf(folder / "locked.pdf")}


def run(args: list[str], key: str | None, **env: str) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SANITAS_")}
    if key is not None:
        environ["SANITAS_API_KEY"] = key
    environ.update(env)
    return subprocess.run([str(BIN / "sanitas"), "remote", "sanitize", *args], env=environ,
                          capture_output=True, text=True, timeout=180, check=False)


def test_clean_copies_and_the_report(server, samples, tmp_path):
    base, key = server
    out = tmp_path / "out"
    done = run([str(samples["docm"]), str(samples["jpeg"]), "--url", base,
                "--output-dir", str(out)], key)
    assert done.returncode == 0, done.stderr
    saved = sorted(p.name for p in out.iterdir())
    assert saved == ["sanitized_holiday.jpg", "sanitized_invoice.docx"]
    with zipfile.ZipFile(out / "sanitized_invoice.docx") as package:
        assert not any("vbaProject" in n for n in package.namelist())
    with Image.open(out / "sanitized_holiday.jpg") as image:
        assert 0x8825 not in image.getexif()  # no GPS
    assert f"ok        {samples['docm']} -> {out / 'sanitized_invoice.docx'}" in done.stdout
    assert "removed" in done.stdout and "macro" in done.stdout.lower()
    assert key not in done.stdout + done.stderr
    # Again: nothing is overwritten.
    again = run([str(samples["jpeg"]), "--url", base, "--output-dir", str(out)], key)
    assert again.returncode == 0 and (out / "sanitized_holiday (2).jpg").exists()


def test_a_refused_file_exits_1_and_json(server, samples, tmp_path):
    base, key = server
    done = run([str(samples["locked"]), str(samples["jpeg"]), "--url", base, "--json",
                "--output-dir", str(tmp_path)], key)
    assert done.returncode == 1, done.stderr
    results = json.loads(done.stdout)
    assert [r["status"] for r in results] == ["rejected", "ok"]
    assert results[0]["code"] == "encrypted" and results[0]["reason"]
    assert results[1]["output"] == str(tmp_path / "sanitized_holiday.jpg")
    assert any(f["kind"] for f in results[1]["findings"])


def test_the_polling_path(server, samples, tmp_path):
    base, key = server
    done = run([str(samples["docm"]), "--url", base, "--wait", "0", "--mode", "advanced",
                "--output-dir", str(tmp_path)], key)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "sanitized_invoice.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize(("key", "message"), [
    (None, "An API key is needed"), ("sk_live_" + "x" * 40, "invalid_api_key")])
def test_call_failures_exit_2(server, samples, tmp_path, key, message):
    done = run([str(samples["jpeg"]), "--url", server[0], "--output-dir", str(tmp_path)], key)
    assert done.returncode == 2 and message in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_unreachable_server_exits_2(samples, tmp_path):
    done = run([str(samples["jpeg"]), "--url", f"http://127.0.0.1:{free_port()}",
                "--output-dir", str(tmp_path)], "sk_live_" + "y" * 40)
    assert done.returncode == 2 and "Cannot reach" in done.stderr


def test_content_disposition_names_stay_in_the_folder():
    from sanitas.remote import _attachment_name

    assert _attachment_name("attachment; filename=\"a.pdf\"; filename*=UTF-8''..%2F..%2Fx.pdf",
                            "in.pdf") == "x.pdf"
    assert _attachment_name('attachment; filename="../../etc/passwd"', "in") == "passwd"
    assert _attachment_name("", "in.pdf") == "sanitized_in.pdf"
    # An invisible right-to-left override goes, and a name may not start with a dot.
    assert _attachment_name("attachment; filename*=UTF-8''%E2%80%AEfdp.exe", "in") == "fdp.exe"
    assert _attachment_name("attachment; filename*=UTF-8''.bashrc", "in") == "bashrc"
