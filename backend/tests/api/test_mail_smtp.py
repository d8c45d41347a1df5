"""Mail goes out through a real SMTP server (aiosmtpd on loopback) when one is configured."""

from __future__ import annotations

import re
import socket

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.handlers import Message


class Collect(Message):
    def __init__(self):
        super().__init__()
        self.messages = []

    def handle_message(self, message):
        self.messages.append(message)


@pytest.fixture
def smtp_server():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    handler = Collect()
    controller = Controller(handler, hostname="127.0.0.1", port=port)
    controller.start()
    yield handler, port
    controller.stop()


def test_verification_mail_goes_through_smtp(client, settings, smtp_server):
    handler, port = smtp_server
    settings.smtp_host, settings.smtp_port, settings.smtp_starttls = "127.0.0.1", port, False
    answer = client.post("/api/auth/register", json={"email": "smtp@example.com",
                                                     "password": "secret1"})
    assert answer.status_code == 201
    assert len(handler.messages) == 1
    msg = handler.messages[0]
    assert msg["To"] == "smtp@example.com"
    body = msg.get_payload(decode=True).decode()
    link = re.search(r"http://testserver/verify-email\?token=([\w-]+)", body)
    assert link, body
    assert not list(settings.outbox_dir.glob("*.eml"))  # SMTP replaces the outbox
    verified = client.post("/api/auth/verify-email", json={"token": link.group(1)})
    assert verified.status_code == 200
