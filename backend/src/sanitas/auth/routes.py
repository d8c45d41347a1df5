"""/api/auth/*: registration, sign-in, tokens, profile, password, emailed links."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, BackgroundTasks, Query, Request
from fastapi.responses import RedirectResponse
from fastapi.security.utils import get_authorization_scheme_param
from sqlalchemy.exc import IntegrityError

from sanitas.audit.service import record
from sanitas.auth import google, service
from sanitas.auth.schemas import (
    AuthData,
    CodeIn,
    ForgotPasswordIn,
    LoginIn,
    LogoutIn,
    PasswordChangeIn,
    ProfileUpdateIn,
    RefreshIn,
    RegisterIn,
    ResetPasswordIn,
    TokenIn,
    UserOut,
)
from sanitas.auth.tokens import decode_access_token
from sanitas.db import utcnow
from sanitas.mail import send_email
from sanitas.models import AuditAction
from sanitas.web import ratelimit
from sanitas.web.deps import CurrentUser, SessionDep, SettingsDep, client_ip
from sanitas.web.errors import ApiError
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok

router = APIRouter(prefix="/auth", tags=["auth"],
                   responses={400: {"model": ErrorEnvelope}, 401: {"model": ErrorEnvelope},
                              422: {"model": ErrorEnvelope}, 429: {"model": ErrorEnvelope}})


def _agent(request: Request) -> str | None:
    return request.headers.get("user-agent")


def _access_family(request: Request, settings) -> str | None:
    scheme, token = get_authorization_scheme_param(request.headers.get("authorization"))
    payload = decode_access_token(settings, token) if scheme.lower() == "bearer" else None
    return payload["sid"] if payload else None


_INACTIVE: dict[int | str, dict] = {403: {"model": ErrorEnvelope, "description": "The account "
                                          "is deactivated (`account_inactive`)"}}


@router.post("/register", response_model=Envelope[AuthData], status_code=201,
             responses={409: {"model": ErrorEnvelope, "description": "The email or username is "
                              "already registered (`email_taken`, `username_taken`)"}})
def register(body: RegisterIn, request: Request, session: SessionDep, settings: SettingsDep,
             background: BackgroundTasks):
    ratelimit.hit(session, [
        (f"register:ip:{client_ip(request)}", settings.rate_limit_register_per_ip),
        (f"register:acct:{service.normalise_email(body.email)}",
         settings.rate_limit_register_per_account),
    ], settings.rate_limit_window_seconds)
    data, mail = service.register(session, settings, email=body.email, password=body.password,
                                  first_name=body.first_name, last_name=body.last_name,
                                  username=body.username, user_agent=_agent(request),
                                  ip=client_ip(request))
    background.add_task(send_email, settings, *mail)  # SMTP never delays the answer
    return ok(data, "Registration successful! Please check your email to verify your account.")


@router.post("/login", response_model=Envelope[AuthData], responses=_INACTIVE)
def login(body: LoginIn, request: Request, session: SessionDep, settings: SettingsDep):
    # Guessing is slowed without letting strangers lock the owner out (OWASP authentication
    # cheat sheet): attempts count per source address (an IPv6 /64), per source and account
    # (the limit a guesser meets, cleared by a success from that source) and per account as
    # a ceiling on guessing spread over many sources. The ceiling does not apply to (nor
    # count) sources the account has signed in from lately, so an attack from elsewhere never
    # stops the owner at a known address; a new address waits only while it is reached.
    email = service.normalise_email(body.email)
    source = ratelimit.source(client_ip(request))
    pair = f"login:pair:{source}:{email}"
    keys = [(f"login:ip:{source}", settings.rate_limit_login_per_ip),
            (pair, settings.rate_limit_login_per_account)]
    if not service.has_signed_in_from(session, settings, email, source):
        keys.append((f"login:acct:{email}", settings.rate_limit_login_account_ceiling))
    ratelimit.hit(session, keys, settings.rate_limit_window_seconds)
    data = service.login(session, settings, email=email, password=body.password,
                         user_agent=_agent(request), ip=client_ip(request))
    ratelimit.clear(session, pair)  # a success ends this source's strike count
    return ok(data, "Login successful!")


@router.post("/refresh", response_model=Envelope[AuthData])
def refresh(body: RefreshIn, request: Request, session: SessionDep, settings: SettingsDep):
    data = service.refresh_session(session, settings, body.refresh_token,
                                   user_agent=_agent(request), ip=client_ip(request))
    return ok(data, "Token refreshed")


@router.post("/logout", response_model=Envelope[None])
def logout(request: Request, session: SessionDep, settings: SettingsDep,
           body: LogoutIn | None = None):
    """Revokes the session family of the access token and/or of the given refresh token."""
    families = set()
    if (family := _access_family(request, settings)) is not None:
        families.add(family)
    if body and body.refresh_token and (
            family := service.family_of_refresh_token(session, body.refresh_token)):
        families.add(family)
    if not families:
        raise ApiError(401, "Authentication required. Please sign in.", "unauthorized")
    service.sign_out(session, families, ip=client_ip(request))
    return ok(None, "Logged out successfully")


@router.get("/profile", response_model=Envelope[UserOut])
def get_profile(user: CurrentUser, session: SessionDep, settings: SettingsDep):
    return ok(service.user_out(session, settings, user), "Profile loaded")


@router.put("/profile", response_model=Envelope[UserOut])
def update_profile(body: ProfileUpdateIn, user: CurrentUser, session: SessionDep,
                   settings: SettingsDep):
    service.update_profile(session, user, body.model_dump(include=body.model_fields_set,
                                                          by_alias=False))
    return ok(service.user_out(session, settings, user), "Profile updated successfully")


@router.put("/password", response_model=Envelope[None], responses={
    400: {"model": ErrorEnvelope, "description": "The current password is wrong "
          "(`wrong_password`)"},
    429: {"model": ErrorEnvelope, "description": "Too many attempts on this account or from "
          "this address within the window (`too_many_requests`, with `Retry-After`), or too "
          "many calls at once (`too_many_concurrent`)"}})
def change_password(body: PasswordChangeIn, request: Request, user: CurrentUser,
                    session: SessionDep, settings: SettingsDep):
    # Someone holding a session (a stolen token) must not be able to guess the current
    # password and take the account over: attempts count per account and per source address,
    # as sign-in's do, and a success ends the account's count.
    account = f"password:acct:{user.id}"
    ratelimit.hit(session, [
        (f"password:ip:{ratelimit.source(client_ip(request))}",
         settings.rate_limit_password_per_ip),
        (account, settings.rate_limit_password_per_account),
    ], settings.rate_limit_window_seconds)
    service.change_password(session, user, body.current_password, body.new_password,
                            keep_family=_access_family(request, settings),
                            ip=client_ip(request))
    ratelimit.clear(session, account)
    return ok(None, "Password updated successfully")


@router.post("/verify-email", response_model=Envelope[UserOut])
def verify_email(body: TokenIn, session: SessionDep, settings: SettingsDep):
    user = service.verify_email(session, body.token)
    return ok(service.user_out(session, settings, user),
              "Email verified successfully. You can now sign in.")


@router.post("/resend-verification", response_model=Envelope[None])
def resend_verification(request: Request, user: CurrentUser, session: SessionDep,
                        settings: SettingsDep):
    if user.is_email_verified:
        return ok(None, "Your email address is already verified.")
    ratelimit.hit(session, [(f"verify:acct:{user.id}", settings.rate_limit_reset_per_account)],
                  settings.rate_limit_window_seconds)
    if not service.send_verification(session, settings, user):
        raise ApiError(503, "We could not send the email right now. Please try again later.",
                       "mail_unavailable")
    return ok(None, "A new verification email has been sent.")


FORGOT_ANSWER = ("If an account exists for that email, a password reset link has been sent. "
                 "Please check your inbox.")


@router.post("/forgot-password", response_model=Envelope[None])
def forgot_password(body: ForgotPasswordIn, request: Request, session: SessionDep,
                    settings: SettingsDep, background: BackgroundTasks):
    email = service.check_email(body.email)
    ratelimit.hit(session, [
        (f"reset:ip:{client_ip(request)}", settings.rate_limit_reset_per_ip),
        (f"reset:acct:{email}", settings.rate_limit_reset_per_account),
    ], settings.rate_limit_window_seconds)
    mail = service.prepare_password_reset(session, settings, email)
    if mail is not None:
        # Sent after the answer, so its timing does not tell whether the account exists.
        background.add_task(send_email, settings, *mail)
    return ok(None, FORGOT_ANSWER)


@router.post("/reset-password", response_model=Envelope[None])
def reset_password(body: ResetPasswordIn, request: Request, session: SessionDep,
                   settings: SettingsDep):
    ratelimit.hit(session, [(f"reset:ip:{client_ip(request)}", settings.rate_limit_reset_per_ip)],
                  settings.rate_limit_window_seconds)
    service.reset_password(session, body.token, body.password, ip=client_ip(request))
    return ok(None, "Your password has been reset. You can now sign in.")


# --- Google sign-in (OpenID Connect) ----------------------------------------------------

_REDIRECT: dict[int | str, dict[str, Any]] = {
    302: {"description": "Redirect (to Google, to /auth/callback?code=..., or to "
                         "/login?error=... with a readable message)"}}


def _redirect(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=302, headers={"Cache-Control": "no-store"})


@router.get("/google", response_class=RedirectResponse, status_code=302, responses=_REDIRECT)
def google_start(settings: SettingsDep):
    """Send the browser to Google. State, nonce and PKCE verifier travel in a signed,
    HttpOnly cookie scoped to /api/auth/google."""
    if not google.is_configured(settings):
        return _redirect(google.login_error_url(google.NOT_CONFIGURED))
    try:
        url, cookie = google.start(settings)
    except google.GoogleSignInError as exc:
        return _redirect(google.login_error_url(str(exc)))
    answer = _redirect(url)
    answer.set_cookie(google.STATE_COOKIE, cookie, max_age=google.STATE_TTL_SECONDS,
                      path=google.STATE_COOKIE_PATH, httponly=True, samesite="lax",
                      secure=settings.public_url.startswith("https://"))
    return answer


@router.get("/google/callback", response_class=RedirectResponse, status_code=302,
            responses=_REDIRECT)
def google_callback(request: Request, session: SessionDep, settings: SettingsDep,
                    code: str | None = Query(None, max_length=2048),
                    state: str | None = Query(None, max_length=512),
                    error: str | None = Query(None, max_length=256)):
    """Google sends the browser back here. Creates or links the account, then hands the web
    app a one-time code for POST /api/auth/google/exchange."""
    if not google.is_configured(settings):
        target = google.login_error_url(google.NOT_CONFIGURED)
    else:
        try:
            claims = google.finish(settings, cookie=request.cookies.get(google.STATE_COOKIE),
                                   state=state, code=code, error=error)
            user = google.user_for_claims(session, settings, claims)
            one_time = google.issue_exchange_code(session, user)
            session.commit()
            target = f"/auth/callback?code={one_time}"
        except google.GoogleSignInError as exc:
            session.rollback()
            service.record_sign_in_failure(session, None, client_ip(request), method="google",
                                           reason=str(exc))
            target = google.login_error_url(str(exc))
        except IntegrityError:  # a concurrent first sign-in with the same account
            session.rollback()
            target = google.login_error_url(google.FAILED)
    answer = _redirect(target)
    answer.delete_cookie(google.STATE_COOKIE, path=google.STATE_COOKIE_PATH)
    return answer


@router.post("/google/exchange", response_model=Envelope[AuthData], responses=_INACTIVE)
def google_exchange(body: CodeIn, request: Request, session: SessionDep, settings: SettingsDep):
    """Trade the one-time code from the callback for the user and tokens."""
    ratelimit.hit(session, [(f"login:ip:{ratelimit.source(client_ip(request))}",
                             settings.rate_limit_login_per_ip)],
                  settings.rate_limit_window_seconds)
    try:
        user = service.consume_email_token(
            session, body.code, google.EXCHANGE_PURPOSE,
            "This sign-in code is invalid or has expired. Please sign in with Google again.")
    except ApiError as exc:
        session.rollback()
        service.record_sign_in_failure(session, None, client_ip(request), method="google",
                                       reason=exc.error)
        raise
    if not user.is_active:
        session.rollback()
        service.record_sign_in_failure(session, user, client_ip(request), method="google",
                                       reason="account_inactive")
        raise ApiError(403, google.DEACTIVATED, "account_inactive")
    user.last_login = utcnow()
    tokens = service.start_session(session, settings, user, user_agent=_agent(request),
                                   ip=client_ip(request))
    record(session, action=AuditAction.SIGN_IN, actor=user, ip=client_ip(request),
           detail={"method": "google"})
    session.commit()
    return ok(service.AuthData(user=service.user_out(session, settings, user), tokens=tokens),
              "Login successful!")
