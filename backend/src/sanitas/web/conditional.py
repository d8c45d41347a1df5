"""Conditional GETs for polled answers (the file status call): a strong `ETag`, `Cache-Control:
private, no-cache` (a browser keeps the answer but asks again every time, sending
`If-None-Match`), and 304 Not Modified with no body when the client's copy is current.

The route decides 304 only after it has authorised the caller and read what the answer
shows, so a caller who may not see the resource gets the same error as without the header."""

from __future__ import annotations

from typing import Any

from fastapi import Request, Response

# Never stored by shared caches (the answers are an account's); browsers revalidate each use.
CACHE_CONTROL = "private, no-cache"


def _opaque(tag: str) -> str:
    tag = tag.strip()
    return tag[2:] if tag.startswith("W/") else tag


def if_none_match(request: Request, etag: str) -> bool:
    """Whether the request's If-None-Match names `etag` (or is `*`). RFC 9110 13.1.2: the weak
    comparison, so `W/"x"` matches `"x"`."""
    header = request.headers.get("if-none-match")
    if not header:
        return False
    if header.strip() == "*":
        return True
    mine = _opaque(etag)
    return any(_opaque(tag) == mine for tag in header.split(","))


def validator_headers(etag: str) -> dict[str, str]:
    return {"ETag": etag, "Cache-Control": CACHE_CONTROL}


def not_modified(etag: str) -> Response:
    """304: no body, the validator and caching headers a 200 would carry."""
    return Response(status_code=304, headers=validator_headers(etag))


def not_modified_doc(what: str) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI entry of a route's 304 and of its 200's validator headers."""
    return {304: {"description": f"{what} has not changed since the answer whose `ETag` "
                                 "the request's `If-None-Match` names: no body (use the "
                                 "copy you have).",
                  "headers": {"ETag": {"description": "The answer's validator",
                                       "schema": {"type": "string"}}},
                  "content": {}}}
