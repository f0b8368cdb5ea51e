"""``/i18n/...``: the hall's catalogs for its pages, public like the board.

======================  ========================================================
path                    what
======================  ========================================================
``/i18n/hall.json``     the hall's language, the languages it speaks and its time
                        zone: ``{"language", "languages", "names", "time_zone"}``
``/i18n/<lang>.json``   one language's catalog: ``{"language", "messages"}``, msgid
                        to text (a list of forms for a plural), cacheable
======================  ========================================================

The pages' ``t()``, ``money()`` and ``time()`` (``server_kit/web/static/i18n.js``) read
them; the catalogs are the ``.po`` files of :mod:`hall_server.i18n`, served as the server
kit serves every server's (:class:`server_kit.web.i18n.CatalogResource`).
"""

from __future__ import annotations

from hall_server import i18n
from server_kit.web.i18n import CATALOG_MAX_AGE_S, CatalogResource


class I18nResource(CatalogResource):
    """``/i18n``: the hall's language and each language's catalog."""

    def __init__(self, language: str, time_zone: str) -> None:
        super().__init__(i18n.CATALOGS, language, time_zone, "hall.json")


__all__ = ["CATALOG_MAX_AGE_S", "I18nResource"]
