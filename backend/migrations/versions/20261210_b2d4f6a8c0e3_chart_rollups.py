"""report_rollup, threat_rollup and duration_rollup: the charts' figures per UTC day, by triggers

The analytics charts count the threats the engine removed, converted or blocked, by kind, in
the period's reports, and the processing times of the files cleaned (median and 95th
percentile per family). Reading them from the rows meant taking apart the JSON of every
report of the period (at most the newest 5,000, so a month's chart at a million files counted
the last two days) and sorting every duration of the period. These tables hold the same
figures per UTC day of a file's creation, per user and for everyone ('*', as file_rollup):

- report_rollup (user_id, day) -> reports: the files with a report (not NULL, not JSON null).
- threat_rollup (user_id, day, kind, detail) -> findings: how many findings of the reports
  are threats (an object whose `kind` is a string, cut to 100 characters, and whose `action`
  is removed, converted or blocked). `detail` is the finding's detail when it may be one of
  the engine's summary lines (location "whole file", a string of at most 64 characters like
  "and N more of this kind" or "N further findings not listed"), else ''. The reader turns a
  row into a count with engine/verdict.weight, as it does for a report's findings, so the
  regular expressions stay in one place (SQLite has none).
- duration_rollup (day, detected_type) -> durations: the processing times of everyone's
  files COMPLETED with one, in no order (on PostgreSQL a bytea of 8-byte big-endian floats,
  float8send's, read as they are: a float8[] cost 12 ms to send a month's 78,000 values
  against 4.5 ms; a JSON array on SQLite; NULL types as ''). Percentiles are not sums: the reader sorts the period's values, but it
  reads one array per day and type instead of a row per file. Everyone's only: per user,
  an array would hold a file or two, and one user's charts read that user's rows.

Triggers on `files` keep all three in the transaction of every write of a column they
count (a job finished, an admin re-queue, a delete, an account deleted with its files), as
file_rollup's do: per statement with transition tables on PostgreSQL, locking the rows in
key order, per row on SQLite. Rows whose files moved on keep a count of 0 or an empty array.

The migration backfills them from the existing rows while `files` is locked against writes
(SHARE ROW EXCLUSIVE on PostgreSQL: reads go on; each report's JSON is parsed once, about
20 s per million files).

Revision ID: b2d4f6a8c0e3
Revises: a0c2e4f6b8d1
Create Date: 2026-12-10 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'b2d4f6a8c0e3'
down_revision: str | None = 'a0c2e4f6b8d1'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ACTIONS = "('blocked', 'converted', 'removed')"  # usage.service.THREAT_ACTIONS
SUMMARY = ("({d} LIKE 'and % more of this kind' OR {d} LIKE '% further findings not listed') "
           "AND length({d}) <= 64")
EVENTS = ('insert', 'update', 'delete')


def _pg_apply(rows: str) -> str:
    """Add `rows` (day, user_id, r: the report as jsonb, sign) to both rollups, for the user
    and everyone, in key order."""
    detail = "e.value ->> 'detail'"
    return f"""
    INSERT INTO report_rollup (user_id, day, reports)
    SELECT s.uid, d.day, sum(d.sign) FROM ({rows}) AS d(day, user_id, r, sign)
    CROSS JOIN LATERAL (VALUES (d.user_id), ('*')) AS s(uid)
    GROUP BY s.uid, d.day ORDER BY s.uid, d.day
    ON CONFLICT (user_id, day) DO UPDATE SET reports = report_rollup.reports + excluded.reports;
    INSERT INTO threat_rollup (user_id, day, kind, detail, findings)
    SELECT s.uid, d.day, left(e.value ->> 'kind', 100),
           CASE WHEN e.value ->> 'location' = 'whole file'
                     AND jsonb_typeof(e.value -> 'detail') = 'string'
                     AND {SUMMARY.format(d=detail)} THEN {detail} ELSE '' END AS detail,
           sum(d.sign)
    FROM ({rows}) AS d(day, user_id, r, sign)
    CROSS JOIN LATERAL jsonb_array_elements(CASE WHEN jsonb_typeof(d.r -> 'findings') = 'array'
                                            THEN d.r -> 'findings' ELSE '[]'::jsonb END) AS e
    CROSS JOIN LATERAL (VALUES (d.user_id), ('*')) AS s(uid)
    WHERE jsonb_typeof(e.value) = 'object' AND jsonb_typeof(e.value -> 'kind') = 'string'
      AND e.value ->> 'action' IN {ACTIONS}
    GROUP BY s.uid, d.day, 3, 4 ORDER BY s.uid, d.day, 3, 4
    ON CONFLICT (user_id, day, kind, detail)
    DO UPDATE SET findings = threat_rollup.findings + excluded.findings;"""


def _pg_rows(src: str, sign: str) -> str:
    return (f"SELECT ({src}.created_at AT TIME ZONE 'UTC')::date, {src}.user_id, "
            f"{src}.report::jsonb, {sign}1 FROM {{t}} WHERE {src}.report IS NOT NULL "
            f"AND {src}.report::text <> 'null'")


def _pg_function() -> str:
    changed = ("(o.report::text IS DISTINCT FROM n.report::text "
               "OR o.created_at IS DISTINCT FROM n.created_at OR o.user_id IS DISTINCT FROM "
               "n.user_id)")
    both = "old_rows o JOIN new_rows n ON n.id = o.id"
    new = _pg_rows("n", "").format(t="new_rows n")
    old = _pg_rows("o", "-").format(t="old_rows o")
    moved = (_pg_rows("o", "-").format(t=both) + f" AND {changed} UNION ALL "
             + _pg_rows("n", "").format(t=both) + f" AND {changed}")
    return f"""
CREATE OR REPLACE FUNCTION report_rollup_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    {_pg_apply(new)}
  ELSIF TG_OP = 'DELETE' THEN
    {_pg_apply(old)}
  ELSIF EXISTS (SELECT 1 FROM {both} WHERE {changed}) THEN  -- an UPDATE of a counted column
    {_pg_apply(moved)}
  END IF;
  RETURN NULL;
END $$;"""


def _sqlite_has_report(src: str) -> str:
    return f"{src}.report IS NOT NULL AND {src}.report <> 'null'"


def _sqlite_threats(src: str, uid: str, count: str, files: str = "") -> str:
    """SELECT (user, day, kind, detail, `count`) of the threat findings of `src`'s report:
    the row itself in a trigger, or each row of `files` (a FROM item, `files AS f, `)."""
    detail = "e.value ->> '$.detail'"
    # A report that is not JSON (SQLite stores any text, NaN say; PostgreSQL's json type
    # refuses it) counts as a report without findings instead of failing the write.
    findings = (f"CASE WHEN NOT json_valid({src}.report) THEN '[]' "
                f"WHEN json_type({src}.report, '$.findings') = 'array' "
                f"THEN json_extract({src}.report, '$.findings') ELSE '[]' END")
    return (f"SELECT {uid}, date({src}.created_at), substr(e.value ->> '$.kind', 1, 100), "
            f"CASE WHEN e.value ->> '$.location' = 'whole file' "
            f"AND json_type(e.value, '$.detail') = 'text' AND {SUMMARY.format(d=detail)} "
            f"THEN {detail} ELSE '' END, {count} FROM {files}json_each({findings}) AS e "
            f"WHERE {_sqlite_has_report(src)} AND e.type = 'object' "
            f"AND json_type(e.value, '$.kind') = 'text' AND e.value ->> '$.action' IN {ACTIONS} "
            f"GROUP BY 1, 2, 3, 4")


def _sqlite_apply(src: str, sign: str) -> str:
    """The statements adding (sign '') or taking away (sign '-') the row `src`'s report."""
    out = []
    for uid in (f"{src}.user_id", "'*'"):
        out.append(
            f"INSERT INTO report_rollup (user_id, day, reports) "
            f"SELECT {uid}, date({src}.created_at), {sign}1 WHERE {_sqlite_has_report(src)} "
            f"ON CONFLICT (user_id, day) DO UPDATE SET reports = reports + excluded.reports;")
        out.append(
            f"INSERT INTO threat_rollup (user_id, day, kind, detail, findings) "
            f"{_sqlite_threats(src, uid, f'{sign}count(*)')} "
            f"ON CONFLICT (user_id, day, kind, detail) "
            f"DO UPDATE SET findings = findings + excluded.findings;")
    return "\n  ".join(out)


def _sqlite_triggers() -> dict[str, str]:
    changed = ("OLD.report IS NOT NEW.report OR OLD.created_at IS NOT NEW.created_at "
               "OR OLD.user_id IS NOT NEW.user_id")
    return {
        'files_reports_insert': f"AFTER INSERT ON files BEGIN\n  {_sqlite_apply('NEW', '')}\nEND",
        'files_reports_delete': f"AFTER DELETE ON files BEGIN\n  {_sqlite_apply('OLD', '-')}\nEND",
        'files_reports_update': (f"AFTER UPDATE OF report, created_at, user_id ON files "
                                 f"WHEN {changed} BEGIN\n  {_sqlite_apply('OLD', '-')}\n  "
                                 f"{_sqlite_apply('NEW', '')}\nEND"),
    }


# -- durations ---------------------------------------------------------------------------------
TIMED = "{s}.status = 'COMPLETED' AND {s}.processing_duration IS NOT NULL"
TIMED_COLUMNS = ("status", "processing_duration", "detected_type", "created_at")
KEY2 = "day, detected_type"
# A multiset difference of packed 8-byte values: `a` without one occurrence of each of `b`'s,
# in no order.
WITHOUT = """
CREATE OR REPLACE FUNCTION sanitas_without(a bytea, b bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
SELECT coalesce(string_agg(x.v, ''::bytea), ''::bytea) FROM (
  SELECT v, row_number() OVER (PARTITION BY v) AS n FROM (
    SELECT substring(a FROM i * 8 + 1 FOR 8) AS v
    FROM generate_series(0, length(a) / 8 - 1) AS i) AS c) AS x
LEFT JOIN (
  SELECT v, count(*) AS c FROM (
    SELECT substring(b FROM i * 8 + 1 FOR 8) AS v
    FROM generate_series(0, length(b) / 8 - 1) AS i) AS d GROUP BY v) AS y ON y.v = x.v
WHERE x.n > coalesce(y.c, 0) $$"""


def _pg_timed(src: str, table: str, where: str = "") -> str:
    """(day, kind, seconds) of the timed rows of `table` (aliased `src`)."""
    return (f"SELECT ({src}.created_at AT TIME ZONE 'UTC')::date, "
            f"coalesce({src}.detected_type, ''), {src}.processing_duration FROM {table} "
            f"WHERE {TIMED.format(s=src)}{where}")


def _pg_grouped(rows: str) -> str:
    """`rows`' durations packed per (day, type), in key order."""
    return (f"SELECT d.day, d.kind, string_agg(float8send(d.seconds), ''::bytea) "
            f"FROM ({rows}) AS d(day, kind, seconds) "
            f"GROUP BY d.day, d.kind ORDER BY d.day, d.kind")


def _pg_add(rows: str) -> str:
    return (f"INSERT INTO duration_rollup ({KEY2}, durations) {_pg_grouped(rows)} "
            f"ON CONFLICT ({KEY2}) DO UPDATE "
            f"SET durations = duration_rollup.durations || excluded.durations;")


def _pg_take(rows: str) -> str:
    """Take `rows`' durations out of their arrays, the rows locked in key order first."""
    gone = f"({_pg_grouped(rows)}) AS x(day, kind, gone)"
    match = "r.day = x.day AND r.detected_type = x.kind"
    return (f"PERFORM 1 FROM duration_rollup AS r JOIN {gone} ON {match} "
            f"ORDER BY r.day, r.detected_type FOR UPDATE OF r;\n    "
            f"UPDATE duration_rollup AS r SET durations = sanitas_without(r.durations, x.gone) "
            f"FROM {gone} WHERE {match};")


def _pg_durations_function() -> str:
    changed = " OR ".join(f"o.{c} IS DISTINCT FROM n.{c}" for c in TIMED_COLUMNS)
    both = "old_rows o JOIN new_rows n ON n.id = o.id"
    return f"""
CREATE OR REPLACE FUNCTION duration_rollup_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    {_pg_add(_pg_timed("n", "new_rows n"))}
  ELSIF TG_OP = 'DELETE' THEN
    {_pg_take(_pg_timed("o", "old_rows o"))}
  ELSIF EXISTS (SELECT 1 FROM {both} WHERE {changed}) THEN  -- an UPDATE of a counted column
    {_pg_take(_pg_timed("o", both, f" AND ({changed})"))}
    {_pg_add(_pg_timed("n", both, f" AND ({changed})"))}
  END IF;
  RETURN NULL;
END $$;"""


def _sqlite_seconds(src: str) -> str:
    """`src`'s duration as a JSON number of 17 significant digits: SQLite writes a REAL into
    JSON with 15, which 1.602 + 1 (2.6020000000000003) does not come back from."""
    return f"json(printf('%!.17g', {src}.processing_duration))"


def _sqlite_durations(src: str, add: bool) -> str:
    timed = TIMED.format(s=src)
    if add:
        return (f"INSERT INTO duration_rollup ({KEY2}, durations) SELECT "
                f"date({src}.created_at), coalesce({src}.detected_type, ''), "
                f"json_array({_sqlite_seconds(src)}) WHERE {timed} "
                f"ON CONFLICT ({KEY2}) DO UPDATE "
                f"SET durations = json_insert(durations, '$[#]', {_sqlite_seconds(src)});")
    first = (f"(SELECT e.key FROM json_each(durations) AS e "
             f"WHERE e.value = {src}.processing_duration LIMIT 1)")
    return (f"UPDATE duration_rollup SET durations = "
            f"coalesce(json_remove(durations, '$[' || {first} || ']'), durations) "
            f"WHERE day = date({src}.created_at) "
            f"AND detected_type = coalesce({src}.detected_type, '') AND {timed};")


def _sqlite_duration_triggers() -> dict[str, str]:
    changed = " OR ".join(f"OLD.{c} IS NOT NEW.{c}" for c in TIMED_COLUMNS)
    return {
        'files_durations_insert': (f"AFTER INSERT ON files BEGIN\n  "
                                   f"{_sqlite_durations('NEW', True)}\nEND"),
        'files_durations_delete': (f"AFTER DELETE ON files BEGIN\n  "
                                   f"{_sqlite_durations('OLD', False)}\nEND"),
        'files_durations_update': (f"AFTER UPDATE OF {', '.join(TIMED_COLUMNS)} ON files "
                                   f"WHEN {changed} BEGIN\n  "
                                   f"{_sqlite_durations('OLD', False)}\n  "
                                   f"{_sqlite_durations('NEW', True)}\nEND"),
    }


def upgrade() -> None:
    op.create_table(
        'report_rollup',
        sa.Column('user_id', sa.String(36), nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('reports', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('user_id', 'day', name='pk_report_rollup'),
    )
    op.create_table(
        'threat_rollup',
        sa.Column('user_id', sa.String(36), nullable=False),
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('kind', sa.String(100), nullable=False),
        sa.Column('detail', sa.String(64), nullable=False),
        sa.Column('findings', sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint('user_id', 'day', 'kind', 'detail', name='pk_threat_rollup'),
    )
    postgresql = op.get_context().dialect.name == 'postgresql'
    op.create_table(
        'duration_rollup',
        sa.Column('day', sa.Date(), nullable=False),
        sa.Column('detected_type', sa.String(64), nullable=False),
        sa.Column('durations', sa.LargeBinary() if postgresql else sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint('day', 'detected_type', name='pk_duration_rollup'),
    )
    if postgresql:
        op.execute('LOCK TABLE files IN SHARE ROW EXCLUSIVE MODE')
        op.execute(WITHOUT)
        op.execute(_pg_durations_function())
        op.execute(_pg_function())
        for event, tables in (('INSERT', 'NEW TABLE AS new_rows'),
                              ('UPDATE', 'OLD TABLE AS old_rows NEW TABLE AS new_rows'),
                              ('DELETE', 'OLD TABLE AS old_rows')):
            op.execute(f'CREATE TRIGGER files_reports_{event.lower()} AFTER {event} ON files '
                       f'REFERENCING {tables} FOR EACH STATEMENT '
                       f'EXECUTE FUNCTION report_rollup_apply()')
            op.execute(f'CREATE TRIGGER files_durations_{event.lower()} AFTER {event} ON files '
                       f'REFERENCING {tables} FOR EACH STATEMENT '
                       f'EXECUTE FUNCTION duration_rollup_apply()')
        op.execute(_pg_apply(_pg_rows("f", "").format(t="files f")))
        op.execute(_pg_add(_pg_timed("f", "files f")))
    else:
        triggers = {**_sqlite_triggers(), **_sqlite_duration_triggers()}
        for name, body in triggers.items():
            op.execute(f'CREATE TRIGGER {name} {body}')
        _sqlite_backfill()


def _sqlite_backfill() -> None:
    """What the insert trigger would have added for each existing row."""
    for uid in ("f.user_id", "'*'"):
        op.execute(f"INSERT INTO report_rollup (user_id, day, reports) "
                   f"SELECT {uid}, date(f.created_at), count(*) FROM files AS f "
                   f"WHERE {_sqlite_has_report('f')} GROUP BY 1, 2")
        op.execute(f"INSERT INTO threat_rollup (user_id, day, kind, detail, findings) "
                   f"{_sqlite_threats('f', uid, 'count(*)', files='files AS f, ')}")
    op.execute(f"INSERT INTO duration_rollup ({KEY2}, durations) "
               f"SELECT date(f.created_at), coalesce(f.detected_type, ''), "
               f"json_group_array({_sqlite_seconds('f')}) FROM files AS f "
               f"WHERE {TIMED.format(s='f')} GROUP BY 1, 2")


def downgrade() -> None:
    if op.get_context().dialect.name == 'postgresql':
        for event in EVENTS:
            op.execute(f'DROP TRIGGER IF EXISTS files_reports_{event} ON files')
            op.execute(f'DROP TRIGGER IF EXISTS files_durations_{event} ON files')
        op.execute('DROP FUNCTION IF EXISTS report_rollup_apply()')
        op.execute('DROP FUNCTION IF EXISTS duration_rollup_apply()')
        op.execute('DROP FUNCTION IF EXISTS sanitas_without(bytea, bytea)')
    else:
        for event in EVENTS:
            op.execute(f'DROP TRIGGER IF EXISTS files_reports_{event}')
            op.execute(f'DROP TRIGGER IF EXISTS files_durations_{event}')
    op.drop_table('duration_rollup')
    op.drop_table('threat_rollup')
    op.drop_table('report_rollup')
