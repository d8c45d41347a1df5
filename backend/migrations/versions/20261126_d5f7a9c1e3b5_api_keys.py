"""api_keys: per-user API keys (hash of the secret, prefix, scopes, expiry, revocation)

Revision ID: d5f7a9c1e3b5
Revises: c4e6a8b0d2f3
Create Date: 2026-11-26 20:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import sanitas.db

revision: str = 'd5f7a9c1e3b5'
down_revision: str | None = 'c4e6a8b0d2f3'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        'api_keys',
        sa.Column('id', sa.String(length=36), nullable=False),
        sa.Column('user_id', sa.String(length=36), nullable=False),
        sa.Column('name', sa.String(length=100), nullable=False),
        sa.Column('prefix', sa.String(length=24), nullable=False),
        sa.Column('secret_hash', sa.String(length=64), nullable=False),
        sa.Column('scopes', sa.JSON(), nullable=False),
        sa.Column('created_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
        sa.Column('last_used_at', sanitas.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('expires_at', sanitas.db.UTCDateTime(timezone=True), nullable=True),
        sa.Column('revoked_at', sanitas.db.UTCDateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['user_id'], ['users.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('secret_hash'),
    )
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_api_keys_user_id'), ['user_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_api_keys_revoked_at'), ['revoked_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('api_keys', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_api_keys_revoked_at'))
        batch_op.drop_index(batch_op.f('ix_api_keys_user_id'))
    op.drop_table('api_keys')
