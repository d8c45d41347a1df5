"""Encrypted content nobody here can read (engine/verdict.py's `encrypted`, the policy rule
`encryptedContent`): a file without its password, a member of an archive, an S/MIME or
PGP/MIME message made by the real openssl and gpg, an OpenPGP block in a text body and an
encrypted attachment are never "clean". The basic policy holds them back (no copy of the file,
a note in the mail), `pass` delivers them byte for byte and marks them as not inspected."""

from __future__ import annotations

import email
import email.policy
import io
import subprocess
import zipfile
from email.mime.text import MIMEText
from pathlib import Path

import pikepdf
import pytest

from sanitas.engine import sanitize_file
from sanitas.engine.policy import BASIC, Policy
from sanitas.engine.verdict import Verdict
from tests.engine.corpus import clean_pdf
from tests.engine.test_mail_files import HEADERS, _attachment, _message

PASS = BASIC.with_rules(encryptedContent="pass")
SECRET_TEXT = "The merger closes on Friday."


def _encrypted_pdf() -> bytes:
    buffer = io.BytesIO()
    clean_pdf(pages=1).save(buffer, encryption=pikepdf.Encryption(owner="o-secret",
                                                                  user="u-secret"))
    return buffer.getvalue()


def _run(tmp_path: Path, data: bytes, name: str, policy: Policy = BASIC):
    src = tmp_path / name
    src.write_bytes(data)
    out = tmp_path / "out"
    out.mkdir(exist_ok=True)
    return sanitize_file(src, out, original_name=name, workdir=tmp_path, policy=policy)


def _smime_message(tmp_path: Path) -> bytes:
    """A message encrypted by `openssl cms -encrypt` for a throwaway certificate."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=bob@example.com"],
                   check=True, capture_output=True)
    inner = MIMEText(SECRET_TEXT + "\n", "plain", "utf-8").as_bytes()
    encrypted = subprocess.run(["openssl", "cms", "-encrypt", "-aes256", str(cert)],
                               input=inner, check=True, capture_output=True).stdout
    return HEADERS.encode() + encrypted.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _pgp_armor(tmp_path: Path) -> bytes:
    """An OpenPGP message by gpg (symmetric: no keyring needed)."""
    home = tmp_path / "gnupg"
    home.mkdir(mode=0o700)
    return subprocess.run(["gpg", "--homedir", str(home), "--batch", "--pinentry-mode",
                           "loopback", "--passphrase", "pw", "--symmetric", "--armor"],
                          input=SECRET_TEXT.encode(), check=True, capture_output=True).stdout


def _pgp_mime_message(tmp_path: Path) -> bytes:
    armor = _pgp_armor(tmp_path).replace(b"\n", b"\r\n")
    return (HEADERS.encode() + b"MIME-Version: 1.0\r\n"
            b'Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; '
            b'boundary="b1"\r\n\r\n'
            b"--b1\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n\r\n"
            b'--b1\r\nContent-Type: application/octet-stream; name="encrypted.asc"\r\n'
            b"Content-Disposition: inline; filename=\"encrypted.asc\"\r\n\r\n"
            + armor + b"\r\n--b1--\r\n")


def _output(result) -> bytes:
    return Path(result.output).read_bytes()


def _parsed(result) -> email.message.Message:
    return email.message_from_bytes(_output(result), policy=email.policy.default)


# --- whole files -------------------------------------------------------------------------------
def test_an_encrypted_pdf_is_held_back_with_its_own_verdict(tmp_path):
    result = _run(tmp_path, _encrypted_pdf(), "figures.pdf")
    assert result.status == "rejected" and result.code == "encrypted"
    outcome = result.outcome()
    assert outcome.verdict is Verdict.ENCRYPTED
    assert outcome.counts.encrypted_held == 1 and outcome.counts.encrypted_passed == 0
    assert outcome.summary.startswith("Not inspected: encrypted (1 item held back): ")
    assert result.file_report()["verdict"] == "encrypted"


def test_the_pass_policy_delivers_the_encrypted_pdf_byte_for_byte(tmp_path):
    data = _encrypted_pdf()
    result = _run(tmp_path, data, "figures.pdf", PASS)
    assert result.status == "ok" and result.output_type == "pdf"
    assert _output(result) == data
    assert result.passed_encrypted
    assert [(f.kind, f.action) for f in result.findings] == [("encrypted_content", "kept")]
    outcome = result.outcome()
    assert outcome.verdict is Verdict.ENCRYPTED
    assert outcome.summary == "Not inspected: encrypted (1 item delivered unchanged)"


def test_pass_still_refuses_a_type_the_policy_does_not_allow(tmp_path):
    policy = Policy.from_json({"rules": {"encryptedContent": "pass"}, "allowedTypes": ["image"]})
    result = _run(tmp_path, _encrypted_pdf(), "figures.pdf", policy)
    assert result.status == "rejected" and result.code == "type_not_allowed"
    assert result.outcome().verdict is Verdict.REFUSED


def test_a_damaged_file_is_still_refused_under_pass(tmp_path):
    result = _run(tmp_path, b"%PDF-1.7\n1 0 obj << /Type /Catalog", "broken.pdf", PASS)
    assert result.status == "rejected" and result.outcome().verdict is Verdict.REFUSED


# --- archive members ---------------------------------------------------------------------------
def _zip_with_encrypted_pdf() -> tuple[bytes, bytes]:
    secret = _encrypted_pdf()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("readme.txt", "see the figures\n")
        zf.writestr("figures/q3.pdf", secret)
    return buffer.getvalue(), secret


def test_an_encrypted_member_is_held_back(tmp_path):
    archive, _ = _zip_with_encrypted_pdf()
    result = _run(tmp_path, archive, "bundle.zip")
    assert result.status == "ok"
    with zipfile.ZipFile(result.output) as zf:
        assert zf.namelist() == ["readme.txt"]
    found = [f for f in result.findings if f.kind == "encrypted_content"]
    assert [(f.location, f.action) for f in found] == [("figures/q3.pdf", "removed")]
    outcome = result.outcome()
    assert outcome.verdict is Verdict.ENCRYPTED and outcome.counts.encrypted_held == 1


def test_the_pass_policy_keeps_the_encrypted_member_as_it_came(tmp_path):
    archive, secret = _zip_with_encrypted_pdf()
    result = _run(tmp_path, archive, "bundle.zip", PASS)
    with zipfile.ZipFile(result.output) as zf:
        assert sorted(zf.namelist()) == ["figures/q3.pdf", "readme.txt"]
        assert zf.read("figures/q3.pdf") == secret
    assert result.outcome().verdict is Verdict.ENCRYPTED
    assert result.outcome().counts.encrypted_passed == 1


# --- mail --------------------------------------------------------------------------------------
def test_smime_encrypted_mail_is_held_back_with_a_note(tmp_path):
    result = _run(tmp_path, _smime_message(tmp_path), "message.eml")
    assert result.status == "ok"
    parsed = _parsed(result)
    assert parsed["Subject"] == "Quarterly figures"
    assert parsed.get_content_type() == "text/plain"
    note = parsed.get_content()
    assert "held back S/MIME encrypted content" in note
    assert "pkcs7" not in _output(result).decode("ascii").lower()
    outcome = result.outcome()
    assert outcome.verdict is Verdict.ENCRYPTED and outcome.counts.encrypted_held == 1


def test_smime_encrypted_mail_passes_unchanged_so_the_recipient_can_decrypt_it(tmp_path):
    original = _smime_message(tmp_path)
    result = _run(tmp_path, original, "message.eml", PASS)
    parsed = _parsed(result)
    assert parsed.get_content_type() == "application/pkcs7-mime"
    assert parsed["From"] == "Alice <alice@example.org>"
    assert "X-Mailer" not in parsed  # the other fields are still filtered
    cleaned = _output(result)
    decrypted = subprocess.run(
        ["openssl", "cms", "-decrypt", "-inkey", str(tmp_path / "key.pem"), "-recip",
         str(tmp_path / "cert.pem")], input=cleaned, check=True, capture_output=True).stdout
    inner = email.message_from_bytes(decrypted, policy=email.policy.default)
    assert inner.get_content().strip() == SECRET_TEXT
    assert result.outcome().verdict is Verdict.ENCRYPTED
    assert result.outcome().counts.encrypted_passed == 1


def test_pgp_mime_is_held_back_or_passed(tmp_path):
    held = _run(tmp_path, _pgp_mime_message(tmp_path), "held.eml")
    text = _output(held).decode("ascii")
    assert "BEGIN PGP MESSAGE" not in text and "held back PGP/MIME encrypted content" in text
    assert held.outcome().verdict is Verdict.ENCRYPTED

    home = tmp_path / "again"
    home.mkdir()
    passed = _run(home, _pgp_mime_message(home), "passed.eml", PASS)
    parsed = _parsed(passed)
    assert parsed.get_content_type() == "multipart/encrypted"
    assert parsed.get_param("protocol") == "application/pgp-encrypted"
    parts = list(parsed.iter_parts())
    assert [p.get_content_type() for p in parts] == ["application/pgp-encrypted",
                                                     "application/octet-stream"]
    armor = parts[1].get_payload(decode=True)
    plain = subprocess.run(["gpg", "--homedir", str(home / "gnupg"), "--batch",
                            "--pinentry-mode", "loopback", "--passphrase", "pw", "--decrypt"],
                           input=armor, check=True, capture_output=True).stdout
    assert plain.decode() == SECRET_TEXT
    assert passed.outcome().verdict is Verdict.ENCRYPTED


def test_an_inline_pgp_message_in_a_text_body(tmp_path):
    armor = _pgp_armor(tmp_path).decode("ascii")
    body = f"Hello Bob,\n\n{armor}\nRegards, Alice\n"
    message = HEADERS.encode() + MIMEText(body, "plain", "us-ascii").as_bytes()

    held = _run(tmp_path, message, "held.eml")
    text = _parsed(held).get_content()
    assert "BEGIN PGP MESSAGE" not in text
    assert "Hello Bob," in text and "Regards, Alice" in text
    assert "held back an encrypted PGP message here" in text
    assert held.outcome().verdict is Verdict.ENCRYPTED

    passed = _run(tmp_path, message, "passed.eml", PASS)
    assert armor.strip() in _parsed(passed).get_content().replace("\r\n", "\n")
    assert passed.outcome().verdict is Verdict.ENCRYPTED
    assert passed.outcome().counts.encrypted_passed == 1


@pytest.mark.parametrize("policy", [BASIC, PASS], ids=["hold", "pass"])
def test_an_encrypted_attachment(tmp_path, policy):
    secret = _encrypted_pdf()
    data = _message(MIMEText("The figures are attached.\n", "plain", "utf-8"),
                    _attachment(secret, "figures.pdf"))
    result = _run(tmp_path, data, "message.eml", policy)
    parsed = _parsed(result)
    files = {p.get_filename(): p for p in parsed.walk() if p.get_filename()}
    if policy is PASS:
        assert files["figures.pdf"].get_payload(decode=True) == secret
    else:
        assert "figures.pdf" not in files
        assert "held back" in files["figures.removed.txt"].get_content()
    outcome = result.outcome()
    assert outcome.verdict is Verdict.ENCRYPTED
    assert (outcome.counts.encrypted_passed if policy is PASS
            else outcome.counts.encrypted_held) == 1


# --- files inside documents (embeddedFiles: sanitize) ------------------------------------------
SANITIZE = BASIC.with_rules(embeddedFiles="sanitize")
SANITIZE_PASS = BASIC.with_rules(embeddedFiles="sanitize", encryptedContent="pass")


def _pdf_attaching(name: str, data: bytes) -> bytes:
    from tests.engine.hostile_keep import _attach, _save

    pdf = clean_pdf(pages=1)
    pdf.Root.Names = pikepdf.Dictionary(EmbeddedFiles=pikepdf.Dictionary(
        Names=pikepdf.Array([pikepdf.String(name), _attach(pdf, name, data)])))
    return _save(pdf)


def _attached(path: Path) -> dict[str, bytes]:
    with pikepdf.open(path) as pdf:
        return {name: spec.get_file().read_bytes() for name, spec in pdf.attachments.items()}


@pytest.mark.parametrize("policy", [SANITIZE, SANITIZE_PASS], ids=["hold", "pass"])
def test_an_encrypted_pdf_attached_to_a_pdf(tmp_path, policy):
    secret = _encrypted_pdf()
    result = _run(tmp_path, _pdf_attaching("q3.pdf", secret), "report.pdf", policy)
    assert result.status == "ok", result.reason
    found = [(f.kind, f.action) for f in result.findings if f.kind == "encrypted_content"]
    attached = _attached(Path(result.output))
    if policy is SANITIZE_PASS:
        assert found == [("encrypted_content", "kept")] and attached == {"q3.pdf": secret}
        assert result.outcome().counts.encrypted_passed == 1
    else:
        assert found == [("encrypted_content", "removed")] and attached == {}
        assert result.outcome().counts.encrypted_held == 1
    assert result.outcome().verdict is Verdict.ENCRYPTED


@pytest.mark.parametrize("policy", [SANITIZE, SANITIZE_PASS], ids=["hold", "pass"])
def test_an_encrypted_document_embedded_in_a_docx(tmp_path, policy):
    from tests.engine.corpus_office import R, docx
    from tests.engine.encrypted_samples import encrypted_docx

    secret = encrypted_docx("pw")
    body = ('<w:p><w:r><w:object><o:OLEObject Type="Embed" ProgID="Word.Document.12" '
            'ShapeID="_x0000_i1" DrawAspect="Content" ObjectID="_1" r:id="rIdPkg"/>'
            '</w:object></w:r></w:p><w:p><w:r><w:t>Body</w:t></w:r></w:p>')
    data = docx(body, doc_rels=[("rIdPkg", f"{R}/package", "embeddings/Figures.docx")],
                parts={"word/embeddings/Figures.docx": secret})
    result = _run(tmp_path, data, "memo.docx", policy)
    assert result.status == "ok", result.reason
    found = [f.action for f in result.findings if f.kind == "encrypted_content"]
    with zipfile.ZipFile(result.output) as zf:
        kept = zf.read("word/embeddings/Figures.docx") if \
            "word/embeddings/Figures.docx" in zf.namelist() else None
    if policy is SANITIZE_PASS:
        assert found == ["kept"] and kept == secret
    else:
        assert found == ["removed"] and kept is None
    assert result.outcome().verdict is Verdict.ENCRYPTED
