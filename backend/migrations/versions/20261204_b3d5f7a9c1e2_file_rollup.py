"""file_rollup: files per UTC day, per user and for everyone, maintained by triggers

One row per (day, user_id, status, verdict, error_code, detected_type): how many files were
created that UTC day with those values now, and the sums of their sizes in and out and of
their processing times. user_id '*' holds everyone's figures (the admin analytics and charts
read those rows; a user's dashboard reads theirs). NULL verdicts, codes and types are ''.

Triggers on `files` keep it in the transaction of every write to a counted column (an upload,
a job claimed or finished, the expiry sweep failing a file never processed, an admin re-queue
or delete, a user's files deleted with the account, ...): an INSERT adds the row's figures,
a DELETE subtracts them, an UPDATE of a counted column moves them. On PostgreSQL the
triggers are per statement (transition tables) and apply the statement's changes in key
order, so two concurrent multi-row writes never lock the same rollup rows in opposite
orders; on SQLite (one writer at a time) they are per row.

The migration backfills from the existing rows while `files` is locked against writes
(SHARE ROW EXCLUSIVE on PostgreSQL: reads go on; about 2 s per million rows).

Revision ID: b3d5f7a9c1e2
Revises: a865aa90bf0e
Create Date: 2026-12-04 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'b3d5f7a9c1e2'
down_revision: str | None = 'a865aa90bf0e'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEY = "day, user_id, status, verdict, error_code, detected_type"
MEASURES = "files, bytes_in, bytes_out, duration_sum, timed"
ADD = ", ".join(f"{m} = file_rollup.{m} + excluded.{m}" for m in MEASURES.split(", "))


def _row(src: str, sign: str, day: str) -> str:
    """The rollup figures of one `files` row (`src`.column), signed."""
    return (f"{day}, {src}.user_id, {src}.status, coalesce({src}.verdict, ''), "
            f"coalesce({src}.error_code, ''), coalesce({src}.detected_type, ''), {sign}1, "
            f"{sign}{src}.original_size, {sign}coalesce({src}.sanitized_size, 0), "
            f"{sign}coalesce({src}.processing_duration, 0), "
            f"{sign}(CASE WHEN {src}.processing_duration IS NULL THEN 0 ELSE 1 END)")


COUNTED = ("user_id", "status", "verdict", "error_code", "detected_type", "original_size",
           "sanitized_size", "processing_duration", "created_at")
PG_DAY = "(({s}.created_at AT TIME ZONE 'UTC')::date)"


def _pg_apply(select_rows: str) -> str:
    """Add the signed rows of `select_rows` (with KEY and MEASURES columns) to the user's and
    everyone's rollup rows, in key order."""
    sums = ", ".join(f"sum({m})" for m in MEASURES.split(", "))
    return f"""
    INSERT INTO file_rollup ({KEY}, {MEASURES})
    SELECT d.day, s.uid, d.status, d.verdict, d.error_code, d.detected_type, {sums}
    FROM ({select_rows}) AS d(day, user_id, status, verdict, error_code, detected_type,
                              {MEASURES})
    CROSS JOIN LATERAL (VALUES (d.user_id), ('*')) AS s(uid)
    GROUP BY d.day, s.uid, d.status, d.verdict, d.error_code, d.detected_type
    ORDER BY d.day, s.uid, d.status, d.verdict, d.error_code, d.detected_type
    ON CONFLICT ({KEY}) DO UPDATE SET {ADD};"""


def _pg_function() -> str:
    new = _row("n", "", PG_DAY.format(s="n"))
    old = _row("o", "-", PG_DAY.format(s="o"))
    changed = " OR ".join(f"o.{c} IS DISTINCT FROM n.{c}" for c in COUNTED)
    return f"""
CREATE OR REPLACE FUNCTION file_rollup_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    {_pg_apply(f"SELECT {new} FROM new_rows n")}
  ELSIF TG_OP = 'DELETE' THEN
    {_pg_apply(f"SELECT {old} FROM old_rows o")}
  ELSE
    {_pg_apply(f"SELECT {old} FROM old_rows o JOIN new_rows n ON n.id = o.id WHERE {changed} "
               f"UNION ALL SELECT {new} FROM old_rows o JOIN new_rows n ON n.id = o.id "
               f"WHERE {changed}")}
  END IF;
  RETURN NULL;
END $$;"""


def _sqlite_upserts(src: str, sign: str) -> str:
    row = _row(src, sign, f"date({src}.created_at)")
    out = []
    for uid in (f"{src}.user_id", "'*'"):
        values = row.replace(f"{src}.user_id,", f"{uid},", 1)
        out.append(f"INSERT INTO file_rollup ({KEY}, {MEASURES}) VALUES ({values}) "
                   f"ON CONFLICT ({KEY}) DO UPDATE SET {ADD};")
    return "\n  ".join(out)


def _backfill(day: str) -> str:
    sums = ("count(*), sum(original_size), sum(coalesce(sanitized_size, 0)), "
            "sum(coalesce(processing_duration, 0)), count(processing_duration)")
    dims = "status, coalesce(verdict, ''), coalesce(error_code, ''), coalesce(detected_type, '')"
    return (f"INSERT INTO file_rollup ({KEY}, {MEASURES}) "
            f"SELECT {day}, user_id, {dims}, {sums} FROM files GROUP BY {day}, user_id, {dims} "
            f"UNION ALL SELECT {day}, '*', {dims}, {sums} FROM files GROUP BY {day}, {dims}")


def upgrade() -> None:
    op.create_table(
        'file_rollup',
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('user_id', sa.String(36), nullable=False),
        sa.Column('status', sa.String(16), nullable=False),
        sa.Column('verdict', sa.String(16), nullable=False),
        sa.Column('error_code', sa.String(32), nullable=False),
        sa.Column('detected_type', sa.String(64), nullable=False),
        sa.Column('files', sa.BigInteger(), nullable=False),
        sa.Column('bytes_in', sa.BigInteger(), nullable=False),
        sa.Column('bytes_out', sa.BigInteger(), nullable=False),
        sa.Column('duration_sum', sa.Float(), nullable=False),
        sa.Column('timed', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('user_id', 'day', 'status', 'verdict', 'error_code',
                                'detected_type', name='pk_file_rollup'),
    )
    if op.get_context().dialect.name == 'postgresql':
        op.execute('LOCK TABLE files IN SHARE ROW EXCLUSIVE MODE')
        op.execute(_pg_function())
        for event, tables in (('INSERT', 'NEW TABLE AS new_rows'),
                              ('UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'),
                              ('DELETE', 'OLD TABLE AS old_rows')):
            op.execute(f'CREATE TRIGGER files_rollup_{event.lower()} AFTER {event} ON files '
                       f'REFERENCING {tables} FOR EACH STATEMENT '
                       f'EXECUTE FUNCTION file_rollup_apply()')
        op.execute(_backfill(PG_DAY.format(s="files")))
    else:
        changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in COUNTED)
        op.execute(f"CREATE TRIGGER files_rollup_insert AFTER INSERT ON files BEGIN\n  "
                   f"{_sqlite_upserts('NEW', '')}\nEND")
        op.execute(f"CREATE TRIGGER files_rollup_delete AFTER DELETE ON files BEGIN\n  "
                   f"{_sqlite_upserts('OLD', '-')}\nEND")
        op.execute(f"CREATE TRIGGER files_rollup_update AFTER UPDATE OF {', '.join(COUNTED)} "
                   f"ON files WHEN {changed} BEGIN\n  {_sqlite_upserts('OLD', '-')}\n  "
                   f"{_sqlite_upserts('NEW', '')}\nEND")
        op.execute(_backfill("date(created_at)"))


def downgrade() -> None:
    if op.get_context().dialect.name == 'postgresql':
        for event in ('insert', 'update', 'delete'):
            op.execute(f'DROP TRIGGER IF EXISTS files_rollup_{event} ON files')
        op.execute('DROP FUNCTION IF EXISTS file_rollup_apply()')
    else:
        for event in ('insert', 'update', 'delete'):
            op.execute(f'DROP TRIGGER IF EXISTS files_rollup_{event}')
    op.drop_table('file_rollup')
