"""/api/docs: Swagger UI from a pinned local copy (the swagger-ui-bundle-v2 package, locked
in uv.lock), never from a CDN: the docs share their origin with the web app and its tokens,
so no third-party script may run there. The page has no inline script (its configuration is
read by /api/docs/static/init.js from a data attribute), which lets security_headers.py
give it a Content-Security-Policy that allows this origin only.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse, HTMLResponse, Response
from swagger_ui_bundle import swagger_ui_path

from sanitas.web.errors import ApiError

DOCS_URL = "/api/docs"
STATIC_URL = "/api/docs/static"

# The only files served from the package: not its demo index.html, whose initializer loads
# a petstore document from another site.
_ASSETS = {
    "swagger-ui.css": "text/css; charset=utf-8",
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "favicon-32x32.png": "image/png",
    "favicon-16x16.png": "image/png",
}

_INIT_JS = """\
// Sanitas: starts Swagger UI with the settings read from #swagger-ui's data attributes.
(function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-openapi-url'),
    dom_id: '#swagger-ui',
    layout: 'BaseLayout',
    deepLinking: true,
    showExtensions: true,
    showCommonExtensions: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
  });
})();
"""


def docs_html(title: str, openapi_url: str) -> str:
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(title)} - API docs</title>
<link rel="stylesheet" href="{STATIC_URL}/swagger-ui.css">
<link rel="icon" type="image/png" href="{STATIC_URL}/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui" data-openapi-url="{escape(openapi_url)}"></div>
<script src="{STATIC_URL}/swagger-ui-bundle.js"></script>
<script src="{STATIC_URL}/init.js"></script>
</body>
</html>
"""


def install_docs(app: FastAPI) -> None:
    """Add /api/docs and its assets (create the app with docs_url=None)."""
    assets_dir = Path(str(swagger_ui_path))
    page = docs_html(app.title, app.openapi_url or "/api/openapi.json")

    @app.get(DOCS_URL, include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return HTMLResponse(page, headers={"Cache-Control": "no-cache"})

    @app.get(f"{STATIC_URL}/init.js", include_in_schema=False)
    def swagger_init() -> Response:
        return Response(_INIT_JS, media_type="text/javascript; charset=utf-8",
                        headers={"Cache-Control": "no-cache"})

    @app.get(STATIC_URL + "/{name}", include_in_schema=False)
    def swagger_asset(name: str) -> FileResponse:
        media_type = _ASSETS.get(name)
        if media_type is None:
            raise ApiError(404, f"No API route {STATIC_URL}/{name}")
        return FileResponse(assets_dir / name, media_type=media_type,
                            headers={"Cache-Control": "no-cache"})
