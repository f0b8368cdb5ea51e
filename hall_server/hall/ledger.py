"""The hall's ledger as a projection of the journal.

Money moves only through ``posting`` records (:class:`protocol.records.cashier.Posting`):
each holds one balanced :class:`protocol.ledger.Posting`.  A module that moves money
checks the postings against :attr:`LedgerModule.ledger` while deciding (so an
overdraft is refused before anything is written), returns :func:`posting_records`
among its entries, and the ledger folds them in when they are committed.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring_ascii as _string
from typing import Any, Iterable, Iterator, Sequence, SupportsIndex, overload

from protocol.chain import Record
from protocol.ledger import Ledger, Leg, Posting, Reference
from protocol.records import declared
from protocol.records.cashier import Posting as PostingRecord
from protocol.records.cashier import PostingReference
from server_kit.core import CommandCore


#: Where a ``posting`` record decided here keeps the :class:`Posting` it was made from, which its
#: fold then posts as it is (a record read from the journal is made into one).
_POSTING = "_ledger_posting"


def posting_records(postings: Sequence[Posting]) -> list[PostingRecord]:
    """The ``posting`` records that journal ``postings``."""
    records = []
    for posting in postings:
        record = PostingRecord(
            debits=tuple((leg.account, leg.amount) for leg in posting.debits),
            credits=tuple((leg.account, leg.amount) for leg in posting.credits),
            reason=posting.reason,
            reference=PostingReference(game_id=posting.reference.game_id, card=posting.reference.card,
                                       event_seq=posting.reference.event_seq),
        )
        record.__dict__[_POSTING] = posting
        records.append(record)
    return records


def ledger_posting(event: PostingRecord) -> Posting:
    """The balanced movement a ``posting`` record holds."""
    kept = event.__dict__.get(_POSTING)
    if kept is not None:
        return kept  # type: ignore[no-any-return]
    reference = event.reference
    return Posting(
        tuple(Leg(account, amount) for account, amount in event.debits),
        tuple(Leg(account, amount) for account, amount in event.credits),
        event.reason,
        Reference(reference.game_id, reference.card, reference.event_seq),
    )


class _KeptPostings(list[Posting]):
    """The ledger's postings, each kept as the compact JSON of its journal form, made into
    :class:`Posting` objects only while the list is read.

    A ledger holds every posting since the hall opened (a hundred thousand in a year), and
    only a game's refund, or a terminal's failure during a game, reads them.  As one string a
    posting takes a third of the memory its objects take (about 240 bytes against 750), and
    a checkpoint writes the strings it finds instead of copying every posting again: the
    ledger no longer grows a checkpoint's copy of the state with each posting of the day.
    :class:`~protocol.ledger.Ledger` reads it by iteration and adds to it with ``extend``;
    the list's own storage stays empty.
    """

    def __init__(self, texts: Iterable[str] = ()) -> None:
        super().__init__()
        self.texts: list[str] = list(texts)

    def append(self, posting: Posting) -> None:
        self.texts.append(_text(posting))

    def extend(self, postings: Iterable[Posting]) -> None:
        self.texts.extend(_text(posting) for posting in postings)

    def __iter__(self) -> Iterator[Posting]:
        return (Posting.from_dict(json.loads(text)) for text in self.texts)

    def __len__(self) -> int:
        return len(self.texts)

    def __bool__(self) -> bool:
        return bool(self.texts)

    @overload
    def __getitem__(self, index: SupportsIndex) -> Posting: ...

    @overload
    def __getitem__(self, index: slice) -> list[Posting]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> Posting | list[Posting]:
        if isinstance(index, slice):
            return [Posting.from_dict(json.loads(text)) for text in self.texts[index]]
        return Posting.from_dict(json.loads(self.texts[index]))


def _text(posting: Posting) -> str:
    """``json.dumps(posting.to_dict(), separators=(",", ":"))``, the same string, written directly (every
    posting of a play or a purchase is kept so: a string is a small fraction of the objects)."""
    ref = posting.reference
    return (f'{{"debits":[{_legs(posting.debits)}],"credits":[{_legs(posting.credits)}],"reason":{_string(posting.reason)},'
            f'"reference":{{"game_id":{_string_or_null(ref.game_id)},"card":{_string_or_null(ref.card)},'
            f'"event_seq":{"null" if ref.event_seq is None else int(ref.event_seq)}}}}}')


def _legs(legs: Sequence[Leg]) -> str:
    return ",".join(f"[{_string(leg.account)},{int(leg.amount)}]" for leg in legs)


def _string_or_null(text: str | None) -> str:
    return "null" if text is None else _string(text)


def _kept_ledger(texts: Iterable[str] = ()) -> Ledger:
    """A ledger that keeps its postings as strings (:class:`_KeptPostings`)."""
    ledger = Ledger()
    ledger._postings = _KeptPostings(texts)
    return ledger


class LedgerModule:
    def __init__(self, core: CommandCore) -> None:
        self.ledger = _kept_ledger()
        core.add_module(self)

    def check(self, postings: Sequence[Posting]) -> None:
        """Raise :class:`protocol.ledger.Overdraft` if ``postings`` cannot all be made now.

        Only the accounts the postings touch are looked at, so a check costs nothing
        like replaying the day's ledger.
        """
        self.ledger.check(postings)

    def balance(self, account: str) -> int:
        return self.ledger.balance(account)

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.ledger = _kept_ledger()

    # The ledger's own fields are read here: its checkpoint is the balances and the
    # postings as the strings it keeps, far smaller and quicker than the objects.
    def checkpoint(self) -> Any:
        postings = self.ledger._postings
        assert isinstance(postings, _KeptPostings)
        # A copy of the list, not of the strings: the writer's thread reads it while more come.
        return {"balances": dict(self.ledger._signed), "postings": list(postings.texts)}

    def restore(self, data: Any) -> None:
        balances, stored = data["balances"], data["postings"]
        if not isinstance(balances, dict) or not isinstance(stored, list) or not all(isinstance(t, str) for t in stored):
            raise TypeError("a ledger's checkpoint holds its balances and its postings' journal form")
        ledger = _kept_ledger(stored)
        ledger._signed = {str(account): int(cents) for account, cents in balances.items()}
        self.ledger = ledger

    def apply(self, record: Record) -> None:
        event = declared(record)
        if isinstance(event, PostingRecord):
            self.ledger.post(ledger_posting(event))
