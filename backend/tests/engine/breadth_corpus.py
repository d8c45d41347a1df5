"""Generated files for the families added for breadth (issue 22): Outlook .msg and TNEF
(winmail.dat), XPS/OpenXPS, WMF/EMF metafiles, Markdown, YAML, TOML, SubRip, WebVTT, iCalendar
and vCard.

Nothing here is copied from elsewhere: each builder writes the format from its specification
([MS-OXMSG] property streams in a compound file, [MS-OXTNEF] attributes, the XPS package
relationships, [MS-WMF]/[MS-EMF] records), small enough to read, with a hostile variant where the
format has something to hide.
"""

from __future__ import annotations

import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

from tests.engine.cfb_office import write_cfb

# --- Outlook .msg ([MS-OXMSG]) -----------------------------------------------------------------
PT_UNICODE, PT_BINARY, PT_LONG = 0x001F, 0x0102, 0x0003


def _prop_stream(fixed: list[tuple[int, int]], header: bytes) -> bytes:
    """A __properties_version1.0 stream: `header` then one 16-byte entry per fixed property
    (tag, flags, value)."""
    return header + b"".join(struct.pack("<IIQ", tag, 6, value) for tag, value in fixed)


def _strings(props: dict[int, str | bytes]) -> dict[str, bytes]:
    out = {}
    for prop_id, value in props.items():
        if isinstance(value, str):
            out[f"__substg1.0_{prop_id:04X}{PT_UNICODE:04X}"] = value.encode("utf-16-le")
        else:
            out[f"__substg1.0_{prop_id:04X}{PT_BINARY:04X}"] = value
    return out


def msg_bytes(*, subject: str = "Quarterly figures", body: str = "Hello Bob,\r\nsee attached.",
              html: bytes | None = None, headers: str | None = None,
              attachments: list[tuple[str, bytes]] = (),  # type: ignore[assignment]
              embedded: dict[str, bytes] | None = None) -> bytes:
    """An Outlook message: subject, sender, recipients, bodies, attachments by value (and an
    attached message's streams, `embedded`, as its last attachment)."""
    props: dict[int, str | bytes] = {
        0x001A: "IPM.Note", 0x0037: subject, 0x1000: body,
        0x0C1A: "Alice Example", 0x0C1F: "alice@example.org", 0x5D01: "alice@example.org",
        0x0E04: "bob@example.com",
        0x1035: "<msg-1@example.org>", 0x0042: "Alice Example", 0x0065: "alice@example.org",
    }
    if html is not None:
        props[0x1013] = html
    if headers is not None:
        props[0x007D] = headers
    streams = _strings(props)
    count = len(attachments) + (1 if embedded else 0)
    streams["__properties_version1.0"] = _prop_stream(
        [], struct.pack("<8sIIII8s", b"", 1, count, 1, count, b""))
    recipient = "__recip_version1.0_#00000000/"
    for name, data in _strings({0x3001: "Bob", 0x3003: "bob@example.com"}).items():
        streams[recipient + name] = data
    streams[recipient + "__properties_version1.0"] = _prop_stream(
        [(0x0C150003, 1)], struct.pack("<8s", b""))
    for index, (name, data) in enumerate(attachments):
        folder = f"__attach_version1.0_#{index:08X}/"
        for stream, value in _strings({0x3707: name, 0x3704: name[:12], 0x3701: data,
                                       0x370E: "application/octet-stream"}).items():
            streams[folder + stream] = value
        streams[folder + "__properties_version1.0"] = _prop_stream(
            [(0x37050003, 1)], struct.pack("<8s", b""))
    if embedded:
        folder = f"__attach_version1.0_#{len(attachments):08X}/"
        streams[folder + "__properties_version1.0"] = _prop_stream(
            [(0x37050003, 5)], struct.pack("<8s", b""))
        for stream, value in _strings({0x3707: "Forwarded.msg"}).items():
            streams[folder + stream] = value
        for stream, value in embedded.items():
            if stream == "__properties_version1.0":  # an embedded message's header is 24 bytes
                value = value[:24] + value[32:]
            streams[folder + "__substg1.0_3701000D/" + stream] = value
    for stream in ("00020102", "00030102", "00040102"):  # named properties: none
        streams[f"__nameid_version1.0/__substg1.0_{stream}"] = b""
    return write_cfb(streams)


def embedded_msg_streams(**kwargs: object) -> dict[str, bytes]:
    """The streams of a message, to be stored inside another one (`msg_bytes(embedded=...)`)."""
    import io

    import olefile

    data = msg_bytes(**kwargs)  # type: ignore[arg-type]
    ole = olefile.OleFileIO(io.BytesIO(data))
    try:
        return {"/".join(entry): ole.openstream(entry).read()
                for entry in ole.listdir(streams=True)
                if not entry[0].startswith("__nameid")}
    finally:
        ole.close()


# --- TNEF ([MS-OXTNEF]) ------------------------------------------------------------------------
def _tnef_attr(level: int, attr_id: int, attr_type: int, data: bytes) -> bytes:
    return (struct.pack("<BHHI", level, attr_id, attr_type, len(data)) + data
            + struct.pack("<H", sum(data) & 0xFFFF))


def tnef_bytes(attachments: list[tuple[str, bytes]], *, subject: str = "Figures",
               body: str = "The figures are attached.") -> bytes:
    out = b"\x78\x9f\x3e\x22" + struct.pack("<H", 0x0001)
    out += _tnef_attr(1, 0x9006, 0x0008, struct.pack("<I", 0x00010000))  # TNEF version
    out += _tnef_attr(1, 0x9007, 0x0006, struct.pack("<II", 1252, 0))  # OEM code page
    out += _tnef_attr(1, 0x8004, 0x0001, subject.encode("cp1252") + b"\x00")
    out += _tnef_attr(1, 0x800C, 0x0002, body.encode("cp1252"))
    for name, data in attachments:
        out += _tnef_attr(2, 0x9002, 0x0006, b"\xff" * 14)  # rendering data opens one
        out += _tnef_attr(2, 0x8010, 0x0001, name.encode("cp1252") + b"\x00")
        out += _tnef_attr(2, 0x800F, 0x0006, data)
    return out


# --- XPS / OpenXPS -----------------------------------------------------------------------------
def xps_bytes(oxps: bool = False, *, page_extra: str = "", parts: dict[str, bytes] | None = None,
              compress: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A one-page XPS (or OpenXPS) package: a red and a blue rectangle, plus `page_extra`
    markup and further `parts`."""
    ns = ("http://schemas.openxps.org/oxps/v1.0" if oxps
          else "http://schemas.microsoft.com/xps/2005/06")
    rel = ("http://schemas.openxps.org/oxps/v1.0/fixedrepresentation" if oxps
           else "http://schemas.microsoft.com/xps/2005/06/fixedrepresentation")
    types = ('<?xml version="1.0" encoding="utf-8"?><Types xmlns="http://schemas.openxmlformats.'
             'org/package/2006/content-types"><Default Extension="rels" ContentType="application'
             '/vnd.openxmlformats-package.relationships+xml"/><Default Extension="fdseq" '
             'ContentType="application/vnd.ms-package.xps-fixeddocumentsequence+xml"/><Default '
             'Extension="fdoc" ContentType="application/vnd.ms-package.xps-fixeddocument+xml"/>'
             '<Default Extension="fpage" ContentType="application/vnd.ms-package.xps-fixedpage+'
             'xml"/><Default Extension="xml" ContentType="application/vnd.openxmlformats-package'
             '.core-properties+xml"/></Types>')
    rels = ('<?xml version="1.0" encoding="utf-8"?><Relationships xmlns="http://schemas.'
            f'openxmlformats.org/package/2006/relationships"><Relationship Type="{rel}" '
            'Target="/FixedDocSeq.fdseq" Id="R0"/><Relationship Type="http://schemas.'
            'openxmlformats.org/package/2006/relationships/metadata/core-properties" '
            'Target="/docProps/core.xml" Id="R1"/></Relationships>')
    page = (f'<FixedPage xmlns="{ns}" Width="816" Height="1056" xml:lang="en-US">'
            '<Path Data="M 100,100 L 700,100 L 700,500 L 100,500 Z" Fill="#FFFF0000"/>'
            '<Path Data="M 100,600 L 300,600 L 300,700 L 100,700 Z" Fill="#FF0000FF"/>'
            f"{page_extra}</FixedPage>")
    files = {
        "[Content_Types].xml": types.encode(), "_rels/.rels": rels.encode(),
        "FixedDocSeq.fdseq": (f'<FixedDocumentSequence xmlns="{ns}"><DocumentReference '
                              'Source="/Documents/1/FixedDoc.fdoc"/></FixedDocumentSequence>'
                              ).encode(),
        "Documents/1/FixedDoc.fdoc": (f'<FixedDocument xmlns="{ns}"><PageContent '
                                      'Source="/Documents/1/Pages/1.fpage"/></FixedDocument>'
                                      ).encode(),
        "Documents/1/Pages/1.fpage": page.encode(),
        "docProps/core.xml": (b'<?xml version="1.0"?><cp:coreProperties xmlns:cp="http://'
                              b'schemas.openxmlformats.org/package/2006/metadata/core-properti'
                              b'es" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:creator>'
                              b'Secret Author</dc:creator></cp:coreProperties>'),
        **(parts or {}),
    }
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compress) as package:
        for name, data in files.items():
            package.writestr(name, data)
    return buffer.getvalue()


# --- WMF / EMF ---------------------------------------------------------------------------------
def _wmf_record(function: int, *params: int, raw: bytes = b"") -> bytes:
    body = struct.pack(f"<{len(params)}h", *params) + raw
    if len(body) % 2:
        body += b"\x00"
    return struct.pack("<IH", 3 + len(body) // 2, function) + body


def wmf_bytes(*, escape: bytes | None = None, placeable: bool = True,
              size: tuple[int, int] = (1000, 500)) -> bytes:
    """A WMF drawing a red rectangle over most of its area (a printer escape record first
    when `escape` is given)."""
    width, height = size
    records = [
        _wmf_record(0x020B, 0, 0),  # SetWindowOrg(y, x)
        _wmf_record(0x020C, height, width),  # SetWindowExt(y, x)
        _wmf_record(0x02FC, 0, 0x00FF, 0x0000, 0),  # CreateBrushIndirect: solid red
        _wmf_record(0x012D, 0),  # SelectObject
        _wmf_record(0x041B, height * 9 // 10, width * 9 // 10, height // 10, width // 10),
    ]
    if escape is not None:
        records.insert(0, _wmf_record(0x0626, 9, len(escape), raw=escape))  # SETABORTPROC
    body = b"".join(records) + struct.pack("<IH", 3, 0)
    header = struct.pack("<HHHIHIH", 1, 9, 0x0300, (18 + len(body)) // 2, 1,
                         max(len(r) // 2 for r in records), 0)
    data = header + body
    if placeable:
        head = struct.pack("<IHhhhhHI", 0x9AC6CDD7, 0, 0, 0, width, height, 1440, 0)
        checksum = 0
        for (word,) in struct.iter_unpack("<H", head):
            checksum ^= word
        data = head + struct.pack("<H", checksum) + data
    return data


def _emr(kind: int, payload: bytes) -> bytes:
    if len(payload) % 4:
        payload += b"\x00" * (4 - len(payload) % 4)
    return struct.pack("<II", kind, 8 + len(payload)) + payload


def emf_bytes(*, description: str = "Drawing Program\x00Secret plan\x00\x00",
              comment: bytes | None = None, size: tuple[int, int] = (400, 200)) -> bytes:
    """An EMF drawing a blue rectangle: its header names a program and a document title (the
    description), and an EMR_COMMENT carries `comment` when given."""
    width, height = size
    records = [
        _emr(39, struct.pack("<IIII", 1, 0, 0x00FF0000, 0)),  # CreateBrushIndirect: blue
        _emr(37, struct.pack("<I", 1)),  # SelectObject
        _emr(43, struct.pack("<iiii", width // 10, height // 10, width * 9 // 10,
                             height * 9 // 10)),  # Rectangle
    ]
    if comment is not None:
        records.insert(0, _emr(70, struct.pack("<I", len(comment)) + comment))
    records.append(_emr(14, struct.pack("<III", 0, 16, 20)))  # EOF
    described = description.encode("utf-16-le")
    header_size = 108
    offset = header_size
    header_tail = described + b"\x00" * (-len(described) % 4)
    total = header_size + len(header_tail) + sum(len(r) for r in records)
    header = struct.pack(
        "<II4i4iIIIIHHIIIii", 1, header_size + len(header_tail), 0, 0, width - 1, height - 1,
        0, 0, width * 2646 // 100, height * 2646 // 100, 0x464D4520, 0x10000, total,
        len(records) + 1, 2, 0, len(description), offset, 0, 1920, 1080)
    header += struct.pack("<ii", 508, 286)  # szlMillimeters
    header += struct.pack("<III", 0, 0, 0)  # cbPixelFormat, offPixelFormat, bOpenGL
    header += struct.pack("<ii", 508000, 286000)  # szlMicrometers
    assert len(header) == header_size, len(header)
    return header + header_tail + b"".join(records)


# --- text formats ------------------------------------------------------------------------------
MARKDOWN_CLEAN = ("# Report\n\nSome *emphasis*, a [link](https://example.org/page) and a "
                  "list:\n\n- one\n- two\n\n| a | b |\n| --- | --- |\n| 1 | 2 |\n\n"
                  "<details><summary>More</summary>\n\nHidden **detail**.\n\n</details>\n")
YAML_CLEAN = "# settings\nname: sample\nitems:\n  - one\n  - two\nnested:\n  key: value\n"
TOML_CLEAN = 'title = "Sample"\n\n[owner]\nname = "Alice"\nyears = [2023, 2024]\n'
SRT_CLEAN = ("1\n00:00:01,000 --> 00:00:02,500\nHello <i>there</i>.\n\n"
             "2\n00:00:03,000 --> 00:00:04,000\nSecond line.\n")
VTT_CLEAN = ("WEBVTT\n\n00:00.000 --> 00:01.500\n<v Alice>Hello <b>there</b>.\n\n"
             "intro\n00:00:02.000 --> 00:00:03.000 align:start\nSecond cue.\n")

ICS_CLEAN = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example Corp//Calendar 1.0//EN\r\n"
             "METHOD:REQUEST\r\nBEGIN:VEVENT\r\nUID:event-1@example.org\r\n"
             "DTSTAMP:20240101T100000Z\r\nDTSTART:20240105T090000Z\r\n"
             "DTEND:20240105T100000Z\r\nSUMMARY:Quarterly review\r\n"
             "DESCRIPTION:Agenda: figures\\, plans.\r\nLOCATION:Room 4\r\n"
             "ORGANIZER;CN=Alice:mailto:alice@example.org\r\n"
             "ATTENDEE;CN=\"Bob; Sales\";ROLE=REQ-PARTICIPANT:mailto:bob@example.com\r\n"
             "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:Soon\r\n"
             "END:VALARM\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
VCF_CLEAN = ("BEGIN:VCARD\r\nVERSION:4.0\r\nFN:Alice Example\r\nN:Example;Alice;;;\r\n"
             "EMAIL;TYPE=work:alice@example.org\r\nTEL;TYPE=cell:+1-555-0100\r\n"
             "ADR;TYPE=work:;;1 Main St;Springfield;;12345;US\r\nEND:VCARD\r\n")


def _writer(name: str, data: bytes | str | Callable[[], bytes]) -> Callable[[Path], Path]:
    def make(folder: Path) -> Path:
        value = data() if callable(data) else data
        path = folder / name
        path.write_bytes(value.encode() if isinstance(value, str) else value)
        return path
    return make


BREADTH_SAMPLES: dict[str, Callable[[Path], Path]] = {
    "msg": _writer("sample.msg", lambda: msg_bytes(attachments=[("notes.txt", b"Notes.\n")])),
    "tnef": _writer("winmail.dat", lambda: tnef_bytes([("notes.txt", b"Notes.\n")])),
    "xps": _writer("sample.xps", lambda: xps_bytes()),
    "oxps": _writer("sample.oxps", lambda: xps_bytes(oxps=True)),
    "wmf": _writer("sample.wmf", lambda: wmf_bytes()),
    "emf": _writer("sample.emf", lambda: emf_bytes()),
    "markdown": _writer("sample.md", MARKDOWN_CLEAN),
    "yaml": _writer("sample.yaml", YAML_CLEAN),
    "toml": _writer("sample.toml", TOML_CLEAN),
    "srt": _writer("sample.srt", SRT_CLEAN),
    "vtt": _writer("sample.vtt", VTT_CLEAN),
    "ics": _writer("invite.ics", ICS_CLEAN),
    "vcf": _writer("alice.vcf", VCF_CLEAN),
}
