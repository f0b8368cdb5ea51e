"""The hall-annex game (R3.5.b) as pure rules: one traditional game, two rooms, one prize pool.

The main hall's draw emits every ball; each room sells its own paper cards; the prize
pool is the prize rules' share of the *sum* of both rooms' sales
(:func:`protocol.settlement.close_sale`, the hall game's own settlement); a claim is
verified in the room where it is made; every card completing a prize on the earliest
ball either room reports shares it (the R87 ruling), split by
:func:`protocol.settlement.split_prize`.  Each hall pays its own winners; what it owes
its partner is its part of each prize (its share of the sales) less what it paid, and
the split's rest stays with the main hall, which carries it (R88.5).

:class:`JointGame` is the game as one hall knows it, folded from the ``annex_*`` records
(:mod:`protocol.records.annex`); :func:`prize_shares` is the money, the same on both
sides from the same facts.  Nothing here does I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from protocol.settlement import PAPER_STAKE_PCT, Pots, PrizeRules, close_sale, split_prize, tax_cents

PATTERNS = ("line", "bingo")
SELLING, DRAWING, CLOSED = "selling", "drawing", "closed"


@dataclass(frozen=True)
class JointClaim:
    hall_id: str
    pattern: str
    card: str  # series-number, in the hall's own series
    ball_count: int


@dataclass(frozen=True)
class JointPool:
    main_sales_cents: int
    annex_sales_cents: int
    cards: int
    sales_cents: int
    line_cents: int
    bingo_cents: int
    main_line_cents: int
    main_bingo_cents: int

    def amount(self, pattern: str) -> int:
        return self.line_cents if pattern == "line" else self.bingo_cents

    def part(self, pattern: str, hall_is_main: bool) -> int:
        """A hall's part of a prize: its share of the sales, the main hall's rounded down."""
        main = self.main_line_cents if pattern == "line" else self.main_bingo_cents
        return main if hall_is_main else self.amount(pattern) - main


def joint_pool(rules: PrizeRules, main_sales: tuple[int, int], annex_sales: tuple[int, int]) -> JointPool:
    """The pool of the game from both halls' ``(cards, cents)``: the settlement of the sum.

    The joint game takes no carry and feeds no pot: each hall's carries and pots stay
    with its own games.  Each prize is split between the halls by their sales.
    """
    total = main_sales[1] + annex_sales[1]
    figures = close_sale(rules, total, Pots())
    line, bingo = figures.line_cents, figures.bingo_cents
    return JointPool(
        main_sales_cents=main_sales[1], annex_sales_cents=annex_sales[1], cards=main_sales[0] + annex_sales[0],
        sales_cents=total, line_cents=line, bingo_cents=bingo,
        main_line_cents=line * main_sales[1] // total if total else 0,
        main_bingo_cents=bingo * main_sales[1] // total if total else 0,
    )


@dataclass(frozen=True)
class PrizeShare:
    """One prize of the joint game as one hall settles it."""

    pattern: str
    amount_cents: int
    ball_count: int | None  # None: nobody won it
    winners: tuple[tuple[str, str, int], ...]  # (hall, card, cents), the main hall's first
    paid_here_cents: int
    part_here_cents: int
    carry_cents: int  # what the split leaves: the main hall carries it

    def to_json(self) -> dict[str, object]:
        return {"pattern": self.pattern, "amount_cents": self.amount_cents, "ball_count": self.ball_count,
                "winners": [list(w) for w in self.winners], "paid_here_cents": self.paid_here_cents,
                "part_here_cents": self.part_here_cents, "carry_cents": self.carry_cents}


def winners_of(claims: Sequence[JointClaim], pattern: str, main: str) -> tuple[int | None, list[JointClaim]]:
    """The ball a prize was won on (the earliest either room verified) and every card sharing it."""
    of_pattern = [c for c in claims if c.pattern == pattern]
    if not of_pattern:
        return None, []
    ball = min(c.ball_count for c in of_pattern)
    sharing = sorted({c for c in of_pattern if c.ball_count == ball},
                     key=lambda c: (c.hall_id != main, c.hall_id, _card_order(c.card)))
    return ball, sharing


def _card_order(card: str) -> tuple[int, ...]:
    return tuple(int(part) for part in card.split("-"))


def prize_shares(pool: JointPool, claims: Sequence[JointClaim], *, main: str, here: str) -> list[PrizeShare]:
    """Each prize as hall ``here`` settles it: the winners of both rooms, what it pays, its part."""
    shares = []
    for pattern in PATTERNS:
        amount = pool.amount(pattern)
        ball, sharing = winners_of(claims, pattern, main)
        payments = split_prize(amount, [PAPER_STAKE_PCT] * len(sharing)).payments if sharing else ()
        winners = tuple((c.hall_id, c.card, cents) for c, cents in zip(sharing, payments))
        shares.append(PrizeShare(
            pattern=pattern, amount_cents=amount, ball_count=ball, winners=winners,
            paid_here_cents=sum(cents for hall, _, cents in winners if hall == here),
            part_here_cents=pool.part(pattern, here == main),
            carry_cents=amount - sum(payments),  # unwon: the whole prize
        ))
    return shares


def owed_to_partner(shares: Sequence[PrizeShare], *, main: str, here: str) -> int:
    """What hall ``here`` owes its partner: its part of the prizes, less what it paid, less the carry the main keeps.

    The two halls' figures are opposite: what one owes, the other is owed.
    """
    carried = sum(s.carry_cents for s in shares) if here == main else 0
    return sum(s.part_here_cents - s.paid_here_cents for s in shares) - carried


def house_and_tax(rules: PrizeRules, pool: JointPool, *, here_is_main: bool) -> tuple[int, int]:
    """The house's share of this hall's own sales (what its part of the prizes leaves) and the tax on them (R98)."""
    own = pool.main_sales_cents if here_is_main else pool.annex_sales_cents
    parts = sum(pool.part(p, here_is_main) for p in PATTERNS)
    return own - parts, tax_cents(own)


@dataclass
class JointGame:
    """One joint game as a hall knows it, folded from its ``annex_*`` records."""

    game_id: str
    main: str
    annex: str
    price_cents: int
    rules: PrizeRules
    phase: str = SELLING
    sold: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # own series -> [(first, last)]
    sales: dict[str, tuple[int, int]] = field(default_factory=dict)  # hall -> (cards, cents)
    pool: JointPool | None = None
    balls: list[int] = field(default_factory=list)
    claims: list[JointClaim] = field(default_factory=list)
    annex_claims_counted: int | None = None  # set when the main hall closed the game
    paid: bool = False

    def partner(self, here: str) -> str:
        return self.annex if here == self.main else self.main

    def sold_here(self, series: int, number: int) -> bool:
        return any(first <= number <= last for first, last in self.sold.get(series, ()))

    def last_sold(self, series: int) -> int:
        return max((last for _, last in self.sold.get(series, ())), default=0)

    def cards_sold_here(self) -> tuple[int, int]:
        cards = sum(last - first + 1 for ranges in self.sold.values() for first, last in ranges)
        return cards, cards * self.price_cents

    def counted_claims(self) -> list[JointClaim]:
        """The claims the game's settlement counts: all of them, or, once the main hall closed
        the game, the main hall's and the annex's it had received by then."""
        if self.annex_claims_counted is None:
            return list(self.claims)
        mains = [c for c in self.claims if c.hall_id == self.main]
        annexes = [c for c in self.claims if c.hall_id == self.annex][: self.annex_claims_counted]
        return mains + annexes

    def won(self, pattern: str) -> int | None:
        return winners_of(self.claims, pattern, self.main)[0]

    @property
    def bingo_won(self) -> bool:
        return any(c.pattern == "bingo" for c in self.claims)


__all__ = [
    "CLOSED", "DRAWING", "PATTERNS", "SELLING", "JointClaim", "JointGame", "JointPool", "PrizeShare",
    "house_and_tax", "joint_pool", "owed_to_partner", "prize_shares", "winners_of",
]  # fmt: skip
