"""policies, their versions and each role's default; files record their policy and SHA-256s

Stored policies (`policies`, owner NULL for organisation-wide ones, soft-deleted so files keep
their history), one `policy_versions` row per version of a policy's body, and
`policy_defaults` (role -> policy id; no row: the built-in basic policy). Each file gains the
policy id, version, name and JSON it is cleaned with, and the SHA-256 of the original and of
the sanitized copy. NULL for every existing file (its `mode` names the built-in used).

Revision ID: a1c3e5f7b9d2
Revises: 9f4a6c2e1d37
Create Date: 2026-11-23 18:40:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import sanitas.db


revision: str = 'a1c3e5f7b9d2'
down_revision: str | None = '9f4a6c2e1d37'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('policies',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('owner_id', sa.String(length=36), nullable=True),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('body', sa.JSON(), nullable=False),
    sa.Column('created_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('deleted_at', sanitas.db.UTCDateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['owner_id'], ['users.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('policies', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_policies_deleted_at'), ['deleted_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_policies_owner_id'), ['owner_id'], unique=False)

    op.create_table('policy_defaults',
    sa.Column('role', sa.String(length=16), nullable=False),
    sa.Column('policy_id', sa.String(length=36), nullable=False),
    sa.Column('updated_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
    sa.Column('updated_by_id', sa.String(length=36), nullable=True),
    sa.ForeignKeyConstraint(['updated_by_id'], ['users.id'], ondelete='SET NULL'),
    sa.PrimaryKeyConstraint('role')
    )
    op.create_table('policy_versions',
    sa.Column('id', sa.String(length=36), nullable=False),
    sa.Column('policy_id', sa.String(length=36), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('body', sa.JSON(), nullable=False),
    sa.Column('created_at', sanitas.db.UTCDateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['policy_id'], ['policies.id'], ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('policy_id', 'version')
    )
    with op.batch_alter_table('policy_versions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_policy_versions_policy_id'), ['policy_id'], unique=False)

    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.add_column(sa.Column('policy_id', sa.String(length=36), nullable=True))
        batch_op.add_column(sa.Column('policy_version', sa.Integer(), nullable=True))
        batch_op.add_column(sa.Column('policy_name', sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column('policy_body', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('sha256_original', sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column('sha256_sanitized', sa.String(length=64), nullable=True))
        batch_op.create_index(batch_op.f('ix_files_policy_id'), ['policy_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_files_policy_id'))
        batch_op.drop_column('sha256_sanitized')
        batch_op.drop_column('sha256_original')
        batch_op.drop_column('policy_body')
        batch_op.drop_column('policy_name')
        batch_op.drop_column('policy_version')
        batch_op.drop_column('policy_id')

    with op.batch_alter_table('policy_versions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_policy_versions_policy_id'))

    op.drop_table('policy_versions')
    op.drop_table('policy_defaults')
    with op.batch_alter_table('policies', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_policies_owner_id'))
        batch_op.drop_index(batch_op.f('ix_policies_deleted_at'))

    op.drop_table('policies')
