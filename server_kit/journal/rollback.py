"""What the server's peers hold of its journal: a journal behind what it already reported is not served.

A journal verifies against its own key and signed head, so whoever holds the server's
folder and its key can roll it back and it still verifies: an earlier copy of the
folder, or records cut from the end with the head signed again and the checkpoints
deleted.  What the server reported to the outside cannot be rolled back with it: each
peer keeps what it was told, and says it again on every connection -

- the regulator's receiver: the last record of the journal it acknowledged, with its
  hash (the feed's ``position``, :mod:`protocol.regulator_feed`);
- the central server: the furthest record the hall said in a ``hello``, with its hash
  (``hello``'s answer, :mod:`protocol.central_messages`).

:class:`RollbackGuard` checks each against the journal: a peer that holds a record this
journal does not have (the journal is shorter) or has with another hash (the journal was
rewritten from there) means this journal is not the one the server reported, and the
guard calls ``on_rolled_back`` with the sentence once, then raises :class:`RolledBack`
to the link that asked.  The server stops with that fault (docs/security.md, "A hall
rolled back").

A peer that cannot be reached tells nothing: the server serves, and checks at each
peer's next connection (the journal only grows while it serves, so a peer that holds
more then still shows it).
"""

from __future__ import annotations

from typing import Callable

from twisted.logger import Logger

from protocol.errors import DomainError
from server_kit.journal.port import JournalPort

log = Logger()


class RolledBack(DomainError):
    """A peer holds more of this journal than the journal has, or another record: the message says which."""


def behind(journal: JournalPort, peer: str, seq: int, hash: str | None) -> str | None:
    """Why this journal is not the one ``peer`` holds up to record ``seq`` (with ``hash``), or None."""
    if seq <= 0:
        return None
    last = journal.last
    end = last.seq if last is not None else 0
    if seq > end:
        return (f"{peer} holds {seq} records of this journal, reported to it before, but the journal here ends at "
                f"record {end}: the folder was rolled back (an earlier copy of it, or records cut from its end)")
    if hash is not None:
        record = journal.record(seq)
        if record is None or record.hash != hash:
            return (f"{peer} holds record {seq} of this journal with another hash than the record here: the journal "
                    f"was rewritten from there (a folder rolled back and served on)")
    return None


class RollbackGuard:
    """Checks what each peer holds of ``journal`` (:func:`behind`); on the first that disagrees,
    calls ``on_rolled_back`` with the whole sentence and raises :class:`RolledBack`."""

    def __init__(self, journal: JournalPort, on_rolled_back: Callable[[str], None], *,
                 server: str = "the server") -> None:
        self.journal = journal
        self.on_rolled_back = on_rolled_back
        self.server = server
        #: Each peer that confirmed the journal, with the record it holds.
        self.confirmed: dict[str, int] = {}
        #: The sentence, once a peer disagreed.
        self.fault: str | None = None

    def held(self, peer: str, seq: int, hash: str | None) -> None:
        """``peer`` holds this journal up to record ``seq`` (its ``hash``, when it says it)."""
        reason = behind(self.journal, peer, seq, hash)
        if reason is None and self.fault is None:
            if peer not in self.confirmed:
                log.info("{peer} holds this journal up to record {seq}: the journal here has it", peer=peer, seq=seq)
            self.confirmed[peer] = seq
            return
        if self.fault is None:
            self.fault = f"{reason}; {self.server} does not serve on it (docs/security.md)"
            self.on_rolled_back(self.fault)
        raise RolledBack(self.fault)


__all__ = ["RollbackGuard", "RolledBack", "behind"]
