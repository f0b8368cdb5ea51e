"""Money moves only through committed posting records (DESIGN.md: money, journal)."""

import pytest

from hall_server.hall.ledger import LedgerModule, posting_entries
from hall_server.hall.roles import Role
from protocol.ledger import Overdraft, Posting
from server_kit.core import Actor, CommandCore
from tests.hall.conftest import result

CASHIER = Actor("eva", Role.CASHIER)


@pytest.mark.req("R93.2", "R93.7")
def test_postings_commit_then_count_and_overdrafts_are_refused_before_writing(core: CommandCore, journal) -> None:
    ledger = LedgerModule(core)
    core.allow({"load": {Role.CASHIER}})
    load = Posting.transfer(5000, debit="cash:desk1", credit="player:P1", reason="credit loaded")
    result(core.execute(CASHIER, "load", lambda now: posting_entries([load])))
    assert ledger.balance("player:P1") == 5000 and ledger.ledger.total() == 0
    too_much = Posting.transfer(6000, debit="player:P1", credit="cash:desk1", reason="cash out")
    with pytest.raises(Overdraft):
        ledger.check([too_much])
    fine = Posting.transfer(5000, debit="player:P1", credit="cash:desk1", reason="cash out")
    ledger.check([fine])
    assert ledger.balance("player:P1") == 5000, "a check changes nothing"
    again = CommandCore(journal, core.clock, core.run_blocking)
    rebuilt = LedgerModule(again)
    again.recover()
    assert rebuilt.ledger.balances() == ledger.ledger.balances()
