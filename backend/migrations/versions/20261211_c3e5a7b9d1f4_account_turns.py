"""account_turns: when an executor last started a job of each account

The queue's fair order lets accounts with the same number of turns go least recently served
first; without it, one worker serving two accounts took the older account's whole burst before
the other's file (every account had nothing running between two jobs, so the order fell back
to age). One row per account that ever had a job started, written in the claim's transaction.

Revision ID: c3e5a7b9d1f4
Revises: b2d4f6a8c0e3
Create Date: 2026-12-11 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import sanitas.db

revision: str = 'c3e5a7b9d1f4'
down_revision: str | None = 'b2d4f6a8c0e3'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "account_turns",
        sa.Column("user_id", sa.String(length=36), nullable=False),
        sa.Column("served_at", sanitas.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id"),
    )


def downgrade() -> None:
    op.drop_table("account_turns")
