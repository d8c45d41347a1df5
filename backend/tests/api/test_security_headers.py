"""Security headers on the web app, the API and the API docs; Swagger UI from a local copy;
no inline script in the web app's index.html (source and build)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import sanitas.main
from sanitas.main import create_app
from sanitas.web.security_headers import API_CSP, DOCS_CSP, SPA_CSP

FRONTEND = Path(__file__).resolve().parents[3] / "frontend"


@pytest.fixture
def spa_client(settings, tmp_path, monkeypatch):
    """The app serving a stand-in web build (the real one may not be built)."""
    dist = tmp_path / "dist"
    (dist / "assets").mkdir(parents=True)
    (dist / "index.html").write_text('<!doctype html><script type="module" '
                                     'src="/assets/app.js"></script>')
    (dist / "assets" / "app.js").write_text("console.log('hi')")
    monkeypatch.setattr(sanitas.main, "FRONTEND_DIST", dist)
    with TestClient(create_app(settings)) as c:
        yield c


def csp(answer) -> dict[str, str]:
    policy = answer.headers["content-security-policy"]
    return {part.split()[0]: part.strip() for part in policy.split(";")}


def assert_common(answer) -> None:
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "DENY"
    assert answer.headers["referrer-policy"] == "strict-origin-when-cross-origin"
    assert "frame-ancestors 'none'" in answer.headers["content-security-policy"]
    assert "strict-transport-security" not in answer.headers  # public URL is http here


def test_the_web_app_gets_a_policy_without_inline_script(spa_client):
    for path in ("/", "/dashboard", "/assets/app.js"):
        answer = spa_client.get(path)
        assert answer.status_code == 200, path
        assert_common(answer)
        assert answer.headers["content-security-policy"] == SPA_CSP
    policy = csp(spa_client.get("/"))
    assert policy["script-src"] == "script-src 'self'"
    assert "unsafe-inline" not in policy["script-src"] and "unsafe-eval" not in SPA_CSP
    assert policy["object-src"] == "object-src 'none'"


def test_api_answers_get_a_deny_all_policy(client, settings, db_session):
    for method, path in (("GET", "/health"), ("GET", "/api/upload/info"),
                         ("GET", "/api/nowhere"), ("POST", "/api/auth/login")):
        answer = client.request(method, path, json={} if method == "POST" else None)
        assert_common(answer)
        assert answer.headers["content-security-policy"] == API_CSP, path


def test_hsts_only_for_an_https_public_url(settings):
    with TestClient(create_app(settings.model_copy(
            update={"public_url": "https://sanitas.example.com"}))) as c:
        hsts = c.get("/health").headers["strict-transport-security"]
    assert hsts.startswith("max-age=31536000")


def test_docs_are_swagger_ui_from_this_origin(client):
    page = client.get("/api/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert_common(page)
    assert page.headers["content-security-policy"] == DOCS_CSP
    html = page.text
    assert not re.search(r"https?://", html), "the docs page names another origin"
    scripts, _ = parse_scripts(html)
    assert scripts and all(src and not body.strip() for src, body in scripts)  # no inline
    assets = re.findall(r'(?:src|href)="(/api/docs/static/[^"]+)"', html)
    assert {a.rsplit("/", 1)[1] for a in assets} >= {"swagger-ui.css", "swagger-ui-bundle.js",
                                                     "init.js"}
    for asset in assets:
        answer = client.get(asset)
        assert answer.status_code == 200, asset
        assert answer.headers["x-content-type-options"] == "nosniff"
    bundle = client.get("/api/docs/static/swagger-ui-bundle.js")
    assert bundle.headers["content-type"].startswith("text/javascript")
    assert b"SwaggerUIBundle" in bundle.content and len(bundle.content) > 500_000
    init = client.get("/api/docs/static/init.js").text
    assert "validatorUrl: null" in init and not re.search(r"https?://", init)
    # The package's demo page (which fetches a document from another site) is not served.
    for name in ("index.html", "swagger-initializer.js", "../__init__.py"):
        assert client.get(f"/api/docs/static/{name}").status_code == 404, name
    assert client.get("/api/openapi.json").json()["info"]["title"] == "Sanitas"


# -- the web app's index.html ------------------------------------------------------------------
class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[str | None, str]] = []
        self.handlers: list[str] = []
        self._open: list[str] | None = None
        self._src: str | None = None

    def handle_starttag(self, tag, attrs):
        self.handlers += [name for name, _ in attrs if name.lower().startswith("on")]
        if tag == "script":
            self._src, self._open = dict(attrs).get("src"), []

    def handle_data(self, data):
        if self._open is not None:
            self._open.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._open is not None:
            self.scripts.append((self._src, "".join(self._open)))
            self._open = None


def parse_scripts(html: str) -> tuple[list[tuple[str | None, str]], list[str]]:
    parser = _Scripts()
    parser.feed(html)
    return parser.scripts, parser.handlers


def assert_no_inline_script(path: Path) -> None:
    scripts, handlers = parse_scripts(path.read_text())
    assert scripts, f"{path} loads no script"
    for src, body in scripts:
        assert src and not body.strip(), f"inline script in {path}: {body[:80]!r}"
        assert not re.match(r"(https?:)?//", src), f"{path} loads a script from {src}"
    assert not handlers, f"inline event handlers in {path}: {handlers}"
    assert "javascript:" not in path.read_text()


def test_web_app_source_index_has_no_inline_script():
    assert_no_inline_script(FRONTEND / "index.html")


def test_built_web_app_index_has_no_inline_script():
    built = FRONTEND / "dist" / "index.html"
    if not built.exists():
        pytest.skip("the web app is not built (make build-frontend)")
    assert_no_inline_script(built)
