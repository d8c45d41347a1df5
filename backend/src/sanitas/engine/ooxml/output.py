"""The rebuilt package written out: [Content_Types].xml and every .rels part written anew from
what was kept, and what was left behind reported."""

from __future__ import annotations

import posixpath
from pathlib import Path

from lxml import etree

from sanitas.engine.office_package import serialize, write_package
from sanitas.engine.ooxml.common import CT_NS, PKG_REL_NS
from sanitas.engine.ooxml.state import PackageState, rels_name


def report_orphans(state: PackageState) -> None:
    for name in state.members:
        low = name.casefold()
        if name in state.kept or low.endswith(".rels") or low == "[content_types].xml":
            continue
        if "part|" + name in state.reported:
            continue
        kind = "macro" if "vba" in low else "orphan_part"
        state.ctx.add(kind, name, detail="part not reachable from the document")


_CANONICAL_EXT = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg",
                  "gif": "image/gif", "bmp": "image/bmp", "tif": "image/tiff",
                  "tiff": "image/tiff", "emf": "image/x-emf", "wmf": "image/x-wmf",
                  "webp": "image/webp"}


def write(state: PackageState, dst: Path) -> None:
    defaults = {"rels": "application/vnd.openxmlformats-package.relationships+xml",
                "xml": "application/xml"}
    overrides: dict[str, str] = {}
    for part in state.kept:
        ct = state.kept_ct[part]
        ext = posixpath.splitext(part)[1].lstrip(".").lower()
        if part == state.main_part:
            ct = state.overrides["/" + part.casefold()]
        elif part.casefold() == "docprops/core.xml":
            ct = "application/vnd.openxmlformats-package.core-properties+xml"
        elif part.casefold() == "docprops/app.xml":
            ct = "application/vnd.openxmlformats-officedocument.extended-properties+xml"
        else:
            # The type as the package spelled it when it differs only in case: the lookups
            # fold case, but some readers compare exactly (openpyxl finds the shared strings
            # by "...sharedStrings+xml" and reads every text cell as missing without it).
            declared = state.declared_type(part)
            if declared.lower() == ct:
                ct = declared
        if ext in _CANONICAL_EXT and _CANONICAL_EXT[ext] == ct:
            defaults[ext] = ct
        if defaults.get(ext) != ct:
            overrides["/" + part] = ct
    ct_root = etree.Element(f"{{{CT_NS}}}Types", nsmap={None: CT_NS})
    for ext, ct in defaults.items():
        etree.SubElement(ct_root, f"{{{CT_NS}}}Default", Extension=ext, ContentType=ct)
    for name, ct in overrides.items():
        etree.SubElement(ct_root, f"{{{CT_NS}}}Override", PartName=name, ContentType=ct)
    out: list[tuple[str, bytes]] = [("[Content_Types].xml", serialize(ct_root))]
    for source, rels in state.rels_out.items():
        if source and source not in state.kept:
            continue
        if not rels:
            continue
        rroot = etree.Element(f"{{{PKG_REL_NS}}}Relationships", nsmap={None: PKG_REL_NS})
        for r in rels:
            attrs = {"Id": r.id, "Type": r.type}
            if r.external:
                attrs["Target"] = r.target
                attrs["TargetMode"] = "External"
            else:
                assert r.part is not None  # kept internal relationships have their part
                attrs["Target"] = _relative(source, r.part)
            etree.SubElement(rroot, f"{{{PKG_REL_NS}}}Relationship", attrs)
        out.append((rels_name(source), serialize(rroot)))
    for part, data in state.kept.items():
        assert data is not None  # _walk cleaned every XML part or dropped it
        out.append((part, data))
    write_package(dst, out)


def _relative(source: str, target: str) -> str:
    if not source:
        return target
    from urllib.parse import quote

    rel = posixpath.relpath(target, posixpath.dirname(source) or ".")
    return quote(rel, safe="/._-~")
