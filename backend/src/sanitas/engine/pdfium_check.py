"""PDFium (Chromium's PDF parser, independent of qpdf) as the second reader of every PDF the
engine writes. It calls the handful of PDFium C functions it needs on the library pypdfium2
ships: importing pypdfium2 itself (its generated bindings and helpers) costs 25-40 ms of every
PDF job, loading the library about 3 ms. PDFium initialises once per process; a later
`import pypdfium2` (advanced mode) finds it initialised and carries on.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
import threading
from pathlib import Path
from typing import Protocol, cast

_LIBRARY_NAMES = {"win32": "pdfium.dll", "darwin": "libpdfium.dylib"}
_pdfium: _Pdfium | None = None
_lock = threading.Lock()  # PDFium is not thread-safe (threads share it without a sandbox)


class _Pdfium(Protocol):
    """The PDFium functions called here: the ctypes prototypes _library sets, or pypdfium2's
    own bindings of the same names. Handles are opaque (falsy when a call failed)."""

    def FPDF_InitLibrary(self) -> None: ...
    def FPDF_LoadDocument(self, path: bytes, password: bytes | None, /) -> object: ...
    def FPDF_GetLastError(self) -> int: ...
    def FPDF_DocumentHasValidCrossReferenceTable(self, document: object, /) -> int: ...
    def FPDF_GetPageCount(self, document: object, /) -> int: ...
    def FPDF_GetPageSizeByIndexF(self, document: object, index: int, size: object, /) -> int:
        ...
    def FPDF_LoadPage(self, document: object, index: int, /) -> object: ...
    def FPDF_ClosePage(self, page: object, /) -> None: ...
    def FPDF_CloseDocument(self, document: object, /) -> None: ...


class _Size(ctypes.Structure):  # FS_SIZEF
    _fields_ = (("width", ctypes.c_float), ("height", ctypes.c_float))


class Unreadable(Exception):
    """PDFium cannot read the file cleanly; the message says what it met."""


def _library() -> _Pdfium:
    global _pdfium
    if _pdfium is not None:
        return _pdfium
    lib: _Pdfium | None = None
    spec = importlib.util.find_spec("pypdfium2_raw")  # finds the package without importing it
    if spec is not None and spec.origin:
        path = Path(spec.origin).parent / _LIBRARY_NAMES.get(sys.platform, "libpdfium.so")
        if path.exists():
            cdll = ctypes.CDLL(str(path))
            handle, text, number = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
            for name, result, arguments in (
                    ("FPDF_InitLibrary", None, ()),
                    ("FPDF_LoadDocument", handle, (text, text)),
                    ("FPDF_GetLastError", ctypes.c_ulong, ()),
                    ("FPDF_DocumentHasValidCrossReferenceTable", number, (handle,)),
                    ("FPDF_GetPageCount", number, (handle,)),
                    ("FPDF_GetPageSizeByIndexF", number, (handle, number,
                                                          ctypes.POINTER(_Size))),
                    ("FPDF_LoadPage", handle, (handle, number)),
                    ("FPDF_ClosePage", None, (handle,)),
                    ("FPDF_CloseDocument", None, (handle,))):
                function = getattr(cdll, name)
                function.restype, function.argtypes = result, arguments
            lib = cast("_Pdfium", cdll)  # every function above now has its prototype
    if lib is None:  # not where pypdfium2 keeps it: its own bindings (same names, slower)
        import pypdfium2_raw

        lib = pypdfium2_raw
    lib.FPDF_InitLibrary()
    _pdfium = lib
    return lib


def page_count(path: Path | str) -> int:
    """Open `path` in PDFium; the page count. `Unreadable` when PDFium cannot open it, had to
    rebuild its cross-reference table, cannot resolve a page's dictionary and size, or cannot
    load (parse, content included) the first page. Parsing every page's content would cost
    ~0.2 ms a page and check nothing qpdf has not already re-encoded."""
    with _lock:
        return _page_count(_library(), os.fsencode(path))


def _page_count(lib: _Pdfium, path: bytes) -> int:
    document = lib.FPDF_LoadDocument(path, None)
    if not document:
        raise Unreadable(f"PDFium cannot open it (error {lib.FPDF_GetLastError()})")
    try:
        if not lib.FPDF_DocumentHasValidCrossReferenceTable(document):
            raise Unreadable("PDFium had to rebuild its cross-reference table")
        count = lib.FPDF_GetPageCount(document)
        size = getattr(lib, "FS_SIZEF", _Size)()  # pypdfium2's own struct in the fallback
        for index in range(count):
            if not lib.FPDF_GetPageSizeByIndexF(document, index, ctypes.byref(size)):
                raise Unreadable(f"PDFium cannot read page {index + 1}")
        if count:
            page = lib.FPDF_LoadPage(document, 0)  # parses the page and its content
            if not page:
                raise Unreadable("PDFium cannot load the first page")
            lib.FPDF_ClosePage(page)
        return count
    finally:
        lib.FPDF_CloseDocument(document)
