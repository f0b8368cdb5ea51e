"""A server's languages: gettext catalogs read with Babel, CLDR money and times, the pages' texts.

What every server that speaks to people shares (the hall, the central server, the
regulator's receiver), each with its own catalogs in its own folder:

* :class:`Catalogs`: a server's gettext catalogs ``<folder>/<language>/LC_MESSAGES/<domain>.po``,
  one file a domain, read as they are when first asked for (Babel's ``pofile`` reader: no
  ``.mo`` file, no build step) and merged into one catalog a language, a text in two domains
  reading the same in both; :meth:`Catalogs.translate` fills the message's named
  ``{placeholders}``; :meth:`Catalogs.messages` is the catalog a page reads
  (``/i18n/<language>.json``, whose ``t()`` fills the same placeholders:
  ``server_kit/web/static/i18n.js``).
* :func:`money`, :func:`clock_time`, :func:`date_time`: integer cents by CLDR's rules for
  the reader's locale (``1.234,56 €`` in Catalan, ``€1,234.56`` in English) and 24-hour
  times in a given zone.
* :func:`printed`: the :class:`~server_kit.reports.document.Wording` of a PDF in a language
  (a catalog's texts, CLDR money, the language's short dates, 24-hour times).
* :func:`extract_html`: Babel's extraction method for the texts of a page marked
  ``data-i18n``.

The message ids are the English texts.  Nothing here knows which server speaks: each
names its folder, its domains and itself (``docs/languages.md``).
"""

from __future__ import annotations

import gettext
import io
from datetime import date, datetime, tzinfo
from decimal import Decimal
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from babel import Locale
from babel.dates import format_date, format_datetime, format_time
from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.numbers import format_currency

from server_kit.reports.document import Wording

#: The languages every server speaks, the default first: Catalan is Andorra's official language.
LANGUAGES = ("ca", "es", "fr", "en")
DEFAULT_LANGUAGE = "ca"
#: Each language's own name, as a chooser shows it.
LANGUAGE_NAMES = {"ca": "Català", "es": "Castellano", "fr": "Français", "en": "English"}


class LanguageUnknown(ValueError):
    """A language a server has no catalog for; ``speaker`` names the server (``the hall``)."""

    def __init__(self, language: str, speaker: str = "the server") -> None:
        super().__init__(f"{speaker} speaks {', '.join(LANGUAGES)}; {language!r} is none of them")
        self.language = language


def checked(language: str, speaker: str = "the server") -> str:
    """``language`` if it is one of :data:`LANGUAGES`, else :class:`LanguageUnknown`."""
    if language not in LANGUAGES:
        raise LanguageUnknown(language, speaker)
    return language


class Catalogs:
    """A server's catalogs: the domains ``domains`` (the first is the merged catalog's name) under
    ``folder``; ``speaker`` names the server in a refusal (``the hall``)."""

    def __init__(self, folder: Path, domains: Sequence[str], speaker: str) -> None:
        if not domains:
            raise ValueError("a server's catalogs have at least one domain")
        self.folder = folder
        self.domains = tuple(domains)
        self.speaker = speaker
        self._domains: dict[tuple[str, str], Catalog] = {}
        self._merged: dict[str, Catalog] = {}
        self._translations: dict[str, gettext.GNUTranslations] = {}

    def checked(self, language: str) -> str:
        return checked(language, self.speaker)

    def path(self, language: str, domain: str) -> Path:
        return self.folder / self.checked(language) / "LC_MESSAGES" / f"{domain}.po"

    def domain_catalog(self, language: str, domain: str) -> Catalog:
        """One domain's catalog of ``language`` as its ``.po`` file holds it (read once)."""
        key = (language, domain)
        if key not in self._domains:
            with self.path(language, domain).open("rb") as file:
                self._domains[key] = read_po(file, locale=language, domain=domain)
        return self._domains[key]

    def catalog(self, language: str) -> Catalog:
        """Every domain's catalog of ``language`` as one; a text in two domains must read the same in both."""
        if language not in self._merged:
            merged = Catalog(locale=self.checked(language), domain=self.domains[0])
            for domain in self.domains:
                for message in self.domain_catalog(language, domain):
                    if not message.id:
                        continue
                    before = merged.get(message.id)
                    if before is not None and before.string != message.string:
                        raise ValueError(f"{language}: {message.id!r} reads {before.string!r} in one catalog and "
                                         f"{message.string!r} in {domain}.po")
                    merged[message.id] = message
            self._merged[language] = merged
        return self._merged[language]

    def translations(self, language: str) -> gettext.GNUTranslations:
        """``language``'s catalog as :mod:`gettext` reads it (plural rules included), made in memory once."""
        if language not in self._translations:
            buffer = io.BytesIO()
            write_mo(buffer, self.catalog(language))
            buffer.seek(0)
            self._translations[language] = gettext.GNUTranslations(buffer)
        return self._translations[language]

    def translate(self, language: str, msgid: str, **params: Any) -> str:
        """``msgid`` in ``language`` with its ``{placeholders}`` filled; the English text if untranslated."""
        text = self.translations(language).gettext(msgid)
        return text.format(**params) if params else text

    def messages(self, language: str) -> dict[str, Any]:
        """``language``'s translated messages for a page: msgid -> text, or the list of plural forms."""
        found: dict[str, Any] = {}
        for message in self.catalog(language):
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
    """``moment``'s time of day in ``zone``, 24-hour (``20:05``)."""
    return format_time(moment.astimezone(zone), "HH:mm", locale=Locale.parse(checked(language)))


def date_time(moment: datetime, language: str, zone: tzinfo) -> str:
    """``moment``'s date and time in ``zone``, the locale's short date and a 24-hour time."""
    local = Locale.parse(checked(language))
    date_text = format_datetime(moment.astimezone(zone), local.date_formats["short"].pattern, locale=local)
    return f"{date_text} {clock_time(moment, language, zone)}"


#: CLDR's narrow no-break space (French thousands, ``1 234,56 €``), which the PDFs' embedded fonts have no
#: glyph for, is printed as the no-break space they have: the same figure, the same unbroken line.
_NARROW_NO_BREAK_SPACE, _NO_BREAK_SPACE = "\u202f", "\u00a0"


def printed(language: str, t: Callable[..., str]) -> Wording:
    """A PDF's wording in ``language``: ``t(msgid, **params)`` gives the texts; amounts by CLDR's rules
    (``1.234,56 €``), the language's short dates and 24-hour times in the zone a report names."""
    local = Locale.parse(checked(language))
    short = local.date_formats["short"].pattern

    def moment(time_ms: int, zone: tzinfo) -> str:
        return format_datetime(datetime.fromtimestamp(time_ms / 1000, zone), f"{short} HH:mm:ss", locale=local)

    def clock(time_ms: int, zone: tzinfo) -> str:
        return format_datetime(datetime.fromtimestamp(time_ms / 1000, zone), "HH:mm:ss", locale=local)

    def day(iso: str) -> str:
        try:
            return format_date(date.fromisoformat(iso), "short", locale=local)
        except ValueError:  # not a date: printed as it is
            return iso

    def amount(cents: int) -> str:
        return money(cents, language).replace(_NARROW_NO_BREAK_SPACE, _NO_BREAK_SPACE)

    return Wording(t=t, money=amount, moment=moment, clock=clock, day=day)


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
    ``docs/languages.md``; named in a ``babel*.cfg`` as ``server_kit.i18n:extract_html``)."""
    parser = _MarkedTexts()
    parser.feed(fileobj.read().decode(options.get("encoding", "utf-8")))
    parser.close()
    for line, text in parser.found:
        yield line, "", text, []
