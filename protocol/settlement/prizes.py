"""A game's prize amounts: the line and bingo at the sale's close, the pots the bingo wins.

* :func:`close_sale` - the close of the sale fixes the figures (R85, R88, R89-R91,
  R98): the collection, what it puts into each pot, the line and bingo with the
  carries of earlier games (R88.5) and any reserve boost (R91.7), the house's share
  and the tax.
* :func:`bingo_pot_prizes` - the pots a bingo wins, in the audit replay's order
  (FORMATS.md section 2, steps 8-11): superbingo or grand superbingo within their
  ball limit (R89), the megabingo's whole fund (R90), the jackpot within its threshold
  and then the reserve's transfer (R91), and on the session's last game the
  superbingo fund (R89).  What a split does not pay stays in its pot.

The pots are paid under :data:`RULING`, the regulation as REGULATION.md reads it now;
:data:`FIRST_RULING` is how they were paid before two rulings changed (R89's last game,
R90's whole fund), kept so that ``bingo-replay/1`` files replay as the days they record
were paid.

The hall server and ``bingo replay`` both call these, so the money the hall moves and
the money the replay recomputes are the same computation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from protocol.settlement.carry import superbingo_fund_to_last_game, superbingo_goes_to_last_game, superbingo_won
from protocol.settlement.pots import Pots, reserve_transfer, sales_contributions
from protocol.settlement.rules import LimitExceeded, PrizeRules
from protocol.settlement.split import Split, split_prize
from protocol.settlement.tax import house_share, tax_cents

#: The pot prizes a bingo may win, in the order they are paid and reported.
POT_PRIZES = ("superbingo", "grand_superbingo", "megabingo", "jackpot", "superbingo_last_game")
#: The level of :class:`Pots` each pot prize is paid from.
PRIZE_FUNDS = {
    "superbingo": "superbingo",
    "grand_superbingo": "grand_superbingo",
    "megabingo": "megabingo",
    "jackpot": "jackpot_accumulated",
    "superbingo_last_game": "superbingo",
}


@dataclass(frozen=True)
class SaleFigures:
    """What the close of a game's sale fixes, in cents."""

    sales_cents: int
    contributions: Mapping[str, int]  # level of Pots -> cents the sales put in (0 included)
    line_cents: int  # the line prize: its share, the carry and any boost
    bingo_cents: int
    carry_line_cents: int  # the carries taken from earlier games (R88.5)
    carry_bingo_cents: int
    top_up_cents: int  # what the house adds to reach the prizes' fixed sums (R88.3)
    house_cents: int
    tax_cents: int

    def pots_after(self, pots: Pots) -> Pots:
        """The levels once the contributions are in and the carries are spent on the prizes."""
        return pots.plus(self.contributions).replace(carry_line=0, carry_bingo=0)


def close_sale(
    rules: PrizeRules, sales_cents: int, pots: Pots, boost_line: int = 0, boost_bingo: int = 0
) -> SaleFigures:
    """The figures of a game that sold ``sales_cents`` with the pots at ``pots`` before its close.

    A reserve boost (R91.7) is checked by the caller (:func:`protocol.settlement.pots.check_reserve_boost`)
    and only added here.
    """
    return SaleFigures(
        sales_cents=sales_cents,
        contributions=sales_contributions(rules, sales_cents, pots.jackpot_accumulated),
        line_cents=rules.line_amount(sales_cents) + pots.carry_line + boost_line,
        bingo_cents=rules.bingo_amount(sales_cents) + pots.carry_bingo + boost_bingo,
        carry_line_cents=pots.carry_line,
        carry_bingo_cents=pots.carry_bingo,
        top_up_cents=rules.house_top_up(sales_cents),
        house_cents=house_share(rules, sales_cents),
        tax_cents=tax_cents(sales_cents),
    )


@dataclass(frozen=True)
class PotRuling:
    """Which reading of R89 and R90 a game's pots are paid under.

    ``superbingo_every_session``: the session's last game takes the superbingo fund
    whenever its own superbingo did not pay it, so that the fund never outlives the
    session (R89 ruling); False: only when the session's latest superbingo game was not
    won.  ``whole_megabingo``: the megabingo pays its whole fund as it stands at the
    game, the announced amount being a minimum (R90, changed); False: it pays the
    announced amount.
    """

    superbingo_every_session: bool = True
    whole_megabingo: bool = True


#: The pots as the regulation is read now: what the hall pays and ``bingo-replay/2`` replays.
RULING = PotRuling()
#: The first reading, which ``bingo-replay/1`` files were written under.
FIRST_RULING = PotRuling(superbingo_every_session=False, whole_megabingo=False)


@dataclass(frozen=True)
class PotsInPlay:
    """The pots a game puts in play (R89-R91); None: not in play.

    ``megabingo_cents`` is the amount announced for the megabingo: under :data:`RULING`
    the least it pays (the fund at the announcement), under :data:`FIRST_RULING` what
    it pays.
    """

    superbingo_limit: int | None = None
    grand_superbingo_limit: int | None = None
    jackpot_threshold: int | None = None
    megabingo_cents: int | None = None


@dataclass(frozen=True)
class PotPrize:
    """A pot won by the bingo: its name, the level it is paid from, and the split."""

    prize: str
    fund: str  # a level of Pots
    split: Split


@dataclass(frozen=True)
class BingoPots:
    """What a bingo wins from the pots, and the levels after."""

    prizes: tuple[PotPrize, ...]
    reserve_transfer_cents: int  # reserve -> accumulated jackpot after a jackpot win (R91)
    pots: Pots
    superbingo_won: bool | None  # this game's superbingo, None when not in play


def bingo_pot_prizes(
    in_play: PotsInPlay,
    bingo_ball: int,
    stake_pcts: Sequence[int],
    pots: Pots,
    *,
    last_game: bool,
    earlier_superbingo_won: bool | None = None,
    ruling: PotRuling = RULING,
) -> BingoPots:
    """The pots won by a bingo on ball ``bingo_ball`` by cards staked at ``stake_pcts``.

    ``pots`` are the levels when the bingo is paid; ``last_game`` says whether the game
    is the session's last (R93.15), and ``earlier_superbingo_won`` the outcome of the
    session's latest superbingo game before this one (None: none yet; only
    :data:`FIRST_RULING` asks it).  Raises :class:`LimitExceeded` for a megabingo fund
    below the amount announced (R90).
    """
    prizes: list[PotPrize] = []

    def win(prize: str, amount: int) -> Split:
        split = split_prize(amount, stake_pcts)
        prizes.append(PotPrize(prize, PRIZE_FUNDS[prize], split))
        return split

    won = superbingo_won(in_play.superbingo_limit, bingo_ball)
    if won:
        pots = pots.replace(superbingo=win("superbingo", pots.superbingo).carry)
    if superbingo_won(in_play.grand_superbingo_limit, bingo_ball):
        pots = pots.replace(grand_superbingo=win("grand_superbingo", pots.grand_superbingo).carry)
    if in_play.megabingo_cents is not None:
        if in_play.megabingo_cents > pots.megabingo:
            raise LimitExceeded(
                f"the announced {in_play.megabingo_cents} cents exceed the megabingo "
                f"fund's {pots.megabingo} cents (R90)"
            )
        # The whole fund as it stands at the game (R90); the first ruling paid the amount announced.
        amount = pots.megabingo if ruling.whole_megabingo else in_play.megabingo_cents
        pots = pots.replace(megabingo=pots.megabingo - win("megabingo", amount).paid)
    moved = 0
    if in_play.jackpot_threshold is not None and bingo_ball <= in_play.jackpot_threshold:
        stayed = win("jackpot", pots.jackpot_accumulated).carry
        # Then the reserve refills the accumulated jackpot (R91).
        moved = reserve_transfer(pots.jackpot_reserve, stayed)
        pots = pots.replace(jackpot_accumulated=stayed + moved, jackpot_reserve=pots.jackpot_reserve - moved)
    if ruling.superbingo_every_session:
        to_last_game = superbingo_fund_to_last_game(last_game, won, pots.superbingo)
    else:
        to_last_game = superbingo_goes_to_last_game(last_game, earlier_superbingo_won if won is None else won)
    if to_last_game:
        pots = pots.replace(superbingo=win("superbingo_last_game", pots.superbingo).carry)
    return BingoPots(tuple(prizes), moved, pots, won)
