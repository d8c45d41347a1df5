"""XPS and OpenXPS documents, printed to PDF by MuPDF's `mutool` inside the sandbox, then
cleaned as a PDF.

An XPS document is a ZIP package of fixed pages (XAML markup, fonts, pictures). `mutool
convert` draws every page into a new PDF: what it writes is the pages' drawing (vector paths,
text with its fonts, pictures), never the package's other parts: hyperlinks
(`FixedPage.NavigateUri`), document properties (`docProps/core.xml`), print tickets, digital
signatures, thumbnails, discard-control and story fragments are not carried over. The PDF is
then cleaned by the PDF family (in advanced mode every page is rebuilt from its pixels).

Before mutool sees the package, its members are checked with the ZIP rules (`check_package`):
their number, their declared and actual sizes and the compression ratio are bounded, so a
page that inflates to gigabytes is refused as a bomb instead of being drawn. mutool runs with
a wall-clock limit (`TIMEOUT`), an empty environment and no network (the sandbox has none).
"""

from __future__ import annotations

import shutil
import subprocess
import zipfile
from pathlib import Path

from sanitas.engine.report import Context, Mode, Rejected, RejectionCode

TIMEOUT = 120.0
MAX_MEMBERS = 20_000
MAX_UNPACKED = 1024 * 1024 * 1024
MAX_RATIO = 200
MAX_PAGES = 2_000
MUTOOL = ("mutool", "/usr/bin/mutool")


def mutool_path() -> str:
    for candidate in MUTOOL:
        found = shutil.which(candidate)
        if found:
            return found
    raise Rejected("XPS documents cannot be converted by this installation (MuPDF's mutool "
                   "is not installed).", RejectionCode.UNAVAILABLE)


def check_package(path: Path) -> None:
    """The ZIP rules an XPS package must meet before it is drawn."""
    try:
        with zipfile.ZipFile(path) as package:
            infos = package.infolist()
            if len(infos) > MAX_MEMBERS:
                raise Rejected(f"The XPS document has more than {MAX_MEMBERS} parts.",
                               RejectionCode.TOO_COMPLEX)
            if any(info.flag_bits & 0x1 for info in infos):
                raise Rejected("The XPS document is encrypted; encrypted files are not "
                               "accepted.", RejectionCode.ENCRYPTED)
            total = 0
            for info in infos:
                total += info.file_size
                ratio = info.file_size / max(info.compress_size, 1)
                if total > MAX_UNPACKED or (info.file_size > 1 << 20 and ratio > MAX_RATIO):
                    raise Rejected("The XPS document inflates to far more than its size (a "
                                   "decompression bomb).", RejectionCode.BOMB)
                with package.open(info) as member:  # sizes are counted, not trusted
                    read = 0
                    while chunk := member.read(1 << 20):
                        read += len(chunk)
                        if read > info.file_size:
                            raise Rejected("The XPS document's parts are larger than they "
                                           "declare (a decompression bomb).",
                                           RejectionCode.BOMB)
    except zipfile.BadZipFile as exc:
        raise Rejected(f"The XPS document's package is damaged ({exc}).",
                       RejectionCode.DAMAGED) from None
    except (zipfile.LargeZipFile, NotImplementedError, EOFError, OSError, ValueError) as exc:
        raise Rejected(f"The XPS document's package cannot be read ({type(exc).__name__}).",
                       RejectionCode.DAMAGED) from None


def to_pdf(src: Path, ctx: Context, kind: str) -> Path:
    """Draw the XPS/OXPS package `src` into a PDF in the job's scratch folder."""
    assert ctx.workdir is not None
    check_package(src)
    work = ctx.workdir / "xps"
    work.mkdir(exist_ok=True)
    source = work / f"input.{kind}"  # a fixed name: mutool picks its reader by extension
    shutil.copyfile(src, source)
    out = work / "drawn.pdf"
    cmd = [mutool_path(), "convert", "-F", "pdf", "-o", str(out), str(source)]
    try:
        proc = subprocess.run(  # noqa: S603 - an argv list, no shell
            cmd, cwd=work, env={"PATH": "/usr/bin:/bin", "HOME": str(work)},
            stdin=subprocess.DEVNULL, capture_output=True, timeout=TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        raise Rejected(f"The XPS document was not drawn within {int(TIMEOUT)} s; it was "
                       "stopped.", RejectionCode.TIME_LIMIT) from None
    finally:
        source.unlink(missing_ok=True)
    if proc.returncode != 0 or not out.exists() or out.stat().st_size == 0:
        detail = proc.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
        raise Rejected("The XPS document cannot be drawn (damaged or unsupported content)"
                       f"{': ' + detail[0][:160] if detail[0] else ''}.", RejectionCode.DAMAGED)
    return out


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    """The XPS family's handler: XPS/OXPS in, a cleaned PDF out."""
    from sanitas.engine import pdf

    drawn = to_pdf(src, ctx, kind)
    name = "XPS" if kind == "xps" else "OpenXPS"
    ctx.add("legacy_format", "whole file", action="converted",
            detail=f"{name} document drawn as PDF by MuPDF; links, document properties, print "
            "tickets, signatures and thumbnails of the package are not carried over")
    import pikepdf

    with pikepdf.open(drawn) as check:
        pages = len(check.pages)
    if pages == 0:
        raise Rejected("The XPS document has no page.", RejectionCode.DAMAGED)
    if pages > MAX_PAGES:
        raise Rejected(f"The XPS document has more than {MAX_PAGES} pages.",
                       RejectionCode.TOO_COMPLEX)
    if ctx.mode is Mode.ADVANCED:
        from sanitas.engine import _pixels_from_pdf

        return _pixels_from_pdf(drawn, dst, ctx)
    pdf.sanitize(drawn, dst, ctx)
    return "pdf"
