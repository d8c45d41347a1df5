"""Reading the links out of the mail the embedded default writes to the outbox folder."""

from __future__ import annotations

import re
from email import message_from_bytes
from email.policy import default as default_policy


def outbox_links(settings, path: str) -> list[str]:
    """Links to `path` (e.g. '/verify-email') in the .eml files of the outbox, oldest first."""
    links = []
    for eml in sorted(settings.outbox_dir.glob("*.eml")):
        body = message_from_bytes(eml.read_bytes(), policy=default_policy).get_content()
        links += re.findall(rf"https?://\S+{re.escape(path)}\?token=[\w-]+", body)
    return links


def token_of(link: str) -> str:
    return link.split("token=", 1)[1]
