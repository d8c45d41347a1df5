"""CSS for SVG and HTML: no external loads (but web addresses the policy keeps), no imports
(idem), no script-like constructs."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from sanitas.engine.policy import Action, Rule

if TYPE_CHECKING:
    from sanitas.engine.report import Context

URL_REF = re.compile(r"url\(\s*(['\"]?)(.*?)\1\s*\)", re.IGNORECASE | re.DOTALL)
IMPORT = re.compile(r"@import\b[^;]*;?", re.IGNORECASE)
DANGEROUS = re.compile(r"expression\s*\(|javascript:|vbscript:|-moz-binding|behavior\s*:|"
                       r"@namespace|\\[0-9a-f]", re.IGNORECASE)
DATA_IMAGE = re.compile(r"^data:image/(png|jpeg|jpg|gif|webp);", re.IGNORECASE)
WEB_ADDRESS = re.compile(r"^https?://[^\s/\\]", re.IGNORECASE)
IMPORT_TARGET = re.compile(r"""@import\s+(?:url\(\s*)?(['"]?)([^'"()\s;]*)\1""", re.IGNORECASE)


def web_address(target: str) -> bool:
    """An absolute http or https address (not a file path, a network share or another
    scheme)."""
    return bool(WEB_ADDRESS.match(target.strip()))


class RemoteLoads:
    """Policy externalReferences: under `keep`, loads of web addresses (pictures, style sheets,
    fonts, media) stay, counted for the report; under any other action none does.
    `remote(target, what)` says whether the load of `target` stays."""

    def __init__(self, keep: bool) -> None:
        self.keep = keep
        self.kept: dict[str, int] = {}

    def __call__(self, target: str, what: str) -> bool:
        if not self.keep or not web_address(target) or len(target) > 4096:
            return False
        self.kept[what] = self.kept.get(what, 0) + 1
        return True


Remote = Callable[[str, str], bool]


class Removals:
    """What a markup cleaner (SVG, Markdown, subtitles) took out, counted per (finding kind,
    what), and the remote loads the policy kept (`remote`, for sanitize_css): one finding per
    kind of thing when the cleaner is done (`report`), not one per occurrence."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.removed: dict[tuple[str, str], int] = {}
        self.remote = RemoteLoads(ctx.decides(Rule.EXTERNAL_REFERENCES) is Action.KEEP)

    def drop(self, kind: str, what: str) -> None:
        self.removed[(kind, what)] = self.removed.get((kind, what), 0) + 1

    def report_removed(self) -> None:
        for (kind, what), count in sorted(self.removed.items()):
            self.ctx.add(kind, what, action="removed", detail=f"{count} occurrence(s)")

    def report_remote(self) -> None:
        for what, count in sorted(self.remote.kept.items()):
            self.ctx.add("external_reference", what, action="kept",
                         detail=f"{count} occurrence(s)")

    def report(self) -> None:
        self.report_removed()
        self.report_remote()


def sanitize_css(css: str, drop: Callable[[str, str], None],
                 resource: Callable[[str], bool] | None = None,
                 remote: Remote | None = None) -> str:
    """Return `css` without @import, external url() references or script constructs.
    `drop(kind, what)` records each removal. `resource(target)` says whether a url() target is
    a resource of the same package that is kept (EPUB fonts and pictures); without it, every
    url() but fragments and data images goes. `remote(target, what)` (`RemoteLoads`) says
    whether a web address is kept (policy externalReferences keep)."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.DOTALL)  # comments can split keywords
    if IMPORT.search(css):
        def replace_import(match: re.Match[str]) -> str:
            target = IMPORT_TARGET.match(match.group(0))
            if remote is not None and target is not None and \
                    remote(target.group(2), "CSS @import of a web address"):
                return match.group(0)
            drop("external_reference", "CSS @import")
            return ""

        css = IMPORT.sub(replace_import, css)

    def replace_url(match: re.Match[str]) -> str:
        target = match.group(2).strip()
        if target.startswith("#") or DATA_IMAGE.match(target):
            return match.group(0)
        if resource is not None and resource(target):
            return match.group(0)
        if remote is not None and remote(target, "CSS url() to a web address"):
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
