"""webhooks: per-user webhook endpoints (sealed signing secret) and their queued deliveries

Revision ID: e6a8c0e2f4b6
Revises: d5f7a9c1e3b5
Create Date: 2026-11-26 21:10:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import sanitas.db

revision: str = 'e6a8c0e2f4b6'
down_revision: str | None = 'd5f7a9c1e3b5'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'webhooks',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('user_id', sa.String(length=36), nullable=False),
        sa.Column('url', sa.String(length=2048), nullable=False),
        sa.Column('events', sa.JSON(), nullable=False),
        sa.Column('enabled', sa.Boolean(), nullable=False),
        sa.Column('secret_sealed', sa.Text(), nullable=False),
        sa.Column('created_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('webhooks', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_webhooks_user_id'), ['user_id'], unique=False)

    op.create_table(
        'webhook_deliveries',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('webhook_id', sa.String(length=36), nullable=False),
        sa.Column('event_id', sa.String(length=64), nullable=False),
        sa.Column('event_type', sa.String(length=32), nullable=False),
        sa.Column('payload', sa.JSON(), nullable=False),
        sa.Column('state', sa.String(length=16), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('next_attempt_at', sanitas.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('claim_token', sa.String(length=64), nullable=True),
        sa.Column('claimed_until', sanitas.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('last_status_code', sa.Integer(), nullable=True),
        sa.Column('last_error', sa.Text(), nullable=True),
        sa.Column('attempt_log', sa.JSON(), nullable=False),
        sa.Column('created_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('finished_at', sanitas.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['webhook_id'], ['webhooks.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_webhook_deliveries_webhook_id'), ['webhook_id'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_webhook_deliveries_state'), ['state'],
                              unique=False)
        batch_op.create_index(batch_op.f('ix_webhook_deliveries_next_attempt_at'),
                              ['next_attempt_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_webhook_deliveries_created_at'), ['created_at'],
                              unique=False)


def downgrade() -> None:
    with op.batch_alter_table('webhook_deliveries', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_webhook_deliveries_created_at'))
        batch_op.drop_index(batch_op.f('ix_webhook_deliveries_next_attempt_at'))
        batch_op.drop_index(batch_op.f('ix_webhook_deliveries_state'))
        batch_op.drop_index(batch_op.f('ix_webhook_deliveries_webhook_id'))
    op.drop_table('webhook_deliveries')
    with op.batch_alter_table('webhooks', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_webhooks_user_id'))
    op.drop_table('webhooks')
