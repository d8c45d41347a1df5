"""Syscall census: which syscalls the sandboxed engine really makes.

    .venv/bin/python -m tests.sandbox.syscall_census [FILE_NAME...]   (from backend/)

Runs every file of the engine corpus (plus office files made with LibreOffice and a page for
OCR) through the real sandbox, basic and advanced mode, under `strace -f`, and prints the
syscalls made after the sandboxed program's execve (bwrap's own set-up is left out) and the
socket families used. seccomp.py's docstring records the result; run this again before
tightening the filter or after adding a converter. Needs strace (apt-get install strace).
Not a test: it takes a few minutes.
"""

from __future__ import annotations

import collections
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent

LINE = re.compile(r"^(\d+)\s+(?:<\.\.\. (\w+) resumed>|(\w+)\()")


def parse(trace: Path) -> tuple[collections.Counter, collections.Counter]:
    """Syscalls of the sandboxed program and its descendants: the process that execs the
    Python interpreter, and every process or thread that first appears after that."""
    seen_before: set[int] = set()
    inside: int | None = None
    calls: collections.Counter = collections.Counter()
    families: collections.Counter = collections.Counter()
    for line in trace.read_text(errors="replace").splitlines():
        match = LINE.match(line)
        if not match or match.group(2):  # a resumed call was counted where it started
            continue
        pid, name = int(match.group(1)), match.group(3)
        if inside is None:
            if name == "execve" and "/python" in line:
                inside = pid
            else:
                seen_before.add(pid)
            continue
        if pid == inside or pid not in seen_before:
            calls[name] += 1
            if name in ("socket", "socketpair"):
                families[line.split("(", 1)[1].split(",", 1)[0]] += 1
    return calls, families


def corpus_files(root: Path) -> dict[str, Path]:
    from tests.engine import corpus_office
    from tests.engine.corpus import clean_pdf, save_pdf, write_corpus
    from tests.engine.render_office import convert_many

    files = dict(write_corpus(root / "corpus"))
    office = corpus_office.write_all(root / "office")
    files.update(office)
    conversions = ((office["clean.docx"], "doc"), (office["clean.xlsx"], "xls"),
                   (office["clean.odp"], "ppt"), (office["clean.odt"], "rtf"),
                   (office["clean.odp"], "pptx"))
    if shutil.which("soffice"):
        for source, target in conversions:
            made = convert_many([source], target, root / f"lo-{target}", root / "profile")
            for path in made.values():
                files[path.name] = path
    files["ocr.pdf"] = save_pdf(clean_pdf(pages=1, with_image=False), root / "ocr.pdf")
    return files


def main(only: list[str]) -> int:
    from sanitas.config import Settings
    from sanitas.engine.report import Policy
    from sanitas.sandbox import bwrap, run_sanitizer

    strace = shutil.which("strace")
    if strace is None:
        print("strace is not installed (apt-get install strace)", file=sys.stderr)
        return 2
    root = Path(tempfile.mkdtemp(prefix="sanitas-census-"))
    files = corpus_files(root)
    settings = Settings(data_dir=root / "data", sandbox="bwrap", secret_key="census-" * 8)
    traces: list[Path] = []
    command = bwrap._command

    def traced(*args, **kwargs):
        trace = root / f"trace-{len(traces)}.txt"
        traces.append(trace)
        return [strace, "-f", "-qq", "-o", str(trace), "--", *command(*args, **kwargs)]

    bwrap._command = traced
    totals: collections.Counter = collections.Counter()
    families: collections.Counter = collections.Counter()
    try:
        for name, path in sorted(files.items()):
            if only and name not in only:
                continue
            for mode in ("basic", "advanced"):
                first = len(traces)
                policy = Policy(output="pdf+ocr") if name == "ocr.pdf" else None
                result = run_sanitizer(path, root / "out" / mode, mode=mode, settings=settings,
                                       prewarm=False, policy=policy)
                calls: collections.Counter = collections.Counter()
                for trace in traces[first:]:
                    seen, used = parse(trace)
                    calls += seen
                    families += used
                totals += calls
                print(f"{name:24} {mode:8} {result.status:8} {len(calls):3} syscalls",
                      file=sys.stderr)
    finally:
        bwrap._command = command
        shutil.rmtree(root, ignore_errors=True)
    print(json.dumps({"runs": len(traces), "syscalls": sorted(totals),
                      "socket_families": dict(families)}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
