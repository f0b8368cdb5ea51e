"""The hall's languages: gettext catalogs read with Babel, CLDR money and times.

Every word a person reads comes from the gettext catalogs
``hall_server/locale/<language>/LC_MESSAGES/<domain>.po`` in Catalan (a hall's default),
Castilian, French and English, one file a domain (:data:`DOMAINS`: the public screens, the
staff's, the printed documents), each extracted from the sources its ``babel*.cfg`` names.  The ``.po`` files are read
as they are when first asked for (Babel's ``pofile`` reader): there is no build step and
no ``.mo`` file to keep in step.  The message ids are the English texts, with named
``{placeholders}``; :func:`messages` gives one language's catalog to the pages
(``/i18n/<language>.json``, :mod:`hall_server.web.i18n`), whose ``t()`` fills the same
placeholders (``hall_server/web/static/i18n.js``).

Money is integer cents, formatted by CLDR's rules for the reader's locale (``72,00 €``
in Catalan, ``€72.00`` in English); times are 24-hour, in the hall's time zone.
``docs/languages.md`` says how a text is added and how a translator updates a catalog.
"""

from __future__ import annotations

import functools
import gettext
import io
from datetime import datetime, tzinfo
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Iterable, Iterator

from babel import Locale
from babel.dates import format_datetime, format_time
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_currency

from protocol.errors import DomainError, fill

#: The languages of the hall, the default first: Catalan is Andorra's official language.
LANGUAGES = ("ca", "es", "fr", "en")
DEFAULT_LANGUAGE = "ca"
#: Each language's own name, as a chooser shows it.
LANGUAGE_NAMES = {"ca": "Català", "es": "Castellano", "fr": "Français", "en": "English"}
LOCALE_DIR = Path(__file__).parent / "locale"
#: The domain of the public screens (kiosk, machine, board, sign-in page).
DOMAIN = "hall"
#: Every domain, with the Babel mapping that names its sources (at the repository's root): a
#: translator works in one domain's file at a time; the hall reads them all as one catalog.
DOMAINS: dict[str, str] = {"hall": "babel.cfg", "console": "babel-console.cfg", "reports": "babel-reports.cfg",
                           "vb": "babel-vb.cfg", "consultation": "babel-consultation.cfg"}


class LanguageUnknown(ValueError):
    """A language the hall has no catalog for."""

    def __init__(self, language: str) -> None:
        super().__init__(f"the hall speaks {', '.join(LANGUAGES)}; {language!r} is none of them")
        self.language = language


def checked(language: str) -> str:
    """``language`` if the hall has its catalog, else :class:`LanguageUnknown`."""
    if language not in LANGUAGES:
        raise LanguageUnknown(language)
    return language


def catalog_path(language: str, domain: str = DOMAIN) -> Path:
    return LOCALE_DIR / checked(language) / "LC_MESSAGES" / f"{domain}.po"


@functools.cache
def domain_catalog(language: str, domain: str) -> Catalog:
    """One domain's catalog of ``language`` as its ``.po`` file holds it (read once)."""
    with catalog_path(language, domain).open("rb") as file:
        return read_po(file, locale=language, domain=domain)


@functools.cache
def catalog(language: str) -> Catalog:
    """Every domain's catalog of ``language`` as one; a text in two domains must read the same in both."""
    merged = Catalog(locale=language, domain=DOMAIN)
    for domain in DOMAINS:
        for message in domain_catalog(language, domain):
            if not message.id:
                continue
            before = merged.get(message.id)
            if before is not None and before.string != message.string:
                raise ValueError(f"{language}: {message.id!r} reads {before.string!r} in one catalog and "
                                 f"{message.string!r} in {domain}.po")
            merged[message.id] = message
    return merged


@functools.cache
def translations(language: str) -> gettext.GNUTranslations:
    """``language``'s catalog as :mod:`gettext` reads it (plural rules included), made in memory."""
    buffer = io.BytesIO()
    write_mo(buffer, catalog(language))
    buffer.seek(0)
    return gettext.GNUTranslations(buffer)


def translate(language: str, msgid: str, **params: Any) -> str:
    """``msgid`` in ``language`` with its ``{placeholders}`` filled; the English text if untranslated."""
    text = translations(language).gettext(msgid)
    return text.format(**params) if params else text


def said(error: DomainError, language: str) -> str:
    """``error``'s message in ``language`` (the console's refusals, ``docs/languages.md``): its
    template (``N_("...")``) translated and filled with its params, amounts (``Cents``) written by
    CLDR; the English ``str(error)`` for English, for a language the hall does not speak, for an
    error with no template, and for a translation whose placeholders its params do not fill."""
    if error.template is None or language not in LANGUAGES or language == "en":
        return str(error)
    try:
        return fill(translations(language).gettext(error.template), error.template_params,
                    money=lambda cents: money(cents, language))
    except (KeyError, ValueError, IndexError):
        return str(error)


def messages(language: str) -> dict[str, Any]:
    """``language``'s translated messages for a page: msgid -> text, or the list of plural forms."""
    found: dict[str, Any] = {}
    for message in catalog(language):
        msgid, text = message.id, message.string
        if not msgid or not text or message.fuzzy:
            continue
        if isinstance(msgid, (tuple, list)) and isinstance(text, (tuple, list)):
            if all(text):
                found[msgid[0]] = list(text)
        elif isinstance(msgid, str) and isinstance(text, str):
            found[msgid] = text
    return found


def money(cents: int, language: str) -> str:
    """Integer cents as the reader's locale writes euros: ``1.234,56 €`` (ca), ``€1,234.56`` (en)."""
    return format_currency(Decimal(cents).scaleb(-2), "EUR", locale=Locale.parse(checked(language)))


def clock_time(moment: datetime, language: str, zone: tzinfo) -> str:
    """``moment``'s time of day in the hall's zone, 24-hour (``20:05``)."""
    return format_time(moment.astimezone(zone), "HH:mm", locale=Locale.parse(checked(language)))


def date_time(moment: datetime, language: str, zone: tzinfo) -> str:
    """``moment``'s date and time in the hall's zone, the locale's short date and a 24-hour time."""
    local = Locale.parse(checked(language))
    date_text = format_datetime(moment.astimezone(zone), local.date_formats["short"].pattern, locale=local)
    return f"{date_text} {clock_time(moment, language, zone)}"


# --- Extraction of the pages' texts --------------------------------------------------------

#: The attributes of an element marked ``data-i18n-<attribute>`` whose value is a text to translate.
TRANSLATED_ATTRIBUTES = ("placeholder", "aria-label", "title", "data-empty")


class _MarkedTexts(HTMLParser):
    """The texts of a page marked for translation: an element's text when it carries
    ``data-i18n``, an attribute's value when it carries ``data-i18n-<attribute>``."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[int, str]] = []
        self._open: list[tuple[str, list[str], int]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        line = self.getpos()[0]
        for name in TRANSLATED_ATTRIBUTES:
            if f"data-i18n-{name}" in values and values.get(name):
                self.found.append((line, str(values[name])))
        if "data-i18n" in values:
            given = values["data-i18n"]
            if given:
                self.found.append((line, given))
            else:
                self._open.append((tag, [], line))

    def handle_data(self, data: str) -> None:
        if self._open:
            self._open[-1][1].append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._open and self._open[-1][0] == tag:
            _, parts, line = self._open.pop()
            text = " ".join("".join(parts).split())
            if text:
                self.found.append((line, text))


def extract_html(fileobj: Any, keywords: Iterable[str], comment_tags: Iterable[str],
                 options: dict[str, Any]) -> Iterator[tuple[int, str, str, list[str]]]:
    """A Babel extraction method for the pages: the texts marked ``data-i18n`` (see
    ``docs/languages.md``; named in ``babel.cfg`` as ``hall_server.i18n:extract_html``)."""
    parser = _MarkedTexts()
    parser.feed(fileobj.read().decode(options.get("encoding", "utf-8")))
    parser.close()
    for line, text in parser.found:
        yield line, "", text, []
