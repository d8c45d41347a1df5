"""Subtitles: SubRip (.srt) and WebVTT (.vtt), parsed cue by cue and written again.

Players show cue text as markup (SubRip's `<i>`/`<font>`, WebVTT's `<c>`, `<v>`, `<ruby>`),
and web players often put it into a page as HTML, so only the formatting tags each format
defines are kept (`SRT_TAGS`, `VTT_TAGS`, attributes only SubRip's `<font color/face/size>`);
any other tag (`<script>`, `<img>`, `<a href>`...) is removed, its text stays. Timings are
checked and written in the format's own spelling; cues are renumbered (SubRip). A block that is
not a cue (no timing line) is removed and reported.

WebVTT's NOTE blocks are authors' comments (`reviewData`); STYLE blocks keep their CSS without
remote loads or script constructs (`css.sanitize_css`, `externalReferences`); REGION blocks
and the header line are kept. Limits: `MAX_SUBTITLE_BYTES` (too_large) and `MAX_CUES`
(too_complex).
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import TYPE_CHECKING

from sanitas.engine.css import Removals, sanitize_css
from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.text_encoding import CONTROL_CHARS, decode

if TYPE_CHECKING:
    from sanitas.engine.formats import Output

MAX_SUBTITLE_BYTES = 32 * 1024 * 1024
MAX_CUES = 200_000
SRT_TAGS = frozenset({"b", "i", "u", "s", "font"})
VTT_TAGS = frozenset({"b", "i", "u", "c", "v", "lang", "ruby", "rt"})
FONT_ATTRIBUTES = frozenset({"color", "face", "size"})

_SRT_TIME = re.compile(r"^(\d{1,3}):(\d{1,2}):(\d{1,2})[,.](\d{1,3})$")
_VTT_TIME = re.compile(r"^(?:(\d{1,3}):)?(\d{2}):(\d{2})\.(\d{3})$")
# A cue's tags: a WebVTT timestamp (no groups), or a start or end tag.
_TAG = re.compile(r"<\d{1,3}(?::\d{2}){1,2}\.\d{3}>"
                  r"|<(/?)([A-Za-z][A-Za-z0-9]{0,20})([^<>]{0,500})>")
_ATTRIBUTE = re.compile(r"""([A-Za-z-]{1,20})\s*=\s*(?:"([^"<>]{0,100})"|'([^'<>]{0,100})'|"""
                        r"""([^\s"'<>]{1,100}))""")


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    if src.stat().st_size > MAX_SUBTITLE_BYTES:
        raise Rejected(f"The subtitle file is larger than {MAX_SUBTITLE_BYTES // 2**20} MB.",
                       RejectionCode.TOO_LARGE)
    text, encoding = decode(src.read_bytes())
    if encoding != "utf-8":
        ctx.add("encoding", "whole file", action="converted",
                detail=f"{encoding} converted to UTF-8")
    text = text.removeprefix("\ufeff")
    found = CONTROL_CHARS.findall(text)
    if found:
        ctx.add("control_characters", "text", action="removed",
                detail=f"{len(found)} control or direction-override characters")
        text = CONTROL_CHARS.sub("", text)
    blocks = _blocks(text)
    cleaner = _Cues(ctx)
    out = cleaner.srt(blocks) if kind == "srt" else cleaner.vtt(blocks)
    cleaner.report()
    dst.write_text(out, encoding="utf-8", newline="")
    return kind


def _blocks(text: str) -> list[list[str]]:
    """The text's blocks: runs of non-blank lines."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line.strip():
            current.append(line.rstrip())
        elif current:
            blocks.append(current)
            current = []
            if len(blocks) > MAX_CUES:
                raise Rejected(f"The subtitle file has more than {MAX_CUES} cues.",
                               RejectionCode.TOO_COMPLEX)
    if current:
        blocks.append(current)
    return blocks


def _srt_time(value: str) -> int | None:
    match = _SRT_TIME.match(value.strip())
    if match is None:
        return None
    h, m, s, _ms = (int(g) for g in match.groups())
    if m > 59 or s > 59:
        return None
    return ((h * 60 + m) * 60 + s) * 1000 + int(match.group(4).ljust(3, "0"))


def _vtt_time(value: str) -> int | None:
    match = _VTT_TIME.match(value.strip())
    if match is None:
        return None
    h, m, s, ms = (int(g or 0) for g in match.groups())
    if m > 59 or s > 59:
        return None
    return ((h * 60 + m) * 60 + s) * 1000 + ms


def _spell(ms: int, separator: str) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, ms = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d}{separator}{ms:03d}"


class _Cues(Removals):

    # --- SubRip --------------------------------------------------------------------------
    def srt(self, blocks: list[list[str]]) -> str:
        cues: list[str] = []
        for block in blocks:
            lines = block[1:] if block[0].strip().isdigit() and len(block) > 1 else block
            timing = self.timing(lines[0], _srt_time, ",")
            if timing is None:
                self.drop("invalid_part", "a block that is not a cue (no timing line)")
                continue
            body = [self.cue_text(line, SRT_TAGS) for line in lines[1:]]
            cues.append(f"{len(cues) + 1}\n{timing}\n" + "".join(f"{b}\n" for b in body))
        if not cues:
            raise Rejected("The SubRip file holds no cue (no line of the form "
                           "'00:00:01,000 --> 00:00:02,000').", RejectionCode.DAMAGED)
        return "\n".join(cues)

    # --- WebVTT --------------------------------------------------------------------------
    def vtt(self, blocks: list[list[str]]) -> str:
        if not blocks or not re.match(r"^WEBVTT(?:[ \t].*)?$", blocks[0][0]):
            raise Rejected("The WebVTT file does not start with its 'WEBVTT' line.",
                           RejectionCode.DAMAGED)
        header = blocks[0][0]
        if len(blocks[0]) > 1:
            self.drop("metadata", "WebVTT header lines")  # old-style header metadata
        out = [f"{header}\n"]
        cues = 0
        keep_notes = self.ctx.decides(Rule.REVIEW_DATA) is Action.KEEP
        for block in blocks[1:]:
            first = block[0]
            if first == "NOTE" or first.startswith(("NOTE ", "NOTE\t")):
                if keep_notes:
                    self.ctx.add("comments", "WebVTT NOTE block", action="kept")
                    out.append("\n".join(self.cue_text(line, frozenset()) for line in block)
                               + "\n")
                else:
                    self.drop("comments", "WebVTT NOTE blocks")
                continue
            if first == "STYLE" and cues == 0:
                css = sanitize_css("\n".join(block[1:]), self.drop, remote=self.remote)
                if "-->" in css:
                    self.drop("invalid_part", "a STYLE block")
                    continue
                out.append("STYLE\n" + "\n".join(x for x in css.split("\n") if x.strip())
                           + "\n")
                continue
            if first == "REGION" and cues == 0:
                out.append("\n".join(_plain(line) for line in block) + "\n")
                continue
            identifier = None
            lines = block
            if "-->" not in first and len(block) > 1:
                identifier, lines = _plain(first), block[1:]
            timing = self.timing(lines[0], _vtt_time, ".", settings=True)
            if timing is None:
                self.drop("invalid_part", "a block that is not a cue (no timing line)")
                continue
            cues += 1
            body = [self.cue_text(line, VTT_TAGS) for line in lines[1:]]
            out.append((f"{identifier}\n" if identifier else "") + f"{timing}\n"
                       + "".join(f"{b}\n" for b in body))
        if cues == 0:
            raise Rejected("The WebVTT file holds no cue.", RejectionCode.DAMAGED)
        return "\n".join(out)

    # --- shared --------------------------------------------------------------------------
    def timing(self, line: str, parse: object, separator: str,
               settings: bool = False) -> str | None:
        start_text, arrow, rest = line.partition("-->")
        if not arrow:
            return None
        end_text, _, extra = rest.strip().partition(" ")
        start, end = parse(start_text), parse(end_text)  # type: ignore[operator]
        if start is None or end is None or end < start:
            return None
        timing = f"{_spell(start, separator)} --> {_spell(end, separator)}"
        if settings and extra.strip():
            kept = [s for s in extra.split() if re.fullmatch(
                r"(vertical|line|position|size|align|region):[A-Za-z0-9%.,:_-]{1,40}", s)]
            if kept:
                timing += " " + " ".join(kept)
        return timing

    def cue_text(self, line: str, tags: frozenset[str]) -> str:
        """One line of cue text with only `tags` kept (SubRip's <font> with its attributes,
        WebVTT's classes and voice names)."""
        def tag(match: re.Match[str]) -> str:
            closing, name, rest = match.group(1), match.group(2), match.group(3)
            if name is None:  # a WebVTT timestamp (karaoke timing)
                return match.group(0) if "v" in tags else ""
            base = name.lower()
            if base not in tags:
                self.drop("javascript" if base == "script" else "element", f"<{base}> in a cue")
                return ""
            if closing:
                return f"</{base}>"
            if base == "font":
                attrs = "".join(f' {a.lower()}="{html.escape(v1 or v2 or v3, quote=True)}"'
                                for a, v1, v2, v3 in _ATTRIBUTE.findall(rest)
                                if a.lower() in FONT_ATTRIBUTES)
                return f"<font{attrs}>"
            if base in ("v", "lang"):  # <v Speaker name>, <lang en>
                annotation = _plain(rest.strip()).replace("<", "").replace(">", "")
                return f"<{base} {annotation}>" if annotation else f"<{base}>"
            classes = re.sub(r"[^A-Za-z0-9_.-]", "", rest.split()[0]) if rest.strip() else ""
            return f"<{base}{classes if classes.startswith('.') else ''}>"

        # Kept tags are written again; between them a stray '<' or '>' (what is left of
        # "<scr<script>ipt>") can never start a tag: WebVTT escapes it, SubRip (no escapes)
        # shows a look-alike.
        lt, gt = ("&lt;", "&gt;") if "v" in tags or not tags else ("\u2039", "\u203a")
        out, at = [], 0
        for match in _TAG.finditer(line):
            out.append(line[at:match.start()].replace("<", lt).replace(">", gt))
            out.append(tag(match))
            at = match.end()
        out.append(line[at:].replace("<", lt).replace(">", gt))
        return "".join(out)


def _plain(text: str) -> str:
    return text.replace("-->", "").strip()


def verify(path: Path, spec: Output) -> None:
    """Re-open produced subtitles: UTF-8 text whose every block is a cue (WebVTT: or a
    header, NOTE, STYLE or REGION block), with a timing line."""
    from sanitas.engine import verify as checks

    checks.text(path, spec)
    blocks = _blocks(path.read_text(encoding="utf-8"))
    if spec.extension == "vtt":
        if not blocks or not blocks[0][0].startswith("WEBVTT"):
            raise checks.Invalid("no WEBVTT line first")
        blocks = [b for b in blocks[1:] if b[0].split(" ")[0] not in ("NOTE", "STYLE", "REGION")]
    for block in blocks:
        timing = block[1] if spec.extension == "srt" or "-->" not in block[0] else block[0]
        if "-->" not in timing:
            raise checks.Invalid("a block without a timing line")
