"""Markdown (.md, .markdown): parsed with markdown-it-py (CommonMark plus GitHub's tables,
strikethrough, task lists and autolinks) and written back as Markdown by mdformat's renderer
from the cleaned token stream, so what is written is what a renderer will see.

What is cleaned, by the same policy rules as an HTML page:
- Raw HTML, in blocks and inline: only harmless formatting elements stay (`KEPT_ELEMENTS`),
  with a few presentational attributes (`KEPT_ATTRIBUTES`); scripts, styles, frames, objects,
  forms and every other element go (the text between an inline element's tags stays, as text),
  event handlers (`on...`) go, `style` attributes lose remote loads and script constructs
  (`css.sanitize_css`). HTML comments are hidden content (`hiddenContent`).
- Links (Markdown, autolinks, reference definitions and `<a href>`): `javascript:`, `data:`,
  `file:` and other schemes than http(s)/mailto are removed (markdown-it already leaves them
  as text; the text is written escaped so no other renderer links it); web links follow the
  `hyperlinks` rule.
- Pictures loaded from the web (`![alt](https://...)`, `<img src>`): removed unless the policy
  keeps external references (tracking pixels), the alt text stays. Local and `data:` pictures
  stay.
- Front matter (a leading `---` YAML block, as Jekyll and Hugo write it): document metadata,
  removed unless the policy keeps `documentMetadata` (then validated and rewritten like a YAML
  file).

Limits: `MAX_MARKDOWN_BYTES` (too_large); markdown-it's nesting limit bounds the tree the
renderer walks.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sanitas.engine.css import Removals, sanitize_css, web_address
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.text import DATA_IMAGE, SAFE_LINK
from sanitas.engine.text_encoding import CONTROL_CHARS, decode

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

    from sanitas.engine.formats import Output

MAX_MARKDOWN_BYTES = 16 * 1024 * 1024
MAX_FRONT_MATTER_LINES = 1000

KEPT_ELEMENTS = frozenset({
    "a", "abbr", "b", "bdi", "blockquote", "br", "caption", "center", "cite", "code", "col",
    "colgroup", "dd", "del", "details", "dfn", "div", "dl", "dt", "em", "figcaption", "figure",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p",
    "picture", "pre", "q", "rp", "rt", "ruby", "s", "samp", "small", "span", "strike", "strong",
    "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead", "time", "tr", "tt",
    "u", "ul", "var", "wbr"})
# Elements whose content goes with them (everything else that is not kept loses only its tags).
DROPPED_WITH_CONTENT = frozenset({
    "script", "style", "iframe", "frame", "frameset", "object", "embed", "applet", "noscript",
    "template", "form", "input", "button", "select", "textarea", "base", "link", "meta", "svg",
    "math", "audio", "video", "source", "track", "portal", "title", "head"})
KEPT_ATTRIBUTES = frozenset({
    "align", "alt", "border", "class", "cellpadding", "cellspacing", "colspan", "dir", "height",
    "href", "lang", "open", "rowspan", "src", "start", "style", "title", "type", "valign", "width",
    "datetime", "id", "name", "reversed", "scope", "span", "summary"})
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]{0,40})([^<>]{0,8192}?)(/?)>\s*$")
_BLOCK_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]{0,40})([^<>]{0,8192}?)(/?)>")
_TAG_START = re.compile(r"<(?=[A-Za-z/!?])")
_TASK_CHECKBOX = re.compile(r'^<input class="task-list-item-checkbox"( checked="checked")? '
                            r'disabled="disabled" type="checkbox">$')


def sanitize(src: Path, dst: Path, ctx: Context, kind: str = "markdown") -> str:
    """The Markdown family's handler."""
    if src.stat().st_size > MAX_MARKDOWN_BYTES:
        raise Rejected(f"The Markdown file is larger than {MAX_MARKDOWN_BYTES // 2**20} MB.",
                       RejectionCode.TOO_LARGE)
    text, encoding = decode(src.read_bytes())
    if encoding != "utf-8":
        ctx.add("encoding", "whole file", action="converted",
                detail=f"{encoding} converted to UTF-8")
    found = CONTROL_CHARS.findall(text)
    if found:
        ctx.add("control_characters", "text", action="removed",
                detail=f"{len(found)} control or direction-override characters")
        text = CONTROL_CHARS.sub("", text)
    front, body = _front_matter(text, ctx)
    out = front + clean_markdown(body, ctx)
    if out.strip() != text.strip():
        ctx.add("structure", "whole document", action="converted",
                detail="re-serialised as CommonMark/GFM Markdown")
    dst.write_text(out, encoding="utf-8", newline="")
    return "md"


def _parser() -> MarkdownIt:
    from mdformat._util import build_mdit
    from mdformat.renderer import MDRenderer

    return build_mdit(MDRenderer, mdformat_opts={"wrap": "keep", "number": True},
                      extensions={"gfm"})


def clean_markdown(text: str, ctx: Context) -> str:
    """`text` parsed, cleaned under `ctx`'s policy and rendered back as Markdown."""
    mdit = _parser()
    env: dict[str, Any] = {}
    try:
        tokens = mdit.parse(text, env)
        cleaner = _Cleaner(ctx)
        cleaner.tokens(tokens)
        cleaner.references(env)
        cleaner.report()
        out: str = mdit.renderer.render(tokens, mdit.options, env)
    except RecursionError:
        raise Rejected("The Markdown document nests too deeply to process safely.",
                       RejectionCode.TOO_COMPLEX) from None
    except Rejected:
        raise
    except Exception as exc:  # noqa: BLE001 - the renderer's own assertions on a stream it cannot write
        raise Rejected(f"The Markdown document cannot be re-written ({type(exc).__name__}).",
                       RejectionCode.DAMAGED) from None
    return out


def _front_matter(text: str, ctx: Context) -> tuple[str, str]:
    """(the front matter to write back, the Markdown after it)."""
    if not text.startswith("---\n") and not text.startswith("---\r\n"):
        return "", text
    lines = text.split("\n", MAX_FRONT_MATTER_LINES + 1)
    for index in range(1, min(len(lines) - 1, MAX_FRONT_MATTER_LINES)):
        if lines[index].rstrip("\r") in ("---", "..."):
            block = "\n".join(line.rstrip("\r") for line in lines[1:index]) + "\n"
            rest = text.split("\n", index + 1)[-1] if len(lines) > index + 1 else ""
            break
    else:
        return "", text  # a thematic break, not front matter
    if ctx.decides(Rule.DOCUMENT_METADATA) is not Action.KEEP:
        ctx.add("metadata", "front matter", action="removed",
                detail=f"{index - 1} line(s) of YAML front matter")
        return "", rest
    from sanitas.engine.structured_text import clean_yaml

    ctx.add("metadata", "front matter", action="kept")
    return f"---\n{clean_yaml(block, ctx, 'The front matter')}---\n\n", rest


class _Cleaner(Removals):
    def __init__(self, ctx: Context) -> None:
        super().__init__(ctx)
        self.keep_links = ctx.policy.keep_links
        self.keep_hidden = ctx.decides(Rule.HIDDEN_CONTENT) is Action.KEEP
        self.kept_hidden = 0

    def report(self) -> None:
        self.report_removed()
        if self.kept_hidden:
            self.ctx.add("hidden_text", "HTML comments", action="kept",
                         detail=f"{self.kept_hidden} occurrence(s)")
        self.report_remote()

    # --- the token stream ----------------------------------------------------------------
    def tokens(self, tokens: list[Token]) -> None:
        for token in tokens:
            if token.type == "html_block":
                token.content = self.html_block(token.content)
            elif token.type == "inline" and token.children is not None:
                token.children = self.inline(token.children)

    def inline(self, children: list[Token]) -> list[Token]:
        out: list[Token] = []
        links: list[bool] = []  # for each open link: whether it is kept (links do not nest)
        for index, child in enumerate(children):
            if child.type == "html_inline":
                if index == 0 and _TASK_CHECKBOX.match(child.content):
                    out.append(child)  # the task list's own checkbox ("- [ ] ...")
                    continue
                child.content = self.html_inline(child.content)
                if child.content:
                    out.append(child)
            elif child.type in ("link_open", "gfm_autolink_open"):
                kept = self.link_kept(str(child.attrs.get("href", "")), "Markdown link")
                links.append(kept)
                if kept:
                    out.append(child)
            elif child.type in ("link_close", "gfm_autolink_close"):
                if not links or links.pop():
                    out.append(child)
            elif child.type == "text" and _TAG_START.search(child.content):
                # Markdown.pl and other renderers do not honour "\<": a '<' that would open a
                # tag is written as a look-alike, never as markup.
                child.content = _TAG_START.sub("\u2039", child.content)
                self.drop("element", "'<' opening a tag in text (written as \u2039)")
                out.append(child)
            elif child.type == "image":
                if self.picture_kept(str(child.attrs.get("src", "")), "Markdown picture"):
                    out.append(child)
                else:
                    out.append(_text_token(child, child.content))
            else:
                out.append(child)
        return out

    def references(self, env: dict[str, Any]) -> None:
        """Reference definitions (`[id]: url`) are written by the renderer from `env`."""
        refs = env.get("references") or {}
        for label in list(refs):
            href = str(refs[label].get("href", ""))
            if not self.link_kept(href, "link reference definition"):
                refs[label]["href"] = "#"

    def link_kept(self, href: str, what: str) -> bool:
        target = href.strip()
        if not SAFE_LINK.match(target) or re.match(r"^\s*(javascript|vbscript|data|file):",
                                                   target, re.IGNORECASE):
            self.drop("javascript" if "script:" in target.lower() else "unsafe_link", what)
            return False
        if not self.keep_links and not target.startswith("#"):
            self.drop("link", what)
            return False
        return True

    def picture_kept(self, src: str, what: str) -> bool:
        target = src.strip()
        if DATA_IMAGE.match(target):
            return True
        if web_address(target) or target.startswith("//"):
            if self.remote(target, what):
                return True
            self.drop("external_reference", f"{what} (loads {target[:60]!r})")
            return False
        if not SAFE_LINK.match(target) or ":" in target.split("/", 1)[0]:
            self.drop("unsafe_link", what)
            return False
        return True  # a picture beside the document

    # --- raw HTML ------------------------------------------------------------------------
    def html_block(self, content: str) -> str:
        """A block of raw HTML, cleaned tag by tag: an element may open in one block and close
        in another (`<details>`, Markdown, `</details>`), so nothing is re-balanced. Text
        between tags stays, with any '<' that starts no tag escaped; the content of a removed
        script, style, frame or object goes with it (to its end tag, else to the block's end)."""
        out: list[str] = []
        skipping: str | None = None  # the element whose content is being dropped
        at, n = 0, len(content)
        while at < n:
            lt = content.find("<", at)
            if lt < 0:
                lt = n
            if skipping is None:
                out.append(content[at:lt])
            if lt >= n:
                break
            if content.startswith("<!--", lt):
                close = content.find("-->", lt + 4)
                end = n if close < 0 else close + 3
                if skipping is None:
                    out.append(self.comment(content[lt:end]))
                at = end
                continue
            match = _BLOCK_TAG.match(content, lt)
            if match is None:
                if skipping is None:
                    out.append("&lt;")
                at = lt + 1
                continue
            at = match.end()
            closing, tag = match.group(1), match.group(2).lower()
            if skipping is not None:
                if closing and tag == skipping:
                    skipping = None
                continue
            if tag in DROPPED_WITH_CONTENT and not closing:
                self.drop(_element_kind(tag), f"<{tag}>")
                if not match.group(4) and tag not in ("input", "base", "link", "meta", "source",
                                                      "track", "embed"):
                    skipping = tag
                continue
            out.append(self.html_inline(match.group(0)))
        cleaned = "".join(out)
        # A blank line would end the HTML block early when read back.
        lines = [line for line in cleaned.replace("\r", "").split("\n") if line.strip()]
        return "\n".join(lines) + "\n" if lines else ""

    def html_inline(self, content: str) -> str:
        if content.startswith("<!--"):
            return self.comment(content)
        match = _TAG.match(content)
        if match is None:  # a processing instruction, a declaration, CDATA
            self.drop("processing_instruction", "inline markup declaration")
            return ""
        closing, tag, rest, empty = match.groups()
        tag = tag.lower()
        if tag not in KEPT_ELEMENTS:
            self.drop(_element_kind(tag), f"<{tag}>")
            return ""
        if closing:
            return f"</{tag}>"
        import lxml.html
        from lxml import etree

        try:
            element = lxml.html.fragment_fromstring(f"<{tag}{rest}></{tag}>".encode(),
                                                    parser=lxml.html.HTMLParser(
                                                        no_network=True, encoding="utf-8"))
        except (etree.ParserError, ValueError):
            self.drop("element", f"<{tag}>")
            return ""
        if not isinstance(element.tag, str) or element.tag.lower() != tag:
            self.drop("element", f"<{tag}>")
            return ""
        self.attributes(tag, element.attrib)
        attrs = "".join(f' {name}="{html.escape(value, quote=True)}"'
                        for name, value in element.attrib.items())
        return f"<{tag}{attrs}{' /' if empty else ''}>"

    def comment(self, content: str) -> str:
        if self.keep_hidden and _inert_comment(content.strip()[4:-3]) and \
                content.strip().endswith("-->"):
            self.kept_hidden += 1
            return content
        self.drop("hidden_text", "HTML comments")
        return ""

    def attributes(self, tag: str, attrib: Any) -> None:
        for attr in list(attrib):
            name = str(attr).lower()
            value = str(attrib[attr])
            if name.startswith("on"):
                self.drop("event_handler", f"{name} attribute")
                del attrib[attr]
            elif name not in KEPT_ATTRIBUTES:
                self.drop("attribute", f"<{tag} {name}>")
                del attrib[attr]
            elif name == "src":
                if not self.picture_kept(value, f"<{tag} src>"):
                    del attrib[attr]
            elif name == "href":
                if not self.link_kept(value, f"<{tag} href>"):
                    del attrib[attr]
            elif name == "style":
                attrib[attr] = sanitize_css(value, self.drop, remote=self.remote)


def _inert_comment(text: str) -> bool:
    """A comment kept by the policy holds no markup and no conditional-comment switch (old
    Internet Explorers run what `<!--[if IE]>` holds)."""
    return "<" not in text and ">" not in text and "[if" not in text.lower()


def _element_kind(tag: str) -> str:
    if tag == "script":
        return "javascript"
    if tag in ("iframe", "frame", "object", "embed", "applet", "audio", "video", "portal"):
        return "embedded_content"
    if tag in ("form", "input", "button", "select", "textarea"):
        return "form"
    if tag in ("base",):
        return "base_url"
    if tag in ("meta",):
        return "meta"
    if tag in ("link",):
        return "external_reference"
    return "element"


def _text_token(like: Token, content: str) -> Token:
    from markdown_it.token import Token

    token = Token("text", "", 0)
    token.content = content
    token.level = like.level
    return token


def verify(path: Path, spec: Output) -> None:
    """Re-open a produced Markdown file: UTF-8 text that parses, and that a second clean under
    the strictest reading leaves with no raw HTML the cleaner would remove."""
    from sanitas.engine import verify as checks

    checks.text(path, spec)
    tokens = _parser().parse(path.read_text(encoding="utf-8"))
    for token in tokens:
        if token.type == "html_block" and re.search(r"<\s*(script|iframe|object|embed)\b",
                                                    token.content, re.IGNORECASE):
            raise checks.Invalid("active HTML left in the Markdown")
