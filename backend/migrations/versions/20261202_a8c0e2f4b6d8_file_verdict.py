"""file verdict: files.verdict (clean | cleaned | partial | refused), filled for finished files

Files already finished get the verdict their stored report gives (engine/verdict.py derives
it from the findings): FAILED files are refused; an ICAP transaction that passed unchanged
(never seen by the engine) has none.

Revision ID: a8c0e2f4b6d8
Revises: f7b9d1e3a5c7
Create Date: 2026-12-02 10:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = 'a8c0e2f4b6d8'
down_revision: str | None = 'f7b9d1e3a5c7'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 500


def upgrade() -> None:
    from sanitas.engine.verdict import of_report

    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.add_column(sa.Column('verdict', sa.String(length=16), nullable=True))
        batch_op.create_index(batch_op.f('ix_files_verdict'), ['verdict'], unique=False)
    files = sa.table('files', sa.column('id', sa.String), sa.column('status', sa.String),
                     sa.column('report', sa.JSON), sa.column('verdict', sa.String))
    bind = op.get_bind()
    bind.execute(sa.update(files).where(files.c.status == 'FAILED').values(verdict='refused'))
    last = ''
    while True:
        rows = bind.execute(sa.select(files.c.id, files.c.report)
                            .where(files.c.status == 'COMPLETED', files.c.id > last)
                            .order_by(files.c.id).limit(BATCH)).all()
        if not rows:
            break
        for file_id, report in rows:
            icap = report.get('icap') if isinstance(report, dict) else None
            if isinstance(icap, dict) and icap.get('outcome') == 'passed':
                continue
            outcome = of_report(report if report is not None else {})
            if outcome is not None:
                bind.execute(sa.update(files).where(files.c.id == file_id)
                             .values(verdict=outcome.verdict.value))
        last = rows[-1][0]


def downgrade() -> None:
    with op.batch_alter_table('files', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_files_verdict'))
        batch_op.drop_column('verdict')
