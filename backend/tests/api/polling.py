"""Waiting, through the API, for an uploaded file to reach a status (with the `live` app of
conftest.py, whose embedded executor processes uploads)."""

from __future__ import annotations

import time


def wait_for(client, headers, file_id, statuses=("COMPLETED", "FAILED"), timeout=60):
    """The file's status answer once its status is one of `statuses`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        data = client.get(f"/api/process/status/{file_id}", headers=headers).json()["data"]
        if data["file"]["status"] in statuses:
            return data
        time.sleep(0.1)
    raise AssertionError(f"file {file_id} still {data['file']['status']} after {timeout}s")
