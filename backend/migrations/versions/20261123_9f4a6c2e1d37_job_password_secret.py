"""jobs.password_secret: the upload's password, sealed, until the job ends

The password given with an upload (to open an encrypted PDF, Office document or ZIP) travels
to the job sealed with AES-GCM under a key derived from the app's secret key, and is wiped
when the job ends (executor/job_secret.py). NULL for every existing job.

Revision ID: 9f4a6c2e1d37
Revises: 5b8e2f71c4d0
Create Date: 2026-11-23 18:00:00
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '9f4a6c2e1d37'
down_revision: str | None = '5b8e2f71c4d0'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.add_column(sa.Column('password_secret', sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('jobs', schema=None) as batch_op:
        batch_op.drop_column('password_secret')
