"""normalise stored emails (trimmed, lower-case, Unicode NFC)

Addresses are now stored and looked up in one spelling (auth.service.normalise_email), so
'josé@…' typed with a precomposed é and with e + combining accent is one account. Before,
both could be registered. This brings stored addresses to that spelling. A row whose
normalised address another account already holds (or that several rows share) is left as
it is and logged: the accounts are different people's or duplicates, which only an admin
can tell; until then the row keeping the odd spelling cannot be found by sign-in.

Revision ID: 7d3c1e0a9b52
Revises: cca88320c719
Create Date: 2026-11-23 12:00:00.000000
"""
import logging
import unicodedata
from collections import defaultdict
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '7d3c1e0a9b52'
down_revision: str | None = 'cca88320c719'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger("sanitas.migrations")

users = sa.table("users", sa.column("id", sa.String), sa.column("email", sa.String))


def _normalise(email: str) -> str:
    # A frozen copy of auth.service.normalise_email as of this revision.
    return unicodedata.normalize("NFC", email.strip().lower())


def upgrade() -> None:
    bind = op.get_bind()
    by_form: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for user_id, email in bind.execute(sa.select(users.c.id, users.c.email)):
        by_form[_normalise(email)].append((user_id, email))
    changed = 0
    for form, rows in by_form.items():
        odd = sorted((user_id, email) for user_id, email in rows if email != form)
        if not odd:
            continue
        holders = [user_id for user_id, email in rows if email == form]
        if holders:
            for user_id, email in odd:
                log.warning("email normalisation: user %s keeps its address %r: its "
                            "normalised form %r belongs to user %s; merge or rename one of "
                            "them by hand", user_id, email, form, holders[0])
            continue
        if len(odd) > 1:
            log.warning("email normalisation: users %s all normalise to %r; their addresses "
                        "are left as they are; merge or rename them by hand",
                        ", ".join(user_id for user_id, _ in odd), form)
            continue
        bind.execute(sa.update(users).where(users.c.id == odd[0][0]).values(email=form))
        changed += 1
    if changed:
        log.info("email normalisation: %d stored address(es) rewritten", changed)


def downgrade() -> None:
    # The earlier spellings are not kept; normalised addresses are valid for older code.
    pass
