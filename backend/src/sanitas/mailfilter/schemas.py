"""The admin calls' bodies for held mail (camelCase on the wire)."""

from __future__ import annotations

from typing import Any

from sanitas.web.schemas import CamelModel, Pagination, UtcTimestamp


class HeldAttachmentOut(CamelModel):
    name: str  # as it came
    delivered_as: str  # as the cleaned message carries it (the note's name when refused)
    verdict: str  # clean | cleaned | partial | encrypted | refused
    summary: str


class HeldMessageOut(CamelModel):
    id: str
    created_at: UtcTimestamp
    updated_at: UtcTimestamp
    message_id: str | None
    sender: str
    recipients: list[str]
    subject: str | None
    size: int
    status: str  # received | delivered | refused | deferred | released
    verdict: str | None
    verdict_counts: dict[str, Any] | None
    summary: str | None
    attachments: list[HeldAttachmentOut]
    reason: str | None
    refused_recipients: list[str]
    policy_id: str | None
    attempts: int
    duration: float | None
    original_kept: bool  # the sealed original is still in storage (it can be released)
    expires_at: UtcTimestamp | None
    released_at: UtcTimestamp | None
    released_by: str | None


class HeldMessageList(CamelModel):
    messages: list[HeldMessageOut]
    pagination: Pagination
