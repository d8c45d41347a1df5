"""CSS for SVG and HTML: no external loads, no imports, no script-like constructs."""

from __future__ import annotations

import re
from collections.abc import Callable

URL_REF = re.compile(r"url\(\s*(['\"]?)(.*?)\1\s*\)", re.IGNORECASE | re.DOTALL)
IMPORT = re.compile(r"@import\b[^;]*;?", re.IGNORECASE)
DANGEROUS = re.compile(r"expression\s*\(|javascript:|vbscript:|-moz-binding|behavior\s*:|"
                       r"@namespace|\\[0-9a-f]", re.IGNORECASE)
DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|jpg|gif|webp);", re.IGNORECASE)


def sanitize_css(css: str, drop: Callable[[str, str], None],
                 resource: Callable[[str], bool] | None = None) -> str:
    """Return `css` without @import, external url() references or script constructs.
    `drop(kind, what)` records each removal. `resource(target)` says whether a url() target is
    a resource of the same package that is kept (EPUB fonts and pictures); without it, every
    url() but fragments and data images goes."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)  # comments can split keywords
    if IMPORT.search(css):
        drop("external_reference", "CSS @import")
        css = IMPORT.sub("", css)

    def replace_url(match: re.Match[str]) -> str:
        target = match.group(2).strip()
        if target.startswith("#") or DATA_IMAGE.match(target):
            return match.group(0)
        if resource is not None and resource(target):
            return match.group(0)
        drop("external_reference", "CSS url() to another resource")
        return "none"

    css = URL_REF.sub(replace_url, css)
    if DANGEROUS.search(css):
        # Escapes and script constructs: drop the offending declarations wholesale.
        kept = []
        for declaration in re.split(r"(?<=[;{}])", css):
            if DANGEROUS.search(declaration):
                drop("javascript", "CSS script construct")
                kept.append("}" if declaration.rstrip().endswith("}") else "")
            else:
                kept.append(declaration)
        css = "".join(kept)
    return css
