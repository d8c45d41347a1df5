"""files: the charts' reports of a period read from an index

ix_files_reported: files (created_at DESC) WHERE the file has a report (not SQL NULL and not
JSON null, spelled as the charts send it), so counting a period's reports is an index-only
range and the newest reports are found without visiting the rows that have none. Built with
CREATE INDEX CONCURRENTLY on PostgreSQL (an interrupted build leaves an invalid index that
the next run drops and builds again).

Revision ID: f9b1d3e5a7c9
Revises: e8a0c2e4f6a8
Create Date: 2026-12-08 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'f9b1d3e5a7c9'
down_revision: str | None = 'e8a0c2e4f6a8'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REPORTED = "report IS NOT NULL AND CAST(report AS VARCHAR) != 'null'"


def upgrade() -> None:
    if op.get_context().dialect.name != 'postgresql':
        op.create_index('ix_files_reported', 'files', [sa.text('created_at DESC')],
                        if_not_exists=True, sqlite_where=sa.text(REPORTED))
        return
    with op.get_context().autocommit_block():
        op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_reported')
        op.execute('CREATE INDEX CONCURRENTLY ix_files_reported ON files (created_at DESC) '
                   f'WHERE {REPORTED}')


def downgrade() -> None:
    if op.get_context().dialect.name != 'postgresql':
        op.execute('DROP INDEX IF EXISTS ix_files_reported')
        return
    with op.get_context().autocommit_block():
        op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_reported')
