"""The hall's ledger as a projection of the journal.

Money moves only through ``posting`` records: each holds one balanced
:class:`protocol.ledger.Posting` (its ``to_dict`` form).  A module that moves money
checks the postings against :attr:`LedgerModule.ledger` while deciding (so an
overdraft is refused before anything is written), returns :func:`posting_entries`
among its entries, and the ledger folds them in when they are committed.
"""

from __future__ import annotations

from typing import Any, Sequence

from protocol.chain import Record
from protocol.ledger import Ledger, Posting, account_kind
from server_kit.core import CommandCore
from server_kit.journal.projection import decode, encode

POSTING = "posting"


def posting_entries(postings: Sequence[Posting]) -> list[tuple[str, dict[str, Any]]]:
    return [(POSTING, posting.to_dict()) for posting in postings]


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

    def checkpoint(self) -> Any:
        return encode(self.ledger)

    def restore(self, data: Any) -> None:
        ledger = decode(data)
        if not isinstance(ledger, Ledger):
            raise TypeError("a ledger's checkpoint holds a ledger")
        self.ledger = ledger

    def apply(self, record: Record) -> None:
        if record.type == POSTING:
            payload = {k: v for k, v in record.payload.items() if k != "actor"}
            self.ledger.post(Posting.from_dict(payload))
