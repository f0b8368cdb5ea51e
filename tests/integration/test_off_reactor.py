"""scrypt and PDF rendering run off the reactor thread in the hall the composition root builds.

A PIN's hash costs tens of milliseconds and a statement's PDF more; on the reactor
thread either stops every console, terminal and ball meanwhile.  The hall is built by
:func:`hall_server.tap.build_hall` on the running reactor (its writer pool started, no
port opened); each slow function is wrapped to record the thread it runs on, and the
slow hash is held until a concurrent command has committed.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import pytest_twisted
from twisted.internet import reactor

from hall_server import statements
from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password, load_config
from hall_server.hall import cashier as cashier_module
from hall_server.hall import pins as pins_module
from hall_server.hall.roles import Role
from hall_server.tap import HallServer, build_hall
from server_kit.core import Actor
from server_kit.services import ThreadPoolService
from tests.support.waiting import WAIT, wait_until_in_reactor

pytestmark = [pytest.mark.integration]

CASHIER = Actor("carla", Role.CASHIER)
DOOR = Actor("adam", Role.ADMISSION)
ADMIN = Actor("admin", Role.ADMINISTRATOR)
BANNED = "document,name,until\nB1000001,Joan Banned,\n"
_HASH = hash_password("correct horse battery")


@pytest.fixture
def hall(tmp_path: Path) -> Iterator[HallServer]:
    text = default_config_text("Thread hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0)
    # No TLS and a small card set: the test is about threads, not about the first start's PKI.
    text = (text.replace("enabled = true", "enabled = false").replace("generate_strips = 100", "generate_strips = 10")
            .replace("card_count = 600", "card_count = 60"))
    (tmp_path / "hall.toml").write_text(text)
    built = build_hall(load_config(tmp_path / "hall.toml"), reactor)
    pools = [s for s in built.service if isinstance(s, ThreadPoolService)]
    for pool in pools:
        pool.startService()
    try:
        yield built
    finally:
        for pool in pools:
            pool.stopService()


class Recorded:
    """Wraps ``function``: the thread of each call; ``hold`` keeps a call off the reactor waiting."""

    def __init__(self, function: Callable[..., Any], *, hold: bool = False) -> None:
        self.function = function
        self.reactor_thread = threading.get_ident()  # made by the test, on the reactor thread
        self.threads: list[int] = []
        self.running = threading.Event()
        self.release = threading.Event()
        if not hold:
            self.release.set()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.threads.append(threading.get_ident())
        if threading.get_ident() != self.reactor_thread:  # never hold the reactor itself: that is the fault
            self.running.set()
            self.release.wait(WAIT)
        return self.function(*args, **kwargs)


async def _admitted(hall: HallServer, document: str, name: str) -> int:
    (record,) = await hall.admission.admit_visitor(DOOR, name, document, "1980-01-01")
    return int(record.payload["number"])


@pytest_twisted.ensureDeferred
async def test_a_new_pins_hash_runs_off_the_reactor_and_a_slow_one_holds_up_no_other_command(
    hall: HallServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    await hall.admission.import_banned_list(ADMIN, BANNED, "craj.csv")
    first = await _admitted(hall, "12345678A", "Anna Vidal")
    slow_hash = Recorded(cashier_module.hash_pin, hold=True)
    monkeypatch.setattr(cashier_module, "hash_pin", slow_hash)

    opening = hall.cashier.open_account(CASHIER, first, "ticket", "4821")
    await wait_until_in_reactor(reactor, lambda: slow_hash.threads, what="the PIN to be hashed")
    assert slow_hash.threads[0] != slow_hash.reactor_thread, "the PIN was hashed on the reactor thread"
    await wait_until_in_reactor(reactor, slow_hash.running.is_set, what="the hash to be under way")

    # While the hash is held, another command is decided, committed and answered.
    second = await _admitted(hall, "87654321B", "Bru Soler")
    assert second == first + 1 and not opening.called
    slow_hash.release.set()
    (opened,) = await opening
    assert opened.type == "player_account_opened" and opened.payload["visitor"] == first
    assert cashier_module.pin_matches("4821", opened.payload["pin_hash"])


@pytest_twisted.ensureDeferred
async def test_the_ticket_and_statement_pdfs_and_the_terminal_pin_check_run_off_the_reactor(
    hall: HallServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    await hall.admission.import_banned_list(ADMIN, BANNED, "craj.csv")
    (opened,) = await hall.cashier.open_account(CASHIER, await _admitted(hall, "12345678A", "Anna Vidal"), "card", "4821")
    number = opened.payload["account"]
    ticket = Recorded(statements.ticket_pdf)
    statement = Recorded(statements.statement_pdf)
    pin_check = Recorded(pins_module.pin_matches)
    monkeypatch.setattr(cashier_module, "ticket_pdf", ticket)
    monkeypatch.setattr(cashier_module, "statement_pdf", statement)
    monkeypatch.setattr(pins_module, "pin_matches", pin_check)

    assert (await hall.cashier.print_ticket(CASHIER, number)).startswith(b"%PDF")
    assert (await hall.cashier.print_statement(CASHIER, number)).startswith(b"%PDF")
    assert hall.gateway is not None and await hall.gateway.check_pin(number, "4821") is True
    for name, wrapped in (("ticket PDF", ticket), ("statement PDF", statement), ("PIN check", pin_check)):
        assert wrapped.threads and wrapped.reactor_thread not in wrapped.threads, f"the {name} ran on the reactor thread"
