"""Every text the hall speaks, in the hall's catalogs, and the clip names the board asks for.

The board speaks each ball as it is drawn (R92.11-12), "Line!" and "Bingo!" as they are
won, the session's last game as it opens (R93.15) and the megabingo announced, with its
date, time and least amount, from its announcement to its game (R90.2).  A clip is
asked for by name (``ball-42``, ``line``, ``bingo``, ``last-game``, ``megabingo`` with the
announcement's date, time and least amount); :func:`clip_text` says what it speaks, or
why no clip has that name.

The spoken texts are messages of the public screens' catalog (``hall.po``, extracted from
this module: the ``N_()`` marks), translated there like every text the board shows; a
board asks for the clips of its own language (the hall's, or its ``?lang=``).  They are
written for the speech synthesiser: numbers as digits, which it reads as words in the
language ("el 42": "el quaranta-dos"); times as hours and minutes rather than ``21:00``,
which it reads digit by digit; the date as CLDR writes a day of a month in the language.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from datetime import date as Date
from typing import Any, Iterator, Mapping

from babel.dates import format_skeleton

from hall_server import i18n

DEFAULT_LANGUAGE = i18n.DEFAULT_LANGUAGE
#: The espeak-ng voice of each language of the hall.
VOICES: Mapping[str, str] = {"ca": "ca", "es": "es", "fr": "fr", "en": "en-gb"}


def N_(text: str) -> str:
    """A text to speak, marked for extraction into the catalog; translated when a clip is made."""
    return text


# The spoken texts (their English is the msgid).  A ball: "el {n}" in Catalan and Castilian.
BALL = N_("Number {n}")
LINE = N_("Line!")
BINGO = N_("Bingo!")
LAST_GAME = N_("Attention: the last game of the session is starting.")
#: {date}: the day and month as CLDR writes them ("7 de juny", "7 juin", "June 7").
MEGABINGO = N_("Attention: megabingo on {date}, {at}. The whole fund is paid, at least {amount}.")
AT_HOUR = N_("at {hour} o'clock")
#: A time with its minutes, as said aloud ("a les 21 hores i 30 minuts").
AT_HOUR_MINUTES = N_("at {hour} hours {minutes} minutes")
EUROS = N_("{euros} euros")
EUROS_CENTS = N_("{euros} euros and {cents} cents")


@dataclass(frozen=True)
class Catalog:
    """One language's spoken texts, as its catalog translates them."""

    language: str
    voice: str  # the espeak-ng voice
    ball: str  # {n}
    line: str
    bingo: str
    last_game: str
    megabingo: str  # {date} {at} {amount}
    at_hour: str  # {hour}
    at_hour_minutes: str  # {hour} {minutes}
    euros: str  # {euros}
    euros_cents: str  # {euros} {cents}

    def day(self, when: Date) -> str:
        """The day and month in words as the language writes them (CLDR), its apostrophes plain."""
        return format_skeleton("MMMMd", when, locale=self.language).replace("\u2019", "'")


@functools.cache
def spoken(language: str) -> Catalog:
    """``language``'s spoken texts, read from its catalog (once)."""
    said = functools.partial(i18n.translate, i18n.checked(language))
    return Catalog(
        language=language, voice=VOICES[language], ball=said(BALL), line=said(LINE), bingo=said(BINGO),
        last_game=said(LAST_GAME), megabingo=said(MEGABINGO), at_hour=said(AT_HOUR),
        at_hour_minutes=said(AT_HOUR_MINUTES), euros=said(EUROS), euros_cents=said(EUROS_CENTS),
    )


class _Catalogs(Mapping[str, Catalog]):
    """Each language of the hall to its spoken texts, read from the catalogs when first asked for."""

    def __getitem__(self, language: str) -> Catalog:
        if language not in VOICES:
            raise KeyError(language)
        return spoken(language)

    def __iter__(self) -> Iterator[str]:
        return iter(VOICES)

    def __len__(self) -> int:
        return len(VOICES)


CATALOGS: Mapping[str, Catalog] = _Catalogs()

FIXED = {"line": "line", "bingo": "bingo", "last-game": "last_game"}
_BALL = re.compile(r"ball-([1-9][0-9]?)")
#: A time the room chief typed as hours and minutes ("21:00", "21h30", "9.30"); another is spoken as typed.
_TIME = re.compile(r"([01]?[0-9]|2[0-3])\s*(?:[:.hH]\s*([0-5][0-9])?)?\s*")


class ClipUnknown(Exception):
    """No clip has this name, or the megabingo it names is not the one announced; the message says which."""


def megabingo_terms(megabingo: Mapping[str, Any]) -> dict[str, str]:
    """What names an announced megabingo's clip: its date, time and least amount (board.js asks with them)."""
    return {"date": str(megabingo["date"]), "time": str(megabingo["time"]),
            "minimum_cents": str(int(megabingo["minimum_cents"]))}


def megabingo_text(catalog: Catalog, date: str, time: str, cents: int) -> str:
    hours = _TIME.fullmatch(time)
    if hours is None:
        at = time
    elif hours.group(2) and int(hours.group(2)):
        at = catalog.at_hour_minutes.format(hour=int(hours.group(1)), minutes=int(hours.group(2)))
    else:
        at = catalog.at_hour.format(hour=int(hours.group(1)))
    euros, rest = divmod(cents, 100)
    amount = catalog.euros_cents.format(euros=euros, cents=rest) if rest else catalog.euros.format(euros=euros)
    return catalog.megabingo.format(date=catalog.day(Date.fromisoformat(date)), at=at, amount=amount)


def clip_text(language: str, name: str, megabingo: Mapping[str, Any] | None = None,
              terms: Mapping[str, str] | None = None) -> str:
    """What the clip ``name`` says in ``language``.

    ``megabingo``: the one announced now, if any; ``terms``: the megabingo the board asks
    for (:func:`megabingo_terms`).  Raises :class:`ClipUnknown` for a language or name
    the hall does not speak, and for a megabingo that is not the one announced (the
    board asked for a stale one).
    """
    catalog = CATALOGS.get(language)
    if catalog is None:
        raise ClipUnknown(f"the hall speaks {', '.join(sorted(CATALOGS))}, not {language!r}")
    if name in FIXED:
        text: str = getattr(catalog, FIXED[name])
        return text
    ball = _BALL.fullmatch(name)
    if ball is not None and 1 <= int(ball.group(1)) <= 90:
        return catalog.ball.format(n=int(ball.group(1)))
    if name == "megabingo":
        if megabingo is None or dict(terms or {}) != megabingo_terms(megabingo):
            raise ClipUnknown("no megabingo is announced with that date, time and amount")
        return megabingo_text(catalog, str(megabingo["date"]), str(megabingo["time"]), int(megabingo["minimum_cents"]))
    raise ClipUnknown(f"no clip is named {name!r}: ball-1 to ball-90, line, bingo, last-game or megabingo")
