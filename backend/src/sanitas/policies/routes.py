"""The policy calls: list, read, create, replace, delete, duplicate, and each role's default
(admins). Routes parse, call the service, shape the answer."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Request

from sanitas.models import User
from sanitas.plans import Capability
from sanitas.policies import service
from sanitas.policies.schemas import (
    FindingRules,
    PolicyDefaults,
    PolicyDefaultsIn,
    PolicyDeleted,
    PolicyIn,
    PolicyOut,
)
from sanitas.web.deps import AdminUser, CurrentUser, Requires, SessionDep, SettingsDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok

router = APIRouter(prefix="/policies", tags=["policies"],
                   responses={401: {"model": ErrorEnvelope}})

_NOT_FOUND = {"model": ErrorEnvelope, "description": "No such policy, or another account's "
              "personal policy (`not_found`)"}
_WRITE_FORBIDDEN = {"model": ErrorEnvelope, "description": "The caller's plan does not include "
                    "policy authoring (`plan_required`), an organisation-wide policy by a "
                    "non-admin (`organisation_scope_admin_only`), or a built-in "
                    "(`built_in_policy`)"}
_INVALID = {"model": ErrorEnvelope, "description": "The body is not a valid policy: unknown "
            "keys, a rule's action it does not offer, a bad output... each field named "
            "(`validation_error`)"}
_TOO_MANY = {"model": ErrorEnvelope, "description": "Too many policies (`too_many_policies`), "
             "or the policy is a role's default (`policy_in_use`)"}
_ADMIN_ONLY = {"model": ErrorEnvelope, "description": "Admins only (`forbidden`)"}
# Writing policies: custom sanitization rules are a plan's capability.
Author = Annotated[User, Requires(Capability.POLICY_AUTHORING)]


@router.get("", response_model=Envelope[list[PolicyOut]])
def list_policies(user: CurrentUser, session: SessionDep):
    return ok(service.list_policies(session, user), "Policies")


@router.post("", status_code=201, response_model=Envelope[PolicyOut],
             responses={403: _WRITE_FORBIDDEN, 409: _TOO_MANY, 422: _INVALID})
def create_policy(body: PolicyIn, request: Request, user: Author, session: SessionDep):
    return ok(service.create_policy(session, user, body, ip=client_ip(request)),
              "Policy created")


@router.get("/kinds", response_model=Envelope[FindingRules])
def finding_rules(_: CurrentUser):
    return ok(service.finding_rules(), "The rule that decides each kind of finding")


@router.get("/defaults", response_model=Envelope[PolicyDefaults],
            responses={403: _ADMIN_ONLY})
def get_defaults(_: AdminUser, session: SessionDep):
    return ok(service.get_defaults(session), "Default policy of each role")


@router.put("/defaults", response_model=Envelope[PolicyDefaults],
            responses={403: _ADMIN_ONLY, 422: _INVALID})
def set_defaults(body: PolicyDefaultsIn, request: Request, admin: AdminUser,
                 session: SessionDep, settings: SettingsDep):
    return ok(service.set_defaults(session, settings, admin, body, ip=client_ip(request)),
              "Default policies updated")


@router.get("/{policy_id}", response_model=Envelope[PolicyOut], responses={404: _NOT_FOUND})
def get_policy(policy_id: str, user: CurrentUser, session: SessionDep):
    return ok(service.get_policy(session, user, policy_id), "Policy")


@router.put("/{policy_id}", response_model=Envelope[PolicyOut],
            responses={403: _WRITE_FORBIDDEN, 404: _NOT_FOUND, 409: _TOO_MANY, 422: _INVALID})
def update_policy(policy_id: str, body: PolicyIn, request: Request, user: Author,
                  session: SessionDep, settings: SettingsDep):
    return ok(service.update_policy(session, settings, user, policy_id, body,
                                    ip=client_ip(request)),
              "Policy updated")


@router.delete("/{policy_id}", response_model=Envelope[PolicyDeleted],
               responses={403: _WRITE_FORBIDDEN, 404: _NOT_FOUND, 409: _TOO_MANY})
def delete_policy(policy_id: str, request: Request, user: Author, session: SessionDep):
    service.delete_policy(session, user, policy_id, ip=client_ip(request))
    return ok(PolicyDeleted(id=policy_id), "Policy deleted")


@router.post("/{policy_id}/duplicate", status_code=201, response_model=Envelope[PolicyOut],
             responses={403: _WRITE_FORBIDDEN, 404: _NOT_FOUND, 409: _TOO_MANY})
def duplicate_policy(policy_id: str, request: Request, user: Author, session: SessionDep):
    return ok(service.duplicate_policy(session, user, policy_id, ip=client_ip(request)),
              "Policy duplicated")
