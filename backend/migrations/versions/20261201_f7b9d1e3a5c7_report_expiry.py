"""report expiry: reports.expires_at (when the expiry sweep deletes the row and its blob)

Reports already stored get their request time plus 24 hours (the default TTL), so the first
sweep after the upgrade deletes the old ones.

Revision ID: f7b9d1e3a5c7
Revises: e6a8c0e2f4b6
Create Date: 2026-12-01 10:00:00
"""
from collections.abc import Sequence
from datetime import timedelta

import sqlalchemy as sa
from alembic import op

import sanitas.db

revision: str = 'f7b9d1e3a5c7'
down_revision: str | None = 'e6a8c0e2f4b6'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

DEFAULT_TTL = timedelta(hours=24)


def upgrade() -> None:
    with op.batch_alter_table('reports', schema=None) as batch_op:
        batch_op.add_column(sa.Column('expires_at', sanitas.db.UTCDateTime(timezone=True),
                                      nullable=True))
    reports = sa.table('reports', sa.column('id', sa.String),
                       sa.column('created_at', sanitas.db.UTCDateTime(timezone=True)),
                       sa.column('expires_at', sanitas.db.UTCDateTime(timezone=True)))
    bind = op.get_bind()
    for report_id, created in bind.execute(sa.select(reports.c.id, reports.c.created_at)).all():
        bind.execute(sa.update(reports).where(reports.c.id == report_id)
                     .values(expires_at=created + DEFAULT_TTL))
    with op.batch_alter_table('reports', schema=None) as batch_op:
        batch_op.alter_column('expires_at', existing_type=sanitas.db.UTCDateTime(timezone=True),
                              nullable=False)
        batch_op.create_index(batch_op.f('ix_reports_expires_at'), ['expires_at'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('reports', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_reports_expires_at'))
        batch_op.drop_column('expires_at')
