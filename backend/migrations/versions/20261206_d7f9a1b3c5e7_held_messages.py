"""held_messages: the messages the mail filter (`sanitas mail`) handled, with the key of each
sealed original kept for release

Revision ID: d7f9a1b3c5e7
Revises: c6e8f0a2b4d6
Create Date: 2026-12-06 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import sanitas.db

revision: str = 'd7f9a1b3c5e7'
down_revision: str | None = 'c6e8f0a2b4d6'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'held_messages',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('created_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('digest', sa.String(length=64), nullable=False),
        sa.Column('message_id', sa.String(length=255), nullable=True),
        sa.Column('sender', sa.String(length=320), nullable=False),
        sa.Column('recipients', sa.JSON(), nullable=False),
        sa.Column('subject', sa.String(length=500), nullable=True),
        sa.Column('size', sa.Integer(), nullable=False),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('verdict', sa.String(length=16), nullable=True),
        sa.Column('verdict_counts', sa.JSON(), nullable=True),
        sa.Column('summary', sa.Text(), nullable=True),
        sa.Column('attachments', sa.JSON(), nullable=True),
        sa.Column('reason', sa.Text(), nullable=True),
        sa.Column('refused_recipients', sa.JSON(), nullable=True),
        sa.Column('policy_id', sa.String(length=36), nullable=True),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('duration', sa.Float(), nullable=True),
        sa.Column('original_key', sa.String(length=200), nullable=True),
        sa.Column('expires_at', sanitas.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('released_at', sanitas.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('released_by', sa.String(length=320), nullable=True),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_held_messages_created', 'held_messages', ['created_at'])
    op.create_index('ix_held_messages_digest', 'held_messages', ['digest'])
    op.create_index('ix_held_messages_status', 'held_messages', ['status'])
    op.create_index('ix_held_messages_expires_at', 'held_messages', ['expires_at'])


def downgrade() -> None:
    op.drop_table('held_messages')
