"""EPUB books (EPUB 2 and 3), rebuilt as EPUB.

The book is rebuilt from its package document (the OPF): only resources its manifest lists
survive, each cleaned by its type, and the package is written anew (`mimetype` first and
stored, a fresh `META-INF/container.xml` naming one package document, the OPF, the resources).

- Package document: metadata cut to what readers need (titles, languages, the identifier the
  package names as unique, fixed-layout `rendition:` properties, the EPUB 2 cover pointer and
  refinements of what stays); creators, contributors, dates, publisher, rights, descriptions,
  subjects, other `<meta>` and linked records go. `dcterms:modified`, which EPUB 3 requires,
  is kept with a fixed date. Manifest items that point outside the package (remote resources),
  at missing parts or at resources that cannot be made safe go, with the spine and guide
  entries and fallbacks that name them; `<bindings>` (scripted handlers) goes.
- XHTML chapters (and the navigation document): parsed as XML without DTD, entities or network
  (an EPUB 2 XHTML 1.1 DOCTYPE is dropped, never loaded; `&nbsp;`-style references become their
  characters), then cleaned like HTML (`text.clean_markup`): scripts, event handlers,
  javascript: URLs, forms and their controls, iframes, objects, embeds, `<base>`, refresh and
  every load that is not a resource of this book (remote images, stylesheets, media) removed.
  A chapter that is not well-formed XML is read as HTML and rebuilt as XHTML (a finding).
- CSS: `css.sanitize_css` (no @import, no url() but the book's own resources, no script
  constructs). Pictures (JPEG, PNG, GIF, WebP) are decoded and re-encoded (`image`), SVG is
  rebuilt from its allowlist (`svg`). NCX, SMIL and PLS documents: parsed the same safe way,
  remote references removed.
- Fonts are kept byte for byte when they start like a font file (TrueType, OpenType, WOFF,
  WOFF2, collections); other "fonts" go. Fonts obfuscated with the book's identifier (IDPF or
  Adobe font obfuscation, listed in `META-INF/encryption.xml`) go with that file: they are
  unreadable without it. Audio and video are kept when they start like MP3, MP4, Ogg or WebM.
- `META-INF/encryption.xml` listing anything but font obfuscation (DRM: Adobe ADEPT, Apple
  FairPlay, Readium LCP...) refuses the book (encrypted). `signatures.xml`, `rights.xml`,
  `metadata.xml`, `manifest.xml` and every part the manifest does not list are removed.
- Scripts (JavaScript resources) go; the `scripted` and `remote-resources` item properties go
  with what they announced.
- With the policy's externalReferences `keep`, loads of web addresses (http, https) stay in
  chapters, SVG and CSS, manifest items naming a web address stay (bare: id, href, media
  type) and so does the `remote-resources` property; file paths and other schemes still go.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from lxml import etree

from sanitas.engine.css import RemoteLoads, sanitize_css, web_address
from sanitas.engine.office_package import (
    read_package,
    remove_element,
    serialize,
    unwrap,
    write_package,
)
from sanitas.engine.opc import resolve_target
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, Refused, Rejected, RejectionCode
from sanitas.engine.text import (
    XHTML_NS,
    ParsedXml,
    clean_markup,
    parse_untrusted_xml,
)
from sanitas.engine.text_encoding import decode
from sanitas.engine.xmlsafe import parse_xml, xml_parser

MIMETYPE = b"application/epub+zip"
CONTAINER = "META-INF/container.xml"
CONTAINER_NS = "urn:oasis:names:tc:opendocument:xmlns:container"
OPF_NS = "http://www.idpf.org/2007/opf"
DC_NS = "http://purl.org/dc/elements/1.1/"
ENC_NS = "http://www.w3.org/2001/04/xmlenc#"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
OPF_MEDIA_TYPE = "application/oebps-package+xml"
FONT_OBFUSCATION = frozenset({"http://www.idpf.org/2008/embedding",
                              "http://ns.adobe.com/pdf/enc#RC"})
NEUTRAL_MODIFIED = "2000-01-01T00:00:00Z"
DRM_REASON = ("The book is protected by DRM (its content is encrypted); encrypted books cannot "
              "be inspected and are not accepted.")

XHTML_TYPES = frozenset({"application/xhtml+xml", "text/html"})
XML_TYPES = frozenset({"application/x-dtbncx+xml", "application/smil+xml",
                       "application/pls+xml"})
SCRIPT_TYPES = frozenset({"application/javascript", "text/javascript", "application/ecmascript",
                          "application/x-javascript", "text/ecmascript"})
IMAGE_MAGIC = {"jpeg": ((0, b"\xff\xd8\xff"),), "png": ((0, b"\x89PNG\r\n\x1a\n"),),
               "gif": ((0, b"GIF8"),), "webp": ((0, b"RIFF"), (8, b"WEBP"))}
IMAGE_MEDIA = {"jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
               "webp": "image/webp"}
FONT_MAGIC = (b"\x00\x01\x00\x00", b"OTTO", b"true", b"wOFF", b"wOF2", b"ttcf")
MEDIA_MAGIC = ((0, b"ID3"), (0, b"\xff\xfb"), (0, b"\xff\xf3"), (0, b"\xff\xf2"),
               (4, b"ftyp"), (0, b"OggS"), (0, b"\x1aE\xdf\xa3"))
# Refinements (EPUB 3 `<meta refines>`) of kept titles and identifiers that readers use.
KEPT_REFINEMENTS = frozenset({"title-type", "display-seq", "file-as", "alternate-script",
                              "identifier-type"})
DROPPED_PROPERTIES = frozenset({"scripted", "remote-resources"})
META_INF = {"META-INF/encryption.xml": ("encryption", "font obfuscation information"),
            "META-INF/signatures.xml": ("signature", "digital signatures"),
            "META-INF/rights.xml": ("drm", "rights management information"),
            "META-INF/metadata.xml": ("metadata", "container metadata"),
            "META-INF/manifest.xml": ("hidden_part", "container manifest")}


@dataclass
class _Item:
    element: etree._Element
    id: str
    path: str
    media_type: str


def sanitize(src: Path, dst: Path, ctx: Context, kind: str = "epub") -> str:
    del kind
    members, order = read_package(src, "EPUB book")
    ctx.progress(10)
    if members.get("mimetype", b"").strip() != MIMETYPE:
        raise Rejected("The EPUB book has a missing or wrong mimetype member (damaged book).",
                       RejectionCode.DAMAGED)
    if order[0] != "mimetype":
        ctx.add("structure", "mimetype", action="converted",
                detail="moved to the front of the package")
    obfuscated = _obfuscated_resources(members)
    opf_path = _package_document(members, ctx)
    book = _Book(ctx, members, opf_path, obfuscated)
    package = book.clean()
    container = _container(opf_path)
    out = [("mimetype", MIMETYPE), (CONTAINER, container), (opf_path, serialize(package))]
    out += [(item.path, book.kept[item.path]) for item in book.items]
    write_package(dst, out, stored_first="mimetype")
    ctx.progress(100)
    return "epub"


def _obfuscated_resources(members: dict[str, bytes]) -> set[str]:
    """Resources `META-INF/encryption.xml` lists as obfuscated fonts; refuses any other
    encryption (DRM)."""
    data = members.get("META-INF/encryption.xml")
    if data is None:
        return set()
    root = parse_xml(data, "META-INF/encryption.xml")
    if next(root.iter(f"{{{ENC_NS}}}EncryptedKey"), None) is not None:
        raise Rejected(DRM_REASON, RejectionCode.ENCRYPTED)
    obfuscated: set[str] = set()
    for encrypted in root.iter(f"{{{ENC_NS}}}EncryptedData"):
        method = encrypted.find(f"{{{ENC_NS}}}EncryptionMethod")
        algorithm = method.get("Algorithm") if method is not None else None
        reference = encrypted.find(f"{{{ENC_NS}}}CipherData/{{{ENC_NS}}}CipherReference")
        target = resolve_target("", reference.get("URI") or "") if reference is not None else None
        if algorithm not in FONT_OBFUSCATION or target is None:
            raise Rejected(DRM_REASON, RejectionCode.ENCRYPTED)
        obfuscated.add(target)
    return obfuscated


def _package_document(members: dict[str, bytes], ctx: Context) -> str:
    """The package document (OPF) `META-INF/container.xml` names first."""
    if CONTAINER not in members:
        raise Rejected("The EPUB book has no META-INF/container.xml (damaged book).",
                       RejectionCode.DAMAGED)
    root = parse_xml(members[CONTAINER], CONTAINER)
    rootfiles = [el for el in root.iter(f"{{{CONTAINER_NS}}}rootfile")
                 if (el.get("media-type") or OPF_MEDIA_TYPE).strip() == OPF_MEDIA_TYPE]
    path = resolve_target("", rootfiles[0].get("full-path") or "") if rootfiles else None
    if path is None or path not in members:
        raise Rejected("The EPUB book's container does not name a package document that "
                       "exists (damaged book).", RejectionCode.DAMAGED)
    if len(rootfiles) > 1:
        ctx.add("structure", CONTAINER, detail=f"{len(rootfiles) - 1} further rendition(s) "
                "of the book; the first is kept")
    return path


def _container(opf_path: str) -> bytes:
    root = etree.Element(f"{{{CONTAINER_NS}}}container", nsmap={None: CONTAINER_NS})
    root.set("version", "1.0")
    rootfile = etree.SubElement(etree.SubElement(root, f"{{{CONTAINER_NS}}}rootfiles"),
                                f"{{{CONTAINER_NS}}}rootfile")
    rootfile.set("full-path", opf_path)
    rootfile.set("media-type", OPF_MEDIA_TYPE)
    return serialize(root)


def _matches(data: bytes, signature: Iterable[tuple[int, bytes]]) -> bool:
    return all(data[offset:offset + len(part)] == part for offset, part in signature)


class _Book:
    def __init__(self, ctx: Context, members: dict[str, bytes], opf_path: str,
                 obfuscated: set[str]) -> None:
        self.ctx = ctx
        self.members = members
        self.opf_path = opf_path
        self.obfuscated = obfuscated
        self.items: list[_Item] = []
        self.kept: dict[str, bytes] = {}
        # externalReferences keep: web addresses (remote pictures, style sheets, media) stay
        self.keep_remote = ctx.decides(Rule.EXTERNAL_REFERENCES) is Action.KEEP

    # --- the package document ------------------------------------------------------------

    def clean(self) -> etree._Element:
        where = f"The book's package document {self.opf_path}"
        parsed = self._parse(self.members[self.opf_path], self.opf_path, where)
        package = parsed.root
        if package.tag != f"{{{OPF_NS}}}package":
            raise Rejected(f"{where} is not an EPUB package document.", RejectionCode.DAMAGED)
        manifest = package.find(f"{{{OPF_NS}}}manifest")
        spine = package.find(f"{{{OPF_NS}}}spine")
        if manifest is None or spine is None:
            raise Rejected(f"{where} has no manifest or no spine (damaged book).",
                           RejectionCode.DAMAGED)
        self._collect_items(manifest)
        self._clean_resources()
        ids = {item.id for item in self.items}
        self._clean_metadata(package, ids)
        self._clean_manifest_references(ids)
        self._clean_spine(spine, ids)
        self._clean_guide(package)
        for child in list(package):
            if isinstance(child.tag, str) and etree.QName(child).localname not in (
                    "metadata", "manifest", "spine", "guide"):
                name = etree.QName(child).localname
                self.ctx.add("javascript" if name == "bindings" else "hidden_part",
                             self.opf_path, detail=f"<{name}> of the package document")
                remove_element(child)
        self._report_unlisted()
        return package

    def _collect_items(self, manifest: etree._Element) -> None:
        seen: set[str] = set()
        for el in list(manifest):
            if not isinstance(el.tag, str) or el.tag != f"{{{OPF_NS}}}item":
                remove_element(el)
                continue
            href = (el.get("href") or "").strip()
            item_id = el.get("id") or ""
            media_type = (el.get("media-type") or "").split(";")[0].strip().lower()
            path = resolve_target(self.opf_path, href) if _relative(href) else None
            problem = None
            if path is None:
                problem = ("external_reference", f"remote resource {href[:100]}")
            elif path not in self.members:
                problem = ("missing_resource", f"{href[:100]} is not in the book")
            elif path in seen or not item_id:
                problem = ("structure", f"{href[:100]} listed twice or without an id")
            elif path in ("mimetype", self.opf_path) or path.startswith("META-INF/"):
                problem = ("structure", f"{href[:100]} is a part of the container")
            if path is None and self.keep_remote and web_address(href) and item_id:
                for attr in list(el.attrib):
                    if attr not in ("id", "href", "media-type"):
                        del el.attrib[attr]  # fallbacks and properties named local items
                self.ctx.add("external_reference", self.opf_path, action="kept",
                             detail=f"manifest item: remote resource {href[:100]}")
                continue
            if problem is not None:
                self.ctx.add(problem[0], self.opf_path, detail=f"manifest item: {problem[1]}")
                remove_element(el)
                continue
            assert path is not None  # a missing path is a problem above
            seen.add(path)
            self.items.append(_Item(el, item_id, path, media_type))

    def _clean_resources(self) -> None:
        """Each listed resource cleaned by its type; what cannot be made safe goes. Pictures,
        fonts and media first, then SVG and CSS, then documents: a document may only load
        resources that were kept."""
        def stage(item: _Item) -> int:
            if item.media_type in XHTML_TYPES or item.media_type in XML_TYPES:
                return 3
            return {"image/svg+xml": 1, "text/css": 2}.get(item.media_type, 0)

        ordered = sorted(self.items, key=stage)
        for index, item in enumerate(ordered):
            self.ctx.progress(10 + 80 * index // max(len(ordered), 1))
            data = self._clean_resource(item)
            if data is None:
                remove_element(item.element)
            else:
                self.kept[item.path] = data
        self.items = [item for item in self.items if item.path in self.kept]

    def _clean_resource(self, item: _Item) -> bytes | None:
        data, path, media_type = self.members[item.path], item.path, item.media_type
        if path in self.obfuscated:
            self.ctx.add("obfuscated_font", path, detail="font obfuscated with the book's "
                         "identifier (unreadable once META-INF/encryption.xml is removed)")
            return None
        if media_type in XHTML_TYPES:
            return self._xhtml(item)
        if media_type in XML_TYPES:
            return self._xml(path, data)
        if media_type == "text/css":
            return self._css(path, data)
        if media_type == "image/svg+xml":
            return self._isolated(path, lambda ctx: _svg(data, ctx))
        if media_type.startswith("image/"):
            return self._image(item)
        if "font" in media_type or "opentype" in media_type or "sfnt" in media_type:
            if data.startswith(FONT_MAGIC):
                return data
            self.ctx.add("invalid_font", path, detail="not a font file")
            return None
        if media_type.startswith(("audio/", "video/")):
            if any(_matches(data, (sig,)) for sig in MEDIA_MAGIC):
                return data
            self.ctx.add("embedded_content", path, detail=f"{media_type[:60]} that is not MP3, "
                         "MP4, Ogg or WebM")
            return None
        if media_type in SCRIPT_TYPES:
            self.ctx.add("javascript", path, detail="script resource")
            return None
        self.ctx.add("embedded_content", path,
                     detail=f"resource of type {media_type[:80] or 'unknown'} (not kept)")
        return None

    def _clean_metadata(self, package: etree._Element, ids: set[str]) -> None:
        metadata = package.find(f"{{{OPF_NS}}}metadata")
        if metadata is None:
            metadata = etree.Element(f"{{{OPF_NS}}}metadata")
            package.insert(0, metadata)
        for wrapper in metadata.findall(f"{{{OPF_NS}}}dc-metadata") + metadata.findall(
                f"{{{OPF_NS}}}x-metadata"):  # OEBPS 1.x layout
            unwrap(wrapper)
        unique = package.get("unique-identifier") or ""
        identifiers = metadata.findall(f"{{{DC_NS}}}identifier")
        chosen = next((el for el in identifiers if unique and el.get("id") == unique),
                      identifiers[0] if identifiers else None)
        if chosen is None:
            chosen = etree.SubElement(metadata, f"{{{DC_NS}}}identifier")
            chosen.text = f"urn:uuid:{uuid.uuid4()}"
            self.ctx.add("structure", self.opf_path, action="converted",
                         detail="the book had no identifier; a random one was added")
        if not chosen.get("id") or chosen.get("id") != unique:
            book_id = chosen.get("id") or "book-id"
            chosen.set("id", book_id)
            package.set("unique-identifier", book_id)
        removed: dict[str, int] = {}
        kept_ids: set[str] = set()
        keep = self.ctx.decides(Rule.DOCUMENT_METADATA) is Action.KEEP
        kept: list[str] = []
        for el in list(metadata):
            if not isinstance(el.tag, str):
                remove_element(el)
                continue
            qname = etree.QName(el)
            if keep and qname.namespace == DC_NS and el is not chosen:
                for child in list(el):
                    el.remove(child)  # text only
                kept.append(f"dc:{qname.localname}")
                kept_ids.add(el.get("id") or "")
                continue
            if el is chosen or (qname.namespace == DC_NS and qname.localname in (
                    "title", "language")):
                for attr in list(el.attrib):
                    if attr not in ("id", XML_LANG, "dir", f"{{{OPF_NS}}}scheme"):
                        del el.attrib[attr]
                for child in list(el):
                    el.remove(child)
                kept_ids.add(el.get("id") or "")
            elif not (qname.namespace == OPF_NS and qname.localname == "meta"):
                label = f"dc:{qname.localname}" if qname.namespace == DC_NS else qname.localname
                removed[label] = removed.get(label, 0) + 1
                remove_element(el)
        modified = False
        for el in metadata.findall(f"{{{OPF_NS}}}meta"):
            prop, refines = (el.get("property") or "").strip(), (el.get("refines") or "")
            if keep:
                kept.append(prop or el.get("name") or "meta")
                continue
            if prop == "dcterms:modified" and not refines and not modified:
                modified = True
                if (el.text or "").strip() != NEUTRAL_MODIFIED:
                    removed["modification date"] = 1
                el.text = NEUTRAL_MODIFIED
            elif (prop.startswith("rendition:") and not refines) or (
                    prop in KEPT_REFINEMENTS and refines.lstrip("#") in kept_ids - {""}) or (
                    el.get("name") == "cover" and el.get("content") in ids):
                continue
            else:
                removed["meta"] = removed.get("meta", 0) + 1
                remove_element(el)
        if kept:
            self.ctx.add("metadata", self.opf_path, action="kept",
                         detail="kept: " + ", ".join(sorted(set(kept))))
        if removed:
            self.ctx.add("metadata", self.opf_path, detail="removed: " + ", ".join(
                f"{name} x{count}" if count > 1 else name for name, count in removed.items()))

    def _clean_manifest_references(self, ids: set[str]) -> None:
        for item in self.items:
            el = item.element
            for attr in ("fallback", "media-overlay"):
                if el.get(attr) is not None and el.get(attr) not in ids:
                    del el.attrib[attr]
            properties = (el.get("properties") or "").split()
            dropped = DROPPED_PROPERTIES - ({"remote-resources"} if self.keep_remote else set())
            if any(p in dropped for p in properties):
                el.set("properties", " ".join(p for p in properties if p not in dropped))
                if not el.get("properties"):
                    del el.attrib["properties"]

    def _clean_spine(self, spine: etree._Element, ids: set[str]) -> None:
        if spine.get("toc") is not None and spine.get("toc") not in ids:
            del spine.attrib["toc"]
        dropped = 0
        for ref in list(spine):
            if not isinstance(ref.tag, str) or ref.get("idref") not in ids:
                dropped += isinstance(ref.tag, str)
                remove_element(ref)
        if dropped:
            self.ctx.add("structure", self.opf_path,
                         detail=f"{dropped} reading-order entr{'y' if dropped == 1 else 'ies'} "
                         "whose document was removed")
        if not len(spine):
            raise Rejected("Nothing readable is left in the book once its unsafe or missing "
                           "chapters are removed.", RejectionCode.NO_CONTENT)

    def _clean_guide(self, package: etree._Element) -> None:
        guide = package.find(f"{{{OPF_NS}}}guide")
        if guide is None:
            return
        for ref in list(guide):
            href = (ref.get("href") or "").strip() if isinstance(ref.tag, str) else ""
            target = resolve_target(self.opf_path, href) if _relative(href) else None
            if target not in self.kept:
                remove_element(ref)
        if not len(guide):
            remove_element(guide)

    def _report_unlisted(self) -> None:
        for name in self.members:
            if name in self.kept or name in ("mimetype", CONTAINER, self.opf_path):
                continue
            if name in META_INF:
                kind, what = META_INF[name]
                self.ctx.add(kind, name, detail=what)
            else:
                self.ctx.add("unreferenced_part", name,
                             detail="not listed in the book's manifest")

    # --- resources -------------------------------------------------------------------------

    def _resource(self, source: str) -> Callable[[str], bool]:
        """Whether a relative URL in `source` names a kept resource of the book."""
        def kept(url: str) -> bool:
            target = resolve_target(source, url.strip())
            return target is not None and target in self.kept
        return kept

    def _parse(self, data: bytes, path: str, where: str,
               drop: Callable[[str, str], None] | None = None) -> ParsedXml:
        parsed = parse_untrusted_xml(data, where, drop or (lambda kind, what: None))
        if parsed.entities:
            self.ctx.add("xml_entities", path, detail=f"{parsed.entities} entity declarations "
                         "(none expanded)")
        return parsed

    def _report(self, path: str, removed: dict[tuple[str, str], int],
                remote: RemoteLoads | None = None) -> None:
        for (kind, what), count in sorted(removed.items()):
            self.ctx.add(kind, f"{path} {what}", detail=f"{count} occurrence(s)")
        for what, count in sorted(remote.kept.items() if remote is not None else ()):
            self.ctx.add("external_reference", f"{path} {what}", action="kept",
                         detail=f"{count} occurrence(s)")

    def _xhtml(self, item: _Item) -> bytes | None:
        path = item.path
        removed: dict[tuple[str, str], int] = {}

        def drop(kind: str, what: str) -> None:
            removed[(kind, what)] = removed.get((kind, what), 0) + 1

        try:
            root = self._parse(self.members[path], path, f"The chapter {path}", drop).root
        except Rejected as exc:
            if exc.code != RejectionCode.DAMAGED:
                raise
            repaired = _xhtml_from_html(self.members[path])
            if repaired is None:
                self.ctx.add("invalid_part", path, detail=exc.reason)
                return None
            root = repaired
            self.ctx.add("structure", path, action="converted",
                         detail="not well-formed XHTML; rebuilt from its HTML reading")
        remote = RemoteLoads(self.keep_remote)
        clean_markup(root, drop, keep_links=self.ctx.policy.keep_links, plain_is_html=True,
                     resource=self._resource(path), remote=remote)
        self._report(path, removed, remote)
        if item.media_type != "application/xhtml+xml":
            item.element.set("media-type", "application/xhtml+xml")
        return etree.tostring(root, xml_declaration=True, encoding="UTF-8")

    def _xml(self, path: str, data: bytes) -> bytes | None:
        removed: dict[tuple[str, str], int] = {}

        def drop(kind: str, what: str) -> None:
            removed[(kind, what)] = removed.get((kind, what), 0) + 1

        try:
            root = self._parse(data, path, f"The book's part {path}", drop).root
        except Rejected as exc:
            if exc.code != RejectionCode.DAMAGED:
                raise
            self.ctx.add("invalid_part", path, detail=exc.reason)
            return None
        remote = RemoteLoads(self.keep_remote)
        clean_markup(root, drop, keep_links=self.ctx.policy.keep_links,
                     resource=self._resource(path), remote=remote)
        for el in root.iter():  # NCX, SMIL, PLS: references stay inside the book
            for attr in list(el.attrib) if isinstance(el.tag, str) else ():
                value = el.attrib[attr].strip()
                if attr.rpartition("}")[2] in ("src", "href") and not (
                        value.startswith("#") or _relative(value)):
                    if remote(value, "reference to a web address"):
                        continue
                    drop("external_reference", f"reference to {value[:60]!r}")
                    del el.attrib[attr]
        self._report(path, removed, remote)
        return etree.tostring(root, xml_declaration=True, encoding="UTF-8")

    def _css(self, path: str, data: bytes) -> bytes:
        removed: dict[tuple[str, str], int] = {}

        def drop(kind: str, what: str) -> None:
            removed[(kind, what)] = removed.get((kind, what), 0) + 1

        text, _encoding = decode(data)
        text = re.sub(r"^\s*@charset\s+[^;]*;", "", text, count=1)  # written back as UTF-8
        remote = RemoteLoads(self.keep_remote)
        css = sanitize_css(text, drop, self._resource(path), remote)
        self._report(path, removed, remote)
        return css.encode("utf-8")

    def _image(self, item: _Item) -> bytes | None:
        from sanitas.engine import image

        data = self.members[item.path]
        kind = next((k for k, sig in IMAGE_MAGIC.items() if _matches(data, sig)), None)
        if kind is None:
            self.ctx.add("invalid_image", item.path,
                         detail="not a JPEG, PNG, GIF or WebP picture")
            return None
        cleaned = self._isolated(item.path, lambda ctx: image.sanitize_bytes(data, kind, ctx))
        if cleaned is not None and item.media_type != IMAGE_MEDIA[kind]:
            item.element.set("media-type", IMAGE_MEDIA[kind])
            self.ctx.add("structure", item.path, action="converted",
                         detail=f"declared as {item.media_type[:60]}, is {IMAGE_MEDIA[kind]}")
        return cleaned

    def _isolated(self, path: str, clean: Callable[[Context], bytes]) -> bytes | None:
        """Run another family's cleaner on one resource; its findings are reported under the
        resource's name, and a refusal drops the resource only."""
        inner = Context(mode=self.ctx.mode, policy=self.ctx.policy, workdir=self.ctx.workdir,
                        depth=self.ctx.depth)
        try:
            data = clean(inner)
        except Refused:
            raise  # the policy refuses such content: the whole book is refused
        except Rejected as exc:
            self.ctx.add("invalid_part", path, detail=exc.reason)
            return None
        for finding in inner.closed_findings():
            self.ctx.record(finding.kind, f"{path}: {finding.location}", action=finding.action,
                         detail=finding.detail)
        return data


def _svg(data: bytes, ctx: Context) -> bytes:
    from sanitas.engine import svg

    return svg.sanitize_svg_bytes(data, ctx)


def _relative(href: str) -> bool:
    """A reference to a part of the same package (no scheme, no host, not absolute)."""
    from urllib.parse import urlsplit

    if not href or href.startswith(("/", "\\")):
        return False
    try:
        parts = urlsplit(href)
    except ValueError:
        return False
    return not parts.scheme and not parts.netloc


def _xhtml_from_html(data: bytes) -> etree._Element | None:
    """A chapter that is not well-formed XML, read as HTML (no scripts run, nothing loaded) and
    turned into an XHTML tree; None when even that fails."""
    import lxml.html

    text, _encoding = decode(data)
    text = re.sub(r"^\s*<\?xml[^>]*>", "", text, count=1)
    parser = lxml.html.HTMLParser(remove_comments=True, remove_pis=True, no_network=True,
                                  default_doctype=False)
    try:
        document = lxml.html.document_fromstring(text, parser=parser)
        as_xml = lxml.html.tostring(document, method="xml", encoding="UTF-8")
        old = etree.fromstring(as_xml, xml_parser(remove_pis=False, remove_comments=False,
                                                  collect_ids=True))
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None
    root = etree.Element(f"{{{XHTML_NS}}}html", nsmap={None: XHTML_NS})
    for name, value in old.attrib.items():
        if not name.startswith("{"):
            root.set(name, value)
    root.text = old.text
    for child in list(old):
        root.append(child)
    for el in root.iter():
        if isinstance(el.tag, str) and not el.tag.startswith("{"):
            el.tag = f"{{{XHTML_NS}}}{el.tag}"
    return root

