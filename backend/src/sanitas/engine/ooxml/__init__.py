"""OOXML (docx/docm/dotx/dotm, xlsx/xlsm/xltx/xltm, pptx/pptm/ppsx/ppsm/potx/potm) sanitizer.

The package is rebuilt from its relationship graph: starting at _rels/.rels, only parts reached
through relationship types on an allowlist survive, so anything hidden in an unreferenced or
unknown part is gone by construction. Each kept XML part is re-parsed without entities and
cleaned (fields, objects, controls, macro hooks, external references); raster images are
re-encoded; [Content_Types].xml and every .rels part are written anew from what was kept, so
nothing dangles and the result opens without a repair prompt.

One module per concern: `package` (the entry point and the relationship walk), `content_types`,
`parts` (one XML part), `word`, `excel`, `powerpoint`, `review` and `word_revisions` (comments,
tracked changes, reviewers), `output` (the package written anew), with `state` and `common`
beneath them. Type detection reads packages through `engine/opc.py`, never through this package.
"""

from __future__ import annotations

from sanitas.engine.ooxml.package import sanitize

__all__ = ["sanitize"]
