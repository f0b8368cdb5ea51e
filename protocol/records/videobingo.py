"""Video bingo machines: stations, credit in and out, plays, meters, jackpots (R3.5.d, R73.7, R73.9).

Every record of a machine that changes its meters carries the machine's meters *after*
it (:class:`Meters`), so the meters are written atomically with the fact and a start
that folds the journal can check them: a machine whose folded meters disagree with
what its records say does not play.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, Shape, optional, record, secret


@dataclass(frozen=True)
class Meters(Shape):
    """A machine's meters (GLI-11): integers that only increase; money in cents.

    ``credits_in`` / ``credits_out`` count every cent put on or taken off the stations'
    credit, ``cash_in`` / ``cash_out`` those of them in cash at the machine;
    ``stakes`` and ``prizes`` are what the plays staked and paid from the paytable,
    ``jackpot_contributions`` what the plays fed the machine jackpot and the
    superjackpot, ``jackpot_payouts`` what jackpots paid on this machine.
    """

    credits_in: int
    credits_out: int
    stakes: int
    prizes: int
    plays: int
    jackpot_contributions: int
    jackpot_payouts: int
    cash_in: int
    cash_out: int


@dataclass(frozen=True)
class CardPaid(Shape):
    """What one card of a play was paid: the pattern (``None``: nothing) and the credits."""

    pattern: str | None
    credits: int


@dataclass(frozen=True)
class JackpotWin(Shape):
    """A jackpot a play won: ``which`` (``machine`` or ``super``), on card ``card`` (1-based), in cents."""

    which: str
    card: int
    cents: int


@record
@dataclass(frozen=True, kw_only=True)
class VbStationEnrolled(JournalRecord):
    """Station ``station`` of machine ``machine`` is enrolled; ``token_hash`` is the SHA-256 of its token."""

    type: ClassVar[str] = "vb_station_enrolled"
    machine: str
    station: int
    token_hash: str = secret()


@record
@dataclass(frozen=True, kw_only=True)
class VbPlayerSignedIn(JournalRecord):
    """Player account ``account`` signed in with its PIN on station ``station`` of ``machine``."""

    type: ClassVar[str] = "vb_player_signed_in"
    machine: str
    station: int
    account: str


@record
@dataclass(frozen=True, kw_only=True)
class VbPlayerSignedOut(JournalRecord):
    """The player signed in on station ``station`` of ``machine`` signed out."""

    type: ClassVar[str] = "vb_player_signed_out"
    machine: str
    station: int
    account: str


@dataclass(frozen=True)
class CashNoteTaken(Shape):
    """The cash device's signed note a credit in cash came with (``protocol/videobingo/cash.py``):
    the device key's fingerprint, the note's counter and nonce, and the device's signature."""

    key: str
    counter: int
    nonce: str
    signature: str


@record
@dataclass(frozen=True, kw_only=True)
class VbCashDeviceEnrolled(JournalRecord):
    """Machine ``machine``'s cash device (bill validator, coin acceptor) is enrolled: its Ed25519 ``public_key``
    (64 hex digits) and its ``fingerprint``; only notes it signs put cash on the machine's stations."""

    type: ClassVar[str] = "vb_cash_device_enrolled"
    machine: str
    public_key: str
    fingerprint: str


@record
@dataclass(frozen=True, kw_only=True)
class VbCreditIn(JournalRecord):
    """``amount`` cents put on a station's credit from ``source``: ``cash`` into the machine (with the cash
    device's signed ``note``), ``account`` (the signed-in player's) or ``desk`` (cash the cashier took at
    cash desk ``desk``).

    The posting follows; ``meters`` are the machine's after it.
    """

    type: ClassVar[str] = "vb_credit_in"
    machine: str
    station: int
    source: str
    account: str | None
    amount: int
    request: str
    meters: Meters
    note: CashNoteTaken | None = optional()
    desk: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class VbCreditOut(JournalRecord):
    """``amount`` cents (the station's whole credit) paid to ``destination`` (``cash`` or ``account``).

    The posting follows; ``meters`` are the machine's after it.
    """

    type: ClassVar[str] = "vb_credit_out"
    machine: str
    station: int
    destination: str
    account: str | None
    amount: int
    request: str
    meters: Meters


@record
@dataclass(frozen=True, kw_only=True)
class VbPlay(JournalRecord):
    """Play ``number`` of ``machine`` on ``station``: the cards, the balls and what they paid.

    Committed before the machine shows anything.  ``credit_cents`` is a credit's value,
    ``kept`` whether the cards are those of the station's previous play; ``stake_cents``
    and ``won_cents`` (the paytable's prizes) are in cents, ``contributions`` what the
    stake fed the machine jackpot and the superjackpot, ``jackpots`` the jackpots won;
    ``meters`` are the machine's after the play.  The postings follow.
    """

    type: ClassVar[str] = "vb_play"
    machine: str
    station: int
    number: int
    request: str
    credit_cents: int
    kept: bool
    cards: tuple[tuple[int, ...], ...]
    balls: tuple[int, ...]
    results: tuple[CardPaid, ...]
    stake_cents: int
    won_cents: int
    contributions: tuple[int, int]
    jackpots: tuple[JackpotWin, ...]
    meters: Meters


@record
@dataclass(frozen=True, kw_only=True)
class VbMachineRetired(JournalRecord):
    """``machine`` is retired, with the reason; its pending jackpot (``jackpot_cents``) moved to ``jackpot_to``.

    ``jackpot_to`` is a machine of the same model and credit value (``None`` when the
    jackpot held nothing); the posting follows.
    """

    type: ClassVar[str] = "vb_machine_retired"
    machine: str
    reason: str
    jackpot_to: str | None
    jackpot_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class VbCashBoxCountGiven(JournalRecord):
    """A first person counted machine ``machine``'s cash box at ``counted`` cents; a second must count it too
    before the count stands (``[videobingo] cash_box_counters = 2``)."""

    type: ClassVar[str] = "vb_cash_box_count_given"
    machine: str
    counted: int


@record
@dataclass(frozen=True, kw_only=True)
class VbCashBoxCounted(JournalRecord):
    """Machine ``machine``'s cash box counted at ``counted`` cents by ``counted_by``.

    ``expected`` is what the ledger's cash box held, ``meters`` what the meters make it (cash in less
    cash out), ``difference`` counted minus expected: posted to ``over_short:vb-<machine>`` (the
    posting follows), so the ledger's box is what was counted and every difference stays visible.
    """

    type: ClassVar[str] = "vb_cash_box_counted"
    machine: str
    counted: int
    expected: int
    meters: int
    difference: int
    counted_by: tuple[str, ...]


@record
@dataclass(frozen=True, kw_only=True)
class VbMetersReconciled(JournalRecord):
    """The machines' meters checked against the ledger: ``differences`` (empty: they agree).

    ``machines`` are the machines checked; ``at`` says why (``command`` or ``closing``).
    """

    type: ClassVar[str] = "vb_meters_reconciled"
    machines: tuple[str, ...]
    differences: tuple[str, ...]
    at: str
