"""Mail goes out through a real SMTP server (aiosmtpd on loopback) when one is configured:
plain, with AUTH, with STARTTLS (certificate verified), and failures that must not break
the account action or leak links into the log."""

from __future__ import annotations

import ipaddress
import logging
import re
import socket
import ssl
from datetime import UTC, datetime, timedelta

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Message
from aiosmtpd.smtp import AuthResult

from tests.factories import make_user


class Collect(Message):
    def __init__(self):
        super().__init__()
        self.messages = []

    def handle_message(self, message):
        self.messages.append(message)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def smtp_server():
    port = free_port()
    handler = Collect()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    yield handler, port
    controller.stop()


def use_smtp(settings, port, **extra):
    settings.smtp_host, settings.smtp_port, settings.smtp_starttls = "127.0.0.1", port, False
    for key, value in extra.items():
        setattr(settings, key, value)


def link_in(msg, path: str) -> str:
    body = msg.get_payload(decode=True).decode()
    found = re.search(rf"http://testserver{re.escape(path)}\?token=([\w-]+)", body)
    assert found, body
    return found.group(1)


def test_verification_mail_goes_through_smtp(client, settings, smtp_server):
    handler, port = smtp_server
    use_smtp(settings, port)
    answer = client.post("/api/auth/register", json={"email": "smtp@example.com",
                                                     "password": "secret1"})
    assert answer.status_code == 201
    assert len(handler.messages) == 1
    msg = handler.messages[0]
    assert msg["To"] == "smtp@example.com"
    assert msg["From"] == settings.mail_from
    token = link_in(msg, "/verify-email")
    assert not list(settings.outbox_dir.glob("*.eml"))  # SMTP replaces the outbox
    verified = client.post("/api/auth/verify-email", json={"token": token})
    assert verified.status_code == 200 and verified.json()["data"]["isEmailVerified"] is True


def test_password_reset_through_smtp_end_to_end(client, db_session, settings, smtp_server):
    handler, port = smtp_server
    use_smtp(settings, port)
    make_user(db_session, email="reset@example.com")
    assert client.post("/api/auth/forgot-password",
                       json={"email": "reset@example.com"}).status_code == 200
    assert client.post("/api/auth/forgot-password",
                       json={"email": "ghost@example.com"}).status_code == 200
    assert [m["To"] for m in handler.messages] == ["reset@example.com"]  # nothing to ghosts
    token = link_in(handler.messages[0], "/reset-password")
    done = client.post("/api/auth/reset-password", json={"token": token,
                                                         "password": "a-new-password"})
    assert done.status_code == 200
    assert client.post("/api/auth/login", json={"email": "reset@example.com",
                                                "password": "a-new-password"}).status_code == 200


@pytest.mark.filterwarnings("ignore:Requiring AUTH while not requiring TLS")
def test_smtp_auth_uses_the_configured_credentials(client, settings):
    seen = []

    def authenticator(server, session, envelope, mechanism, auth_data):
        seen.append((auth_data.login, auth_data.password))
        good = (auth_data.login, auth_data.password) == (b"mailer", b"mail-secret")
        return AuthResult(success=good, handled=False)  # handled=False: aiosmtpd answers 535

    handler, port = Collect(), free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port,
                            authenticator=authenticator, auth_required=True,
                            auth_require_tls=False)
    controller.start()
    try:
        use_smtp(settings, port, smtp_username="mailer", smtp_password="mail-secret")
        assert client.post("/api/auth/register", json={"email": "auth@example.com",
                                                       "password": "secret1"}).status_code == 201
        assert seen[0] == (b"mailer", b"mail-secret")
        assert len(handler.messages) == 1
        # Wrong credentials: the server refuses, registration still succeeds.
        settings.smtp_password = "wrong"
        assert client.post("/api/auth/register", json={"email": "auth2@example.com",
                                                       "password": "secret1"}).status_code == 201
        assert len(handler.messages) == 1
    finally:
        controller.stop()


def _self_signed(tmp_path):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.now(UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName(
                [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = tmp_path / "smtp.crt", tmp_path / "smtp.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


@pytest.fixture
def starttls_server(tmp_path):
    cert, key = _self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    handler, port = Collect(), free_port()
    controller = Controller(handler, hostname="127.0.0.1", port=port, tls_context=context,
                            require_starttls=True)
    controller.start()
    yield handler, port, cert
    controller.stop()


def test_starttls_with_a_trusted_certificate(client, settings, starttls_server, monkeypatch):
    handler, port, cert = starttls_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # the operator's CA bundle
    use_smtp(settings, port, smtp_starttls=True)
    assert client.post("/api/auth/register", json={"email": "tls@example.com",
                                                   "password": "secret1"}).status_code == 201
    assert len(handler.messages) == 1


def test_starttls_refuses_an_untrusted_certificate(client, settings, starttls_server, caplog):
    handler, port, _ = starttls_server
    use_smtp(settings, port, smtp_starttls=True)
    with caplog.at_level(logging.ERROR, logger="sanitas.mail"):
        answer = client.post("/api/auth/register", json={"email": "mitm@example.com",
                                                         "password": "secret1"})
    assert answer.status_code == 201
    assert handler.messages == []  # the link never crossed an unverified connection
    assert "could not send email" in caplog.text


def test_unreachable_smtp_keeps_registration_and_says_so_on_resend(client, settings, caplog):
    use_smtp(settings, free_port())  # nothing listens there
    with caplog.at_level(logging.INFO):
        answer = client.post("/api/auth/register", json={"email": "down@example.com",
                                                         "password": "secret1"})
    assert answer.status_code == 201
    assert "could not send email" in caplog.text
    assert "token=" not in caplog.text
    headers = {"Authorization": f"Bearer {answer.json()['data']['tokens']['accessToken']}"}
    resend = client.post("/api/auth/resend-verification", headers=headers)
    assert resend.status_code == 503
    assert resend.json()["message"] == ("We could not send the email right now. "
                                        "Please try again later.")


def test_outbox_mail_is_logged_without_its_link(client, settings, caplog):
    with caplog.at_level(logging.DEBUG):
        assert client.post("/api/auth/register", json={"email": "quiet@example.com",
                                                       "password": "secret1"}).status_code == 201
    files = list(settings.outbox_dir.glob("*.eml"))
    assert len(files) == 1
    assert str(files[0]) in caplog.text  # the operator is told where to look
    raw = files[0].read_text()
    # A person reads the file in an editor: the link must be there verbatim, on one line.
    link = re.search(r"^http://testserver/verify-email\?token=([\w-]{40,})$", raw, re.M)
    assert link, raw
    assert link.group(1) not in caplog.text
