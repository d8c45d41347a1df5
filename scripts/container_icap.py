"""The container test's ICAP check (scripts/container-test.sh runs it against the `sanitas icap`
container): Debian's c-icap-client on the host asks OPTIONS of both services, then sends a macro
document (.docm) by RESPMOD and checks that what comes back is a .docx without its macros.

Exit status 0 when every check holds; each failed check prints what was expected."""

from __future__ import annotations

import argparse
import io
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))
from tests.engine.corpus_office import hostile_docm  # noqa: E402
from tests.icap.icapkit import client  # noqa: E402

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def check(condition: bool, what: str) -> None:
    print(("ok    " if condition else "FAIL  ") + what, flush=True)
    if not condition:
        raise SystemExit(1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()

    for service in ("sanitize", "sanitize-advanced"):
        options = client(args.port, service, host=args.host)
        check(options.status == 200 and "RESPMOD" in (options.header("Methods") or ""),
              f"ICAP OPTIONS {service}: 200 with RESPMOD (got {options.status})")

    with tempfile.TemporaryDirectory() as folder:
        original = Path(folder) / "macro.docm"
        original.write_bytes(hostile_docm())
        names = zipfile.ZipFile(original).namelist()
        check(any("vbaProject" in n for n in names), "the sample carries a macro project")
        answer = client(args.port, "sanitize", "-resp", "http://files.example/macro.docm",
                        body=original, out=Path(folder) / "out", timeout=120, host=args.host)
    check(answer.status == 200, f"RESPMOD macro.docm: ICAP 200 (got {answer.status})")
    body = answer.body or b""
    check(body[:2] == b"PK", "the answer's body is an Office (zip) document")
    names = zipfile.ZipFile(io.BytesIO(body)).namelist()
    check("word/document.xml" in names and not any("vbaproject" in n.lower() for n in names),
          "the document is still there, its macro project is not")
    check(answer.header("Content-Type") == DOCX,
          f"Content-Type is .docx's (got {answer.header('Content-Type')})")
    check('filename="macro.docx"' in (answer.header("Content-Disposition") or ""),
          "the file name became macro.docx")
    check((answer.header("X-Sanitas") or "").startswith("sanitized"),
          f"X-Sanitas says sanitized (got {answer.header('X-Sanitas')})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
