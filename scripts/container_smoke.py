"""The container test's client (scripts/container-test.sh runs it against the containers):
sign in, upload a macro document and a GPS-tagged JPEG, wait for COMPLETED, download the clean
copies and check them with independent tools, run a batch while one worker container is killed
and check every file still completes, then let the expiry sweep delete the files.

Exit status 0 when every check holds; each failed check prints what was expected."""

from __future__ import annotations

import argparse
import io
import shlex
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import boto3
import httpx
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))
from tests.engine.corpus_office import hostile_docm, jpeg_with_gps  # noqa: E402
from tests.factories import pdf_bytes  # noqa: E402

DONE = ("COMPLETED", "FAILED")


def check(condition: bool, what: str) -> None:
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        raise SystemExit(1)


def status(client: httpx.Client, file_id: str) -> dict:
    answer = client.get(f"/api/process/status/{file_id}")
    answer.raise_for_status()
    return answer.json()["data"]["file"]


def wait_all(client: httpx.Client, ids: list[str], timeout: float) -> dict[str, dict]:
    deadline = time.monotonic() + timeout
    files: dict[str, dict] = {}
    while time.monotonic() < deadline:
        files = {i: status(client, i) for i in ids}
        if all(f["status"] in DONE for f in files.values()):
            return files
        time.sleep(1)
    return files


def upload(client: httpx.Client, name: str, data: bytes) -> str:
    answer = client.post("/api/upload/single", files={"file": (name, data)},
                         data={"mode": "basic"})
    check(answer.status_code == 201, f"upload {name}: 201 (got {answer.status_code})")
    return answer.json()["data"]["fileId"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--api", required=True)
    parser.add_argument("--email", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--s3", required=True, help="the S3 endpoint the containers use")
    parser.add_argument("--kill-worker", required=True, help="command that kills one worker")
    parser.add_argument("--expire", required=True, help="command that backdates every file")
    args = parser.parse_args()

    client = httpx.Client(base_url=args.api, timeout=60)
    login = client.post("/api/auth/login", json={"email": args.email, "password": args.password})
    check(login.status_code == 200, "sign in")
    client.headers["Authorization"] = f"Bearer {login.json()['data']['tokens']['accessToken']}"

    # 1. a macro document and a GPS photo, cleaned by the worker containers
    docm = upload(client, "report.docm", hostile_docm())
    photo = upload(client, "holiday.jpg", jpeg_with_gps())
    files = wait_all(client, [docm, photo], timeout=180)
    check(all(f["status"] == "COMPLETED" for f in files.values()),
          f"both COMPLETED ({[f['status'] for f in files.values()]})")
    clean_doc = client.get(f"/api/process/download/{docm}")
    check(clean_doc.status_code == 200, "download the clean document")
    names = zipfile.ZipFile(io.BytesIO(clean_doc.content)).namelist()
    check(not any("vbaProject" in n for n in names), "no macro project in the clean document")
    clean_photo = client.get(f"/api/process/download/{photo}")
    check(clean_photo.status_code == 200, "download the clean photo")
    exif = Image.open(io.BytesIO(clean_photo.content)).getexif()
    check(0x8825 not in exif and not exif.get_ifd(0x8825), "no GPS in the clean photo")

    # 2. a batch while a worker container dies: every file still completes
    batch = [upload(client, f"scan-{n}.pdf", pdf_bytes(pages=20)) for n in range(12)]
    time.sleep(1.5)
    subprocess.run(shlex.split(args.kill_worker), check=True, capture_output=True)
    print("      killed one worker container mid-batch", flush=True)
    files = wait_all(client, batch, timeout=300)
    check(all(f["status"] == "COMPLETED" for f in files.values()),
          f"every batch file COMPLETED after the kill "
          f"({sorted(f['status'] for f in files.values())})")

    # 3. the expiry sweep deletes expired files' blobs and answers 410
    s3 = boto3.client("s3", endpoint_url=args.s3, aws_access_key_id="test",
                      aws_secret_access_key="test", region_name="us-east-1")
    before = s3.list_objects_v2(Bucket="sanitas").get("KeyCount", 0)
    check(before >= 2 * (2 + len(batch)), f"originals and outputs in S3 ({before} objects)")
    subprocess.run(shlex.split(args.expire), check=True, capture_output=True)
    deadline = time.monotonic() + 60
    gone = client.get(f"/api/process/download/{docm}")
    while gone.status_code != 410 and time.monotonic() < deadline:
        time.sleep(1)
        gone = client.get(f"/api/process/download/{docm}")
    check(gone.status_code == 410, f"expired file answers 410 (got {gone.status_code})")
    while s3.list_objects_v2(Bucket="sanitas").get("KeyCount", 0) and time.monotonic() < deadline:
        time.sleep(1)
    check(s3.list_objects_v2(Bucket="sanitas").get("KeyCount", 0) == 0,
          "the sweep deleted every blob from S3")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
