"""The pots and carries between games, and how sales and the operator fund them (R89-R91).

:class:`Pots` holds every amount carried from one game to the next.  A game's sales
feed the superbingo (2%-5%), the megabingo (1%) and the jackpot (10%, of which 70% to
the accumulated part up to its cap and the rest to the reserve), whether or not the
pot is in play (:func:`sales_contributions`).  The operator may pay into the
superbingo, the grand superbingo and the jackpot within a daily and a monthly limit
(:func:`operator_contribution`).  After a jackpot win the reserve refills the
accumulated part (:func:`reserve_transfer`); a session may boost its prizes from the
reserve within 30% of it (:func:`check_reserve_boost`).

A limit that would be exceeded raises :class:`LimitExceeded`; nothing is silently
capped.  Only the jackpot's 1,500,000-cent cap on the accumulated part *diverts*
money (the excess goes to the reserve), because the regulation says so (R91).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Mapping

from protocol.settlement.rules import (
    JACKPOT_BP,
    MEGABINGO_BP,
    LimitExceeded,
    PrizeError,
    PrizeRules,
    check_cents,
    share_of_sales,
)

JACKPOT_ACCUMULATED_PCT = 70  # R91: of the 10%, 70% to the accumulated jackpot
JACKPOT_CAP = 1_500_000  # R91: the accumulated jackpot never exceeds 15,000 EUR
RESERVE_TRANSFER_PCT = 70  # R91: after a win, up to 70% of the reserve moves up
RESERVE_BOOST_PCT = 30  # R91.7: a session may add 30% of the reserve to prizes
GRAND_SUPERBINGO_CAP = 400_000  # R89: at most 4,000 EUR
OPERATOR_SUPERBINGO_DAILY_LIMIT = 300_000  # R89.5: superbingo + grand superbingo, per day
OPERATOR_JACKPOT_MONTHLY_LIMIT = 1_500_000  # R91.9: per calendar month
#: Pots an operator may pay into (R89.5, R91.9); the megabingo is funded by sales only.
OPERATOR_POTS = ("superbingo", "grand_superbingo", "jackpot")

#: The dedicated bank account the jackpot's money is deposited into every day (R91.11).
JACKPOT_BANK_ACCOUNT = "bank:jackpot"

#: The ledger account of each level of :class:`Pots` (protocol/ledger.py's scheme).
POT_ACCOUNTS = {
    "carry_line": "carry:line",
    "carry_bingo": "carry:bingo",
    "superbingo": "pot:superbingo",
    "grand_superbingo": "pot:grand_superbingo",
    "megabingo": "pot:megabingo",
    "jackpot_accumulated": "pot:jackpot_accumulated",
    "jackpot_reserve": "pot:jackpot_reserve",
}


@dataclass(frozen=True)
class Pots:
    """Every amount carried from one game to the next, in cents."""

    carry_line: int = 0
    carry_bingo: int = 0
    superbingo: int = 0
    grand_superbingo: int = 0
    megabingo: int = 0
    jackpot_accumulated: int = 0
    jackpot_reserve: int = 0

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            check_cents(field.name.replace("_", " "), getattr(self, field.name))
        if self.jackpot_accumulated > JACKPOT_CAP:
            raise LimitExceeded(
                f"the accumulated jackpot is at most {JACKPOT_CAP} cents (R91), "
                f"not {self.jackpot_accumulated}"
            )
        if self.grand_superbingo > GRAND_SUPERBINGO_CAP:
            raise LimitExceeded(
                f"the grand superbingo fund is at most {GRAND_SUPERBINGO_CAP} cents (R89), "
                f"not {self.grand_superbingo}"
            )

    @classmethod
    def from_accounts(cls, balances: Mapping[str, int]) -> "Pots":
        """The levels as the ledger's carry and pot accounts (:data:`POT_ACCOUNTS`) hold them."""
        return cls(**{name: balances.get(account, 0) for name, account in POT_ACCOUNTS.items()})

    @property
    def total(self) -> int:
        return sum(getattr(self, field.name) for field in dataclasses.fields(self))

    def replace(self, **changes: int) -> "Pots":
        return dataclasses.replace(self, **changes)

    def plus(self, amounts: Mapping[str, int]) -> "Pots":
        """These levels with ``amounts`` (level name -> cents) added."""
        return self.replace(**{name: getattr(self, name) + cents for name, cents in amounts.items()})


# --- Funding from sales ------------------------------------------------------------


def superbingo_contribution(sales_cents: int, superbingo_bp: int) -> int:
    """The superbingo fund's share of a game's sales (R89: 2%-5%)."""
    return share_of_sales(sales_cents, superbingo_bp)


def megabingo_contribution(sales_cents: int) -> int:
    """The megabingo fund's share of a game's sales (R90: 1%)."""
    return share_of_sales(sales_cents, MEGABINGO_BP)


def jackpot_contribution(sales_cents: int) -> int:
    """The jackpot's share of a game's sales (R91: 10%), split by :func:`jackpot_fed`."""
    return share_of_sales(sales_cents, JACKPOT_BP)


@dataclass(frozen=True)
class JackpotSplit:
    """How an amount entering the jackpot divides between accumulated and reserve."""

    to_accumulated: int
    to_reserve: int


def jackpot_fed(amount: int, accumulated: int, accumulated_pct: int = 100) -> JackpotSplit:
    """Feed ``amount`` into the jackpot whose accumulated part stands at ``accumulated``.

    ``accumulated_pct`` of the amount is meant for the accumulated part (70 for the
    10% of sales, 100 for an operator contribution); it takes what fits under
    :data:`JACKPOT_CAP` and the reserve takes everything else (R91).
    """
    check_cents("a jackpot amount", amount)
    meant = amount * accumulated_pct // 100
    taken = min(meant, JACKPOT_CAP - accumulated)
    return JackpotSplit(to_accumulated=taken, to_reserve=amount - taken)


def jackpot_sales_share(sales_cents: int, accumulated: int) -> JackpotSplit:
    """The 10% of sales: 70% to the accumulated part (up to the cap), the rest to reserve."""
    return jackpot_fed(jackpot_contribution(sales_cents), accumulated, JACKPOT_ACCUMULATED_PCT)


def sales_contributions(rules: PrizeRules, sales_cents: int, accumulated: int) -> dict[str, int]:
    """What a game's sales put into each pot (level name -> cents), in play or not (R89-R91).

    ``accumulated`` is the accumulated jackpot before the game's share enters it.
    Every pot the rules fund is named, at 0 cents too.
    """
    contributions = {"superbingo": superbingo_contribution(sales_cents, rules.superbingo_bp)}
    if rules.megabingo:
        contributions["megabingo"] = megabingo_contribution(sales_cents)
    if rules.jackpot:
        share = jackpot_sales_share(sales_cents, accumulated)
        contributions["jackpot_accumulated"] = share.to_accumulated
        contributions["jackpot_reserve"] = share.to_reserve
    return contributions


# --- The operator's contributions ----------------------------------------------------


def check_operator_superbingo(contributed_today: int, amount: int) -> int:
    """Today's operator superbingo + grand superbingo total after ``amount`` (R89.5)."""
    check_cents("an operator contribution", amount)
    total = contributed_today + amount
    if total > OPERATOR_SUPERBINGO_DAILY_LIMIT:
        raise LimitExceeded(
            f"operator contributions to the superbingo and grand superbingo would total "
            f"{total} cents today, above the {OPERATOR_SUPERBINGO_DAILY_LIMIT} a day (R89.5)"
        )
    return total


def check_grand_superbingo_fund(fund: int, amount: int) -> int:
    """The grand superbingo fund after an operator contribution of ``amount`` (R89)."""
    check_cents("an operator contribution", amount)
    if fund + amount > GRAND_SUPERBINGO_CAP:
        raise LimitExceeded(
            f"the grand superbingo fund would reach {fund + amount} cents, above its "
            f"{GRAND_SUPERBINGO_CAP} cap (R89)"
        )
    return fund + amount


def check_operator_jackpot(contributed_this_month: int, amount: int) -> int:
    """This calendar month's operator jackpot contributions after ``amount`` (R91.9)."""
    check_cents("an operator contribution", amount)
    total = contributed_this_month + amount
    if total > OPERATOR_JACKPOT_MONTHLY_LIMIT:
        raise LimitExceeded(
            f"operator jackpot contributions would total {total} cents this month, above "
            f"the {OPERATOR_JACKPOT_MONTHLY_LIMIT} a calendar month (R91.9)"
        )
    return total


@dataclass(frozen=True)
class OperatorContribution:
    """An operator contribution checked: where it goes and the limits' new totals."""

    credits: Mapping[str, int]  # level name -> cents
    superbingo_today: int  # superbingo + grand superbingo contributed this day (R89.5)
    jackpot_this_month: int  # jackpot contributed this calendar month (R91.9)


def operator_contribution(
    pot: str, amount: int, pots: Pots, superbingo_today: int, jackpot_this_month: int
) -> OperatorContribution:
    """The operator pays ``amount`` into ``pot`` (one of :data:`OPERATOR_POTS`), within the limits.

    Into the superbingo or the grand superbingo: within the day's 300,000 for the two
    together (R89.5), and the grand superbingo fund within its cap (R89).  Into the
    jackpot: within the calendar month's 1,500,000 (R91.9); the accumulated part takes
    what fits under its cap, the reserve the rest (R91).
    """
    if pot not in OPERATOR_POTS:
        raise PrizeError(f"the operator pays into {', '.join(OPERATOR_POTS)}, not {pot!r}")
    if pot == "jackpot":
        month = check_operator_jackpot(jackpot_this_month, amount)
        split = jackpot_fed(amount, pots.jackpot_accumulated)
        credits = {"jackpot_accumulated": split.to_accumulated, "jackpot_reserve": split.to_reserve}
        return OperatorContribution({k: v for k, v in credits.items() if v}, superbingo_today, month)
    today = check_operator_superbingo(superbingo_today, amount)
    if pot == "grand_superbingo":
        check_grand_superbingo_fund(pots.grand_superbingo, amount)
    return OperatorContribution({pot: amount} if amount else {}, today, jackpot_this_month)


# --- The jackpot's reserve -----------------------------------------------------------


def reserve_transfer(reserve: int, accumulated: int) -> int:
    """What moves from the reserve to the accumulated jackpot after a jackpot win (R91)."""
    return min(reserve * RESERVE_TRANSFER_PCT // 100, JACKPOT_CAP - accumulated)


def jackpot_funds(pots: Pots) -> int:
    """Everything the jackpot holds: its accumulated part and its reserve (R91)."""
    return pots.jackpot_accumulated + pots.jackpot_reserve


def jackpot_deposit_due(pots: Pots, bank_cents: int) -> int:
    """What must still be deposited into the jackpot's bank account (R91.11): the funds it does not cover."""
    check_cents("the jackpot's bank balance", bank_cents)
    return max(0, jackpot_funds(pots) - bank_cents)


def jackpot_bank_surplus(pots: Pots, bank_cents: int) -> int:
    """What the jackpot's bank account holds beyond the funds: a jackpot paid in cash, to take back."""
    check_cents("the jackpot's bank balance", bank_cents)
    return max(0, bank_cents - jackpot_funds(pots))


def reserve_boost_allowance(reserve_at_session_start: int) -> int:
    """The most a session may add from the reserve to its prizes (R91.7: 30%)."""
    return reserve_at_session_start * RESERVE_BOOST_PCT // 100


def check_reserve_boost(boost: int, boosted_before: int, allowance: int, reserve: int) -> None:
    """Refuse a boost above the session's allowance or above what the reserve holds."""
    check_cents("a reserve boost", boost)
    if boosted_before + boost > allowance:
        raise LimitExceeded(
            f"the session's reserve boosts would total {boosted_before + boost} cents, above "
            f"{RESERVE_BOOST_PCT}% of the reserve at the session's start ({allowance} cents, R91.7)"
        )
    if boost > reserve:
        raise LimitExceeded(f"a boost of {boost} cents exceeds the reserve's {reserve} cents")


# --- The operator taking back its jackpot contributions (R91.9) -------------------------


def recovery_last_day(contributed_on: str) -> str:
    """The last day (YYYY-MM-DD) the operator may take back a jackpot contribution paid in on ``contributed_on``.

    R91.9: "within one calendar year from the day after the contribution".  The year
    runs from the day after the contribution to the same date a year later, inclusive
    (a contribution of 29 February may be taken back until 28 February).  Dates are
    ISO text, which sorts as the calendar does.
    """
    year, month, day = contributed_on.split("-")
    following = f"{int(year) + 1:04d}-{month}-{day}"
    return following.replace("-02-29", "-02-28")


@dataclass(frozen=True)
class JackpotContribution:
    """An operator contribution to the jackpot: the day it was paid in and what of it players have not won."""

    date: str  # YYYY-MM-DD
    unwon_cents: int

    def recoverable_on(self, day: str) -> bool:
        """Whether the operator may take it back on ``day``: from the day after it, for one calendar year (R91.9)."""
        return self.date < day <= recovery_last_day(self.date)


@dataclass(frozen=True)
class OperatorJackpot:
    """The operator's contributions to the jackpot that players have not won, oldest first (R91.9).

    The rule that says what players have won of them: every cent the jackpot pays out
    to players - a jackpot prize paid, a boost of the prizes from its reserve (R91.7) -
    is the operator's contributed money first, oldest contribution first, as long as any
    contribution is unwon; the rest of the jackpot is the players' share of the sales.
    So the operator takes back only money the jackpot never had to pay, never more than
    it put in, and never more than the jackpot's funds hold.  A contribution's unwon part
    may be taken back from the day after it was paid in for one calendar year
    (:func:`recovery_last_day`); after that it stays in the jackpot for good, and wins
    still count it first, as its place in the order says.
    """

    contributions: tuple[JackpotContribution, ...] = ()

    @property
    def unwon_cents(self) -> int:
        return sum(c.unwon_cents for c in self.contributions)

    def contributed(self, day: str, cents: int) -> "OperatorJackpot":
        """With the operator's contribution of ``cents`` paid in on ``day``, the newest."""
        check_cents("an operator contribution", cents)
        if not cents:
            return self
        return OperatorJackpot((*self.contributions, JackpotContribution(day, cents)))

    def won(self, cents: int) -> "OperatorJackpot":
        """Once the jackpot paid ``cents`` to players: the oldest contributions count as won first."""
        check_cents("a jackpot payout", cents)
        left: list[JackpotContribution] = []
        for contribution in self.contributions:
            taken = min(cents, contribution.unwon_cents)
            cents -= taken
            if contribution.unwon_cents > taken:
                left.append(JackpotContribution(contribution.date, contribution.unwon_cents - taken))
        return OperatorJackpot(tuple(left))

    def recoverable(self, day: str) -> int:
        """What of the unwon contributions the operator may take back on ``day`` (R91.9)."""
        return sum(c.unwon_cents for c in self.contributions if c.recoverable_on(day))

    def recovered(self, day: str, cents: int) -> tuple["OperatorJackpot", tuple[tuple[str, int], ...]]:
        """Once the operator took back ``cents`` on ``day``: the contributions after, and what each gave
        back (its date, the cents), oldest first.  The caller checked ``cents`` against :meth:`recoverable`."""
        left = cents
        taken: list[tuple[str, int]] = []
        kept: list[JackpotContribution] = []
        for contribution in self.contributions:
            back = min(left, contribution.unwon_cents) if contribution.recoverable_on(day) else 0
            left -= back
            if back:
                taken.append((contribution.date, back))
            if contribution.unwon_cents > back:
                kept.append(JackpotContribution(contribution.date, contribution.unwon_cents - back))
        if left:
            raise LimitExceeded(f"the operator may take back {cents - left} cents on {day}, not {cents} (R91.9)")
        return OperatorJackpot(tuple(kept)), tuple(taken)


@dataclass(frozen=True)
class JackpotRecovery:
    """The operator takes back ``amount`` of its unwon jackpot contributions (R91.9), checked."""

    amount: int
    from_accumulated: int
    from_reserve: int
    taken: tuple[tuple[str, int], ...]  # (contribution's date, cents taken back of it), oldest first
    recoverable_before: int
    operator_jackpot: OperatorJackpot  # the contributions after


def jackpot_recovery(operator: OperatorJackpot, pots: Pots, day: str, amount: int) -> JackpotRecovery:
    """The operator takes back ``amount`` on ``day`` of what it contributed to the jackpot and players have not won.

    Within what may be taken back that day (:meth:`OperatorJackpot.recoverable`) and what
    the jackpot's funds hold; taken from the contributions that may be taken back, oldest
    first, and out of the accumulated jackpot first (where a contribution went first), then
    the reserve.  A limit that would be exceeded raises :class:`LimitExceeded`.
    """
    check_cents("the amount taken back", amount)
    if not amount:
        raise PrizeError("the operator takes back a positive number of cents")
    recoverable = min(operator.recoverable(day), jackpot_funds(pots))
    if amount > recoverable:
        raise LimitExceeded(
            f"the operator may take back at most {recoverable} cents on {day}: what it contributed to the "
            f"jackpot from the day after each contribution for one year and players have not won, within "
            f"the jackpot's funds of {jackpot_funds(pots)} cents (R91.9); not {amount}"
        )
    after, taken = operator.recovered(day, amount)
    from_accumulated = min(amount, pots.jackpot_accumulated)
    return JackpotRecovery(
        amount=amount,
        from_accumulated=from_accumulated,
        from_reserve=amount - from_accumulated,
        taken=taken,
        recoverable_before=recoverable,
        operator_jackpot=after,
    )
