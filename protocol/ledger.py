"""The double-entry ledger: every cent, in integer cents (DESIGN.md, "Money").

A :class:`Posting` is one balanced movement: debit legs and credit legs whose amounts
are positive whole cents and add up to the same total, with a ``reason`` and a
:class:`Reference` (game, card, journal sequence number) saying what caused it.  The
:class:`Ledger` only appends postings; balances are derived from them, so the sum
over all accounts of debits minus credits is zero after every posting by construction.

Accounts are named ``kind`` or ``kind:id`` (see :data:`ACCOUNT_KINDS`):

============== ======= ============ =====================================================
account        normal  may go < 0   what it holds
============== ======= ============ =====================================================
cash:<desk>    debit   no           notes and coins in a cashier's or seller's drawer
bank:<name>    debit   no           money in a bank account (e.g. the jackpot deposit)
player:<id>    credit  no           a player's credit, owed to the player (R93.2-4)
stakes:<game>  credit  no           a game's collection, until prizes and shares are
                                    paid out of it; refunds come back from here
carry:<prize>  credit  no           remainders carried to the same prize of the next
                                    game (R88.4-5): carry:line, carry:bingo, ...
pot:<name>     credit  no           superbingo, grand_superbingo, megabingo,
                                    jackpot_accumulated, jackpot_reserve (R89-R91)
tax            credit  no           tax owed on the stakes (R98)
over_short:<d> debit   yes          the cash desk's counting differences: a shortage
                                    found at reconciliation is debited, an excess
                                    credited (positive = net short)
house          credit  yes          the operator's share; negative when the operator
                                    has put in more than it took (R89.5, R91)
held:<game>    credit  no           players' credit held for network purchases the
                                    central server has not answered yet (R93.6)
network:<game> credit  yes          a network game's stakes captured in this hall, less
                                    the prizes and refunds it paid its players: what the
                                    hall owes the network (negative: what it is owed)
vbcredit:<st>  credit  no           a video bingo station's credit (``machine.station``),
                                    owed to the player at it
vb:<machine>   credit  yes          a video bingo machine's takings: stakes less prizes
                                    and jackpot contributions (negative: it paid more)
vbjackpot:<j>  credit  no           a pending video bingo jackpot, owed to players (in
                                    trust): a machine's (``vbjackpot:<machine>``) or the
                                    linked superjackpot (``vbjackpot:super``)
interhall:<h>  credit  yes          what this hall owes hall h, its partner in hall-annex
                                    games (R3.5.b), for prizes paid against its share of
                                    the joint pool (negative: what h owes it)
============== ======= ============ =====================================================

An account's :meth:`Ledger.balance` is shown on its normal side: what the drawer
holds, what the player has.  An account that may not go below zero refuses a posting
that would take it there: :class:`Overdraft`, and nothing changes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Iterable, Literal, Mapping, Sequence

from protocol.errors import DomainError
from protocol.money import format_cents


class LedgerError(DomainError):
    """A posting that is malformed or names an unknown account; the message says which."""


class Overdraft(LedgerError):
    """A posting that would take an account below zero; it was not recorded."""


@dataclass(frozen=True)
class AccountKind:
    """The rules for one family of accounts."""

    normal: Literal["debit", "credit"]
    may_go_negative: bool
    #: ``None``: the account is the bare kind (``house``); ``()``: any id; otherwise the ids allowed.
    ids: tuple[str, ...] | None


#: Every kind of account the ledger accepts.
ACCOUNT_KINDS: dict[str, AccountKind] = {
    "cash": AccountKind("debit", False, ()),
    "bank": AccountKind("debit", False, ()),
    "player": AccountKind("credit", False, ()),
    "stakes": AccountKind("credit", False, ()),
    "carry": AccountKind("credit", False, ()),
    "pot": AccountKind(
        "credit",
        False,
        ("superbingo", "grand_superbingo", "megabingo", "jackpot_accumulated", "jackpot_reserve"),
    ),
    "tax": AccountKind("credit", False, None),
    "house": AccountKind("credit", True, None),
    "over_short": AccountKind("debit", True, ()),
    "held": AccountKind("credit", False, ()),
    "network": AccountKind("credit", True, ()),
    "vbcredit": AccountKind("credit", False, ()),
    "vb": AccountKind("credit", True, ()),
    "vbjackpot": AccountKind("credit", False, ()),
    "interhall": AccountKind("credit", True, ()),
}


def account_kind(account: str) -> AccountKind:
    """The kind of ``account``, or :class:`LedgerError` if the name breaks the scheme."""
    if not isinstance(account, str):
        raise LedgerError(f"an account name is text, not {account!r}")
    return _kind_of(account)


@functools.lru_cache(maxsize=1 << 16)
def _kind_of(account: str) -> AccountKind:
    """:func:`account_kind` of a name: a posting names each account again and again, and a name's kind
    never changes (a name that breaks the scheme raises each time: nothing is kept of it)."""
    kind_name, colon, ident = account.partition(":")
    kind = ACCOUNT_KINDS.get(kind_name)
    if kind is None:
        raise LedgerError(f"unknown account {account!r}: no account kind {kind_name!r}")
    if kind.ids is None:
        if colon:
            raise LedgerError(f"account {kind_name!r} takes no ':id', got {account!r}")
    elif not ident or ident != ident.strip() or ":" in ident:
        raise LedgerError(f"account {account!r} needs an id: {kind_name}:<id>")
    elif kind.ids and ident not in kind.ids:
        raise LedgerError(f"unknown account {account!r}; {kind_name} is one of {', '.join(kind.ids)}")
    return kind


def _check_amount(amount: object, where: str) -> int:
    if isinstance(amount, bool) or not isinstance(amount, int):
        raise LedgerError(f"{where}: amounts are whole cents, not {amount!r}")
    if amount <= 0:
        raise LedgerError(f"{where}: amounts are positive, not {amount}")
    return amount


@dataclass(frozen=True)
class Reference:
    """What caused a posting: the game, the card (``series-number``), the journal record."""

    game_id: str | None = None
    card: str | None = None
    event_seq: int | None = None

    def __post_init__(self) -> None:
        for name in ("game_id", "card"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise LedgerError(f"reference {name} is text, not {value!r}")
        seq = self.event_seq
        if seq is not None and (isinstance(seq, bool) or not isinstance(seq, int) or seq < 0):
            raise LedgerError(f"reference event_seq is a journal sequence number, not {seq!r}")


@dataclass(frozen=True)
class Leg:
    """One side of a posting on one account."""

    account: str
    amount: int


@dataclass(frozen=True)
class Posting:
    """A balanced movement of money; build with :meth:`transfer` or directly."""

    debits: tuple[Leg, ...]
    credits: tuple[Leg, ...]
    reason: str
    reference: Reference = field(default_factory=Reference)

    def __post_init__(self) -> None:
        if not isinstance(self.reason, str) or not self.reason.strip():
            raise LedgerError("every posting says why it is made")
        if not isinstance(self.reference, Reference):
            raise LedgerError(f"a posting's reference is a Reference, not {self.reference!r}")
        object.__setattr__(self, "debits", tuple(self.debits))
        object.__setattr__(self, "credits", tuple(self.credits))
        if not self.debits or not self.credits:
            raise LedgerError(f"{self.reason}: a posting has at least one debit and one credit")
        seen: set[str] = set()
        for side, legs in (("debit", self.debits), ("credit", self.credits)):
            for leg in legs:
                if not isinstance(leg, Leg):
                    raise LedgerError(f"{self.reason}: a {side} is a Leg, not {leg!r}")
                account_kind(leg.account)
                _check_amount(leg.amount, f"{self.reason}: {side} {leg.account}")
                if leg.account in seen:
                    raise LedgerError(f"{self.reason}: account {leg.account} appears twice")
                seen.add(leg.account)
        debited = sum(leg.amount for leg in self.debits)
        credited = sum(leg.amount for leg in self.credits)
        if debited != credited:
            raise LedgerError(
                f"{self.reason}: debits ({format_cents(debited)}) and credits "
                f"({format_cents(credited)}) differ"
            )

    @classmethod
    def transfer(
        cls, amount: int, *, debit: str, credit: str, reason: str, reference: Reference = Reference()
    ) -> "Posting":
        """The usual posting: ``amount`` debited from one account and credited to another."""
        return cls((Leg(debit, amount),), (Leg(credit, amount),), reason, reference)

    @property
    def amount(self) -> int:
        """The total moved."""
        return sum(leg.amount for leg in self.debits)

    def signed(self) -> dict[str, int]:
        """Debit minus credit per account: the posting's effect; its values sum to zero."""
        effect = {leg.account: leg.amount for leg in self.debits}
        effect.update({leg.account: -leg.amount for leg in self.credits})
        return effect

    def to_dict(self) -> dict[str, Any]:
        """The JSON-able form the journal stores."""
        return {
            "debits": [[leg.account, leg.amount] for leg in self.debits],
            "credits": [[leg.account, leg.amount] for leg in self.credits],
            "reason": self.reason,
            "reference": {
                "game_id": self.reference.game_id,
                "card": self.reference.card,
                "event_seq": self.reference.event_seq,
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Posting":
        """The posting a journal record holds, or :class:`LedgerError`."""
        if not isinstance(data, Mapping) or set(data) != {"debits", "credits", "reason", "reference"}:
            raise LedgerError("a posting has exactly debits, credits, reason and reference")

        def legs(side: str) -> tuple[Leg, ...]:
            raw = data[side]
            if not isinstance(raw, list) or not all(isinstance(x, list) and len(x) == 2 for x in raw):
                raise LedgerError(f"posting {side} are [account, cents] pairs")
            return tuple(Leg(account, amount) for account, amount in raw)

        ref = data["reference"]
        if not isinstance(ref, Mapping) or set(ref) != {"game_id", "card", "event_seq"}:
            raise LedgerError("a posting reference has exactly game_id, card and event_seq")
        return cls(legs("debits"), legs("credits"), data["reason"], Reference(**ref))


class Ledger:
    """Append-only postings and the balances they add up to."""

    def __init__(self, postings: Iterable[Posting] = ()) -> None:
        self._postings: list[Posting] = []
        self._signed: dict[str, int] = {}  # debit minus credit, per account
        self.post_all(list(postings))

    @property
    def postings(self) -> tuple[Posting, ...]:
        return tuple(self._postings)

    def balance(self, account: str) -> int:
        """The account's balance on its normal side, in cents (0 for an unused account)."""
        kind = account_kind(account)
        signed = self._signed.get(account, 0)
        return signed if kind.normal == "debit" else -signed

    def balances(self) -> dict[str, int]:
        """Every account that has been used, with its balance on its normal side."""
        return {account: self.balance(account) for account in sorted(self._signed)}

    def total(self) -> int:
        """Debits minus credits over all accounts: zero, always."""
        return sum(self._signed.values())

    def post(self, posting: Posting) -> Posting:
        """Record ``posting``; :class:`Overdraft` and no change if an account would go below zero."""
        self.post_all([posting])
        return posting

    def post_all(self, postings: Sequence[Posting]) -> tuple[Posting, ...]:
        """Record ``postings`` together: all of them, or none if one would overdraw."""
        self._signed.update(self._after(postings))
        self._postings.extend(postings)
        return tuple(postings)

    def check(self, postings: Sequence[Posting]) -> None:
        """Raise as :meth:`post_all` would, recording nothing.

        A server checks the postings a command would make before it journals them; the
        ledger, a projection of the journal, records them once they are committed.
        """
        self._after(postings)

    def _after(self, postings: Sequence[Posting]) -> dict[str, int]:
        """The signed balances of the accounts ``postings`` move, once they are made, or :class:`Overdraft`."""
        signed: dict[str, int] = {}
        for posting in postings:
            if not isinstance(posting, Posting):
                raise LedgerError(f"only postings can be recorded, not {posting!r}")
            for account, change in posting.signed().items():
                signed[account] = signed.get(account, self._signed.get(account, 0)) + change
                kind = account_kind(account)
                natural = signed[account] if kind.normal == "debit" else -signed[account]
                if natural < 0 and not kind.may_go_negative:
                    before = natural + (change if kind.normal == "credit" else -change)
                    raise Overdraft(
                        f"{posting.reason}: {account} holds {format_cents(before)} and cannot "
                        f"pay {format_cents(abs(change))}; nothing was recorded"
                    )
        return signed

    def postings_for(self, game_id: str, reason: str | None = None) -> tuple[Posting, ...]:
        """The postings referring to ``game_id``, optionally only those made for ``reason``."""
        return tuple(
            p
            for p in self._postings
            if p.reference.game_id == game_id and (reason is None or p.reason == reason)
        )
