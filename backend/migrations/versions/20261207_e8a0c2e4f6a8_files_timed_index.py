"""files: the charts' processing times read from an index

ix_files_timed: files (created_at DESC) WHERE status = 'COMPLETED' AND processing_duration IS
NOT NULL, holding the detected type and the duration too (INCLUDE on PostgreSQL, key columns
on SQLite), so the charts' newest timed files of a period are an index-only range instead
of a visit to each row of the period. Built with CREATE INDEX CONCURRENTLY on PostgreSQL (an
interrupted build leaves an invalid index that the next run drops and builds again).

Revision ID: e8a0c2e4f6a8
Revises: d7f9a1b3c5e7
Create Date: 2026-12-07 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'e8a0c2e4f6a8'
down_revision: str | None = 'd7f9a1b3c5e7'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIMED = "status = 'COMPLETED' AND processing_duration IS NOT NULL"


def upgrade() -> None:
    if op.get_context().dialect.name != 'postgresql':
        op.create_index('ix_files_timed', 'files',
                        [sa.text('created_at DESC'), 'detected_type', 'processing_duration'],
                        if_not_exists=True, sqlite_where=sa.text(TIMED))
        return
    with op.get_context().autocommit_block():
        op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_timed')
        op.execute('CREATE INDEX CONCURRENTLY ix_files_timed ON files (created_at DESC) '
                   f'INCLUDE (detected_type, processing_duration) WHERE {TIMED}')


def downgrade() -> None:
    if op.get_context().dialect.name != 'postgresql':
        op.execute('DROP INDEX IF EXISTS ix_files_timed')
        return
    with op.get_context().autocommit_block():
        op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_timed')
