"""OpenDocument (odt/ods/odp/odg and their templates) sanitizer.

The package is rebuilt from an allowlist of members: the XML streams (content, styles,
settings; meta.xml reset), pictures that decode as images, object replacement images, and
chart/formula sub-documents after the same cleaning. Basic and script libraries, dialogs,
toolbar configurations, embedded OLE/office objects, thumbnails and signatures are dropped.
In the XML, scripts and event listeners, applets/plugins/floating frames, DDE, linked
sections/tables, database sources, macro fields and remote references go; links stay as plain
http(s)/mailto links when the policy keeps links. The manifest is written anew.

Policy choices beside the defaults: with externalReferences `keep`, linked pictures, sections,
tables, cell ranges and formula glyphs that point at a web address (http, https) stay (file
paths and network shares still go; DDE, database sources and formulas calling outside still
go; floating frames and linked objects, which load a whole document that may run code, go
under every policy). With embeddedFiles `keep` or `sanitize`, embedded OpenDocument objects
are cleaned like the document itself and kept; OLE objects (which may wrap any file, a
program or a macro document), applets and plugins (code) go."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from lxml import etree

from sanitas.engine import formats
from sanitas.engine.office_package import (
    ReviewerAliases,
    clean_picture,
    image_format,
    plural,
    read_package,
    remove_element,
    revision_summary,
    serialize,
    unwrap,
    write_package,
)
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.xmlsafe import parse_xml

MANIFEST_NS = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
OFFICE_NS = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
XLINK_NS = "http://www.w3.org/1999/xlink"
DRAW_NS = "urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"
TABLE_NS = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
STYLE_NS = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"
PRESENTATION_NS = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"
FORM_NS = "urn:oasis:names:tc:opendocument:xmlns:form:1.0"

MIMETYPES = {mimetype: formats.kind(kind).outputs[0]  # mimetype -> output extension
             for mimetype, kind in formats.by_main_type("odf").items()}
# Sub-documents that are pure data and rendered natively (kept after cleaning).
SAFE_OBJECT_TYPES = {"application/vnd.oasis.opendocument.chart",
                     "application/vnd.oasis.opendocument.formula"}
XML_STREAMS = ("content.xml", "styles.xml", "settings.xml")

# Elements removed with everything inside them, and the finding kind.
DROP = {
    "scripts": "macro", "event-listeners": "macro", "event-listener": "macro",
    "script": "script", "applet": "embedded_object", "plugin": "embedded_object",
    "floating-frame": "external_relationship", "object-ole": "ole_object",
    "dde-connection-decls": "dde", "dde-links": "dde", "dde-source": "dde", "dde-link": "dde",
    "section-source": "external_link", "table-source": "external_link",
    "error-macro": "macro", "database-source-sql": "data_connection",
    "database-source-query": "data_connection", "database-source-table": "data_connection",
    "source-service": "data_connection", "cell-range-source": "external_link",
}
# Linked content kept under externalReferences "keep" when it points at a web address (its
# text or data is shown; a floating frame, which loads a whole document, is not among them).
LINKED = frozenset({"section-source", "table-source", "cell-range-source"})
# Elements replaced by their content (the visible text stays).
UNWRAP = {"execute-macro": "macro", "dde-connection": "dde", "database-display": "data_connection",
          "database-next": "data_connection", "database-select": "data_connection",
          "database-row-number": "data_connection", "database-name": "data_connection"}
SAFE_SCHEMES = {"http", "https", "mailto"}
# The printer's name and its driver blob (which carries host details); layout settings stay.
PRINTER_ITEMS = {"PrinterName", "PrinterSetup", "PrinterPaperFromSetup"}
_DANGEROUS_FORMULA = re.compile(
    r"\b(?:DDE|WEBSERVICE|FILTERXML|ENCODEURL|RTD|CALL|SHELL|EXECUTE)\s*\(|'\s*(?:file|https?|ftp)"
    r":|\|", re.IGNORECASE)
_STRING = re.compile(r'"(?:[^"]|"")*"')


def _local(el: etree._Element) -> str:
    tag = el.tag
    return tag.rpartition("}")[2] if isinstance(tag, str) else ""


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    members, order = read_package(src, "OpenDocument")
    ctx.progress(10)
    mimetype = members.get("mimetype", b"").decode("ascii", "replace").strip()
    if mimetype not in MIMETYPES:
        raise Rejected("The OpenDocument package has a missing or unsupported mimetype "
                       f"({mimetype[:60]!r}).", RejectionCode.DAMAGED)
    if order and order[0] != "mimetype":
        ctx.add("structure", "mimetype", action="converted", detail="mimetype moved to the front")
    out_ext = MIMETYPES[mimetype]
    if "META-INF/manifest.xml" not in members:
        raise Rejected("The OpenDocument package has no manifest (damaged package).",
                       RejectionCode.DAMAGED)
    manifest = parse_xml(members["META-INF/manifest.xml"], "META-INF/manifest.xml")
    media_types: dict[str, str] = {}
    root_version = None
    for entry in manifest:
        if _local(entry) != "file-entry":
            continue
        if any(_local(c) == "encryption-data" for c in entry.iter()):
            raise Rejected("The OpenDocument file is encrypted (password-protected); it cannot "
                           "be inspected, so it was not processed.", RejectionCode.ENCRYPTED)
        path = entry.get(f"{{{MANIFEST_NS}}}full-path") or ""
        media_types[path] = entry.get(f"{{{MANIFEST_NS}}}media-type") or ""
        if path == "/":
            root_version = entry.get(f"{{{MANIFEST_NS}}}version")
    if "content.xml" not in members:
        raise Rejected("The OpenDocument package has no content.xml (damaged package).",
                       RejectionCode.DAMAGED)

    # Sub-documents kept: chart and formula objects; with the embeddedFiles policy "keep" or
    # "sanitize", embedded OpenDocument objects (texts, sheets, drawings...) too, cleaned like
    # the document itself.
    embedded = ctx.decides(Rule.EMBEDDED_FILES) in (Action.KEEP, Action.SANITIZE)
    safe_dirs = {p for p, t in media_types.items()
                 if p.endswith("/") and p != "/" and (
                     t in SAFE_OBJECT_TYPES or (embedded and t.split(";")[0] in MIMETYPES))
                 and not p.startswith(("Basic/", "Scripts/", "Dialogs/", "Configurations2/"))}
    for d in sorted(safe_dirs):
        if media_types[d] not in SAFE_OBJECT_TYPES:
            ctx.add("embedded_object", d, action="converted",
                    detail=f"embedded document ({media_types[d][:80]}) cleaned and kept")
    kept: dict[str, bytes] = {}

    xml_names = []
    for name in order:
        if name in ("mimetype", "META-INF/manifest.xml"):
            continue
        data = members[name]
        top = name.split("/", 1)[0]
        obj_dir = next((d for d in safe_dirs if name.startswith(d)), None)
        if name in XML_STREAMS or (obj_dir and name[len(obj_dir):] in XML_STREAMS):
            xml_names.append(name)  # cleaned below, once the kept pictures are known
        elif name == "meta.xml" or (obj_dir and name[len(obj_dir):] == "meta.xml"):
            if ctx.decides(Rule.DOCUMENT_METADATA) is Action.KEEP:
                kept[name] = _kept_meta(name, data, ctx)
            else:
                ctx.add("metadata", name, detail="author, dates, statistics and generator removed")
                kept[name] = _neutral_meta()
        elif top in ("Pictures", "ObjectReplacements", "media") or (
                obj_dir and name[len(obj_dir):].startswith(("Pictures/", "ObjectReplacements/"))):
            cleaned = _clean_image(name, data, ctx)
            if cleaned is None:
                ctx.add("invalid_image", name, detail="not a recognised raster or vector image")
            else:
                kept[name] = cleaned
        elif top in ("Basic", "Scripts", "Dialogs"):
            ctx.add("macro", top + "/", detail="script or macro library")
        elif top == "Configurations2":
            ctx.add("macro", top + "/", detail="toolbar, menu and key bindings (can call macros)")
        elif top == "Thumbnails":
            ctx.add("metadata", name, detail="thumbnail preview")
        elif top == "META-INF":
            ctx.add("signature" if "signature" in name else "hidden_part", name,
                    detail="META-INF part")
        elif top.startswith("Object ") or name.startswith("Object"):
            mt = media_types.get(top + "/") or media_types.get(name) or "unknown type"
            ctx.add("embedded_object", top, detail=f"embedded object ({mt})")
        else:
            ctx.add("hidden_part", name, detail="part not used for display")
    available = set(kept) | set(xml_names)
    reviewers = ReviewerAliases()  # one "Author N" per reviewer across the streams
    for name in xml_names:
        kept[name] = _clean_stream(name, members[name], ctx, safe_dirs, available, reviewers)
    ctx.progress(80)

    # The manifest lists exactly what is in the new package.
    man = etree.Element(f"{{{MANIFEST_NS}}}manifest", nsmap={"manifest": MANIFEST_NS})
    if version := manifest.get(f"{{{MANIFEST_NS}}}version"):
        man.set(f"{{{MANIFEST_NS}}}version", version)
    root_entry = etree.SubElement(man, f"{{{MANIFEST_NS}}}file-entry")
    root_entry.set(f"{{{MANIFEST_NS}}}full-path", "/")
    if root_version:
        root_entry.set(f"{{{MANIFEST_NS}}}version", root_version)
    root_entry.set(f"{{{MANIFEST_NS}}}media-type", mimetype)
    for d in sorted(safe_dirs):
        if any(k.startswith(d) for k in kept):
            e = etree.SubElement(man, f"{{{MANIFEST_NS}}}file-entry")
            e.set(f"{{{MANIFEST_NS}}}full-path", d)
            e.set(f"{{{MANIFEST_NS}}}media-type", media_types[d])
    for name, data in kept.items():
        e = etree.SubElement(man, f"{{{MANIFEST_NS}}}file-entry")
        e.set(f"{{{MANIFEST_NS}}}full-path", name)
        mt = "text/xml" if name.endswith(".xml") else _image_mime(data)
        e.set(f"{{{MANIFEST_NS}}}media-type", mt)
    out = [("mimetype", mimetype.encode("ascii"))]
    out += list(kept.items())
    out.append(("META-INF/manifest.xml", serialize(man)))
    write_package(dst, out, stored_first="mimetype")
    ctx.progress(100)
    return out_ext


def _image_mime(data: bytes) -> str:
    fmt = image_format(data)
    if fmt is None and data.startswith(b"VCLMTF"):
        return "application/x-openoffice-gdimetafile;windows_formatname=\"GDIMetaFile\""
    return {"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "bmp": "image/bmp",
            "tiff": "image/tiff", "emf": "image/x-emf", "wmf": "image/x-wmf",
            "webp": "image/webp"}.get(fmt or "", "application/octet-stream")


def _clean_image(name: str, data: bytes, ctx: Context) -> bytes | None:
    if data.startswith(b"VCLMTF"):
        return data  # LibreOffice's own metafile (object replacement images)
    fmt = image_format(data)
    if fmt is None:
        return None
    return clean_picture(data, fmt, ctx, name)


def _kept_meta(name: str, data: bytes, ctx: Context) -> bytes:
    """meta.xml the policy keeps, without what points outside (template, auto-reload)."""
    root = parse_xml(data, name)
    for el in list(root.iter("{*}template", "{*}auto-reload")):
        if el.get(f"{{{XLINK_NS}}}href"):
            ctx.add("external_relationship", name, detail=f"meta {_local(el)} reference")
        remove_element(el)
    ctx.add("metadata", name, action="kept", detail="document properties kept")
    return serialize(root)


def _drop_hidden(name: str, root: etree._Element, ctx: Context) -> None:
    """Hidden sheets, slides, sections and text leave the document (hiddenContent remove)."""
    hidden_styles: dict[str, str] = {}
    for style in root.iter("{*}style"):
        style_name = style.get(f"{{{STYLE_NS}}}name") or ""
        for props in style:
            local = _local(props)
            if local == "table-properties" and props.get(f"{{{TABLE_NS}}}display") == "false":
                hidden_styles[style_name] = "hidden_sheet"
            elif local == "drawing-page-properties" and \
                    props.get(f"{{{PRESENTATION_NS}}}visibility") == "hidden":
                hidden_styles[style_name] = "hidden_slide"
            elif local == "text-properties" and props.get(f"{{{TEXT_NS}}}display") == "none":
                hidden_styles[style_name] = "hidden_text"
    doomed: list[tuple[etree._Element, str, str]] = []
    for el in root.iter(f"{{{TABLE_NS}}}table", f"{{{DRAW_NS}}}page", f"{{{TEXT_NS}}}section",
                        f"{{{TEXT_NS}}}hidden-text", f"{{{TEXT_NS}}}hidden-paragraph",
                        f"{{{TEXT_NS}}}span", f"{{{TEXT_NS}}}p"):
        local = _local(el)
        style_name = el.get(f"{{{TABLE_NS}}}style-name") or el.get(
            f"{{{DRAW_NS}}}style-name") or el.get(f"{{{TEXT_NS}}}style-name") or ""
        if local in ("hidden-text", "hidden-paragraph"):
            doomed.append((el, "hidden_text", f"conditionally hidden {local}"))
        elif local == "section" and el.get(f"{{{TEXT_NS}}}display") == "none":
            doomed.append((el, "hidden_text", "hidden section"))
        elif style_name in hidden_styles:
            kind = hidden_styles[style_name]
            label = el.get(f"{{{TABLE_NS}}}name") or el.get(f"{{{DRAW_NS}}}name") or local
            doomed.append((el, kind, f"{label[:80]} removed"))
    for el, kind, detail in doomed:
        if el.getparent() is None or _detached(el, root):
            continue
        ctx.add(kind, name, detail=detail)
        remove_element(el)


def _drop_forms(name: str, root: etree._Element, ctx: Context) -> None:
    """Form fields and their controls leave the document (formFields remove)."""
    forms = list(root.iter(f"{{{FORM_NS}}}form"))
    controls = list(root.iter(f"{{{DRAW_NS}}}control"))
    for el in forms + controls:
        if el.getparent() is not None:
            remove_element(el)
    if forms or controls:
        ctx.add("form_field", name, detail=f"{plural(len(forms), 'form')} and "
                f"{plural(len(controls), 'control')} removed")


def _neutral_meta() -> bytes:
    return serialize(etree.fromstring(
        f'<office:document-meta xmlns:office="{OFFICE_NS}" office:version="1.2">'
        "<office:meta/></office:document-meta>".encode()))


def _clean_stream(name: str, data: bytes, ctx: Context, safe_dirs: set[str], members: set[str],
                  reviewers: ReviewerAliases | None = None) -> bytes:
    root = parse_xml(_without_math_doctype(data), name)
    keep_links = ctx.policy.keep_links
    if name.endswith("settings.xml"):
        for el in list(root.iter("{*}config-item", "{*}config-item-set")):
            item = el.get("{urn:oasis:names:tc:opendocument:xmlns:config:1.0}name") or ""
            if item in PRINTER_ITEMS:
                ctx.add("printer_settings", name, detail=item)
                remove_element(el)
        return serialize(root)
    _clean_review(name, root, ctx, reviewers or ReviewerAliases())
    if ctx.decides(Rule.HIDDEN_CONTENT) is not Action.KEEP:
        _drop_hidden(name, root, ctx)
    if ctx.decides(Rule.FORM_FIELDS) is not Action.KEEP:
        _drop_forms(name, root, ctx)
    keep_remote = ctx.decides(Rule.EXTERNAL_REFERENCES) is Action.KEEP
    # Elements of interest only, filtered in C by lxml, in document order.
    wanted = [*DROP, *UNWRAP, "object", "binary-data", "image"]
    for el in list(root.iter(*[f"{{*}}{n}" for n in wanted])):
        if el is not root and _detached(el, root):
            continue
        lname = _local(el)
        if lname in LINKED and keep_remote and \
                _web_address(el.get(f"{{{XLINK_NS}}}href") or ""):
            continue  # its web address is kept (and reported) with the other references
        if lname in DROP:
            if lname != "scripts" or len(el):  # LibreOffice writes an empty office:scripts
                ctx.add(DROP[lname], name, detail=lname)
            frame = el.getparent()
            remove_element(el)
            _drop_empty_frame(frame)
        elif lname in UNWRAP:
            ctx.add(UNWRAP[lname], name, detail=lname, action="converted")
            unwrap(el)
        elif lname == "object":
            href = el.get(f"{{{XLINK_NS}}}href") or ""
            target = _internal_path(href)
            if target is None or not any(target.rstrip("/") + "/" == d for d in safe_dirs):
                ctx.add("embedded_object", name,
                        detail=f"object {href[:80]} (replacement image kept)")
                frame = el.getparent()
                remove_element(el)
                _drop_empty_frame(frame)
        elif lname == "binary-data":
            if not _clean_binary_data(el, ctx, name):
                ctx.add("invalid_image", name, detail="inline binary data that is not an image")
                holder = el.getparent()
                frame = holder.getparent() if holder is not None else None
                remove_element(holder if holder is not None and holder is not root else el)
                _drop_empty_frame(frame)
        elif lname == "image":
            image_href = el.get(f"{{{XLINK_NS}}}href")
            if image_href is not None:
                target = _internal_path(image_href)
                if target is None and keep_remote and _web_address(image_href):
                    pass  # a linked picture at a web address: kept with the other references
                elif target is None or target not in members:
                    ctx.add("external_relationship", name, detail=f"image {image_href[:100]}")
                    frame = el.getparent()
                    remove_element(el)
                    _drop_empty_frame(frame)
    for value in root.xpath(f"//@*[namespace-uri()='{XLINK_NS}' and local-name()='href']"):
        el = value.getparent()
        if el is not root and _detached(el, root):
            continue
        _clean_href(el, str(value), name, ctx, keep_links, members, keep_remote)
    _clean_mathml(name, root, ctx, keep_links, members, keep_remote)
    pred = (f"namespace-uri()='{TABLE_NS}' and (local-name()='formula' or "
            "local-name()='condition')")
    for value in root.xpath(f"//@*[{pred}]"):
        el, attr, text = value.getparent(), value.attrname, str(value)
        if _DANGEROUS_FORMULA.search(_STRING.sub('""', text)) and attr in el.attrib:
            if attr.endswith("}formula"):
                ctx.add("formula", name, detail=f"formula {text[:100]} replaced by its value",
                       action="converted")
            else:
                ctx.add("formula", name, detail="validation condition with external reference")
            del el.attrib[attr]
    return serialize(root)


# ------------------------------------------------------------------ formulas (MathML)

MATHML_NS = "http://www.w3.org/1998/Math/MathML"
# OpenOffice.org wrote formula streams with this DOCTYPE (public identifier, no internal subset,
# never loaded by anyone): the one DOCTYPE taken out instead of refusing the stream.
_MATH_DOCTYPE = re.compile(
    rb'^(\s*(?:<\?xml[^>]*\?>)?\s*)<!DOCTYPE\s+math:math\s+PUBLIC\s+"-//OpenOffice\.org//DTD '
    rb'Modified W3C MathML 1\.01//EN"\s+"math\.dtd"\s*>')


def _without_math_doctype(data: bytes) -> bytes:
    return _MATH_DOCTYPE.sub(rb"\1", data[:4096], count=1) + data[4096:] \
        if b"<!DOCTYPE math:math" in data[:4096] else data


def _clean_mathml(name: str, root: etree._Element, ctx: Context, keep_links: bool,
                  members: set[str], keep_remote: bool = False) -> None:
    """A formula's MathML stays as written; only what could reach outside goes: MathML 3
    `href` links (kept as plain links when the policy keeps them) and `mglyph` pictures that
    are not part of the package."""
    for el in root.iter(f"{{{MATHML_NS}}}*"):
        href = el.get("href")
        if href is not None and not _safe_link(href, keep_links):
            ctx.add("hyperlink", name, detail=f"formula link {href[:100]}", action="converted")
            del el.attrib["href"]
        src = el.get("src")
        if src is not None and keep_remote and _web_address(src):
            ctx.add("external_relationship", name, action="kept",
                    detail=f"formula glyph {src[:100]}")
        elif src is not None and _internal_path(src) not in members:
            ctx.add("external_relationship", name, detail=f"formula glyph {src[:100]}")
            del el.attrib["src"]


def _clean_binary_data(el: etree._Element, ctx: Context, where: str) -> bool:
    """Inline base64 pictures are decoded, checked and re-encoded like packaged ones."""
    import base64
    import binascii

    try:
        raw = base64.b64decode("".join((el.text or "").split()), validate=True)
    except (binascii.Error, ValueError):
        return False
    cleaned = _clean_image(f"{where} inline picture", raw, ctx)
    if cleaned is None:
        return False
    el.text = base64.b64encode(cleaned).decode("ascii")
    return True


def _detached(el: etree._Element, root: etree._Element) -> bool:
    return all(anc is not root for anc in el.iterancestors())


def _drop_empty_frame(frame: etree._Element | None) -> None:
    if frame is not None and _local(frame) == "frame" and not len(frame):
        remove_element(frame)


def _internal_path(href: str) -> str | None:
    try:
        parts = urlsplit(href)
    except ValueError:
        return None
    if parts.scheme or parts.netloc or href.startswith(("\\", "/")):
        return None
    path = posixpath.normpath(unquote(parts.path))
    if path.startswith("..") or path in (".", ""):
        return None
    return path


def _safe_link(href: str, keep_links: bool) -> bool:
    if href.startswith("#"):
        return True  # jump inside the document
    try:
        parts = urlsplit(href.strip())
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    return keep_links and scheme in SAFE_SCHEMES and (scheme == "mailto" or bool(parts.netloc))


def _web_address(href: str) -> bool:
    """An absolute http or https address (not a file path, a network share or a package
    part)."""
    try:
        parts = urlsplit(href.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.netloc) and \
        "\\" not in href and len(href) <= 4096


def _clean_href(el: etree._Element, href: str, where: str, ctx: Context, keep_links: bool,
                members: set[str], keep_remote: bool = False) -> None:
    lname = _local(el)
    if lname == "a":
        if not _safe_link(href, keep_links):
            ctx.add("hyperlink", where, detail=f"link {href[:100]}", action="converted")
            unwrap(el)
        return
    internal = _internal_path(href)
    if internal is not None and internal in members:
        return  # a part of this package that survived
    if keep_remote and _web_address(href):
        ctx.add("external_relationship", where, action="kept",
                detail=f"{lname} reference {href[:100]}")
        return
    ctx.add("external_relationship", where, detail=f"{lname} reference {href[:100]}")
    del el.attrib[f"{{{XLINK_NS}}}href"]


# ----------------------------------------------------------------------------- review data
# Tracked changes, comments (annotations) and the people behind them. By default (policy
# review_data "remove") every change is accepted, which in ODF means dropping the change
# records: the body already reads as accepted, the deleted text lives only in the records.
# With "anonymise" both stay and each reviewer becomes "Author 1", "Author 2"...

TEXT_NS = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
DC_NS = "http://purl.org/dc/elements/1.1/"
OFFICEOOO_NS = "http://openoffice.org/2009/office"  # presentation comments, rsids
LOEXT_NS = "urn:org:documentfoundation:names:experimental:office:xmlns:loext:1.0"
ANNOTATION_NSS = {OFFICE_NS, OFFICEOOO_NS, LOEXT_NS}
NEUTRAL_DATE = "1970-01-01T00:00:00"
_RSID = (f"namespace-uri()='{OFFICEOOO_NS}' and (local-name()='rsid' or "
         "local-name()='paragraph-rsid')")


def _clean_review(name: str, root: etree._Element, ctx: Context,
                  reviewers: ReviewerAliases) -> None:
    anonymise = ctx.policy.review_data == "anonymise"
    if ctx.decides(Rule.REVIEW_DATA) is Action.KEEP:
        if next(root.iter(f"{{{TEXT_NS}}}changed-region"), None) is not None:
            ctx.add("tracked_changes", name, action="kept", detail="tracked changes kept")
        if next(root.iter(*(f"{{{ns}}}annotation" for ns in ANNOTATION_NSS)), None) is not None:
            ctx.add("comments", name, action="kept", detail="comments kept with their authors")
    else:
        _review_changes(name, root, ctx, reviewers, anonymise)
        _review_annotations(name, root, ctx, reviewers, anonymise)
    rsids = root.xpath(f"//@*[{_RSID}]")
    for value in rsids:
        el = value.getparent()
        if value.attrname in el.attrib:
            del el.attrib[value.attrname]
    if rsids:
        ctx.add("personal_data", name, detail="rsid session identifiers removed",
                rule=Rule.DOCUMENT_METADATA)
    # Word's editing permissions for a named account become bookmarks named after the user.
    perms = [el for el in root.iter(*(f"{{{TEXT_NS}}}{n}" for n in (
        "bookmark", "bookmark-start", "bookmark-end")))
        if (el.get(f"{{{TEXT_NS}}}name") or "").startswith("permission-for-user:")]
    for el in perms:
        remove_element(el)
    if perms:
        ctx.add("personal_data", name, detail="editing permissions naming a user removed")


def _creators(el: etree._Element) -> list[etree._Element]:
    return list(el.iter(f"{{{DC_NS}}}creator"))


def _review_changes(name: str, root: etree._Element, ctx: Context, reviewers: ReviewerAliases,
                    anonymise: bool) -> None:
    records = [el for el in root.iter(f"{{{TEXT_NS}}}tracked-changes",
                                      f"{{{TABLE_NS}}}tracked-changes")]
    markers = list(root.iter(*(f"{{{TEXT_NS}}}{n}" for n in ("change", "change-start",
                                                             "change-end"))))
    if not records and not markers:
        return
    # one change per text:changed-region child, or per table:tracked-changes child
    changes = [c for r in records for el in r
               for c in (el if _local(el) == "changed-region" else [el])
               if isinstance(c.tag, str)]
    count = {n: sum(_local(c) == n for c in changes)
             for n in ("insertion", "deletion", "format-change", "cell-content-change")}
    authors = {(c.text or "").strip() for r in records for c in _creators(r)} - {""}
    if anonymise:
        for record in records:
            for creator in _creators(record):
                creator.text = reviewers.alias(creator.text or "")
            for date in record.iter(f"{{{DC_NS}}}date"):
                date.text = NEUTRAL_DATE  # required in a change record
            reviewers.scrub_text(record)
        if changes:
            ctx.add("tracked_changes", name, action="kept",
                    detail=f"{plural(len(changes), 'tracked change')} kept, authors anonymised")
        return
    for el in records + markers:
        remove_element(el)
    if changes:
        other = len(changes) - count["insertion"] - count["deletion"] - count["format-change"]
        label = "cell edit" if other == count["cell-content-change"] else "other change"
        ctx.add("tracked_changes", name, action="converted", detail=revision_summary(
            count["insertion"], count["deletion"], count["format-change"], len(authors),
            label, other))
    elif markers:
        ctx.add("tracked_changes", name, detail="change marks without change records removed")
    elif records:
        ctx.add("tracked_changes", name, detail="change tracking switched off")


def _review_annotations(name: str, root: etree._Element, ctx: Context, reviewers: ReviewerAliases,
                        anonymise: bool) -> None:
    found = [el for el in root.iter("{*}annotation", "{*}annotation-end")
             if etree.QName(el).namespace in ANNOTATION_NSS]
    notes = [el for el in found if _local(el) == "annotation"]
    if not found:
        return
    authors = {(c.text or "").strip() for n in notes for c in _creators(n)} - {""}
    if anonymise:
        for note in notes:
            who = "".join(c.text or "" for c in _creators(note))
            for creator in _creators(note):
                creator.text = reviewers.alias(creator.text or "")
            for el in list(note.iter("{*}creator-initials", "{*}sender-initials",
                                     f"{{{DC_NS}}}date", "{*}date-string")):
                if _local(el).endswith("initials"):
                    el.text = reviewers.initials(who or el.text or "")
                elif el.getparent() is note:
                    remove_element(el)  # the comment's own date (optional)
        for note in notes:
            reviewers.scrub_text(note)
        ctx.add("comments", name, action="kept",
                detail=f"{plural(len(notes), 'comment')} kept, authors anonymised")
        return
    for el in found:
        remove_element(el)
    ctx.add("comments", name, detail=f"{plural(len(notes), 'comment')} by "
                                     f"{plural(len(authors), 'author')} removed")
