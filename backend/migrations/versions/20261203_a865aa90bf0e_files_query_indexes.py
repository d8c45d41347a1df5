"""files query indexes: the expiry sweep, a user's history and counts, the admin list

- ix_files_expiry_due: files (expires_at) WHERE is_expired IS false, the expiry sweep's
  predicate spelled as the sweep sends it (executor/job.py: `is_expired IS false` on
  PostgreSQL, `is_expired IS 0` on SQLite), so the planner reads only the rows not yet expired;
  it replaces ix_files_expires_at, which nothing else reads.
- ix_files_user_created: files (user_id, created_at DESC, id), a user's history page in its
  default order (newest first, ties by id) and the monthly quota count.
- ix_files_user_status: files (user_id, status), the history's counts by status and the
  usage verdict totals.
- ix_files_created_id: files (created_at DESC, id), the admin file list's page in its
  default order and every range of creation dates; it replaces ix_files_created_at.
- ix_files_detected_type: files (detected_type), the admin list's type filter and its list of
  types.

On PostgreSQL every index is built with CREATE INDEX CONCURRENTLY outside the migration's
transaction, so a large files table stays writable while it is built (a build that failed
leaves an invalid index, which the next run drops and builds again).

Revision ID: a865aa90bf0e
Revises: a8c0e2f4b6d8
Create Date: 2026-12-03 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'a865aa90bf0e'
down_revision: str | None = 'a8c0e2f4b6d8'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# name -> (columns, partial predicate per dialect or None)
INDEXES: dict[str, tuple[list[str | sa.TextClause], dict[str, str] | None]] = {
    'ix_files_expiry_due': (['expires_at'], {'postgresql': 'is_expired IS false',
                                             'sqlite': 'is_expired IS 0'}),
    'ix_files_user_created': (['user_id', sa.text('created_at DESC'), 'id'], None),
    'ix_files_user_status': (['user_id', 'status'], None),
    'ix_files_created_id': ([sa.text('created_at DESC'), 'id'], None),
    'ix_files_detected_type': (['detected_type'], None),
}


def _postgresql() -> bool:
    return op.get_context().dialect.name == 'postgresql'


def _create(name: str, columns: list[str | sa.TextClause],
            where: dict[str, str] | None) -> None:
    dialect = op.get_context().dialect.name
    options: dict[str, object] = {}
    if where is not None:
        options[f'{dialect}_where'] = sa.text(where[dialect])
    if _postgresql():
        with op.get_context().autocommit_block():
            op.execute(f'DROP INDEX CONCURRENTLY IF EXISTS {name}')  # an invalid leftover
            op.create_index(name, 'files', columns, postgresql_concurrently=True, **options)
    else:
        op.create_index(name, 'files', columns, if_not_exists=True, **options)


def _drop(name: str) -> None:
    if _postgresql():
        with op.get_context().autocommit_block():
            op.execute(f'DROP INDEX CONCURRENTLY IF EXISTS {name}')
    else:
        op.execute(f'DROP INDEX IF EXISTS {name}')


def upgrade() -> None:
    for name, (columns, where) in INDEXES.items():
        _create(name, columns, where)
    _drop('ix_files_expires_at')
    _drop('ix_files_created_at')


def downgrade() -> None:
    _create('ix_files_expires_at', ['expires_at'], None)
    _create('ix_files_created_at', ['created_at'], None)
    for name in reversed(INDEXES):
        _drop(name)
