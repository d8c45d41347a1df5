"""Visual fidelity for tests: render pages and compare them with SSIM."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pypdfium2 as pdfium
from PIL import Image


def ssim(a: Image.Image, b: Image.Image) -> float:
    """Mean structural similarity of two images in grayscale (8x8 windows, the usual constants).
    The second image is resized to the first when their sizes differ by rounding."""
    a = a.convert("L")
    b = b.convert("L")
    if a.size != b.size:
        b = b.resize(a.size, Image.Resampling.LANCZOS)
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    c1, c2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2
    h, w = (x.shape[0] // 8) * 8, (x.shape[1] // 8) * 8
    if h == 0 or w == 0:
        return 1.0 if np.array_equal(x, y) else 0.0
    xb = x[:h, :w].reshape(h // 8, 8, w // 8, 8)
    yb = y[:h, :w].reshape(h // 8, 8, w // 8, 8)
    mx, my = xb.mean(axis=(1, 3)), yb.mean(axis=(1, 3))
    vx, vy = xb.var(axis=(1, 3)), yb.var(axis=(1, 3))
    cov = ((xb - mx[:, None, :, None]) * (yb - my[:, None, :, None])).mean(axis=(1, 3))
    s = ((2 * mx * my + c1) * (2 * cov + c2)) / ((mx**2 + my**2 + c1) * (vx + vy + c2))
    return float(s.mean())


def pdf_text(path: Path) -> str:
    """Every page's text, as PDFium extracts it (pages joined with nothing between)."""
    pdf = pdfium.PdfDocument(str(path))
    try:
        return "".join(page.get_textpage().get_text_range() for page in pdf)
    finally:
        pdf.close()


def render_pdf(path: Path, dpi: int = 72) -> list[Image.Image]:
    pdf = pdfium.PdfDocument(str(path))
    try:
        return [page.render(scale=dpi / 72).to_pil() for page in pdf]
    finally:
        pdf.close()


def min_page_ssim(original: Path, sanitized: Path, dpi: int = 72) -> float:
    a, b = render_pdf(original, dpi), render_pdf(sanitized, dpi)
    assert len(a) == len(b), f"page count changed: {len(a)} -> {len(b)}"
    return min(ssim(x, y) for x, y in zip(a, b, strict=True))
