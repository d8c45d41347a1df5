"""files.error_code: why a file failed, for programs

Revision ID: 5b8e2f71c4d0
Revises: 7d3c1e0a9b52
Create Date: 2026-11-23 15:10:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '5b8e2f71c4d0'
down_revision: str | None = '7d3c1e0a9b52'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.add_column(sa.Column('error_code', sa.String(length=32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.drop_column('error_code')
