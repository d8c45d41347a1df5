"""Dangerzone's pixel pipeline, for bench_engine.py's like-with-like figures (issue 30): its
doc_to_pixels (PyMuPDF renders each page at 150 DPI to RGB) and pixels_to_pdf (each page's
pixels become a PDF page, with OCR through MuPDF's built-in tesseract when asked, as
Dangerzone 0.8 does with `Pixmap.pdfocr_tobytes`), without its containers.

Not part of the product and not a dependency: run it with a Python that has PyMuPDF (AGPL),
e.g. `python3 -m venv /tmp/dz && /tmp/dz/bin/pip install pymupdf`, then
`bench_engine.py --ocr --dangerzone-python /tmp/dz/bin/python`.

Usage: PYTHON dangerzone_pixels.py INPUT.pdf OUTPUT.pdf ocr|plain TESSDATA
Prints one line of JSON: pages, CPU seconds (this process, tesseract included: it runs
in-process), wall seconds.
"""

import json
import os
import sys
import time

import pymupdf

DPI = 150


def main() -> None:
    source, target, how, tessdata = sys.argv[1:5]
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")  # one core, as one Sanitas OCR process
    cpu, wall = time.process_time(), time.perf_counter()
    pages = []
    with pymupdf.open(source) as document:
        for page in document:
            pixmap = page.get_pixmap(dpi=DPI)
            pages.append((pixmap.width, pixmap.height, pixmap.samples))
    safe = pymupdf.open()
    for width, height, rgb in pages:
        pixmap = pymupdf.Pixmap(pymupdf.Colorspace(pymupdf.CS_RGB), width, height, rgb, False)
        pixmap.set_dpi(DPI, DPI)
        if how == "ocr":
            page_doc = pymupdf.open("pdf", pixmap.pdfocr_tobytes(
                compress=True, language="eng", tessdata=tessdata))
        else:
            page_doc = pymupdf.open()
            page = page_doc.new_page(width=width * 72 / DPI, height=height * 72 / DPI)
            page.insert_image(page.rect, pixmap=pixmap)
        safe.insert_pdf(page_doc)
    safe.save(target, deflate=True, garbage=4)
    print(json.dumps({"pages": len(pages), "cpu": time.process_time() - cpu,
                      "wall": time.perf_counter() - wall}))


if __name__ == "__main__":
    main()
