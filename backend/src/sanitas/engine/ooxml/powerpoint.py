"""PowerPoint slides: OLE objects replaced by their preview, ActiveX controls, animation
commands."""

from __future__ import annotations

import copy

from lxml import etree

from sanitas.engine.office_package import remove_element
from sanitas.engine.ooxml.common import A_NS, A_NSS, elements, ns_of
from sanitas.engine.ooxml.state import PackageState, embedded_kept
from sanitas.engine.opc import P_NSS, local_name


def clean_slide(state: PackageState, part: str, root: etree._Element) -> None:
    for gf in elements(root, P_NSS, "graphicFrame"):
        data = next(iter(elements(gf, A_NSS, "graphicData")), None)
        if data is None or not (data.get("uri") or "").endswith("/ole"):
            continue
        ole = next(iter(elements(gf, P_NSS, "oleObj")), None)
        if ole is not None and state.kept_embeddings and embedded_kept(state, ole):
            continue  # an embedded object the policy keeps
        prog = (ole.get("progId") or "") if ole is not None else ""
        frame = next(iter(elements(gf, P_NSS, "cNvPr")), None)
        name = (frame.get("name") or "") if frame is not None else ""
        what = " ".join(w for w in ("OLE object", prog[:80], repr(name[:80]) if name else "")
                        if w)
        pic = next(iter(elements(gf, P_NSS, "pic")), None)
        if pic is None:
            state.ctx.add("ole_object", part, detail=f"{what} removed (no preview image)")
            remove_element(gf)
            continue
        state.ctx.add("ole_object", part, detail=f"{what} replaced by its preview image",
                      action="converted")
        new = copy.deepcopy(pic)
        _adopt_frame(gf, new)
        gf.addprevious(new)
        remove_element(gf)
    for controls in elements(root, P_NSS, "controls"):
        tree = next(iter(elements(root, P_NSS, "spTree")), None)
        for ctl in elements(controls, P_NSS, "control"):
            state.ctx.add("activex", part, detail=f"ActiveX control {ctl.get('name', '')}")
            pic = next(iter(elements(ctl, P_NSS, "pic")), None)
            if pic is not None and tree is not None:
                new = copy.deepcopy(pic)
                cnv = next(iter(elements(new, P_NSS, "cNvPr")), None)
                if cnv is not None:
                    cnv.set("id", str(_max_shape_id(root) + 1))
                tree.append(new)
        remove_element(controls)
    # Animation commands can invoke OLE verbs or macros; the static slide stays the same.
    for timing in elements(root, P_NSS, "timing"):
        if any(local_name(e) == "cmd" for e in timing.iter()):
            state.ctx.add("action", part, detail="animation commands (OLE verb or macro call)")
            remove_element(timing)


def _max_shape_id(root: etree._Element) -> int:
    ids = [int(i) for e in elements(root, P_NSS, "cNvPr") if (i := e.get("id") or "").isdigit()]
    return max(ids, default=1)


def _adopt_frame(gf: etree._Element, pic: etree._Element) -> None:
    """Give the preview picture the frame's id, name and position."""
    src = next(iter(elements(gf, P_NSS, "cNvPr")), None)
    dst = next(iter(elements(pic, P_NSS, "cNvPr")), None)
    if src is not None and dst is not None:
        dst.set("id", src.get("id", "1"))
        dst.set("name", src.get("name", "Picture"))
    xfrm = next((c for c in gf if local_name(c) == "xfrm"), None)
    sppr = next((c for c in pic if local_name(c) == "spPr"), None)
    if xfrm is None or sppr is None:
        return
    for old in [c for c in sppr if local_name(c) == "xfrm"]:
        sppr.remove(old)
    a_ns = ns_of(xfrm[0]) if len(xfrm) else A_NS
    new = etree.Element(f"{{{a_ns}}}xfrm")
    for k, v in xfrm.attrib.items():
        new.set(k, v)
    for c in xfrm:
        new.append(etree.Element(f"{{{a_ns}}}{local_name(c)}", dict(c.attrib)))
    sppr.insert(0, new)
