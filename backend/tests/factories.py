"""Plain-function factories for tests: users and their bearer headers, file and job rows as an
upload or the executor leaves them, and sample files (PDF, PNG, text, an executable).

The engine's hostile and office corpus is elsewhere (tests/engine/corpus.py and its siblings):
those build documents with particular structures, these only need to be valid and of a size."""

from __future__ import annotations

import functools
import io
import itertools
import random
from datetime import datetime, timedelta

from PIL import Image
from sqlalchemy.orm import Session

from sanitas.auth.passwords import hash_password
from sanitas.auth.tokens import create_access_token, hash_token, new_opaque_token
from sanitas.config import Settings
from sanitas.db import utcnow
from sanitas.models import AuthSession, File, Job, User
from sanitas.models._common import new_id
from sanitas.storage import make_storage, original_key, sanitized_key

_counter = itertools.count(1)
DEFAULT_PASSWORD = "correct horse battery"


# -- a data dir's stored policy -----------------------------------------------------------------
def stored_policy(data_dir, name: str = "organisation policy", **rules: str) -> str:
    """An organisation-wide policy (basic with `rules` changed) in the database of a data dir
    a channel's process (sanitas icap, sanitas mail) is then started on, migrated here
    first; its id."""
    from sanitas.db import make_engine, make_sessionmaker
    from sanitas.engine.policy import BUILT_IN
    from sanitas.migrate import upgrade_to_head
    from sanitas.models import StoredPolicy

    data_dir.mkdir(parents=True, exist_ok=True)
    settings = Settings(data_dir=data_dir)
    upgrade_to_head(str(settings.database_url))
    body = BUILT_IN["basic"].to_json()
    body["rules"] = dict(body["rules"], **rules)
    engine = make_engine(str(settings.database_url))
    try:
        with make_sessionmaker(engine)() as session:
            policy = StoredPolicy(owner_id=None, name=name, version=1, body=body)
            session.add(policy)
            session.commit()
            return policy.id
    finally:
        engine.dispose()


# -- users ---------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=32)
def _password_hash(password: str) -> str:
    return hash_password(password)  # argon2 is deliberately slow: hash each password once


def make_user(session: Session, *, role: str = "USER", email: str | None = None,
              password: str = DEFAULT_PASSWORD, verified: bool = True, active: bool = True,
              **fields) -> User:
    n = next(_counter)
    user = User(email=email or f"user{n}@example.com", role=role, is_active=active,
                is_email_verified=verified, password_hash=_password_hash(password), **fields)
    session.add(user)
    session.commit()
    return user


def auth_headers(settings: Settings, session: Session, user: User) -> dict[str, str]:
    """A live session for `user` and the Authorization header of its access token."""
    family = new_id()
    session.add(AuthSession(user_id=user.id, family_id=family,
                            token_hash=hash_token(new_opaque_token()),
                            expires_at=utcnow() + timedelta(days=1)))
    session.commit()
    return {"Authorization": f"Bearer {create_access_token(settings, user.id, family)}"}


# -- files and jobs ------------------------------------------------------------------------------
_JOB_STATE = {"PENDING": "waiting", "PROCESSING": "active", "COMPLETED": "completed",
              "FAILED": "failed"}


def add_file_and_job(session: Session, settings: Settings, user: User, *,
                     status: str = "PENDING", name: str = "report.pdf", size: int | None = None,
                     content: bytes = b"%PDF-1.4 original",
                     sanitized: bytes = b"%PDF-1.4 sanitized", expired: bool = False,
                     created_at: datetime | None = None, job_state: str | None = None,
                     mode: str = "basic", kind: str | None = "pdf", priority: int = 0
                     ) -> tuple[File, Job]:
    """A file row (its blobs in storage) and its job in a given state, as an upload and then
    the executor would leave them: PENDING is a fresh upload with a waiting job; COMPLETED also
    has a sanitized copy and a report; `expired` files have no blobs left."""
    storage = make_storage(settings)
    now = created_at or utcnow()
    file = File(user_id=user.id, original_name=name, original_size=size or len(content),
                detected_type=kind, mode=mode, status=status, created_at=now,
                expires_at=(now - timedelta(minutes=1)) if expired else now + timedelta(hours=24),
                is_expired=False)
    session.add(file)
    session.flush()
    if not expired:
        file.original_key = original_key(file.id)
        tmp = settings.data_dir / f"seed-{file.id}"
        tmp.write_bytes(content)
        storage.put_file(file.original_key, tmp, move=True)
    if status == "COMPLETED" and not expired:
        file.sanitized_key = sanitized_key(file.id)
        tmp = settings.data_dir / f"seed-s-{file.id}"
        tmp.write_bytes(sanitized)
        storage.put_file(file.sanitized_key, tmp, move=True)
        file.sanitized_name = "sanitized_" + name
        file.sanitized_size = len(sanitized)
        file.processing_started_at = now
        file.processing_completed_at = now + timedelta(seconds=2)
        file.processing_duration = 2.0
        file.compression_ratio = round(len(sanitized) / file.original_size, 4)
        file.report = {"findings": [{"kind": "javascript", "location": "page 1",
                                     "action": "removed", "detail": ""}]}
    state = job_state or _JOB_STATE[status]
    job = Job(file_id=file.id, state=state, progress=100 if state == "completed" else 0,
              priority=priority, created_at=now)
    session.add(job)
    session.commit()
    return file, job


def add_file(session: Session, settings: Settings, user: User, **options) -> File:
    """The file row of `add_file_and_job` (same options), for tests that do not need the job."""
    return add_file_and_job(session, settings, user, **options)[0]


# -- sample files --------------------------------------------------------------------------------
TEXT = b"Quarterly numbers\nRevenue: 10\nCosts: 7\n"
EXE = b"MZ\x90\x00" + b"\x00" * 200 + b"This program cannot be run in DOS mode.\r\n"


def pdf_bytes(target_size: int = 20_000, *, pages: int = 1,
              side: tuple[int, int] | None = None, seed: int = 1, quality: int = 95) -> bytes:
    """A real PDF whose pages are noisy images (JPEG, so the size is predictable): each page
    of `side` pixels, or by default square and of roughly `target_size` bytes."""
    if side is None:
        edge = max(16, int((target_size / 3) ** 0.5))
        side = (edge, edge)
    rng = random.Random(seed)
    images = [Image.frombytes("RGB", side, rng.randbytes(side[0] * side[1] * 3))
              for _ in range(pages)]
    buf = io.BytesIO()
    images[0].save(buf, "PDF", save_all=True, append_images=images[1:], resolution=72.0,
                   quality=quality)
    return buf.getvalue()


def png_bytes(side: int = 32, seed: int = 2) -> bytes:
    rng = random.Random(seed)
    img = Image.frombytes("RGB", (side, side), rng.randbytes(side * side * 3))
    buf = io.BytesIO()
    img.save(buf, "PNG")
    return buf.getvalue()
