"""The API key calls: an account's own keys, and (admins) anyone's. These are account calls:
they take a signed-in session, never a key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request

from sanitas.apikeys import service
from sanitas.apikeys.schemas import ApiKeyCreated, ApiKeyIn, ApiKeyOut, ApiKeyRevoked
from sanitas.models import User
from sanitas.plans import Capability
from sanitas.web.deps import AdminUser, CurrentUser, Requires, SessionDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok

router = APIRouter(prefix="/keys", tags=["api keys"],
                   responses={401: {"model": ErrorEnvelope}})
admin_router = APIRouter(prefix="/users/{user_id}/keys", tags=["api keys"],
                         responses={401: {"model": ErrorEnvelope}})

_PLAN = {"model": ErrorEnvelope, "description": "The caller's plan has no API access "
         "(`plan_required`)"}
_NOT_FOUND = {"model": ErrorEnvelope, "description": "No such unrevoked key of this account "
              "(`not_found`)"}
_ADMIN_ONLY = {"model": ErrorEnvelope, "description": "Admins only (`forbidden`)"}


@router.post("", status_code=201, response_model=Envelope[ApiKeyCreated], responses={
    403: _PLAN,
    409: {"model": ErrorEnvelope, "description": "The account has as many keys as it may "
          "(`too_many_keys`)"},
    422: {"model": ErrorEnvelope, "description": "A bad name, scope or expiry, or an unknown "
          "field (`validation_error`)"}})
def create_key(body: ApiKeyIn, request: Request,
               user: Annotated[User, Requires(Capability.API_KEYS)], session: SessionDep):
    key, secret = service.create_key(session, user, body, ip=client_ip(request))
    return ok(ApiKeyCreated(key=key, secret=secret),
              "API key created. Copy the secret now: it will not be shown again.")


@router.get("", response_model=Envelope[list[ApiKeyOut]])
def list_keys(user: CurrentUser, session: SessionDep):
    return ok(service.list_keys(session, user.id), "API keys")


@router.delete("/{key_id}", response_model=Envelope[ApiKeyRevoked], responses={404: _NOT_FOUND})
def revoke_key(key_id: str, request: Request, user: CurrentUser, session: SessionDep):
    service.revoke_key(session, user, user.id, key_id, ip=client_ip(request))
    request.app.state.known_keys.forget_owner(user.id)  # admission: no longer its owner's
    return ok(ApiKeyRevoked(id=key_id), "API key revoked")


@admin_router.get("", response_model=Envelope[list[ApiKeyOut]], responses={
    403: _ADMIN_ONLY, 404: {"model": ErrorEnvelope, "description": "No such user (`not_found`)"}})
def list_user_keys(user_id: str, _: AdminUser, session: SessionDep):
    service.user_exists(session, user_id)
    return ok(service.list_keys(session, user_id), "API keys")


@admin_router.delete("/{key_id}", response_model=Envelope[ApiKeyRevoked], responses={
    403: _ADMIN_ONLY, 404: _NOT_FOUND})
def revoke_user_key(user_id: str, key_id: str, request: Request, admin: AdminUser,
                    session: SessionDep):
    service.revoke_key(session, admin, user_id, key_id, ip=client_ip(request))
    request.app.state.known_keys.forget_owner(user_id)
    return ok(ApiKeyRevoked(id=key_id), "API key revoked")
