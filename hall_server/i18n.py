"""The hall's languages: gettext catalogs read with Babel, CLDR money and times.

Every word a person reads comes from the gettext catalogs
``hall_server/locale/<language>/LC_MESSAGES/<domain>.po`` in Catalan (a hall's default),
Castilian, French and English, one file a domain (:data:`DOMAINS`: the public screens, the
staff's, the printed documents), each extracted from the sources its ``babel*.cfg`` names.  The ``.po`` files are read
as they are when first asked for (Babel's ``pofile`` reader): there is no build step and
no ``.mo`` file to keep in step.  The message ids are the English texts, with named
``{placeholders}``; :func:`messages` gives one language's catalog to the pages
(``/i18n/<language>.json``, :mod:`hall_server.web.i18n`), whose ``t()`` fills the same
placeholders (``server_kit/web/static/i18n.js``).
The reading, merging and formatting are the server kit's (:mod:`server_kit.i18n`); this
module names the hall's folder and domains.

Money is integer cents, formatted by CLDR's rules for the reader's locale (``72,00 €``
in Catalan, ``€72.00`` in English); times are 24-hour, in the hall's time zone.
``docs/languages.md`` says how a text is added and how a translator updates a catalog.
"""

from __future__ import annotations

import gettext
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

from babel.messages.catalog import Catalog

from protocol.errors import DomainError, fill
from server_kit import i18n as kit
from server_kit.i18n import DEFAULT_LANGUAGE, LANGUAGE_NAMES, LANGUAGES, TRANSLATED_ATTRIBUTES, LanguageUnknown
from server_kit.i18n import extract_html

LOCALE_DIR = Path(__file__).parent / "locale"
#: The domain of the public screens (kiosk, machine, board, sign-in page).
DOMAIN = "hall"
#: Every domain, with the Babel mapping that names its sources (at the repository's root): a
#: translator works in one domain's file at a time; the hall reads them all as one catalog.
DOMAINS: dict[str, str] = {"hall": "babel.cfg", "console": "babel-console.cfg", "reports": "babel-reports.cfg",
                           "vb": "babel-vb.cfg", "consultation": "babel-consultation.cfg"}
#: The hall's catalogs, every domain read as one.
CATALOGS = kit.Catalogs(LOCALE_DIR, tuple(DOMAINS), "the hall")


def checked(language: str) -> str:
    """``language`` if the hall has its catalog, else :class:`LanguageUnknown`."""
    return CATALOGS.checked(language)


def catalog_path(language: str, domain: str = DOMAIN) -> Path:
    return CATALOGS.path(language, domain)


def domain_catalog(language: str, domain: str) -> Catalog:
    """One domain's catalog of ``language`` as its ``.po`` file holds it (read once)."""
    return CATALOGS.domain_catalog(language, domain)


def catalog(language: str) -> Catalog:
    """Every domain's catalog of ``language`` as one; a text in two domains must read the same in both."""
    return CATALOGS.catalog(language)


def translations(language: str) -> gettext.GNUTranslations:
    """``language``'s catalog as :mod:`gettext` reads it (plural rules included), made in memory."""
    return CATALOGS.translations(language)


def translate(language: str, msgid: str, **params: Any) -> str:
    """``msgid`` in ``language`` with its ``{placeholders}`` filled; the English text if untranslated."""
    return CATALOGS.translate(language, msgid, **params)


def said(error: DomainError, language: str) -> str:
    """``error``'s message in ``language`` (the console's refusals, ``docs/languages.md``): its
    template (``N_("...")``) translated and filled with its params, amounts (``Cents``) written by
    CLDR, a param that is a template itself (the game's state, ``while the sale is open``)
    translated; the English ``str(error)`` for English, for a language the hall does not speak,
    for an error with no template, and for a translation whose placeholders its params do not fill."""
    if error.template is None or language not in LANGUAGES or language == "en":
        return str(error)
    try:
        catalog = translations(language)
        return fill(catalog.gettext(error.template), error.template_params,
                    money=lambda cents: money(cents, language), words=catalog.gettext)
    except (KeyError, ValueError, IndexError):
        return str(error)


def messages(language: str) -> dict[str, Any]:
    """``language``'s translated messages for a page: msgid -> text, or the list of plural forms."""
    return CATALOGS.messages(language)


def money(cents: int, language: str) -> str:
    """Integer cents as the reader's locale writes euros: ``1.234,56 €`` (ca), ``€1,234.56`` (en)."""
    return kit.money(cents, checked(language))


def clock_time(moment: datetime, language: str, zone: tzinfo) -> str:
    """``moment``'s time of day in the hall's zone, 24-hour (``20:05``)."""
    return kit.clock_time(moment, checked(language), zone)


def date_time(moment: datetime, language: str, zone: tzinfo) -> str:
    """``moment``'s date and time in the hall's zone, the locale's short date and a 24-hour time."""
    return kit.date_time(moment, checked(language), zone)


__all__ = ["CATALOGS", "DEFAULT_LANGUAGE", "DOMAIN", "DOMAINS", "LANGUAGES", "LANGUAGE_NAMES", "LOCALE_DIR",
           "TRANSLATED_ATTRIBUTES", "LanguageUnknown", "catalog", "catalog_path", "checked", "clock_time", "date_time",
           "domain_catalog", "extract_html", "messages", "money", "translate", "translations"]
