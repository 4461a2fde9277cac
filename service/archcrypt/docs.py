"""The interactive API docs (Swagger UI), served from this process: no CDN.

FastAPI's own /docs page loads Swagger UI's script and style from a CDN, so a browser that
opens it runs third-party code next to a page that holds bearer tokens. The same files ship
in the `fastapi-offline` wheel (MIT); they are served here from the package directory,
with the same security headers as the API. ARCHCRYPT_DOCS_ENABLED=false removes /docs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse


def _assets() -> Path:
    import fastapi_offline

    return Path(fastapi_offline.__file__).parent / "static"


ASSETS: Final = {
    "swagger-ui-bundle.js": "text/javascript",
    "swagger-ui.css": "text/css",
    "favicon.png": "image/png",
}


def install_docs(app: FastAPI, openapi_url: str = "/openapi.json") -> None:
    directory = _assets()

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} - API",
            swagger_js_url="/docs/swagger-ui-bundle.js",
            swagger_css_url="/docs/swagger-ui.css",
            swagger_favicon_url="/docs/favicon.png",
        )

    for name, media in ASSETS.items():
        app.add_api_route(
            f"/docs/{name}",
            _asset(directory / name, media),
            methods=["GET"],
            include_in_schema=False,
        )


def _asset(path: Path, media: str) -> Callable[[], Awaitable[FileResponse]]:
    # A closure, not default arguments: FastAPI would turn those into query parameters.
    async def asset() -> FileResponse:
        return FileResponse(path, media_type=media)

    return asset
