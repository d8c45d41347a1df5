"""Sanitization policies users and admins write, their versions, and each role's default.

The built-in policies (`basic`, `advanced`) are not rows: they come from
`sanitas.engine.policy.BUILT_IN`. A stored policy's `body` is the engine's JSON form
(`Policy.to_json()`); every change of the body makes a new `PolicyVersion`, and a file records
the policy id, version and the exact JSON it was cleaned with (see `File.policy_*`), so a file
keeps showing its policy after the policy is edited or deleted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from sanitas.db import Base, utcnow
from sanitas.models._common import id_column

POLICY_NAME_MAX = 100
POLICY_DESCRIPTION_MAX = 1000


class StoredPolicy(Base):
    """A stored policy. `owner_id` NULL: organisation-wide (published by an admin)."""

    __tablename__ = "policies"

    id: Mapped[str] = id_column()
    owner_id: Mapped[str | None] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), index=True
    )
    name: Mapped[str] = mapped_column(String(POLICY_NAME_MAX))
    description: Mapped[str | None] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer, default=1)  # the current version
    body: Mapped[dict[str, Any]] = mapped_column(JSON)  # Policy.to_json() of the current version
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    # Deleted policies stay as rows (their versions are what files were cleaned with) but are
    # no longer listed, readable or usable.
    deleted_at: Mapped[datetime | None] = mapped_column(index=True)


class PolicyVersion(Base):
    """One version of a stored policy's body, as files cleaned with it refer to."""

    __tablename__ = "policy_versions"
    __table_args__ = (UniqueConstraint("policy_id", "version"),)

    id: Mapped[str] = id_column()
    policy_id: Mapped[str] = mapped_column(
        ForeignKey("policies.id", ondelete="CASCADE"), index=True
    )
    version: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(POLICY_NAME_MAX))  # the policy's name then
    body: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PolicyDefault(Base):
    """The policy a role's uploads use when they name neither a policy nor a mode.

    A role without a row uses today's behaviour: the built-in `basic`.
    `policy_id` is a built-in id or a stored (organisation-wide) policy's id.
    """

    __tablename__ = "policy_defaults"

    role: Mapped[str] = mapped_column(String(16), primary_key=True)
    policy_id: Mapped[str] = mapped_column(String(36))
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)
    updated_by_id: Mapped[str | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
