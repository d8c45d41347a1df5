"""How the bytes of a text file become text: byte-order marks, an encoding the markup declares,
strict UTF-8, then Windows-1252; and the characters no text keeps (controls and direction
overrides, which disguise what is shown). Shared by every family that reads text (plain text,
CSV, HTML, XML, JSON, YAML, TOML, Markdown, EPUB, mail bodies).
"""

from __future__ import annotations

import codecs
import re

MAX_TEXT_BYTES = 200 * 1024 * 1024
# Control characters and bidirectional overrides: removed from every text written back.
CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\u202a-\u202e\u2066-\u2069\u200e\u200f"
                           r"\u061c\ufeff]")


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


# The encoding a markup document declares: an XML declaration, or the charset of a <meta>
# (the HTML prescan looks at the first 1024 bytes).
_XML_ENCODING = re.compile(
    rb"^\s*<\?xml\s[^>]{0,200}?encoding\s*=\s*[\"']([A-Za-z0-9._:-]{1,40})[\"']")

_META_CHARSET = re.compile(rb"<meta\s[^>]{0,400}?charset\s*=\s*[\"']?\s*([A-Za-z0-9._:-]{1,40})",
                           re.IGNORECASE)


def declared_encoding(data: bytes) -> str | None:
    """The codec name a markup document declares for itself (XML declaration, then <meta
    charset> / http-equiv content charset in its first 1024 bytes), or None when it declares
    none Python knows. UTF-16/32 declarations are ignored: such text has a BOM or is not
    readable as ASCII."""
    found = _XML_ENCODING.match(data[:1024]) or _META_CHARSET.search(data[:1024])
    if found is None:
        return None
    try:
        name = codecs.lookup(found.group(1).decode("ascii")).name
    except LookupError:
        return None
    if name.startswith(("utf-16", "utf-32")):
        return None
    return "cp1252" if name in ("ascii", "iso8859-1") else name  # as browsers read them


def decode_markup(data: bytes) -> tuple[str, str]:
    """`decode` for HTML/XHTML: a BOM wins, then the encoding the document declares (an XML
    declaration or a <meta charset>), then strict UTF-8, then Windows-1252."""
    declared = None if data.startswith((codecs.BOM_UTF8, codecs.BOM_UTF16_LE,
                                        codecs.BOM_UTF16_BE)) else declared_encoding(data)
    if declared is None or declared == "utf-8":
        return decode(data)
    return data.decode(declared, "replace"), declared
