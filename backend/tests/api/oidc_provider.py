"""A small OpenID Connect provider on loopback, for testing Google sign-in end to end.

It really serves HTTP (uvicorn in a thread): discovery, an authorize endpoint that redirects
back with a code, a token endpoint that checks client credentials, redirect_uri and the PKCE
verifier and answers with an RS256-signed id_token, and the JWKS. Tests set `identity` (the
person who "signs in") and may make the provider misbehave (`deny`, `tamper`).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import socket
import threading
import time
from urllib.parse import urlencode

import uvicorn
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse
from starlette.routing import Route

CLIENT_ID = "sanitas-test-client.apps.example"
CLIENT_SECRET = "loopback-client-secret"


class LoopbackOIDC:
    def __init__(self) -> None:
        self.kid = secrets.token_hex(8)
        self.key = RSAKey.generate_key(2048, parameters={"kid": self.kid, "use": "sig",
                                                         "alg": "RS256"})
        self.other_key = RSAKey.generate_key(2048, parameters={"kid": self.kid})
        self.url = ""
        self.reset()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def reset(self) -> None:
        self.identity = {"sub": "google-sub-1", "email": "gina@example.com",
                         "email_verified": True, "given_name": "Gina", "family_name": "Google"}
        self.deny = False
        self.tamper: str | None = None  # "signature" | "nonce" | "audience" | "expired"
        self.codes: dict[str, dict] = {}
        self.token_requests: list[dict] = []
        self.authorize_requests: list[dict] = []

    @property
    def discovery_url(self) -> str:
        return f"{self.url}/.well-known/openid-configuration"

    # --- endpoints -------------------------------------------------------------------

    async def discovery(self, request: Request):
        return JSONResponse({
            "issuer": self.url,
            "authorization_endpoint": f"{self.url}/authorize",
            "token_endpoint": f"{self.url}/token",
            "jwks_uri": f"{self.url}/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic",
                                                      "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
        })

    async def jwks(self, request: Request):
        return JSONResponse(KeySet([self.key]).as_dict(private=False))

    async def authorize(self, request: Request):
        q = dict(request.query_params)
        self.authorize_requests.append(q)
        problems = [name for name, good in [
            ("response_type", q.get("response_type") == "code"),
            ("client_id", q.get("client_id") == CLIENT_ID),
            ("scope", "openid" in q.get("scope", "").split()),
            ("redirect_uri", bool(q.get("redirect_uri"))),
            ("state", bool(q.get("state"))),
            ("nonce", bool(q.get("nonce"))),
            ("code_challenge", q.get("code_challenge_method") == "S256"
             and bool(q.get("code_challenge"))),
        ] if not good]
        if problems:
            return PlainTextResponse(f"bad authorization request: {problems}", 400)
        if self.deny:
            return RedirectResponse(
                f"{q['redirect_uri']}?{urlencode({'error': 'access_denied', 'state': q['state']})}",
                302)
        code = secrets.token_urlsafe(24)
        self.codes[code] = {"redirect_uri": q["redirect_uri"], "nonce": q["nonce"],
                            "challenge": q["code_challenge"], "identity": dict(self.identity)}
        return RedirectResponse(
            f"{q['redirect_uri']}?{urlencode({'code': code, 'state': q['state']})}", 302)

    async def token(self, request: Request):
        form = dict(await request.form())
        self.token_requests.append(form)
        client_id, client_secret = form.get("client_id"), form.get("client_secret")
        auth = request.headers.get("authorization", "")
        if auth.startswith("Basic "):
            client_id, _, client_secret = base64.b64decode(auth[6:]).decode().partition(":")
        if (client_id, client_secret) != (CLIENT_ID, CLIENT_SECRET):
            return JSONResponse({"error": "invalid_client"}, 401)
        grant = self.codes.pop(form.get("code", ""), None)  # single use
        if form.get("grant_type") != "authorization_code" or grant is None:
            return JSONResponse({"error": "invalid_grant"}, 400)
        if form.get("redirect_uri") != grant["redirect_uri"]:
            return JSONResponse({"error": "invalid_grant",
                                 "error_description": "redirect_uri mismatch"}, 400)
        verifier = form.get("code_verifier", "")
        challenge = base64.urlsafe_b64encode(
            hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
        if challenge != grant["challenge"]:
            return JSONResponse({"error": "invalid_grant",
                                 "error_description": "PKCE verification failed"}, 400)
        now = int(time.time())
        claims = {"iss": self.url, "aud": CLIENT_ID, "iat": now, "exp": now + 3600,
                  "nonce": grant["nonce"], **grant["identity"]}
        key = self.key
        if self.tamper == "signature":
            key = self.other_key
        elif self.tamper == "nonce":
            claims["nonce"] = "not-the-nonce-you-sent"
        elif self.tamper == "audience":
            claims["aud"] = "some-other-client"
        elif self.tamper == "expired":
            claims["iat"], claims["exp"] = now - 7200, now - 3600
        id_token = jwt.encode({"alg": "RS256", "kid": self.kid}, claims, key)
        return JSONResponse({"access_token": secrets.token_urlsafe(24), "token_type": "Bearer",
                             "expires_in": 3600, "scope": "openid email profile",
                             "id_token": id_token})

    # --- lifecycle -------------------------------------------------------------------

    def start(self) -> LoopbackOIDC:
        app = Starlette(routes=[
            Route("/.well-known/openid-configuration", self.discovery),
            Route("/jwks", self.jwks),
            Route("/authorize", self.authorize),
            Route("/token", self.token, methods=["POST"]),
        ])
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{sock.getsockname()[1]}"
        self._server = uvicorn.Server(uvicorn.Config(app, log_level="warning",
                                                     lifespan="off"))
        self._thread = threading.Thread(target=self._server.run, kwargs={"sockets": [sock]},
                                        daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("loopback OIDC provider did not start")
            time.sleep(0.02)
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
