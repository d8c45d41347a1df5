"""The product's two modes, the one enum of them (re-exported by `policy`, where a policy's
mode follows from its output, and by `report`, whose Context carries one). A module of its
own because the format table needs it too and `policy` already reads the format table."""

from __future__ import annotations

from enum import StrEnum


class Mode(StrEnum):
    """How thoroughly a file is cleaned; each plan allows some modes (config). The values are
    the words of the JSON, the API, the CLI and the settings."""

    BASIC = "basic"  # the file keeps its format, minus what the rules remove
    ADVANCED = "advanced"  # documents rebuilt from pixels as PDF (a policy's output "pdf...")
