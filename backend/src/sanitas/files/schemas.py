"""Answer shapes of the upload, processing, queue and file-history calls (camelCase)."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

from pydantic import Field, GetPydanticSchema
from pydantic_core import core_schema

from sanitas.engine.policy import Mode
from sanitas.engine.report import RejectionCode
from sanitas.engine.verdict import Verdict
from sanitas.models.file import FileStatus
from sanitas.models.job import JobFailure, JobState
from sanitas.models.user import Role
from sanitas.web.schemas import CamelModel, Pagination, UtcTimestamp


class RefusedFormats(CamelModel):
    """Names the server refuses whatever their content, and why (so a screen can say it
    before the upload)."""

    extensions: list[str] = Field(description="File name extensions, lowercase, without the dot")
    reason: str = Field(description="Why, in plain words (e.g. 'Executables and scripts are not "
                                    "accepted.')")


def _named_processing_mode(_source: Any, _handler: Any) -> core_schema.CoreSchema:
    """engine.policy.Mode, under the name the OpenAPI document has always given it."""
    return core_schema.enum_schema(
        Mode, list(Mode), sub_type="str", ref="sanitas.files.schemas.ProcessingMode",
        metadata={"pydantic_js_functions": [lambda _schema, _handler: {
            "description": "How thoroughly a file is cleaned; each plan allows some modes "
                           "(config).",
            "enum": [mode.value for mode in Mode], "title": "ProcessingMode",
            "type": "string"}]})


# The engine's Mode in the API, under its schema name "ProcessingMode" (values are Mode
# members; typed `str` so that FastAPI lists no second schema of the enum class).
ProcessingMode = Annotated[str, GetPydanticSchema(_named_processing_mode)]


class UploadInfo(CamelModel):
    max_files: int
    max_file_size: int
    # Not the generated "maxFileSizeMb": see docs/product-rules.md, API field names.
    max_file_size_mb: float = Field(alias="maxFileSizeMB")
    supported_formats: list[str]
    modes: list[ProcessingMode]
    role: Role
    default_policy_id: str = Field(
        description="The policy an upload naming neither policyId nor mode is cleaned with "
                    "(the role's default; see /api/policies)")
    refused_formats: list[RefusedFormats] = Field(
        default_factory=list,
        description="Extensions refused by name whatever the content (executables and scripts), "
                    "with the reason the upload would be refused with")


class UploadedFile(CamelModel):
    file_id: str
    original_name: str
    size: int
    status: FileStatus


# Why a file failed: the engine's refusal codes and the job's own failures, one enum.
# mypy reads a functional enum's members only from a literal; these come from the two enums.
FileErrorCode = StrEnum("FileErrorCode", {  # type: ignore[misc]  # members built, see above
    **{code.name: code.value for code in RejectionCode},
    **{failure.name: failure.value for failure in JobFailure}})


class FilePolicy(CamelModel):
    """The policy a file is (to be) cleaned with, at the version it used."""

    id: str = Field(description="A built-in's id (`basic`, `advanced`) or a stored policy's")
    name: str = Field(description="Its name when the file was uploaded")
    version: int


VERDICT_DESCRIPTION = (
    "The verdict on the file once it is finished (null while PENDING or PROCESSING): `clean` "
    "nothing was found; `cleaned` threats or hidden data were removed and the content kept; "
    "`partial` something a person may want was left out (a file inside an archive or an "
    "attachment, a part of the content, the text layer of pages rebuilt from pixels); "
    "`encrypted` encrypted content no password opened was not inspected: held back (FAILED "
    "with errorCode `encrypted` or `wrong_password`, or left out of the copy) or delivered "
    "unchanged, as the policy's encryptedContent says; "
    "`refused` no copy (FAILED: errorCode says whether the file was refused or the service "
    "failed). See docs/verdicts.md.")


class VerdictCounts(CamelModel):
    """What was taken out of the file, as the verdict counts it (docs/verdicts.md)."""

    threats: int = Field(description="Active content removed or neutralised (macros, "
                                     "scripts, actions, external references, links...)")
    hidden_data: int = Field(description="Hidden data removed (metadata, comments, tracked "
                                         "changes, hidden parts, bytes after the end...)")
    files_dropped: int = Field(description="Files inside left out: archive members, "
                                           "attachments")
    content_dropped: int = Field(description="Parts of the visible content left out "
                                             "(images, chapters, fonts that could not be "
                                             "made safe)")
    text_layer_dropped: bool = Field(description="Pages were rebuilt from pixels without "
                                                 "an OCR text layer: text cannot be "
                                                 "selected or searched")
    dropped_files: list[str] = Field(description="The names of the files left out (at "
                                                 "most 20)")
    encrypted_held: int = Field(0, description="Encrypted files or parts no password opened, "
                                               "held back uninspected (not in the copy)")
    encrypted_passed: int = Field(0, description="Encrypted files or parts no password "
                                                 "opened, delivered unchanged and uninspected")


class FileSummary(CamelModel):
    """A file as its owner's history lists it (FileOut without the report)."""

    id: str
    original_name: str
    original_size: int
    sanitized_name: str | None = None
    sanitized_size: int | None = None
    status: FileStatus
    mode: ProcessingMode | None = None
    detected_type: str | None = None
    created_at: UtcTimestamp | None = None
    processing_started_at: UtcTimestamp | None = None
    processing_completed_at: UtcTimestamp | None = None
    processing_duration: float | None = None  # seconds
    error_message: str | None = None
    error_code: FileErrorCode | None = Field(
        None, description="With FAILED: why, for programs (errorMessage says it for people).")
    expires_at: UtcTimestamp | None = None
    download_count: int = 0
    compression_ratio: float | None = None
    is_expired: bool = False
    sha256_original: str | None = Field(
        None, description="SHA-256 (hex) of the bytes uploaded")
    sha256_sanitized: str | None = Field(
        None, description="SHA-256 (hex) of the sanitized copy, once stored")
    policy: FilePolicy | None = None
    verdict: Verdict | None = Field(None, description=VERDICT_DESCRIPTION)
    verdict_summary: str | None = Field(
        None, description="The verdict in one sentence, as every channel shows it: "
                          "\"3 threats removed, 1 file dropped: tool.exe\", \"Nothing "
                          "found\", \"Refused: <reason>\"")
    verdict_counts: VerdictCounts | None = Field(
        None, description="The counts behind the verdict (null while unfinished and for a "
                          "refused file)")


class FileOut(FileSummary):
    """A file with the report of what its processing found and did."""

    report: dict[str, Any] | None = None


class JobOut(CamelModel):
    id: str
    state: JobState
    progress: int
    attempts: int
    created_at: UtcTimestamp | None = None
    started_at: UtcTimestamp | None = None
    finished_at: UtcTimestamp | None = None
    ahead: int | None = Field(
        None, description="Only on the status call, while the job is waiting: how many queued "
        "jobs will be started before this one (higher priority first, then older), counted "
        "up to 10000")


class FileStatusData(CamelModel):
    file: FileOut
    job: JobOut | None = None
    queue_paused: bool = Field(
        description="An administrator paused the queue: waiting jobs do not start until it is "
        "resumed (running ones finish)")


class FileStats(CamelModel):
    total: int
    completed: int
    processing: int
    pending: int
    failed: int


class FileHistory(CamelModel):
    files: list[FileSummary]
    stats: FileStats
    pagination: Pagination
