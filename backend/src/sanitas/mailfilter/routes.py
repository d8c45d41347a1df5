"""/api/admin/mail: the messages the mail filter handled, for admins (a signed-in session;
API keys are refused): the list, and releasing an original to its recipients."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request

from sanitas.mailfilter import held
from sanitas.mailfilter.schemas import HeldMessageList, HeldMessageOut
from sanitas.models import HeldStatus
from sanitas.web.deps import AdminUser, SessionDep, SettingsDep, StorageDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, ok

router = APIRouter(prefix="/admin/mail", tags=["admin"],
                   responses={401: {"model": ErrorEnvelope}, 403: {"model": ErrorEnvelope}})


@router.get("/held", response_model=Envelope[HeldMessageList])
def list_held(_: AdminUser, session: SessionDep, status: HeldStatus | None = None,
              page: int = Query(1, ge=1, le=100000), limit: int = Query(20, ge=1, le=100)):
    return ok(held.held_list(session, status=status, page=page, limit=limit),
              "Held messages")


@router.post("/held/{held_id}/release", response_model=Envelope[HeldMessageOut], responses={
    404: {"model": ErrorEnvelope, "description": "No such message (`not_found`)"},
    409: {"model": ErrorEnvelope, "description": "The original is no longer kept or cannot "
          "be opened (`original_gone`, `original_unreadable`)"},
    502: {"model": ErrorEnvelope, "description": "The next hop did not accept the original "
          "(`next_hop_failed`)"}})
def release_held(held_id: str, request: Request, admin: AdminUser, session: SessionDep,
                 settings: SettingsDep, storage: StorageDep):
    row = held.release_held(session, settings, storage, held_id, admin=admin,
                            ip=client_ip(request))
    return ok(row, "The original was released to its recipients")
