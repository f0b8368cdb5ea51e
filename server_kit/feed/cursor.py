"""Where a server's feed to the regulator stands, and what it sends next (docs/regulator-feed.md).

:class:`FeedCursor` holds no connection: the link (over mutual TLS, reconnecting by
itself) hands it what the receiver says and sends what it returns.  On every
connection it starts from the receiver's ``position``, never from its own memory, so
after an outage of either side it sends from the last acknowledged record, in order:
no record is skipped, and a record sent twice (its ack lost) is one the receiver
already holds and skips.  Records go in their sealed form: no secret (a PIN's or a
token's hash) leaves the server, only its commitment, which the signature covers.
One batch is in flight at a time: the link sends the next
after the ack of the last.  :attr:`FeedCursor.lag` is how many committed records the
receiver has not acknowledged; :meth:`FeedCursor.status` is the ``feed`` status the
consoles show.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Any

from protocol.chain import Record, sealed_form
from protocol.regulator_feed import MAX_BATCH, Ack, Batch, Hello, Position
from server_kit.journal.port import JournalPort


class FeedProtocolError(Exception):
    """The receiver said something that cannot be: an ack beyond what was sent, another sender."""


@dataclass
class FeedStatus:
    connected: bool
    committed: int
    acked: int | None

    @property
    def lag(self) -> int | None:
        return None if self.acked is None else self.committed - self.acked

    def to_dict(self) -> dict[str, Any]:
        return {"connected": self.connected, "committed": self.committed, "acked": self.acked, "lag": self.lag}

    def line(self) -> str:
        """One line for a console: ``feed: connected, acknowledged 41 of 42 (lag 1)``."""
        if self.acked is None:
            return f"feed: {'connected' if self.connected else 'not connected'}, {self.committed} records, none acknowledged yet"
        state = "connected" if self.connected else "not connected"
        return f"feed: {state}, acknowledged {self.acked} of {self.committed} (lag {self.lag})"


class FeedCursor:
    def __init__(self, journal: JournalPort, sender: str, public_key_pem: str, batch: int = MAX_BATCH) -> None:
        if not 1 <= batch <= MAX_BATCH:
            raise ValueError(f"a batch holds 1 to {MAX_BATCH} records, not {batch}")
        self.journal = journal
        self.sender = sender
        self.public_key_pem = public_key_pem
        self.batch_size = batch
        self.connected = False
        #: The last seq the receiver acknowledged (None until it said where it stands).
        self.acked: int | None = None
        #: The last seq sent on this connection.
        self.sent = 0

    def connect(self) -> Hello:
        """A new connection: its ``hello``; nothing is sent until the receiver's position."""
        self.connected, self.sent = True, 0
        return Hello(self.sender, self.public_key_pem)

    def disconnect(self) -> None:
        self.connected = False

    def position(self, position: Position) -> None:
        self._check(position.sender)
        committed = self.committed
        if position.acked > committed:
            raise FeedProtocolError(
                f"the receiver holds {position.acked} records of {self.sender} but the journal has {committed}"
            )
        self.acked = self.sent = position.acked

    def next_batch(self) -> Batch | None:
        """The next records to send (after those already sent on this connection), or None.

        Each in its sealed form: a secret it holds is sent as its commitment, never itself
        (:func:`protocol.chain.sealed_form`; the same hash and signature).  It reads the
        journal where it is called: the link never calls it, it reads through the server's
        blocking runner instead (:meth:`sending_from`, then :meth:`read_after` off the
        reactor, then :meth:`sending`)."""
        after = self.sending_from()
        return None if after is None else self.sending(after, self.read_after(after))

    def sending_from(self) -> int | None:
        """After which record the next batch starts, or None when nothing may be sent now."""
        if not self.connected or self.acked is None:
            return None
        return self.sent

    def read_after(self, after: int) -> tuple[Record, ...]:
        """Up to a batch of records after ``after``, sealed: a read of the journal alone, which changes
        nothing here (the link runs it off the reactor)."""
        return tuple(sealed_form(r) for r in islice(self.journal.records(after), self.batch_size))

    def sending(self, after: int, records: tuple[Record, ...]) -> Batch | None:
        """The batch of ``records`` read after ``after``, now counted as sent; None when there are none, or
        when the connection moved on while they were read (they are read again from where it stands)."""
        if not records or self.sending_from() != after:
            return None
        self.sent = records[-1].seq
        return Batch(self.sender, records)

    def ack(self, ack: Ack) -> None:
        self._check(ack.sender)
        if ack.seq > self.sent:
            raise FeedProtocolError(f"the receiver acknowledged {ack.seq} but only {self.sent} were sent")
        if self.acked is not None and ack.seq < self.acked:
            raise FeedProtocolError(f"the receiver acknowledged {ack.seq} after {self.acked}")
        self.acked = ack.seq
        # A receiver that stored less than was sent refused a record: start again after what it holds.
        self.sent = ack.seq

    @property
    def committed(self) -> int:
        last = self.journal.last
        return last.seq if last is not None else 0

    @property
    def lag(self) -> int | None:
        return self.status().lag

    def status(self) -> FeedStatus:
        return FeedStatus(self.connected, self.committed, self.acked)

    def _check(self, sender: str) -> None:
        if sender != self.sender:
            raise FeedProtocolError(f"the receiver answered for {sender}, not {self.sender}")
