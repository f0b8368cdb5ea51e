"""Every text the hall speaks, per language, and the clip names the board asks for.

The board speaks each ball as it is drawn (R92.11-12), "Line!" and "Bingo!" as they are
won, the session's last game as it opens (R93.15) and the megabingo announced, with its
date, time and least amount, from its announcement to its game (R90.2).  A clip is
asked for by name (``ball-42``, ``line``, ``bingo``, ``last-game``, ``megabingo`` with the
announcement's date, time and least amount); :func:`clip_text` says what it speaks, or
why no clip has that name.  Catalan is the default: the halls are in Andorra.  The texts are
written for the speech synthesiser (numbers as digits, which it reads in the language;
times as hours and minutes rather than ``21:00``, which it reads digit by digit).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

DEFAULT_LANGUAGE = "ca"


@dataclass(frozen=True)
class Catalog:
    """One language's spoken texts."""

    voice: str  # the espeak-ng voice
    ball: str  # {n}
    line: str
    bingo: str
    last_game: str
    megabingo: str  # {day} {month} {at} {amount}
    at_hour: str  # {hour}
    at_hour_minutes: str  # {hour} {minutes}
    euros: str  # {euros}
    euros_cents: str  # {euros} {cents}
    months: tuple[str, ...]  # January first, with the preposition the date needs


CATALOGS: Mapping[str, Catalog] = {
    "ca": Catalog(
        voice="ca", ball="el {n}", line="Línia!", bingo="Bingo!",
        last_game="Atenció: comença l'última partida de la sessió.",
        megabingo="Atenció: megabingo el {day} {month}, {at}. Es paga tot el fons, com a mínim {amount}.",
        at_hour="a les {hour} hores", at_hour_minutes="a les {hour} hores i {minutes} minuts",
        euros="{euros} euros", euros_cents="{euros} euros i {cents} cèntims",
        months=("de gener", "de febrer", "de març", "d'abril", "de maig", "de juny", "de juliol", "d'agost",
                "de setembre", "d'octubre", "de novembre", "de desembre"),
    ),
    "es": Catalog(
        voice="es", ball="el {n}", line="¡Línea!", bingo="¡Bingo!",
        last_game="Atención: empieza la última partida de la sesión.",
        megabingo="Atención: megabingo el {day} {month}, {at}. Se paga todo el fondo, como mínimo {amount}.",
        at_hour="a las {hour} horas", at_hour_minutes="a las {hour} horas y {minutes} minutos",
        euros="{euros} euros", euros_cents="{euros} euros y {cents} céntimos",
        months=("de enero", "de febrero", "de marzo", "de abril", "de mayo", "de junio", "de julio", "de agosto",
                "de septiembre", "de octubre", "de noviembre", "de diciembre"),
    ),
    "fr": Catalog(
        voice="fr", ball="le {n}", line="Quine !", bingo="Bingo !",
        last_game="Attention : la dernière partie de la séance commence.",
        megabingo="Attention : mégabingo le {day} {month}, {at}. Tout le fonds est payé, au moins {amount}.",
        at_hour="à {hour} heures", at_hour_minutes="à {hour} heures {minutes}",
        euros="{euros} euros", euros_cents="{euros} euros et {cents} centimes",
        months=("janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre",
                "novembre", "décembre"),
    ),
    "en": Catalog(
        voice="en-gb", ball="{n}", line="Line!", bingo="Bingo!",
        last_game="Attention: the last game of the session is starting.",
        megabingo="Attention: megabingo on {month} {day}, {at}. The whole fund is paid, at least {amount}.",
        at_hour="at {hour} o'clock", at_hour_minutes="at {hour} {minutes}",
        euros="{euros} euros", euros_cents="{euros} euros and {cents} cents",
        months=("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December"),
    ),
}

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
    _, month, day = (int(part) for part in date.split("-"))
    hours = _TIME.fullmatch(time)
    if hours is None:
        at = time
    elif hours.group(2) and int(hours.group(2)):
        at = catalog.at_hour_minutes.format(hour=int(hours.group(1)), minutes=int(hours.group(2)))
    else:
        at = catalog.at_hour.format(hour=int(hours.group(1)))
    euros, rest = divmod(cents, 100)
    amount = catalog.euros_cents.format(euros=euros, cents=rest) if rest else catalog.euros.format(euros=euros)
    return catalog.megabingo.format(day=day, month=catalog.months[month - 1], at=at, amount=amount)


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
