"""Answer shapes of the upload, processing, queue and file-history calls (camelCase)."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import Field

from sanitas.engine.report import RejectionCode
from sanitas.executor.job import JobFailure
from sanitas.schemas import CamelModel
from sanitas.users.schemas import Pagination


class UploadInfo(CamelModel):
    max_files: int
    max_file_size: int
    max_file_size_mb: float = Field(alias="maxFileSizeMB")  # the SPEC's spelling
    supported_formats: list[str]
    modes: list[str]
    role: str


class UploadedFile(CamelModel):
    file_id: str
    original_name: str
    size: int
    status: str


# Why a file failed: the engine's refusal codes and the job's own failures, one enum.
FileErrorCode = StrEnum("FileErrorCode", {
    **{code.name: code.value for code in RejectionCode},
    **{failure.name: failure.value for failure in JobFailure}})


class FileOut(CamelModel):
    id: str
    original_name: str
    original_size: int
    sanitized_name: str | None = None
    sanitized_size: int | None = None
    status: str
    mode: str | None = None
    detected_type: str | None = None
    created_at: str | None = None
    processing_started_at: str | None = None
    processing_completed_at: str | None = None
    processing_duration: float | None = None  # seconds
    error_message: str | None = None
    error_code: FileErrorCode | None = Field(
        None, description="With FAILED: why, for programs (errorMessage says it for people).")
    expires_at: str | None = None
    download_count: int = 0
    compression_ratio: float | None = None
    is_expired: bool = False
    report: dict[str, Any] | None = None


class JobOut(CamelModel):
    id: str
    state: str
    progress: int
    attempts: int
    created_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None


class FileStatusData(CamelModel):
    file: FileOut
    job: JobOut | None = None


class FileStats(CamelModel):
    total: int
    completed: int
    processing: int
    pending: int
    failed: int


class FileHistory(CamelModel):
    files: list[FileOut]
    stats: FileStats
    pagination: Pagination


class QueueStats(CamelModel):
    waiting: int
    active: int
    completed: int
    failed: int
    paused: bool
    workers: int
    executor: str


class QueuePaused(CamelModel):
    paused: bool


class QueueCleared(CamelModel):
    cleared: int
