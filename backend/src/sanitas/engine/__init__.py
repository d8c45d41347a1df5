"""The sanitization engine: a file in, a safe file and a report out.

A pure library (no web, DB, storage or network code). Untrusted input belongs inside the sandbox
(`sanitas.sandbox.run_sanitizer`), which calls `sanitize_file` in a child process.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import tempfile
import time
import unicodedata
from collections.abc import Callable
from pathlib import Path

from sanitas.engine import formats, verify
from sanitas.engine.decrypt import detect_opening
from sanitas.engine.detect import Detected
from sanitas.engine.policy import Mode, resolve
from sanitas.engine.report import Context, Finding, Policy, Rejected, RejectionCode, Result
from sanitas.engine.verdict import ENCRYPTED_CODES

__all__ = [
    "Context",
    "Finding",
    "Mode",
    "Policy",
    "Rejected",
    "RejectionCode",
    "Result",
    "safe_output_name",
    "sanitize_file",
    "strip_invisible",
]

log = logging.getLogger(__name__)



# Zero-width joiners shape emoji sequences and Persian or Indic words; every other format
# character (category Cf: bidirectional embeddings, overrides and isolates, LRM/RLM, zero-width
# spaces, BOM, tag characters...) is invisible and can make "invoice\u202efdp.exe" read as
# "invoiceexe.pdf". Line and paragraph separators (Zl, Zp) break a name onto two lines.
_KEPT_FORMAT_CHARACTERS = frozenset("\u200c\u200d")


def strip_invisible(text: str) -> str:
    """`text` without invisible format characters and Unicode line/paragraph separators."""
    if text.isascii():
        return text
    return "".join(c for c in text if c in _KEPT_FORMAT_CHARACTERS
                   or unicodedata.category(c) not in ("Cf", "Zl", "Zp"))


def safe_output_name(original_name: str | None, extension: str, prefix: str = "") -> str:
    """The original stem, made safe for any filesystem, with the output's extension (and
    `prefix` before it). The one naming rule of the engine's output and the download."""
    base = re.split(r"[\\/]", strip_invisible(original_name or ""))[-1]
    stem = base.rsplit(".", 1)[0] if "." in base.lstrip(".") else base
    stem = re.sub(r"[\x00-\x1f\x7f-\x9f:*?\"<>|]", "_", stem)
    stem = stem.strip(" .")[:150] or "file"
    extension = extension.strip(".").lower()
    return f"{prefix}{stem}.{extension}" if extension else f"{prefix}{stem}"


def sanitize_file(input_path: Path | str, output_dir: Path | str, *,
                  mode: Mode | str | None = None, policy: Policy | None = None,
                  on_progress: Callable[[int], None] | None = None,
                  workdir: Path | str | None = None, original_name: str | None = None,
                  password: str | None = None, ocr_languages: str = "eng",
                  ocr_own_text: bool = True) -> Result:
    """Sanitize one file into `output_dir` with `policy` (the one a job resolved; default:
    the built-in of `mode`, a shortcut for callers without a policy, see `policy.resolve`).
    Bad input never raises: the result is 'rejected' with a reason. `original_name`
    (default: the input's name) gives the output its stem and is compared with the detected
    type; it never decides the type. `password` opens an
    encrypted input (PDF, OOXML, ZIP; see decrypt.py); it is never part of the result.
    `ocr_languages` (tesseract's, "eng+deu") recognise the text layer of pages rebuilt from
    pixels when the policy's output is "pdf+ocr" (SANITAS_OCR_LANGUAGES); `ocr_own_text`: a
    page whose own text is all shown keeps it as its text layer instead (shown_text.py;
    SANITAS_OCR_OWN_TEXT)."""
    started = time.perf_counter()
    input_path, output_dir = Path(input_path), Path(output_dir)
    name = original_name or input_path.name
    if mode is not None or policy is None:
        policy = resolve(policy, mode)  # ValueError for an unknown mode
    # (nested members run basic)
    ctx = Context(mode=policy.mode, policy=policy,
                  on_progress=on_progress, password=password or None,
                  ocr_languages=ocr_languages, ocr_own_text=ocr_own_text)
    result = Result(input=name, status="rejected")
    original = input_path
    with tempfile.TemporaryDirectory(dir=workdir, prefix="sanitas-") as scratch:
        ctx.workdir = Path(scratch)
        partial = output_dir / f".partial-{os.getpid()}-{time.monotonic_ns()}"
        try:
            # An encrypted OOXML package opens into a decrypted copy in the scratch folder.
            input_path, detected = detect_opening(input_path, name, ctx)
            result.detected_type = detected.kind
            ctx.progress(5)
            extension = sanitize_detected(input_path, partial, detected, ctx)
            final = unique_output_path(output_dir / safe_output_name(name, extension))
            os.replace(partial, final)
            result.status, result.output, result.output_type = "ok", str(final), extension
            ctx.progress(100)
        except Rejected as exc:
            result.reason, result.code = exc.reason, exc.code
            if exc.code.value in ENCRYPTED_CODES and policy.passes_encrypted:
                return _pass_encrypted(original, output_dir, name, result, policy, started)
        except MemoryError:
            result.reason = "The file needs more memory than is allowed to process it safely."
            result.code = RejectionCode.MEMORY_LIMIT
        except RecursionError:
            result.reason = "The file is nested too deeply to process safely."
            result.code = RejectionCode.TOO_COMPLEX
        except Exception as exc:  # a parser choking on hostile input: refuse, never pass through
            if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
                result.reason = "The sanitized file would be larger than the size limit allows."
                result.code = RejectionCode.TOO_LARGE
                return _finish(result, ctx, started)
            log.warning("sanitizing %s failed: %r", name, exc, exc_info=True)
            result.reason = ("The file is damaged or uses features that cannot be made safe.")
            result.code = RejectionCode.DAMAGED
        finally:
            if partial.exists():
                partial.unlink()
    return _finish(result, ctx, started)


def _pass_encrypted(original: Path, output_dir: Path, name: str, result: Result,
                    policy: Policy, started: float) -> Result:
    """The policy's `encryptedContent` is `pass`: an encrypted file no password opened is
    delivered as it came, byte for byte, with one finding saying it was not inspected (its
    verdict is `encrypted`, never clean). What was recorded before the encryption stopped the
    work is dropped: it describes a copy that is not delivered. A type the policy does not
    allow is still refused."""
    import shutil

    from sanitas.engine.detect import extension_of

    kind = result.detected_type
    allowed = policy.allowed_types
    if allowed is not None and kind is not None and kind in formats.KINDS and not (
            kind in allowed or formats.family_of(kind).name in allowed):
        result.reason = (f"Files of this type ({kind}) are not accepted by this policy, which "
                         f"allows only: {', '.join(sorted(allowed))}.")
        result.code = RejectionCode.TYPE_NOT_ALLOWED
        return _finish(result, Context(policy=policy), started)
    extension = extension_of(name)
    if not re.fullmatch(r"[a-z0-9]{1,10}", extension or ""):
        extension = kind if kind and re.fullmatch(r"[a-z0-9]{1,10}", kind) else "bin"
    ctx = Context(mode=policy.mode, policy=policy)
    ctx.add("encrypted_content", "file", action="kept",
            detail=f"{result.reason} Delivered unchanged and not inspected (the policy passes "
                   "encrypted content).")
    final = unique_output_path(output_dir / safe_output_name(name, extension))
    shutil.copyfile(original, final)
    result.status, result.output, result.output_type = "ok", str(final), extension
    result.reason = result.code = None
    return _finish(result, ctx, started)


def _check_allowed(detected: Detected, policy: Policy) -> None:
    """The policy's allowedTypes name kinds ("docx") or families ("ooxml", "image")."""
    allowed = policy.allowed_types
    if allowed is None:
        return
    family = formats.family_of(detected.kind).name
    if detected.kind in allowed or family in allowed:
        return
    raise Rejected(f"Files of this type ({detected.kind}) are not accepted by this policy, "
                   f"which allows only: {', '.join(sorted(allowed))}.",
                   RejectionCode.TYPE_NOT_ALLOWED)


def _finish(result: Result, ctx: Context, started: float) -> Result:
    result.findings = ctx.closed_findings()
    result.pages_rebuilt = list(ctx.pages_rebuilt)
    result.duration_ms = int((time.perf_counter() - started) * 1000)
    return result


def unique_output_path(path: Path) -> Path:
    """`path`, or `name-2.ext`, `name-3.ext`... if it is taken (the engine's and the sandbox
    parent's outputs alike)."""
    if not path.exists():
        return path
    for n in range(2, 10_000):
        candidate = path.with_name(f"{path.stem}-{n}{path.suffix}")
        if not candidate.exists():
            return candidate
    raise Rejected("Too many output files with the same name.", RejectionCode.TOO_COMPLEX)


def sanitize_detected(src: Path, dst: Path, detected: Detected, ctx: Context) -> str:
    """Write the safe version of `src` (already detected) to `dst`; return its extension.
    The format registry names the family's handler and what advanced mode adds, and how the
    output is re-opened before it is accepted (`verify.output`; archive members included):
    an output that does not re-open as a valid file of its format is refused (INVALID_OUTPUT)."""
    _check_allowed(detected, ctx.policy)
    extension = _write_output(src, dst, detected, ctx)
    verify.output(dst, extension)
    return extension


def _write_output(src: Path, dst: Path, detected: Detected, ctx: Context) -> str:
    family = formats.family_of(detected.kind)
    advanced = formats.advanced_of(detected.kind) if ctx.mode is Mode.ADVANCED else None
    if advanced == formats.Advanced.PIXELS:
        return _pixels_from_pdf(src, dst, ctx)
    if advanced == formats.Advanced.OFFICE_PIXELS:
        return _office_pixels(src, dst, detected, ctx)
    if advanced == formats.Advanced.SHEET_VALUES:
        return _sheet_values(src, dst, detected, ctx)
    return _handler(family)(src, dst, ctx, detected.kind)


def _handler(family: formats.Family) -> Callable[[Path, Path, Context, str], str]:
    try:
        return family.sanitizer()
    except ImportError as exc:
        if exc.name != family.module:
            raise
        raise Rejected(f"Files of the {family.name} family cannot be processed by this "
                       "installation (its sanitizer is not available).",
                       RejectionCode.UNAVAILABLE) from None


def _office_pixels(src: Path, dst: Path, detected: Detected, ctx: Context) -> str:
    """Advanced mode for office documents: strip active content first (so LibreOffice never
    sees macros or remote links), render through LibreOffice to PDF, rebuild from pixels."""
    from sanitas.engine import legacy_office

    assert ctx.workdir is not None
    source = src
    if detected.family in ("ooxml", "odf"):
        source = _basic_clean(src, detected, ctx, "office-clean")
    converted = legacy_office.to_pdf(
        source, ctx, detected.kind if detected.family == "legacy_office" else None)
    return _pixels_from_pdf(converted, dst, ctx)


def _basic_clean(src: Path, detected: Detected, ctx: Context, stem: str) -> Path:
    """The family's basic clean of `src` into ctx.workdir, named `stem`-out.<its extension>
    (the step before advanced mode renders or rebuilds an office file)."""
    assert ctx.workdir is not None
    cleaned = ctx.workdir / f"{stem}.{detected.kind}"
    ext = _handler(formats.family_of(detected.kind))(src, cleaned, ctx, detected.kind)
    return cleaned.rename(ctx.workdir / f"{stem}-out.{ext}")


def _sheet_values(src: Path, dst: Path, detected: Detected, ctx: Context) -> str:
    """Advanced mode for spreadsheets: the basic clean (its report, hidden sheets by the
    policy), an OpenDocument sheet made .xlsx by LibreOffice, then a new workbook of the
    values alone (`sheet_values`)."""
    from sanitas.engine import legacy_office, sheet_values

    source = _basic_clean(src, detected, ctx, "sheet-clean")
    ext = source.suffix.lstrip(".")
    if ext != "xlsx":
        source = legacy_office.convert(source, ctx, "xlsx", ext)
    ctx.progress(60)
    extension = sheet_values.rebuild(source, dst, ctx)
    _nothing_kept_but(ctx, "the workbook rebuilt from values")
    return extension


def _pixels_from_pdf(src: Path, dst: Path, ctx: Context) -> str:
    """Advanced mode: basic-clean the PDF (for the report and so the renderer never meets
    scripts), then rebuild every page from its pixels."""
    from sanitas.engine import pdf, raster

    assert ctx.workdir is not None
    cleaned = ctx.workdir / "basic-clean.pdf"
    outer_progress = ctx.on_progress
    ctx.on_progress = None  # the basic pass is quick; progress comes from the pages
    try:
        pdf.sanitize(src, cleaned, ctx)
    finally:
        ctx.on_progress = outer_progress
    limit = ctx.policy.max_pages
    if limit is not None:
        import pikepdf

        with pikepdf.open(cleaned) as check:
            pages = len(check.pages)
        if pages > limit:
            raise Rejected(f"The document has {pages} pages, more than the {limit} this "
                           "policy rebuilds from pixels (maxPages).", RejectionCode.TOO_COMPLEX)
    extension = raster.rebuild_from_pixels(cleaned, dst, ctx)
    _nothing_kept_but(ctx, "the pages rebuilt from pixels")
    return extension


def _nothing_kept_but(ctx: Context, rebuilt: str) -> None:
    """Pages rebuilt from pixels, or a workbook from values, keep nothing of what the basic
    pass kept for the policy (attachments, metadata, links, authors): its findings say so."""
    from sanitas.engine.kinds import rule_of

    for finding in ctx.findings:
        if finding.action == "kept" and rule_of(finding.kind) is not None:
            finding.action = "removed"
            finding.detail = (f"{finding.detail}; " if finding.detail else "") + \
                f"not carried into {rebuilt}"
