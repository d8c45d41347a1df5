"""iCalendar (.ics: invitations, calendars) and vCard (.vcf: contact cards): the content lines
of RFC 5545 and RFC 6350 parsed, checked and written again.

Both formats are lines of `NAME;PARAM=value:value` folded at 75 octets, inside BEGIN/END
components. The file is unfolded and every line parsed (one linear pass, no regular expression
on the values); components must nest and close (`MAX_DEPTH`), at most `MAX_LINES` lines of at
most `MAX_LINE_BYTES` each. What goes, by the policy's rules:

- Alarms that act: an `ACTION:PROCEDURE` alarm runs a program and an `ACTION:EMAIL` alarm has
  the client send mail; both are removed with their VALARM (`javascript`, as actions).
- Attachments: binary `ATTACH`, `IMAGE`, vCard `SOUND` and `KEY` data are embedded files
  (`embeddedFiles`; never kept: nothing cleans them here). A vCard `PHOTO` or `LOGO` given inline
  is a picture: cleaned by the image family (metadata gone) and written back, or removed.
- Addresses the client fetches by itself (`ATTACH`/`IMAGE` by URI, vCard `SOURCE`, `FBURL`,
  `CALURI`, `CALADRURI`, a `PHOTO` by URI) are external references (`externalReferences`: kept
  under `keep` when they are web addresses); `URL` and `CONFERENCE` are links (`hyperlinks`);
  any other scheme than http(s), mailto, tel and the meeting services' own is removed.
- Extension properties (`X-...`: client data such as Outlook's, HTML descriptions) and the
  producing program (`PRODID`, rewritten) are metadata (`documentMetadata`); an `X-ALT-DESC`
  holding HTML is never kept.

Everything else (summaries, descriptions, times, time zones, organisers and attendees, names,
addresses, numbers) is written back as it was, in UTF-8 with CRLF line ends, folded at 75
octets.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from sanitas.engine.policy import Action, Rule
from sanitas.engine.report import Context, Refused, Rejected, RejectionCode
from sanitas.engine.text_encoding import CONTROL_CHARS, decode

if TYPE_CHECKING:
    from sanitas.engine.formats import Output

MAX_BYTES = 32 * 1024 * 1024
MAX_LINES = 500_000
MAX_LINE_BYTES = 8 * 1024 * 1024  # an unfolded line: an inline photo can be large
MAX_DEPTH = 8
MAX_PICTURE_BYTES = 8 * 1024 * 1024
ROOTS = {"ics": "VCALENDAR", "vcf": "VCARD"}
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-.")
FETCHED = frozenset({"SOURCE", "FBURL", "CALURI", "CALADRURI"})
LINKS = frozenset({"URL", "CONFERENCE"})
EMBEDDED = frozenset({"ATTACH", "IMAGE", "SOUND", "KEY"})
PICTURES = frozenset({"PHOTO", "LOGO"})
SAFE_SCHEMES = ("http://", "https://", "mailto:", "tel:", "sip:", "xmpp:")
PRODUCER = "-//Sanitas//Sanitas//EN"


@dataclass
class Line:
    name: str  # upper case, with any group prefix (vCard's "item1.")
    params: list[tuple[str, list[str]]]
    value: str

    def param(self, key: str) -> str:
        for name, values in self.params:
            if name == key:
                return ",".join(values).upper()
        return ""

    def text(self) -> str:
        out = self.name
        for name, values in self.params:
            out += f";{name}=" + ",".join(_param_value(v) for v in values)
        return out + ":" + self.value


@dataclass
class Component:
    name: str
    lines: list[Line | Component] = field(default_factory=list)


def _param_value(value: str) -> str:
    value = value.replace('"', "'")
    return f'"{value}"' if any(c in value for c in ":;,") else value


def unfold(text: str) -> list[str]:
    """The content lines, folds joined (CRLF or LF, then a space or tab)."""
    lines: list[str] = []
    for raw in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if raw[:1] in (" ", "\t") and lines:
            lines[-1] += raw[1:]
            if len(lines[-1]) > MAX_LINE_BYTES:
                raise Rejected("The file has a line longer than "
                               f"{MAX_LINE_BYTES // 2**20} MB.", RejectionCode.TOO_COMPLEX)
        elif raw.strip():
            lines.append(raw)
            if len(lines) > MAX_LINES:
                raise Rejected(f"The file has more than {MAX_LINES} lines.",
                               RejectionCode.TOO_COMPLEX)
    return lines


def parse_line(raw: str) -> Line:
    """NAME *(;PARAM=value *(,value)) : value, in one pass (quoted parameter values may hold
    ':', ';' and ',')."""
    i, n = 0, len(raw)
    while i < n and raw[i] in _NAME_CHARS:
        i += 1
    name = raw[:i].upper()
    if not name:
        raise ValueError("a line without a property name")
    params: list[tuple[str, list[str]]] = []
    while i < n and raw[i] == ";":
        j = i + 1
        while j < n and raw[j] in _NAME_CHARS:
            j += 1
        key = raw[i + 1:j].upper()
        if not key:
            raise ValueError("a parameter without a name")
        values: list[str] = []
        if j < n and raw[j] == "=":
            j += 1
            while True:
                if j < n and raw[j] == '"':
                    end = raw.find('"', j + 1)
                    if end < 0:
                        raise ValueError("an unterminated quoted parameter value")
                    values.append(raw[j + 1:end])
                    j = end + 1
                else:
                    k = j
                    while k < n and raw[k] not in ",;:":
                        k += 1
                    values.append(raw[j:k])
                    j = k
                if j < n and raw[j] == ",":
                    j += 1
                    continue
                break
        params.append((key, values))
        i = j
    if i >= n or raw[i] != ":":
        raise ValueError(f"the line for {name[:40]} has no ':' before its value")
    return Line(name, params, raw[i + 1:])


def parse(text: str, root: str) -> list[Component]:
    """The top-level components (each must be `root`)."""
    top: list[Component] = []
    stack: list[Component] = []
    for number, raw in enumerate(unfold(text), start=1):
        try:
            line = parse_line(raw)
        except ValueError as exc:
            raise Rejected(f"Line {number} of the file cannot be read ({exc}).",
                           RejectionCode.DAMAGED) from None
        base = line.name.rpartition(".")[2]
        if base == "BEGIN":
            component = Component(line.value.strip().upper())
            if not stack and component.name != root:
                raise Rejected(f"The file does not start with BEGIN:{root}.",
                               RejectionCode.DAMAGED)
            if len(stack) >= MAX_DEPTH:
                raise Rejected(f"The file's components nest deeper than {MAX_DEPTH} levels.",
                               RejectionCode.TOO_COMPLEX)
            (stack[-1].lines if stack else top).append(component)
            stack.append(component)
        elif base == "END":
            if not stack or stack[-1].name != line.value.strip().upper():
                raise Rejected(f"Line {number} ends a component that is not open.",
                               RejectionCode.DAMAGED)
            stack.pop()
        elif not stack:
            raise Rejected(f"Line {number} stands outside BEGIN:{root} ... END:{root}.",
                           RejectionCode.DAMAGED)
        else:
            stack[-1].lines.append(line)
    if stack or not top:
        raise Rejected(f"The file's BEGIN:{root} is never closed." if stack else
                       f"The file holds no {root}.", RejectionCode.DAMAGED)
    return top


def fold(line: str) -> str:
    """A content line folded at 75 octets (never inside a UTF-8 sequence), CRLF-terminated."""
    data = line.encode("utf-8")
    if len(data) <= 75:
        return line + "\r\n"
    parts: list[str] = []
    start, limit = 0, 75
    while start < len(data):
        end = min(start + limit, len(data))
        while end < len(data) and (data[end] & 0xC0) == 0x80:
            end -= 1
        parts.append(data[start:end].decode("utf-8"))
        start, limit = end, 74
    return "\r\n ".join(parts) + "\r\n"


class _Cleaner:
    def __init__(self, ctx: Context, kind: str) -> None:
        self.ctx = ctx
        self.kind = kind
        self.removed: dict[tuple[str, str], int] = {}
        self.kept: dict[tuple[str, str], int] = {}
        self.keep_meta = ctx.decides(Rule.DOCUMENT_METADATA) is Action.KEEP
        self.keep_remote = ctx.decides(Rule.EXTERNAL_REFERENCES) is Action.KEEP
        self.keep_links = ctx.policy.keep_links

    def note(self, kind: str, what: str, kept: bool = False) -> None:
        table = self.kept if kept else self.removed
        table[(kind, what)] = table.get((kind, what), 0) + 1

    def report(self) -> None:
        for (kind, what), count in sorted(self.removed.items()):
            self.ctx.add(kind, what, action="removed", detail=f"{count} occurrence(s)")
        for (kind, what), count in sorted(self.kept.items()):
            self.ctx.add(kind, what, action="kept", detail=f"{count} occurrence(s)")

    def component(self, component: Component) -> list[str]:
        out = [f"BEGIN:{component.name}"]
        for item in component.lines:
            if isinstance(item, Component):
                if item.name == "VALARM" and _alarm_action(item) in ("PROCEDURE", "EMAIL"):
                    self.note("action", f"VALARM ACTION:{_alarm_action(item)}")
                    continue
                if item.name.startswith("X-"):
                    self.note("metadata", f"component {item.name[:40]}", kept=self.keep_meta)
                    if not self.keep_meta:
                        continue
                out += self.component(item)
                continue
            line = self.line(item, component.name)
            if line is not None:
                out.append(line.text())
        out.append(f"END:{component.name}")
        return out

    def line(self, line: Line, where: str) -> Line | None:
        base = line.name.rpartition(".")[2]
        line.value = CONTROL_CHARS.sub("", line.value)
        binary = line.param("ENCODING") in ("B", "BASE64") or line.param("VALUE") == "BINARY" \
            or line.value[:5].lower() == "data:"
        if base == "PRODID":
            self.note("metadata", "PRODID (the producing program)", kept=self.keep_meta)
            if not self.keep_meta:
                line.value = PRODUCER
            return line
        if base == "X-ALT-DESC" or (base.startswith("X-") and "HTML" in line.param("FMTTYPE")):
            self.note("foreign_content", f"{base[:40]} (an HTML description)")
            return None
        if base.startswith("X-"):
            self.note("metadata", f"{base[:40]} property", kept=self.keep_meta)
            return line if self.keep_meta else None
        if base in PICTURES and binary and self.kind == "vcf":
            return self.picture(line, base)
        if base in EMBEDDED or (base in PICTURES and binary):
            if binary:
                self.note("embedded_file", f"{base} (inline data)")
                return None
            return self.fetched(line, base)
        if base in FETCHED or base in PICTURES:
            return self.fetched(line, base)
        if base in LINKS:
            target = line.value.strip()
            if not target.lower().startswith(SAFE_SCHEMES):
                self.note("unsafe_link", f"{base} (not a web, mail or meeting address)")
                return None
            if not self.keep_links:
                self.note("link", base)
                return None
            return line
        return line

    def fetched(self, line: Line, base: str) -> Line | None:
        target = line.value.strip()
        if self.keep_remote and target.lower().startswith(("http://", "https://")):
            self.note("external_reference", f"{base} (loads {target[:60]!r})", kept=True)
            return line
        self.note("external_reference", f"{base} (loads {target[:60]!r})")
        return None

    def picture(self, line: Line, base: str) -> Line | None:
        """A vCard photo or logo given inline: cleaned by the image family."""
        value = line.value.strip()
        if value[:5].lower() == "data:":
            value = value.partition(",")[2]
        try:
            data = base64.b64decode(value, validate=False)
        except (ValueError, TypeError):
            data = b""
        if not data or len(data) > MAX_PICTURE_BYTES:
            self.note("embedded_image", f"{base} (unreadable or too large)")
            return None
        cleaned = self.clean_picture(data, base)
        if cleaned is None:
            return None
        extension, picture = cleaned
        media = {"jpg": "image/jpeg", "png": "image/png", "gif": "image/gif",
                 "webp": "image/webp"}[extension]
        line.params = [(k, v) for k, v in line.params
                       if k not in ("ENCODING", "TYPE", "VALUE", "MEDIATYPE")]
        line.value = f"data:{media};base64," + base64.b64encode(picture).decode("ascii")
        return line

    def clean_picture(self, data: bytes, base: str) -> tuple[str, bytes] | None:
        from sanitas.engine import detect, nested, sanitize_detected

        assert self.ctx.workdir is not None
        work = self.ctx.workdir / f"vcard-{self.ctx.nested.count}-{len(self.removed)}"
        work.mkdir(exist_ok=True)
        source, output = work / "in", work / "out"
        source.write_bytes(data)
        try:
            inner = nested.nested_context(self.ctx, len(data), mode=self.ctx.mode)
            found = detect.detect(source, None, inner)
            if found.family != "image":
                raise Rejected("not a picture", RejectionCode.UNSUPPORTED_TYPE)
            extension = sanitize_detected(source, output, found, inner)
        except Refused:
            raise
        except Rejected as exc:
            self.note("embedded_image", f"{base} ({exc.reason[:80]})")
            return None
        finally:
            source.unlink(missing_ok=True)
        if extension not in ("jpg", "png", "gif", "webp"):
            output.unlink(missing_ok=True)
            self.note("embedded_image", f"{base} (no web picture format)")
            return None
        for finding in inner.closed_findings():
            self.ctx.record(finding.kind, f"{base}: {finding.location}", action=finding.action,
                            detail=finding.detail)
        picture = output.read_bytes()
        output.unlink()
        return extension, picture


def _alarm_action(alarm: Component) -> str:
    for item in alarm.lines:
        if isinstance(item, Line) and item.name == "ACTION":
            return item.value.strip().upper()
    return ""


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    """The family's handler: an .ics or .vcf in, the same type out."""
    if src.stat().st_size > MAX_BYTES:
        raise Rejected(f"The file is larger than {MAX_BYTES // 2**20} MB.",
                       RejectionCode.TOO_LARGE)
    text, encoding = decode(src.read_bytes())
    if encoding != "utf-8":
        ctx.add("encoding", "whole file", action="converted",
                detail=f"{encoding} converted to UTF-8")
    components = parse(text.removeprefix("\ufeff"), ROOTS[kind])
    cleaner = _Cleaner(ctx, kind)
    lines = [line for component in components for line in cleaner.component(component)]
    cleaner.report()
    dst.write_text("".join(fold(line) for line in lines), encoding="utf-8", newline="")
    return kind


def verify(path: Path, spec: Output) -> None:
    """Re-open a produced calendar or card: UTF-8, every line parses, components balanced."""
    text = path.read_bytes().decode("utf-8")
    if "\x00" in text:
        raise ValueError("a NUL character in a text file")
    parse(text, ROOTS[spec.extension])
