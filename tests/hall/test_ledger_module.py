"""Money moves only through committed posting records (DESIGN.md: money, journal)."""

import pytest

from hall_server.hall.ledger import LedgerModule, posting_records
from hall_server.hall.roles import Role
from protocol.ledger import Overdraft, Posting
from server_kit.core import Actor, CommandCore
from tests.hall.conftest import result

CASHIER = Actor("eva", Role.CASHIER)


@pytest.mark.req("R93.2-4", "R93.7")
def test_postings_commit_then_count_and_overdrafts_are_refused_before_writing(core: CommandCore, journal) -> None:
    ledger = LedgerModule(core)
    core.allow({"load": {Role.CASHIER}})
    load = Posting.transfer(5000, debit="cash:desk1", credit="player:P1", reason="credit loaded")
    result(core.execute(CASHIER, "load", lambda now: posting_records([load])))
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


def test_a_ledger_restored_from_its_checkpoint_makes_its_postings_only_when_read(core: CommandCore, journal) -> None:
    """The balances come back at once; the postings in their journal form, built into
    postings the first time the list is read, with those made since behind them."""
    ledger = LedgerModule(core)
    core.allow({"load": {Role.CASHIER}})
    first = Posting.transfer(5000, debit="cash:desk1", credit="player:P1", reason="credit loaded")
    result(core.execute(CASHIER, "load", lambda now: posting_records([first])))
    restored = LedgerModule(CommandCore(journal, core.clock, core.run_blocking))
    restored.restore(ledger.checkpoint())
    assert restored.balance("player:P1") == 5000
    later = Posting.transfer(1000, debit="player:P1", credit="cash:desk1", reason="cash out")
    restored.ledger.post(later)
    ledger.ledger.post(later)
    assert restored.checkpoint() == ledger.checkpoint()
    assert restored.ledger.postings == (first, later) == ledger.ledger.postings
    assert restored.checkpoint() == ledger.checkpoint()
