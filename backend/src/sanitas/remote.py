"""`sanitas remote sanitize`: a client of a Sanitas server's API, for scripts and pipelines.

Each file goes up in one `POST /api/v1/sanitize` call (streamed, with a progress bar); when
the server answers with the clean file it is saved at once, else (202) the client polls the
status URL and downloads the file when it is ready. The report printed is the server's, in
the same form as `sanitas sanitize` prints its own, and the exit codes are the same: 0 when
every file came back clean, 1 when any was refused, 2 when the call itself failed (bad key,
server unreachable, quota).
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any
from urllib.parse import unquote

import httpx

from sanitas.engine.report import RejectionCode, Result

USER_AGENT = "sanitas-remote/1"
MAX_RATE_LIMIT_WAITS = 5
POLL_SECONDS = 1.0
TIMEOUT = httpx.Timeout(30.0, read=120.0)


class RemoteError(Exception):
    """The call failed for a reason other than the file (exit code 2)."""


class _CountingReader:
    """A file whose reads move a progress callback (httpx streams the upload through read)."""

    def __init__(self, handle: IO[bytes], advance: Callable[[int], None]) -> None:
        self.handle, self.advance = handle, advance

    def read(self, size: int = -1) -> bytes:
        chunk = self.handle.read(size)
        self.advance(len(chunk))
        return chunk


@dataclass
class Remote:
    url: str
    api_key: str
    client: httpx.Client

    @classmethod
    def connect(cls, url: str, api_key: str) -> Remote:
        logging.getLogger("httpx").setLevel(logging.WARNING)  # no line per request
        base = url.rstrip("/")
        if not base.startswith(("http://", "https://")):
            raise RemoteError(f"--url must start with http:// or https:// (got {url!r}).")
        client = httpx.Client(base_url=base, timeout=TIMEOUT, follow_redirects=False,
                              headers={"X-API-Key": api_key, "User-Agent": USER_AGENT})
        return cls(base, api_key, client)

    def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One API call, waiting out the key's rate limit (Retry-After) a few times."""
        for _ in range(MAX_RATE_LIMIT_WAITS):
            try:
                answer = self.client.request(method, path, **kwargs)
            except httpx.HTTPError as exc:
                raise RemoteError(f"Cannot reach {self.url}: {exc}") from exc
            if answer.status_code != 429:
                return answer
            time.sleep(min(60, int(answer.headers.get("Retry-After", "5") or 5)))
        raise RemoteError("The server kept answering 429 (too many calls with this key).")

    def sanitize(self, path: Path, out_dir: Path, *, mode: str | None, policy_id: str | None,
                 wait: int, progress: Callable[[int], None]) -> Result:
        fields = {k: v for k, v in (("mode", mode), ("policyId", policy_id)) if v}
        with path.open("rb") as handle:
            answer = self._call(
                "POST", "/api/v1/sanitize", params={"wait": wait}, data=fields,
                files={"file": (path.name, _CountingReader(handle, progress),
                                "application/octet-stream")})
        if answer.status_code == 200:
            return self._saved(path, out_dir, answer, answer.headers.get("x-sanitas-file-id"))
        if answer.status_code == 202:
            return self._wait_and_fetch(path, out_dir, answer.json()["data"]["fileId"])
        if answer.status_code == 422 and answer.headers.get("x-sanitas-file-id"):
            body = answer.json()
            return Result(input=str(path), status="rejected", reason=body.get("message"),
                          code=_code(body.get("error")))
        raise RemoteError(_explain(answer))

    def _wait_and_fetch(self, path: Path, out_dir: Path, file_id: str) -> Result:
        while True:
            answer = self._call("GET", f"/api/process/status/{file_id}")
            if answer.status_code != 200:
                raise RemoteError(_explain(answer))
            file = answer.json()["data"]["file"]
            if file["status"] == "FAILED":
                return Result(input=str(path), status="rejected",
                              reason=file.get("errorMessage"), code=_code(file.get("errorCode")))
            if file["status"] == "COMPLETED":
                download = self._call("GET", f"/api/process/download/{file_id}")
                if download.status_code != 200:
                    raise RemoteError(_explain(download))
                return self._saved(path, out_dir, download, file_id, file=file)
            time.sleep(POLL_SECONDS)

    def _saved(self, path: Path, out_dir: Path, answer: httpx.Response, file_id: str | None,
               file: dict[str, Any] | None = None) -> Result:
        name = _attachment_name(answer.headers.get("content-disposition", ""), path.name)
        target = _unique(out_dir / name)
        target.write_bytes(answer.content)
        if file is None and file_id:  # the full report, when the key may read it
            status = self._call("GET", f"/api/process/status/{file_id}")
            file = status.json()["data"]["file"] if status.status_code == 200 else None
        result = _from_report(path, file, answer.headers.get("x-sanitas-report"))
        result.output = str(target)
        return result


def _code(value: object) -> RejectionCode | None:
    return RejectionCode(value) if isinstance(value, str) and value in set(RejectionCode) \
        else None


def _from_report(path: Path, file: dict[str, Any] | None, summary: str | None) -> Result:
    report = (file or {}).get("report")
    if isinstance(report, dict):
        try:
            # The stored report is the engine's result without status/input/output.
            return Result.from_json({**report, "status": "ok"}, name=str(path))
        except ValueError:
            pass
    result = Result(input=str(path), status="ok")
    if summary:  # only counts: the key could not read the full report
        try:
            data = json.loads(summary)
            result.detected_type = data.get("detectedType")
        except ValueError:
            pass
    return result


def _explain(answer: httpx.Response) -> str:
    try:
        body = answer.json()
        return f"{body.get('message')} (HTTP {answer.status_code}, {body.get('error')})"
    except ValueError:
        return f"HTTP {answer.status_code} from the server"


def _attachment_name(header: str, fallback: str) -> str:
    """The file name of a Content-Disposition answer (filename* first), reduced to a plain
    name: no folders, no leading dots, never empty."""
    name = None
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key.lower() == "filename*" and value.lower().startswith("utf-8''"):
            name = unquote(value[7:])
            break
        if key.lower() == "filename" and name is None:
            name = value.strip('"')
    name = (name or f"sanitized_{fallback}").replace("\\", "/").rsplit("/", 1)[-1]
    name = "".join(ch for ch in name if ch.isprintable()).lstrip(".").strip()
    return name or "sanitized_file"


def _unique(target: Path) -> Path:
    """`target`, or `name (2).ext`... when it exists (never overwrite)."""
    if not target.exists():
        return target
    for n in range(2, 10000):
        candidate = target.with_name(f"{target.stem} ({n}){target.suffix}")
        if not candidate.exists():
            return candidate
    raise RemoteError(f"Too many files named like {target.name} in {target.parent}.")


def api_key_from(option: str | None) -> str:
    key = option or os.environ.get("SANITAS_API_KEY")
    if not key:
        raise RemoteError("An API key is needed: --api-key or SANITAS_API_KEY (create one on "
                          "your profile page).")
    return key


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()
