"""``/i18n/...``: a server's catalogs for its pages, public like the pages' scripts.

============================  ========================================================
path                          what
============================  ========================================================
``/i18n/<server>.json``       the server's language, the languages it speaks and its
                              time zone: ``{"language", "languages", "names", "time_zone"}``
                              (``hall.json`` on the hall, ``central.json`` on the central server)
``/i18n/<lang>.json``         one language's catalog: ``{"language", "messages"}``, msgid
                              to text (a list of forms for a plural), cacheable
============================  ========================================================

The pages' ``t()``, ``money()`` and ``time()`` (``static/i18n.js``) read them; the
catalogs are a server's :class:`server_kit.i18n.Catalogs`.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from twisted.web.resource import Resource
from twisted.web.server import Request

from server_kit import i18n
from server_kit.web.http import SECURITY_HEADERS

#: How long a browser may keep a catalog without asking again (a new release's texts show within it).
CATALOG_MAX_AGE_S = 300


def _json(request: Request, status: int, body: Any, cache: bytes) -> bytes:
    request.setResponseCode(status)
    for name, value in SECURITY_HEADERS.items():
        request.setHeader(name, value)
    request.setHeader(b"content-type", b"application/json; charset=utf-8")
    request.setHeader(b"cache-control", cache)
    return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


class CatalogResource(Resource):
    """``/i18n``: the server's language (``/i18n/<settings>``) and each language's catalog of ``catalogs``."""

    isLeaf = True

    def __init__(self, catalogs: i18n.Catalogs, language: str, time_zone: str, settings: str) -> None:
        super().__init__()
        self.catalogs = catalogs
        self.settings = settings
        self.about = {"language": catalogs.checked(language), "languages": list(i18n.LANGUAGES),
                       "names": i18n.LANGUAGE_NAMES, "time_zone": time_zone}
        self._catalogs: dict[str, tuple[bytes, bytes]] = {}

    def catalog(self, language: str) -> tuple[bytes, bytes]:
        """``(body, etag)`` of ``language``'s catalog, made once."""
        if language not in self._catalogs:
            body = json.dumps({"language": language, "messages": self.catalogs.messages(language)},
                              ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()
            self._catalogs[language] = body, b'"' + hashlib.sha256(body).hexdigest()[:32].encode() + b'"'
        return self._catalogs[language]

    def render_GET(self, request: Request) -> bytes:
        names = [part.decode("ascii", "replace") for part in request.postpath or []]
        if names == [self.settings]:
            return _json(request, 200, self.about, b"no-cache")
        language = names[0].removesuffix(".json") if len(names) == 1 and names[0].endswith(".json") else None
        if language not in i18n.LANGUAGES:
            return _json(request, 404, {"ok": False, "error": {
                "code": "not_found", "message": f"{self.catalogs.speaker}'s catalogs are /i18n/<language>.json for "
                                                f"{', '.join(i18n.LANGUAGES)}, and /i18n/{self.settings}"}}, b"no-store")
        body, etag = self.catalog(language)
        if request.setETag(etag):
            request.setHeader(b"cache-control", f"public, max-age={CATALOG_MAX_AGE_S}".encode())
            return b""  # 304: the browser's copy is this one
        _json(request, 200, None, f"public, max-age={CATALOG_MAX_AGE_S}".encode())
        return body

    def render_HEAD(self, request: Request) -> bytes:
        return self.render_GET(request)
