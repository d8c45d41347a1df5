"""Structured text: JSON, parsed with bounds and written back canonically.

- JSON (RFC 8259): the nesting depth is counted by one linear scan before anything is parsed
  (`MAX_JSON_DEPTH`; Python's parser recurses), numbers longer than `MAX_NUMBER_DIGITS`
  characters are refused, NaN/Infinity (not JSON) and text that does not parse are `damaged`,
  and an object naming one key twice is `unsafe_structure` (parsers disagree on which value
  wins: a way to show one program one thing and another program another). The value is written
  back as UTF-8 without a BOM, two-space indented, key order kept: comments, trailing bytes and
  odd encodings do not survive.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.text_encoding import MAX_TEXT_BYTES, decode

MAX_JSON_DEPTH = 256
MAX_NUMBER_DIGITS = 400


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in `text`, brackets inside strings ignored:
    one pass with `str.find` jumps, linear in the text (no recursion)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while True:
                j = text.find('"', j)
                if j < 0:
                    return deepest  # an unterminated string: the parser says damaged
                k = j - 1
                while text[k] == "\\":
                    k -= 1
                if (j - 1 - k) % 2 == 0:
                    break
                j += 1
            i = j + 1
            continue
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
        i += 1
    return deepest


class _Duplicate(Exception):
    pass


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise _Duplicate(key)
        found[key] = value
    return found


def _number(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def parse(literal: str) -> int | float:
        if len(literal) > MAX_NUMBER_DIGITS:
            raise _TooLong(literal)
        return kind(literal)
    return parse


class _TooLong(Exception):
    pass


def _constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def parse_json(text: str) -> object:
    """`text` as a JSON value, within the module's bounds (raises `Rejected`)."""
    if json_depth(text) > MAX_JSON_DEPTH:
        raise Rejected(f"The JSON document nests deeper than {MAX_JSON_DEPTH} levels.",
                       RejectionCode.TOO_COMPLEX)
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_int=_number(int),
                          parse_float=_number(float), parse_constant=_constant)
    except _Duplicate as exc:
        raise Rejected(f"The JSON document names the key {str(exc)[:60]!r} twice in one object "
                       "(readers disagree on which value counts).",
                       RejectionCode.UNSAFE_STRUCTURE) from None
    except _TooLong:
        raise Rejected(f"The JSON document holds a number longer than {MAX_NUMBER_DIGITS} "
                       "digits.", RejectionCode.TOO_COMPLEX) from None
    except (ValueError, RecursionError) as exc:
        raise Rejected(f"The JSON document is not valid JSON ({str(exc)[:120]}).",
                       RejectionCode.DAMAGED) from None


def sanitize_json(src: Path, dst: Path, ctx: Context) -> str:
    if src.stat().st_size > MAX_TEXT_BYTES:
        raise Rejected("The text file is too large.", RejectionCode.TOO_LARGE)
    text, encoding = decode(src.read_bytes())
    if encoding != "utf-8":
        ctx.add("encoding", "whole file", action="converted",
                detail=f"{encoding} converted to UTF-8")
    value = parse_json(text)
    try:
        out = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
        out.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate written as \ud800: kept as an escape
        out = json.dumps(value, ensure_ascii=True, indent=2) + "\n"
    if out != text:
        ctx.add("structure", "whole document", action="converted",
                detail="re-serialised as canonical JSON (UTF-8, two-space indent, keys in "
                "their order)")
    dst.write_text(out, encoding="utf-8", newline="")
    return "json"
