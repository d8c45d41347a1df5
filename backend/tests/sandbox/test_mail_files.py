"""An e-mail file through the real sandbox: a message with a macro document, a program and an
HTML body with a script and a tracking pixel comes back as a message whose attachments were
cleaned by their own families inside the same sandbox."""

from __future__ import annotations

import email
import email.policy
from pathlib import Path

from sanitas.sandbox import run_sanitizer
from tests.engine.corpus import FAKE_EXE
from tests.engine.corpus_office import hostile_docm
from tests.engine.test_mail_files import _attachment, _message


def test_a_message_is_cleaned_in_the_sandbox(sandbox_settings, tmp_path):
    from email.mime.text import MIMEText

    html = ('<html><body><p>Hello</p><script>alert(1)</script>'
            '<img src="https://tracker.example/p.gif"></body></html>')
    path = tmp_path / "mail.eml"
    path.write_bytes(_message(MIMEText(html, "html", "utf-8"),
                              _attachment(hostile_docm(), "report.docm"),
                              _attachment(FAKE_EXE, "setup.exe")))
    result = run_sanitizer(path, tmp_path / "out", settings=sandbox_settings,
                           original_name=path.name, prewarm=False)
    assert result.status == "ok", (result.reason, result.code)
    assert result.detected_type == "eml" and result.output_type == "eml"
    parsed = email.message_from_bytes(Path(result.output).read_bytes(),
                                      policy=email.policy.default)
    names = {p.get_filename() for p in parsed.walk() if p.get_filename()}
    assert names == {"report.docx", "setup.removed.txt"}
    body = parsed.get_body(("html",)).get_content()
    assert "Hello" in body and "<script" not in body and "tracker.example" not in body
    assert parsed["X-Mailer"] is None and parsed["Subject"] == "Quarterly figures"
    kinds = {f.kind for f in result.findings}
    assert {"macro", "javascript", "external_reference", "archive_member", "metadata"} <= kinds
