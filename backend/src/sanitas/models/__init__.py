"""Every table, imported here so Alembic and create_all see them all."""

from sanitas.models.auth_session import AuthSession
from sanitas.models.contact_message import ContactMessage
from sanitas.models.email_token import EmailToken
from sanitas.models.file import FILE_STATUSES, File
from sanitas.models.job import JOB_STATES, Job
from sanitas.models.queue_state import QueueState
from sanitas.models.rate_limit_hit import RateLimitHit
from sanitas.models.user import ROLES, User

__all__ = [
    "AuthSession", "ContactMessage", "EmailToken", "File", "FILE_STATUSES", "Job", "JOB_STATES",
    "QueueState", "RateLimitHit", "ROLES", "User",
]
