"""Plain text, CSV and HTML, all written back as UTF-8.

- Text: control characters and bidirectional overrides (which disguise what is shown) removed.
- CSV: cells that a spreadsheet would run as a formula (=, +, -, @, tab, CR) are neutralised with
  a leading apostrophe; plain numbers stay numbers.
- HTML: scripts, event handlers, iframes, objects, forms' targets and every external load are
  removed; a Content-Security-Policy forbids anything that slipped through. With the policy's
  externalReferences `keep`, loads of web addresses (http, https: pictures, style sheets,
  media, CSS url() and @import) stay and the Content-Security-Policy allows them (scripts,
  frames and form submissions stay forbidden).
- XML: parsed without DTD, entity expansion or network; the DOCTYPE, processing instructions
  (xml-stylesheet...) and comments go, XInclude and script elements go, XHTML, SVG and MathML
  inside are cleaned like HTML (`clean_markup`, shared with the EPUB family); written back as
  well-formed UTF-8 XML with its `.xml` name.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sanitas.engine.css import Remote, RemoteLoads, sanitize_css
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.text_encoding import CONTROL_CHARS, MAX_TEXT_BYTES, decode, decode_markup

if TYPE_CHECKING:  # lxml is imported where it is used
    import lxml.html
    from lxml import etree

# drop(kind, what) records one removal; resource(url) says whether a URL names a kept resource
# of the same package (EPUB).
Drop = Callable[[str, str], None]
Resource = Callable[[str], bool]

FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
PLAIN_NUMBER = re.compile(r"^[+-]?(\d[\d,.\s]*)(e[+-]?\d+)?%?$", re.IGNORECASE)


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    if src.stat().st_size > MAX_TEXT_BYTES:
        raise Rejected("The text file is too large.", RejectionCode.TOO_LARGE)
    if kind == "xml":
        dst.write_bytes(sanitize_xml(src.read_bytes(), ctx))
        return "xml"
    if kind == "json":
        from sanitas.engine.structured_text import sanitize_json

        return sanitize_json(src, dst, ctx)
    if kind in ("yaml", "toml"):
        from sanitas.engine import structured_text

        return structured_text.sanitize_yaml(src, dst, ctx) if kind == "yaml" else \
            structured_text.sanitize_toml(src, dst, ctx)
    data = src.read_bytes()
    text, encoding = decode_markup(data) if kind == "html" else decode(data)
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
# externalReferences keep: web addresses may be loaded (pictures, style sheets, fonts, media);
# scripts, frames, objects, connections and form submissions stay forbidden.
CSP_REMOTE = ("default-src 'none'; img-src data: http: https:; "
              "style-src 'unsafe-inline' http: https:; font-src data: http: https:; "
              "media-src http: https:; form-action 'none'; frame-src 'none'; base-uri 'none'")
# Attributes that load what a page displays: kept for a web address under externalReferences
# keep (the others of LOADING_ATTRIBUTES ping, submit, or load code, and always go).
REMOTE_LOADS = frozenset({"src", "srcset", "background", "poster"})


def remote_srcset(value: str, what: str, remote: Remote) -> bool:
    """Whether every candidate of a srcset is a web address the policy keeps."""
    candidates = [c.split()[0] for c in value.split(",") if c.strip()]
    return bool(candidates) and all(remote(c, what) for c in candidates)


def report_kept(ctx: Context, remote: RemoteLoads, prefix: str = "") -> None:
    """One finding per kind of remote load the policy kept."""
    for what, count in sorted(remote.kept.items()):
        ctx.add("external_reference", f"{prefix}{what}", action="kept",
                detail=f"{count} occurrence(s)")


def sanitize_html(text: str, ctx: Context) -> str:
    import lxml.html
    from lxml import etree

    text = CONTROL_CHARS.sub("", text)
    # Parsed as UTF-8 bytes: lxml refuses text that starts with an XML declaration naming an
    # encoding (XHTML), and the declaration has already been honoured by the decoding.
    parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, no_network=True,
                                  default_doctype=False, huge_tree=False, encoding="utf-8")
    try:
        document = lxml.html.document_fromstring(text.encode("utf-8", "surrogatepass"),
                                                 parser=parser)
    except (etree.ParserError, ValueError) as exc:
        raise Rejected(f"The HTML file cannot be parsed ({exc}).", RejectionCode.DAMAGED) from None
    removed: dict[tuple[str, str], int] = {}
    drop_kept: set[str] = set()

    def drop(kind: str, what: str) -> None:
        removed[(kind, what)] = removed.get((kind, what), 0) + 1

    keep_forms = ctx.decides(Rule.FORM_FIELDS) is Action.KEEP
    keep_meta = ctx.decides(Rule.DOCUMENT_METADATA) is Action.KEEP
    remote = RemoteLoads(ctx.decides(Rule.EXTERNAL_REFERENCES) is Action.KEEP)
    for element in list(document.iter()):
        if not isinstance(element.tag, str):
            parent = element.getparent()
            if parent is not None:
                element.drop_tree()
            continue
        tag = element.tag.lower().split("}")[-1]
        if not keep_forms and (tag in FORM_CONTROLS or tag == "form") and \
                element.getparent() is not None:
            drop("form", f"<{tag}>")
            if tag == "form":
                element.drop_tag()  # the text around the fields stays
            else:
                element.drop_tree()
            continue
        if tag in REMOVED_ELEMENTS and element.getparent() is not None:
            if tag == "meta" and element.get("charset") is not None:
                element.drop_tree()  # re-added as UTF-8 below
                continue
            if tag == "meta" and keep_meta and element.get("name") and \
                    element.get("http-equiv") is None:
                drop_kept.add(f"<meta name={element.get('name', '')[:40]!r}>")
                continue
            if tag == "link" and "stylesheet" in (element.get("rel") or "").lower().split() \
                    and remote(element.get("href") or "", "<link rel=stylesheet>"):
                for attr in list(element.attrib):
                    if attr.lower() not in ("rel", "href", "type", "media", "crossorigin",
                                            "integrity", "referrerpolicy"):
                        del element.attrib[attr]
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
                if name in REMOTE_LOADS and (
                        remote_srcset(value, f"<{tag} {name}>", remote) if name == "srcset"
                        else remote(value, f"<{tag} {name}>")):
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
                element.attrib[attr] = sanitize_css(value, drop, remote=remote)
            elif name in ("http-equiv", "formtarget") or name.startswith("xmlns"):
                del element.attrib[attr]
        if tag == "style":
            element.text = sanitize_css(element.text or "", drop, remote=remote)
            for child in list(element):
                element.remove(child)
    head = document.find("head")
    if head is None:
        head = lxml.html.Element("head")
        document.insert(0, head)
    csp = lxml.html.Element("meta")
    csp.set("http-equiv", "Content-Security-Policy")
    csp.set("content", CSP_REMOTE if remote.keep else CSP)
    head.insert(0, csp)
    charset = lxml.html.Element("meta")
    charset.set("charset", "utf-8")
    head.insert(0, charset)
    for (kind, what), count in sorted(removed.items()):
        ctx.add(kind, what, action="removed", detail=f"{count} occurrence(s)")
    for what in sorted(drop_kept):
        ctx.add("meta", what, action="kept")
    report_kept(ctx, remote)
    return lxml.html.tostring(document, doctype="<!DOCTYPE html>", encoding="unicode",
                              method="html")


def _clean_foreign(element: lxml.html.HtmlElement, drop: Drop) -> None:
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


# --- XML ---------------------------------------------------------------------------------------

XHTML_NS = "http://www.w3.org/1999/xhtml"
SVG_NS = "http://www.w3.org/2000/svg"
MATHML_NS = "http://www.w3.org/1998/Math/MathML"
XLINK_NS = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"
XINCLUDE_NSS = frozenset({"http://www.w3.org/2001/XInclude", "http://www.w3.org/2003/XInclude"})
MSXSL_NS = "urn:schemas-microsoft-com:xslt"
# Office 2003 XML documents: macros travel in Word's docSuppData, DDE in Excel's formulas.
WORDML_NS = "http://schemas.microsoft.com/office/word/2003/wordml"
SPREADSHEETML_NS = "urn:schemas-microsoft-com:office:spreadsheet"
DANGEROUS_FORMULA = re.compile(r"\||\b(?:DDE|CALL|REGISTER|EXEC|WEBSERVICE)\s*\(", re.IGNORECASE)

# Inside XHTML: REMOVED_ELEMENTS (link and meta are judged one by one) and form controls.
FORM_CONTROLS = frozenset({"input", "button", "select", "textarea", "option", "optgroup",
                           "datalist", "keygen", "output"})
SVG_REMOVED = {"script": "javascript", "handler": "javascript", "foreignObject": "foreign_object",
               "iframe": "embedded_content", "embed": "embedded_content",
               "object": "embedded_content", "discard": "javascript"}
ANIMATED_REFERENCE = re.compile(r"^\s*(xlink:)?href\s*$|^\s*on|^\s*(style|src)\s*$",
                                re.IGNORECASE)
URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "data", "poster",
                            "background", "codebase", "cite", "longdesc", "usemap", "srcset"})


def script_url(value: str) -> bool:
    """A javascript:/vbscript: URL, however a browser would read it (spaces and control
    characters inside the scheme are ignored)."""
    squeezed = re.sub(r"[\x00-\x20]", "", value[:64]).lower()
    return squeezed.startswith(("javascript:", "vbscript:", "livescript:"))


class ParsedXml:
    """An untrusted XML document, parsed: `root` is all that is serialised (the DOCTYPE and
    whatever lies outside the root element are left behind)."""

    def __init__(self, root: etree._Element, doctype: bool, entities: int, encoding: str) -> None:
        self.root = root
        self.doctype = doctype  # a DOCTYPE was present
        self.entities = entities  # entity declarations in the internal subset (none expanded)
        self.encoding = encoding

    def tobytes(self) -> bytes:
        from lxml import etree

        return etree.tostring(self.root, xml_declaration=True, encoding="UTF-8")


def parse_untrusted_xml(data: bytes, where: str, drop: Drop) -> ParsedXml:
    """Parse `data` without loading a DTD, expanding an entity or touching the network.

    References to entities an external DTD would define (`&nbsp;` in XHTML 1.1 chapters) become
    the character HTML names, others are removed; processing instructions and comments go.
    `drop(kind, what)` records removals. Raises `Rejected` (damaged) when not well-formed."""
    import html.entities

    from lxml import etree

    from sanitas.engine.xmlsafe import xml_parser

    parser = xml_parser(remove_pis=False, collect_ids=True)
    try:
        root = etree.fromstring(data, parser)
    except etree.XMLSyntaxError as exc:
        raise Rejected(f"{where} is not well-formed XML ({exc.msg}).",
                       RejectionCode.DAMAGED) from None
    if root is None:
        raise Rejected(f"{where} is empty.", RejectionCode.DAMAGED)
    docinfo = root.getroottree().docinfo
    dtd = docinfo.internalDTD
    entities = len(list(dtd.iterentities())) if dtd is not None else 0
    outside = [*root.itersiblings(preceding=True), *root.itersiblings()]
    for node in [*outside, *root.iter(etree.PI)]:
        if isinstance(node, etree._ProcessingInstruction):
            drop("processing_instruction", f"<?{node.target}?>")
            if node.getparent() is not None:
                _remove_keeping_tail(node, "")
    for node in list(root.iter(etree.Entity)):
        if not isinstance(node, etree._Entity):  # what iter(Entity) yields; narrows the type
            continue
        char = html.entities.html5.get(f"{node.name};")
        if char is None:
            drop("xml_entities", f"entity reference &{node.name};")
        _remove_keeping_tail(node, char or "")
    return ParsedXml(root, bool(docinfo.doctype) or dtd is not None, entities,
                     (docinfo.encoding or "UTF-8"))


def _remove_keeping_tail(node: etree._Element, text: str) -> None:
    """Replace `node` by `text`, keeping the text that followed it where it was."""
    parent = node.getparent()
    if parent is None:
        return
    text += node.tail or ""
    previous = node.getprevious()
    if text:
        if previous is not None:
            previous.tail = (previous.tail or "") + text
        else:
            parent.text = (parent.text or "") + text
    parent.remove(node)


def _link_kept(target: str, keep_links: bool, internal: bool) -> str | None:
    """None when a link may stay, else the finding kind that removes it."""
    target = target.strip()
    if script_url(target):
        return "javascript"
    if target.startswith("#"):
        return None
    if re.match(r"^(data|file):", target, re.IGNORECASE) or not SAFE_LINK.match(target):
        return "unsafe_link"
    if internal or keep_links:
        return None
    return "link"


def clean_markup(root: etree._Element, drop: Drop, *, keep_links: bool, plain_is_html: bool = False,
                 resource: Resource | None = None, remote: Remote | None = None) -> None:
    """Clean an XML tree in place: XHTML elements (and elements without a namespace when
    `plain_is_html`) follow the HTML rules of `sanitize_html` (no scripts, handlers, forms,
    frames, objects, base, refresh; loads only of `resource`s; links as the policy says),
    inline SVG and MathML lose scripts, handlers, foreign objects and outside references,
    XInclude and XSLT script elements go, and no element keeps a javascript: URL.

    `resource(url)` says whether a relative URL names a resource of the same package that is
    kept (EPUB); without it every load is removed, as in an HTML page. `remote(url, what)`
    (`css.RemoteLoads`) says whether a load of a web address stays (externalReferences
    keep)."""
    stack = [root]
    while stack:
        el = stack.pop()
        qualified = el.tag
        if not isinstance(qualified, str):
            continue
        children = _clean_element(el, qualified, root, drop, keep_links, plain_is_html,
                                  resource, remote)
        stack.extend(reversed(children))


def _clean_element(el: etree._Element, qualified: str, root: etree._Element, drop: Drop,
                   keep_links: bool, plain_is_html: bool,
                   resource: Resource | None,
                   remote: Remote | None = None) -> list[etree._Element]:
    """Clean one element (`qualified` is its tag); return the elements still to visit (its
    children, or none when it was removed)."""
    uri, _, local = (qualified[1:].partition("}") if qualified.startswith("{")
                     else ("", "", qualified))
    ns = uri or None
    html = ns == XHTML_NS or (ns is None and plain_is_html)
    removable = el is not root
    kind = None
    if ns in XINCLUDE_NSS:
        kind = "external_reference"
    elif ns == MSXSL_NS and local == "script":
        kind = "javascript"
    elif ns == WORDML_NS and local in ("docSuppData", "binData") and (
            local == "docSuppData" or (el.get(f"{{{WORDML_NS}}}name") or "").endswith(".mso")):
        kind = "macro"
    elif html:
        tag = local.lower()
        if tag in REMOVED_ELEMENTS and tag not in ("link", "meta"):
            kind = REMOVED_ELEMENTS[tag]
        elif tag == "link" and not ("stylesheet" in (el.get("rel") or "").lower().split() and (
                (resource is not None and resource(el.get("href") or "")) or
                (remote is not None and remote(el.get("href") or "", "<link rel=stylesheet>")))):
            kind = "external_reference"
        elif tag == "meta" and (el.get("name") or "").lower() != "viewport" and (
                el.get("charset") or "").lower().replace("-", "") != "utf8":
            kind = "meta"
        elif tag in FORM_CONTROLS:
            kind = "form"
        elif tag == "form" and removable:
            drop("form", "<form>")
            from sanitas.engine.office_package import unwrap

            return unwrap(el)
    elif ns == SVG_NS:
        kind = SVG_REMOVED.get(local)
        if local in ("set", "animate") and ANIMATED_REFERENCE.match(el.get("attributeName", "")):
            kind = "javascript"
    if kind is not None and removable:
        drop(kind, f"<{local}>")
        _remove_keeping_tail(el, "")
        return []
    web = html or ns in (SVG_NS, MATHML_NS)
    for attr in list(el.attrib):
        if html and tag_is(local, "link") and attr in ("href", "rel") and kind is None:
            continue  # a kept style sheet (judged above)
        _clean_attribute(el, attr, local.lower() if html else local, drop, web=web, html=html,
                         keep_links=keep_links, resource=resource, ns=ns, remote=remote)
    if web and local == "style":
        el.text = sanitize_css("".join(el.itertext()), drop, resource, remote)
        for child in list(el):
            el.remove(child)
        return []
    return list(el)


def tag_is(local: str, tag: str) -> bool:
    return local.lower() == tag


def _clean_attribute(el: etree._Element, attr: str, tag: str, drop: Drop, *, web: bool, html: bool,
                     keep_links: bool, resource: Resource | None, ns: str | None,
                     remote: Remote | None = None) -> None:
    value = el.attrib[attr]
    attr_ns, _, name = attr[1:].partition("}") if attr.startswith("{") else ("", "", attr)
    name = name.lower() if not attr_ns else name
    if attr_ns == XML_NS and name == "base":
        drop("base_url", "xml:base attribute")
        del el.attrib[attr]
        return
    if ns == SPREADSHEETML_NS and name == "Formula" and DANGEROUS_FORMULA.search(value):
        drop("formula", "formula calling another program or document")
        del el.attrib[attr]
        return
    url_like = name in URL_ATTRIBUTES or attr_ns == XLINK_NS
    if not web:
        if url_like and script_url(value):
            drop("javascript", f"{name} attribute")
            del el.attrib[attr]
        return
    if name.startswith("on"):
        drop("event_handler", f"{name} attribute")
        del el.attrib[attr]
        return
    if name == "style":
        el.attrib[attr] = sanitize_css(value, drop, resource, remote)
        return
    if html and name in ("http-equiv", "formtarget"):
        del el.attrib[attr]
        return
    if not url_like and "url(" in value.lower():
        # presentation attributes such as fill="url(...)"
        el.attrib[attr] = sanitize_css(value, drop, resource, remote)
        return
    if not url_like and not (html and name in LOADING_ATTRIBUTES):
        return
    target = value.strip()
    package = resource is not None and _relative(target)
    if name == "href" and ((html and tag in ("a", "area")) or (ns == SVG_NS and tag == "a")
                           or ns == MATHML_NS):
        kind = _link_kept(target, keep_links, package)
        if kind is not None:
            drop(kind, f"<{tag} href>")
            del el.attrib[attr]
        return
    if target.startswith("#") and not script_url(target):
        return  # a fragment of the same document
    if name in ("src", "href") and tag in ("img", "image", "feImage") and DATA_IMAGE.match(target):
        return
    if name == "srcset":
        candidates = [c.split()[0] for c in target.split(",") if c.strip()]
        if resource is not None and candidates and all(
                _relative(c) and resource(c) for c in candidates):
            return
        if remote is not None and candidates and all(
                remote(c, f"<{tag} srcset>") for c in candidates):
            return
    elif (package and resource is not None and resource(target)) or (
            remote is not None and name in REMOTE_LOADS | {"href"}
            and remote(target, f"<{tag} {name}>")):
        return
    drop("javascript" if script_url(target) else "external_reference",
         f"<{tag} {name}> (loads {target[:60]!r})")
    del el.attrib[attr]


def _relative(target: str) -> bool:
    """A reference without a scheme or host (a path inside the same package)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(target)
    except ValueError:
        return False
    return not parts.scheme and not parts.netloc and not target.startswith(("/", "\\"))


def sanitize_xml(data: bytes, ctx: Context) -> bytes:
    """A generic XML document, cleaned and written back as UTF-8 XML (see the module notes)."""
    removed: dict[tuple[str, str], int] = {}

    def drop(kind: str, what: str) -> None:
        removed[(kind, what)] = removed.get((kind, what), 0) + 1

    parsed = parse_untrusted_xml(data, "The XML document", drop)
    if parsed.entities:
        ctx.add("xml_entities", "DOCTYPE", action="removed",
                detail=f"{parsed.entities} entity declarations (none expanded)")
    elif parsed.doctype:
        ctx.add("dtd", "DOCTYPE", action="removed", detail="document type declaration")
    remote = RemoteLoads(ctx.decides(Rule.EXTERNAL_REFERENCES) is Action.KEEP)
    clean_markup(parsed.root, drop, keep_links=ctx.policy.keep_links, remote=remote)
    for (kind, what), count in sorted(removed.items()):
        ctx.add(kind, what, action="removed", detail=f"{count} occurrence(s)")
    report_kept(ctx, remote)
    if parsed.encoding.lower().replace("-", "") != "utf8":
        ctx.add("encoding", "whole file", action="converted",
                detail=f"{parsed.encoding} converted to UTF-8")
    return parsed.tobytes()
