"""Every table, imported here so Alembic and create_all see them all."""

from sanitas.models.auth_session import AuthSession
from sanitas.models.contact_message import ContactMessage
from sanitas.models.email_token import EmailToken
from sanitas.models.file import FILE_STATUSES, File, FileStatus, ProcessingMode
from sanitas.models.job import JOB_STATES, Job, JobState
from sanitas.models.queue_state import QueueState
from sanitas.models.rate_limit_hit import RateLimitHit
from sanitas.models.user import ROLES, Role, User

__all__ = [
    "FILE_STATUSES",
    "JOB_STATES",
    "ROLES",
    "AuthSession",
    "ContactMessage",
    "EmailToken",
    "File",
    "FileStatus",
    "Job",
    "JobState",
    "ProcessingMode",
    "QueueState",
    "RateLimitHit",
    "Role",
    "User",
]
