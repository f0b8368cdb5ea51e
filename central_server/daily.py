"""The central server's daily report (R95.4 a-f, R83.5): the interconnected games of one day.

From a journal that verifies, every network game is read from its own records (the
typed records of :mod:`protocol.records.central`): the purchases with their hall,
terminal, series, first card and count; the stakes returned; the balls; each prize
and each winning card with the hall and terminal where it was bought (R95.4 f).

The day of a game is the date, in the central server's time zone, of the record that
ended it (``central_game_closed`` or ``central_game_not_played``), as in the audit
export.  A game declared not played (R96.2) is in the report, with its cards and the
stakes returned.  The report's journal range runs from the first record of the day's
first game to the last record of its games; a day without games names the last
record written by the end of the day, as the hall's report does.

The tax year (R98.2) is the stakes of the year's network games, each on the day of the
record that ended it: the sales at the close less the stakes the house returned after it
(a failed terminal's cards, R96.3); a game declared not played has none.  The central
server has no machines, and no player: the prizes of a network game are credited to
accounts by their halls, which report their beneficiaries (R75.6).

The PDF of each report is printed in the central server's language (``[central] language``,
:func:`central_server.i18n.wording`); its JSON and CSV are the data's.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass, field
from typing import Sequence

from central_server.audit import CentralAuditError, day_of, verified_journal
from central_server.config import CentralConfig
from central_server.i18n import DEFAULT_LANGUAGE, wording
from central_server.module import game_record
from protocol.chain import Record
from protocol.daily import VIRTUAL, CardsBought, CardWin, DailyGame, DailyReport, PrizeLine
from protocol.errors import DomainError
from protocol.records import RecordError
from protocol.settlement.tax import TaxDay, YearTax, tax_base_after_refunds, tax_cents
from protocol.records.central import (
    GAME_RECORDS,
    CentralBallDrawn,
    CentralCardWon,
    CentralGameClosed,
    CentralGameNotPlayed,
    CentralGameScheduled,
    CentralPrizeWon,
    CentralPurchaseConfirmed,
    CentralSaleClosed,
    CentralStakeReturned,
)
from server_kit.reports.daily import daily_report, day_end_ms
from server_kit.reports.document import DATA, Report, Wording
from server_kit.reports.render import to_pdf
from server_kit.reports.yearly import year_range, yearly_report


@dataclass
class _Game:
    game_id: str
    price_cents: int
    series: str
    records: list[Record] = field(default_factory=list)
    purchases: list[CentralPurchaseConfirmed] = field(default_factory=list)
    returned: list[CentralStakeReturned] = field(default_factory=list)
    sale: CentralSaleClosed | None = None
    balls: list[int] = field(default_factory=list)
    prizes: list[CentralPrizeWon] = field(default_factory=list)
    wins: list[CentralCardWon] = field(default_factory=list)
    end: Record | None = None
    not_played: bool = False

    def apply(self, stored: Record, event: object) -> None:
        self.records.append(stored)
        if isinstance(event, CentralPurchaseConfirmed):
            self.purchases.append(event)
        elif isinstance(event, CentralStakeReturned):
            self.returned.append(event)
        elif isinstance(event, CentralSaleClosed):
            self.sale = event
        elif isinstance(event, CentralBallDrawn):
            self.balls.append(event.ball)
        elif isinstance(event, CentralPrizeWon):
            self.prizes.append(event)
        elif isinstance(event, CentralCardWon):
            self.wins.append(event)
        elif isinstance(event, (CentralGameClosed, CentralGameNotPlayed)):
            self.end = stored
            self.not_played = isinstance(event, CentralGameNotPlayed)


def read_day(config: CentralConfig, day: str) -> DailyReport:
    """The report of ``day`` from the central server's whole journal, once it verifies."""
    records, _, _ = verified_journal(config)
    return central_day(records, day, config.central_id, config.timezone)


def central_day(records: Sequence[Record], day: str, central_id: str, timezone: str) -> DailyReport:
    """The report of the network games that ended on ``day`` (in ``timezone``), from ``records`` in order."""
    zone = zoneinfo.ZoneInfo(timezone)
    every = _games(records)
    games = [g for g in every if g.end is not None and day_of(g.end, zone) == day]
    if games:
        last = max((r for g in games for r in g.records), key=lambda r: r.seq)
        span = (min(g.records[0].seq for g in games), last.seq, last.hash)
    else:
        end = day_end_ms(day, zone)
        written = [r for r in records if r.time_ms < end]
        span = (written[-1].seq, written[-1].seq, written[-1].hash) if written else (0, 0, "")
    return DailyReport(
        origin="central",
        server=central_id,
        day=day,
        timezone=timezone,
        games=tuple(_daily_game(g) for g in games),
        cards=tuple(run for g in games for run in _cards(g)),
        wins=tuple(
            CardWin(g.game_id, w.pattern, g.series, w.card_number, w.ball_count, _ball(g, w.ball_count),
                    w.payment_cents, w.hall_id, w.terminal_id)
            for g in games for w in g.wins
        ),
        prizes=tuple(
            PrizeLine(g.game_id, p.pattern, p.ball_count, p.amount_cents, p.paid_cents, p.carry_cents, p.winner_count)
            for g in games for p in g.prizes
        ),
        first_seq=span[0],
        last_seq=span[1],
        last_hash=span[2],
        year_to_date=YearTax.of(int(day[:4]), day, _tax_days(every, zone)),
    )


def central_daily_files(made: DailyReport, language: str = DEFAULT_LANGUAGE) -> tuple[Report, bytes]:
    """``made``'s report (the data's, for the JSON and the CSV) and its PDF, printed in ``language``."""
    words = wording(language)
    return daily_report(made), to_pdf(daily_report(made, words), words)


def read_year(config: CentralConfig, year: int, through: str) -> tuple[YearTax, Report, bytes]:
    """The network games' tax year, its report (R98.2) and the report's PDF in the central server's
    language, from the whole journal once it verifies."""
    records, _, _ = verified_journal(config)
    words = wording(config.language)
    made, (laid_out, printed) = central_yearly_report(records, year, through, config.central_id, config.timezone,
                                                      (DATA, words))
    return made, laid_out, to_pdf(printed, words)


def central_yearly_report(records: Sequence[Record], year: int, through: str, central_id: str,
                          timezone: str, wordings: Sequence[Wording] = (DATA,)) -> tuple[YearTax, list[Report]]:
    """The network games' tax year ``year`` up to day ``through`` (R98.2) and its report in each of
    ``wordings`` (the data's by default), from ``records`` in order, folded once."""
    zone = zoneinfo.ZoneInfo(timezone)
    games = [g for g in _games(records) if g.end is not None and str(year) == day_of(g.end, zone)[:4]
             and day_of(g.end, zone) <= through]
    made = YearTax.of(year, through, _tax_days(games, zone))
    journal = year_range(records, year, through, zone)
    tax = sum(tax_cents(_tax_base(g)) for g in games)
    return made, [yearly_report(made, origin="central", server=central_id, timezone=timezone, journal=journal,
                                games_tax_cents=tax, wording=words) for words in wordings]


def _tax_days(games: Sequence[_Game], zone: zoneinfo.ZoneInfo) -> list[TaxDay]:
    """Each ended network game's stakes (R98), on the day of the record that ended it."""
    return [TaxDay(day_of(g.end, zone), bingo_stakes_cents=_tax_base(g)) for g in games if g.end is not None]


def _tax_base(game: _Game) -> int:
    if game.not_played or game.sale is None:
        return 0
    after_close = sum(r.amount_cents for r in game.returned if r.paid_by == "house")
    return tax_base_after_refunds(game.sale.sales_cents, after_close)


def _games(records: Sequence[Record]) -> list[_Game]:
    games: dict[str, _Game] = {}
    for stored in records:
        if stored.type not in GAME_RECORDS:
            continue
        try:
            event = game_record(stored)
        except RecordError as error:
            raise CentralAuditError(str(error.at(stored.seq))) from None
        except DomainError as error:
            raise CentralAuditError(f"record {stored.seq}: {error}") from None
        if isinstance(event, CentralGameScheduled):
            games[event.game_id] = _Game(event.game_id, int(event.config["price_cents"]),
                                         str(event.config["series_label"]))
        game_id = str(stored.payload.get("game_id"))
        if game_id not in games:
            raise CentralAuditError(f"record {stored.seq}: {stored.type} of game {game_id}, never scheduled")
        games[game_id].apply(stored, event)
    return list(games.values())


def _ball(game: _Game, ball_count: int) -> int | None:
    return game.balls[ball_count - 1] if 0 < ball_count <= len(game.balls) else None


def _refunded(game: _Game) -> dict[str, set[int]]:
    """The cards whose stakes went back, by the purchase's request id."""
    found: dict[str, set[int]] = {}
    for returned in game.returned:
        found.setdefault(returned.purchase_request_id, set()).update(returned.card_numbers)
    return found


def _daily_game(game: _Game) -> DailyGame:
    refunded_cards = sum(len(r.card_numbers) for r in game.returned)
    sold = sum(p.card_count for p in game.purchases)
    return DailyGame(
        game_id=game.game_id,
        state="not played" if game.not_played else "closed",
        price_cents=game.price_cents,
        balls=tuple(game.balls),
        cards_sold=sold - refunded_cards,
        # The collection the prizes were set from at the close (R93.9); nothing for a game not played.
        collection_cents=0 if game.not_played or game.sale is None else game.sale.sales_cents,
        prizes_paid_cents=sum(w.payment_cents for w in game.wins),
        refunded_cards=refunded_cards,
        refunded_cents=sum(r.amount_cents for r in game.returned),
    )


def _cards(game: _Game) -> list[CardsBought]:
    """Each purchase as runs of cards, split where the stakes of some of its cards went back."""
    refunded = _refunded(game)
    runs: list[CardsBought] = []
    for purchase in game.purchases:
        back = refunded.get(purchase.request_id, set())
        start = purchase.first_card
        end = purchase.first_card + purchase.card_count  # one past the last card
        while start < end:
            status = start in back
            stop = start
            while stop < end and (stop in back) == status:
                stop += 1
            runs.append(CardsBought(
                game.game_id, VIRTUAL, game.series, start, stop - 1, game.price_cents,
                purchase.stake_cents * (stop - start), purchase.hall_id, purchase.terminal_id, purchase.stake_pct,
                status,
            ))
            start = stop
    return runs
