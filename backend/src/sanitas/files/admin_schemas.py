"""Answer shapes of the admins' file management calls (camelCase)."""

from __future__ import annotations

from pydantic import Field

from sanitas.files.schemas import FileOut, FileSummary, JobOut
from sanitas.web.schemas import CamelModel, Pagination


class AdminFileSummary(FileSummary):
    """A row of the admins' file list: the file and its owner."""

    user_id: str
    user_email: str


class AdminFileOut(FileOut):
    """One file with its owner and its findings report."""

    user_id: str
    user_email: str


class AdminFileList(CamelModel):
    files: list[AdminFileSummary]
    pagination: Pagination
    types: list[str] = Field(description="Every detected type some file has (for a filter)")


class AdminFileDetail(CamelModel):
    file: AdminFileOut
    job: JobOut | None = None


class AdminFileDeleted(CamelModel):
    id: str
