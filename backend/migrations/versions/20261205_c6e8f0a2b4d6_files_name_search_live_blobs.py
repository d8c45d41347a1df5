"""files: the history's name search by trigrams (PostgreSQL) and the rows holding live blobs

- ix_files_name_trgm (PostgreSQL only): a GIN index of lower(original_name) with pg_trgm's
  gin_trgm_ops, so the history's `lower(original_name) LIKE '%...%'` (db.contains_text) finds
  its rows without reading every row of the account. The extension is created when the server
  offers it (`CREATE EXTENSION IF NOT EXISTS pg_trgm`; a trusted extension since PostgreSQL 13,
  so the database's owner may create it); a server without it skips the index and the search
  reads the account's rows as before (same answers, slower). SQLite has no such index: there
  the search reads the account's rows through ix_files_user_created, bounded by the account's
  history.
- ix_files_live_blobs: files (user_id) WHERE original_key IS NOT NULL OR sanitized_key IS NOT
  NULL, the only rows that count in storage_used (a user's or everyone's): once the expiry
  sweep has deleted a file's blobs its row leaves the index, so the storage figure reads the
  live files only, not the whole history.

Built with CREATE INDEX CONCURRENTLY on PostgreSQL (the table stays writable; an interrupted
build leaves an invalid index that the next run drops and builds again).

Revision ID: c6e8f0a2b4d6
Revises: b3d5f7a9c1e2
Create Date: 2026-12-05 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'c6e8f0a2b4d6'
down_revision: str | None = 'b3d5f7a9c1e2'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LIVE = 'original_key IS NOT NULL OR sanitized_key IS NOT NULL'


def _postgresql() -> bool:
    return op.get_context().dialect.name == 'postgresql'


def upgrade() -> None:
    if not _postgresql():
        op.create_index('ix_files_live_blobs', 'files', ['user_id'], if_not_exists=True,
                        sqlite_where=sa.text(LIVE))
        return
    bind = op.get_bind()
    offered = bind.execute(sa.text(
        "SELECT count(*) FROM pg_available_extensions WHERE name = 'pg_trgm'")).scalar()
    with op.get_context().autocommit_block():
        op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_live_blobs')
        op.create_index('ix_files_live_blobs', 'files', ['user_id'],
                        postgresql_concurrently=True, postgresql_where=sa.text(LIVE))
        if offered:
            try:
                op.execute('CREATE EXTENSION IF NOT EXISTS pg_trgm')
            except sa.exc.DBAPIError as exc:  # e.g. not allowed to this role
                print(f'ix_files_name_trgm skipped: pg_trgm could not be created ({exc.orig})')
                return
            op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_name_trgm')
            op.execute('CREATE INDEX CONCURRENTLY ix_files_name_trgm ON files '
                       'USING gin (lower(original_name) gin_trgm_ops)')
        else:
            print('ix_files_name_trgm skipped: this PostgreSQL server does not offer pg_trgm')


def downgrade() -> None:
    if not _postgresql():
        op.execute('DROP INDEX IF EXISTS ix_files_live_blobs')
        return
    with op.get_context().autocommit_block():
        op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_name_trgm')
        op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_live_blobs')
