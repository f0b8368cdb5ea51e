"""The receiver page's languages: gettext catalogs read with Babel, CLDR dates and money, Andorra's time.

The regulator is Andorra's: its page speaks Catalan, the country's official language, unless
its reader asks for Castilian, French or English (``/?lang=es``).  The words come from the
gettext catalogs ``regulator/locale/<language>/LC_MESSAGES/regulator.po``, extracted from
``regulator/web.py`` as ``babel-regulator.cfg`` says (``docs/languages.md``), read as they
are when first needed (Babel's ``pofile`` reader: no ``.mo`` file, no build step).  The
message ids are the English texts with named ``{placeholders}``.

Times are 24-hour in Andorra's time zone (``Europe/Andorra``), whatever the server's zone,
with the date as the language writes it; amounts are integer cents written by CLDR's rules
(``1.234,56 €`` in Catalan).  The reading and the formats are the server kit's
(:mod:`server_kit.i18n`); the regulator keeps its own catalogs (it does not import the hall server).
"""

from __future__ import annotations

import gettext
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from babel import Locale
from babel.dates import format_datetime
from babel.numbers import format_decimal

from server_kit import i18n as kit
from server_kit.i18n import DEFAULT_LANGUAGE, LANGUAGE_NAMES, LANGUAGES

#: The regulator's time zone: the page's times are Andorra's.
TIME_ZONE = ZoneInfo("Europe/Andorra")
LOCALE_DIR = Path(__file__).parent / "locale"
DOMAIN = "regulator"
#: The receiver's catalogs: one domain.
CATALOGS = kit.Catalogs(LOCALE_DIR, (DOMAIN,), "the regulator's page")


def language_of(asked: str | None) -> str:
    """``asked`` if the page speaks it, else the default (Catalan)."""
    return asked if asked in LANGUAGES else DEFAULT_LANGUAGE


def translations(language: str) -> gettext.GNUTranslations:
    """``language``'s catalog as :mod:`gettext` reads it (plural rules included), made in memory once."""
    return CATALOGS.translations(language)


class Words:
    """The page's words, numbers, amounts and times in one language."""

    def __init__(self, language: str = DEFAULT_LANGUAGE, zone: tzinfo = TIME_ZONE) -> None:
        self.language = language_of(language)
        self.zone = zone
        self.locale = Locale.parse(self.language)
        self._gettext = translations(self.language)

    def t(self, msgid: str, **params: Any) -> str:
        """``msgid`` in the page's language with its ``{placeholders}`` filled (the English text if untranslated)."""
        text = self._gettext.gettext(msgid)
        return text.format(**params) if params else text

    def tn(self, singular: str, plural: str, n: int, **params: Any) -> str:
        """The form of ``singular``/``plural`` for ``n`` in the page's language, ``{n}`` and the others filled."""
        return self._gettext.ngettext(singular, plural, n).format(n=self.number(n), **params)

    def number(self, n: int) -> str:
        """A whole number as the language writes it (``12.345`` in Catalan)."""
        return format_decimal(n, locale=self.locale)

    def money(self, cents: int) -> str:
        """Integer cents as the language writes euros: ``1.234,56 €`` (ca), ``€1,234.56`` (en)."""
        return kit.money(cents, self.language)

    def moment(self, ms: int) -> str:
        """A time in ms since the epoch: the language's short date and a 24-hour time to the second, in Andorra."""
        if not ms:
            return "-"
        moment = datetime.fromtimestamp(ms / 1000, timezone.utc).astimezone(self.zone)
        date = format_datetime(moment, self.locale.date_formats["short"].pattern, locale=self.locale)
        return f"{date} {format_datetime(moment, 'HH:mm:ss', locale=self.locale)}"


__all__ = ["DEFAULT_LANGUAGE", "LANGUAGES", "LANGUAGE_NAMES", "TIME_ZONE", "Words", "language_of", "translations"]
