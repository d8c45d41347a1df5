"""Every table, imported here so Alembic and create_all see them all."""

from sanitas.models.api_key import ApiKey, ApiKeyScope
from sanitas.models.audit import AuditAction, AuditEntry
from sanitas.models.auth_session import AuthSession
from sanitas.models.contact_message import ContactMessage
from sanitas.models.email_token import EmailToken
from sanitas.models.file import FILE_STATUSES, File, FileStatus, StatusFilter
from sanitas.models.file_rollup import (
    EVERYONE,
    DurationRollup,
    FileRollup,
    ReportRollup,
    ThreatRollup,
)
from sanitas.models.held_message import HELD_STATUSES, HeldMessage, HeldStatus
from sanitas.models.job import JOB_STATES, Job, JobState
from sanitas.models.policy import PolicyDefault, PolicyVersion, StoredPolicy
from sanitas.models.queue_state import AccountTurn, QueueState
from sanitas.models.rate_limit_hit import RateLimitHit
from sanitas.models.report import Report, ReportFormat, ReportStatus
from sanitas.models.user import ROLES, Role, RoleFilter, User, UserStatusFilter
from sanitas.models.webhook import (
    DeliveryState,
    Webhook,
    WebhookDelivery,
    WebhookEvent,
)

__all__ = [
    "EVERYONE",
    "FILE_STATUSES",
    "HELD_STATUSES",
    "JOB_STATES",
    "ROLES",
    "AccountTurn",
    "ApiKey",
    "ApiKeyScope",
    "AuditAction",
    "AuditEntry",
    "AuthSession",
    "ContactMessage",
    "DeliveryState",
    "DurationRollup",
    "EmailToken",
    "File",
    "FileRollup",
    "FileStatus",
    "HeldMessage",
    "HeldStatus",
    "Job",
    "JobState",
    "PolicyDefault",
    "PolicyVersion",
    "QueueState",
    "RateLimitHit",
    "Report",
    "ReportFormat",
    "ReportRollup",
    "ReportStatus",
    "Role",
    "RoleFilter",
    "StatusFilter",
    "StoredPolicy",
    "ThreatRollup",
    "User",
    "UserStatusFilter",
    "Webhook",
    "WebhookDelivery",
    "WebhookEvent",
]
