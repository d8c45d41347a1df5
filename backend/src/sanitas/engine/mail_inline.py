"""Files written into the text of a mail body: uuencode (and `begin-base64`), yEnc, BinHex 4.0;
and OpenPGP messages in ASCII armor (`-----BEGIN PGP MESSAGE-----`), encrypted text that the
cleaner holds back or passes as the policy's `encryptedContent` says.

Mail clients show such blocks as attachments, so a plain-text body that holds one holds a
file. `find(data)` walks the body's bytes line by line (no regular expression) and returns each
block it finds, with the file decoded or the reason it could not be; the mail cleaner takes the
block out of the text and cleans the file like any other attachment (mail.py).

A block starts at a strict header line and runs to its end line (or to the end of the text when
that is missing: such a block is reported as damaged and still taken out):

- uuencode: `begin <octal mode> <name>` ... `end`; `begin-base64 <mode> <name>` ... `====`.
- yEnc: `=ybegin ... name=<name>` (a `=ypart` line may follow) ... `=yend`; the `size=` and
  `crc32=` it declares are checked, so a part of a multi-part post is reported as incomplete.
- BinHex 4.0: the `(This file must be converted with BinHex 4.0)` line, then the data between
  two `:`; the run-length coding is undone and the header's and data fork's CRCs are checked.
  Only the data fork is the file (the resource fork of a Macintosh file is dropped).
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

MAX_BLOCKS = 100  # blocks of one body; those beyond are taken out as removed
MAX_NAME = 255

UUENCODE, YENC, BINHEX = "uuencoded", "yEnc", "BinHex"
# An OpenPGP message written into the text (ASCII armor): encrypted, so not a file anyone can
# inspect; the block's `data` is the armored text as it came (the policy holds or passes it).
PGP = "PGP"
_PGP_BEGIN, _PGP_END = b"-----BEGIN PGP MESSAGE-----", b"-----END PGP MESSAGE-----"
_BINHEX_INTRO = b"(This file must be converted"  # "with BinHex 4.0)", or macutils
_BINHEX_ALPHABET = b"!\"#$%&'()*+,-012345689@ABCDEFGHIJKLMNPQRSTUVXYZ[`abcdefhijklmpqr"
_BINHEX_VALUES = {c: i for i, c in enumerate(_BINHEX_ALPHABET)}
_YENC = bytes((b - 42) & 0xFF for b in range(256))


class Damaged(Exception):
    """A block whose file cannot be decoded; the message says why (and `name` names the file
    when the block named it before the damage)."""

    def __init__(self, reason: str, name: str = "") -> None:
        super().__init__(reason)
        self.name = name


@dataclass
class Block:
    start: int  # byte offset of the header line in the body
    end: int  # byte offset just past the end line
    encoding: str  # UUENCODE, YENC, BINHEX
    name: str
    data: bytes | None  # the decoded file, None when damaged
    reason: str = ""  # why data is None


def _lines(data: bytes) -> list[tuple[int, int, bytes]]:
    """(start, end past the line break, line without CR/LF) of every line."""
    out, pos = [], 0
    while pos < len(data):
        cut = data.find(b"\n", pos)
        stop = len(data) if cut < 0 else cut + 1
        out.append((pos, stop, data[pos:stop].rstrip(b"\r\n")))
        pos = stop
    return out


def _name(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").strip()[:MAX_NAME]


def _uu_header(line: bytes) -> tuple[str, str] | None:
    """("uu" or "base64", name) for a `begin 644 name` header line."""
    word, _, rest = line.partition(b" ")
    if word not in (b"begin", b"begin-base64"):
        return None
    mode, _, name = rest.partition(b" ")
    if not 3 <= len(mode) <= 4 or any(c not in b"01234567" for c in mode) or not name.strip():
        return None
    return ("uu" if word == b"begin" else "base64"), _name(name)


def _yenc_params(line: bytes) -> dict[bytes, bytes]:
    """The key=value pairs of a yEnc control line; `name` is the rest of the line."""
    params: dict[bytes, bytes] = {}
    head, sep, name = line.partition(b" name=")
    if sep:
        params[b"name"] = name
    for item in head.split(b" ")[1:]:
        key, eq, value = item.partition(b"=")
        if eq:
            params[key] = value
    return params


def find(data: bytes) -> list[Block]:
    """Every encoded file in a text body's bytes, in order."""
    lines = _lines(data)
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        start, _, line = lines[i]
        uu = _uu_header(line)
        if uu is not None:
            kind, name = uu
            closing = b"end" if kind == "uu" else b"===="
            j = _closing(lines, i + 1, partial(_is_line, closing))
            body = [text for _, _, text in lines[i + 1:j]]
            blocks.append(_block(start, lines, j, UUENCODE, name,
                                 partial(_uudecode, body, kind, j < len(lines))))
            i = j + 1
            continue
        if line.startswith(b"=ybegin "):
            params = _yenc_params(line)
            j = _closing(lines, i + 1, partial(_starts, b"=yend"))
            body = [text for _, _, text in lines[i + 1:j] if not text.startswith(b"=ypart ")]
            trailer = _yenc_params(lines[j][2]) if j < len(lines) else None
            blocks.append(_block(start, lines, j, YENC, _name(params.get(b"name", b"")),
                                 partial(_ydecode, body, params, trailer)))
            i = j + 1
            continue
        if line.strip() == _PGP_BEGIN:
            j = _closing(lines, i + 1, partial(_is_line, _PGP_END))
            end = lines[j][1] if j < len(lines) else lines[-1][1]
            blocks.append(Block(start, end, PGP, "", data[start:end]))
            i = j + 1
            continue
        if line.startswith(_BINHEX_INTRO):
            j, text = _binhex_text(lines, i + 1)
            blocks.append(_block(start, lines, j, BINHEX, "",
                                 partial(_binhex_decode, text)))
            i = j + 1
            continue
        i += 1
    return blocks


def _is_line(expected: bytes, text: bytes) -> bool:
    return text.strip() == expected


def _starts(prefix: bytes, text: bytes) -> bool:
    return text.startswith(prefix)


def _closing(lines: list[tuple[int, int, bytes]], first: int,
             is_end: Callable[[bytes], bool]) -> int:
    """The index of the first line from `first` that ends the block, or len(lines)."""
    for j in range(first, len(lines)):
        if is_end(lines[j][2]):
            return j
    return len(lines)


def _block(start: int, lines: list[tuple[int, int, bytes]], j: int, encoding: str, name: str,
           decode: Callable[[], bytes | tuple[str, bytes]]) -> Block:
    end = lines[j][1] if j < len(lines) else lines[-1][1]
    try:
        result = decode()
    except Damaged as exc:
        return Block(start, end, encoding, exc.name or name, None, str(exc))
    if isinstance(result, tuple):  # BinHex names its file inside the data
        name, result = result
    return Block(start, end, encoding, name, result)


def _uudecode(body: list[bytes], kind: str, closed: bool) -> bytes:
    if not closed:
        raise Damaged("its encoded block has no end line (the file is incomplete)")
    if kind == "base64":
        try:
            return base64.b64decode(b"".join(line.strip() for line in body), validate=True)
        except (binascii.Error, ValueError) as exc:
            raise Damaged("its encoded block is not valid base64") from exc
    out = bytearray()
    for line in body:
        if not line.strip():
            continue
        try:
            chunk = binascii.a2b_uu(line)
        except binascii.Error:
            # Encoders that pad lines with garbage: decode the bytes the length counts.
            count = (((line[0] - 32) & 63) * 4 + 5) // 3
            try:
                chunk = binascii.a2b_uu(line[:count])
            except binascii.Error as exc:
                raise Damaged("a line of its encoded block is not valid uuencode") from exc
        out += chunk
    return bytes(out)


def _ydecode(body: list[bytes], params: dict[bytes, bytes],
             trailer: dict[bytes, bytes] | None) -> bytes:
    if trailer is None:
        raise Damaged("its yEnc block has no =yend line (the file is incomplete)")
    out = bytearray()
    for line in body:
        first, *escaped = line.split(b"=")
        out += first.translate(_YENC)
        for piece in escaped:  # the byte after "=" is shifted by 64 more
            if piece:
                out.append((piece[0] - 106) & 0xFF)
                out += piece[1:].translate(_YENC)
    size = params.get(b"size", b"")
    if not size.isdigit() or int(size) != len(out):
        raise Damaged("its yEnc block holds only a part of the file (a multi-part post, or "
                      "the size it declares does not match)")
    crc = trailer.get(b"crc32") or trailer.get(b"pcrc32")
    if crc is not None:
        try:
            declared = int(crc, 16)
        except ValueError as exc:
            raise Damaged("its yEnc checksum is not a number") from exc
        if declared != zlib.crc32(out):
            raise Damaged("its yEnc checksum does not match (the file is damaged)")
    return bytes(out)


def _binhex_text(lines: list[tuple[int, int, bytes]], first: int) -> tuple[int, bytes | None]:
    """(index of the last line, the characters between the two colons or None)."""
    chars = bytearray()
    started = False
    for j in range(first, len(lines)):
        text = lines[j][2].strip()
        if not started:
            if not text:
                continue
            if not text.startswith(b":"):
                return j - 1, None
            started, text = True, text[1:]
        stop = text.find(b":")
        if stop >= 0:
            chars += text[:stop]
            return j, bytes(chars)
        chars += text
    return len(lines) - 1, None


def _binhex_decode(text: bytes | None) -> tuple[str, bytes]:
    if text is None:
        raise Damaged("its BinHex block has no closing colon (the file is incomplete)")
    bits = bytearray()
    value, count = 0, 0
    for c in text:
        if c in b" \t":
            continue
        six = _BINHEX_VALUES.get(c)
        if six is None:
            raise Damaged("its BinHex block holds a character BinHex does not use")
        value, count = (value << 6) | six, count + 6
        if count >= 8:
            count -= 8
            bits.append((value >> count) & 0xFF)
            value &= (1 << count) - 1
    data = _binhex_runs(bytes(bits))
    if not data:
        raise Damaged("its BinHex block is empty")
    length = data[0]
    header_end = 1 + length + 1 + 4 + 4 + 2 + 4 + 4
    if len(data) < header_end + 2:
        raise Damaged("its BinHex header is cut short")
    name = data[1:1 + length].decode("mac_roman", "replace").strip()[:MAX_NAME]
    data_length, resource_length = struct.unpack(">II", data[header_end - 8:header_end])
    if struct.unpack(">H", data[header_end:header_end + 2])[0] != \
            binascii.crc_hqx(data[:header_end], 0):
        raise Damaged("its BinHex header checksum does not match (the file is damaged)")
    fork = data[header_end + 2:header_end + 2 + data_length]
    crc = data[header_end + 2 + data_length:header_end + 4 + data_length]
    if len(fork) != data_length or len(crc) != 2:
        raise Damaged("its BinHex data is cut short", name)
    if struct.unpack(">H", crc)[0] != binascii.crc_hqx(fork, 0):
        raise Damaged("its BinHex data checksum does not match (the file is damaged)", name)
    del resource_length  # the resource fork is not part of the file
    return name or "binhex-file", fork


def _binhex_runs(data: bytes) -> bytes:
    """BinHex's run-length coding undone: 0x90 n repeats the byte before n times in all
    (0x90 0x00 is a literal 0x90)."""
    out = bytearray()
    i = 0
    while i < len(data):
        byte = data[i]
        if byte != 0x90:
            out.append(byte)
            i += 1
            continue
        if i + 1 >= len(data):
            raise Damaged("its BinHex run-length coding is cut short")
        n = data[i + 1]
        if n == 0:
            out.append(0x90)
        elif not out:
            raise Damaged("its BinHex run-length coding repeats nothing")
        else:
            out += bytes([out[-1]]) * (n - 1)
        i += 2
    return bytes(out)
