"""Security headers on every response: the web app, the API and the API docs.

The web app is a Vite build whose index.html loads its scripts from /assets (no inline
script; tests/api/test_security_headers.py checks the built file), so its policy allows
scripts from this origin only. Styles may be inline: react-toastify injects a <style>
element, and style injection cannot run code. The API answers JSON and file downloads,
which nothing should render, so its policy allows nothing at all. /api/docs is Swagger UI
from a pinned local copy (see api_docs.py): scripts, styles and fetches from this origin
only, so no third-party script ever runs on the origin that holds the access tokens.

HSTS is sent only when SANITAS_PUBLIC_URL is https (over plain http it would be ignored, and
a development server on http://127.0.0.1 must not pin itself to https).
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SPA_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
           "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; "
           "object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'")
API_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
DOCS_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
HSTS = "max-age=31536000; includeSubDomains"

COMMON = (
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "strict-origin-when-cross-origin"),
)


def policy_for(path: str) -> str:
    if path == "/api/docs" or path.startswith("/api/docs/"):
        return DOCS_CSP
    if path.startswith("/api/") or path == "/health":
        return API_CSP
    return SPA_CSP


class SecurityHeadersMiddleware:
    """Pure ASGI: adds the headers to each response start unless the response set them."""

    def __init__(self, app: ASGIApp, *, hsts: bool) -> None:
        self.app = app
        self.hsts = hsts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = [("Content-Security-Policy", policy_for(scope["path"])), *COMMON]
        if self.hsts:
            extra.append(("Strict-Transport-Security", HSTS))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                headers = MutableHeaders(scope=message)
                for name, value in extra:
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
