"""The hall's ledger as a projection of the journal.

Money moves only through ``posting`` records: each holds one balanced
:class:`protocol.ledger.Posting` (its ``to_dict`` form).  A module that moves money
checks the postings against :attr:`LedgerModule.ledger` while deciding (so an
overdraft is refused before anything is written), returns :func:`posting_entries`
among its entries, and the ledger folds them in when they are committed.
"""

from __future__ import annotations

from typing import Any, Iterator, Sequence, SupportsIndex, overload

from protocol.chain import Record
from protocol.ledger import Ledger, Posting, account_kind
from server_kit.core import CommandCore

POSTING = "posting"


def posting_entries(postings: Sequence[Posting]) -> list[tuple[str, dict[str, Any]]]:
    return [(POSTING, posting.to_dict()) for posting in postings]


class _RestoredPostings(list[Posting]):
    """A restored ledger's postings: those of the checkpoint are kept in their journal form
    and made into :class:`Posting` objects only when the list is first read.

    A ledger holds every posting since the hall opened (a hundred thousand in a year),
    and only a game's refund reads them all; a start from a checkpoint does not build
    them, and postings made since are added behind without reading the others.
    """

    def __init__(self, stored: list[Any]) -> None:
        super().__init__()
        self.stored: list[Any] | None = stored

    def made(self) -> "_RestoredPostings":
        if self.stored is not None:
            stored, self.stored = self.stored, None
            super().__setitem__(slice(0, 0), [Posting.from_dict(data) for data in stored])
        return self

    def journal_form(self) -> list[Any]:
        """Every posting as the journal holds it, without making the stored ones."""
        later = [posting.to_dict() for posting in super().__iter__()]
        return ([*self.stored, *later]) if self.stored is not None else later

    def __iter__(self) -> Iterator[Posting]:
        return super(_RestoredPostings, self.made()).__iter__()

    def __len__(self) -> int:
        return super(_RestoredPostings, self.made()).__len__()

    @overload
    def __getitem__(self, index: SupportsIndex) -> Posting: ...

    @overload
    def __getitem__(self, index: slice) -> list[Posting]: ...

    def __getitem__(self, index: SupportsIndex | slice) -> Posting | list[Posting]:
        return super(_RestoredPostings, self.made()).__getitem__(index)


class LedgerModule:
    def __init__(self, core: CommandCore) -> None:
        self.ledger = Ledger()
        core.add_module(self)

    def check(self, postings: Sequence[Posting]) -> None:
        """Raise :class:`protocol.ledger.Overdraft` if ``postings`` cannot all be made now.

        Only the accounts the postings touch are looked at, so a check costs nothing
        like replaying the day's ledger.
        """
        touched: dict[str, int] = {}
        for posting in postings:
            for account, change in posting.signed().items():
                touched[account] = touched.get(account, 0) + change
        probe = Ledger(
            [
                Posting.transfer(self.balance(account), debit=account, credit="house", reason="opening balance")
                if account_kind(account).normal == "debit"
                else Posting.transfer(self.balance(account), debit="house", credit=account, reason="opening balance")
                for account in touched
                # An account that may go negative cannot be overdrawn, so its balance does
                # not matter; and ``house`` cannot open against itself.
                if self.balance(account) > 0 and not account_kind(account).may_go_negative
            ]
        )
        probe.post_all(postings)

    def balance(self, account: str) -> int:
        return self.ledger.balance(account)

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.ledger = Ledger()

    # The ledger's own fields are read here: its checkpoint is the balances and the
    # postings in their journal form, far smaller and quicker than the objects.
    def checkpoint(self) -> Any:
        postings = self.ledger._postings
        stored = (postings.journal_form() if isinstance(postings, _RestoredPostings)
                  else [posting.to_dict() for posting in postings])
        return {"balances": dict(self.ledger._signed), "postings": stored}

    def restore(self, data: Any) -> None:
        balances, stored = data["balances"], data["postings"]
        if not isinstance(balances, dict) or not isinstance(stored, list):
            raise TypeError("a ledger's checkpoint holds its balances and postings")
        ledger = Ledger()
        ledger._signed = {str(account): int(cents) for account, cents in balances.items()}
        ledger._postings = _RestoredPostings(stored)
        self.ledger = ledger

    def apply(self, record: Record) -> None:
        if record.type == POSTING:
            payload = {k: v for k, v in record.payload.items() if k != "actor"}
            self.ledger.post(Posting.from_dict(payload))
