"""The central server's languages: its consultation page's and its printed reports' words.

The central server speaks Catalan (the default: Andorra's official language), Castilian,
French or English (``[central] language`` in ``central.toml``).  Its words are the
``central`` domain, ``central_server/locale/<language>/LC_MESSAGES/central.po``, extracted
from the sources ``babel-central.cfg`` names: the regulator's consultation page
(``static/regulator.html``, ``static/regulator.js``) and the tables of the daily and yearly
reports, which the server kit lays out (``server_kit/reports``) in the words given to it.
The catalogs are read as the kit reads every server's (:mod:`server_kit.i18n`); the central
server imports nothing of the hall's.

The page gets them at ``/i18n/<language>.json`` with the server's language and time zone at
``/i18n/central.json`` (:class:`server_kit.web.i18n.CatalogResource`); a report's PDF is
printed in :func:`wording`, its JSON and CSV stay the data's (English words, cents, ISO dates).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from server_kit import i18n as kit
from server_kit.i18n import DEFAULT_LANGUAGE, LANGUAGES
from server_kit.reports.document import Wording

LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "central"
#: The Babel mapping of the domain's sources, at the repository's root.
MAPPING = "babel-central.cfg"
CATALOGS = kit.Catalogs(LOCALE_DIR, (DOMAIN,), "the central server")
#: The settings the page reads first (``/i18n/central.json``).
SETTINGS = "central.json"


def N_(text: str) -> str:
    """Marks a word for the catalog (``pybabel extract``) where it is only named, not yet translated."""
    return text


#: The words the reports copy from the central server's records, translated where they are printed:
#: a network game's state, a kind of card, a prize.
WORDS = (N_("closed"), N_("not played"), N_("virtual"), N_("line"), N_("bingo"))


def translate(language: str, msgid: str, **params: Any) -> str:
    """``msgid`` in ``language`` with its ``{placeholders}`` filled; the English text if untranslated."""
    return CATALOGS.translate(language, msgid, **params)


def wording(language: str) -> Wording:
    """The central server's printed words in ``language`` (a text no message of the catalog names, such
    as a hall's or a terminal's id, is printed as it is)."""
    CATALOGS.checked(language)

    def t(msgid: str, **params: Any) -> str:
        return translate(language, msgid, **params)

    return kit.printed(language, t)


__all__ = ["CATALOGS", "DEFAULT_LANGUAGE", "DOMAIN", "LANGUAGES", "MAPPING", "SETTINGS", "WORDS", "translate",
           "wording"]
