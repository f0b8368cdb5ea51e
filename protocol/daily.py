"""The daily report to the regulator (R95.4 a-f, R83.5) as plain facts, before any layout.

A hall server (its own games) and the central server (the interconnected games) each
fold their journal into a :class:`DailyReport`: the games of the day, every purchase of
cards with its identifier (series and numbers) and value, the balls of each game in
the order drawn, every winning card with the hall and the terminal where it was
bought, and the prizes.  The running totals of R83.5 and the terminals where cards
were played (R95.4 d) are derived here, once, for both servers.

A hall's video bingo machines (R3.5.d) have a line each for the calendar day in the
hall's time zone: what their plays staked and paid, and their gross gaming revenue,
of which 10% is the machines' tax (R98).

A hall's day also shows what its prizes paid against its collection, with the 70% the
regulation asks (R88.1), and every pot's balance at the day's start and end with what
went in and out (:class:`PotDay`): money set aside for prizes and not yet paid is in
plain sight.

Money is integer cents.  The report names the journal records it was made from
(``first_seq`` to ``last_seq`` and ``last_hash``), so an inspector ties it to the chain.
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.settlement import BASIS_POINTS, PAYOUT_FLOOR_BP

#: A card bought on paper at the hall's desk, or on a terminal.
PAPER, VIRTUAL = "paper", "virtual"

#: R75.6: a win of this much or more is reported to the regulator within LARGE_WIN_DAYS days.
LARGE_WIN_CENTS = 1_500_000
LARGE_WIN_DAYS = 30

#: R98: the machines' tax is this share of their gross gaming revenue.
MACHINES_TAX_PCT = 10


def machines_tax_cents(gross_revenue_cents: int) -> int:
    """The machines' tax on a day's gross gaming revenue (R98): 10%, rounded down; a day the
    machines paid out more than they kept owes none (the loss is not carried to another day)."""
    return max(gross_revenue_cents, 0) * MACHINES_TAX_PCT // 100


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

    def large_wins(self) -> tuple[CardWin, ...]:
        """The winning cards paid 15,000 EUR or more (R75.6), to be reported within 30 days of the day."""
        return tuple(w for w in self.wins if w.paid_cents >= LARGE_WIN_CENTS)

    def machines_revenue_cents(self) -> int:
        """The gross gaming revenue of every machine of the day (R98)."""
        return sum(m.gross_revenue_cents for m in self.machines)

    def machines_tax_cents(self) -> int:
        """The machines' tax of the day (R98): 10% of their gross gaming revenue, none on a loss."""
        return machines_tax_cents(self.machines_revenue_cents())

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
