"""files: the history's name search reads one account's trigrams (PostgreSQL) or FTS5 (SQLite)

The history's search is `lower(original_name) LIKE '%...%'` in one account's files
(files.service.name_contains); these indexes give a superset of its rows, each of which the
LIKE then tests, so the answers are unchanged. A search shorter than 3 characters has no
trigram and reads the account's rows as before.

- PostgreSQL: sanitas_name_keys(owner, name), an IMMUTABLE SQL function: the distinct
  3-character substrings of `name`, each prefixed with the first 8 hex digits of md5(owner)
  (the account's tag), and ix_files_name_keys, a GIN index of sanitas_name_keys(user_id,
  lower(original_name)). A search asks for every key of its own lower-cased text with `@>`,
  so it reads posting lists of the account's own names, never more rows than the account
  has, instead of every name in the table holding a common trigram as pg_trgm's
  ix_files_name_trgm did (250-500 ms for the heavy account's search at 1M rows on a loaded
  machine); that index is dropped. The price is size: the keys are per account, so the
  index is about as large as the table's rows (207 MB at 1M rows, the trigram index was
  48 MB). No extension is needed. Built with CREATE INDEX CONCURRENTLY (an interrupted build
  leaves an invalid index that the next run drops and builds again).
- SQLite: files_name_fts, an FTS5 table with the trigram tokenizer over
  files.original_name (external content: it holds the index, not a copy of the names; its
  rowids are the files' rowids), kept in step by three triggers on files (insert, delete,
  rename) in the transaction of every write, and filled from the existing rows here. SQLite
  keeps a table's rowids through VACUUM when it has indexes (files has); should they ever be
  renumbered (a table rebuilt by a later migration), `INSERT INTO files_name_fts
  (files_name_fts) VALUES ('rebuild')` builds the index again. A SQLite without FTS5 or its
  trigram tokenizer (before 3.34) skips the table, and the search reads the account's rows.

Revision ID: a0c2e4f6b8d1
Revises: f9b1d3e5a7c9
Create Date: 2026-12-09 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'a0c2e4f6b8d1'
down_revision: str | None = 'f9b1d3e5a7c9'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TRIGGERS = {
    'files_name_fts_insert': (
        'AFTER INSERT ON files BEGIN\n'
        '  INSERT INTO files_name_fts (rowid, original_name) '
        'VALUES (NEW.rowid, NEW.original_name);\nEND'),
    'files_name_fts_delete': (
        'AFTER DELETE ON files BEGIN\n'
        "  INSERT INTO files_name_fts (files_name_fts, rowid, original_name) "
        "VALUES ('delete', OLD.rowid, OLD.original_name);\nEND"),
    'files_name_fts_rename': (
        'AFTER UPDATE OF original_name ON files '
        'WHEN OLD.original_name IS NOT NEW.original_name BEGIN\n'
        "  INSERT INTO files_name_fts (files_name_fts, rowid, original_name) "
        "VALUES ('delete', OLD.rowid, OLD.original_name);\n"
        '  INSERT INTO files_name_fts (rowid, original_name) '
        'VALUES (NEW.rowid, NEW.original_name);\nEND'),
}


NAME_KEYS = (
    "CREATE OR REPLACE FUNCTION sanitas_name_keys(owner text, name text) RETURNS text[] "
    "LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$ "
    "SELECT coalesce(array_agg(DISTINCT tag || substr(name, i, 3)), '{}') "
    "FROM (SELECT left(md5(owner), 8) AS tag) AS t, generate_series(1, length(name) - 2) AS i "
    "$$")


def upgrade() -> None:
    if op.get_context().dialect.name == 'postgresql':
        op.execute(NAME_KEYS)
        with op.get_context().autocommit_block():
            op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_name_keys')
            op.execute('CREATE INDEX CONCURRENTLY ix_files_name_keys ON files '
                       'USING gin (sanitas_name_keys(user_id, lower(original_name)))')
            op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_name_trgm')
        return
    if op.get_context().dialect.name != 'sqlite':
        return
    bind = op.get_bind()
    try:
        bind.exec_driver_sql(
            "CREATE VIRTUAL TABLE IF NOT EXISTS files_name_fts USING fts5("
            "original_name, content='files', tokenize='trigram')")
    except sa.exc.OperationalError as exc:  # no FTS5 module, or no trigram tokenizer
        print(f'files_name_fts skipped: this SQLite cannot build it ({exc.orig})')
        return
    for name, body in TRIGGERS.items():
        bind.exec_driver_sql(f'CREATE TRIGGER IF NOT EXISTS {name} {body}')
    bind.exec_driver_sql("INSERT INTO files_name_fts (files_name_fts) VALUES ('rebuild')")


def downgrade() -> None:
    if op.get_context().dialect.name == 'postgresql':
        bind = op.get_bind()
        trgm = bind.execute(sa.text(
            "SELECT count(*) FROM pg_extension WHERE extname = 'pg_trgm'")).scalar()
        with op.get_context().autocommit_block():
            if trgm:
                op.execute('CREATE INDEX CONCURRENTLY IF NOT EXISTS ix_files_name_trgm ON files '
                           'USING gin (lower(original_name) gin_trgm_ops)')
            op.execute('DROP INDEX CONCURRENTLY IF EXISTS ix_files_name_keys')
        op.execute('DROP FUNCTION IF EXISTS sanitas_name_keys(text, text)')
        return
    if op.get_context().dialect.name != 'sqlite':
        return
    for name in TRIGGERS:
        op.execute(f'DROP TRIGGER IF EXISTS {name}')
    op.execute('DROP TABLE IF EXISTS files_name_fts')
