"""Password-protected inputs: an encrypted Office document and ZIP archives (WinZip AES and
ZipCrypto) open with the right password, are refused with WRONG_PASSWORD with a wrong one and
as ENCRYPTED without one; the output is never encrypted, and the password appears nowhere in
the result."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from sanitas.engine import RejectionCode, sanitize_file
from sanitas.engine.decrypt import OPENED_DETAIL
from tests.engine.encrypted_samples import (
    MARKER,
    aes_zip,
    encrypted_docx,
    plain_docx,
    zipcrypto_zip,
)

PASSWORD = "Tr0ub4dor&3-é"


def _run(tmp_path: Path, name: str, data: bytes, password: str | None):
    src = tmp_path / f"in-{name}"
    src.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    result = sanitize_file(src, out, original_name=name, password=password)
    # Whatever happened, the password is in no reason, finding or field of the result.
    for secret in {PASSWORD, password or PASSWORD}:
        assert secret not in json.dumps(result.to_json(), ensure_ascii=False)
        assert secret not in repr(result)
    return result


def _document_text(docx_bytes: bytes) -> str:
    with zipfile.ZipFile(io.BytesIO(docx_bytes)) as zf:
        return zf.read("word/document.xml").decode()


def test_encrypted_docx_opens_with_the_password_and_comes_out_unencrypted(tmp_path):
    result = _run(tmp_path, "figures.docx", encrypted_docx(PASSWORD), PASSWORD)
    assert result.status == "ok", result.reason
    assert result.detected_type == "docx" and result.output_type == "docx"
    output = Path(result.output).read_bytes()
    assert output.startswith(b"PK\x03\x04")  # a plain package, not an encrypted OLE file
    assert MARKER in _document_text(output)
    opened = [f for f in result.findings if f.kind == "encryption"]
    assert [(f.location, f.action, f.detail) for f in opened] == [
        ("document", "removed", OPENED_DETAIL)]
    assert any(f.kind == "metadata" for f in result.findings)  # sanitized like any docx
    # the decrypted copy lived in the scratch folder only
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["figures.docx"]


def test_encrypted_docx_with_a_wrong_or_no_password_is_refused(tmp_path):
    data = encrypted_docx(PASSWORD)
    wrong = _run(tmp_path, "figures.docx", data, "not-the-password")
    assert (wrong.status, wrong.code) == ("rejected", RejectionCode.WRONG_PASSWORD)
    assert "password given does not open" in wrong.reason and wrong.output is None
    missing = _run(tmp_path, "figures.docx", data, None)
    assert (missing.status, missing.code) == ("rejected", RejectionCode.ENCRYPTED)
    assert "password-protected" in missing.reason and "password" in missing.reason.split(
        "without")[1]
    assert not list((tmp_path / "out").iterdir())


def test_a_damaged_encrypted_package_is_refused_as_damaged(tmp_path):
    data = bytearray(encrypted_docx(PASSWORD))
    data[-2000:] = bytes(2000)  # the end of the encrypted package
    result = _run(tmp_path, "figures.docx", bytes(data), PASSWORD)
    # the password is verified before the package is decrypted: this is damage, not the
    # password's fault
    assert (result.status, result.code) == ("rejected", RejectionCode.DAMAGED)
    assert "damaged" in result.reason


@pytest.mark.parametrize("make", [aes_zip, zipcrypto_zip], ids=["aes", "zipcrypto"])
def test_encrypted_zip_opens_with_the_password_and_comes_out_unencrypted(tmp_path, make):
    members = {"notes/readme.txt": b"Plain notes, nothing to hide.\n" * 20,
               "figures.docx": plain_docx()}
    result = _run(tmp_path, "bundle.zip", make(members, PASSWORD), PASSWORD)
    assert result.status == "ok", result.reason
    assert result.detected_type == "zip"
    with zipfile.ZipFile(result.output) as zf:
        assert not any(info.flag_bits & 0x1 for info in zf.infolist())
        assert set(zf.namelist()) == {"notes/readme.txt", "figures.docx"}
        assert zf.read("notes/readme.txt").startswith(b"Plain notes")
        assert MARKER in _document_text(zf.read("figures.docx"))
    assert ("encryption", "archive", "removed", OPENED_DETAIL) in [
        (f.kind, f.location, f.action, f.detail) for f in result.findings]


@pytest.mark.parametrize("make", [aes_zip, zipcrypto_zip], ids=["aes", "zipcrypto"])
def test_encrypted_zip_with_a_wrong_or_no_password_is_refused(tmp_path, make):
    data = make({"secret.txt": b"the secret text\n" * 40}, PASSWORD)
    wrong = _run(tmp_path, "bundle.zip", data, "wrong password")
    assert (wrong.status, wrong.code) == ("rejected", RejectionCode.WRONG_PASSWORD)
    assert "secret.txt" in wrong.reason
    missing = _run(tmp_path, "bundle.zip", data, None)
    assert (missing.status, missing.code) == ("rejected", RejectionCode.ENCRYPTED)
    assert "with the password" in missing.reason


def test_an_encrypted_document_inside_an_encrypted_archive_opens_with_the_same_password(
        tmp_path):
    data = aes_zip({"inner/figures.docx": encrypted_docx(PASSWORD)}, PASSWORD)
    result = _run(tmp_path, "bundle.zip", data, PASSWORD)
    assert result.status == "ok", result.reason
    with zipfile.ZipFile(result.output) as zf:
        assert MARKER in _document_text(zf.read("inner/figures.docx"))
    locations = {f.location for f in result.findings if f.kind == "encryption"}
    assert locations == {"archive", "inner/figures.docx: document"}


def test_an_encrypted_document_inside_a_plain_archive_without_password_is_left_out(tmp_path):
    from tests.engine.corpus import zip_bytes

    data = zip_bytes({"figures.docx": encrypted_docx(PASSWORD), "notes.txt": b"hello\n"})
    result = _run(tmp_path, "bundle.zip", data, None)
    assert result.status == "ok"
    with zipfile.ZipFile(result.output) as zf:
        assert zf.namelist() == ["notes.txt"]
    held = {f.location: f.detail for f in result.findings if f.kind == "encrypted_content"}
    assert "password-protected" in held["figures.docx"]
    assert result.outcome().verdict.value == "encrypted"


def test_bomb_limits_hold_for_encrypted_archives(tmp_path):
    """The size checks run on encrypted members as on any other: before decompression (the
    ratio) and while reading."""
    data = aes_zip({"zeros.txt": bytes(8 * 1024 * 1024)}, PASSWORD)
    result = _run(tmp_path, "bomb.zip", data, PASSWORD)
    assert (result.status, result.code) == ("rejected", RejectionCode.BOMB)


def test_a_password_changes_nothing_for_a_file_that_is_not_encrypted(tmp_path):
    result = _run(tmp_path, "figures.docx", plain_docx(), PASSWORD)
    assert result.status == "ok"
    assert not any(f.kind == "encryption" for f in result.findings)
