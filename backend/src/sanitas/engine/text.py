"""Plain text, CSV and HTML, all written back as UTF-8.

- Text: control characters and bidirectional overrides (which disguise what is shown) removed.
- CSV: cells that a spreadsheet would run as a formula (=, +, -, @, tab, CR) are neutralised with
  a leading apostrophe; plain numbers stay numbers.
- HTML: scripts, event handlers, iframes, objects, forms' targets and every external load are
  removed; a Content-Security-Policy forbids anything that slipped through.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
from pathlib import Path

from sanitas.engine.css import sanitize_css
from sanitas.engine.report import Context, Rejected, RejectionCode

MAX_TEXT_BYTES = 200 * 1024 * 1024
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069\u200e\u200f"
                           r"\u061c\ufeff]")
FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
PLAIN_NUMBER = re.compile(r"^[+-]?(\d[\d,.\s]*)(e[+-]?\d+)?%?$", re.IGNORECASE)


def decode(data: bytes) -> tuple[str, str]:
    """(text, encoding name). BOMs win; then strict UTF-8; then Windows-1252."""
    for bom, encoding in ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
                          (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
                          (codecs.BOM_UTF16_BE, "utf-16")):
        if data.startswith(bom):
            return data.decode(encoding, "replace"), encoding
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace"), "cp1252"


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    if src.stat().st_size > MAX_TEXT_BYTES:
        raise Rejected("The text file is too large.", RejectionCode.TOO_LARGE)
    text, encoding = decode(src.read_bytes())
    if encoding not in ("utf-8",):
        ctx.add("encoding", "whole file", action="converted",
                detail=f"{encoding} converted to UTF-8")
    if kind == "html":
        dst.write_text(sanitize_html(text, ctx), encoding="utf-8")
        return "html"
    text = _strip_controls(text, ctx)
    if kind == "csv":
        dst.write_text(sanitize_csv(text, ctx), encoding="utf-8", newline="")
        return "csv"
    dst.write_text(text, encoding="utf-8", newline="")
    return "txt"


def _strip_controls(text: str, ctx: Context) -> str:
    found = CONTROL_CHARS.findall(text)
    if found:
        bidi = sum(1 for c in found if "\u202a" <= c <= "\u202e" or "\u2066" <= c <= "\u2069")
        ctx.add("control_characters", "text", action="removed",
                detail=f"{len(found)} control characters ({bidi} bidirectional overrides)")
        text = CONTROL_CHARS.sub("", text)
    return text


def _neutralise(cell: str) -> str | None:
    stripped = cell.lstrip(" \"'")
    if not cell or not (cell.startswith(FORMULA_START) or stripped.startswith(FORMULA_START)):
        return None
    if PLAIN_NUMBER.match(cell.strip()):
        return None
    return "'" + cell


def guess_delimiter(sample: str) -> str:
    """The candidate that splits the first lines into the same number (>1) of cells; csv.Sniffer
    is far too slow on large samples."""
    lines = [line for line in sample.splitlines()[:30] if line.strip()]
    if len(lines) > 2:
        lines = lines[:-1]  # possibly cut by the sample boundary
    best, best_score = ",", 0
    for candidate in (",", ";", "\t", "|"):
        try:
            counts = [len(row) for row in csv.reader(lines, delimiter=candidate)]
        except csv.Error:
            continue
        if not counts or min(counts) < 2:
            continue
        consistent = sum(1 for c in counts if c == counts[0])
        score = consistent * 1000 + counts[0]
        if score > best_score:
            best, best_score = candidate, score
    return best


def sanitize_csv(text: str, ctx: Context) -> str:
    sample = text[:64 * 1024]
    delimiter = guess_delimiter(sample)
    newline = "\r\n" if "\r\n" in sample else "\n"
    csv.field_size_limit(64 * 1024 * 1024)
    out = io.StringIO()
    writer = csv.writer(out, delimiter=delimiter, lineterminator=newline,
                        quoting=csv.QUOTE_MINIMAL)
    neutralised: list[str] = []
    try:
        for row_number, row in enumerate(csv.reader(io.StringIO(text, newline=""),
                                                    delimiter=delimiter), start=1):
            for col, cell in enumerate(row):
                fixed = _neutralise(cell)
                if fixed is not None:
                    row[col] = fixed
                    neutralised.append(f"row {row_number} column {col + 1}")
            writer.writerow(row)
    except csv.Error as exc:
        raise Rejected(f"The CSV file is malformed ({exc}).", RejectionCode.DAMAGED) from None
    if neutralised:
        ctx.add("csv_formula", ", ".join(neutralised[:20]) +
                (f" and {len(neutralised) - 20} more" if len(neutralised) > 20 else ""),
                action="converted",
                detail=f"{len(neutralised)} cell(s) that start a formula were prefixed "
                "with an apostrophe")
    return out.getvalue()


# --- HTML --------------------------------------------------------------------------------------

REMOVED_ELEMENTS = {
    "script": "javascript", "noscript": "javascript", "iframe": "embedded_content",
    "frame": "embedded_content", "frameset": "embedded_content", "object": "embedded_content",
    "embed": "embedded_content", "applet": "embedded_content", "base": "base_url",
    "link": "external_reference", "portal": "embedded_content", "template": "template",
    "param": "embedded_content", "xml": "embedded_content", "meta": "meta",
    "fencedframe": "embedded_content", "slot": "template",
}
LOADING_ATTRIBUTES = {"src", "srcset", "background", "poster", "data", "codebase", "archive",
                      "lowsrc", "dynsrc", "ping", "longdesc", "cite", "manifest", "formaction",
                      "action", "profile", "classid", "usemap", "imagesrcset", "attributionsrc"}
LINK_ATTRIBUTES = {"href", "xlink:href"}
SAFE_LINK = re.compile(r"^(https?://|mailto:|#|[^:]*$)", re.IGNORECASE)
DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|jpg|gif|webp);base64,", re.IGNORECASE)
CSP = ("default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; "
       "form-action 'none'; frame-src 'none'; base-uri 'none'")


def sanitize_html(text: str, ctx: Context) -> str:
    import lxml.html
    from lxml import etree

    text = CONTROL_CHARS.sub("", text)
    parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, no_network=True,
                                  default_doctype=False, huge_tree=False)
    try:
        document = lxml.html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise Rejected(f"The HTML file cannot be parsed ({exc}).", RejectionCode.DAMAGED) from None
    removed: dict[tuple[str, str], int] = {}

    def drop(kind: str, what: str) -> None:
        removed[(kind, what)] = removed.get((kind, what), 0) + 1

    for element in list(document.iter()):
        if not isinstance(element.tag, str):
            parent = element.getparent()
            if parent is not None:
                element.drop_tree()
            continue
        tag = element.tag.lower().split("}")[-1]
        if tag in REMOVED_ELEMENTS and element.getparent() is not None:
            if tag == "meta" and element.get("charset") is not None:
                element.drop_tree()  # re-added as UTF-8 below
                continue
            drop(REMOVED_ELEMENTS[tag], f"<{tag}>")
            element.drop_tree()
            continue
        if tag == "svg" or tag == "math":
            _clean_foreign(element, drop)
        for attr in list(element.attrib):
            value = element.attrib[attr]
            name = attr.lower().split("}")[-1]
            if name.startswith("on"):
                drop("event_handler", f"{name} attribute")
                del element.attrib[attr]
            elif name in LOADING_ATTRIBUTES:
                if name == "src" and tag == "img" and DATA_IMAGE.match(value.strip()):
                    continue
                drop("external_reference", f"<{tag} {name}> (loads {value[:60]!r})")
                del element.attrib[attr]
            elif name in LINK_ATTRIBUTES or name == "href":
                target = value.strip()
                if re.match(r"^\s*(javascript|vbscript|data|file):", target, re.IGNORECASE) or \
                        not SAFE_LINK.match(target):
                    drop("javascript" if "script:" in target.lower() else "unsafe_link",
                         f"<{tag} href>")
                    del element.attrib[attr]
                elif not ctx.policy.keep_links and not target.startswith("#"):
                    drop("link", f"<{tag} href>")
                    del element.attrib[attr]
            elif name == "style":
                element.attrib[attr] = sanitize_css(value, drop)
            elif name in ("http-equiv", "formtarget") or name.startswith("xmlns"):
                del element.attrib[attr]
        if tag == "style":
            element.text = sanitize_css(element.text or "", drop)
            for child in list(element):
                element.remove(child)
    head = document.find("head")
    if head is None:
        head = lxml.html.Element("head")
        document.insert(0, head)
    csp = lxml.html.Element("meta")
    csp.set("http-equiv", "Content-Security-Policy")
    csp.set("content", CSP)
    head.insert(0, csp)
    charset = lxml.html.Element("meta")
    charset.set("charset", "utf-8")
    head.insert(0, charset)
    for (kind, what), count in sorted(removed.items()):
        ctx.add(kind, what, action="removed", detail=f"{count} occurrence(s)")
    return lxml.html.tostring(document, doctype="<!DOCTYPE html>", encoding="unicode",
                              method="html")


def _clean_foreign(element, drop) -> None:
    """Inline SVG/MathML inside HTML: same rules as the SVG sanitizer for the dangerous bits."""
    for child in list(element.iter()):
        if child is element or not isinstance(child.tag, str):
            continue
        tag = child.tag.lower().split("}")[-1]
        if tag in ("script", "foreignobject", "handler", "set", "animate", "iframe", "embed",
                   "object", "use", "image", "feimage", "maction", "annotation-xml"):
            drop("javascript" if tag == "script" else "embedded_content", f"<{tag}>")
            if child.getparent() is not None:
                child.drop_tree()
