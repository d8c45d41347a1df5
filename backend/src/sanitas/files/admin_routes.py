"""/api/admin/files: every user's files for admins (the admin page's File Management tab)."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request

from sanitas.files import admin_service
from sanitas.files.admin_schemas import AdminFileDeleted, AdminFileDetail, AdminFileList
from sanitas.models import StatusFilter
from sanitas.web.deps import AdminUser, ExecutorDep, SessionDep, SettingsDep, StorageDep, client_ip
from sanitas.web.schemas import Envelope, ErrorEnvelope, MomentOrUtc, ok

router = APIRouter(prefix="/admin/files", tags=["admin"],
                   responses={401: {"model": ErrorEnvelope}, 403: {"model": ErrorEnvelope}})


@router.get("", response_model=Envelope[AdminFileList])
def list_files(
    _: AdminUser, session: SessionDep,
    page: int = Query(1, ge=1, le=100000), limit: int = Query(20, ge=1, le=100),
    user_id: str | None = Query(None, alias="userId", max_length=64,
                                description="Only this user's files"),
    user: str | None = Query(None, max_length=255,
                             description="Only files of users whose email contains this"),
    status: StatusFilter = StatusFilter.ALL,
    detected_type: str | None = Query(None, alias="type", max_length=64,
                                      description="Only files of this detected type"),
    created_from: Annotated[MomentOrUtc | None, Query(
        alias="createdFrom", description="Uploaded at or after (UTC if no zone)")] = None,
    created_before: Annotated[MomentOrUtc | None, Query(
        alias="createdBefore", description="Uploaded before (UTC if no zone)")] = None,
    sort_by: Literal["createdAt", "originalName", "originalSize", "status", "userEmail"] =
        Query("createdAt", alias="sortBy"),
    sort_order: Literal["asc", "desc"] = Query("desc", alias="sortOrder"),
):
    filters = admin_service.FileFilters(
        user_id=user_id, user=user, status=status.file_status,
        detected_type=detected_type, created_from=created_from, created_before=created_before)
    return ok(admin_service.file_list(session, filters, page=page, limit=limit,
                                      sort_by=sort_by, sort_order=sort_order),
              "Files retrieved successfully")


@router.get("/{file_id}", response_model=Envelope[AdminFileDetail])
def file_detail(file_id: str, _: AdminUser, session: SessionDep):
    return ok(admin_service.file_detail(session, file_id), "File details")


@router.delete("/{file_id}", response_model=Envelope[AdminFileDeleted], responses={
    409: {"model": ErrorEnvelope,
          "description": "The file is being processed (`file_processing`)"}})
def delete_file(file_id: str, request: Request, admin: AdminUser, session: SessionDep,
                storage: StorageDep):
    admin_service.delete_file(session, storage, file_id, actor=admin, ip=client_ip(request))
    return ok(AdminFileDeleted(id=file_id), "File deleted successfully")


@router.post("/{file_id}/requeue", response_model=Envelope[AdminFileDetail], responses={
    409: {"model": ErrorEnvelope,
          "description": "The file is not FAILED (`not_failed`), or its original has expired "
                         "(`expired`)"}})
def requeue_file(file_id: str, _: AdminUser, session: SessionDep, settings: SettingsDep,
                 storage: StorageDep, executor: ExecutorDep):
    job = admin_service.requeue_file(session, settings, storage, file_id)
    if executor is not None:  # handed over as an upload's jobs are
        executor.submit(job.id, job.priority)
    return ok(admin_service.file_detail(session, file_id), "File queued for processing again")
