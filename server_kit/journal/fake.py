"""An in-memory journal for the unit tests of the layers above the journal.

It seals records exactly as the SQL journal does (each entry built through its
declaration in :mod:`protocol.records`, then hash and link, and the Ed25519 signature
as it is committed), so what a
module folds from it is what it would fold from the real one; it keeps them in
a list and forgets them with the process.  ``fail_next`` makes the next append fail
before anything is kept, as a failed commit would.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.chain import Record, sign_head, signed, verify_chain
from protocol.records import JournalRecord, seal_entries
from server_kit.journal.port import Entry


class FakeJournal:
    def __init__(self, key: Ed25519PrivateKey | None = None) -> None:
        self.key = key or Ed25519PrivateKey.generate()
        self.kept: list[Record] = []
        self.last: Record | None = None
        self.fail_next: Exception | None = None

    def seal(self, time_ms: int, entries: Sequence[Entry | JournalRecord], after: Record | None) -> list[Record]:
        return seal_entries(None, after, time_ms, entries)

    def commit(self, records: Sequence[Record], extra: Callable[[Any], None] | None = None) -> list[Record]:
        if self.fail_next is not None:
            failure, self.fail_next = self.fail_next, None
            raise failure
        if records and records[0].seq != (self.last.seq + 1 if self.last else 1):
            raise ValueError(f"record {records[0].seq} does not follow the fake journal's last record")
        kept = signed(self.key.sign, records)
        self.kept.extend(kept)
        if kept:
            self.last = kept[-1]
        return kept

    def append(
        self, time_ms: int, entries: Sequence[Entry | JournalRecord], extra: Callable[[Any], None] | None = None
    ) -> list[Record]:
        return self.commit(self.seal(time_ms, entries, self.last), extra)

    def records(self, after: int = 0) -> Iterator[Record]:
        return iter([r for r in self.kept if r.seq > after])

    def record(self, seq: int) -> Record | None:
        return self.kept[seq - 1] if 1 <= seq <= len(self.kept) else None

    def verify(self, after: tuple[int, str] | None = None) -> int:
        head = sign_head(self.key, self.last) if self.last is not None else None
        return verify_chain(self.records(after[0] if after else 0), self.key.public_key(), head=head,
                            where="the fake journal's head", after=after)
