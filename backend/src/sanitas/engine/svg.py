"""SVG: parsed without entities, DTD or network; rebuilt from an allowlist of presentation
elements and attributes. No script, event handler, foreignObject, external or javascript:
reference survives; embedded raster images are themselves re-encoded. Document metadata goes
too: `<metadata>` (RDF: author, licence), `<title>` and `<desc>` (editors write the file name,
the author or "Created with ..." there), editor namespaces (Inkscape, Sodipodi, Illustrator,
Sketch) and comments. With the policy's externalReferences `keep`, references to web addresses
(http, https: pictures, `<use>` of another file, CSS url() and @import) stay; file paths and
other schemes still go."""

from __future__ import annotations

import base64
import re
from pathlib import Path

from lxml import etree

from sanitas.engine.css import Removals, sanitize_css
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, Refused, Rejected, RejectionCode
from sanitas.engine.xmlsafe import xml_parser

SVG_NS = "http://www.w3.org/2000/svg"
XLINK_NS = "http://www.w3.org/1999/xlink"
XML_NS = "http://www.w3.org/XML/1998/namespace"
MAX_SVG_BYTES = 50 * 1024 * 1024
MAX_ELEMENTS = 500_000

ALLOWED_ELEMENTS = {
    "svg", "g", "defs", "symbol", "use", "path", "rect", "circle", "ellipse",
    "line", "polyline", "polygon", "text", "tspan", "textPath", "linearGradient",
    "radialGradient", "stop", "pattern", "clipPath", "mask", "marker", "filter", "image", "style",
    "a", "view", "switch", "animate", "animateTransform", "animateMotion", "mpath", "set",
    "feBlend", "feColorMatrix", "feComponentTransfer", "feComposite", "feConvolveMatrix",
    "feDiffuseLighting", "feDisplacementMap", "feDistantLight", "feDropShadow", "feFlood",
    "feFuncA", "feFuncB", "feFuncG", "feFuncR", "feGaussianBlur", "feImage", "feMerge",
    "feMergeNode", "feMorphology", "feOffset", "fePointLight", "feSpecularLighting",
    "feSpotLight", "feTile", "feTurbulence",
}
ALLOWED_ATTRIBUTES = frozenset([
    "id", "class", "style", "x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "rx", "ry", "fx",
    "fy", "fr", "width", "height", "d", "points", "transform", "viewBox", "preserveAspectRatio",
    "version", "baseProfile", "fill", "fill-opacity", "fill-rule", "stroke", "stroke-width",
    "stroke-opacity", "stroke-linecap", "stroke-linejoin", "stroke-miterlimit", "stroke-dasharray",
    "stroke-dashoffset", "opacity", "color", "display", "visibility", "font-family", "font-size",
    "font-weight", "font-style", "font-variant", "font-stretch", "font-size-adjust", "font",
    "text-anchor", "dominant-baseline", "alignment-baseline", "baseline-shift", "letter-spacing",
    "word-spacing", "text-decoration", "writing-mode", "direction", "unicode-bidi", "dx", "dy",
    "rotate", "textLength", "lengthAdjust", "startOffset", "method", "spacing", "side", "path",
    "gradientUnits", "gradientTransform", "spreadMethod", "offset", "stop-color", "stop-opacity",
    "patternUnits", "patternContentUnits", "patternTransform", "clipPathUnits", "clip-path",
    "clip-rule", "clip", "mask", "maskUnits", "maskContentUnits", "marker-start", "marker-mid",
    "marker-end", "marker", "markerWidth", "markerHeight", "markerUnits", "refX", "refY", "orient",
    "filter", "filterUnits", "primitiveUnits", "in", "in2", "result", "stdDeviation", "mode",
    "type", "values", "tableValues", "slope", "intercept", "amplitude", "exponent", "k1", "k2",
    "k3", "k4", "operator", "order", "kernelMatrix", "divisor", "bias", "targetX", "targetY",
    "edgeMode", "kernelUnitLength", "preserveAlpha", "surfaceScale", "diffuseConstant",
    "specularConstant", "specularExponent", "lighting-color", "flood-color", "flood-opacity",
    "scale", "xChannelSelector", "yChannelSelector", "radius", "baseFrequency", "numOctaves",
    "seed", "stitchTiles", "azimuth", "elevation", "z", "pointsAtX", "pointsAtY", "pointsAtZ",
    "limitingConeAngle", "shape-rendering", "text-rendering", "image-rendering",
    "color-interpolation", "color-interpolation-filters", "color-rendering", "color-profile",
    "vector-effect", "paint-order", "overflow", "mix-blend-mode", "isolation", "pathLength",
    "enable-background", "kerning", "glyph-orientation-horizontal", "glyph-orientation-vertical",
    # Conditional processing: a <switch> draws its first child whose conditions hold, so
    # removing them would draw a fallback instead. They only name features and languages.
    "systemLanguage", "requiredExtensions", "requiredFeatures",
    "lang", "role", "aria-label", "aria-hidden", "focusable", "attributeName",
    "attributeType", "begin", "dur", "end", "repeatCount", "repeatDur", "from", "to", "by",
    "keyTimes", "keySplines", "calcMode", "additive", "accumulate", "restart", "keyPoints", "min",
    "max", "href"
])
# Animation may not retarget what a reference points to or install handlers.
FORBIDDEN_ANIMATION_TARGETS = re.compile(r"^(href|xlink:href|on.*|style|src|values|from|to)$",
                                         re.IGNORECASE)
SAFE_LINK = re.compile(r"^(https?://|mailto:)", re.IGNORECASE)
DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|jpg|gif|webp);base64,", re.IGNORECASE)
URL_REF = re.compile(r"url\(\s*(['\"]?)(.*?)\1\s*\)", re.IGNORECASE | re.DOTALL)


def sanitize(src: Path, dst: Path, ctx: Context, kind: str = "svg") -> str:
    data = src.read_bytes()
    if len(data) > MAX_SVG_BYTES:
        raise Rejected("The SVG image is too large.", RejectionCode.TOO_LARGE)
    dst.write_bytes(sanitize_svg_bytes(data, ctx))
    return "svg"


def _parser() -> etree.XMLParser:
    return xml_parser()


def sanitize_svg_bytes(data: bytes, ctx: Context) -> bytes:
    try:
        root = etree.fromstring(data, _parser())
    except etree.XMLSyntaxError as exc:
        raise Rejected(f"The SVG image is not well-formed XML ({exc.msg}).",
                       RejectionCode.DAMAGED) from None
    if root is None or etree.QName(root).localname != "svg":
        raise Rejected("The file is not an SVG image.", RejectionCode.UNSUPPORTED_TYPE)
    docinfo = root.getroottree().docinfo
    if docinfo.internalDTD is not None:
        dtd = docinfo.internalDTD
        entities = list(dtd.iterentities())
        ctx.add("xml_entities" if entities else "dtd", "DOCTYPE", action="removed",
                detail=f"{len(entities)} entity declarations (XXE / entity expansion)" if entities
                else "internal DTD")
    count = sum(1 for _ in root.iter())
    if count > MAX_ELEMENTS:
        raise Rejected("The SVG image has too many elements.", RejectionCode.TOO_COMPLEX)
    root_ns = etree.QName(root).namespace
    if root_ns is not None and root_ns != SVG_NS:
        raise Rejected("The file's root element is not an SVG element (it is in the namespace "
                       f"{root_ns[:80]!r}), so viewers would not show it as "
                       "an image.", RejectionCode.UNSUPPORTED_TYPE)
    cleaner = _Cleaner(ctx)
    new_root = cleaner.element(root)
    if new_root is None:
        raise Rejected("The SVG image has nothing that can be kept.", RejectionCode.NO_CONTENT)
    cleaner.report()
    return etree.tostring(new_root, xml_declaration=True, encoding="UTF-8")


class _Cleaner(Removals):
    def element(self, element: etree._Element) -> etree._Element | None:
        """A fresh copy of `element` with only allowed content, or None."""
        if not isinstance(element.tag, str):  # entity references and the like
            if isinstance(element, etree._Entity):
                self.drop("xml_entities", f"entity reference &{element.name};")
            return None
        qname = etree.QName(element)
        name = qname.localname
        if qname.namespace not in (SVG_NS, None):
            self.drop("foreign_content", f"<{name}> from {qname.namespace}")
            return None
        if name in ("title", "desc") and \
                self.ctx.decides(Rule.DOCUMENT_METADATA) is Action.KEEP:
            text = etree.Element(f"{{{SVG_NS}}}{name}")
            text.text = "".join(element.itertext())[:10_000]
            self.ctx.add("metadata", f"<{name}>", action="kept")
            return text
        if name not in ALLOWED_ELEMENTS:
            kind = {"script": "javascript", "foreignObject": "foreign_object",
                    "iframe": "embedded_content", "embed": "embedded_content",
                    "object": "embedded_content", "handler": "javascript",
                    "metadata": "metadata", "title": "metadata",
                    "desc": "metadata"}.get(name, "element")
            self.drop(kind, f"<{name}>")
            return None
        if name in ("set", "animate") and FORBIDDEN_ANIMATION_TARGETS.match(
                element.get("attributeName", "")):
            self.drop("javascript", f"<{name} attributeName={element.get('attributeName')}>")
            return None
        clean = etree.Element(f"{{{SVG_NS}}}{name}", nsmap={None: SVG_NS, "xlink": XLINK_NS}
                              if element.getparent() is None else None)
        for attr, value in element.attrib.items():
            self.attribute(clean, name, attr, value)
        if name == "style":
            css = "".join(element.itertext())
            clean.text = sanitize_css(css, self.drop, remote=self.remote)
            return clean
        if name == "image" and clean.get(f"{{{XLINK_NS}}}href") is None \
                and clean.get("href") is None:
            self.drop("external_reference", "<image> without an embedded picture")
            return None
        clean.text = element.text
        for child in element:
            kept = self.element(child)
            if kept is not None:
                clean.append(kept)
            # The text after a dropped element belongs to the parent's flow.
            if child.tail:
                if kept is not None:
                    kept.tail = child.tail
                elif len(clean):
                    clean[-1].tail = (clean[-1].tail or "") + child.tail
                else:
                    clean.text = (clean.text or "") + child.tail
        return clean

    def attribute(self, clean: etree._Element, element_name: str, attr: str,
                  value: str) -> None:
        qname = etree.QName(attr)
        local, ns = qname.localname, qname.namespace
        if local.lower().startswith("on"):
            self.drop("event_handler", f"{local} attribute")
            return
        if ns == XML_NS and local in ("space", "lang"):
            clean.set(attr, value)
            return
        if local == "href" and ns in (None, XLINK_NS):
            safe = self.href(element_name, value.strip())
            if safe is not None:
                clean.set(f"{{{XLINK_NS}}}href" if ns else "href", safe)
            return
        if ns is not None or local not in ALLOWED_ATTRIBUTES:
            self.drop("attribute", f"{local} attribute")
            return
        if local == "style":
            value = sanitize_css(value, self.drop, remote=self.remote)
        elif "url(" in value.lower() or "javascript:" in value.lower():
            value = URL_REF.sub(lambda m: m.group(0) if m.group(2).strip().startswith("#") or
                                self.remote(m.group(2), f"url() in {local}") else "none", value)
            if "javascript:" in value.lower():
                self.drop("javascript", f"javascript: in {local}")
                return
        clean.set(local, value)

    def href(self, element_name: str, value: str) -> str | None:
        if value.startswith("#"):
            return value
        if element_name in ("image", "feImage") and DATA_IMAGE.match(value):
            return self.embedded_image(value)
        if element_name == "a" and SAFE_LINK.match(value):
            if self.ctx.policy.keep_links:
                return value
            self.drop("link", "<a> link")
            return None
        if element_name != "a" and self.remote(value, f"<{element_name}> reference"):
            return value
        kind = "javascript" if re.match(r"^\s*(javascript|vbscript):", value, re.IGNORECASE) \
            else "external_reference"
        self.drop(kind, f"<{element_name}> reference to {value[:60]!r}")
        return None

    def embedded_image(self, value: str) -> str | None:
        from sanitas.engine import image

        header, _, payload = value.partition(",")
        kind = header.split("/")[1].split(";")[0].lower().replace("jpg", "jpeg")
        try:
            raw = base64.b64decode(payload, validate=False)
            clean = image.sanitize_bytes(raw, kind, self.ctx)
        except Refused:
            raise
        except (Rejected, ValueError):
            self.drop("embedded_image", "undecodable embedded image")
            return None
        mime = {"jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif",
                "webp": "image/webp"}[kind]
        return f"data:{mime};base64,{base64.b64encode(clean).decode('ascii')}"
