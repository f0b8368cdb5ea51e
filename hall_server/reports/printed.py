"""What the hall prints speaks the hall's language: the :class:`Wording` of its PDFs.

The tickets, the statements, the minutes, the daily, monthly and yearly reports and the
sheets of paper cards are laid out in :func:`wording`: the texts of the ``reports``
catalog (``hall_server/locale/<language>/LC_MESSAGES/reports.po``), amounts by CLDR's
rules for the language (``1.234,56 €``), dates in the language's short form and times
24-hour in the hall's zone.  The CSV and the JSON beside a PDF are data for programs:
they keep the English words, the ISO dates and the amounts in cents
(:data:`server_kit.reports.document.DATA`).

:data:`WORDS` names the words a report copies from the journal (a game's state, a
prize, an event of the draw...): each is looked up in the catalog as it is printed.
:data:`PHRASES` are the texts the hall composes in English for the journal and the
minutes (a movement's reason, ``desk 1``, ``bingo within 40 balls``): a text that is no
message of the catalog is matched against them and printed as the message it matches,
its parts translated in turn.  A text the journal holds as a person wrote it (an
incident's description, a refusal's reason, a name) is printed as written.
"""

from __future__ import annotations

import datetime
import functools
import re
from datetime import tzinfo
from typing import Any, Callable

from babel import Locale
from babel.dates import format_date, format_datetime

from hall_server import i18n
from server_kit.reports.document import Report, Wording
from server_kit.reports.render import to_pdf


def N_(text: str) -> str:
    """Marks a word for the catalog (``pybabel extract``) where it is only named, not yet translated."""
    return text


#: The words the reports copy from the journal, translated where they are printed.
WORDS = (
    # a game's state
    N_("selling"), N_("sale closed"), N_("drawing"), N_("suspended"), N_("suspended for good"), N_("refunded"),
    N_("being finished by hand"), N_("closed"), N_("finished by hand"), N_("open"), N_("opening"), N_("closing"),
    N_("announced"), N_("void"), N_("cancelled"), N_("finished"),
    # the prizes and pots
    N_("line"), N_("bingo"), N_("superbingo"), N_("superbingo_last_game"), N_("grand_superbingo"), N_("megabingo"),
    N_("jackpot"), N_("jackpot_accumulated"), N_("jackpot_reserve"), N_("jackpot (taken back)"),
    # the events of the draw
    N_("ball"), N_("ball drawn"), N_("ball entered"), N_("ball voided"), N_("misread"), N_("correction signed"),
    N_("pot collected"), N_("pot collection returned"), N_("pot moved"), N_("claim"), N_("claim rejected"),
    N_("prize"), N_("prize paid"), N_("paid"), N_("carried"), N_("the game was refunded"), N_("line completed"),
    N_("bingo completed"), N_("prize won"), N_("prize closed"), N_("pot paid"), N_("ball corrected"),
    N_("declared not played"), N_("game resumed"), N_("game refunded"), N_("manual finish started"),
    N_("game closed"), N_("game finished"), N_("carry_line"), N_("carry_bingo"),
    # a ball count's stage, a verification's checks
    N_("extra"), N_("clock"), N_("database"), N_("draw_device"), N_("journal"), N_("links"), N_("software"),
    N_("terminals"), N_("physical"),
    # kinds of cards, of places, of beneficiaries
    N_("paper"), N_("virtual"), N_("terminal"), N_("seller"), N_("account"), N_("station"), N_("paper winner"),
    N_("paper card"), N_("ticket"), N_("hall game"), N_("joint game"), N_("network game"), N_("video bingo"),
    # the minutes book
    N_("incident"), N_("complaint"), N_("clock stepped"), N_("extra ball check requested"), N_("ball set replaced"),
    N_("entry refused"), N_("self-exclusion"), N_("terminal failed"), N_("terminal out of service"),
    N_("blower fault"), N_("blower link down"), N_("blower switched"), N_("game suspended"),
    N_("game suspended for good"), N_("verification failed"), N_("deposit"), N_("withdrawal"),
    # the staff's roles
    N_("administrator"), N_("room chief"), N_("seller caller"), N_("table chief"), N_("cashier"), N_("admission"),
    N_("system"),
)


#: The texts the hall composes in English (a movement's reason, a prize's payer, a pot's condition), as patterns
#: with the message each is printed as; the named groups fill the message's placeholders, each translated too.
PHRASES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(pattern), message) for pattern, message in (
    (r"credit loaded in cash at desk (?P<desk>.+)", N_("credit loaded in cash at desk {desk}")),
    (r"cashed out in cash at desk (?P<desk>.+)", N_("cashed out in cash at desk {desk}")),
    (r"cashed out by (?P<method>\S+) (?P<reference>.*) at desk (?P<desk>.+)",
     N_("cashed out by {method} {reference} at desk {desk}")),
    (r"sale:virtual", N_("virtual cards bought")),
    (r"annex:sale", N_("cards bought in the game with the partner hall")),
    (r"network:hold", N_("held for network cards")),
    (r"network:stake", N_("network cards bought")),
    (r"network:release", N_("network hold released")),
    (r"prize:(?P<prize>.+)", N_("prize: {prize}")),
    (r"vb:credit in \((?P<source>.+)\)", N_("credit moved to a video bingo machine")),
    (r"vb:credit out \((?P<destination>.+)\)", N_("credit returned from a video bingo machine")),
    (r"refund:game", N_("cards refunded: the game was not played")),
    (r"refund:terminal", N_("cards refunded: the terminal failed")),
    (r"desk (?P<desk>.+)", N_("desk {desk}")),
    (r"(?P<prize>[a-z_]+), desk (?P<desk>.+)", N_("{prize}, desk {desk}")),
    (r"(?P<prize>[a-z_]+), to the players' accounts", N_("{prize}, to the players' accounts")),
    (r"bingo within (?P<balls>[0-9]+) balls", N_("bingo within {balls} balls")),
    (r"pot:(?P<pot>[a-z_]+) from the sales", N_("{pot} from the sales")),
    (r"entered by (?P<by>.+)", N_("entered by {by}")),
    (r"(?P<prize>[a-z_]+): no other card, closed by (?P<by>.+) \(R85\.6\)",
     N_("{prize}: no other card, closed by {by} (R85.6)")),
    (r"(?P<prize>[a-z_]+): no other card, closed after (?P<seconds>[0-9]+) s with no new claim \(R85\.6\)",
     N_("{prize}: no other card, closed after {seconds} s with no new claim (R85.6)")),
    (r"invalid \(R82\.8\), by (?P<by>[^:]+): (?P<reason>.*)", N_("invalid (R82.8), by {by}: {reason}")),
    (r"visitor (?P<number>[0-9]+)", N_("visitor {number}")),
))
#: The means of a cash-out and the players' accounts, as printed.
MORE_WORDS = (N_("cheque"), N_("transfer"), N_("card"), N_("to the players' accounts"),
              N_("the announced megabingo to the bingo"), N_("opening balance"),
              N_("jackpot reserve to accumulated jackpot (R91)"), N_("correction withdrawn"), N_("card refused"))


def phrase(text: str) -> tuple[str, dict[str, str]]:
    """The message ``text`` is said with and its parts: the message of the phrase it matches and the
    phrase's named parts (``("credit loaded in cash at desk {desk}", {"desk": "desk-1"})``), else
    ``text`` itself with none.  The staff console says an account's movements so (``t()`` of the
    message, each part through ``t()`` as well), as the statement prints them."""
    for pattern, message in PHRASES:
        found = pattern.fullmatch(text)
        if found:
            return message, found.groupdict()
    return text, {}


def said(text: str) -> dict[str, Any]:
    """How a page says ``text`` in its reader's language (``I18n.said``): the catalog's message of
    :func:`phrase` and its parts, each part a text of the catalog or as written."""
    message, parts = phrase(text)
    return {"message": message, "parts": parts}


def phrased(text: str, t: Callable[..., str]) -> str:
    """``text`` in ``t``'s words: the message of the phrase it matches, its parts translated; else ``t(text)``."""
    message, parts = phrase(text)
    return t(message, **{name: t(value) for name, value in parts.items()})


def _short_date(local: Locale) -> str:
    return local.date_formats["short"].pattern


def wording(language: str) -> Wording:
    """The hall's printed words in ``language`` (one of :data:`hall_server.i18n.LANGUAGES`)."""
    local = Locale.parse(i18n.checked(language))

    def moment(time_ms: int, zone: tzinfo) -> str:
        when = datetime.datetime.fromtimestamp(time_ms / 1000, zone)
        return format_datetime(when, f"{_short_date(local)} HH:mm:ss", locale=local)

    def clock(time_ms: int, zone: tzinfo) -> str:
        return format_datetime(datetime.datetime.fromtimestamp(time_ms / 1000, zone), "HH:mm:ss", locale=local)

    def day(iso: str) -> str:
        try:
            return format_date(datetime.date.fromisoformat(iso), "short", locale=local)
        except ValueError:  # not a date: printed as it is
            return iso

    def message(msgid: str, **params: Any) -> str:
        return i18n.translate(language, msgid, **params)

    def t(msgid: str, **params: Any) -> str:
        if params or msgid in i18n.catalog(language):
            return message(msgid, **params)
        return phrased(msgid, message)  # a text the hall composed: its phrase's message, or as written

    return Wording(t=t, money=functools.partial(_money, language=language), moment=moment, clock=clock, day=day)


#: CLDR's narrow no-break space (French thousands, ``1 234,56 €``), which the embedded fonts have no glyph for,
#: is printed as the no-break space they have: the same figure, the same unbroken line.
_NARROW_NO_BREAK_SPACE, _NO_BREAK_SPACE = "\u202f", "\u00a0"


def _money(cents: int, language: str) -> str:
    return i18n.money(cents, language).replace(_NARROW_NO_BREAK_SPACE, _NO_BREAK_SPACE)


def printed_pdf(lay_out: Callable[[Wording], Report], language: str) -> bytes:
    """The PDF of the report ``lay_out`` makes in a wording, printed in ``language``."""
    words = wording(language)
    return to_pdf(lay_out(words), words)
