"""Blobs in an S3-compatible bucket (AWS S3, MinIO, Ceph, ...) through boto3."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, cast

import boto3
from boto3.exceptions import S3UploadFailedError
from boto3.s3.transfer import TransferConfig
from botocore.config import Config
from botocore.exceptions import ClientError
from botocore.response import StreamingBody

from sanitas.config import Settings
from sanitas.storage import CHUNK, BlobNotFound, StorageError, StorageFull

if TYPE_CHECKING:
    from mypy_boto3_s3.literals import BucketLocationConstraintType

_MISSING = {"404", "NoSuchKey", "NotFound"}
# A bucket out of room: MinIO answers 507 XMinioStorageFull; others 507 InsufficientStorage.
_FULL = {"XMinioStorageFull", "InsufficientStorage", "StorageFull"}


class S3Storage:
    name = "s3"

    def __init__(self, settings: Settings) -> None:
        self.bucket = settings.s3_bucket
        self.prefix = settings.s3_prefix.strip("/")
        self.client = boto3.client(
            "s3", endpoint_url=settings.s3_endpoint_url, region_name=settings.s3_region,
            aws_access_key_id=settings.s3_access_key_id,
            aws_secret_access_key=settings.s3_secret_access_key,
            config=Config(retries={"max_attempts": 3, "mode": "standard"},
                          connect_timeout=5, read_timeout=60,
                          max_pool_connections=max(10, settings.executor_workers * 2)),
        )
        self._transfer = TransferConfig(multipart_threshold=64 * 1024 * 1024, use_threads=False)
        if settings.s3_create_bucket:
            self._ensure_bucket(settings.s3_region)

    def _ensure_bucket(self, region: str) -> None:
        try:
            self.client.head_bucket(Bucket=self.bucket)
        except ClientError:
            if region and region != "us-east-1":
                # S3-compatible stores take any region name; the stubs list only AWS's.
                location = cast("BucketLocationConstraintType", region)
                self.client.create_bucket(
                    Bucket=self.bucket, CreateBucketConfiguration={"LocationConstraint": location})
            else:
                self.client.create_bucket(Bucket=self.bucket)

    def _key(self, key: str) -> str:
        return f"{self.prefix}/{key}" if self.prefix else key

    def put_file(self, key: str, src: Path, *, move: bool = False) -> int:
        try:
            self.client.upload_file(str(src), self.bucket, self._key(key),
                                    Config=self._transfer)
        except (ClientError, S3UploadFailedError) as exc:
            # upload_file reports a ClientError as S3UploadFailedError (raised while handling it)
            cause = exc if isinstance(exc, ClientError) else exc.__context__
            if isinstance(cause, ClientError) and (_code(cause) in _FULL
                                                   or _status(cause) == 507):
                raise StorageFull(f"S3 upload of {key} failed: the bucket is full") from exc
            raise StorageError(f"S3 upload of {key} failed: {exc}") from exc
        size = Path(src).stat().st_size
        if move:
            Path(src).unlink(missing_ok=True)
        return size

    def get_to_path(self, key: str, dest: Path) -> None:
        try:
            self.client.download_file(self.bucket, self._key(key), str(dest),
                                      Config=self._transfer)
        except ClientError as exc:
            if _code(exc) in _MISSING:
                raise BlobNotFound(key) from exc
            raise StorageError(f"S3 download of {key} failed: {exc}") from exc

    def iter_chunks(self, key: str, chunk_size: int = CHUNK) -> Iterator[bytes]:
        try:
            body = self.client.get_object(Bucket=self.bucket, Key=self._key(key))["Body"]
        except ClientError as exc:
            if _code(exc) in _MISSING:
                raise BlobNotFound(key) from exc
            raise StorageError(f"S3 read of {key} failed: {exc}") from exc
        return _stream(body, chunk_size)

    def size(self, key: str) -> int:
        try:
            return self.client.head_object(Bucket=self.bucket, Key=self._key(key))[
                "ContentLength"]
        except ClientError as exc:
            if _code(exc) in _MISSING:
                raise BlobNotFound(key) from exc
            raise StorageError(str(exc)) from exc

    def exists(self, key: str) -> bool:
        try:
            self.size(key)
            return True
        except BlobNotFound:
            return False

    def delete(self, key: str) -> None:
        try:
            self.client.delete_object(Bucket=self.bucket, Key=self._key(key))
        except ClientError as exc:
            if _code(exc) not in _MISSING:
                raise StorageError(f"S3 delete of {key} failed: {exc}") from exc

    def keys(self, prefix: str = "") -> list[str]:
        out: list[str] = []
        strip = len(self.prefix) + 1 if self.prefix else 0
        paginator = self.client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=self._key(prefix)):
            out += [obj["Key"][strip:] for obj in page.get("Contents", [])]
        return sorted(out)

    def healthy(self) -> bool:
        try:
            self.client.head_bucket(Bucket=self.bucket)
            return True
        except Exception:  # noqa: BLE001 (any failure means the bucket is not usable)
            return False


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _status(exc: ClientError) -> int | None:
    return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")


def _stream(body: StreamingBody, chunk_size: int) -> Iterator[bytes]:
    try:
        while chunk := body.read(chunk_size):
            yield chunk
    finally:
        body.close()
