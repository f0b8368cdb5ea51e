"""What a server's modules and command loop need of a journal, whatever stores it.

:class:`server_kit.journal.sql.Journal` is the durable one (a SQL table and a signed
head file); :class:`server_kit.journal.fake.FakeJournal` keeps records in memory for
the unit tests of the layers above.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Mapping, Protocol, Sequence

from sqlalchemy import Connection

from protocol.chain import Record
from protocol.records import JournalRecord

#: One fact to journal: its record type and payload.
Entry = tuple[str, Mapping[str, Any]]


class JournalPort(Protocol):
    """Append sealed records, read them back from a sequence number, verify the chain."""

    last: Record | None

    def append(
        self,
        time_ms: int,
        entries: Sequence[Entry | JournalRecord],
        extra: Callable[[Connection], None] | None = None,
    ) -> list[Record]:
        """Seal ``entries`` after :attr:`last` and append them durably, in one transaction.

        Every entry is built through its declaration (:mod:`protocol.records`) before any
        is sealed: :class:`~protocol.records.RecordError` and nothing written otherwise.
        """
        ...

    def seal(self, time_ms: int, entries: Sequence[Entry | JournalRecord], after: Record | None) -> list[Record]:
        """``entries`` sealed as the records that follow ``after`` (nothing is stored)."""
        ...

    def commit(self, records: Sequence[Record], extra: Callable[[Connection], None] | None = None) -> list[Record]:
        """Durably append records sealed by :meth:`seal` after :attr:`last`, in one transaction;
        returns them as stored, each signed (:meth:`seal` leaves the signature to the commit)."""
        ...

    def records(self, after: int = 0) -> Iterator[Record]:
        """Every record with ``seq > after``, in order."""
        ...

    def record(self, seq: int) -> Record | None:
        """The record ``seq``, or ``None`` when there is none."""
        ...

    def verify(self, after: tuple[int, str] | None = None) -> int:
        """Check every record's hash, link and signature (and the head); the last ``seq``.

        ``after``: a ``(seq, hash)`` already trusted (a verified checkpoint's): only the
        records after it are checked, from it.
        """
        ...
