"""Writes the e2e inputs: a macro-laden .docm and a JPEG carrying GPS EXIF. Usage: make_fixtures.py OUTDIR"""
import io
import sys
import zipfile
from pathlib import Path

from PIL import Image

out = Path(sys.argv[1])
out.mkdir(parents=True, exist_ok=True)

# --- JPEG with GPS EXIF ---------------------------------------------------------------------
img = Image.new("RGB", (320, 240), (30, 120, 200))
for x in range(0, 320, 8):
    for y in range(0, 240, 8):
        img.putpixel((x, y), (250, 200, 40))
exif = Image.Exif()
exif[0x010F] = "E2E Camera Maker"          # Make
exif[0x0110] = "E2E Model 1"               # Model
exif[0x0131] = "e2e-software"              # Software
gps = {1: "N", 2: (48.0, 51.0, 29.0), 3: "E", 4: (2.0, 17.0, 40.0), 5: 0, 6: 35.0}
exif[0x8825] = gps                          # GPSInfo IFD
img.save(out / "holiday-gps.jpg", "JPEG", exif=exif.tobytes(), quality=90)
check = Image.open(out / "holiday-gps.jpg").getexif()
assert 0x8825 in check and check.get_ifd(0x8825), "fixture JPEG lacks GPS"

# --- DOCM with a VBA project ----------------------------------------------------------------
content_types = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">
<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>
<Default Extension="xml" ContentType="application/xml"/>
<Default Extension="bin" ContentType="application/vnd.ms-office.vbaProject"/>
<Override PartName="/word/document.xml" ContentType="application/vnd.ms-word.document.macroEnabled.main+xml"/>
<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>
</Types>"""
rels = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>
<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>
</Relationships>"""
document = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:body><w:p><w:r><w:t>Quarterly invoice - please enable macros</w:t></w:r></w:p></w:body>
</w:document>"""
doc_rels = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">
<Relationship Id="rId1" Type="http://schemas.microsoft.com/office/2006/relationships/vbaProject" Target="vbaProject.bin"/>
</Relationships>"""
core = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:creator>Mallory Author</dc:creator><dc:title>Invoice</dc:title></cp:coreProperties>"""
# An OLE2 header followed by VBA-looking bytes: enough to be a vbaProject part.
vba = bytes.fromhex("D0CF11E0A1B11AE1") + b"\x00" * 24 + b"Attribute VB_Name = \"ThisDocument\"\r\nSub AutoOpen()\r\nShell \"calc.exe\"\r\nEnd Sub\r\n" * 8
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("[Content_Types].xml", content_types)
    z.writestr("_rels/.rels", rels)
    z.writestr("word/document.xml", document)
    z.writestr("word/_rels/document.xml.rels", doc_rels)
    z.writestr("word/vbaProject.bin", vba)
    z.writestr("docProps/core.xml", core)
(out / "invoice-macro.docm").write_bytes(buf.getvalue())

# --- ZIP with a program inside: the program is dropped, the rest kept (verdict partial) -------
buf = io.BytesIO()
with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("notes.txt", "Meeting notes\nBring the quarterly figures.\n")
    z.writestr("tool.exe", b"MZ\x90\x00" + b"\x00" * 200 + b"This program cannot be run in DOS mode.\r\n")
(out / "bundle-with-tool.zip").write_bytes(buf.getvalue())
print("ok")
