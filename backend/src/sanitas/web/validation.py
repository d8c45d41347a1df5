"""Checks every request string and moment gets, whatever the route (docs/security-and-limits.md,
"Request input"):

- Text: no NUL character (PostgreSQL cannot store one, C tools cut the string there) and no
  unpaired surrogate (not encodable as UTF-8) in any path parameter, query parameter, JSON body
  string (keys included, at any depth) or upload form field: 422 naming the field, before any
  other dependency runs (`reject_unstorable_text`, installed on every route by main.py).
- Labels people choose (key, policy and webhook names, descriptions, first and last names...):
  cleaned like file names (`clean_label`): NFC, control characters and invisible format
  characters (bidirectional overrides, zero-width spaces...) removed, surrounding spaces too.
- Moments: between MOMENT_MIN and MOMENT_MAX, so that both databases store them and adding a
  time-zone offset or a period in Python cannot overflow (`bounded_utc`; the types are in
  sanitas.web.schemas).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError

from sanitas.engine import strip_invisible

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")

MOMENT_MIN = datetime(1970, 1, 1, tzinfo=UTC)
MOMENT_MAX = datetime(9000, 1, 1, tzinfo=UTC)


def text_problem(value: str) -> str | None:
    """Why `value` cannot be taken as text, or None when it can."""
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    if found.group() == "\x00":
        return "must not contain NUL (\\u0000) characters"
    return "is not valid Unicode text (an unpaired surrogate)"


def clean_label(raw: str) -> str:
    """A name or short text a person chose, as it is stored and shown: NFC, no control
    characters, no invisible format characters (a right-to-left override makes
    "key\u202egnp.exe" read "keyexe.png"; see `strip_invisible`), no surrounding spaces.
    The same cleaning as uploaded file names (files/multipart.py `clean_filename`)."""
    return strip_invisible(_CONTROL.sub("", unicodedata.normalize("NFC", raw))).strip()


def clean_label_input(value: Any) -> Any:
    """`clean_label` for a Pydantic BeforeValidator: strings are cleaned, anything else is
    left for the type to refuse."""
    return clean_label(value) if isinstance(value, str) else value


def bounded_utc(value: datetime, *, naive_is_utc: bool) -> datetime:
    """`value` in UTC, refused (ValueError) outside MOMENT_MIN..MOMENT_MAX or, unless
    `naive_is_utc`, without a time zone."""
    if value.utcoffset() is None:
        if not naive_is_utc:
            raise ValueError("must include a time zone (for example Z or +02:00)")
        value = value.replace(tzinfo=UTC)
    try:
        utc = value.astimezone(UTC)
    except OverflowError:  # e.g. 9999-12-31T23:59:59-01:00 is in the year 10000 in UTC
        utc = None
    if utc is None or not MOMENT_MIN <= utc <= MOMENT_MAX:
        raise ValueError(f"must be between {MOMENT_MIN:%Y-%m-%d} and {MOMENT_MAX:%Y-%m-%d} "
                         "(UTC)")
    return utc


def _strings(value: Any, loc: tuple[str | int, ...]) -> Iterator[tuple[tuple, str]]:
    """Every string in a parsed JSON document (keys included) with where it is; iterative, as
    deep as the parser went."""
    stack = [(loc, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, str):
            yield where, item
        elif isinstance(item, dict):
            for key, sub in item.items():
                yield (*where, key), key
                stack.append(((*where, key), sub))
        elif isinstance(item, list):
            stack.extend(((*where, i), sub) for i, sub in enumerate(item))


def _request_strings(request: Request) -> Iterator[tuple[tuple, str]]:
    for name, value in request.path_params.items():
        if isinstance(value, str):
            yield ("path", name), value
    for name, value in request.query_params.multi_items():
        yield ("query", name), name
        yield ("query", name), value
    # The JSON body, as FastAPI parsed it for the route's body model before the dependencies
    # run (Starlette keeps it on the request). Bodies a route streams itself (uploads) are
    # never read here; their form fields are checked by files/multipart.py.
    body = request.__dict__.get("_json")
    if body is not None:
        yield from _strings(body, ("body",))


async def reject_unstorable_text(request: Request) -> None:
    """An app-wide dependency: 422 (`validation_error`, naming the field) for a NUL or an
    unpaired surrogate anywhere in the request's parameters or JSON body."""
    errors = []
    for loc, value in _request_strings(request):
        problem = text_problem(value)
        if problem is not None:
            errors.append({"type": "value_error", "loc": loc, "msg": problem,
                           "input": None})
            if len(errors) >= 5:
                break
    if errors:
        raise RequestValidationError(errors)
