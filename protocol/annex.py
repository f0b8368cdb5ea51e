"""The hall-annex game (R3.5.b) as pure rules: one traditional game, two rooms, one prize pool.

The main hall's draw emits every ball; each room sells its own paper cards and, on its
own terminals, virtual cards; the prize pool is the prize rules' share of the *sum* of
both rooms' sales (:func:`protocol.settlement.close_sale`, the hall game's own
settlement); a paper card's claim is verified in the room where it is made, and a
virtual card that completes a pattern is found by its room at that ball (R93.10) and
counts as a verified claim; every card completing a prize on the earliest ball either
room reports shares it (the R87 ruling), split by :func:`protocol.settlement.split_prize`
at each card's stake (R88.2, R88.4).  Each hall pays its own winners; what it owes its
partner is its part of each prize (its share of the sales) less what it paid, and the
split's rest stays with the main hall, which carries it (R88.5).

No two identical cards in one game (R82.6): each hall declares to its partner the
fingerprints (:func:`protocol.cards.fingerprints`) of every card it may sell in a joint
game, its paper card sets and its virtual library (:func:`declaration_parts`), and a
game is not played on cards that clash with the partner's (:func:`find_clash`).

:class:`JointGame` is the game as one hall knows it, folded from the ``annex_*`` records
(:mod:`protocol.records.annex`); :func:`prize_shares` is the money, the same on both
sides from the same facts, and the audit replay's (:mod:`protocol.replay`).  Nothing
here does I/O.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from protocol.settlement import PAPER_STAKE_PCT, PAYOUT_FLOOR_BP, Pots, PrizeRules, close_sale, split_prize, tax_cents

PATTERNS = ("line", "bingo")
SELLING, DRAWING, CLOSED, NOT_PLAYED = "selling", "drawing", "closed", "not_played"


@dataclass(frozen=True)
class JointClaim:
    """A card verified as winning ``pattern`` on ball ``ball_count`` in hall ``hall_id``'s room.

    A virtual card names the ``terminal`` it was bought on and its ``label`` as its
    player's screen shows it (``V1-17``); a paper card stakes its whole price.
    """

    hall_id: str
    pattern: str
    card: str  # series-number, in the hall's own series
    ball_count: int
    stake_pct: int = PAPER_STAKE_PCT
    terminal: str | None = None
    label: str | None = None

    @property
    def virtual(self) -> bool:
        return self.terminal is not None

    @property
    def shown(self) -> str:
        """The card as boards and terminals name it: the label a virtual card shows, else series-number."""
        return self.label or self.card


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


def joint_rules_refusal(rules: PrizeRules) -> str | None:
    """Why a joint game cannot be played for these prize rules' line and bingo, if it cannot.

    The joint game pays the line and the bingo only (no pot, no fixed sum), so their
    shares alone must give the players at least 70% of the sales (R88.1).
    """
    shares = rules.line_bp + rules.bingo_bp
    if shares < PAYOUT_FLOOR_BP:
        return (f"the line and the bingo take {shares} basis points of the sales in this hall's [prizes]; a joint game "
                f"pays them alone, so they must take at least {PAYOUT_FLOOR_BP} (70%, R88.1)")
    return None


def joint_pool(rules: PrizeRules, main_sales: tuple[int, int], annex_sales: tuple[int, int]) -> JointPool:
    """The pool of the game from both halls' ``(cards, cents)``: the settlement of the sum.

    The joint game takes no carry and feeds no pot: each hall's carries and pots stay
    with its own games.  Each prize is split between the halls by their sales.  Only
    the line's and the bingo's shares count (``rules.line_bp``, ``rules.bingo_bp``): a
    fixed sum is a house's top-up of its own game's prize.
    """
    rules = PrizeRules(line_bp=rules.line_bp, bingo_bp=rules.bingo_bp)
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


def _card_order(card: str) -> tuple[tuple[int, int | str], ...]:
    """``1001-9`` before ``1001-10``: numbers by value, any other part (a replay's card id) by its text."""
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in card.split("-"))


def card_ref(card: str) -> tuple[int, int]:
    """``(series, number)`` of a card named ``series-number``."""
    series, number = card.split("-")
    return int(series), int(number)


def prize_shares(pool: JointPool, claims: Sequence[JointClaim], *, main: str, here: str) -> list[PrizeShare]:
    """Each prize as hall ``here`` settles it: the winners of both rooms, what it pays, its part."""
    shares = []
    for pattern in PATTERNS:
        amount = pool.amount(pattern)
        ball, sharing = winners_of(claims, pattern, main)
        payments = split_prize(amount, [c.stake_pct for c in sharing]).payments if sharing else ()
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


@dataclass(frozen=True)
class JointVirtualCard:
    """A virtual card this hall's terminals sold in a joint game: whose, where, at what stake."""

    number: int
    account: str
    terminal: str
    stake_pct: int
    stake_cents: int


@dataclass
class JointGame:
    """One joint game as a hall knows it, folded from its ``annex_*`` records."""

    game_id: str
    main: str
    annex: str
    price_cents: int
    rules: PrizeRules
    phase: str = SELLING
    #: Why this room sells nothing in the game: its cards clash with the main hall's (R82.6).
    clash: str | None = None
    sold: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # own series -> [(first, last)]
    drawers: dict[str, int] = field(default_factory=dict)  # seller -> what their paper cards took here
    virtual: dict[int, JointVirtualCard] = field(default_factory=dict)  # own virtual cards by number
    sales: dict[str, tuple[int, int]] = field(default_factory=dict)  # hall -> (cards, cents)
    pool: JointPool | None = None
    balls: list[int] = field(default_factory=list)
    claims: list[JointClaim] = field(default_factory=list)
    annex_claims_counted: int | None = None  # set when the main hall closed the game
    paid: bool = False
    #: Force majeure (R96.2): why the main hall declared the game not played; its stakes went back.
    not_played: str | None = None
    #: This room's virtual cards refunded with a failed terminal (R96.3), out of the game.
    refunded: dict[int, JointVirtualCard] = field(default_factory=dict)

    @property
    def over(self) -> bool:
        """Nothing more happens in the game in this room: its prizes are paid, or it was not played."""
        return self.paid or self.not_played is not None

    def partner(self, here: str) -> str:
        return self.annex if here == self.main else self.main

    def sold_here(self, series: int, number: int) -> bool:
        return any(first <= number <= last for first, last in self.sold.get(series, ()))

    def last_sold(self, series: int) -> int:
        return max((last for _, last in self.sold.get(series, ())), default=0)

    def cards_sold_here(self) -> tuple[int, int]:
        """This room's cards and takings: its paper cards at the price, its virtual cards at their stakes."""
        paper = sum(last - first + 1 for ranges in self.sold.values() for first, last in ranges)
        virtual = sum(card.stake_cents for card in self.virtual.values())
        return paper + len(self.virtual), paper * self.price_cents + virtual

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

    def won_here(self, pattern: str, here: str) -> tuple[int, frozenset[tuple[int, int]]] | None:
        """The ball ``pattern`` was won on as far as this hall knows, and the cards of ``here`` sharing it."""
        ball = self.won(pattern)
        if ball is None:
            return None
        return ball, frozenset(card_ref(c.card) for c in self.claims
                               if c.hall_id == here and c.pattern == pattern and c.ball_count == ball)

    @property
    def bingo_won(self) -> bool:
        return any(c.pattern == "bingo" for c in self.claims)


# --- No two identical cards in one game (R82.6) ---------------------------------------------

#: Bytes of one card's fingerprint on the wire: its 90-bit number set, the low word's 8 bytes
#: then the high word's 4 (little-endian), so a part's text is 16 base64 characters a card.
PRINT_BYTES = 12
#: Cards in one part of a declaration (``prints`` of 6,000 characters).
PRINTS_PER_PART = 375


@dataclass(frozen=True)
class CardRun:
    """Cards a hall may sell in a joint game: ``label`` names where they come from (``set hall``,
    ``library V1``); card ``first + i`` has fingerprint ``prints[i]`` (an ``(n, 2)`` uint64 array)."""

    label: str
    first: int
    prints: np.ndarray


def encode_prints(prints: np.ndarray) -> str:
    """Fingerprints (``(n, 2)`` uint64, :func:`protocol.cards.fingerprints`) as base64 text, 16 characters a card."""
    values = np.asarray(prints, dtype="<u8").reshape(-1, 2)
    packed = np.empty((len(values), PRINT_BYTES), dtype=np.uint8)
    packed[:, :8] = np.ascontiguousarray(values[:, 0]).view(np.uint8).reshape(-1, 8)
    packed[:, 8:] = values[:, 1].astype("<u4").view(np.uint8).reshape(-1, 4)
    return base64.b64encode(packed.tobytes()).decode("ascii")


def decode_prints(text: str) -> np.ndarray:
    """The fingerprints :func:`encode_prints` wrote; :class:`ValueError` for text that is not such."""
    raw = base64.b64decode(text.encode("ascii"), validate=True)
    if len(raw) % PRINT_BYTES:
        raise ValueError(f"{len(raw)} bytes are not whole fingerprints of {PRINT_BYTES} bytes")
    packed = np.frombuffer(raw, dtype=np.uint8).reshape(-1, PRINT_BYTES)
    out = np.empty((len(packed), 2), dtype=np.uint64)
    out[:, 0] = packed[:, :8].copy().view("<u8").reshape(-1)
    out[:, 1] = packed[:, 8:].copy().view("<u4").reshape(-1).astype(np.uint64)
    return out


def declaration_digest(runs: Sequence[CardRun]) -> str:
    """SHA-256 of a hall's whole declaration (every run's label, first card and fingerprints), hex."""
    digest = hashlib.sha256()
    for run in runs:
        digest.update(f"{run.label}\0{run.first}\0{len(run.prints)}\0".encode())
        digest.update(encode_prints(run.prints).encode("ascii"))
    return digest.hexdigest()


def declaration_parts(runs: Sequence[CardRun]) -> list[dict[str, object]]:
    """A hall's declaration as parts of at most :data:`PRINTS_PER_PART` cards, each of one run.

    Each part is ``{digest, part, parts, label, first, cards, prints}``; the parts of one
    declaration share its digest, so the partner knows when it holds them all.
    """
    digest = declaration_digest(runs)
    chunks: list[tuple[str, int, np.ndarray]] = []
    for run in runs:
        for start in range(0, len(run.prints), PRINTS_PER_PART):
            chunks.append((run.label, run.first + start, run.prints[start:start + PRINTS_PER_PART]))
    if not chunks:
        chunks.append(("none", 1, np.empty((0, 2), dtype=np.uint64)))  # a hall with nothing to sell says so
    return [
        {"digest": digest, "part": index, "parts": len(chunks), "label": label, "first": first,
         "cards": len(prints), "prints": encode_prints(prints)}
        for index, (label, first, prints) in enumerate(chunks, start=1)
    ]


@dataclass(frozen=True)
class Clash:
    """A card this hall may sell that the partner may sell too: which card on each side."""

    own: tuple[str, int]  # (run label, card number)
    partner: tuple[str, int]

    def message(self, partner: str) -> str:
        (own_label, own_card), (their_label, their_card) = self.own, self.partner
        return (f"card {own_card} of this hall's {own_label} has the same numbers as card {their_card} of {partner}'s "
                f"{their_label}: no two identical cards in one game (R82.6); give one of the halls other cards")


def find_clash(own: Sequence[CardRun], partner: Sequence[CardRun]) -> Clash | None:
    """The first card of ``own`` (in order) whose fingerprint a card of ``partner`` has, or None."""
    theirs: dict[tuple[int, int], tuple[str, int]] = {}
    for run in partner:
        for index, (low, high) in enumerate(np.asarray(run.prints, dtype=np.uint64).tolist()):
            theirs.setdefault((low, high), (run.label, run.first + index))
    if not theirs:
        return None
    for run in own:
        for index, (low, high) in enumerate(np.asarray(run.prints, dtype=np.uint64).tolist()):
            found = theirs.get((low, high))
            if found is not None:
                return Clash((run.label, run.first + index), found)
    return None


__all__ = [
    "CLOSED", "DRAWING", "NOT_PLAYED", "PATTERNS", "PRINTS_PER_PART", "PRINT_BYTES", "SELLING", "CardRun", "Clash", "JointClaim",
    "JointGame", "JointPool", "JointVirtualCard", "PrizeShare", "card_ref", "declaration_digest", "declaration_parts",
    "decode_prints",
    "encode_prints", "find_clash", "house_and_tax", "joint_pool", "joint_rules_refusal", "owed_to_partner",
    "prize_shares", "winners_of",
]  # fmt: skip
