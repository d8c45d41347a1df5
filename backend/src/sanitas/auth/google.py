"""Google sign-in with OpenID Connect (Authlib): authorization code flow with state, nonce
and PKCE; the id_token is verified against the provider's JWKS.

The browser leg carries no tokens: the callback hands the web app a one-time code (kept only
as a hash, single-use, short-lived) that it exchanges for tokens with a POST.
"""

from __future__ import annotations

import logging
import threading
import time
import warnings
from datetime import timedelta
from urllib.parse import quote

from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.base_client.sync_app import BaseApp, OAuth2Mixin
from authlib.integrations.base_client.sync_openid import OpenIDMixin
from itsdangerous import BadSignature, URLSafeTimedSerializer
from sqlalchemy import select
from sqlalchemy.orm import Session

from sanitas.auth.service import normalise_email
from sanitas.auth.tokens import hash_token, new_opaque_token

with warnings.catch_warnings():
    # Authlib announces, on every start, a move to the httpx2 package; httpx is what it uses.
    warnings.simplefilter("ignore", DeprecationWarning)
    from authlib.integrations.httpx_client import OAuth2Client
from sanitas.config import Settings
from sanitas.db import utcnow
from sanitas.models import EmailToken, User

log = logging.getLogger(__name__)

SCOPE = "openid email profile"
STATE_COOKIE = "sanitas_oidc"
STATE_COOKIE_PATH = "/api/auth/google"
STATE_TTL_SECONDS = 600  # time a person has to finish signing in at Google
EXCHANGE_CODE_TTL_SECONDS = 120
EXCHANGE_PURPOSE = "google_exchange"  # an EmailToken row: hashed, single-use, expiring
METADATA_TTL_SECONDS = 3600

NOT_CONFIGURED = "Google sign-in is not configured"
CANCELLED = "Google sign-in was cancelled"
STATE_INVALID = "Google sign-in session expired or is invalid. Please try again."
FAILED = "Google sign-in failed. Please try again."
UNAVAILABLE = "Google sign-in is temporarily unavailable. Please try again later."
UNVERIFIED = ("Your Google account's email address is not verified, so it cannot be used "
              "to sign in.")
DEACTIVATED = "This account has been deactivated. Please contact support."
OTHER_GOOGLE_ACCOUNT = ("This email address is already linked to a different Google account. "
                        "Sign in with that Google account or with your password.")


class GoogleSignInError(Exception):
    """A failure a person can read; the callback redirects to /login?error=<message>."""


class _OIDCApp(OAuth2Mixin, OpenIDMixin, BaseApp):
    client_cls = OAuth2Client


_apps: dict[tuple, tuple[float, _OIDCApp]] = {}
_apps_lock = threading.Lock()


def is_configured(settings: Settings) -> bool:
    return bool(settings.google_client_id and settings.google_client_secret)


def redirect_uri(settings: Settings) -> str:
    return settings.google_redirect_uri or \
        f"{settings.public_url.rstrip('/')}/api/auth/google/callback"


def login_error_url(message: str) -> str:
    return f"/login?error={quote(message, safe='')}"


def _app(settings: Settings) -> _OIDCApp:
    """One client per configuration; its discovery document is cached for an hour."""
    key = (settings.google_client_id, settings.google_client_secret,
           settings.google_discovery_url)
    now = time.monotonic()
    with _apps_lock:
        cached = _apps.get(key)
        if cached and now - cached[0] < METADATA_TTL_SECONDS:
            return cached[1]
        app = _OIDCApp(
            framework=None, name="google", client_id=settings.google_client_id,
            client_secret=settings.google_client_secret,
            server_metadata_url=settings.google_discovery_url,
            client_kwargs={"scope": SCOPE, "code_challenge_method": "S256", "timeout": 10})
        _apps[key] = (now, app)
        return app


def _serializer(settings: Settings) -> URLSafeTimedSerializer:
    return URLSafeTimedSerializer(settings.signing_key(), salt="sanitas.google-oidc-state")


def start(settings: Settings) -> tuple[str, str]:
    """The provider's authorization URL and the signed cookie value holding state, nonce and
    the PKCE verifier for the callback."""
    state, nonce, verifier = generate_token(32), generate_token(32), generate_token(48)
    try:
        rv = _app(settings).create_authorization_url(
            redirect_uri=redirect_uri(settings), state=state, nonce=nonce,
            code_verifier=verifier)
    except Exception as exc:  # noqa: BLE001 - discovery unreachable or malformed
        log.warning("Google sign-in: cannot load the provider's discovery document: %s",
                    type(exc).__name__)
        _forget_app(settings)
        raise GoogleSignInError(UNAVAILABLE) from None
    cookie = _serializer(settings).dumps({"s": state, "n": nonce, "v": verifier})
    return rv["url"], cookie


def _forget_app(settings: Settings) -> None:
    with _apps_lock:
        _apps.pop((settings.google_client_id, settings.google_client_secret,
                   settings.google_discovery_url), None)


def finish(settings: Settings, *, cookie: str | None, state: str | None, code: str | None,
           error: str | None) -> dict:
    """Check the callback against the cookie, redeem the code, verify the id_token.
    Returns its claims."""
    if error:
        raise GoogleSignInError(CANCELLED if error == "access_denied" else FAILED)
    if not cookie:
        raise GoogleSignInError(STATE_INVALID)
    try:
        saved = _serializer(settings).loads(cookie, max_age=STATE_TTL_SECONDS)
    except BadSignature:
        raise GoogleSignInError(STATE_INVALID) from None
    if not state or not code or not isinstance(saved, dict) or saved.get("s") != state:
        raise GoogleSignInError(STATE_INVALID)
    app = _app(settings)
    try:
        token = app.fetch_access_token(redirect_uri=redirect_uri(settings), code=code,
                                       code_verifier=saved["v"])
        claims = app.parse_id_token(token, nonce=saved["n"])
    except OAuthError as exc:
        log.warning("Google sign-in: the provider refused the code: %s", exc.error)
        raise GoogleSignInError(FAILED) from None
    except Exception as exc:  # noqa: BLE001 - network, bad signature, iss/aud/nonce, expiry
        log.warning("Google sign-in: id_token rejected or provider unreachable: %s: %s",
                    type(exc).__name__, str(exc)[:200])
        raise GoogleSignInError(FAILED) from None
    if not claims or not claims.get("sub"):
        raise GoogleSignInError(FAILED)
    return dict(claims)


def _is_true(value) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _name(value) -> str | None:
    return str(value).strip()[:100] or None if value else None


def user_for_claims(session: Session, settings: Settings, claims: dict) -> User:
    """The account to sign in: the one linked to this Google subject, else the one with the
    same (Google-verified) email, which gets linked, else a new USER account."""
    sub = str(claims["sub"])
    user = session.scalar(select(User).where(User.google_sub == sub))
    if user is None:
        email = normalise_email(str(claims.get("email") or ""))
        if not email or not _is_true(claims.get("email_verified")):
            raise GoogleSignInError(UNVERIFIED)
        user = session.scalar(select(User).where(User.email == email))
        if user is None:
            user = User(email=email, role=settings.plans.new_account_role, password_hash=None,
                        is_active=True,
                        first_name=_name(claims.get("given_name")),
                        last_name=_name(claims.get("family_name")))
            session.add(user)
        elif user.google_sub is not None:  # linked to another Google account already
            raise GoogleSignInError(OTHER_GOOGLE_ACCOUNT)
        user.google_sub = sub
        user.is_email_verified = True  # Google vouches for this address
    if not user.is_active:
        raise GoogleSignInError(DEACTIVATED)
    session.flush()
    return user


def issue_exchange_code(session: Session, user: User) -> str:
    code = new_opaque_token()
    session.add(EmailToken(user_id=user.id, purpose=EXCHANGE_PURPOSE,
                           token_hash=hash_token(code),
                           expires_at=utcnow() + timedelta(seconds=EXCHANGE_CODE_TTL_SECONDS)))
    return code
