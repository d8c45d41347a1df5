"""ODF sanitizer: hostile ODT (Basic, event listeners, objects, DDE, linked sections, remote
images, forms) and clean ODT/ODP, checked by byte scan, manifest consistency, LibreOffice
rendering and SSIM."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from lxml import etree

from sanitas.engine import odf
from sanitas.engine.report import Context, Policy, Rejected
from tests.engine import corpus_office as corpus
from tests.engine.fidelity import min_page_ssim, pdf_text
from tests.engine.render_office import convert_many

MANIFEST = "urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"
CLEAN = ["clean.odt", "clean.odp", "lo.odt", "lo.ods"]


def _run(src: Path, out_dir: Path, keep_links=True, tag="out"):
    ctx = Context(policy=Policy().with_rules(hyperlinks="keep" if keep_links else "remove"),
                  workdir=out_dir / "w")
    tmp = out_dir / f"{tag}-{src.stem}.tmp"
    ext = odf.sanitize(src, tmp, ctx, src.suffix.lstrip("."))
    final = out_dir / f"{tag}-{src.stem}-{src.suffix.lstrip('.')}.{ext}"
    tmp.rename(final)
    return final, ctx


@pytest.fixture(scope="module")
def odfs(tmp_path_factory):
    root = tmp_path_factory.mktemp("odf")
    files = corpus.write_all(root / "src")
    out = root / "out"
    out.mkdir()
    # ODF as LibreOffice writes it (settings, printer blob, manifest.rdf, thumbnails...)
    lo_dir = root / "lo-written"
    for source, target in ((files["clean.docx"], "odt"), (files["clean.xlsx"], "ods")):
        made = convert_many([source], target, lo_dir, root / "lo")
        files[f"lo.{target}"] = made[source].rename(lo_dir / f"lo.{target}")
    results = {n: _run(files[n], out) for n in ("clean.odt", "clean.odp", "hostile.odt",
                                                 "lo.odt", "lo.ods")}
    strict = _run(files["hostile.odt"], out, keep_links=False, tag="nolinks")
    originals = {}
    for n in CLEAN:
        originals[n] = root / f"orig-{n.replace('.', '-')}.{n.rsplit('.', 1)[1]}"
        originals[n].write_bytes(files[n].read_bytes())
    pdfs = convert_many([*originals.values(), *(r[0] for r in results.values())], "pdf",
                        root / "pdf", root / "lo")
    return {"files": files, "results": results, "strict": strict, "pdfs": pdfs,
            "originals": originals}


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


FORBIDDEN = [b"<script:", b"office:scripts", b"event-listener", b"vnd.sun.star.script",
             b"Basic/", b"Scripts/", b"Module1", b"Shell(", b"draw:object", b"object-ole",
             b"draw:applet", b"draw:plugin", b"floating-frame", b"attacker.invalid",
             b"section-source", b"dde-", b"execute-macro", b"Secret Author", b"Evil/1.0",
             b"file:///", b"Configurations2", b"Thumbnails", b"Object 1/", b"Object 2",
             b"payload.exe", b"calc"]


def test_hostile_odt_byte_scan(odfs):
    out, ctx = odfs["strict"]
    members = _members(out)
    src_members = _members(odfs["files"]["hostile.odt"])
    source = b"".join(src_members.values()) + "\n".join(src_members).encode()
    assert [t for t in FORBIDDEN if t not in source] == [], "the corpus must carry every token"
    for name, data in members.items():
        for token in FORBIDDEN:
            assert token not in data and token not in name.encode(), (token, name)
    assert list(members) == ["mimetype", *[n for n in members if n != "mimetype"]]
    with zipfile.ZipFile(out) as zf:
        assert zf.infolist()[0].compress_type == zipfile.ZIP_STORED
    kinds = {f.kind for f in ctx.findings}
    assert {"macro", "script", "embedded_object", "ole_object", "dde", "external_link",
            "external_relationship", "metadata", "hyperlink"} <= kinds


def test_hostile_odt_keeps_visible_content_and_web_links(odfs):
    out, _ = odfs["results"]["hostile.odt"]
    content = _members(out)["content.xml"].decode()
    for text in ("Hostile ODT body.", "click", "run macro", "linked section cached text",
                 "dde result", "after script"):
        assert text in content
    assert 'xlink:href="https://example.org/"' in content
    # the embedded object's replacement picture stays in its frame
    assert "ObjectReplacements/Object 1" in content and "Pictures/image1.png" in content
    pdf = odfs["pdfs"].get(out)
    assert pdf is not None, "LibreOffice could not open the sanitized ODT"
    text = pdf_text(pdf)
    assert "Hostile ODT body." in text and "linked section cached text" in text


@pytest.mark.parametrize("name", [*CLEAN, "hostile.odt"])
def test_manifest_matches_package(odfs, name):
    out, _ = odfs["results"][name]
    members = _members(out)
    man = etree.fromstring(members["META-INF/manifest.xml"])
    listed = {e.get(f"{{{MANIFEST}}}full-path") for e in man}
    assert "/" in listed
    for path in listed - {"/"}:
        assert path in members or path.endswith("/"), f"manifest lists missing {path}"
    for path in members:
        if path not in ("mimetype", "META-INF/manifest.xml"):
            assert path in listed, f"{path} missing from the manifest"


@pytest.mark.parametrize("name", CLEAN)
def test_clean_odf_keeps_its_look(odfs, name):
    original = odfs["pdfs"][odfs["originals"][name]]
    sanitized = odfs["pdfs"][odfs["results"][name][0]]
    assert min_page_ssim(original, sanitized) >= 0.98
    # a clean document loses metadata and housekeeping only: no false alarms
    kinds = {f.kind for f in odfs["results"][name][1].findings}
    assert kinds <= {"metadata", "printer_settings", "hidden_part"}, kinds


def _odf_with(manifest_extra: str = "", mimetype: bytes | None = b"application/vnd.oasis."
              b"opendocument.text", extra: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        if mimetype is not None:
            zf.writestr("mimetype", mimetype)
        zf.writestr("content.xml", _members_of(corpus.clean_odt())["content.xml"])
        zf.writestr("META-INF/manifest.xml", (
            f'<manifest:manifest xmlns:manifest="{MANIFEST}"><manifest:file-entry '
            'manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/>'
            f"{manifest_extra}</manifest:manifest>"))
        for n, d in (extra or {}).items():
            zf.writestr(n, d)
    return buf.getvalue()


def _members_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _reject(tmp_path, data: bytes) -> str:
    src = tmp_path / "in.odt"
    src.write_bytes(data)
    with pytest.raises(Rejected) as exc:
        odf.sanitize(src, tmp_path / "out.odt", Context(workdir=tmp_path / "w"), "odt")
    return exc.value.reason


def test_rejects_encrypted_missing_mimetype_and_entities(tmp_path):
    enc = ('<manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml">'
           '<manifest:encryption-data manifest:checksum-type="SHA1/1K" manifest:checksum="x">'
           '<manifest:algorithm manifest:algorithm-name="Blowfish CFB" manifest:initialisation-'
           'vector="x"/></manifest:encryption-data></manifest:file-entry>')
    assert "encrypted" in _reject(tmp_path, _odf_with(enc))
    assert "mimetype" in _reject(tmp_path, _odf_with(mimetype=None))
    assert "mimetype" in _reject(tmp_path, _odf_with(mimetype=b"application/x-msdownload"))
    xxe = ('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
           '<office:document-styles xmlns:office="urn:oasis:names:tc:opendocument:xmlns:'
           'office:1.0">&e;</office:document-styles>')
    assert "DTD" in _reject(tmp_path, _odf_with(extra={"styles.xml": xxe}))


def test_inline_and_packaged_non_images_are_dropped_consistently(tmp_path):
    import base64

    svg = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    body = ('<office:text><text:p>pictures</text:p>'
            + corpus._odt_image("Pictures/evil.svg", "svg")
            + '<text:p><draw:frame draw:name="inline" svg:width="2cm" svg:height="1cm"><draw:image>'
              f"<office:binary-data>{base64.b64encode(b'MZ not an image').decode()}"
              "</office:binary-data></draw:image></draw:frame></text:p>"
            + '<text:p><draw:frame draw:name="ok" svg:width="2cm" svg:height="1cm"><draw:image>'
              f"<office:binary-data>{base64.b64encode(corpus.jpeg_with_gps()).decode()}"
              "</office:binary-data></draw:image></draw:frame></text:p></office:text>")
    data = corpus.odf(corpus.ODT, body, files={"Pictures/evil.svg": svg},
                      manifest_extra={"Pictures/evil.svg": "image/svg+xml"})
    src = tmp_path / "in.odt"
    src.write_bytes(data)
    ctx = Context(workdir=tmp_path / "w")
    odf.sanitize(src, tmp_path / "out.odt", ctx, "odt")
    members = _members(tmp_path / "out.odt")
    content = members["content.xml"].decode()
    assert "Pictures/evil.svg" not in members and "evil.svg" not in content
    assert 'draw:name="svg"' not in content and 'draw:name="inline"' not in content
    ok = content.split('draw:name="ok"')[1].split("office:binary-data>")[1].split("<")[0]
    photo = base64.b64decode(ok)
    assert photo.startswith(b"\xff\xd8") and b"SecretCameraMaker" not in photo
    assert b"<script" not in b"".join(members.values())


def test_damaged_odf_is_rejected_or_rebuilt_never_crash(odfs, tmp_path):
    import random
    import re

    rng = random.Random(4321)
    outcomes = {"ok": 0, "rejected": 0}
    for i in range(100):
        members = _members(odfs["files"][rng.choice(["hostile.odt", "clean.odt", "lo.ods"])])
        victim = rng.choice(list(members))
        blob = members[victim]
        op = rng.randrange(4)
        if op == 0:
            blob = blob[: rng.randrange(1, max(2, len(blob)))]
        elif op == 1:
            blob = re.sub(rb'xlink:href="[^"]*"', rng.choice(
                [b'xlink:href="../../etc/passwd"', b'xlink:href="http://[::1"',
                 b'xlink:href="//host/share"', b'xlink:href=""']), blob)
        elif op == 2:
            members.pop(victim)
        else:
            blob = blob.replace(b"office:binary-data", b"office:binary-data").replace(
                b"<text:p>", b"<text:p><text:a xlink:href=\"javascript:alert(1)\">x</text:a>")
        if op != 2:
            members[victim] = blob
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as zf:
            for n, d in members.items():
                zf.writestr(n, d)
        src = tmp_path / f"m{i}.odt"
        src.write_bytes(buf.getvalue())
        try:
            odf.sanitize(src, tmp_path / f"o{i}", Context(workdir=tmp_path / "w"), "odt")
        except Rejected as exc:
            assert exc.reason.endswith(".")
            outcomes["rejected"] += 1
            continue
        outcomes["ok"] += 1
        data = b"".join(_members(tmp_path / f"o{i}").values())
        assert b"javascript:" not in data and b"<script:" not in data
    assert outcomes["ok"] > 10 and outcomes["rejected"] > 5, outcomes
