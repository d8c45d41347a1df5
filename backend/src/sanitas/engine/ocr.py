"""Advanced mode's text layer: the words of the pages rebuilt from pixels, recognised by
tesseract and written back as invisible text, so the copy can be searched, copied from and read
by screen readers again.

Which pages: those whose original page had text (PDFium finds letters or digits on it) or whose
pixels look like text (`symbols.looks_like_text`: rows of glyph-sized shapes, for scans). A
photograph or a drawing without text is not recognised (a second or more of CPU for nothing,
and tesseract reads words into pictures).

How: each chosen page's grey pixels (the rendering made for the rebuild, not a second one)
go to the job's tmpfs as an uncompressed TIFF carrying the page's resolution, shrunk first when
the original's text is large enough to be read with fewer pixels (`recognition_dpi`: 13 pixels
to the em of the page's small text as PDFium measures it, so 12 pt body text is read at about
77 DPI, 10 pt at about 96, 8 pt at 119; a scan, or a page with too few letters to tell,
such as a stamp over a scan, keeps its rendering's). Fewer pixels is less time
(a page of 25 lines of 12 pt text: 1.07 CPU seconds at 150 DPI, 0.61 at 90, the same words).
Pages are grouped into chunks of up to CHUNK_PAGES and each chunk is one
`tesseract LIST OUT -l LANGS tsv` process (the model loads once per chunk: ~0.35 s), with one
OpenMP thread each (tesseract's default team spins on 2 cores: 5 s a page, not 1), as many at
once as the job has cores (`os.sched_getaffinity`), while the pages are still being rendered.
tesseract runs inside the job's sandbox as a child of the engine, under its limits (memory,
CPU, processes, no network); its binary and language data come from the read-only /usr.

The layer: tesseract's TSV (word boxes and text) parsed here, and each line written by this
code into a new content stream of the page as one `TJ` of UTF-16 codes (literal strings, every
delimiter, backslash and line end escaped) in text rendering mode 3 (invisible), with a
glyphless CID font shared by every page (tesseract's own `pdf.ttf`, one blank glyph, embedded
when the language data folder has it) whose ToUnicode maps every code to itself. The words are
derived from untrusted pixels, but they only ever become escaped bytes of a string this code
writes: nothing of them is parsed as PDF. Words are placed on their boxes (font size the line's
height, the line's horizontal scaling fitting its letters to its words, a kerning step to each
word's left edge), so search hits and selections land on the picture of the word.

Languages: SANITAS_OCR_LANGUAGES ("eng"; "eng+deu" for several), each needs its
tesseract-ocr-LANG package. Recognition errors happen (the report says the text was
re-recognised): on clean 8-14 pt text word recall against the original's text is 0.9 or more
at the chosen resolution (tests/engine/test_ocr.py; figures: bench/bench_engine.py --ocr).
"""

from __future__ import annotations

import contextlib
import glob
import math
import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pikepdf
from pikepdf import Array, Dictionary, Name
from PIL import Image

# A tesseract language list: names joined by "+" (never an option: no leading "-").
LANGUAGES_PATTERN = r"^[A-Za-z0-9_]{1,40}(\+[A-Za-z0-9_]{1,40}){0,9}$"
DEFAULT_LANGUAGES = "eng"
CHUNK_PAGES = 8  # pages per tesseract process at most (one model load each)
MAX_WORKERS = 8  # tesseract processes at once, at most (and at most the job's cores)
# Resolution: tesseract's time grows with the pixels it gets; its recall falls off below ~12
# pixels to the em (measured on the test documents: 10 pt Times at 72 DPI, 10 px, 0.64; at 85
# DPI, 11.8 px, 0.96; at 100 DPI, 13.9 px, 0.99). Text pages are given EM_PIXELS to the em of
# their small text, from the 150 DPI rendering, shrunk. 13, not 15: 8% fewer instructions a
# page of 12 pt text (callgrind: the layout analysis and the line images shrink), worst page
# recall 0.959 over the generated letters (8-14 pt Helvetica, Times, Courier), 0.962 on the
# LibreOffice article with embedded fonts; 12 gave 0.906 there, 11 0.918 on the letters.
EM_PIXELS = 13
LOOSE_BOX_EMS = 1.15  # PDFium's loose box of a character (ascent to descent), in ems
MIN_OCR_DPI = 72
MAX_OCR_PIXELS = 25_000_000  # a larger page is shrunk for recognition (tesseract's memory)
MAX_QUEUED_BYTES = 256 * 1024 * 1024  # page images waiting on the tmpfs at most
SECONDS_PER_PAGE = 120  # a chunk's process is stopped after this many seconds per page
MAX_TSV_BYTES = 64 * 1024 * 1024
MAX_WORDS_PER_PAGE = 50_000
CHAR_WIDTH = 500  # the glyphless font's one advance (thousandths of the font size)
TESSDATA_GLOBS = ("/usr/share/tesseract-ocr/*/tessdata", "/usr/share/tessdata")
# No fixed-pitch (typewriter) test of each row: the LSTM finds the words and their spaces by
# itself; the test is 1% of a page's instructions (callgrind), and the words (Courier too)
# came back the same without it.
TESSERACT_OPTIONS = ("-c", "textord_disable_pitch_test=1")


@dataclass
class Line:
    """One recognised line: its box and its words, in the page image's pixels (y down)."""

    left: int
    top: int
    right: int
    bottom: int
    words: list[tuple[int, int, str]] = field(default_factory=list)  # (left, right, text)


def tessdata_dirs() -> list[Path]:
    """Where the language data may be (TESSDATA_PREFIX first, then Debian's folders)."""
    found = []
    prefix = os.environ.get("TESSDATA_PREFIX")
    if prefix:
        found.append(Path(prefix))
    for pattern in TESSDATA_GLOBS:
        found.extend(Path(p) for p in sorted(glob.glob(pattern)))
    return [p for p in found if p.is_dir()]


def missing_languages(languages: str) -> list[str]:
    """The languages of `languages` without a .traineddata file in any tessdata folder (none
    when no folder is known: tesseract then says so itself)."""
    folders = tessdata_dirs()
    if not folders:
        return []
    return [lang for lang in languages.split("+")
            if not any((folder / f"{lang}.traineddata").is_file() for folder in folders)]


def recognition_dpi(dpi: float, text_height: float | None) -> float:
    """The resolution a page is recognised at: what gives its small text (`text_height`, points
    from the font's ascent to descent: about LOOSE_BOX_EMS em) EM_PIXELS pixels to the em, never
    under MIN_OCR_DPI nor above `dpi`, the rendering's; `dpi` itself without a height (a
    scan: the rendering is all there is)."""
    if text_height is None or text_height <= 0:
        return dpi
    wanted = EM_PIXELS * 72 * LOOSE_BOX_EMS / text_height
    return min(dpi, max(MIN_OCR_DPI, wanted))


def job_cores() -> int:
    try:
        cores = len(os.sched_getaffinity(0))
    except OSError:
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


def chunk_size(pages: int, workers: int) -> int:
    """Pages per tesseract process: a short document spread over the workers, a long one in
    rounds of equal chunks of at most CHUNK_PAGES (40 pages on 2 cores: six chunks of 7 in
    three rounds, not five of 8 whose last round keeps one core idle)."""
    rounds = max(1, math.ceil(pages / (workers * CHUNK_PAGES)))
    return max(1, min(CHUNK_PAGES, math.ceil(pages / (workers * rounds))))


@dataclass(frozen=True)
class Recognised:
    pixels: tuple[int, int]  # the recognised image's size (the page's, unless shrunk)
    lines: list[Line]


@dataclass
class _Chunk:
    pages: list[tuple[int, Path, tuple[int, int]]]  # (page index, image, its size in pixels)
    bytes: int = 0


class Recogniser:
    """Recognises page images in the background while the caller renders the next pages.

    `add` queues one page's picture; `finish` waits for every chunk and returns each page's
    lines (page index -> lines) and the page indexes whose recognition failed."""

    def __init__(self, tesseract: str, languages: str, workdir: Path, pages: int) -> None:
        if not re.fullmatch(LANGUAGES_PATTERN, languages):
            raise ValueError(f"not a tesseract language list: {languages!r}")
        self.tesseract = tesseract
        self.languages = languages
        self.folder = workdir / "ocr"
        self.folder.mkdir(exist_ok=True)
        self.workers = job_cores()
        self.chunk_pages = chunk_size(pages, self.workers)
        self.pool = ThreadPoolExecutor(self.workers, thread_name_prefix="ocr")
        self.chunk = _Chunk([])
        self.running: list[tuple[_Chunk, Future[dict[int, list[Line]] | None]]] = []
        self.queued = 0
        self.lock = threading.Lock()

    def add(self, index: int, picture: Image.Image, dpi: float,
            text_height: float | None = None) -> None:
        """Queue one page's picture (rendered at `dpi`); `text_height`: the height in points of
        its small text when the original had text (see `recognition_dpi`)."""
        grey = picture.convert("L")
        shrink = min(recognition_dpi(dpi, text_height) / dpi,
                     math.sqrt(MAX_OCR_PIXELS / (grey.width * grey.height)))
        if shrink < 1:
            grey = grey.resize((max(1, round(grey.width * shrink)),
                                max(1, round(grey.height * shrink))), Image.Resampling.BOX)
            dpi *= shrink
        self._wait_for_room()
        path = self.folder / f"page-{index}.tif"
        grey.save(path, "TIFF", dpi=(round(dpi), round(dpi)))  # uncompressed: no CPU spent
        size = path.stat().st_size
        self.chunk.pages.append((index, path, grey.size))
        self.chunk.bytes += size
        with self.lock:
            self.queued += size
        if len(self.chunk.pages) >= self.chunk_pages:
            self._dispatch()

    def finish(self, progress: Callable[[float], None] | None = None,
               ) -> tuple[dict[int, Recognised], list[int]]:
        """Wait for every page: (page index -> its image's size and lines, failed indexes).
        `progress` gets the share of chunks done (0..1) as they finish."""
        self._dispatch()
        found: dict[int, Recognised] = {}
        failed: list[int] = []
        try:
            for done, (chunk, future) in enumerate(self.running, 1):
                lines = future.result()
                for index, _path, size in chunk.pages:
                    if lines is None:
                        failed.append(index)
                    else:
                        found[index] = Recognised(size, lines.get(index, []))
                if progress is not None:
                    progress(done / len(self.running))
        finally:
            self.close()
        return found, failed

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        for path in self.folder.iterdir():
            path.unlink(missing_ok=True)

    def _dispatch(self) -> None:
        if self.chunk.pages:
            chunk, self.chunk = self.chunk, _Chunk([])
            self.running.append((chunk, self.pool.submit(self._run, chunk, len(self.running))))

    def _wait_for_room(self) -> None:
        """Keep the images waiting for tesseract within MAX_QUEUED_BYTES of the tmpfs."""
        for _chunk, future in self.running:
            with self.lock:
                if self.queued <= MAX_QUEUED_BYTES:
                    return
            with contextlib.suppress(Exception):  # its failure is collected by finish()
                future.result()

    def _run(self, chunk: _Chunk, number: int) -> dict[int, list[Line]] | None:
        listing = self.folder / f"chunk-{number}.txt"
        base = self.folder / f"chunk-{number}"
        try:
            listing.write_text("".join(f"{path}\n" for _index, path, _size in chunk.pages))
            done = subprocess.run(  # noqa: S603 - argv list, no shell; languages validated
                [self.tesseract, str(listing), str(base), "-l", self.languages,
                 *TESSERACT_OPTIONS, "tsv"],
                capture_output=True, timeout=SECONDS_PER_PAGE * len(chunk.pages),
                stdin=subprocess.DEVNULL, check=False,
                env={**os.environ, "OMP_THREAD_LIMIT": "1"})
            tsv = base.with_suffix(".tsv")
            if done.returncode != 0 or not tsv.is_file():
                return None
            with open(tsv, "rb") as fh:
                data = fh.read(MAX_TSV_BYTES + 1)
            if len(data) > MAX_TSV_BYTES:
                return None
            by_number = parse_tsv(data.decode("utf-8", "replace"))
            return {index: by_number.get(number + 1, [])
                    for number, (index, _path, _size) in enumerate(chunk.pages)}
        except (OSError, subprocess.SubprocessError):
            return None
        finally:
            for _index, path, _size in chunk.pages:
                path.unlink(missing_ok=True)
            with self.lock:
                self.queued -= chunk.bytes
            for path in (listing, base.with_suffix(".tsv")):
                path.unlink(missing_ok=True)


def parse_tsv(text: str) -> dict[int, list[Line]]:
    """tesseract's TSV as lines of words per page number (1-based, as tesseract counts the
    images of its list). Rows: level, page_num, block_num, par_num, line_num, word_num, left,
    top, width, height, conf, text; level 4 is a line, level 5 a word. Malformed rows are
    skipped; a page keeps at most MAX_WORDS_PER_PAGE words."""
    pages: dict[int, dict[tuple[int, int, int], Line]] = {}
    counts: dict[int, int] = {}
    for row in text.splitlines():
        fields = row.split("\t", 11)
        if len(fields) < 11 or not fields[0].isdigit():
            continue
        try:
            level, page, block, paragraph, line_number = (int(v) for v in fields[:5])
            left, top, width, height = (int(v) for v in fields[6:10])
            confidence = float(fields[10])
        except ValueError:
            continue
        key = (block, paragraph, line_number)
        lines = pages.setdefault(page, {})
        if level == 4:
            lines[key] = Line(left, top, left + width, top + height)
        elif level == 5 and len(fields) == 12 and confidence >= 0:
            word = _printable(fields[11])
            if not word or width <= 0 or counts.get(page, 0) >= MAX_WORDS_PER_PAGE:
                continue
            counts[page] = counts.get(page, 0) + 1
            line = lines.setdefault(key, Line(left, top, left + width, top + height))
            line.words.append((left, left + width, word))
    return {page: [line for line in lines.values() if line.words]
            for page, lines in pages.items()}


def _printable(word: str) -> str:
    """The word's characters that the font's codes can carry: the Basic Multilingual Plane
    without controls and surrogates (whitespace inside a word becomes nothing)."""
    return "".join(ch for ch in word.strip() if 0x20 < ord(ch) <= 0xFFFF
                   and not 0xD800 <= ord(ch) < 0xE000 and not ch.isspace())


# --- the text layer ---------------------------------------------------------------------------

def _to_unicode_cmap() -> bytes:
    """Every 2-byte code is its own UTF-16 unit (256 ranges: a range varies its last byte)."""
    ranges = [f"<{high:02X}00> <{high:02X}FF> <{high:02X}00>" for high in range(256)]
    blocks = [ranges[start:start + 100] for start in range(0, 256, 100)]
    body = "".join(f"{len(block)} beginbfrange\n" + "\n".join(block) + "\nendbfrange\n"
                   for block in blocks)
    return ("/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
            "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n"
            "/CMapName /Sanitas-OCR-UCS def /CMapType 2 def\n"
            "1 begincodespacerange <0000> <FFFF> endcodespacerange\n" + body
            + "endcmap CMapName currentdict /CMap defineresource pop end end\n").encode()


def glyphless_font(pdf: pikepdf.Pdf) -> pikepdf.Dictionary:
    """The invisible text's font (Type 0, 2-byte codes, every code one blank glyph of width
    CHAR_WIDTH), added once per document."""
    descriptor = Dictionary(Type=Name.FontDescriptor, FontName=Name.GlyphLessFont, Flags=5,
                            FontBBox=Array([0, 0, CHAR_WIDTH, 1000]), ItalicAngle=0,
                            Ascent=1000, Descent=0, CapHeight=1000, StemV=80)
    cid_font = Dictionary(Type=Name.Font, Subtype=Name.CIDFontType2,
                          BaseFont=Name.GlyphLessFont, DW=CHAR_WIDTH,
                          CIDSystemInfo=Dictionary(Registry=pikepdf.String("Adobe"),
                                                   Ordering=pikepdf.String("Identity"),
                                                   Supplement=0))
    program = next((folder / "pdf.ttf" for folder in tessdata_dirs()
                    if (folder / "pdf.ttf").is_file()), None)
    if program is not None and program.stat().st_size <= 64 * 1024:
        # tesseract's glyphless font: glyph 1 is blank; every code is drawn with it.
        descriptor.FontFile2 = pikepdf.Stream(pdf, program.read_bytes())
        cid_font.CIDToGIDMap = pikepdf.Stream(pdf, b"\x00\x01" * 65536)
    else:
        cid_font.CIDToGIDMap = Name.Identity
    cid_font.FontDescriptor = pdf.make_indirect(descriptor)
    return pdf.make_indirect(Dictionary(
        Type=Name.Font, Subtype=Name.Type0, BaseFont=Name.GlyphLessFont,
        Encoding=Name("/Identity-H"), DescendantFonts=Array([pdf.make_indirect(cid_font)]),
        ToUnicode=pikepdf.Stream(pdf, _to_unicode_cmap())))


# In a literal string these bytes need a backslash: the delimiters, the escape itself, and
# the line ends a reader would normalise.
_ESCAPES = {ord("("): b"\\(", ord(")"): b"\\)", ord("\\"): b"\\\\", 0x0D: b"\\r",
            0x0A: b"\\n"}


def _codes(text: str) -> bytes:
    """`text` as the font's 2-byte codes (UTF-16BE units), a PDF literal string's body with
    every delimiter, backslash and line end escaped: nothing of it can end the string."""
    return b"".join(_ESCAPES.get(byte, bytes((byte,))) for byte in text.encode("utf-16-be"))


def _number(value: float, places: int = 2) -> str:
    text = f"{value:.{places}f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text


def text_layer_ops(lines: Iterable[Line], pixels: tuple[int, int],
                   points: tuple[float, float], font: str = "/OCR") -> bytes:
    """The content stream of the invisible words of one page (`pixels`: the recognised image's
    size; `points`: the page's). Empty when there are no words."""
    scale_x, scale_y = points[0] / pixels[0], points[1] / pixels[1]
    ops: list[bytes] = []
    for line in lines:
        size = max(1.0, (line.bottom - line.top) * scale_y)
        letters = sum(len(text) for _l, _r, text in line.words) + len(line.words) - 1
        covered = sum(right - left for left, right, _t in line.words) * scale_x
        gaps = (line.words[-1][1] - line.words[0][0]) * scale_x - covered
        # Horizontal scaling: the line's characters (spaces included) over the line's width.
        advance = CHAR_WIDTH / 1000 * size
        stretch = max(0.01, min(100.0, (covered + max(0.0, gaps)) / (letters * advance)))
        step = advance * stretch  # one character's width on the page
        x0 = line.words[0][0] * scale_x
        y = points[1] - line.bottom * scale_y
        parts: list[bytes] = []
        pen = x0
        for number, (left, _right, text) in enumerate(line.words):
            start = left * scale_x
            shift = round(-(start - pen) * 1000 / (size * stretch))  # thousandths of the size
            if shift:
                parts.append(str(shift).encode())
            shown = text if number == len(line.words) - 1 else text + " "
            parts.append(b"(" + _codes(shown) + b")")
            pen = start + len(shown) * step
        ops.append(f"{_number(stretch * 100, 1)} Tz {_number(size)} 0 0 {_number(size)} "
                   f"{_number(x0, 1)} {_number(y, 1)} Tm [".encode() + b"".join(parts)
                   + b"] TJ")
    if not ops:
        return b""
    return f"BT 3 Tr {font} 1 Tf\n".encode() + b"\n".join(ops) + b"\nET"


def add_text_layer(pdf: pikepdf.Pdf, page: pikepdf.Page, lines: list[Line],
                   pixels: tuple[int, int], points: tuple[float, float],
                   font: pikepdf.Dictionary) -> bool:
    """Append the invisible words to `page` (after its own, balanced, content). False when
    there was nothing to write."""
    ops = text_layer_ops(lines, pixels, points)
    if not ops:
        return False
    resources = page.obj.Resources
    if "/Font" not in resources:
        resources.Font = Dictionary()
    resources.Font.OCR = font
    page.contents_add(pikepdf.Stream(pdf, ops), prepend=False)
    return True
