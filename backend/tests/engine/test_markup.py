"""SVG, HTML, CSV and text."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from lxml import etree

from sanitas.engine import sanitize_file
from sanitas.engine.report import Policy

SVG_DANGER = [b"<script", b"onload", b"onclick", b"foreignObject", b"javascript:", b"EVIL",
              b"ENTITY", b"DOCTYPE", b"root:", b"@import", b"<handler", b"<iframe", b"<set "]


def test_svg_disarmed_and_drawing_kept(corpus, out_dir):
    result = sanitize_file(corpus["drawing.svg"], out_dir)
    assert result.status == "ok"
    data = Path(result.output).read_bytes()
    assert [d for d in SVG_DANGER if d in data] == []
    root = etree.fromstring(data)
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert root.find("s:rect[@id='box']", ns) is not None
    assert "Hello" in "".join(root.find("s:text", ns).itertext())
    assert root.find("s:animate", ns) is not None  # harmless animation kept
    links = root.findall("s:a", ns)
    assert [a.get("href") for a in links if a.get("href")] == ["https://example.com/ok"]
    kinds = {f.kind for f in result.findings}
    assert {"javascript", "event_handler", "xml_entities", "foreign_object",
            "external_reference"} <= kinds


def test_svg_embedded_image_reencoded(corpus, tmp_path, out_dir):
    import base64

    png = base64.b64encode(corpus["image.png"].read_bytes()).decode()
    svg = tmp_path / "embed.svg"
    svg.write_text(f'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
                   f'<image width="10" height="10" href="data:image/png;base64,{png}"/></svg>')
    result = sanitize_file(svg, out_dir)
    data = Path(result.output).read_text()
    inner = base64.b64decode(data.split("base64,")[1].split('"')[0])
    assert inner.startswith(b"\x89PNG") and b"EVIL" not in inner


def test_html_disarmed_text_kept(corpus, out_dir):
    result = sanitize_file(corpus["page.html"], out_dir)
    assert result.status == "ok"
    data = Path(result.output).read_text().lower()
    for bad in ("<script", "onload", "onerror", "<iframe", "<object", "<embed", "<base",
                "http://evil", "javascript:", "@import", "refresh"):
        assert bad not in data, bad
    assert "quarterly report" in data and "visible text." in data
    assert 'href="https://example.com/ok"' in data
    assert "content-security-policy" in data and '<meta charset="utf-8">' in data


def test_html_links_removed_by_policy(corpus, out_dir):
    result = sanitize_file(corpus["page.html"], out_dir,
                           policy=Policy().with_rules(hyperlinks="remove"))
    assert "example.com" not in Path(result.output).read_text()


def test_csv_formulas_neutralised_numbers_kept(corpus, out_dir):
    result = sanitize_file(corpus["data.csv"], out_dir)
    rows = list(csv.reader(io.StringIO(Path(result.output).read_text())))
    cells = [cell for row in rows for cell in row]
    dangerous = [c for c in cells if c[:1] in ("=", "+", "-", "@", "\t", "\r")
                 and not c.lstrip("+-").replace(".", "").isdigit()]
    assert dangerous == []
    assert "-5" in cells and "3.14" in cells
    assert "'=cmd|' /C calc'!A0" in cells and "'@SUM(1+1)" in cells
    assert "'  =1+1" in cells
    assert any(f.kind == "csv_formula" for f in result.findings)


def test_text_utf8_and_bidi_overrides_removed(corpus, out_dir):
    notes = sanitize_file(corpus["notes.txt"], out_dir)
    text = Path(notes.output).read_text(encoding="utf-8")
    assert "\u202e" not in text and "café" in text
    legacy = sanitize_file(corpus["legacy.txt"], out_dir)
    assert Path(legacy.output).read_text(encoding="utf-8") == "naïve résumé\n"


INKSCAPE_SVG = b"""<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<!-- Created with Inkscape (http://www.inkscape.org/) by EVIL-commenter -->
<svg xmlns="http://www.w3.org/2000/svg" xmlns:dc="http://purl.org/dc/elements/1.1/"
     xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:cc="http://creativecommons.org/ns#"
     xmlns:inkscape="http://www.inkscape.org/namespaces/inkscape"
     xmlns:sodipodi="http://sodipodi.sourceforge.net/DTD/sodipodi-0.dtd"
     width="40" height="40" inkscape:version="1.2 (dc2aedaf03, 2022-05-15)"
     sodipodi:docname="EVIL-docname.svg" inkscape:export-filename="/home/EVIL-user/logo.png">
  <title>EVIL-title by Jane Doe</title>
  <desc>Created with EVIL-editor by Jane Doe</desc>
  <sodipodi:namedview id="base" inkscape:current-layer="layer1" inkscape:window-width="1920"/>
  <metadata><rdf:RDF><cc:Work><dc:creator><cc:Agent><dc:title>EVIL-creator</dc:title>
  </cc:Agent></dc:creator></cc:Work></rdf:RDF></metadata>
  <g inkscape:label="Layer 1" inkscape:groupmode="layer" id="layer1">
    <rect id="box" x="5" y="5" width="30" height="30" fill="#3366cc"/>
    <text x="8" y="25">Visible</text>
  </g>
</svg>"""


def test_svg_editor_metadata_title_and_description_removed(tmp_path, out_dir):
    src = tmp_path / "logo.svg"
    src.write_bytes(INKSCAPE_SVG)
    result = sanitize_file(src, out_dir)
    assert result.status == "ok", result.reason
    data = Path(result.output).read_bytes()
    assert b"EVIL" not in data and b"Jane Doe" not in data
    assert b"inkscape" not in data and b"sodipodi" not in data
    ns = {"s": "http://www.w3.org/2000/svg"}
    root = etree.fromstring(data)
    assert root.find(".//s:rect[@id='box']", ns) is not None
    assert "Visible" in "".join(root.find(".//s:text", ns).itertext())
    assert {"<title>", "<desc>", "<metadata>"} <= {
        f.location for f in result.findings if f.kind == "metadata"}


def test_svg_root_outside_the_svg_namespace_is_refused_with_a_reason(tmp_path, out_dir):
    src = tmp_path / "odd.svg"
    src.write_bytes(b'<svg xmlns="http://example.invalid/not-svg"><rect width="1"/></svg>')
    result = sanitize_file(src, out_dir)
    assert result.status == "rejected" and result.code == "unsupported_type"
    assert "namespace" in result.reason and "Error" not in result.reason
