"""The money of a network game, projected from its events, in integer cents.

The central server holds no player's credit: each hall does (R93.2-4).  What the
central server records is, per hall and per player of that hall, what was staked
(purchases confirmed: the hall captured those holds), what was returned (stakes
refunded, R96.2, R96.3) and what was won (prizes the hall credits, R85.9).  Those per
hall totals add up exactly to the game's, and the game's money is conserved:

    sales + carries in = refunds + prizes + carries out + house

where *house* is what the operator keeps (negative when it pays more than it took).
:func:`check_conservation` works the house's part out independently, from the prize
rules, and refuses a game whose events disagree:

* a game played to its close: ``house = house_share - refunds paid by the house``
  (the sales' part that goes to no prize, less the refunds of failed terminals made
  after the close, when the prizes announced stood);
* a game not played (R96.2): every stake comes back, so ``house = -(the sales' part of
  each prize already won)``: the house bears the prizes that stood.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

from central_server.domain.errors import CentralError
from protocol.records.central import (
    CentralCardWon,
    CentralGameClosed,
    CentralGameNotPlayed,
    CentralGameScheduled,
    CentralPrizeWon,
    CentralPurchaseConfirmed,
    CentralRecord,
    CentralSaleClosed,
    CentralStakeReturned,
)
from protocol.settlement import share_of_sales


class MoneyError(CentralError):
    """A game whose money does not add up; the message says where."""

    code = "internal_error"


@dataclass
class Totals:
    """Stakes collected, returned and won, in cents."""

    sales_cents: int = 0
    refunds_cents: int = 0
    prizes_cents: int = 0

    @property
    def net_cents(self) -> int:
        """What the hall (or player) paid in net: stakes kept less prizes won."""
        return self.sales_cents - self.refunds_cents - self.prizes_cents

    def add(self, other: "Totals") -> None:
        self.sales_cents += other.sales_cents
        self.refunds_cents += other.refunds_cents
        self.prizes_cents += other.prizes_cents


@dataclass
class GameMoney:
    """A game's money: per hall, per player of each hall, and for the game."""

    game_id: str = ""
    halls: dict[str, Totals] = field(default_factory=dict)
    players: dict[tuple[str, str], Totals] = field(default_factory=dict)
    carry_in_cents: dict[str, int] = field(default_factory=dict)
    basis_points: dict[str, int] = field(default_factory=dict)
    carry_out_cents: dict[str, int] | None = None
    sale: CentralSaleClosed | None = None
    refunds_paid_by: dict[str, int] = field(default_factory=lambda: {"stakes": 0, "house": 0})
    prizes: dict[str, CentralPrizeWon] = field(default_factory=dict)
    paid_per_prize: dict[str, int] = field(default_factory=dict)
    not_played: bool = False
    sales_at_close_cents: int | None = None  # purchases less the refunds made before the close

    @property
    def totals(self) -> Totals:
        """The sum over every hall."""
        total = Totals()
        for hall in self.halls.values():
            total.add(hall)
        return total

    @property
    def ended(self) -> bool:
        return self.carry_out_cents is not None

    @property
    def house_cents(self) -> int:
        """Sales + carries in - refunds - prizes - carries out, once the game has ended."""
        if self.carry_out_cents is None:
            raise MoneyError(f"game {self.game_id} has not ended; its carries are not known yet")
        t = self.totals
        return (
            t.sales_cents + sum(self.carry_in_cents.values())
            - t.refunds_cents - t.prizes_cents - sum(self.carry_out_cents.values())
        )  # fmt: skip


def _charge(money: GameMoney, hall: str, player: str) -> tuple[Totals, Totals]:
    return money.halls.setdefault(hall, Totals()), money.players.setdefault((hall, player), Totals())


def money_of(events: Iterable[CentralRecord]) -> GameMoney:
    """The money of the game whose journal is ``events``."""
    money = GameMoney()
    for event in events:
        if isinstance(event, CentralGameScheduled):
            money.game_id = event.game_id
            money.halls = {hall: Totals() for hall in event.config["halls"]}
            money.carry_in_cents = {
                p["pattern"]["name"]: p.get("carry_in_cents", 0) for p in event.config["prizes"]
            }
            money.basis_points = {p["pattern"]["name"]: p["basis_points"] for p in event.config["prizes"]}
        elif isinstance(event, CentralPurchaseConfirmed):
            for totals in _charge(money, event.hall_id, event.player_ref):
                totals.sales_cents += event.amount_cents
        elif isinstance(event, CentralStakeReturned):
            for totals in _charge(money, event.hall_id, event.player_ref):
                totals.refunds_cents += event.amount_cents
            money.refunds_paid_by[event.paid_by] += event.amount_cents
        elif isinstance(event, CentralSaleClosed):
            money.sale = event
            t = money.totals
            money.sales_at_close_cents = t.sales_cents - t.refunds_cents
        elif isinstance(event, CentralPrizeWon):
            money.prizes[event.pattern] = event
        elif isinstance(event, CentralCardWon):
            for totals in _charge(money, event.hall_id, event.player_ref):
                totals.prizes_cents += event.payment_cents
            money.paid_per_prize[event.pattern] = money.paid_per_prize.get(event.pattern, 0) + event.payment_cents
        elif isinstance(event, (CentralGameClosed, CentralGameNotPlayed)):
            money.carry_out_cents = dict(event.carries)
            money.not_played = isinstance(event, CentralGameNotPlayed)
    return money


def expected_house_cents(money: GameMoney) -> int:
    """The house's part of an ended game, worked out from the prize rules alone."""
    won_share = 0
    for name, prize in money.prizes.items():
        won_share += prize.amount_cents - money.carry_in_cents[name]
    if money.not_played:
        return -won_share
    if money.sale is None:
        raise MoneyError(f"game {money.game_id} closed without a sale")
    # Before the close a refund leaves the sales; after it the house pays it.
    house_refunds = money.refunds_paid_by["house"]
    return money.sale.house_share_cents - house_refunds


def check_conservation(money: GameMoney) -> None:
    """Raise :class:`MoneyError` unless every cent of the game is accounted for."""
    game = money.game_id
    players = Totals()
    for totals in money.players.values():
        players.add(totals)
    if players != money.totals:
        raise MoneyError(f"game {game}: the players' totals {players} differ from the halls' {money.totals}")
    for hall, totals in money.halls.items():
        if totals.refunds_cents > totals.sales_cents:
            raise MoneyError(f"game {game}: hall {hall} was refunded more than it staked")
    for name, prize in money.prizes.items():
        paid = money.paid_per_prize.get(name, 0)
        if paid != prize.paid_cents or prize.paid_cents + prize.carry_cents != prize.amount_cents:
            raise MoneyError(
                f"game {game}: the {name} pays {paid} of {prize.amount_cents} cents and carries "
                f"{prize.carry_cents}; they do not add up"
            )
    if money.sale is not None:
        sale = money.sale
        if sale.sales_cents != money.sales_at_close_cents:
            raise MoneyError(
                f"game {game}: the sale closed on {sale.sales_cents} cents, but the purchases less "
                f"the refunds before the close make {money.sales_at_close_cents}"
            )
        for name, bp in money.basis_points.items():
            due = share_of_sales(sale.sales_cents, bp) + money.carry_in_cents[name]
            if sale.prize_amounts.get(name) != due:
                raise MoneyError(
                    f"game {game}: the {name} is {sale.prize_amounts.get(name)} cents; {bp} basis points of "
                    f"{sale.sales_cents} plus its carry make {due}"
                )
        shares = sum(amount - money.carry_in_cents[name] for name, amount in sale.prize_amounts.items())
        if sale.house_share_cents != sale.sales_cents - shares:
            raise MoneyError(f"game {game}: the prizes' shares and the house's do not make the sales")
    if money.ended:
        expected = expected_house_cents(money)
        if money.house_cents != expected:
            raise MoneyError(
                f"game {game}: the house's part is {money.house_cents} cents by the accounts and "
                f"{expected} cents by the rules"
            )


__all__ = [
    "GameMoney",
    "MoneyError",
    "Totals",
    "check_conservation",
    "expected_house_cents",
    "money_of",
]
