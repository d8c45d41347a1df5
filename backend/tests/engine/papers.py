"""Generated documents for advanced-mode size and fidelity checks: a two-column text-only paper
(the shape of a LaTeX article, standard fonts, not embedded), a word-processor article exported
by LibreOffice (fonts embedded), pages filled with a photograph and a label-sized page, and a
LaTeX-shaped paper (two columns, a German page, a contents page, bookmarks, compressed pages)."""

from __future__ import annotations

import random
import zlib
from pathlib import Path

import numpy as np
import pikepdf
from pikepdf import Dictionary, Name

_VOCABULARY = (
    "the of and to in a is that for we this with as on are by be from an which our model "
    "results data method can each it not these two when more than one between using based "
    "show first where also used all has have its only such over time number given into set "
    "approach paper section figure table shown value values function system systems problem "
    "analysis performance proposed network networks training learning algorithm algorithms "
    "error large small case cases different however while both under three new high low "
    "order structure simple general large sample samples distribution estimate estimates "
    "observed measured parameter parameters linear nonlinear optimal bound bounds theorem "
    "lemma proof follows hence therefore thus consider let suppose assume denote defined "
    "equation equations terms term process processes state states space random variable "
    "variables probability expected mean variance standard deviation experiment experiments "
    "evaluation evaluate compare compared comparison baseline baselines improvement accuracy"
)
_WORDS = _VOCABULARY.split()


def _font(pdf: pikepdf.Pdf, base: str):
    return pdf.make_indirect(Dictionary(Type=Name.Font, Subtype=Name.Type1,
                                        BaseFont=Name(f"/{base}"),
                                        Encoding=Name.WinAnsiEncoding))


def _column_lines(rng: random.Random, count: int, chars: int = 54) -> list[str]:
    """Lines of random words, at most `chars` long (10 pt Times fits ~54 in a 243 pt column)."""
    lines = []
    for _ in range(count):
        words = [rng.choice(_WORDS)]
        while len(" ".join(words)) + 1 + len(word := rng.choice(_WORDS)) <= chars:
            words.append(word)
        lines.append(" ".join(words))
    return lines


def _page_text(rng: random.Random, number: int) -> str:
    """Two columns of 10 pt Times with 12 pt leading, a heading now and then, a page number."""
    ops = []
    if number == 1:
        ops.append("BT /F2 17 Tf 120 730 Td (A Study of Generated Two-Column Papers) Tj ET")
    top = 700 if number == 1 else 740
    for left in (54, 315):
        y = top
        for index, line in enumerate(_column_lines(rng, (top - 72) // 12)):
            if index % 24 == 0 and index:
                ops.append(f"BT /F2 12 Tf {left} {y} Td ({index // 24}. Results) Tj ET")
                y -= 14
            ops.append(f"BT /F1 10 Tf {left} {y} Td ({line}) Tj ET")
            y -= 12
    ops.append(f"BT /F1 10 Tf 300 40 Td ({number}) Tj ET")
    return "\n".join(ops)


def two_column_paper(pages: int = 6, seed: int = 1, extra: str = "") -> pikepdf.Pdf:
    """Text only (black on white), Times and Times-Bold. `extra` is appended to every page's
    content stream (F1 is Times-Roman)."""
    rng = random.Random(seed)
    pdf = pikepdf.new()
    fonts = Dictionary(F1=_font(pdf, "Times-Roman"), F2=_font(pdf, "Times-Bold"))
    for number in range(1, pages + 1):
        page = pdf.add_blank_page(page_size=(612, 792))
        page.Resources = Dictionary(Font=fonts)
        page.Contents = pdf.make_stream(f"{_page_text(rng, number)}\n{extra}".encode())
    return pdf


def photo_pixels(width: int, height: int, seed: int = 1) -> np.ndarray:
    """Smooth colour gradients with sensor-like noise: what JPEG is for."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([(x * 0.7) % 256, (y * 0.5) % 256, ((x + y) * 0.3) % 256], axis=-1)
    return np.clip(base + rng.normal(0, 10, size=base.shape), 0, 255).astype(np.uint8)


def photo_pdf(pages: int = 2, pixels: tuple[int, int] = (800, 600)) -> pikepdf.Pdf:
    """Each page one full-bleed photograph, stored losslessly (Flate)."""
    pdf = pikepdf.new()
    for number in range(1, pages + 1):
        data = photo_pixels(*pixels, seed=number)
        image = pikepdf.Stream(pdf, zlib.compress(data.tobytes()), Type=Name.XObject,
                               Subtype=Name.Image, Width=pixels[0], Height=pixels[1],
                               ColorSpace=Name.DeviceRGB, BitsPerComponent=8,
                               Filter=Name.FlateDecode)
        page = pdf.add_blank_page(page_size=(612, 459))
        page.Resources = Dictionary(XObject=Dictionary(Im1=image))
        page.Contents = pdf.make_stream(b"q 612 0 0 459 0 0 cm /Im1 Do Q")
    return pdf


def label_pdf(width: float = 20, height: float = 30) -> pikepdf.Pdf:
    """One tiny page (points) with a word and a frame on it."""
    pdf = pikepdf.new()
    page = pdf.add_blank_page(page_size=(width, height))
    page.Resources = Dictionary(Font=Dictionary(F1=_font(pdf, "Helvetica")))
    page.Contents = pdf.make_stream(
        f"0.3 w 1 1 {width - 2} {height - 2} re S BT /F1 5 Tf 2 {height / 2 - 2} Td (Ab3) Tj ET"
        .encode())
    return pdf


def article_html(sections: int = 8, seed: int = 5) -> str:
    """A word-processor article: a title, numbered section headings and paragraphs of 11 pt
    Liberation Serif with some italic and bold words (~6 pages once converted)."""
    rng = random.Random(seed)

    def paragraph() -> str:
        words = []
        for _ in range(rng.randint(60, 140)):
            word, roll = rng.choice(_WORDS), rng.random()
            words.append(f"<i>{word}</i>" if roll < 0.03 else f"<b>{word}</b>" if roll < 0.05
                         else word)
        return "<p>" + " ".join(words).capitalize() + ".</p>"

    body = []
    for number in range(1, sections + 1):
        body.append(f"<h2>{number}. Section {rng.choice(_WORDS)} {rng.choice(_WORDS)}</h2>")
        body += [paragraph() for _ in range(5)]
    return ("<html><body style='font-family: Liberation Serif; font-size: 11pt'>"
            "<h1>On the results of generated papers</h1>" + "".join(body) + "</body></html>")


def article_pdf(folder: Path) -> Path:
    """`article_html` exported by LibreOffice: fonts embedded as subsets, as real documents
    are (~70 KB for 6 pages)."""
    from tests.engine.render_office import convert_many

    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "article.html"
    source.write_text(article_html(), encoding="utf-8")
    made = convert_many([source], "pdf:writer_pdf_Export", folder / "pdf", folder / "lo")
    return made[source]


# --- a LaTeX-shaped paper: two columns, a contents page, bookmarks, Flate-compressed pages --

_GERMAN_VOCABULARY = (
    "die der und das mit von den im ist eine sich des auf als nach aus bei zur zum durch "
    "über unter größer kleiner Gestein Gesteine Schicht Schichten Schichtung Störung Störungen "
    "Mächtigkeit Ablagerung Ablagerungen Kalkstein Tonstein Sandstein Mergel Quarzit Gneis "
    "Verwitterung Aufschluss Aufschlüsse Bohrung Bohrkern Probe Proben Körnung Gefüge Faltung "
    "Überschiebung Grundwasser Oberfläche Flußlauf Gewässer Süßwasser Schüttung Geröll Schotter "
    "Täler Hänge Böden Höhe östlich südlich nördlich westlich Gebirge Becken Senke Verhältnisse "
    "Maße Größe Füllung Übergang Gänge Klüfte Spalten Erzgänge Lößdecke"
)
_GERMAN = _GERMAN_VOCABULARY.split()


def _literal(text: str) -> bytes:
    """A PDF literal string's bytes for WinAnsiEncoding (umlauts and ß are single bytes)."""
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
    return b"(" + escaped.encode("cp1252") + b")"


def _justified(rng: random.Random, words: list[str], count: int, chars: int) -> list[str]:
    lines = []
    for _ in range(count):
        line = [rng.choice(words)]
        while len(" ".join(line)) < chars:
            line.append(rng.choice(words))
        lines.append(" ".join(line))
    return lines


def _columns_page(rng: random.Random, words: list[str], top: float, fill: tuple[float, float],
                  size: float, leading: float) -> list[bytes]:
    """Two justified columns of `size` pt Times (word spacing varied per line, as TeX sets
    it), each filled to its share in `fill` of the text block, a run-in heading now and
    then."""
    ops: list[bytes] = []
    for left, share in zip((54.0, 315.0), fill, strict=True):
        y, bottom, index = top, top - (top - 72) * share, 0
        while y > bottom:
            if index and index % 22 == 0:
                y -= leading / 2
                ops.append(f"BT /F2 {size + 1:g} Tf {left} {y:.3f} Td ".encode()
                           + _literal(f"{index // 22}.{rng.randint(1, 9)} "
                                      f"{rng.choice(words).capitalize()}") + b" Tj ET")
                y -= leading * 1.5
            (line,) = _justified(rng, words, 1, int(243 / (size * 0.46)))
            ops.append(f"BT /F1 {size:g} Tf {rng.uniform(0.1, 0.9):.3f} Tw {left} {y:.3f} Td "
                       .encode() + _literal(line) + b" Tj ET")
            y -= leading
            index += 1
    return ops


def _contents_page(rng: random.Random, sections: int, top: float) -> list[bytes]:
    """A table of contents: numbered sections in bold, subsections with dot leaders to their
    page numbers."""
    ops = [f"BT /F2 16 Tf 72 {top:.3f} Td (Contents) Tj ET".encode()]
    y, page = top - 34, 3
    for section in range(1, sections + 1):
        title = f"{section} {rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)}"
        ops.append(f"BT /F2 11 Tf 72 {y:.3f} Td ".encode() + _literal(title) + b" Tj ET")
        ops.append(f"BT /F2 11 Tf 528 {y:.3f} Td ({page}) Tj ET".encode())
        y -= 15
        for sub in range(1, rng.randint(3, 5)):
            title = (f"{section}.{sub} {rng.choice(_WORDS).capitalize()} {rng.choice(_WORDS)} "
                     f"{rng.choice(_WORDS)}")
            ops.append(f"BT /F1 10 Tf 90 {y:.3f} Td ".encode() + _literal(title) + b" Tj ET")
            leaders = " ." * int((420 - 5 * len(title)) / 5)
            ops.append(f"BT /F1 10 Tf {100 + 5 * len(title)} {y:.3f} Td ".encode()
                       + _literal(leaders) + b" Tj ET")
            page += rng.randint(1, 2)
            ops.append(f"BT /F1 10 Tf 528 {y:.3f} Td ({page}) Tj ET".encode())
            y -= 13
        y -= 7
    return ops


def latex_paper(top: float = 738.0, size: float = 10.0, seed: int = 2, contents_top: float = 720.0,
                last: tuple[float, float] = (0.3, 0.18)) -> pikepdf.Pdf:
    """What LaTeX makes of a two-column article, in standard Type 1 fonts (Times, not
    embedded): two pages of dense justified text in two columns (`size` pt, one of them
    German, with umlauts and ß), a contents page, and a last page whose two columns end
    part-way down; a bookmark for each page (/Outlines, as hyperref writes them) and every
    content stream Flate-compressed. `top` is the first baseline of the text columns."""
    rng = random.Random(seed)
    pdf = pikepdf.new()
    fonts = Dictionary(F1=_font(pdf, "Times-Roman"), F2=_font(pdf, "Times-Bold"))
    leading = size * 1.2
    pages = [
        ("Introduction", _columns_page(rng, _WORDS, top, (1, 1), size, leading)),
        ("Geologische Übersicht", _columns_page(rng, _GERMAN, top, (1, 1), size, leading)),
        ("Contents", _contents_page(rng, 8, contents_top)),
        ("References", _columns_page(rng, _WORDS, top, last, size, leading)),
    ]
    for number, (_title, ops) in enumerate(pages, 1):
        page = pdf.add_blank_page(page_size=(612, 792))
        page.Resources = Dictionary(Font=fonts)
        ops.append(f"BT /F1 {size:g} Tf 303 40 Td ({number}) Tj ET".encode())
        page.Contents = pikepdf.Stream(pdf, zlib.compress(b"\n".join(ops)),
                                       Filter=Name.FlateDecode)
    with pdf.open_outline() as outline:
        for index, (title, _ops) in enumerate(pages):
            outline.root.append(pikepdf.OutlineItem(title, index))
    return pdf
