"""Video bingo machines in the hall (R3.5.d, R73.7, R73.9, REGULATION.md section 9).

The hall server is the "main server" of R3.5.d: it deals the cards, draws the balls
with the operating system's CSPRNG (the same source as the hall's software ball
generator, :mod:`protocol.balls`), settles the play with the paytable
(:mod:`protocol.videobingo.play`) and commits it - cards, balls, outcome, jackpots and
the machine's meters after it - in **one** ``vb_play`` record with its postings before
the machine shows anything.  The machine only displays.

* **Machines** are configured in ``hall.toml`` (``[[videobingo.machine]]``: id, model,
  paytable file, credit value in cents, stations, zone, jackpot); each station is a
  player's place at a machine with its own credit (``vbcredit:<machine>.<station>``).
  A station is enrolled by staff (``enrol_vb_station``: a token shown once, its hash
  journaled) and proves who it is with it.
* **Credit** comes in as cash at the machine (``cash:vb-<machine>``, its cash box) only
  on a note the machine's cash device signed (:mod:`protocol.videobingo.cash`: the bill
  validator's key, enrolled by staff, which the station never holds; each note once, its
  counter strictly increasing), as cash the cashier took at the desk
  (``vb_desk_credit``), or from the signed-in player's account; it goes out - always the
  station's whole credit - to the account or in cash from the cash box; all in integer
  cents through the ledger.  **At sign-out** the station's whole credit goes back to the
  signed-in player's account (a ``vb_credit_out`` before ``vb_player_signed_out``, in one
  commit): a public machine never keeps a player's money for the next person; credit put
  in with nobody signed in is paid out as above.  The cash box is **counted** by staff (``vb_count_cash_box``,
  one or two people as the hall's rules say): the count is journaled against the ledger
  and the meters, its difference posted to ``over_short:vb-<machine>``, and
  ``vb_reconcile`` reports it.
* **A play** stakes one credit a card on 1..``cards_max`` cards, new (dealt at random)
  or kept from the station's previous play; the stake moves to the machine's takings
  (``vb:<machine>``), the prizes come back from them, the jackpot shares go from them
  to ``vbjackpot:<machine>`` and ``vbjackpot:super``.
* **Meters** (GLI-11, :class:`MeterCounts`) are folded from the records, so they are
  atomic with the play and survive restarts; each record carries the meters after it
  and the fold checks them: a machine whose meters disagree with its records (cannot
  be read) does not play.  :meth:`VideoBingoModule.reconcile` checks the meters against
  the ledger (the ``vb_reconcile`` command, and the session's closing).
* **The hall's rules** (:func:`admission`): at most one machine per five seats of
  traditional bingo, at most 15 stations a machine (R73.9), machines in a zone apart
  from the bingo room (R73.7), a paytable returning at least the minimum; a machine
  that breaks one is not admitted and refuses to play, saying why.  One player account
  may be signed in on one station only (configurable).
* **Large wins (R75.6)**: a play of 15,000 EUR or more (prizes and jackpots) on a station
  with no account signed in keeps the station's credit from going out in cash: it goes to
  an account (the player signs in, the cashier having opened one on their identity
  document), whose holder is the winner the daily report names.
* **Jackpots**: a machine jackpot and a linked superjackpot, each fed a configured
  share of the stakes (on top of the paytable's return, which alone meets the
  minimum) and won by a configured pattern complete within a configured number of
  balls; the pending amounts are held in the ledger as owed to players.  Retiring a
  machine moves its pending jackpot to a machine of the same model and credit value.

Every refusal is a :class:`VbRefused` with a ``code`` a machine can act on and a
message a person can read; nothing changes.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections import deque
from dataclasses import dataclass, field, fields, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

from twisted.internet import defer

from hall_server.hall.cashier import (
    CashierError,
    CashierModule,
    cash_account,
    normalize_account_number,
    over_short_account,
    player_account,
)
from hall_server.hall.ledger import LedgerModule, posting_records
from hall_server.hall.roles import SYSTEM, Role
from protocol.chain import Record
from protocol.daily import LARGE_WIN_CENTS
from protocol.errors import N_, Cents, DomainError, Template
from protocol.ledger import Posting, Reference
from protocol.money import format_cents
from protocol.records import JournalRecord, declared
from protocol.records.videobingo import (
    CardPaid,
    CashNoteTaken,
    JackpotWin,
    Meters,
    VbCashBoxCountGiven,
    VbCashBoxCounted,
    VbCashDeviceEnrolled,
    VbCreditIn,
    VbCreditOut,
    VbMachineRetired,
    VbMetersReconciled,
    VbPlay,
    VbPlayerSignedIn,
    VbPlayerSignedOut,
    VbStationEnrolled,
)
from protocol.videobingo.cash import CashNote, CashNoteError, device_public_key, fingerprint
from protocol.videobingo.paytable import Paytable
from protocol.videobingo.play import Card, RandomSource, VideoBingoGame
from protocol.videobingo.rtp import ExactReturn, exact_return
from server_kit.core import Actor, CommandCore, CommandSpec
from server_kit.journal.projection import ProjectedState
from server_kit.randomness import KernelRandom

#: What a decision makes: its declared records, and the postings they move money by (:func:`posting_records`).
Decided = list[JournalRecord]

#: At most one machine for every this many seats of traditional bingo (R3.5.d).
SEATS_PER_MACHINE = 5
#: A multi-station machine has at most this many stations (R73.9).
MAX_STATIONS = 15
#: The lowest return a machine's paytable may have, in basis points (the Portuguese rule).
DEFAULT_MIN_RTP_BP = 8000
#: The records the machines' state is folded from.
FOLDED = frozenset({VbStationEnrolled, VbPlayerSignedIn, VbPlayerSignedOut, VbCashDeviceEnrolled, VbCashBoxCountGiven,
                    VbCashBoxCounted, VbCreditIn, VbCreditOut, VbPlay, VbMachineRetired})
#: Plays each machine can recall (GLI-11 game recall).
RECALLED_PLAYS = 10
#: Request ids each station remembers the answer of (a machine resends after a reconnect).
REMEMBERED_REQUESTS = 20
MACHINE_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
SUPER = "super"
#: The largest single credit in, in cents (a bill acceptor's or a transfer's).
MAX_CREDIT_IN = 1_000_000

R = Role
PERMISSIONS = {
    "enrol_vb_station": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    "retire_vb_machine": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    "vb_meters": {R.ROOM_CHIEF, R.ADMINISTRATOR, R.CASHIER},
    "vb_reconcile": {R.ROOM_CHIEF, R.ADMINISTRATOR, R.CASHIER},
    "vb_recall": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    "enrol_vb_cash_device": {R.ROOM_CHIEF, R.ADMINISTRATOR},
    # Cash the cashier takes at the desk onto a station: the holder of that open desk (R80.4 included).
    "vb_desk_credit": {R.CASHIER, R.TABLE_CHIEF},
    "vb_count_cash_box": {R.CASHIER, R.ROOM_CHIEF},
    "vb_play": {R.SYSTEM},
    "vb_credit": {R.SYSTEM},
    "vb_sign_in": {R.SYSTEM},
}


class VbRefused(DomainError):
    """A machine's request or a staff command refused: ``code`` for the machine, the message for people.

    The message is English, as the journal and the headless clients read it.  A refusal a
    player reads on the machine's screen also carries ``reason``, a stable name of the
    sentence, and its ``params`` (figures; amounts as ``..._cents``): the screen says it in the
    player's language with the amounts in CLDR form (``vb.js``, ``REFUSALS``;
    ``docs/languages.md``).  A refusal with no ``reason`` is shown as its message.

    A staff command's refusal is a template of the console's catalog (``N_("...")``) filled
    with ``template_params`` (amounts as :class:`~protocol.errors.Cents`): its English text is
    the message, and the console says it in its reader's language (``docs/languages.md``, "The
    refusals to staff").  ``template_params`` are not the machine's ``params``.
    """

    def __init__(self, code: str, message: str, reason: str = "", *,
                 template_params: Mapping[str, Any] | None = None, **params: int | str) -> None:
        if isinstance(message, Template):
            super().__init__(message, **(template_params or {}))
        elif template_params:
            raise TypeError("a VbRefused's template_params fill an N_() template")
        else:
            super().__init__(message)
        self.code = code
        self.reason = reason
        self.params = params


class VbConfigError(DomainError):
    """A machine configuration that cannot be run (a jackpot pattern not in its paytable, say)."""


# --- Configuration ----------------------------------------------------------------------


@dataclass(frozen=True)
class JackpotRule:
    """A jackpot: fed ``share_bp`` of the stakes, won by ``pattern`` complete within ``balls`` balls."""

    share_bp: int
    pattern: str
    balls: int


@dataclass(frozen=True)
class MachineConfig:
    """One ``[[videobingo.machine]]`` of hall.toml."""

    machine_id: str
    model: str
    paytable: Path
    credit_cents: int
    stations: int
    zone: str
    jackpot: JackpotRule | None = None
    linked: bool = False


@dataclass(frozen=True)
class VideoBingoConfig:
    """``[videobingo]`` of hall.toml: the hall's seats, the bingo room's zone, the rules, the machines."""

    seats: int
    room_zone: str
    machines: tuple[MachineConfig, ...]
    one_station_per_player: bool = True
    min_rtp_bp: int = DEFAULT_MIN_RTP_BP
    superjackpot: JackpotRule | None = None
    #: How many people count a machine's cash box, each on their own, before the count stands (1 or 2).
    cash_box_counters: int = 1


@dataclass(frozen=True)
class Machine:
    """A configured machine with its paytable loaded and its exact return certified."""

    config: MachineConfig
    paytable: Paytable
    game: VideoBingoGame
    rtp: ExactReturn
    #: Why the machine may not play (code, message), or None: it is admitted.
    refused: tuple[str, str] | None = None

    @property
    def machine_id(self) -> str:
        return self.config.machine_id


def admission(config: VideoBingoConfig, returns: Mapping[str, ExactReturn]) -> dict[str, tuple[str, str]]:
    """The machines the hall's rules do not admit, each with (code, why); ``returns`` by machine id."""
    refused: dict[str, tuple[str, str]] = {}
    allowed = config.seats // SEATS_PER_MACHINE
    for index, machine in enumerate(config.machines):
        rtp = returns[machine.machine_id]
        floor = max(config.min_rtp_bp, rtp.min_rtp_bp)
        if machine.stations > MAX_STATIONS:
            refused[machine.machine_id] = ("R73.9", (
                f"machine {machine.machine_id} has {machine.stations} stations; a multi-station machine has at "
                f"most {MAX_STATIONS} (R73.9)"))
        elif not machine.zone.strip() or machine.zone.strip() == config.room_zone.strip():
            refused[machine.machine_id] = ("R73.7", (
                f"machine {machine.machine_id} stands in {machine.zone.strip() or 'no zone'!r}; machines stand in a "
                f"space apart from the bingo room {config.room_zone!r} (R73.7)"))
        elif rtp.rtp < Fraction(floor, 10000):
            refused[machine.machine_id] = ("paytable", (
                f"machine {machine.machine_id}'s paytable returns {rtp.rtp_percent}%, under the minimum of "
                f"{floor // 100}.{floor % 100:02d}%"))
        elif index >= allowed:
            refused[machine.machine_id] = ("R3.5.d", (
                f"machine {machine.machine_id} is beyond the hall's ratio: {config.seats} seats of traditional "
                f"bingo allow {allowed} machine(s), one per {SEATS_PER_MACHINE} seats (R3.5.d)"))
    return refused


def load_machines(config: VideoBingoConfig, paytables: Mapping[str, Paytable]) -> list[Machine]:
    """The configured machines with their paytables (by machine id), certified and admitted or not."""
    returns = {m.machine_id: exact_return(paytables[m.machine_id]) for m in config.machines}
    refused = admission(config, returns)
    machines = []
    for machine in config.machines:
        paytable = paytables[machine.machine_id]
        names = {pattern.name for pattern in paytable.patterns}
        for what, rule in (("jackpot", machine.jackpot), ("superjackpot", config.superjackpot if machine.linked else None)):
            if rule is not None and rule.pattern not in names:
                raise VbConfigError(
                    f"machine {machine.machine_id}: the {what}'s pattern {rule.pattern!r} is not in its paytable "
                    f"{paytable.name!r} ({', '.join(sorted(names))})")
            if rule is not None and not 1 <= rule.balls <= paytable.balls:
                raise VbConfigError(
                    f"machine {machine.machine_id}: the {what} is won within 1 to {paytable.balls} balls, not {rule.balls}")
        machines.append(Machine(machine, paytable, VideoBingoGame(paytable), returns[machine.machine_id],
                                refused.get(machine.machine_id)))
    return machines


# --- State ------------------------------------------------------------------------------



@dataclass
class MeterCounts:
    """A machine's meters (see :class:`protocol.records.videobingo.Meters`)."""

    credits_in: int = 0
    credits_out: int = 0
    stakes: int = 0
    prizes: int = 0
    plays: int = 0
    jackpot_contributions: int = 0
    jackpot_payouts: int = 0
    cash_in: int = 0
    cash_out: int = 0

    def plus(self, **changes: int) -> "MeterCounts":
        return MeterCounts(**{name: getattr(self, name) + changes.get(name, 0) for name in METER_NAMES})

    def to_dict(self) -> dict[str, int]:
        return {name: getattr(self, name) for name in METER_NAMES}

    def recorded(self) -> Meters:
        """The meters as a record carries them."""
        return Meters(**self.to_dict())

    def agree(self, recorded: Meters) -> bool:
        """Whether a record's meters are these."""
        return all(getattr(recorded, name) == getattr(self, name) for name in METER_NAMES)


#: The meters' names, in the order of :class:`MeterCounts`.
METER_NAMES = tuple(meter.name for meter in fields(MeterCounts))


@dataclass(frozen=True)
class PlayShown:
    """A committed play as a machine shows it and the console recalls it."""

    seq: int
    machine: str
    station: int
    number: int
    at_ms: int
    credit_cents: int
    cards: tuple[Card, ...]
    balls: tuple[int, ...]
    results: tuple[CardPaid, ...]
    stake_cents: int
    won_cents: int
    jackpots: tuple[JackpotWin, ...]
    credit_after: int

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq, "machine": self.machine, "station": self.station, "number": self.number,
            "at_ms": self.at_ms, "credit_cents": self.credit_cents, "cards": [list(c) for c in self.cards],
            "balls": list(self.balls),
            "results": [result.to_json() for result in self.results],
            "stake_cents": self.stake_cents, "won_cents": self.won_cents,
            "jackpots": [jackpot.to_json() for jackpot in self.jackpots],
            "credit_after_cents": self.credit_after,
        }


@dataclass
class Station:
    machine: str
    station: int
    token_hash: str | None = None
    account: str | None = None  # the player account signed in, if any
    cards: tuple[Card, ...] = ()  # the previous play's cards, which the player may keep
    #: request id -> what it came to, the latest ones: a play as shown (made into its answer when it
    #: is asked for, :func:`answer_of`: the garbage collector walks one object a play, not its tree of
    #: lists), or a credit movement's answer
    answers: dict[str, PlayShown | dict[str, Any]] = field(default_factory=dict)
    #: A play of 15,000 EUR or more won with no account signed in (its record), while its credit is on the
    #: station: the credit goes to an account, never in cash, so that the winner is identified (R75.6).
    unidentified_win: int | None = None


@dataclass
class CashDevice:
    """A machine's enrolled cash device: its public key, and per station the last note counter credited with it."""

    public_key: str
    fingerprint: str
    last_counters: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class BoxCount:
    """A machine's cash box as counted: the record of the count (by whom, the ledger's and the meters'
    figures) and its ``seq``."""

    record: VbCashBoxCounted
    seq: int


@dataclass
class VideoBingoState:
    meters: dict[str, MeterCounts] = field(default_factory=dict)
    devices: dict[str, CashDevice] = field(default_factory=dict)
    #: The last count of each machine's cash box, and a count given by one person awaiting the second.
    counts: dict[str, BoxCount] = field(default_factory=dict)
    pending_counts: dict[str, tuple[str, int]] = field(default_factory=dict)
    stations: dict[str, Station] = field(default_factory=dict)
    recall: dict[str, deque[PlayShown]] = field(default_factory=dict)
    retired: dict[str, str] = field(default_factory=dict)
    #: Machines whose meters cannot be read: a record's meters disagree with the fold.
    faults: dict[str, str] = field(default_factory=dict)


def _copied(state: VideoBingoState) -> VideoBingoState:
    """``state`` with every table, station and cash device its own, sharing what is never changed."""
    return VideoBingoState(
        meters=dict(state.meters),
        devices={m: replace(d, last_counters=dict(d.last_counters)) for m, d in state.devices.items()},
        counts=dict(state.counts),
        pending_counts=dict(state.pending_counts),
        stations={key: replace(known, answers=dict(known.answers)) for key, known in state.stations.items()},
        recall={m: deque(plays, maxlen=plays.maxlen) for m, plays in state.recall.items()},
        retired=dict(state.retired),
        faults=dict(state.faults),
    )


def answer_of(remembered: PlayShown | dict[str, Any]) -> dict[str, Any]:
    """The answer to a request a station remembers (:attr:`Station.answers`)."""
    return {"kind": "play", **remembered.to_json()} if isinstance(remembered, PlayShown) else remembered


def station_key(machine: str, station: int) -> str:
    return f"{machine}.{station}"


def credit_account(machine: str, station: int) -> str:
    return f"vbcredit:{station_key(machine, station)}"


def takings_account(machine: str) -> str:
    return f"vb:{machine}"


def jackpot_account(jackpot: str) -> str:
    return f"vbjackpot:{jackpot}"


def cash_box(machine: str) -> str:
    return cash_account(f"vb-{machine}")


Made = TypeVar("Made", bound=JournalRecord)


def first_made(records: Sequence[Record], kind: type[Made]) -> Made:
    """The first record a command committed, as the declared record ``kind`` it was decided as."""
    made = declared(records[0])
    if not isinstance(made, kind):
        raise TypeError(f"a {kind.type} record was decided, a {made.type} record committed")
    return made


def token_hash(token: str) -> str:
    return hashlib.sha256(b"bingo-vb-station-token/1\0" + token.encode("utf-8")).hexdigest()


def share(before: int, after: int, share_bp: int) -> int:
    """What a jackpot takes of the stakes from ``before`` to ``after`` cumulated: the share of the
    total rounded down, less what was taken before, so no cent is lost or made up over the plays."""
    return after * share_bp // 10000 - before * share_bp // 10000


def complete_within(cards: Sequence[Card], balls: Sequence[int], mask_cells: Sequence[int], within: int) -> int | None:
    """The first card (1-based) whose cells ``mask_cells`` are all among the first ``within`` balls."""
    early = set(balls[:within])
    for position, card in enumerate(cards, start=1):
        if all(card[cell] in early for cell in mask_cells):
            return position
    return None


# --- What a player reads -------------------------------------------------------------------


def not_enough_credit(cards: int, stake: int, held: int) -> str:
    """The refusal of a play whose ``stake`` is more than the station's credit ``held``."""
    played = "1 card costs" if cards == 1 else f"{cards} cards cost"
    return (f"Not enough credit: {played} {format_cents(stake)} and the credit is {format_cents(held)}. "
            "Add credit, or play fewer cards.")


# --- The module -------------------------------------------------------------------------


class VideoBingoModule(ProjectedState):
    """The hall's video bingo machines: commands in, records out, state and meters from the journal."""

    def __init__(
        self,
        core: CommandCore,
        ledger: LedgerModule,
        cashier: CashierModule,
        config: VideoBingoConfig,
        machines: Iterable[Machine],
        *,
        rng: RandomSource | None = None,
        new_token: Callable[[], str] = lambda: secrets.token_urlsafe(32),
    ) -> None:
        self.core = core
        self.ledger = ledger
        self.cashier = cashier
        self.config = config
        self.machines: dict[str, Machine] = {m.machine_id: m for m in machines}
        #: The operating system's CSPRNG, as the hall's software ball generator uses (R92.10), read in
        #: blocks (server_kit/randomness.py).
        self.rng: RandomSource = rng if rng is not None else KernelRandom()
        self.new_token = new_token
        self.state = VideoBingoState()
        #: Other reasons a player may not sign in or take credit from the account:
        #: ``check(ledger account, cents taken now, now)`` gives the refusal or None (the
        #: player's daily limit and self-exclusion, R97.2); sign-in asks with 0 cents.
        self.credit_checks: list[Callable[[str, int, int], str | None]] = []
        #: Why no machine may play at ``now`` (outside the opening hours in force, R74.1), or None.
        self.play_checks: list[Callable[[int], str | None]] = []
        core.add_module(self)
        core.allow(PERMISSIONS)
        for name, handler, params, summary in (
            ("enrol_vb_station", self.enrol_station, {"machine": str, "station": int},
             N_("enrol a video bingo machine's station; its token is shown once, to be put on the machine")),
            ("retire_vb_machine", self.retire, {"machine": str, "reason": str},
             N_("retire a video bingo machine; its pending jackpot moves to a machine of the same model and stake")),
            ("vb_meters", self.meters_command, {"machine": str},
             N_("the meters of a video bingo machine (empty: every machine), GLI-11")),
            ("vb_reconcile", self.reconcile_command, {},
             N_("check the video bingo machines' meters against the ledger, and record the result")),
            ("vb_recall", self.recall_command, {"machine": str},
             N_("the last ten plays of a video bingo machine (game recall)")),
            ("enrol_vb_cash_device", self.enrol_cash_device, {"machine": str, "public_key": str},
             N_("enrol a video bingo machine's cash device (bill validator): its Ed25519 public key checks the cash it reports")),
            ("vb_desk_credit", self.desk_credit_in, {"machine": str, "station": int, "amount_cents": int, "desk": str},
             N_("put cash the player hands over at your desk onto a video bingo station's credit")),
            ("vb_count_cash_box", self.count_cash_box, {"machine": str, "counted_cents": int},
             N_("record the count of a video bingo machine's cash box against the meters and the ledger")),
        ):
            core.register(CommandSpec(name, handler, params, summary))

    # --- Queries --------------------------------------------------------------------

    def machine(self, machine_id: object) -> Machine:
        machine = self.machines.get(machine_id) if isinstance(machine_id, str) else None
        if machine is None:
            # Met by staff (the console says it) and by a machine (its screen says the reason).
            if self.machines:
                raise VbRefused("unknown_machine", N_("there is no video bingo machine {machine!r}; the machines are "
                                                      "{machines}"), reason="unknown_machine",
                                template_params={"machine": machine_id, "machines": ", ".join(sorted(self.machines))})
            raise VbRefused("unknown_machine", N_("there is no video bingo machine {machine!r}; the machines are none"),
                            reason="unknown_machine", template_params={"machine": machine_id})
        return machine

    def meters(self, machine_id: str) -> MeterCounts:
        return self.state.meters.get(machine_id, MeterCounts())

    def credit(self, machine_id: str, station: int) -> int:
        """A station's credit, in cents."""
        return self.ledger.balance(credit_account(machine_id, station))

    def jackpot(self, jackpot: str) -> int:
        return self.ledger.balance(jackpot_account(jackpot))

    def recall(self, machine_id: str) -> list[PlayShown]:
        """The machine's last ten plays, the latest first."""
        return list(reversed(self.state.recall.get(machine_id, ())))

    def last_play(self, machine_id: str, station: int) -> PlayShown | None:
        for play in self.recall(machine_id):
            if play.station == station:
                return play
        return None

    def station(self, machine_id: str, station: int) -> Station | None:
        return self.state.stations.get(station_key(machine_id, station))

    def authenticate(self, machine_id: object, station: object, token: object) -> Station:
        """The enrolled station if ``token`` is its token; else :class:`VbRefused` (``not_enrolled``)."""
        known = None
        if isinstance(machine_id, str) and isinstance(station, int) and not isinstance(station, bool):
            known = self.state.stations.get(station_key(machine_id, station))
        if known is None or known.token_hash is None or not isinstance(token, str) or not hmac.compare_digest(
            known.token_hash, token_hash(token)
        ):
            raise VbRefused("not_enrolled", "this station is not enrolled, or its token is wrong; ask the staff to enrol it",
                            reason="not_enrolled")
        return known

    def playable(self, machine_id: str) -> Machine:
        """The machine if it may play now; else :class:`VbRefused` saying why."""
        machine = self.machine(machine_id)
        if machine.refused is not None:
            raise VbRefused(*machine.refused, reason="not_admitted")
        if machine_id in self.state.retired:
            raise VbRefused("retired", f"machine {machine_id} is retired ({self.state.retired[machine_id]})",
                            reason="retired")
        fault = self.state.faults.get(machine_id)
        if fault is not None:
            raise VbRefused("meters", f"machine {machine_id} does not play: its meters cannot be read ({fault})",
                            reason="meters")
        return machine

    # --- Reconciliation -------------------------------------------------------------

    def reconcile(self) -> list[str]:
        """Where the meters and the ledger disagree, one line each (empty: they agree).

        Per machine: its stations' credit is credits in - credits out - stakes + prizes +
        jackpot payouts; its takings are stakes - prizes - jackpot contributions; its cash
        box holds cash in - cash out, less what its counts found short (plus what they found
        over: ``over_short:vb-<machine>``).  Over the hall: the jackpots pending are the
        contributions less the payouts.  What the counted boxes say is :meth:`count_differences`.
        """
        differences = []
        for machine_id in sorted(set(self.machines) | set(self.state.meters)):
            m = self.meters(machine_id)
            stations = self.machines[machine_id].config.stations if machine_id in self.machines else 0
            keys = {s.station for s in self.state.stations.values() if s.machine == machine_id} | set(range(1, stations + 1))
            checks = (
                ("stations' credit", sum(self.credit(machine_id, s) for s in keys),
                 m.credits_in - m.credits_out - m.stakes + m.prizes + m.jackpot_payouts),
                ("takings", self.ledger.balance(takings_account(machine_id)), m.stakes - m.prizes - m.jackpot_contributions),
                ("cash box", self.ledger.balance(cash_box(machine_id))
                 + self.ledger.balance(over_short_account(f"vb-{machine_id}")), m.cash_in - m.cash_out),
            )
            for what, ledger, meters in checks:
                if ledger != meters:
                    differences.append(f"machine {machine_id}: {what} is {format_cents(ledger)} in the ledger, "
                                       f"{format_cents(meters)} by the meters")
        jackpots = {m.machine_id for m in self.machines.values()} | set(self.state.meters) | {SUPER}
        pending = sum(self.jackpot(j) for j in jackpots)
        fed = sum(m.jackpot_contributions - m.jackpot_payouts for m in self.state.meters.values())
        if pending != fed:
            differences.append(f"jackpots: {format_cents(pending)} pending in the ledger, {format_cents(fed)} by the meters")
        return differences

    def count_differences(self) -> list[str]:
        """Each machine whose cash box, at its last count, held other than the ledger's box said."""
        lines = []
        for machine_id, count in sorted(self.state.counts.items()):
            counted = count.record
            if counted.difference:
                lines.append(
                    f"machine {machine_id}: its cash box was counted at {format_cents(counted.counted)} by "
                    f"{' and '.join(counted.counted_by)} (record {count.seq}), where the ledger held "
                    f"{format_cents(counted.expected)} and the meters made it {format_cents(counted.meters)}: "
                    f"{format_cents(abs(counted.difference))} {'short' if counted.difference < 0 else 'over'}")
        return lines

    def cash_boxes(self) -> dict[str, dict[str, Any]]:
        """Per machine: the meters' cash box (cash in - cash out) now, and its last count (None: never counted)."""
        shown = {}
        for machine_id in sorted(self.machines):
            m = self.meters(machine_id)
            count = self.state.counts.get(machine_id)
            counted = count.record if count else None
            shown[machine_id] = {
                "meters_cents": m.cash_in - m.cash_out, "ledger_cents": self.ledger.balance(cash_box(machine_id)),
                "counted_cents": counted.counted if counted else None, "counted_in_record": count.seq if count else None,
                "difference_cents": counted.difference if counted else None,
                "counted_by": list(counted.counted_by) if counted else None,
                "count_waiting": machine_id in self.state.pending_counts,
            }
        return shown

    def closing_check(self) -> str | None:
        """The session's closing waits for the machines' meters to agree with the ledger."""
        differences = self.reconcile()
        if differences:
            return "the video bingo meters disagree with the ledger: " + "; ".join(differences)
        return None

    # --- Staff commands -------------------------------------------------------------

    def enrol_station(self, actor: Actor, machine: str, station: int) -> defer.Deferred[dict[str, Any]]:
        """Enrol station ``station`` of ``machine``; fires with its token, which only this answer shows."""
        token = self.new_token()

        def decide(now: int) -> Decided:
            known = self.machine(machine)
            if isinstance(station, bool) or not isinstance(station, int) or not 1 <= station <= known.config.stations:
                raise VbRefused("station", N_("machine {machine} has stations 1 to {stations}, not {station!r}"),
                                template_params={"machine": known.machine_id, "stations": known.config.stations,
                                                 "station": station})
            return [VbStationEnrolled(machine=known.machine_id, station=station, token_hash=token_hash(token))]

        def shown(records: list[Record]) -> dict[str, Any]:
            enrolled = first_made(records, VbStationEnrolled)
            return {"machine": enrolled.machine, "station": enrolled.station, "token": token}

        return self.core.execute(actor, "enrol_vb_station", decide).addCallback(shown)

    def meters_command(self, actor: Actor, machine: str = "") -> defer.Deferred[dict[str, Any]]:
        def run() -> dict[str, Any]:
            self.core.check_permission(actor, "vb_meters")
            chosen = [self.machine(machine).machine_id] if machine else sorted(self.machines)
            return {m: {**self.meters(m).to_dict(), "jackpot_cents": self.jackpot(m),
                        "state": self._machine_state(m)} for m in chosen} | (
                {"superjackpot_cents": self.jackpot(SUPER)} if not machine else {})

        return defer.maybeDeferred(run)

    def _machine_state(self, machine_id: str) -> str:
        try:
            self.playable(machine_id)
        except VbRefused as refusal:
            return str(refusal)
        return "playing"

    def reconcile_command(self, actor: Actor) -> defer.Deferred[dict[str, Any]]:
        """Check the meters against the ledger and the counted cash boxes, and journal the result; fires
        with the differences and each machine's cash box (the meters' figure, its last count)."""

        def decide(now: int) -> Decided:
            differences = self.reconcile() + self.count_differences()
            return [VbMetersReconciled(machines=tuple(sorted(self.machines)), differences=tuple(differences),
                                       at="command")]

        def shown(records: list[Record]) -> dict[str, Any]:
            reconciled = first_made(records, VbMetersReconciled)
            return {"agree": not reconciled.differences, "differences": list(reconciled.differences),
                    "cash_boxes": self.cash_boxes()}

        return self.core.execute(actor, "vb_reconcile", decide).addCallback(shown)

    def recall_command(self, actor: Actor, machine: str) -> defer.Deferred[list[dict[str, Any]]]:
        def run() -> list[dict[str, Any]]:
            self.core.check_permission(actor, "vb_recall")
            return [play.to_json() for play in self.recall(self.machine(machine).machine_id)]

        return defer.maybeDeferred(run)

    def retire(self, actor: Actor, machine: str, reason: str) -> defer.Deferred[list[Record]]:
        """Retire ``machine``: its stations' credit must be paid out first; its pending jackpot moves
        to an admitted machine of the same model and credit value, journaled with the posting."""

        def decide(now: int) -> Decided:
            known = self.machine(machine)
            why = reason.strip()[:300] if isinstance(reason, str) else ""
            if not why:
                raise VbRefused("reason", N_("say why the machine is retired; it goes into the record"))
            if known.machine_id in self.state.retired:
                raise VbRefused("retired", N_("machine {machine} is already retired"),
                                template_params={"machine": known.machine_id})
            held = sum(self.credit(known.machine_id, s) for s in range(1, known.config.stations + 1))
            if held:
                raise VbRefused("credit", N_("machine {machine}'s stations hold {held}; cash it out first"),
                                template_params={"machine": known.machine_id, "held": Cents(held)})
            pending = self.jackpot(known.machine_id)
            target = None
            if pending:
                candidates = [m for m in self.machines.values() if m.machine_id != known.machine_id
                              and m.config.model == known.config.model
                              and m.config.credit_cents == known.config.credit_cents
                              and m.refused is None and m.machine_id not in self.state.retired]
                if not candidates:
                    raise VbRefused("jackpot", N_(
                        "machine {machine}'s jackpot holds {pending} owed to players; no other machine of model "
                        "{model!r} at {credit} a credit can take it"), template_params={
                            "machine": known.machine_id, "pending": Cents(pending), "model": known.config.model,
                            "credit": Cents(known.config.credit_cents)})
                target = candidates[0].machine_id
            entries: Decided = [VbMachineRetired(machine=known.machine_id, reason=why, jackpot_to=target,
                                                 jackpot_cents=pending)]
            if target is not None:
                posting = Posting.transfer(pending, debit=jackpot_account(known.machine_id),
                                           credit=jackpot_account(target), reason="vb:jackpot moved",
                                           reference=Reference(None, None, self.core.seq + 1))
                self.ledger.check([posting])
                entries += posting_records([posting])
            return entries

        return self.core.execute(actor, "retire_vb_machine", decide)

    # --- The station's requests -----------------------------------------------------

    def _station(self, machine_id: str, station: int) -> Station:
        known = self.state.stations.get(station_key(machine_id, station))
        if known is None or known.token_hash is None:
            raise VbRefused("not_enrolled", f"station {station} of machine {machine_id} is not enrolled",
                            reason="not_enrolled")
        return known

    def sign_in(self, machine_id: str, station: int, account: str) -> defer.Deferred[list[Record]]:
        """The player whose PIN opened ``account`` takes the station (one station only, if so configured)."""

        def decide(now: int) -> Decided:
            self.playable(machine_id)
            known = self._station(machine_id, station)
            number = self.cashier.usable_account(normalize_account_number(account)).number
            if known.account == number:
                return []
            if known.account is not None:
                raise VbRefused("occupied", "another player is signed in on this station; they sign out first",
                                reason="occupied")
            self._responsible(number, 0, now)
            if self.config.one_station_per_player:
                for other in self.state.stations.values():
                    if other.account == number:
                        raise VbRefused("one_station", (
                            f"you are signed in on station {other.station} of machine {other.machine}; a player "
                            "holds one station at a time while others may wait (sign out there first)"),
                            reason="one_station", machine=other.machine, station=other.station)
            return [VbPlayerSignedIn(machine=machine_id, station=station, account=number)]

        return self.core.execute(SYSTEM, "vb_sign_in", decide)

    def sign_out(self, machine_id: str, station: int) -> defer.Deferred[dict[str, Any]]:
        """The signed-in player leaves the station: its whole credit goes back to their account first.

        A station's credit while a player is signed in is that player's (taken from the account,
        put in by them, or won by their plays), so it never stays on a public machine for the next
        person: the same ``vb_credit_out`` to the account as a cash-out, then ``vb_player_signed_out``,
        in one commit.  Fires with ``returned_cents`` and the station's ``credit_cents`` after (0).
        """
        returned: list[int] = []

        def decide(now: int) -> Decided:
            self.machine(machine_id)  # a machine that may not play still returns the credit
            known = self._station(machine_id, station)
            if known.account is None:
                return []
            entries: Decided = []
            amount = self.credit(machine_id, station)
            if amount > 0:
                returned.append(amount)
                entries += self._credit_out_entries(machine_id, station, amount, "account", known.account,
                                                    f"sign-out:{self.core.seq + 1}")
            return [*entries, VbPlayerSignedOut(machine=machine_id, station=station, account=known.account)]

        done = self.core.execute(SYSTEM, "vb_sign_in", decide)
        return done.addCallback(lambda _: {"returned_cents": sum(returned),
                                           "credit_cents": self.credit(machine_id, station)})

    def _responsible(self, account: str, amount_cents: int, now: int) -> None:
        for check in self.credit_checks:
            refusal = check(player_account(account), amount_cents, now)
            if refusal is not None:
                raise VbRefused("responsible_play", refusal, getattr(refusal, "reason", ""),
                                **getattr(refusal, "params", {}))

    def _repeat(self, known: Station, request: object) -> dict[str, Any] | None:
        if not isinstance(request, str) or not 1 <= len(request) <= 64:
            raise VbRefused("request", "every request carries the machine's id for it, 1 to 64 characters",
                            reason="message")
        earlier = known.answers.get(request)
        return None if earlier is None else answer_of(earlier)

    def credit_in(self, machine_id: str, station: int, source: str, amount_cents: object,
                  request: str, note: object = None) -> defer.Deferred[dict[str, Any]]:
        """Put ``amount_cents`` on the station's credit: ``cash`` into the machine, on the cash device's
        signed ``note`` (:class:`~protocol.videobingo.cash.CashNote` as JSON), or from the signed-in account."""
        answer: list[dict[str, Any]] = []

        def decide(now: int) -> Decided:
            self.playable(machine_id)
            known = self._station(machine_id, station)
            earlier = self._repeat(known, request)
            if earlier is not None:
                answer.append(earlier)
                return []
            if isinstance(amount_cents, bool) or not isinstance(amount_cents, int) or not 1 <= amount_cents <= MAX_CREDIT_IN:
                raise VbRefused("amount", f"a credit in is 1 to {MAX_CREDIT_IN} cents, not {amount_cents!r}",
                                reason="amount", max_cents=MAX_CREDIT_IN)
            credit = credit_account(machine_id, station)
            taken: CashNoteTaken | None = None
            if source == "cash":
                account, debit = None, cash_box(machine_id)
                taken = self._cash_note(machine_id, station, amount_cents, note)
            elif source == "account":
                if known.account is None:
                    raise VbRefused("not_signed_in", "sign in with your account and PIN to take credit from it",
                                    reason="sign_in_to_take")
                account, debit = known.account, player_account(known.account)
                held = self.ledger.balance(debit)
                if amount_cents > held:
                    raise VbRefused("no_credit", (
                        f"your account holds {format_cents(held)}; it cannot put {format_cents(amount_cents)} on the machine"),
                        reason="account_short", held_cents=held, amount_cents=amount_cents)
                self._responsible(known.account, amount_cents, now)
            else:
                raise VbRefused("source", (
                    f"a station puts credit in as cash (its cash device's signed note) or from the account, not {source!r}"),
                    reason="message")
            meters = self.meters(machine_id).plus(credits_in=amount_cents, cash_in=amount_cents if source == "cash" else 0)
            posting = Posting.transfer(amount_cents, debit=debit, credit=credit, reason=f"vb:credit in ({source})",
                                       reference=Reference(None, None, self.core.seq + 1))
            self.ledger.check([posting])
            return [VbCreditIn(machine=machine_id, station=station, source=source, account=account, amount=amount_cents,
                               request=request, meters=meters.recorded(), note=taken),
                    *posting_records([posting])]

        return self._answered(machine_id, station, request, "vb_credit", decide, answer)

    def _cash_note(self, machine_id: str, station: int, amount_cents: int, note: object) -> CashNoteTaken:
        """The note of a credit in cash, as its record keeps it, once it holds; else :class:`VbRefused`.

        It must be signed by the machine's enrolled cash device, for this station and this
        amount, with a counter above every note of that device already credited.
        """
        device = self.state.devices.get(machine_id)
        if note is None:
            raise VbRefused("cash_device", (
                "cash put into the machine is credited only on its cash device's signed note, which this station did "
                "not send; cash handed to the staff is put on at the cash desk"), reason="cash_note")
        if device is None:
            raise VbRefused("cash_device", (
                f"machine {machine_id} has no cash device enrolled, so no cash is credited at it; the room chief enrols "
                "its bill validator's key (enrol_vb_cash_device), or the cash is put on at the cash desk"),
                reason="no_cash_device")
        try:
            taken = CashNote.from_json(note)
        except CashNoteError as error:
            raise VbRefused("cash_note", str(error), reason="cash_note") from None
        if (taken.machine, taken.station, taken.amount_cents) != (machine_id, station, amount_cents):
            raise VbRefused("cash_note", (
                f"the cash note is for {format_cents(taken.amount_cents)} on {taken.machine}.{taken.station}, not "
                f"{format_cents(amount_cents)} on {machine_id}.{station}"), reason="cash_note")
        if not taken.signed_by(device.public_key):
            raise VbRefused("cash_signature", (
                f"the cash note is not signed by machine {machine_id}'s cash device (key {device.fingerprint}): "
                "nothing is credited; call the staff"), reason="cash_note")
        last = device.last_counters.get(station, 0)
        if taken.counter <= last:
            raise VbRefused("cash_replay", (
                f"cash note {taken.counter} of station {machine_id}.{station}'s cash device is not after note {last}, "
                "already credited: a note is credited once, in order"), reason="cash_note")
        return CashNoteTaken(key=device.fingerprint, counter=taken.counter, nonce=taken.nonce, signature=taken.signature)

    def desk_credit_in(self, actor: Actor, machine: str, station: int, amount_cents: int,
                       desk: str) -> defer.Deferred[dict[str, Any]]:
        """Cash the player hands over at the cash desk ``desk``, put on a station's credit by the desk's holder.

        The cash goes into the desk's drawer (``cash:<desk>`` -> the station's credit), counted
        at the desk's reconciliation; the machine's meters count it as a credit in, not as cash
        into its box.  Fires with the credit after it.
        """
        request = actor.request or f"desk-{self.core.seq + 1}"

        def decide(now: int) -> Decided:
            known_machine = self.playable(machine)
            if isinstance(station, bool) or not isinstance(station, int) or not 1 <= station <= known_machine.config.stations:
                raise VbRefused("station", N_("machine {machine} has stations 1 to {stations}, not {station!r}"),
                                template_params={"machine": machine, "stations": known_machine.config.stations,
                                                 "station": station})
            if isinstance(amount_cents, bool) or not isinstance(amount_cents, int) or not 1 <= amount_cents <= MAX_CREDIT_IN:
                raise VbRefused("amount", N_("a credit in is 1 to {most} cents, not {amount!r}"),
                                template_params={"most": MAX_CREDIT_IN, "amount": amount_cents})
            try:
                drawer = self.cashier.desk_in_hand(actor, desk)
            except CashierError as error:  # the desk's own sentence, a template of the catalog where it is one
                if error.template is None:
                    raise VbRefused("desk", str(error)) from None
                raise VbRefused("desk", error.template, template_params=error.template_params) from None
            meters = self.meters(machine).plus(credits_in=amount_cents)
            posting = Posting.transfer(amount_cents, debit=cash_account(drawer.name),
                                       credit=credit_account(machine, station), reason="vb:credit in (desk)",
                                       reference=Reference(None, None, self.core.seq + 1))
            self.ledger.check([posting])
            return [VbCreditIn(machine=machine, station=station, source="desk", account=None, amount=amount_cents,
                               request=request, meters=meters.recorded(), desk=drawer.name),
                    *posting_records([posting])]

        def shown(records: list[Record]) -> dict[str, Any]:
            return {"machine": machine, "station": station, "amount_cents": first_made(records, VbCreditIn).amount,
                    "credit_after_cents": self.credit(machine, station)}

        return self.core.execute(actor, "vb_desk_credit", decide).addCallback(shown)

    def count_cash_box(self, actor: Actor, machine: str, counted_cents: int) -> defer.Deferred[dict[str, Any]]:
        """Record the count of ``machine``'s cash box: against the ledger's box and the meters.

        With ``cash_box_counters = 2`` the first count waits for a second person's, who counts
        on their own: the same amount makes the count stand (both named), another is refused and
        both count again.  The difference (counted less what the ledger's box holds) is posted
        to ``over_short:vb-<machine>``, as a cash desk's is.  Fires with the count's figures.
        """

        def decide(now: int) -> Decided:
            known = self.machine(machine).machine_id
            if isinstance(counted_cents, bool) or not isinstance(counted_cents, int) or counted_cents < 0:
                raise VbRefused("amount", N_(
                    "the counted cash is a whole number of cents, zero or more, not {counted!r}"),
                    template_params={"counted": counted_cents})
            counters: tuple[str, ...] = (actor.name,)
            if self.config.cash_box_counters > 1:
                pending = self.state.pending_counts.get(known)
                if pending is None:
                    return [VbCashBoxCountGiven(machine=known, counted=counted_cents)]
                first, amount = pending
                if first == actor.name:
                    raise VbRefused("second_counter", N_(
                        "you gave the first count of machine {machine}'s cash box; a second person counts it too"),
                        template_params={"machine": known})
                if amount != counted_cents:
                    raise VbRefused("counts_differ", N_(
                        "{first} counted {amount} in machine {machine}'s cash box, you {counted}: count it again "
                        "together; {first}'s count waits for a second that agrees"), template_params={
                            "first": first, "amount": Cents(amount), "machine": known, "counted": Cents(counted_cents)})
                counters = (first, actor.name)
            expected = self.ledger.balance(cash_box(known))
            m = self.meters(known)
            difference = counted_cents - expected
            entries: Decided = [VbCashBoxCounted(machine=known, counted=counted_cents, expected=expected,
                                                 meters=m.cash_in - m.cash_out, difference=difference,
                                                 counted_by=counters)]
            if difference:
                short, over = (over_short_account(f"vb-{known}"), cash_box(known))
                posting = (Posting.transfer(-difference, debit=short, credit=over,
                                            reason=f"cash short at machine {known}'s cash box count")
                           if difference < 0 else
                           Posting.transfer(difference, debit=over, credit=short,
                                            reason=f"cash over at machine {known}'s cash box count"))
                self.ledger.check([posting])
                entries += posting_records([posting])
            return entries

        def shown(records: list[Record]) -> dict[str, Any]:
            made = declared(records[0])
            if isinstance(made, VbCashBoxCountGiven):
                return {"machine": made.machine, "counted_cents": made.counted, "stands": False,
                        "waiting_for": "a second person's count"}
            counted = first_made(records, VbCashBoxCounted)
            return {"machine": counted.machine, "counted_cents": counted.counted, "expected_cents": counted.expected,
                    "meters_cents": counted.meters, "difference_cents": counted.difference,
                    "counted_by": list(counted.counted_by), "stands": True}

        return self.core.execute(actor, "vb_count_cash_box", decide).addCallback(shown)

    def enrol_cash_device(self, actor: Actor, machine: str, public_key: str) -> defer.Deferred[dict[str, Any]]:
        """Enrol ``machine``'s cash device by its Ed25519 public key (hex or PEM); a new key replaces the old.

        From then on only notes signed with it put cash on the machine's stations.  Fires with
        the key's fingerprint.
        """

        def decide(now: int) -> Decided:
            known = self.machine(machine).machine_id
            try:
                key = device_public_key(public_key)
            except CashNoteError as error:  # the console says the key's fault in its reader's language
                if error.template is None:
                    raise VbRefused("cash_device", str(error)) from None
                raise VbRefused("cash_device", error.template, template_params=error.template_params) from None
            current = self.state.devices.get(known)
            if current is not None and current.public_key == key:
                raise VbRefused("cash_device", N_("machine {machine}'s cash device {fingerprint} is enrolled already"),
                                template_params={"machine": known, "fingerprint": current.fingerprint})
            return [VbCashDeviceEnrolled(machine=known, public_key=key, fingerprint=fingerprint(key))]

        def shown(records: list[Record]) -> dict[str, Any]:
            enrolled = first_made(records, VbCashDeviceEnrolled)
            return {"machine": enrolled.machine, "fingerprint": enrolled.fingerprint}

        return self.core.execute(actor, "enrol_vb_cash_device", decide).addCallback(shown)

    def credit_out(self, machine_id: str, station: int, destination: str, request: str) -> defer.Deferred[dict[str, Any]]:
        """Pay the station's whole credit to the signed-in account or in cash from the machine's cash box."""
        answer: list[dict[str, Any]] = []

        def decide(now: int) -> Decided:
            self.machine(machine_id)  # a machine that may not play still pays its credit out
            known = self._station(machine_id, station)
            earlier = self._repeat(known, request)
            if earlier is not None:
                answer.append(earlier)
                return []
            amount = self.credit(machine_id, station)
            if amount <= 0:
                raise VbRefused("no_credit", "there is no credit on this station to pay out", reason="nothing_to_pay")
            if destination == "cash":
                if known.unidentified_win is not None:
                    raise VbRefused("identify", (
                        f"this station's credit holds a win of {format_cents(LARGE_WIN_CENTS)} or more (play record "
                        f"{known.unidentified_win}), won without an account: the winner is identified before it is "
                        "paid (R75.6). Sign in with your account and PIN (the cashier opens one with your identity "
                        "document) and pay the credit to it"), reason="identify", large_win_cents=LARGE_WIN_CENTS)
                account = None
                held = self.ledger.balance(cash_box(machine_id))
                if amount > held:
                    raise VbRefused("cash_box", (
                        f"the machine's cash box holds {format_cents(held)}, less than the {format_cents(amount)} "
                        "to pay; pay it to your account, or call the staff"), reason="cash_box", held_cents=held,
                        amount_cents=amount)
            elif destination == "account":
                if known.account is None:
                    raise VbRefused("not_signed_in", "sign in with your account and PIN to pay the credit to it",
                                    reason="sign_in_to_pay")
                account = known.account
            else:
                raise VbRefused("destination", f"credit is paid out in cash or to the account, not {destination!r}",
                                reason="message")
            return self._credit_out_entries(machine_id, station, amount, destination, account, request)

        return self._answered(machine_id, station, request, "vb_credit", decide, answer)

    def _credit_out_entries(self, machine_id: str, station: int, amount: int, destination: str,
                            account: str | None, request: str) -> Decided:
        """The records of ``amount`` cents of the station's credit paid to ``destination``: the
        ``vb_credit_out`` record (with the meters after it) and its posting, once the ledger holds them."""
        target = player_account(account) if account is not None else cash_box(machine_id)
        meters = self.meters(machine_id).plus(credits_out=amount, cash_out=amount if destination == "cash" else 0)
        posting = Posting.transfer(amount, debit=credit_account(machine_id, station), credit=target,
                                   reason=f"vb:credit out ({destination})",
                                   reference=Reference(None, None, self.core.seq + 1))
        self.ledger.check([posting])
        return [VbCreditOut(machine=machine_id, station=station, destination=destination, account=account,
                            amount=amount, request=request, meters=meters.recorded()),
                *posting_records([posting])]

    def play(self, machine_id: str, station: int, cards: object, keep: object, request: str) -> defer.Deferred[dict[str, Any]]:
        """One play of ``cards`` cards, new or kept (``keep``) from the station's previous play.

        Fires, once committed, with the play as the machine shows it (:meth:`PlayShown.to_json`);
        a request id sent again gets the first answer and is never charged twice.
        """
        answer: list[dict[str, Any]] = []

        def decide(now: int) -> Decided:
            machine = self.playable(machine_id)
            known = self._station(machine_id, station)
            earlier = self._repeat(known, request)
            if earlier is not None:
                answer.append(earlier)
                return []
            self.refuse_outside_hours(now)
            return self._decide_play(machine, known, cards, keep, request, now)

        return self._answered(machine_id, station, request, "vb_play", decide, answer)

    def refuse_outside_hours(self, now_ms: int) -> None:
        """Raise :class:`VbRefused` (``closed``) when the hall is closed by its opening hours in force (R74.1)."""
        for check in self.play_checks:
            if (why := check(now_ms)) is not None:
                raise VbRefused("closed", why, getattr(why, "reason", "") or "closed", **getattr(why, "params", {}))

    def _decide_play(self, machine: Machine, known: Station, cards: object, keep: object, request: str,
                     now: int) -> Decided:
        game, paytable, config = machine.game, machine.paytable, machine.config
        if isinstance(cards, bool) or not isinstance(cards, int):
            raise VbRefused("cards", f"the number of cards is a whole number, not {cards!r}", reason="message")
        if not 1 <= cards <= paytable.cards_max:
            raise VbRefused("cards", f"a play holds 1 to {paytable.cards_max} cards on this machine, not {cards}",
                            reason="cards", max=paytable.cards_max)
        if not isinstance(keep, bool):
            raise VbRefused("keep", "say whether to keep the previous play's cards (true or false)", reason="message")
        if keep and not known.cards:
            raise VbRefused("keep", "there is no previous play on this station; take new cards", reason="keep_none")
        if keep and len(known.cards) != cards:
            raise VbRefused("keep", (
                f"the previous play held {len(known.cards)} card(s), not {cards}: keep them all, or take new cards"),
                reason="keep_count", held=len(known.cards), cards=cards)
        stake = cards * config.credit_cents
        credit = credit_account(machine.machine_id, known.station)
        held = self.ledger.balance(credit)
        if stake > held:
            raise VbRefused("no_credit", not_enough_credit(cards, stake, held), reason="credit_short", cards=cards,
                            stake_cents=stake, credit_cents=held)
        outcome = game.play(known.cards if keep else game.deal(cards, self.rng), self.rng)
        won = outcome.won * config.credit_cents
        before = self.meters(machine.machine_id)
        seq = self.core.seq + 1
        ref = Reference(None, None, seq)
        takings = takings_account(machine.machine_id)
        postings = [Posting.transfer(stake, debit=credit, credit=takings, reason="vb:stake", reference=ref)]
        contributions = [0, 0]
        rules = [(machine.machine_id, config.jackpot),
                 (SUPER, self.config.superjackpot if config.linked else None)]
        wins: list[JackpotWin] = []
        for index, (jackpot, rule) in enumerate(rules):
            if rule is None:
                continue
            contributions[index] = share(before.stakes, before.stakes + stake, rule.share_bp)
            if contributions[index]:
                postings.append(Posting.transfer(contributions[index], debit=takings, credit=jackpot_account(jackpot),
                                                 reason="vb:jackpot contribution", reference=ref))
            pattern = next(p for p in paytable.patterns if p.name == rule.pattern)
            cells = [r * paytable.columns + c for r, c in pattern.cells]
            card = complete_within(outcome.cards, outcome.balls, cells, rule.balls)
            pending = self.jackpot(jackpot) + contributions[index]
            if card is not None and pending > 0:
                wins.append(JackpotWin(which="machine" if jackpot != SUPER else SUPER, card=card, cents=pending))
                postings.append(Posting.transfer(pending, debit=jackpot_account(jackpot), credit=credit,
                                                 reason="vb:jackpot won", reference=ref))
        if won:
            postings.append(Posting.transfer(won, debit=takings, credit=credit, reason="vb:prize", reference=ref))
        self.ledger.check(postings)
        meters = before.plus(stakes=stake, prizes=won, plays=1, jackpot_contributions=sum(contributions),
                             jackpot_payouts=sum(w.cents for w in wins))
        return [VbPlay(
            machine=machine.machine_id, station=known.station, number=meters.plays, request=request,
            credit_cents=config.credit_cents, kept=keep, cards=outcome.cards, balls=outcome.balls,
            results=tuple(CardPaid(r.pattern, r.credits) for r in outcome.results),
            stake_cents=stake, won_cents=won, contributions=(contributions[0], contributions[1]), jackpots=tuple(wins),
            meters=meters.recorded(),
        ), *posting_records(postings)]

    def _answered(self, machine_id: str, station: int, request: str, command: str,
                  decide: Callable[[int], Decided], answer: list[dict[str, Any]]) -> defer.Deferred[dict[str, Any]]:
        def committed(records: list[Record]) -> dict[str, Any]:
            if answer:
                return {**answer[0], "repeated": True}
            known = self.state.stations[station_key(machine_id, station)]
            return answer_of(known.answers[request])

        return self.core.execute(SYSTEM, command, decide).addCallback(committed)

    # --- Projection -----------------------------------------------------------------

    def reset(self) -> None:
        self.state = VideoBingoState()

    def savepoint(self) -> Any:
        """What the core's restore point keeps of the machines (see :mod:`server_kit.core`): the
        state's tables copied, with each station's and cash device's own.  What they hold is never
        changed once made (meters are replaced, answers and recalled plays are new objects), so
        copying the tables is enough, where a checkpoint encodes every answer and play (90 ms with
        100 machines, on the reactor, every 10,000 records)."""
        return _copied(self.state)

    def rollback(self, point: Any) -> None:
        """The machines as :meth:`savepoint` kept them (copied again: the core may come back to it)."""
        self.state = _copied(point)

    def apply(self, record: Record) -> None:
        event = declared(record)
        if type(event) not in FOLDED:
            return
        state = self.state
        match event:
            case VbStationEnrolled() as enrolled:
                key = station_key(enrolled.machine, enrolled.station)
                known = state.stations.setdefault(key, Station(enrolled.machine, enrolled.station))
                known.token_hash = enrolled.token_hash
            case VbPlayerSignedIn() as signed_in:
                state.stations[station_key(signed_in.machine, signed_in.station)].account = signed_in.account
            case VbPlayerSignedOut() as signed_out:
                state.stations[station_key(signed_out.machine, signed_out.station)].account = None
            case VbCashDeviceEnrolled() as device:
                state.devices[device.machine] = CashDevice(device.public_key, device.fingerprint)
            case VbCashBoxCountGiven() as given:
                state.pending_counts[given.machine] = (given.who.name, given.counted)
            case VbCashBoxCounted() as counted:
                state.pending_counts.pop(counted.machine, None)
                state.counts[counted.machine] = BoxCount(counted, record.seq)
            case VbCreditIn() as credit_in:
                self._credited(record, credit_in)
            case VbCreditOut() as credit_out:
                self._paid_out(record, credit_out)
            case VbPlay() as play:
                self._played(record, play)
            case VbMachineRetired() as retired:
                state.retired[retired.machine] = retired.reason

    def _credited(self, record: Record, event: VbCreditIn) -> None:
        note, device = event.note, self.state.devices.get(event.machine)
        if note is not None and device is not None and note.key == device.fingerprint:
            device.last_counters[event.station] = max(device.last_counters.get(event.station, 0), note.counter)
        cash = event.amount if event.source == "cash" else 0
        self._meter(record.seq, event.machine, event.meters, {"credits_in": event.amount, "cash_in": cash})
        self._remember(event, {"kind": "credit_in", "seq": record.seq, "amount_cents": event.amount,
                               "credit_after_cents": self._credit_after(event)})

    def _paid_out(self, record: Record, event: VbCreditOut) -> None:
        cash = event.amount if event.destination == "cash" else 0
        self._meter(record.seq, event.machine, event.meters, {"credits_out": event.amount, "cash_out": cash})
        credit_after = self._credit_after(event)
        known = self.state.stations.get(station_key(event.machine, event.station))
        if known is not None:
            known.unidentified_win = None  # paid to an account: its holder is the winner
        self._remember(event, {"kind": "credit_out", "seq": record.seq, "amount_cents": event.amount,
                               "credit_after_cents": credit_after})

    def _played(self, record: Record, event: VbPlay) -> None:
        jackpots = sum(j.cents for j in event.jackpots)
        self._meter(record.seq, event.machine, event.meters, {
            "stakes": event.stake_cents, "prizes": event.won_cents, "plays": 1,
            "jackpot_contributions": sum(event.contributions), "jackpot_payouts": jackpots,
        })
        shown = PlayShown(
            record.seq, event.machine, event.station, event.number, record.time_ms, event.credit_cents,
            event.cards, event.balls, event.results, event.stake_cents, event.won_cents, event.jackpots,
            self._credit_after(event),
        )
        self.state.recall.setdefault(event.machine, deque(maxlen=RECALLED_PLAYS)).append(shown)
        known = self.state.stations.get(station_key(event.machine, event.station))
        if known is not None:
            known.cards = shown.cards
            if known.account is None and event.won_cents + jackpots >= LARGE_WIN_CENTS:
                known.unidentified_win = record.seq
            elif shown.credit_after == 0:
                known.unidentified_win = None  # the credit that held the win is played away
        self._remember(event, shown)

    def _credit_after(self, event: VbCreditIn | VbCreditOut | VbPlay) -> int:
        """The station's credit once the record's postings are folded: the record's own change is
        worked out from the record, since its postings follow it."""
        now = self.ledger.balance(credit_account(event.machine, event.station))
        match event:
            case VbCreditIn():
                return now + event.amount
            case VbCreditOut():
                return now - event.amount
        return now - event.stake_cents + event.won_cents + sum(j.cents for j in event.jackpots)

    def _meter(self, seq: int, machine_id: str, recorded: Meters, change: Mapping[str, int]) -> None:
        """Fold a record's ``change`` into the machine's meters; a record whose ``recorded`` meters
        disagree with the fold leaves the machine unreadable (a fault)."""
        state = self.state
        after = state.meters.get(machine_id, MeterCounts()).plus(**change)
        state.meters[machine_id] = after
        if not after.agree(recorded) and machine_id not in state.faults:
            state.faults[machine_id] = (
                f"record {seq} says its meters are {recorded.to_json()}, the journal's records "
                f"before it make them {after.to_dict()}")

    def _remember(self, event: VbCreditIn | VbCreditOut | VbPlay, answer: PlayShown | dict[str, Any]) -> None:
        known = self.state.stations.get(station_key(event.machine, event.station))
        if known is None:
            return
        known.answers[event.request] = answer
        while len(known.answers) > REMEMBERED_REQUESTS:
            del known.answers[next(iter(known.answers))]


__all__ = [
    "DEFAULT_MIN_RTP_BP",
    "JackpotRule",
    "Machine",
    "MachineConfig",
    "MeterCounts",
    "PlayShown",
    "VbConfigError",
    "VbRefused",
    "VideoBingoConfig",
    "VideoBingoModule",
    "admission",
    "load_machines",
]
