"""ICAP's `X-Sanitas` header carries the verdict (issue 20), driven by c-icap-client: a ZIP
that lost a program is `partial` with its counts, a macro document `cleaned`, a clean picture
stays `clean`, a body refused in the sandbox is `refused`, an encrypted PDF is `encrypted`:
blocked under the default policy, passed byte for byte under one that passes it."""

from __future__ import annotations

import re

from sqlalchemy import select

from sanitas.config import Settings
from sanitas.db import make_engine, make_sessionmaker
from tests.engine.corpus import encrypted_pdf, zip_bytes
from tests.factories import stored_policy
from tests.icap.icapkit import Icap, client, start_icap, stop_icap

COUNTS = re.compile(r"verdict=(\w+); threats=(\d+); hiddenData=(\d+); filesDropped=(\d+); "
                    r"contentDropped=(\d+); textLayerDropped=([01]); encryptedHeld=(\d+); "
                    r"encryptedPassed=(\d+)")


def _x_sanitas(text: str) -> list[str]:
    """Every X-Sanitas line of the answer (the ICAP head's, and the HTTP head's inside)."""
    return [m.strip() for m in re.findall(r"^\s*X-Sanitas:\s?([^\n]*)$", text,
                                          re.MULTILINE | re.IGNORECASE)]


def test_zip_that_lost_a_program_is_partial(icap: Icap, samples, tmp_path):
    body = tmp_path / "bundle.zip"
    body.write_bytes(zip_bytes({"tool.exe": samples["tool.exe"].read_bytes(),
                                "pic.png": samples["clean.png"].read_bytes()}))
    answer = client(icap.port, "sanitize", "-resp", "http://files.example/bundle.zip",
                    body=body, out=tmp_path / "out")
    assert answer.status == 200, answer.text
    lines = _x_sanitas(answer.text)
    assert lines and all(line.startswith("sanitized; findings=") for line in lines), lines
    for line in lines:
        found = COUNTS.search(line)
        assert found, line
        assert found.groups() == ("partial", "0", "0", "1", "0", "0", "0", "0"), line


def test_macro_document_is_cleaned(icap: Icap, samples, tmp_path):
    answer = client(icap.port, "sanitize", "-resp", "http://files.example/macro.docm",
                    body=samples["macro.docm"], out=tmp_path / "out")
    assert answer.status == 200, answer.text
    found = COUNTS.search(answer.header("X-Sanitas") or "")
    assert found and found.group(1) == "cleaned" and int(found.group(2)) > 0, answer.text


def test_clean_and_refused(icap: Icap, samples, tmp_path):
    clean = client(icap.port, "sanitize", "-resp", "http://x/clean.png", "-nopreview",
                   "-no204", body=samples["clean.png"], out=tmp_path / "c")
    assert clean.header("X-Sanitas") == "clean"  # the verdict word itself, unchanged
    refused = client(icap.port, "sanitize", "-resp", "http://x/broken.pdf",
                     body=samples["broken.pdf"], out=tmp_path / "r")
    line = refused.header("X-Sanitas") or ""
    assert line.startswith("blocked; ") and line.endswith("; verdict=refused"), refused.text



def test_an_encrypted_pdf_is_held_back_or_passed_as_not_inspected(icap: Icap, tmp_path):
    from sanitas.models import File

    locked = encrypted_pdf(tmp_path / "locked.pdf")
    held = client(icap.port, "sanitize", "-resp", "http://x/locked.pdf", body=locked,
                  out=tmp_path / "h")
    assert held.header("X-Sanitas-Code") == "encrypted", held.text
    assert held.header("X-Sanitas") == "blocked; encrypted; verdict=encrypted"

    data = tmp_path / "pass"
    policy_id = stored_policy(data, "Pass encrypted", encryptedContent="pass")
    server = start_icap(data, icap_audit="1")
    try:
        passed = client(server.port, f"sanitize?policyId={policy_id}", "-resp",
                        "http://x/locked.pdf", "-no204", body=locked, out=tmp_path / "p")
    finally:
        stop_icap(server)
    assert passed.status == 200, passed.text
    assert passed.body == locked.read_bytes()
    found = COUNTS.search(passed.header("X-Sanitas") or "")
    assert found and found.groups() == ("encrypted", "0", "0", "0", "0", "0", "0", "1"), \
        passed.text
    engine = make_engine(str(Settings(data_dir=data).database_url))
    try:
        with make_sessionmaker(engine)() as session:
            rows = session.scalars(select(File)).all()
    finally:
        engine.dispose()
    assert [(f.status, f.verdict) for f in rows] == [("COMPLETED", "encrypted")]
