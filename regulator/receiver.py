"""The receiver's checks of a feed (R92.7, R95; docs/regulator-feed.md "What the receiver checks").

:class:`Receiver` is handed what a connection says (``hello``, then ``batch`` after
``batch``) and the identity the sender's certificate proved; it answers with the
``position`` and the ``ack`` of :mod:`protocol.regulator_feed`.  A sender is taken
only when the regulator registered it (:mod:`regulator.senders`), and its records are
checked against the journal key registered for it, never against a key it says itself.
Each record is checked first against that key, before it is compared with anything
(a record the key did not sign says nothing, not even which record it claims to be),
then against the record stored before it, in this order, and the first fault stops the
batch there (nothing after it is stored; the sender will send it again and the alert is
not raised twice):

``bad_signature``  its hash or its Ed25519 signature does not verify (altered or forged);
``broken_chain``   a record already stored comes again, signed, with other content
                   (rewritten), or its ``prev`` is not the hash of the record before it;
``gap``            the record is not the one after the last stored (a record dropped);
``secret_held``    it holds a secret (a PIN's or a token's hash) instead of its
                   commitment: the receiver keeps no secret (a sender sends records in
                   their sealed form, :func:`protocol.chain.sealed_form`);
``fenced_epoch``   its leadership ``epoch`` is below the highest epoch of the sender's
                   records before it: written by a central server process another had
                   overtaken (:meth:`Receiver.fenced`; records without an epoch, a
                   hall's, never are);
``key_changed``    the sender said another journal key than the one registered for it
                   (the connection is refused: its records are not checked against it);
``not_registered`` a sender whose certificate is good but whom the regulator has not
                   registered said hello (refused);
``clock_backwards`` its ``time_ms`` is before the record before it: the record is
                   authentic and is stored, the alert flags the clock;
``replay_differs`` a hall's finished game whose balls, winners or payments its own
                   records do not reproduce (:mod:`regulator.games`);
``report_unverified`` a signed report sent whose signatures do not all verify
                   (:mod:`regulator.reports`);
``audit_differs``  a day's audit export, signed by its sender, that is not what the records
                   held say, or whose replay does not reproduce its result: a winning card
                   that does not hold its pattern, a prize that does not follow from the
                   sales (:mod:`regulator.days`);
``audit_not_replayed`` a day its sender sent as refused: its export could not be made (a
                   day the replay format cannot express, or too large for one report),
                   so nothing of it was replayed card by card (:mod:`regulator.days`).

A record sent again exactly as stored (its ack was lost) is skipped silently.  Alerts
are limited per sender: once an alert of a kind is raised, more of that kind from the
same sender within :data:`ALERT_WINDOW_MS` are counted on it (``repeats``, the last
record named) rather than raised one by one.  The highest epoch of each sender is kept
as its records are stored, and taken again at its hello from the last record stored
(every central record after the first ``central_leadership_taken`` carries one).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from protocol.chain import Record
from protocol.errors import DomainError
from protocol.records import EPOCH_KEY, RecordError, parse
from protocol.records.clock import ClockStepped
from protocol.records.secrets import secrets_held
from protocol.regulator_feed import Ack, Batch, Hello, Position
from regulator.days import AUDIT_DIFFERS, AUDIT_NOT_REPLAYED, AuditDays
from regulator.games import HallGames
from regulator.senders import RegisteredSender, RegistryError, key_pem, same_key
from regulator.store import Alert, Store
from regulator.store import Position as StorePosition
from server_kit.journal import table
from server_kit.journal.port import JournalPort

GAP, BAD_SIGNATURE, BROKEN_CHAIN, FENCED_EPOCH, KEY_CHANGED, CLOCK_BACKWARDS, REPLAY_DIFFERS, REPORT_UNVERIFIED = (
    "gap", "bad_signature", "broken_chain", "fenced_epoch", "key_changed", "clock_backwards", "replay_differs",
    "report_unverified",
)  # fmt: skip
SECRET_HELD, NOT_REGISTERED = "secret_held", "not_registered"
#: The sender journaled that its own wall clock stepped (``clock_stepped``): its records' times
#: never go back, so this, not ``clock_backwards``, is how a step of its clock shows.
CLOCK_STEPPED = ClockStepped.type
ALERT_KINDS = (GAP, BAD_SIGNATURE, BROKEN_CHAIN, FENCED_EPOCH, KEY_CHANGED, CLOCK_BACKWARDS, CLOCK_STEPPED,
               REPLAY_DIFFERS, REPORT_UNVERIFIED, AUDIT_DIFFERS, AUDIT_NOT_REPLAYED, SECRET_HELD, NOT_REGISTERED)
#: Within this long after an alert is raised, more of its kind from its sender are counted on it.
ALERT_WINDOW_MS = 60_000
#: Who is registered: the registration of a sender, or None (:meth:`regulator.senders.SenderRegistry.get`).
Registered = Callable[[str], RegisteredSender | None]


class FeedRefused(DomainError):
    """A connection the receiver will not take records from; the message says why."""


@dataclass
class _Sender:
    key: Ed25519PublicKey
    seq: int
    hash: str
    time_ms: int
    epoch: int | None  # the highest leadership epoch of its records stored (None: none carried one)


def record_epoch(record: Record) -> int | None:
    """The leadership epoch ``record`` was written under (a central server's records), or None."""
    epoch = record.payload.get(EPOCH_KEY)
    return epoch if type(epoch) is int else None


def load_key(pem: str, sender: str) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(pem.encode())
    except ValueError:
        raise FeedRefused(f"{sender}: the hello's public_key is not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise FeedRefused(f"{sender}: the hello's public_key is not an Ed25519 key")
    return key


class Receiver:
    """``journal``: the receiver's own signed journal, where each alert is recorded once, in
    the transaction that stores it (None: the alerts are stored only).  A ``read_only``
    receiver (``bingo regulator status``) folds and checks what the store holds and raises
    nothing: the faults it finds are in the games it answers, and only the serving
    receiver records an alert.  ``home``: the receiver's folder, where the signed reports
    are kept (the days' audit exports waiting for their records are taken again from it
    after a start)."""

    def __init__(self, store: Store, clock: Callable[[], int], journal: JournalPort | None = None,
                 read_only: bool = False, home: Path | None = None,
                 registered: Registered = lambda sender: None) -> None:
        self.store = store
        self.clock = clock
        self.journal = journal
        self.read_only = read_only
        self.registered = registered
        self._senders: dict[str, _Sender] = {}
        #: The last alert raised of each (sender, kind), while its window lasts.
        self._raised: dict[tuple[str, str], Alert] = {}
        #: Each hall's games, folded from its stored records (rebuilt at the first hello after a start).
        self.games: dict[str, HallGames] = {}
        #: Each day's audit export, replayed card by card on the records held.
        self.days = AuditDays(store, clock, self.alert, None if read_only else journal,
                              journal.records if journal is not None else lambda: table.read(store.engine), home)

    def alert(self, sender: str, kind: str, seq: int, detail: str) -> None:
        """Raise an alert once per (sender, kind, record); within :data:`ALERT_WINDOW_MS` of the last
        of its kind from its sender, count it on that one instead."""
        if self.read_only:
            return
        alert = Alert(sender, kind, seq, detail, self.clock())
        if self.store.has_alert(alert):
            return  # raised once: a sender sending the same fault again is not news
        last = self._raised.get((sender, kind))
        if last is not None and 0 <= alert.time_ms - last.time_ms < ALERT_WINDOW_MS:
            self.store.repeat_alert(last, seq, alert.time_ms)
            return
        self._raised[(sender, kind)] = alert
        if self.journal is None:
            self.store.raise_alert(alert)
            return
        entry = ("feed_alert_raised", {"sender": sender, "kind": kind, "seq": seq, "detail": detail})
        self.journal.append(alert.time_ms, [entry], extra=lambda db: self.store.insert_alert(db, alert))

    def hello(self, hello: Hello, certified: str) -> Position:
        """Where ``hello.sender``'s feed stands; :class:`FeedRefused` for another identity, a sender
        the regulator has not registered, or another key than the one registered for it."""
        sender = hello.sender
        if sender != certified:
            raise FeedRefused(f"the certificate is {certified}'s: it may not feed {sender}")
        self._senders.pop(sender, None)
        try:
            registered = self.registered(sender)
        except RegistryError as error:
            raise FeedRefused(f"{sender} cannot be taken: the receiver's register of senders is unreadable: "
                              f"{error}") from None
        if registered is None:
            self.alert(sender, NOT_REGISTERED, 0, f"{sender} presented a good certificate and said hello, but the "
                       "regulator has not registered it (bingo regulator register-sender)")
            raise FeedRefused(f"{sender} is not registered with this receiver: the regulator registers its journal key "
                              f"first (bingo regulator register-sender {sender} --journal-key FILE)")
        said = load_key(hello.public_key, sender)
        if not same_key(registered.journal_key, said):
            held = self.store.position(sender)
            seq = held.seq if held is not None else 0
            self.alert(sender, KEY_CHANGED, seq + 1,
                       f"{sender} said a journal key that is not the one registered for it (after record {seq})")
            raise FeedRefused(f"{sender} said another journal key than the one the regulator registered for it")
        position = self.store.position(sender)
        if position is None or not same_key(position.public_key, registered.key):
            position = self._take_key(sender, registered, position)
        last = self.store.record(hello.sender, position.seq) if position.seq else None
        self._senders[hello.sender] = _Sender(
            load_key(position.public_key, hello.sender), position.seq, position.hash, position.time_ms,
            record_epoch(last) if last is not None else None,
        )
        self.games_of(hello.sender)
        self.days.stored(hello.sender, position.seq)  # a day that waited for records held before a restart
        return Position(hello.sender, position.seq, position.hash if position.seq else None)

    def _take_key(self, sender: str, registered: RegisteredSender, held: StorePosition | None) -> StorePosition:
        """The registered key is the one ``sender``'s records are checked against from now on: journaled."""
        pem = key_pem(registered.key)
        after = held.seq if held is not None else 0
        if self.journal is None or self.read_only:
            self.store.take_key(None, sender, pem)
        else:
            entry = ("feed_sender_registered", {"sender": sender, "journal_key": pem, "after_seq": after,
                                                "report_signers": list(registered.report_signers)})
            self.journal.append(self.clock(), [entry], extra=lambda db: self.store.take_key(db, sender, pem))
        position = self.store.position(sender)
        assert position is not None
        return position

    def games_of(self, sender: str) -> HallGames | None:
        """The hall ``sender``'s checked games (None for the central server), folded once from the store."""
        if not sender.startswith("hall:"):
            return None
        games = self.games.get(sender)
        if games is None:
            games = self.games[sender] = HallGames(lambda seq, detail: self.alert(sender, REPLAY_DIFFERS, seq, detail))
            games.fold(self.store.records(sender))
        return games

    def fenced(self, sender: str, record: Record, highest: int | None) -> bool:
        """Whether ``record`` comes from a fenced epoch: its epoch is below ``highest``, the highest of
        ``sender``'s records before it; the ``fenced_epoch`` alert is raised then.

        A central server process whose leadership another process took over is fenced
        by the central database; a record of its epoch reaching the feed after a later
        epoch's means that fence did not hold.  A record without an epoch is never fenced.
        """
        epoch = record_epoch(record)
        if epoch is None or highest is None or epoch >= highest:
            return False
        self.alert(sender, FENCED_EPOCH, record.seq,
                   f"record {record.seq} was written under leadership epoch {epoch}, after records of epoch "
                   f"{highest}: a central server process that was fenced wrote it")
        return True

    def batch(self, batch: Batch, certified: str) -> Ack:
        """Check and store ``batch``'s records up to the first fault; the ack of what is stored."""
        if batch.sender != certified:
            raise FeedRefused(f"the certificate is {certified}'s: it may not feed {batch.sender}")
        state = self._senders.get(batch.sender)
        if state is None:
            raise FeedRefused(f"{batch.sender} sent records before its hello")
        accepted, epoch = self._check(batch.sender, state, batch.records)
        self.store.store(batch.sender, accepted)
        if accepted:
            last = accepted[-1]
            state.seq, state.hash, state.time_ms, state.epoch = last.seq, last.hash, last.time_ms, epoch
            games = self.games_of(batch.sender)
            if games is not None:
                games.fold(accepted)
            self.days.stored(batch.sender, state.seq)
        return Ack(batch.sender, state.seq)

    def _check(self, sender: str, state: _Sender, records: Sequence[Record]) -> tuple[list[Record], int | None]:
        """The records that pass, up to the first fault, and the highest epoch once they are stored."""
        accepted: list[Record] = []
        seq, prev, time_ms, epoch = state.seq, state.hash, state.time_ms, state.epoch
        for record in records:
            # First the signature: a record the sender's key did not sign is compared with nothing.
            data = record.body
            try:
                if hashlib.sha256(data).hexdigest() != record.hash:
                    raise InvalidSignature
                state.key.verify(bytes.fromhex(record.signature), data)
            except (InvalidSignature, ValueError):
                self.alert(sender, BAD_SIGNATURE, record.seq,
                           f"record {record.seq}: its hash or signature does not verify against the key registered "
                           f"for {sender} (altered or forged)")
                break
            if record.seq <= seq:
                if not self._same_as_stored(sender, record, accepted):
                    self.alert(sender, BROKEN_CHAIN, record.seq,
                               f"record {record.seq} came again, signed, with other content than stored (rewritten)")
                    break
                continue
            if record.seq != seq + 1:
                self.alert(sender, GAP, seq + 1, f"record {seq + 1} is missing: the feed jumps from {seq} to {record.seq}")
                break
            if record.prev != prev:
                self.alert(sender, BROKEN_CHAIN, record.seq,
                           f"record {record.seq} does not follow record {seq} (inserted, removed or reordered)")
                break
            held = secrets_held(record.type, record.payload)
            if held:
                self.alert(sender, SECRET_HELD, record.seq,
                           f"record {record.seq} ({record.type}) holds a secret ({', '.join(held)}) rather than its "
                           "commitment: the receiver keeps no secret, and does not store it")
                break
            if self.fenced(sender, record, epoch):
                break
            if record.time_ms < time_ms:
                self.alert(sender, CLOCK_BACKWARDS, record.seq,
                           f"record {record.seq} is dated {record.time_ms} ms, before record {seq} ({time_ms} ms)")
            if record.type == CLOCK_STEPPED:
                self._clock_stepped(sender, record)
            accepted.append(record)
            seq, prev, time_ms = record.seq, record.hash, record.time_ms
            carried = record_epoch(record)
            if carried is not None and (epoch is None or carried > epoch):
                epoch = carried
        return accepted, epoch

    def _clock_stepped(self, sender: str, record: Record) -> None:
        try:
            step = parse(record)
        except RecordError as error:
            detail = f"record {record.seq} says the sender's clock stepped, in a form this receiver cannot read ({error})"
        else:
            assert isinstance(step, ClockStepped)
            detail = f"record {record.seq}: {step.describe()}"
        self.alert(sender, CLOCK_STEPPED, record.seq, detail)

    def _same_as_stored(self, sender: str, record: Record, accepted: list[Record]) -> bool:
        for earlier in accepted:
            if earlier.seq == record.seq:
                return earlier.hash == record.hash and earlier.signature == record.signature
        stored = self.store.record(sender, record.seq)
        return stored is not None and stored.hash == record.hash and stored.signature == record.signature

