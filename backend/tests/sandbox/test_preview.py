"""The preview the job's sandbox draws after its result (engine/preview.py through
sandbox/child.py and bwrap.run_in_bwrap): of the sanitized output, bounded, a bare PNG, and
never at the cost of the file."""

from __future__ import annotations

import io
from pathlib import Path

import pikepdf
import pypdfium2 as pdfium
from PIL import Image

from sanitas.sandbox import PreviewRequest, run_sanitizer
from tests.preview_samples import marked_pdf, png_chunks, red_share


def _run(settings, source: Path, name: str, tmp_path: Path, *, max_side: int = 800,
         seconds: float = 20.0, mode: str = "basic"):
    preview = PreviewRequest(tmp_path / "preview.png", max_side, seconds)
    result = run_sanitizer(source, tmp_path / "out", mode=mode, settings=settings,
                           original_name=name, prewarm=False, preview=preview)
    return result, preview.path


def test_pdf_preview_is_the_sanitized_first_page(sandbox_settings, tmp_path):
    source = tmp_path / "marked.pdf"
    source.write_bytes(marked_pdf(600, 400))
    # As uploaded, the first page is red all over (the annotation's appearance).
    original = pdfium.PdfDocument(str(source))[0].render(scale=1, draw_annots=True).to_pil()
    assert red_share(original) > 0.9
    result, path = _run(sandbox_settings, source, "marked.pdf", tmp_path, max_side=300)
    assert result.status == "ok", result.reason
    assert any(f.kind == "screen_annotation" for f in result.findings)
    data = path.read_bytes()
    chunks = png_chunks(data)
    assert chunks[0] == b"IHDR" and chunks[-1] == b"IEND"
    assert set(chunks) == {b"IHDR", b"IDAT", b"IEND"}  # no text, ICC, EXIF, pHYs
    picture = Image.open(io.BytesIO(data))
    assert picture.format == "PNG" and picture.size == (300, 200)  # long side bounded
    assert red_share(picture) < 0.01  # the output's page: the annotation was removed
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["marked.pdf"]
    assert not list(tmp_path.glob(".sanitas-preview-*"))  # no partial left behind


def test_image_preview_is_downscaled_without_metadata(sandbox_settings, sandbox_corpus,
                                                      tmp_path):
    big = Image.new("RGB", (2400, 1200), (10, 200, 30))
    exif = Image.Exif()
    exif[0x010E] = "secret description"
    source = tmp_path / "photo.jpg"
    big.save(source, "JPEG", exif=exif, quality=90)
    result, path = _run(sandbox_settings, source, "photo.jpg", tmp_path)
    assert result.status == "ok", result.reason
    data = path.read_bytes()
    assert set(png_chunks(data)) <= {b"IHDR", b"IDAT", b"IEND"}
    assert b"secret" not in data
    picture = Image.open(io.BytesIO(data))
    assert picture.size == (800, 400)
    r, g, b = picture.convert("RGB").getpixel((400, 200))
    assert g > 150 and r < 60 and b < 80


def test_no_preview_for_types_without_one_or_refused_files(sandbox_settings, sandbox_corpus,
                                                           tmp_path):
    result, path = _run(sandbox_settings, sandbox_corpus["notes.txt"], "notes.txt",
                        tmp_path / "a")
    assert result.status == "ok" and not path.exists()
    result, path = _run(sandbox_settings, sandbox_corpus["invoice.pdf"], "invoice.pdf",
                        tmp_path / "b")
    assert result.status == "rejected" and not path.exists()


def test_a_preview_out_of_time_leaves_the_result_alone(sandbox_settings, tmp_path):
    # A page of 200,000 little squares takes PDFium over a second to draw: past the
    # preview's budget the sandbox is stopped, and the sanitized file stays.
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(600, 600))
    pdf.pages[0].obj.Contents = pdf.make_stream(b"".join(
        b"%d %d 1 1 re f\n" % (i % 600, (i // 600) % 600) for i in range(200_000)))
    source = tmp_path / "busy.pdf"
    pdf.save(source, compress_streams=True)
    result, path = _run(sandbox_settings, source, "busy.pdf", tmp_path, seconds=0.02)
    assert result.status == "ok", result.reason
    assert Path(result.output).read_bytes().startswith(b"%PDF-")
    assert not path.exists() and not list(tmp_path.glob(".sanitas-preview-*"))
