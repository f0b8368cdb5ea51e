"""The daily report to the regulator (R95.4 a-f, R83.5) as plain facts, before any layout.

A hall server (its own games) and the central server (the interconnected games) each
fold their journal into a :class:`DailyReport`: the games of the day, every purchase of
cards with its identifier (series and numbers) and value, the balls of each game in
the order drawn, every winning card with the hall and the terminal where it was
bought, and the prizes.  The running totals of R83.5 and the terminals where cards
were played (R95.4 d) are derived here, once, for both servers.

A hall's video bingo machines (R3.5.d) have a line each for the calendar day in the
hall's time zone: what their plays staked and paid, and their gross gaming revenue
(R98; the tax is the year's, :mod:`protocol.settlement.tax`, and the day shows its share).

The wins of 15,000 EUR or more (R75.6) are summed per beneficiary, not per card: every
prize a server paid is a :class:`BeneficiaryPrize` naming who took it
(:class:`Beneficiary`: an account, an identified paper winner, or a card or station no
one was identified for), and :func:`large_wins` adds them up - an account's prizes over
the day, anyone else's over one game - and keeps the sums at or above the threshold.

A hall's day also shows what its prizes paid against its collection, with the 70% the
regulation asks (R88.1), and every pot's balance at the day's start and end with what
went in and out (:class:`PotDay`): money set aside for prizes and not yet paid is in
plain sight.

Money is integer cents.  The report names the journal records it was made from
(``first_seq`` to ``last_seq`` and ``last_hash``), so an inspector ties it to the chain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from protocol.settlement.tax import YearTax

from protocol.settlement import BASIS_POINTS, PAYOUT_FLOOR_BP

#: A card bought on paper at the hall's desk, or on a terminal.
PAPER, VIRTUAL = "paper", "virtual"

#: R75.6: one beneficiary's prizes summing to this much or more are reported to the regulator,
#: at the next daily close, with the beneficiary's identity and the prizes that make the sum.
LARGE_WIN_CENTS = 1_500_000

#: Who took a prize (R75.6): a player account, a paper winner identified by their document,
#: a paper card nobody was identified for, a video bingo station played without an account.
ACCOUNT, PAPER_WINNER, PAPER_CARD, STATION = "account", "paper winner", "paper card", "station"
#: Where a prize was won.
HALL_GAME, JOINT_GAME, NETWORK_GAME, VIDEO_BINGO = "hall game", "joint game", "network game", "video bingo"


@dataclass(frozen=True)
class Beneficiary:
    """Who took a prize (R75.6).

    ``ref`` is the account number (``account``); the record that holds the paper winner's
    identity (``paper winner``: ``identity_seq``, whose document and name are personal data the
    journal keeps and the regulator's feed carries); the card (``paper card``: paid before
    anyone was identified); or the station (``station``: a cash play nobody signed in to).
    ``visitor`` is the visitor record the account, or the identity, belongs to, when known.
    """

    kind: str
    ref: str
    identity_seq: int | None = None
    visitor: int | None = None

    @property
    def identified(self) -> bool:
        return self.kind in (ACCOUNT, PAPER_WINNER)

    @property
    def per_day(self) -> bool:
        """An account's prizes are summed over the day; anyone else's over one game (R75.6)."""
        return self.kind == ACCOUNT


@dataclass(frozen=True)
class BeneficiaryPrize:
    """One prize paid to ``beneficiary`` (line, bingo, a pot, a video bingo play or jackpot), in record ``seq``."""

    beneficiary: Beneficiary
    source: str  # HALL_GAME, JOINT_GAME, NETWORK_GAME, VIDEO_BINGO
    game_id: str  # the game; for video bingo the machine and the play (``vb-1#12``)
    prize: str
    card: str  # the card (``SERIES-NUMBER``), or the station (``vb-1.2``)
    cents: int
    seq: int


@dataclass(frozen=True)
class LargeWin:
    """A beneficiary's prizes of one game (or, for an account, one day) summing to 15,000 EUR or more."""

    beneficiary: Beneficiary
    game_id: str | None  # None: an account's day
    prizes: tuple[BeneficiaryPrize, ...]

    @property
    def total_cents(self) -> int:
        return sum(p.cents for p in self.prizes)


def large_wins(prizes: Iterable[BeneficiaryPrize], threshold_cents: int = LARGE_WIN_CENTS) -> tuple[LargeWin, ...]:
    """The beneficiaries whose prizes reach ``threshold_cents`` (R75.6): an account over all of
    ``prizes`` (one day's), anyone else within one game; in order of their first prize."""
    groups: dict[tuple[str, str, str | None], list[BeneficiaryPrize]] = {}
    for prize in prizes:
        who = prize.beneficiary
        groups.setdefault((who.kind, who.ref, None if who.per_day else prize.game_id), []).append(prize)
    found = [
        LargeWin(taken[0].beneficiary, game_id, tuple(taken))
        for (_, _, game_id), taken in groups.items()
        if sum(p.cents for p in taken) >= threshold_cents
    ]
    return tuple(sorted(found, key=lambda win: min(p.seq for p in win.prizes)))


def paper_groups(won: Mapping[str, int], identities: Mapping[str, int]) -> list[tuple[tuple[str, ...], int | None, int]]:
    """The paper winners of one game: ``won`` is each paper card's prizes in the game (cents), ``identities``
    the identity record of each card identified.  Cards identified by one record are one person's; a card
    nobody was identified for stands alone.  Each as (cards, identity record or None, total cents)."""
    by_identity: dict[int, list[str]] = {}
    alone: list[str] = []
    for card in won:
        seq = identities.get(card)
        if seq is None:
            alone.append(card)
        else:
            by_identity.setdefault(seq, []).append(card)
    groups: list[tuple[tuple[str, ...], int | None, int]] = [
        (tuple(cards), seq, sum(won[c] for c in cards)) for seq, cards in by_identity.items()
    ]
    groups += [((card,), None, won[card]) for card in alone]
    return groups


@dataclass(frozen=True)
class DailyGame:
    """One game of the day and what it sold and paid.

    ``cards_sold`` and ``collection_cents`` leave out what was paid back (a refunded
    game, a failed terminal's cards): they count what stayed sold.
    """

    game_id: str
    state: str  # closed, refunded, not played...
    price_cents: int  # the face value of one card
    balls: tuple[int, ...]  # in the order drawn
    cards_sold: int
    collection_cents: int
    prizes_paid_cents: int
    refunded_cards: int = 0
    refunded_cents: int = 0
    #: What the game's sales set aside in the pots, less what a refund gave back (R89-R91).
    pots_set_aside_cents: int = 0
    #: Of ``prizes_paid_cents``, what the pots paid (superbingo, megabingo, jackpot...).
    pot_prizes_paid_cents: int = 0


def percent_text(part: int, whole: int) -> str:
    """``part`` of ``whole`` as a percentage with two decimals, rounded down (``72.35%``); ``-`` of nothing."""
    if whole <= 0:
        return "-"
    hundredths = part * BASIS_POINTS // whole
    return f"{hundredths // 100}.{hundredths % 100:02d}%"


@dataclass(frozen=True)
class PotDay:
    """One pot's day (R88.1): what it held at the day's start and end, and what went in and out.

    ``pot`` is a level of :class:`protocol.settlement.Pots` (``superbingo``,
    ``jackpot_reserve``, the line's and bingo's carries...).  In: the sales' shares, the
    operator's contributions, a transfer from the reserve, a refunded game's boost given
    back.  Out: the prizes it paid, a transfer to the accumulated jackpot, a boost of the
    prizes, a refunded game's shares given back, the operator taking back its contributions.
    """

    pot: str
    opening_cents: int
    paid_in_cents: int
    paid_out_cents: int
    closing_cents: int


@dataclass(frozen=True)
class Payout:
    """What the day's prizes paid against its collection (R88.1).

    ``paid_pct`` is every prize paid (line, bingo and the pots' prizes) over the
    collection; ``with_pots_pct`` the line and bingo paid plus what the sales set aside
    in the pots, over the collection: the share the 70% minimum holds each game to, the
    pots' shares counting because every pot reaches players.  On a day a pot pays what
    earlier days set aside, ``paid_pct`` may exceed 100%; on a day that sets aside more
    than it pays, it falls below 70% while the money waits in the pots (:class:`PotDay`).
    """

    collection_cents: int
    prizes_paid_cents: int
    pot_prizes_paid_cents: int
    set_aside_cents: int

    @property
    def paid_pct(self) -> str:
        return percent_text(self.prizes_paid_cents, self.collection_cents)

    @property
    def with_pots_pct(self) -> str:
        return percent_text(self.prizes_paid_cents - self.pot_prizes_paid_cents + self.set_aside_cents,
                            self.collection_cents)

    @property
    def minimum_pct(self) -> str:
        return percent_text(PAYOUT_FLOOR_BP, BASIS_POINTS)


@dataclass(frozen=True)
class CardsBought:
    """A run of cards ``first`` to ``last`` of ``series`` bought in one purchase (R95.4 a, c, d)."""

    game_id: str
    kind: str  # PAPER or VIRTUAL
    series: str
    first: int
    last: int
    value_cents: int  # the face value of one card
    amount_cents: int  # what was paid for the run (a partial stake pays part of the value)
    hall: str
    where: str  # the terminal (virtual) or the seller (paper)
    stake_pct: int | None = None
    refunded: bool = False

    @property
    def count(self) -> int:
        return self.last - self.first + 1


@dataclass(frozen=True)
class CardWin:
    """A winning card (R95.4 b), the hall and terminal where it was bought (R95.4 f), and its payment."""

    game_id: str
    prize: str
    series: str
    card: int
    ball_count: int  # the win came on this ball of the game
    ball: int | None
    paid_cents: int
    hall: str
    where: str  # the terminal, or "paper" for a card sold at the desk

    @property
    def card_id(self) -> str:
        return f"{self.series}-{self.card}"


@dataclass(frozen=True)
class PrizeLine:
    """A prize of a game (R95.4 e): its amount, what was paid, what was carried on."""

    game_id: str
    prize: str
    ball_count: int
    amount_cents: int
    paid_cents: int
    carry_cents: int
    winners: int


@dataclass(frozen=True)
class MachineDay:
    """One video bingo machine's day (R3.5.d, R98), folded from its plays and credit movements.

    The gross gaming revenue is the stakes less what the plays gave back to the players:
    their prizes and the jackpot contributions, which the ledger holds as owed to the
    players from the moment they are set aside.  A jackpot paid out comes from that
    money held in trust, so it is counted when it is set aside, not again when it is won.
    """

    machine: str
    plays: int
    stakes_cents: int
    prizes_cents: int
    jackpot_contributions_cents: int
    jackpot_payouts_cents: int
    credits_in_cents: int
    credits_out_cents: int

    @property
    def gross_revenue_cents(self) -> int:
        return self.stakes_cents - self.prizes_cents - self.jackpot_contributions_cents


@dataclass(frozen=True)
class IncidentLine:
    """An incident of the day (R75.4, R77.2) or a complaint of the complaints book (R75.5), as the
    minutes hold it: its record, time, kind, number (complaints and hand-written incidents), who
    recorded it, the people it names, its text, and the room chief who witnessed a complaint."""

    seq: int
    time_ms: int
    kind: str
    number: int | None
    recorded_by: str
    people: tuple[str, ...]
    text: str
    room_chief: str = ""
    #: How a report says ``text`` in its reader's words when the server composed it (its catalog message
    #: and parts: ``Wording.said``); None for a text a person wrote.
    said: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class RunningTotal:
    """One game of the day with the running totals after it (R83.5)."""

    game: DailyGame
    games: int
    cards_sold: int
    prizes_paid_cents: int
    collection_cents: int


@dataclass(frozen=True)
class TerminalDay:
    """What one terminal (or seller) sold on the day (R95.4 d)."""

    hall: str
    where: str
    kind: str
    games: int
    cards: int
    amount_cents: int


@dataclass(frozen=True)
class DailyReport:
    """The day of one server: ``origin`` is ``hall`` or ``central``, ``server`` its name."""

    origin: str
    server: str
    day: str
    timezone: str
    games: tuple[DailyGame, ...]
    cards: tuple[CardsBought, ...]
    wins: tuple[CardWin, ...]
    prizes: tuple[PrizeLine, ...]
    first_seq: int
    last_seq: int
    last_hash: str
    machines: tuple[MachineDay, ...] = ()
    #: Every prize of the day with who took it (R75.6); empty on the central server, which knows no
    #: player (a network game's prizes are credited to accounts by their hall, which reports them).
    beneficiary_prizes: tuple[BeneficiaryPrize, ...] = ()
    #: The tax year up to the end of this day (R98.2), when the server folded it.
    year_to_date: YearTax | None = None
    #: The day's incidents and complaints (R75.4, R75.5, R77.2): a hall's; the central server has none.
    incidents: tuple[IncidentLine, ...] = ()
    #: Every pot's day (a hall's; none for the central server, whose games have no pot).
    pots: tuple[PotDay, ...] = ()

    def payout(self) -> Payout:
        """The day's prizes paid against its collection, and the pots' shares (R88.1)."""
        return Payout(
            collection_cents=sum(g.collection_cents for g in self.games),
            prizes_paid_cents=sum(g.prizes_paid_cents for g in self.games),
            pot_prizes_paid_cents=sum(g.pot_prizes_paid_cents for g in self.games),
            set_aside_cents=sum(g.pots_set_aside_cents for g in self.games),
        )

    def large_wins(self) -> tuple[LargeWin, ...]:
        """The beneficiaries whose prizes of one game, or of the day for an account, reach 15,000 EUR (R75.6)."""
        return large_wins(self.beneficiary_prizes)

    def machines_revenue_cents(self) -> int:
        """The gross gaming revenue of every machine of the day (R98)."""
        return sum(m.gross_revenue_cents for m in self.machines)

    def running_totals(self) -> tuple[RunningTotal, ...]:
        """Every game with the totals of games, cards sold, prizes paid and collection so far."""
        rows: list[RunningTotal] = []
        cards = prizes = collection = 0
        for number, game in enumerate(self.games, start=1):
            cards += game.cards_sold
            prizes += game.prizes_paid_cents
            collection += game.collection_cents
            rows.append(RunningTotal(game, number, cards, prizes, collection))
        return tuple(rows)

    def totals(self) -> RunningTotal | None:
        """The day's totals (the last running total), or None on a day without games."""
        rows = self.running_totals()
        return rows[-1] if rows else None

    def terminals(self) -> tuple[TerminalDay, ...]:
        """Where the cards were bought, with the cards and the money of each (refunds left out)."""
        found: dict[tuple[str, str, str], tuple[set[str], int, int]] = {}
        for run in self.cards:
            if run.refunded:
                continue
            games, cards, cents = found.get((run.hall, run.kind, run.where), (set(), 0, 0))
            games.add(run.game_id)
            found[(run.hall, run.kind, run.where)] = (games, cards + run.count, cents + run.amount_cents)
        return tuple(
            TerminalDay(hall, where, kind, len(games), cards, cents)
            for (hall, kind, where), (games, cards, cents) in sorted(found.items())
        )
