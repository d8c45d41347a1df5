"""PDF: remove every active element, attachment and metadata, then rewrite the whole file from
its object graph (qpdf writes only reachable objects of the final revision: no incremental-update
history, nothing after %%EOF, no orphan objects).

Two passes: a structural pass that knows where PDF puts actions (catalog, names, pages,
annotations, outlines, form fields) and records what it found, then a generic sweep over every
object that removes dangerous keys and action dictionaries wherever they hide.

A damaged file (truncated, broken cross-reference table...) is read through qpdf's
reconstruction and the repair is reported ("repaired" finding). Whatever the input, the output
is read back before it is accepted: by qpdf with no recovery allowed and by PDFium, a parser
independent of qpdf, which must agree on the page count (`check_output`). An output that fails
is never returned: the file is refused with a reason (DAMAGED when the input needed repair).
The final check of every output (`verify.pdf`) trusts that read-back and does not repeat it.

Encryption: a PDF with only a permissions (owner) password, which every reader opens without
asking, is opened and written without encryption or restrictions; one that needs a password is
opened with the password given with the upload (`Context.password`, never logged or reported)
and refused as encrypted without one. Annotations' authors (/T of comments, their pop-ups and
replies) and dates are removed, or replaced by "Author 1", "Author 2"... with the
`review_data` policy "anonymise"; form fields' /T, which is the field's name, is kept.
"""

from __future__ import annotations

import logging
import os
import re
import zlib
from pathlib import Path
from typing import Protocol

import pikepdf
from pikepdf import Array, Dictionary, Name, String

from sanitas.engine import pdfium_check
from sanitas.engine.policy import Action, Policy, Rule
from sanitas.engine.report import Context, FindingAction, Rejected, RejectionCode
from sanitas.engine.verdict import ENCRYPTED_CODES

SAFE_URI_SCHEMES = ("http://", "https://", "mailto:")
SAFE_NAMED_ACTIONS = {"/NextPage", "/PrevPage", "/FirstPage", "/LastPage"}
# Action types kept (rebuilt from scratch); all others (JavaScript, Launch, SubmitForm,
# ImportData, ResetForm, GoToR, GoToE, GoTo3DView, Rendition, Movie, Sound, Hide, SetOCGState,
# Trans, RichMediaExecute, Thread, ...) are removed.
SAFE_ACTIONS = {"/GoTo", "/URI", "/Named"}
ACTION_TYPES = {"/GoTo", "/GoToR", "/GoToE", "/GoToDp", "/Launch", "/Thread", "/URI", "/Sound",
                "/Movie", "/Hide", "/Named", "/SubmitForm", "/ResetForm", "/ImportData",
                "/SetOCGState", "/Rendition", "/Trans", "/GoTo3DView", "/JavaScript",
                "/ECMAScript", "/RichMediaExecute"}
DANGEROUS_ANNOTATIONS = {
    "/FileAttachment": "file_attachment", "/RichMedia": "rich_media", "/3D": "3d_content",
    "/Movie": "movie", "/Sound": "sound", "/Screen": "screen_annotation",
    "/Projection": "3d_content",
}
CATALOG_KEEP = {"/Type", "/Pages", "/PageLabels", "/Outlines", "/Dests", "/Names", "/PageLayout",
                "/PageMode", "/ViewerPreferences", "/Lang", "/MarkInfo", "/StructTreeRoot",
                "/AcroForm", "/OCProperties", "/Version"}
NAMES_KEEP = {"/Dests"}
ACROFORM_KEEP = {"/Fields", "/NeedAppearances", "/DA", "/DR", "/Q", "/SigFlags"}
PAGE_DROP = {"/AA": "additional_action", "/Metadata": "xmp_metadata",
             "/PieceInfo": "private_application_data", "/AF": "associated_file",
             "/PresSteps": "presentation_steps"}
# Keys removed wherever they appear in the generic sweep.
SWEEP_KEYS = {
    "/JS": "javascript", "/JavaScript": "javascript", "/AA": "additional_action",
    "/OpenAction": "open_action", "/EmbeddedFiles": "embedded_file", "/EF": "embedded_file",
    "/RF": "embedded_file", "/XFA": "xfa_form", "/RichMediaContent": "rich_media",
    "/RichMediaSettings": "rich_media", "/3DD": "3d_content", "/3DA": "3d_content",
    "/AlternatePresentations": "alternate_presentation", "/Renditions": "rendition",
    "/PieceInfo": "private_application_data", "/Collection": "portfolio",
    "/Perms": "usage_rights", "/SpiderInfo": "web_capture", "/Metadata": "xmp_metadata",
    "/AF": "associated_file", "/URLS": "web_capture", "/IDS": "web_capture",
    "/Templates": "page_template", "/PS": "postscript", "/Sound": "sound", "/Movie": "movie",
    "/Ref": "external_reference", "/OPI": "external_reference",
}
# Stream data kept in another file (PDF 1.2 external streams).
EXTERNAL_STREAM_KEYS = ("/F", "/FFilter", "/FDecodeParms")
# Keys a policy may keep: document metadata, and embedded files (under "keep" and "sanitize"
# alike, each attachment is first cleaned by its own family: `_sanitize_attachments`; related
# files /RF and the portfolio's /Collection, whose navigator may be Flash, always go).
# Everything else in PAGE_DROP/SWEEP_KEYS always goes.
METADATA_KEYS = frozenset({"/Metadata", "/PieceInfo"})
EMBEDDED_KEYS = frozenset({"/EmbeddedFiles", "/EF", "/AF"})
# External references a policy may keep when they point at a web address (http, https):
# GoToR actions, the catalog's base URI, reference XObjects (/Ref), OPI proxies and external
# stream data; web capture information (/SpiderInfo, /URLS, /IDS: the pages' source
# addresses) is kept as it is. A file path or a network share is removed under every policy.
# "/GoToR" and "/F" are markers in the kept set, not keys kept wherever they are.
EXTERNAL_KEYS = frozenset({"/GoToR", "/URI", "/Ref", "/OPI", "/F", "/SpiderInfo", "/URLS",
                           "/IDS"})
WEB_ADDRESS = re.compile(r"^https?://[^\s/\\]", re.IGNORECASE)
# The finding kind of a key the policy keeps.
KEPT_KINDS = {"/Metadata": "xmp_metadata", "/AF": "associated_file",
              "/PieceInfo": "private_application_data", "/URI": "base_uri",
              "/SpiderInfo": "web_capture", "/URLS": "web_capture", "/IDS": "web_capture"}
MAX_FINDINGS_PER_KIND = 50
MAX_ANNOTATIONS = 200_000  # annotations whose authors are looked at

log = logging.getLogger(__name__)

ENCRYPTED = ("The PDF is password-protected (encrypted), so it cannot be opened without its "
             "password. Upload it again with the password (the upload's password field, or "
             "--password on the command line) to have it opened and sanitized.")
WRONG_PASSWORD = "The password given does not open the PDF."  # noqa: S105 - a message, not a password
DAMAGED = ("The PDF is damaged and cannot be rebuilt into a file that PDF readers can open, so "
           "it is not accepted.")
UNREADABLE_OUTPUT = ("The PDF could not be rebuilt into a file that PDF readers open reliably "
                     "(it is probably damaged), so no sanitized copy is returned.")
# What qpdf's warnings (raised while it reads a damaged file) mean, for the report.
_REPAIRS = (
    (re.compile(r"%%EOF"), "end-of-file marker missing"),
    (re.compile(r"(?i)cross-reference|startxref|xref"), "cross-reference table rebuilt"),
    (re.compile(r"(?i)trailer"), "trailer rebuilt"),
    (re.compile(r"(?i)stream length|stream data|endstream"), "stream data cut short or lost"),
    (re.compile(r"(?i)parse error|unexpected EOF|expected endobj"), "incomplete objects skipped"),
    (re.compile(r"(?i)pages tree|page"), "unreadable pages dropped"),
)


class _Record(Protocol):
    """What the cleaners report each finding to: a `_Recorder`, or the sweep's aggregator."""

    def __call__(self, kind: str, location: str, action: FindingAction = "removed",
                 detail: str = "") -> None: ...


def kept_keys(policy: Policy) -> frozenset[str]:
    """The dictionary keys the policy keeps (document metadata, embedded files)."""
    keys: set[str] = set()
    if policy.action(Rule.DOCUMENT_METADATA) is Action.KEEP:
        keys |= METADATA_KEYS | {"/Info"}
    if policy.action(Rule.EMBEDDED_FILES) in (Action.KEEP, Action.SANITIZE):
        keys |= EMBEDDED_KEYS
    if policy.action(Rule.EXTERNAL_REFERENCES) is Action.KEEP:
        keys |= EXTERNAL_KEYS
    return frozenset(keys)


def web_address(target: pikepdf.Object | None) -> str | None:
    """The web address (http, https) a file specification or a string names, else None (a
    file path, a network share, another scheme, no address)."""
    if isinstance(target, Dictionary):
        keys = ("/F",) if str(target.get("/FS", "")) == "/URL" else ("/UF", "/F")
        target = next((target[k] for k in keys if isinstance(target.get(k), String)), None)
    if not isinstance(target, String):
        return None
    text = bytes(target).decode("latin-1", "replace").strip()
    return text if WEB_ADDRESS.match(text) and len(text) <= 4096 else None


def _web_reference(value: pikepdf.Object | None) -> bool:
    """A reference XObject's or an OPI proxy's dictionary that names only a web address."""
    if not isinstance(value, Dictionary):
        return False
    if "/F" in value:  # /Ref
        return web_address(value.get("/F")) is not None
    # /OPI: {/1.3 {.../F spec} /2.0 {.../F spec}}
    versions = [value.get(k) for k in value.keys()]  # noqa: SIM118 - a pikepdf Dictionary
    return bool(versions) and all(isinstance(v, Dictionary) and
                                  web_address(v.get("/F")) is not None for v in versions)


class _Recorder:
    """Records findings, at most MAX_FINDINGS_PER_KIND per kind, then a summary count.
    `keep` holds the keys the policy keeps (`kept_keys`)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.counts: dict[str, int] = {}
        self.keep = kept_keys(ctx.policy)
        self.policy = ctx.policy

    def __call__(self, kind: str, location: str, action: FindingAction = "removed",
                 detail: str = "") -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        if self.counts[kind] <= MAX_FINDINGS_PER_KIND:
            self.ctx.add(kind, location, action=action, detail=detail)

    def close(self) -> None:
        for kind, count in self.counts.items():
            if count > MAX_FINDINGS_PER_KIND:
                self.ctx.add(kind, "whole document", action="removed",
                             detail=f"{count - MAX_FINDINGS_PER_KIND} more occurrences not listed")


def open_pdf(src: Path, ctx: Context | None = None) -> pikepdf.Pdf:
    """The PDF, through qpdf's recovery when it is damaged (what qpdf repaired is left in
    `pdf.get_warnings()`). An encrypted PDF that opens without a password (only a permissions
    password is set: every reader opens it without asking) is opened; one that needs a
    password is opened with `ctx.password` when one is given, else refused. The output is
    written unencrypted and a finding says so. The password is never logged or reported."""
    password = ctx.password if ctx is not None else None
    opened_with_password = False
    try:
        try:
            pdf = pikepdf.open(src, suppress_warnings=True)
        except pikepdf.PasswordError:
            if not password:
                raise Rejected(ENCRYPTED, RejectionCode.ENCRYPTED) from None
            try:
                pdf = pikepdf.open(src, password=password, suppress_warnings=True)
            except pikepdf.PasswordError:
                raise Rejected(WRONG_PASSWORD, RejectionCode.WRONG_PASSWORD) from None
            opened_with_password = True
    except Rejected:
        raise
    except (pikepdf.PdfError, OSError, ValueError, RuntimeError) as exc:
        if "unsupported encryption" in str(exc):  # qpdf's words for a non-password handler
            raise Rejected("The PDF is encrypted for particular recipients (with certificates, "
                           "not a password), so it cannot be opened here.",
                           RejectionCode.ENCRYPTED) from None
        raise Rejected("The PDF is damaged beyond repair and cannot be read.",
                       RejectionCode.DAMAGED) from exc
    if pdf.is_encrypted and ctx is not None:
        ctx.add("encryption", "document", action="removed",
                detail="opened with the password given; the output is not encrypted"
                if opened_with_password else "permissions password and restrictions removed")
    return pdf


def sanitize(src: Path, dst: Path, ctx: Context, kind: str = "pdf") -> str:
    pdf = open_pdf(src, ctx)
    record = _Recorder(ctx)
    warnings = pdf.get_warnings()  # qpdf's repairs while opening
    if _report_file_layout(src, record):
        warnings.append("no %%EOF end-of-file marker")
    try:
        try:
            pages = list(pdf.pages)
        except (pikepdf.PdfError, RuntimeError, RecursionError) as exc:
            raise Rejected("The PDF's page tree is damaged.", RejectionCode.DAMAGED) from exc
        if not pages:
            raise Rejected("The PDF has no pages." if not warnings else
                           "The PDF is damaged: none of its pages can be read.",
                           RejectionCode.NO_CONTENT)
        ctx.progress(10)
        _clean_document(pdf, record)
        for number, page in enumerate(pages, start=1):
            _clean_page(page, number, record, ctx.policy.keep_links)
        _clean_annotation_authors(pages, ctx)
        if ctx.policy.action(Rule.EMBEDDED_FILES) in (Action.KEEP, Action.SANITIZE):
            _sanitize_attachments(pdf, pages, ctx)
        ctx.progress(40)
        _sweep_all_objects(pdf, record)
        ctx.progress(70)
        if "/Size" not in pdf.trailer:
            # A trailer qpdf reconstructed has no /Size, and qpdf's writer then leaves it out
            # of an xref stream, which makes the output unreadable (the value is rewritten).
            pdf.trailer.Size = 0
        # The original's /ID would link the clean copy to it: the writer makes a new one.
        # (Not deterministic_id: with it qpdf throws from a destructor when the job's
        # file-size limit cuts the write, which aborts the process instead of raising.)
        if "/ID" in pdf.trailer:
            del pdf.trailer.ID
        pdf.save(dst, compress_streams=True, object_stream_mode=pikepdf.ObjectStreamMode.generate,
                 fix_metadata_version=False)
        warnings += pdf.get_warnings()  # damaged objects qpdf met only while reading them
    except Rejected:
        raise
    except (pikepdf.PdfError, RuntimeError, ValueError, TypeError, KeyError, IndexError,
            AttributeError, NotImplementedError) as exc:
        # qpdf or pikepdf choking on a damaged object: refused, in words a person reads.
        log.warning("PDF rebuild failed: %r", exc, exc_info=True)
        raise Rejected(DAMAGED, RejectionCode.DAMAGED) from exc
    finally:
        pdf.close()
        record.close()
    if warnings:
        _report_repair(warnings, len(pages), ctx)
    ctx.progress(90)
    try:
        check_output(dst, len(pages))
    except Rejected:
        if warnings:  # the input was damaged: that is the reason, not the engine's output
            raise Rejected(DAMAGED, RejectionCode.DAMAGED) from None
        raise
    ctx.progress(95)
    return "pdf"


def _report_repair(warnings: list[str], pages: int, ctx: Context) -> None:
    found = [label for pattern, label in _REPAIRS if any(pattern.search(w) for w in warnings)]
    ctx.add("repaired", "file structure", action="converted",
            detail="damaged file (cut short or corrupt) rebuilt from what could be read: "
            f"{', '.join(found) or f'{len(warnings)} errors corrected'}; {pages} page(s) kept. "
            "Parts of the document may be missing: compare with the original.")


class OutputProblem(Exception):
    """A PDF the engine wrote does not read back cleanly; the message says how."""


def reopen(path: Path) -> int:
    """Read a written PDF back strictly; its page count. qpdf must open it with no recovery,
    walk its page tree and resolve every object without a warning, and find it unencrypted;
    PDFium (independent of qpdf) must open it without rebuilding its cross-reference table,
    resolve every page, parse the first and count as many pages. Raises when it does not
    (`OutputProblem`, `pdfium_check.Unreadable`, `pikepdf.PdfError`...)."""
    with pikepdf.open(path, suppress_warnings=True, attempt_recovery=False) as check:
        count = len(check.pages)
        for _ in check.objects:  # resolves (parses) every object of the file
            pass
        problems = check.get_warnings()
        encrypted = check.is_encrypted
    if problems:
        raise OutputProblem(f"qpdf needs recovery: {problems[:5]}")
    if encrypted:
        raise OutputProblem("it is encrypted")
    seen = pdfium_check.page_count(path)
    if seen != count:
        raise OutputProblem(f"PDFium sees {seen} pages, qpdf {count}")
    return count


def check_output(path: Path, pages: int) -> None:
    """Read back a PDF the engine wrote before it is accepted (`reopen`), knowing how many
    pages it wrote: both readers must see `pages`. An output that fails is never returned:
    `Rejected`. One that passes is not read again by the final check (`verify.pdf`) unless it
    changes. About 1 ms for 10 pages (plus ~3 ms to load PDFium once per process)."""
    try:
        count = reopen(path)
    except (OutputProblem, pdfium_check.Unreadable, pikepdf.PdfError, RuntimeError,
            ValueError) as exc:
        log.warning("the rebuilt PDF does not read back cleanly: %.500s", exc)
        raise Rejected(UNREADABLE_OUTPUT, RejectionCode.INVALID_OUTPUT) from exc
    if count != pages:
        log.warning("the rebuilt PDF reads back with %d pages instead of %d", count, pages)
        raise Rejected(UNREADABLE_OUTPUT, RejectionCode.INVALID_OUTPUT)
    while len(_checked) >= _MAX_CHECKED:
        _checked.pop(next(iter(_checked)))
    _checked[os.path.abspath(path)] = _identity(path)


# Outputs `check_output` read back (path -> the file's identity then).
_checked: dict[str, tuple[int, ...]] = {}
_MAX_CHECKED = 64


def _identity(path: Path | str) -> tuple[int, ...]:
    st = os.stat(path)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def verify_output(path: Path) -> None:
    """The final check of a PDF output (`verify.pdf`): `reopen`, unless `check_output` (the
    stricter check: it also knows the page count written) passed this very file, unchanged."""
    seen = _checked.pop(os.path.abspath(path), None)
    if seen is not None and seen == _identity(path):
        return
    reopen(path)


def _report_file_layout(src: Path, record: _Recorder) -> bool:
    """Incremental updates and bytes after the last %%EOF vanish in the rewrite; say so.
    True when the file has no %%EOF marker at all (it was cut short)."""
    size = src.stat().st_size
    with open(src, "rb") as fh:
        data = fh.read(min(size, 256 * 1024 * 1024))
    revisions = data.count(b"%%EOF")
    if revisions > 1:
        record("incremental_update", "file structure", "removed",
               f"{revisions} revisions merged into one; superseded objects dropped")
    end = data.rfind(b"%%EOF")
    if end >= 0:
        trailing = data[end + 5:].strip(b"\r\n\t \x00")
        if trailing:
            record("trailing_data", "after %%EOF", "removed", f"{len(trailing)} bytes")
    start = data.find(b"%PDF-")
    if start > 0:
        record("leading_data", "before %PDF-", "removed", f"{start} bytes")
    return revisions == 0 and len(data) == size


# --- structure-aware pass --------------------------------------------------------------------

def _clean_document(pdf: pikepdf.Pdf, record: _Recorder) -> None:
    trailer = pdf.trailer
    if "/Info" in trailer:
        kept = "/Info" in record.keep and isinstance(trailer.Info, Dictionary)
        if len(trailer.Info.keys()):
            record("document_info", "trailer /Info", "kept" if kept else "removed",
                   "author, title, producer and dates")
        if not kept:
            del trailer["/Info"]
    root = pdf.Root
    for key in list(root.keys()):
        if key in CATALOG_KEEP:
            continue
        if key == "/URI" and key in record.keep:
            base = root.URI.get("/Base") if isinstance(root.URI, Dictionary) else None
            address = web_address(base)
            if address is not None:
                root.URI = Dictionary(Base=String(address))
                record("base_uri", "document catalog /URI", "kept", address[:200])
                continue
        elif key in record.keep:
            record(KEPT_KINDS.get(key, "embedded_file"), f"document catalog {key}", "kept")
            continue
        kind = {"/OpenAction": "open_action", "/AA": "additional_action",
                "/Metadata": "xmp_metadata", "/URI": "base_uri", "/Collection": "portfolio",
                "/AF": "associated_file", "/Perms": "usage_rights"}.get(key, "catalog_entry")
        record(kind, f"document catalog {key}")
        del root[key]
    if "/Names" in root:
        names = root.Names
        if not isinstance(names, Dictionary):
            del root["/Names"]
        else:
            for key in list(names.keys()):
                if key in record.keep and key != "/URI":
                    record(KEPT_KINDS.get(key, "embedded_file"), f"document names {key}", "kept")
                elif key not in NAMES_KEEP:
                    kind = {"/JavaScript": "javascript", "/EmbeddedFiles": "embedded_file",
                            "/XFAResources": "xfa_form"}.get(key, "name_tree")
                    record(kind, f"document names {key}")
                    del names[key]
    if "/AcroForm" in root:
        _clean_acroform(root.AcroForm, record)
        forms = record.policy.action(Rule.FORM_FIELDS)
        fields = root.AcroForm.get("/Fields") if isinstance(root.AcroForm, Dictionary) else None
        if isinstance(fields, Array) and len(fields) and forms is not Action.KEEP:
            record("form_field", "form /Fields", "removed", f"{len(fields)} form field(s)")
        if forms is Action.REMOVE:
            del root["/AcroForm"]
    if "/Outlines" in root:
        _clean_outlines(root.Outlines, record, pdf)
    if "/ViewerPreferences" in root and isinstance(root.ViewerPreferences, Dictionary) and \
            "/Enforce" in root.ViewerPreferences:
        del root.ViewerPreferences["/Enforce"]


def _clean_acroform(form: pikepdf.Object, record: _Recorder) -> None:
    if not isinstance(form, Dictionary):
        return
    for key in list(form.keys()):
        if key not in ACROFORM_KEEP:
            kind = {"/XFA": "xfa_form", "/CO": "form_calculation"}.get(key, "form_entry")
            record(kind, f"form {key}")
            del form[key]
    seen: set[tuple[int, int]] = set()
    stack = list(form.get("/Fields", Array()))
    while stack:
        field = stack.pop()
        if not isinstance(field, Dictionary):
            continue
        if field.is_indirect:
            if field.objgen in seen:
                continue
            seen.add(field.objgen)
        name = str(field.get("/T", "")) or "unnamed"
        if "/AA" in field:
            record("form_field_script", f"form field {name!s:.80} /AA")
            del field["/AA"]
        if "/A" in field:
            _clean_action_entry(field, "/A", f"form field {name!s:.80}", record, keep_links=True)
        kids = field.get("/Kids")
        if isinstance(kids, Array):
            stack.extend(kids)


def _clean_outlines(outlines: pikepdf.Object, record: _Recorder, pdf: pikepdf.Pdf) -> None:
    seen: set[tuple[int, int]] = set()
    stack = [outlines]
    while stack:
        item = stack.pop()
        if not isinstance(item, Dictionary):
            continue
        if item.is_indirect:
            if item.objgen in seen or len(seen) > 200_000:
                continue
            seen.add(item.objgen)
        if "/AA" in item:
            record("additional_action", "bookmark /AA")
            del item["/AA"]
        if "/A" in item:
            _clean_action_entry(item, "/A", "bookmark", record, keep_links=True)
        for key in ("/First", "/Next"):
            if key in item:
                stack.append(item[key])


def _clean_page(page: pikepdf.Page, number: int, record: _Recorder, keep_links: bool) -> None:
    obj = page.obj
    for key, kind in PAGE_DROP.items():
        if key in obj:
            if key in record.keep:
                record(kind, f"page {number} {key}", "kept")
                continue
            record(kind, f"page {number} {key}")
            del obj[key]
    forms_removed = record.policy.action(Rule.FORM_FIELDS) is Action.REMOVE
    annots = obj.get("/Annots")
    if annots is None:
        return
    if not isinstance(annots, Array):
        del obj["/Annots"]
        return
    kept = Array()
    for annot in annots:
        if not isinstance(annot, Dictionary):
            continue
        subtype = str(annot.get("/Subtype", ""))
        where = f"page {number} {subtype.lstrip('/') or 'annotation'} annotation"
        if subtype == "/FileAttachment" and "/EF" in record.keep:
            record("file_attachment", where, "kept")
        elif subtype in DANGEROUS_ANNOTATIONS:
            record(DANGEROUS_ANNOTATIONS[subtype], where)
            continue
        if subtype == "/Widget" and forms_removed:
            continue  # the form's fields went with /AcroForm
        if "/AA" in annot:
            record("additional_action", f"{where} /AA")
            del annot["/AA"]
        if "/A" in annot:
            _clean_action_entry(annot, "/A", where, record, keep_links)
            if subtype == "/Link" and "/A" not in annot and "/Dest" not in annot:
                continue  # a link that no longer goes anywhere
        kept.append(annot)
    if len(kept) != len(annots):
        obj.Annots = kept


def _annotations(pages: list[pikepdf.Page]) -> list[Dictionary]:
    """Every annotation of the pages, in page order, with the pop-ups and replied-to
    annotations they point to; form fields and their widgets left out."""
    found: list[Dictionary] = []
    seen: set[tuple[int, int]] = set()
    for page in pages:
        annots = page.obj.get("/Annots")
        if not isinstance(annots, Array):
            continue
        queue = list(annots)
        index = 0
        while index < len(queue) and len(found) < MAX_ANNOTATIONS:
            annot = queue[index]
            index += 1
            if not isinstance(annot, Dictionary):
                continue
            if annot.is_indirect:
                if annot.objgen in seen:
                    continue
                seen.add(annot.objgen)
            # A widget's /T, or a field's, is the field's name (the data's key), not an
            # author; a dictionary without /Subtype may be a field too.
            if "/Subtype" not in annot or str(annot.get("/Subtype")) == "/Widget" or \
                    "/FT" in annot or "/Kids" in annot:
                continue
            found.append(annot)
            for key in ("/Popup", "/IRT", "/Parent"):  # a pop-up's /Parent is its annotation
                related = annot.get(key)
                if isinstance(related, Dictionary):
                    queue.append(related)
    return found


def _clean_annotation_authors(pages: list[pikepdf.Page], ctx: Context) -> None:
    """Comments' authors (/T of markup annotations and their pop-ups) and their creation and
    modification dates are removed, or with the `review_data` policy "anonymise" the authors
    become "Author 1", "Author 2"... (one label per person, the same in a comment and its
    pop-up and replies). The comments themselves (/Contents, /RC rich text, /Subj) stay.
    An annotation's unique name (/NM) is kept (viewers thread replies and match imported
    comments by it) unless it spells out an author's name; then it becomes a neutral one."""
    annotations = _annotations(pages)
    if not annotations:
        return
    if ctx.policy.action(Rule.REVIEW_DATA) is Action.KEEP:
        if any("/T" in annot for annot in annotations):
            ctx.add("personal_data", "annotations", action="kept",
                    detail="annotation authors and dates kept")
        return
    anonymise = getattr(ctx.policy, "review_data", "remove") == "anonymise"
    authors: dict[str, str] = {}
    for annot in annotations:
        author = annot.get("/T")
        name = str(author).strip() if isinstance(author, String) else ""
        if name and name not in authors:
            authors[name] = f"Author {len(authors) + 1}"
    spelled = [name.lower() for name in authors if len(name) >= 3]
    authored = dated = renamed = 0
    for number, annot in enumerate(annotations, start=1):
        if "/T" in annot:
            author = annot.get("/T")
            name = str(author).strip() if isinstance(author, String) else ""
            if anonymise and name:
                annot.T = String(authors[name])
            else:
                del annot["/T"]
            authored += 1
        if "/M" in annot or "/CreationDate" in annot:
            for key in ("/M", "/CreationDate"):
                if key in annot:
                    del annot[key]
            dated += 1
        unique = annot.get("/NM")
        if isinstance(unique, String) and spelled and \
                any(name in str(unique).lower() for name in spelled):
            annot.NM = String(f"annotation-{number}")
            renamed += 1
    if authored:
        what = _count(authored, "annotation")
        if anonymise:
            ctx.add("personal_data", "annotations", action="converted",
                    detail=f"author names of {what} replaced by "
                    f"{_count(len(authors), 'placeholder')} (Author 1, Author 2...)")
        else:
            ctx.add("personal_data", "annotations", action="removed",
                    detail=f"author names of {what} removed")
    if dated:
        ctx.add("personal_data", "annotation dates", action="removed",
                detail=f"creation and modification dates of {_count(dated, 'annotation')} "
                "removed")
    if renamed:
        ctx.add("personal_data", "annotation names", action="converted",
                detail=f"unique names of {_count(renamed, 'annotation')} spelled out an "
                "author's name; replaced by neutral ones")


def _sanitize_attachments(pdf: pikepdf.Pdf, pages: list[pikepdf.Page], ctx: Context) -> None:
    """Policy embeddedFiles "keep" or "sanitize": every attachment (the document's list, file
    attachment annotations, associated files (/AF) and any other file specification with
    contents, wherever it is) is cleaned by its own family through the engine, under the same
    policy and the archive limits (`nested.nested_context`), and attached again under its
    new name. One that cannot be made safe (an executable, a script, a type the engine refuses
    or does not know, over a limit) is removed and reported; so is every embedded file stream
    no file specification with cleaned contents points at."""
    cleaned: dict[tuple[int, int], bool] = {}  # file specification -> kept
    kept_streams: set[tuple[int, int]] = set()  # embedded file streams holding cleaned bytes

    def handle(spec: pikepdf.Object | None, where: str) -> bool:
        if not isinstance(spec, Dictionary):
            return False
        if spec.is_indirect and spec.objgen in cleaned:
            return cleaned[spec.objgen]
        stream = _sanitize_attachment(spec, where, ctx)
        if stream is not None:
            kept_streams.add(stream.objgen)
        else:
            _drop_contents(spec)
        if spec.is_indirect:
            cleaned[spec.objgen] = stream is not None
        return stream is not None

    names = pdf.Root.get("/Names")
    tree = names.get("/EmbeddedFiles") if isinstance(names, Dictionary) else None
    stack = [tree] if isinstance(tree, Dictionary) else []
    nodes = 0
    while stack and nodes < 100_000:
        node = stack.pop()
        nodes += 1
        kids = node.get("/Kids")
        if isinstance(kids, Array):
            stack.extend(kid for kid in kids if isinstance(kid, Dictionary))
        pairs = node.get("/Names")
        if not isinstance(pairs, Array):
            continue
        kept_pairs = Array()
        for index in range(0, len(pairs) - 1, 2):
            if handle(pairs[index + 1], f"attachment {str(pairs[index])[:80]}"):
                kept_pairs.extend([pairs[index], pairs[index + 1]])
        node.Names = kept_pairs
    for number, page in enumerate(pages, start=1):
        annots = page.obj.get("/Annots")
        if not isinstance(annots, Array):
            continue
        kept = Array()
        for annot in annots:
            if isinstance(annot, Dictionary) and \
                    str(annot.get("/Subtype")) == "/FileAttachment" and \
                    not handle(annot.get("/FS"), f"page {number} file attachment"):
                continue
            kept.append(annot)
        if len(kept) != len(annots):
            page.obj.Annots = kept
    # Every other file specification with contents (/AF, or one nothing lists), then every
    # embedded file stream that holds no cleaned bytes.
    for spec in _file_specifications(pdf):
        handle(spec, f"object {spec.objgen[0]} file specification" if spec.is_indirect
               else "associated file")
    for obj in pdf.objects:
        if isinstance(obj, pikepdf.Stream) and obj.objgen not in kept_streams and \
                str(obj.get("/Type", "")) == "/EmbeddedFile" and len(obj.read_raw_bytes()):
            _empty_stream(obj)
            ctx.add("embedded_payload", f"object {obj.objgen[0]}",
                    detail="embedded file no attachment lists removed")


def _file_specifications(pdf: pikepdf.Pdf) -> list[Dictionary]:
    """Every dictionary with embedded contents (/EF), direct or indirect, in the file."""
    found: list[Dictionary] = []
    stack: list[tuple[pikepdf.Object, int]] = [(obj, 0) for obj in pdf.objects
                                               if isinstance(obj, (Dictionary, Array))]
    visited = 0
    while stack and visited < 2_000_000:
        obj, depth = stack.pop()
        visited += 1
        if isinstance(obj, Dictionary):
            if "/EF" in obj:
                found.append(obj)
            children = [obj.get(k) for k in obj.keys()]  # noqa: SIM118 - a pikepdf Dictionary
        else:
            children = list(obj)
        if depth < 64:
            stack.extend((child, depth + 1) for child in children
                         if isinstance(child, (Dictionary, Array)) and not child.is_indirect)
    return found


def _empty_stream(stream: pikepdf.Stream) -> None:
    stream.write(b"")
    for key in list(stream.keys()):
        if key not in ("/Length", "/Type"):
            del stream[key]


def _drop_contents(spec: Dictionary) -> None:
    """A file specification whose contents were not kept: its streams emptied, its /EF and
    /RF gone (whatever else still points at the streams finds nothing)."""
    for key in ("/EF", "/RF"):
        holder = spec.get(key)
        if isinstance(holder, Dictionary):
            for value in [holder.get(k) for k in holder.keys()]:  # noqa: SIM118
                if isinstance(value, pikepdf.Stream):
                    _empty_stream(value)
        if key in spec:
            del spec[key]


def _read_attachment(stream: pikepdf.Stream, limit: int) -> bytes:
    """An embedded file's decoded bytes, at most `limit` (Rejected beyond: a bomb). Flate,
    the usual filter, is inflated in bounded steps; other filters are decoded by qpdf after
    a check of their encoded size."""
    filters = stream.get("/Filter")
    if str(filters) == "/FlateDecode" and "/DecodeParms" not in stream:
        inflater = zlib.decompressobj()
        try:
            data = inflater.decompress(stream.read_raw_bytes(), limit + 1)
        except zlib.error as exc:
            raise Rejected("unreadable contents", RejectionCode.DAMAGED) from exc
    elif len(stream.read_raw_bytes()) > limit:
        data = b""
    else:
        data = bytes(stream.read_bytes())
    if len(data) > limit or (not data and len(stream.read_raw_bytes()) > limit):
        raise Rejected("The attachment expands beyond the size allowed for files inside a file "
                       "(bomb protection).", RejectionCode.BOMB)
    return data


def _sanitize_attachment(spec: Dictionary, where: str, ctx: Context) -> pikepdf.Stream | None:
    """Clean one attachment in place: the stream now holding its cleaned bytes, or None when
    it cannot be made safe (the caller removes it)."""
    from sanitas.engine import decrypt, nested, safe_output_name, sanitize_detected
    from sanitas.engine.report import Refused

    assert ctx.workdir is not None
    files = spec.get("/EF")
    stream: pikepdf.Stream | None = None
    if isinstance(files, Dictionary):
        for key in ("/UF", "/F", "/DOS", "/Mac", "/Unix"):
            value = files.get(key)
            if isinstance(value, pikepdf.Stream):
                stream = value
                break
    label = next((str(spec[k]) for k in ("/UF", "/F") if isinstance(spec.get(k), String)),
                 "attachment")
    if stream is None or not isinstance(files, Dictionary):
        ctx.add("embedded_file", where, detail="attachment without readable contents removed")
        return None
    work = ctx.workdir / f"attachment-{ctx.depth}-{ctx.nested.count}"
    work.mkdir(exist_ok=True)
    source, output = work / "in", work / "out"
    try:
        remaining = nested.MAX_TOTAL_UNCOMPRESSED - ctx.nested.size
        data = _read_attachment(stream, min(nested.MAX_MEMBER_UNCOMPRESSED, remaining))
        source.write_bytes(data)
        inner = nested.nested_context(ctx, len(data))
        opened, detected = decrypt.detect_opening(source, label, inner)
        extension = sanitize_detected(opened, output, detected, inner)
    except Refused:
        raise
    except Rejected as exc:
        if exc.code.value in ENCRYPTED_CODES:
            return _encrypted_attachment(spec, files, stream, where, label, exc.reason, ctx)
        ctx.add("embedded_file", where, detail=f"{label[:80]} removed: {exc.reason}")
        return None
    except (pikepdf.PdfError, RuntimeError, ValueError) as exc:
        log.warning("attachment not readable: %r", exc)
        ctx.add("embedded_file", where, detail=f"{label[:80]} removed: unreadable contents")
        return None
    finally:
        source.unlink(missing_ok=True)
    for finding in inner.closed_findings():
        ctx.record(finding.kind, f"{where}: {finding.location}", action=finding.action,
                   detail=finding.detail)
    stream.write(output.read_bytes())
    output.unlink()
    for key in list(stream.keys()):
        if key not in ("/Length", "/Type", "/Filter", "/DecodeParms"):
            del stream[key]  # the size, dates and checksum described the original
    stream.Type = Name.EmbeddedFile
    # The cleaned bytes are the attachment's only contents: other platforms' variants
    # (/DOS, /Mac, /Unix) and related files go; the name follows the new type (the stream's
    # /Subtype, the original's MIME type, went with the other keys).
    others = [files.get(k) for k in files.keys()]  # noqa: SIM118 - a pikepdf Dictionary
    for other in others:
        if isinstance(other, pikepdf.Stream) and other.objgen != stream.objgen:
            _empty_stream(other)
    spec.EF = Dictionary(F=stream, UF=stream)
    if "/RF" in spec:
        del spec["/RF"]
    new_name = safe_output_name(label, extension)
    for key in ("/F", "/UF"):
        if key in spec:
            spec[key] = String(new_name)
    ctx.add("embedded_file", where, action="converted",
            detail=f"{label[:80]} sanitized as {extension} and attached again as {new_name}")
    return stream


def _encrypted_attachment(spec: Dictionary, files: Dictionary, stream: pikepdf.Stream,
                          where: str, label: str, reason: str,
                          ctx: Context) -> pikepdf.Stream | None:
    """An attachment no password opened (an encrypted PDF, Office file or archive) was not
    inspected: the policy's `encryptedContent` holds it back (removed) or passes it as it
    came (its contents unchanged, the only variant left)."""
    if not ctx.policy.passes_encrypted:
        ctx.add("encrypted_content", where, action="removed",
                detail=f"{label[:80]} held back: {reason}")
        return None
    ctx.add("encrypted_content", where, action="kept",
            detail=f"{label[:80]} delivered unchanged and not inspected: {reason}")
    for key in list(files.keys()):
        other = files.get(key)
        if isinstance(other, pikepdf.Stream) and other.objgen != stream.objgen:
            _empty_stream(other)
    spec.EF = Dictionary(F=stream, UF=stream)
    if "/RF" in spec:
        del spec["/RF"]
    return stream


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" + ("" if number == 1 else "s")


def _clean_action_entry(holder: Dictionary, key: str, where: str, record: _Recorder,
                        keep_links: bool) -> None:
    """Replace holder[key] with a fresh safe action, or delete it."""
    safe = _safe_action(holder[key], where, record, keep_links)
    if safe is None:
        del holder[key]
    else:
        holder[key] = safe


def _safe_action(action: pikepdf.Object, where: str, record: _Recorder,
                 keep_links: bool) -> Dictionary | None:
    """A rebuilt action dictionary (no /Next chain, no extra keys) or None."""
    if isinstance(action, Array):  # a destination written where an action belongs
        return None
    if not isinstance(action, Dictionary):
        return None
    kind = str(action.get("/S", ""))
    if action.get("/Next") is not None:
        record("chained_action", f"{where} /Next", "removed", "actions chained after the first")
    if kind == "/GoTo" and "/D" in action:
        dest = action.D
        if isinstance(dest, (Array, String, pikepdf.Name)):
            return Dictionary(S=Name.GoTo, D=dest)
        return None
    if kind == "/URI":
        uri = action.get("/URI")
        text = bytes(uri).decode("latin-1", "replace").strip() if isinstance(uri, String) else ""
        if not text.lower().startswith(SAFE_URI_SCHEMES):
            record("unsafe_link", where, "removed", f"link to {text[:120]!r}")
            return None
        if not keep_links:
            record("link", where, "removed", text[:200])
            return None
        return Dictionary(S=Name.URI, URI=String(text))
    if kind == "/Named" and str(action.get("/N", "")) in SAFE_NAMED_ACTIONS:
        return Dictionary(S=Name.Named, N=action.N)
    if kind == "/GoToR" and "/GoToR" in record.keep:
        address = web_address(action.get("/F"))
        if address is None:
            record("remote_goto", where, "removed", "GoToR action to a file path, not a web "
                   "address")
            return None
        record("remote_goto", where, "kept", f"GoToR action to {address[:200]}")
        rebuilt = Dictionary(S=Name.GoToR, F=Dictionary(FS=Name.URL, F=String(address)))
        target = action.get("/D")
        if isinstance(target, (Array, String, pikepdf.Name)):
            rebuilt.D = target
        if isinstance(action.get("/NewWindow"), bool):
            rebuilt.NewWindow = action.NewWindow
        return rebuilt
    label = kind.lstrip("/") or "unknown"
    finding = {"JavaScript": "javascript", "Launch": "launch_action",
               "SubmitForm": "submit_form", "ImportData": "import_data",
               "GoToR": "remote_goto", "GoToE": "embedded_goto", "RichMediaExecute": "rich_media",
               "Rendition": "rendition", "Movie": "movie", "Sound": "sound",
               "GoTo3DView": "3d_content"}.get(label, "action")
    record(finding, where, "removed", f"{label} action")
    return None


# --- generic sweep -----------------------------------------------------------------------------

class _SweepRecorder:
    """Aggregates sweep findings: one finding per kind listing the objects concerned."""

    def __init__(self) -> None:
        self.found: dict[tuple[str, FindingAction], list[str]] = {}

    def __call__(self, kind: str, location: str, action: FindingAction = "removed",
                 detail: str = "") -> None:
        self.found.setdefault((kind, action), []).append(
            location.split(" /")[0].replace("object ", ""))

    def flush(self, record: _Recorder) -> None:
        for (kind, action), where in self.found.items():
            unique = list(dict.fromkeys(where))
            listed = ", ".join(unique[:20]) + (f" and {len(unique) - 20} more"
                                               if len(unique) > 20 else "")
            record(kind, f"objects {listed}", action,
                   "hidden in the object graph (including superseded or unreferenced objects)"
                   if action == "removed" else "web addresses kept by the policy")


def _sweep_all_objects(pdf: pikepdf.Pdf, outer: _Recorder) -> None:
    """Every object of the file, including ones no structure-aware rule knows about."""
    record = _SweepRecorder()
    _sweep_objects(pdf, record, outer.keep)
    record.flush(outer)


def _sweep_objects(pdf: pikepdf.Pdf, record: _Record, keep: frozenset[str] = frozenset()) -> None:
    for obj in pdf.objects:
        if isinstance(obj, (Dictionary, pikepdf.Stream)):
            _sweep(obj, record, 0, keep)
        elif isinstance(obj, Array):
            _sweep_array(obj, record, 0, keep)
    _sweep(pdf.trailer, record, 0, keep)


def _is_bad_action(value: pikepdf.Object | None, keep: frozenset[str] = frozenset()) -> bool:
    if not isinstance(value, Dictionary):
        return False
    subtype = value.get("/S")
    if subtype is None:
        return False
    kind = str(subtype)
    if kind == "/GoToR" and "/GoToR" in keep:
        return web_address(value.get("/F")) is None
    if kind == "/Named":
        return str(value.get("/N", "")) not in SAFE_NAMED_ACTIONS
    if kind == "/URI":
        uri = value.get("/URI")
        text = bytes(uri).decode("latin-1", "replace").strip().lower() \
            if isinstance(uri, String) else ""
        return not text.startswith(SAFE_URI_SCHEMES)
    # Only real action types: /S also names structure types, transparency groups, border
    # styles and transitions, which must stay.
    return kind in ACTION_TYPES and kind not in SAFE_ACTIONS


def _sweep(obj: pikepdf.Object, record: _Record, depth: int,
           keep: frozenset[str] = frozenset()) -> None:
    if depth > 64:
        return
    if isinstance(obj, pikepdf.Stream):
        subtype = str(obj.get("/Subtype", ""))
        embedded = str(obj.get("/Type", "")) == "/EmbeddedFile"
        if (embedded and "/EF" not in keep) or subtype in ("/PS", "/3D", "/U3D", "/PRC"):
            obj.write(b"")  # the bytes vanish even if something still points here
            for key in list(obj.keys()):
                if key not in ("/Length", "/Type"):
                    del obj[key]
            record("embedded_payload", f"object {obj.objgen[0]}", "removed",
                   f"{str(obj.get('/Type', subtype)).lstrip('/')} stream emptied")
            return
        if "/F" in obj and "/F" in keep and web_address(obj.get("/F")) is not None:
            record("external_reference", f"object {obj.objgen[0]} /F", "kept")
        else:
            for key in EXTERNAL_STREAM_KEYS:
                if key in obj:
                    record("external_reference", f"object {obj.objgen[0]} {key}")
                    del obj[key]
    for key in list(obj.keys()):
        if key in ("/Ref", "/OPI") and key in keep and _web_reference(obj.get(key)):
            record("external_reference",
                   f"object {obj.objgen[0] if obj.is_indirect else 'inline'} {key}", "kept")
            continue
        if key in SWEEP_KEYS and (key not in keep or key in ("/Ref", "/OPI")):
            record(SWEEP_KEYS[key], f"object {obj.objgen[0] if obj.is_indirect else 'inline'} "
                                    f"{key}")
            del obj[key]
            continue
        try:
            value = obj.get(key)
            bad = _is_bad_action(value, keep)
        except (TypeError, ValueError, UnicodeError):
            continue  # a mangled name pikepdf cannot hand back: no known name is mangled
        if bad and isinstance(value, Dictionary):  # only a dictionary is a bad action
            record("action", f"object {obj.objgen[0] if obj.is_indirect else 'inline'} {key}",
                   "removed", f"{str(value.get('/S')).lstrip('/')} action")
            del obj[key]
            continue
        if isinstance(value, Dictionary) and "/Next" in value and str(value.get("/S", "")):
            del value["/Next"]
        if isinstance(value, Dictionary) and not value.is_indirect:
            _sweep(value, record, depth + 1, keep)
        elif isinstance(value, Array) and not value.is_indirect:
            _sweep_array(value, record, depth + 1, keep)


def _sweep_array(array: Array, record: _Record, depth: int,
                 keep: frozenset[str] = frozenset()) -> None:
    if depth > 64:
        return
    for index in range(len(array) - 1, -1, -1):
        value = array[index]
        if _is_bad_action(value, keep):
            record("action", "array item", "removed", f"{str(value.get('/S')).lstrip('/')}")
            del array[index]
            continue
        if isinstance(value, Dictionary) and not value.is_indirect:
            _sweep(value, record, depth + 1, keep)
        elif isinstance(value, Array) and not value.is_indirect:
            _sweep_array(value, record, depth + 1, keep)
