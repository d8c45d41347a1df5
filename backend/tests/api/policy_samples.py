"""Small PDFs whose policy-decided content is easy to see afterwards (tests of the policy API),
and a policy body builder."""

from __future__ import annotations

import io

import pikepdf
from pikepdf import Array, Dictionary, Name, String

LINK = "https://example.com/policy-link"


def pdf_with_link(url: str = LINK) -> bytes:
    """One page with text and a clickable link annotation to `url`."""
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(300, 200))
    page = pdf.pages[0]
    font = pdf.make_indirect(Dictionary(Type=Name.Font, Subtype=Name.Type1,
                                        BaseFont=Name.Helvetica))
    page.Resources = Dictionary(Font=Dictionary(F1=font))
    page.Contents = pdf.make_stream(b"BT /F1 12 Tf 20 100 Td (Visit the site) Tj ET")
    link = pdf.make_indirect(Dictionary(
        Type=Name.Annot, Subtype=Name.Link, Rect=Array([20, 95, 120, 115]),
        Border=Array([0, 0, 0]), A=Dictionary(S=Name.URI, URI=String(url))))
    page.Annots = Array([link])
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def pdf_with_javascript() -> bytes:
    """A page and an OpenAction running JavaScript."""
    pdf = pikepdf.new()
    pdf.add_blank_page(page_size=(300, 200))
    pdf.Root.OpenAction = pdf.make_indirect(Dictionary(
        Type=Name.Action, S=Name.JavaScript, JS=String("app.alert('hi');")))
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def link_uris(data: bytes) -> list[str]:
    """Every URI action of every page's annotations (read by pikepdf, not the engine)."""
    found = []
    with pikepdf.open(io.BytesIO(data)) as pdf:
        for page in pdf.pages:
            for annot in page.get("/Annots", []):
                action = annot.get("/A")
                if action is not None and action.get("/S") == Name.URI:
                    found.append(str(action.URI))
    return found


def body(name: str = "Links policy", **rules: str) -> dict:
    return {"name": name, "description": "for tests", "rules": dict(rules)}
