"""Accounts and sessions: registration, sign-in, refresh-token rotation, emailed links."""

from __future__ import annotations

import logging
import re
import unicodedata
from datetime import timedelta

from email_validator import EmailNotValidError, validate_email
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sanitas import plans
from sanitas.audit.service import record
from sanitas.auth.passwords import hash_password, needs_rehash, verify_password
from sanitas.auth.schemas import AuthData, TokensOut, UserOut
from sanitas.auth.tokens import create_access_token, hash_token, new_opaque_token
from sanitas.config import Settings
from sanitas.db import rows_matched, utcnow
from sanitas.mail import send_email
from sanitas.models import AuditAction, AuthSession, EmailToken, File, User
from sanitas.models._common import new_id
from sanitas.web import ratelimit
from sanitas.web.errors import ApiError, invalid_field

log = logging.getLogger(__name__)

MIN_PASSWORD = 6  # at registration (docs/product-rules.md, Accounts and passwords)
MIN_NEW_PASSWORD = 8  # at password change and reset
INVALID_CREDENTIALS = "Invalid email or password"
USERNAME_RE = re.compile(r"[A-Za-z0-9_.-]{3,64}")
USERNAME_RULE = ("Username must be 3 to 64 characters long and contain only letters, digits, "
                 "'.', '_' or '-'")


def normalise_email(email: str) -> str:
    """The one spelling of an address that is stored and looked up: trimmed, lower-cased and
    in Unicode NFC, so 'José@…' typed with a precomposed or a combining accent is one account.
    (Migration 7d3c1e0a9b52 brought the addresses stored before to this form.)"""
    return unicodedata.normalize("NFC", email.strip().lower())


def check_email(email: str) -> str:
    """The normalised address, or 422 with a readable message."""
    email = normalise_email(email)
    try:
        validate_email(email, check_deliverability=False)
    except EmailNotValidError:
        raise invalid_field("email", "Please enter a valid email address") from None
    return email


def check_username(session: Session, username: str | None, *,
                   exclude_user_id: str | None = None) -> str | None:
    """A free, well-formed username (or None to have none); 422 or 409 otherwise."""
    username = (username or "").strip() or None
    if username is None:
        return None
    if not USERNAME_RE.fullmatch(username):
        raise invalid_field("username", USERNAME_RULE)
    taken = select(User.id).where(func.lower(User.username) == username.lower())
    if exclude_user_id:
        taken = taken.where(User.id != exclude_user_id)
    if session.scalar(taken):
        raise ApiError(409, "This username is already taken", "username_taken")
    return username


def find_user_by_email(session: Session, email: str) -> User | None:
    return session.scalar(select(User).where(User.email == normalise_email(email)))


def user_out(session: Session, settings: Settings, user: User) -> UserOut:
    now = utcnow()
    file_count = session.scalar(select(func.count()).select_from(File)
                                .where(File.user_id == user.id)) or 0
    session_count = session.scalar(
        select(func.count(func.distinct(AuthSession.family_id))).where(
            AuthSession.user_id == user.id, AuthSession.revoked_at.is_(None),
            AuthSession.rotated_at.is_(None), AuthSession.expires_at > now)) or 0
    return UserOut.model_validate({
        **{name: getattr(user, name) for name in UserOut.model_fields if hasattr(user, name)},
        "file_count": file_count, "session_count": session_count,
        "plan": plans.user_plan(settings, user.role)})


# --- sessions -------------------------------------------------------------------------

def start_session(session: Session, settings: Settings, user: User, *, family_id: str | None = None,
                  user_agent: str | None = None, ip: str | None = None) -> TokensOut:
    """Issue an access token and a new refresh token (in a new or existing family)."""
    family_id = family_id or new_id()
    refresh = new_opaque_token()
    session.add(AuthSession(
        user_id=user.id, family_id=family_id, token_hash=hash_token(refresh),
        expires_at=utcnow() + timedelta(days=settings.refresh_token_ttl_days),
        user_agent=(user_agent or "")[:255] or None, ip_address=ip))
    return TokensOut(access_token=create_access_token(settings, user.id, family_id),
                     refresh_token=refresh, expires_in=settings.access_token_ttl_seconds)


def revoke_family(session: Session, family_id: str) -> None:
    session.execute(update(AuthSession).where(AuthSession.family_id == family_id,
                                              AuthSession.revoked_at.is_(None))
                    .values(revoked_at=utcnow()))


def sign_out(session: Session, families: set[str], *, ip: str | None) -> None:
    """End the given session families, each with an audit row naming its account."""
    for family in sorted(families):
        owner = session.scalar(select(User).join(AuthSession, AuthSession.user_id == User.id)
                               .where(AuthSession.family_id == family).limit(1))
        revoke_family(session, family)
        if owner is not None:
            record(session, action=AuditAction.SIGN_OUT, actor=owner, ip=ip)
    session.commit()


def family_of_refresh_token(session: Session, refresh_token: str) -> str | None:
    """The session family a refresh token (spent or not) belongs to, if any."""
    return session.scalar(select(AuthSession.family_id).where(
        AuthSession.token_hash == hash_token(refresh_token)))


def revoke_all_sessions(session: Session, user_id: str, *,
                        except_family: str | None = None) -> None:
    stmt = update(AuthSession).where(AuthSession.user_id == user_id,
                                     AuthSession.revoked_at.is_(None))
    if except_family:
        stmt = stmt.where(AuthSession.family_id != except_family)
    session.execute(stmt.values(revoked_at=utcnow()))


def refresh_session(session: Session, settings: Settings, refresh_token: str, *,
                    user_agent: str | None = None, ip: str | None = None) -> AuthData:
    """Rotate a refresh token. A token presented twice revokes its whole family."""
    failure = ApiError(401, "Token refresh failed", "invalid_refresh_token")
    row = session.scalar(select(AuthSession).where(
        AuthSession.token_hash == hash_token(refresh_token)))
    if row is None:
        raise failure
    now = utcnow()
    if row.revoked_at is not None:
        raise failure
    user = session.get(User, row.user_id)
    if row.expires_at <= now or user is None or not user.is_active:
        raise failure
    # Spend the token atomically: of two requests presenting it, exactly one wins.
    spent = session.execute(update(AuthSession).where(
        AuthSession.id == row.id, AuthSession.rotated_at.is_(None),
        AuthSession.revoked_at.is_(None)).values(rotated_at=now))
    if rows_matched(spent) != 1:
        # Reuse of a spent token: assume it was stolen and end the whole session family.
        session.rollback()
        revoke_family(session, row.family_id)
        session.commit()
        log.warning("refresh token reuse detected (user %s); session family revoked",
                    row.user_id)
        raise failure
    tokens = start_session(session, settings, user, family_id=row.family_id,
                           user_agent=user_agent, ip=ip)
    session.commit()
    return AuthData(user=user_out(session, settings, user), tokens=tokens)


# --- registration and sign-in -----------------------------------------------------------

def register(session: Session, settings: Settings, *, email: str, password: str,
             first_name: str | None, last_name: str | None, username: str | None,
             user_agent: str | None = None,
             ip: str | None = None) -> tuple[AuthData, tuple[str, str, str]]:
    """The new account's sign-in data and the verification mail to send (to, subject, body).
    """
    email = check_email(email)
    if len(password) < MIN_PASSWORD:
        raise invalid_field("password", "Password must be at least 6 characters long",
                            "string_too_short")
    if find_user_by_email(session, email) is not None:
        raise ApiError(409, "An account with this email already exists", "email_taken")
    username = check_username(session, username)
    user = User(email=email, username=username, first_name=first_name, last_name=last_name,
                password_hash=hash_password(password), role=settings.plans.new_account_role,
                last_login=utcnow())
    session.add(user)
    try:
        session.flush()
    except IntegrityError:  # a concurrent registration won the race
        session.rollback()
        raise ApiError(409, "An account with this email or username already exists",
                       "conflict") from None
    tokens = start_session(session, settings, user, user_agent=user_agent, ip=ip)
    link = issue_email_link(session, settings, user, "verify_email")
    session.commit()
    mail = (user.email, "Verify your Sanitas email address",
            (f"Welcome to Sanitas!\n\nPlease confirm your email address by opening this "
            f"link:\n\n{link}\n\nThe link is valid for "
            f"{settings.email_verification_ttl_hours} hours.\n"))
    return AuthData(user=user_out(session, settings, user), tokens=tokens), mail


KNOWN_ADDRESSES_SCANNED = 200  # an account's most recent sign-in addresses looked at


def has_signed_in_from(session: Session, settings: Settings, email: str, source: str) -> bool:
    """Whether the account has started or refreshed a session from `source` (an address as
    ratelimit.source counts it) within the refresh-token lifetime. Only someone holding the
    password or a live refresh token can make an address known."""
    since = utcnow() - timedelta(days=settings.refresh_token_ttl_days)
    latest = func.max(AuthSession.created_at)
    addresses = session.scalars(
        select(AuthSession.ip_address).join(User, User.id == AuthSession.user_id)
        .where(User.email == email, AuthSession.created_at >= since,
               AuthSession.ip_address.is_not(None))
        .group_by(AuthSession.ip_address).order_by(latest.desc())
        .limit(KNOWN_ADDRESSES_SCANNED)).all()
    # (the query keeps only sessions with an address)
    return any(address is not None and ratelimit.source(address) == source
               for address in addresses)


def login(session: Session, settings: Settings, *, email: str, password: str,
          user_agent: str | None = None, ip: str | None = None) -> AuthData:
    user = find_user_by_email(session, email)
    # verify_password hashes against a dummy when there is no user: equal timing.
    valid = verify_password(user.password_hash if user else None, password)
    if user is None or not valid:
        record_sign_in_failure(session, user, ip, method="password",
                               reason="invalid_credentials")
        raise ApiError(401, INVALID_CREDENTIALS, "invalid_credentials")
    if not user.is_active:
        record_sign_in_failure(session, user, ip, method="password", reason="account_inactive")
        raise ApiError(403, "This account has been deactivated. Please contact support.",
                       "account_inactive")
    if user.password_hash is not None and needs_rehash(user.password_hash):  # set: valid
        user.password_hash = hash_password(password)
    user.last_login = utcnow()
    tokens = start_session(session, settings, user, user_agent=user_agent, ip=ip)
    record(session, action=AuditAction.SIGN_IN, actor=user, ip=ip,
           detail={"method": "password"})
    session.commit()
    return AuthData(user=user_out(session, settings, user), tokens=tokens)


def record_sign_in_failure(session: Session, user: User | None, ip: str | None, *,
                           method: str, reason: str) -> None:
    """Write an audit row for a refused sign-in at once (the caller then answers with an
    error). Nobody is signed in, so there is no actor; the account, when the address names
    one, is the target. An address that names no account is not kept: people type their
    password into the address field. Commits: nothing else may be pending."""
    record(session, action=AuditAction.SIGN_IN_FAILED, actor=None, ip=ip,
           target=("user", user.id) if user is not None else None,
           detail={"method": method, "reason": reason,
                   "email": user.email if user is not None else None})
    session.commit()


def update_profile(session: Session, user: User, changes: dict[str, str | None]) -> None:
    """Change the names (and username) present in `changes`, snake_case keys; an empty or
    blank name clears it. A username must be well-formed and free (422, 409)."""
    if "username" in changes:
        user.username = check_username(session, changes["username"], exclude_user_id=user.id)
    for field in ("first_name", "last_name"):
        if field in changes:
            setattr(user, field, (changes[field] or "").strip() or None)
    session.commit()


def change_password(session: Session, user: User, current: str, new: str,
                    keep_family: str | None, ip: str | None = None) -> None:
    if not verify_password(user.password_hash, current):
        raise ApiError(400, "Current password is incorrect", "wrong_password")
    if len(new) < MIN_NEW_PASSWORD:
        raise invalid_field("newPassword", "New password must be at least 8 characters",
                            "string_too_short")
    user.password_hash = hash_password(new)
    retire_reset_links(session, user.id)  # a link mailed earlier must not undo this change
    revoke_all_sessions(session, user.id, except_family=keep_family)
    record(session, action=AuditAction.PASSWORD_CHANGED, actor=user, ip=ip,
           target=("user", user.id))
    session.commit()


# --- emailed single-use links -----------------------------------------------------------

_LINK_PATHS = {"verify_email": "/verify-email", "reset_password": "/reset-password"}


def issue_email_link(session: Session, settings: Settings, user: User, purpose: str) -> str:
    ttl = (timedelta(hours=settings.email_verification_ttl_hours) if purpose == "verify_email"
           else timedelta(minutes=settings.password_reset_ttl_minutes))
    token = new_opaque_token()
    session.add(EmailToken(user_id=user.id, purpose=purpose, token_hash=hash_token(token),
                           expires_at=utcnow() + ttl))
    return f"{settings.public_url.rstrip('/')}{_LINK_PATHS[purpose]}?token={token}"


def consume_email_token(session: Session, token: str, purpose: str, invalid_message: str) -> User:
    row = session.scalar(select(EmailToken).where(EmailToken.token_hash == hash_token(token),
                                                  EmailToken.purpose == purpose)
                         .with_for_update())
    if row is None or row.used_at is not None or row.expires_at <= utcnow():
        raise ApiError(400, invalid_message, "invalid_token")
    user = session.get(User, row.user_id)
    if user is None:
        raise ApiError(400, invalid_message, "invalid_token")
    row.used_at = utcnow()
    return user


def verify_email(session: Session, token: str) -> User:
    """Spend an emailed verification link: its user's address is verified."""
    user = consume_email_token(session, token, "verify_email",
                               "This verification link is invalid or has expired.")
    user.is_email_verified = True
    session.commit()
    return user


def retire_reset_links(session: Session, user_id: str) -> None:
    """Mark every unused password reset link of the user as used."""
    session.execute(update(EmailToken).where(EmailToken.user_id == user_id,
                                             EmailToken.purpose == "reset_password",
                                             EmailToken.used_at.is_(None))
                    .values(used_at=utcnow()))


def send_verification(session: Session, settings: Settings, user: User) -> bool:
    link = issue_email_link(session, settings, user, "verify_email")
    session.commit()
    return send_email(settings, user.email, "Verify your Sanitas email address",
                      f"Please confirm your email address by opening this link:\n\n{link}\n\n"
                      f"The link is valid for {settings.email_verification_ttl_hours} hours.\n")


def prepare_password_reset(session: Session, settings: Settings,
                           email: str) -> tuple[str, str, str] | None:
    """Issue a reset link for an active account; returns the mail to send (to, subject,
    body), or None when there is no such account (the caller answers the same either way)."""
    user = find_user_by_email(session, email)
    if user is None or not user.is_active:
        return None
    link = issue_email_link(session, settings, user, "reset_password")
    session.commit()
    return (user.email, "Reset your Sanitas password",
            (f"Someone asked to reset the password of your Sanitas account.\n\n"
            f"To choose a new password, open this link:\n\n{link}\n\n"
            f"The link can be used once and expires in "
            f"{settings.password_reset_ttl_minutes} minutes. If you did not ask for this, "
            f"ignore this message.\n"))


def reset_password(session: Session, token: str, password: str, ip: str | None = None) -> None:
    if len(password) < MIN_NEW_PASSWORD:
        raise invalid_field("password", "Password must be at least 8 characters",
                            "string_too_short")
    user = consume_email_token(session, token, "reset_password",
                               "This password reset link is invalid or has expired.")
    user.password_hash = hash_password(password)
    user.is_email_verified = True  # the link proved the address works
    retire_reset_links(session, user.id)  # every other outstanding one dies with this one
    revoke_all_sessions(session, user.id)
    record(session, action=AuditAction.PASSWORD_RESET, actor=user, ip=ip,
           target=("user", user.id), detail={"method": "emailed link"})
    session.commit()
