"""A hall on SQLite meets its storage's faults while its demo plays: a held lock, its database
files made read-only, its disk full - and each comes back.

One real hall (``bingo hall serve --demo``) runs on a small tmpfs the test mounts (root may
mount; elsewhere the module is skipped, never under CI).  For each fault staff give commands
at the desks and watch a console:

* commands are answered at once (a held lock: after the busy timeout) with the storage's
  message, naming the fault and the database file, and every console shows the alarm;
* the demo pauses, and once the fault is gone goes on by itself: a new record of its staff
  reaches the console;
* nothing the hall held changed: a player's balance, the desks, the visitors; the next
  visitor's number follows the last; the journal verifies and holds each carried-out
  command's records once (the refused ones wrote nothing);
* a stop on the full disk leaves no half-written file (``*.partial``), a start on it is
  refused with a sentence that says so and makes nothing, and the start once space is
  freed shows the same balances, and the demo goes on.

The read-only database file is ``chattr +i`` on the database and its ``-wal`` (root
included may not write them); its ``-shm`` is left alone: writing through the mapping of
an immutable ``-shm`` ends the process with SIGBUS (``tests/faults/test_start_hygiene.py``
shows the start refusing such a file).
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.faults.support import (
    CASHIER,
    DOOR,
    PIN,
    Desks,
    chattr,
    counted,
    partial_files,
    records,
    refused_for_storage,
    storage_alarm,
    verified,
    wait_for,
)
from tests.support.waiting import START, WAIT, wait_until
from tests.web.conftest import HallProcess, WireSocket

pytestmark = [pytest.mark.integration]

#: The test's cashier's desk (desk-1 is the demo cashier's).
DESK = "desk-2"
#: The tmpfs the hall runs on: room for its folder and a few minutes of its demo.
TMPFS_SIZE = "96m"


@pytest.fixture(scope="module")
def disk() -> Iterator[Path]:
    """A small tmpfs of the test's own, unmounted at the end."""
    folder = Path(tempfile.mkdtemp(prefix="bingo-tmpfs-"))
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0700", "tmpfs", str(folder)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        folder.rmdir()
        if os.environ.get("CI"):
            raise AssertionError(f"mounting a tmpfs failed under CI: {mounted.stderr}")
        pytest.skip(f"mounting a tmpfs is not permitted here ({mounted.stderr.strip()}); the disk-full test needs root")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "--lazy", str(folder)], capture_output=True)
        folder.rmdir()


@pytest.fixture(scope="module")
def hall(disk: Path) -> Iterator[HallProcess]:
    folder = disk / "hall"
    folder.mkdir()
    process = HallProcess(folder, demo=True, demo_pace=0.2)
    # desk-1 is the demo cashier's; the test's cashier works a desk of her own.
    process.config.write_text(process.config.read_text().replace('desks = ["desk-1"]', 'desks = ["desk-1", "desk-2"]'))
    process.start()
    try:
        yield process
    finally:
        process.stop()


def demo_goes_on(console: WireSocket) -> dict[str, Any]:
    """The next record the demo's staff commit, as the console shows it."""
    return console.until(lambda m: m.get("type") == "record"
                         and str(m["record"]["payload"].get("actor", {}).get("name", "")).startswith("demo-"), WAIT)


def fill(disk: Path) -> Path:
    """A file that takes every free byte of ``disk``."""
    filler = disk / "filler"
    descriptor = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (1024 * 1024, 4096, 1):  # the last bytes too
            block = b"\0" * size
            try:
                while True:
                    os.write(descriptor, block)
            except OSError:
                pass
    finally:
        os.close(descriptor)
    return filler


class Day:
    """A player the staff admitted, whose account holds credit: what must survive each fault."""

    def __init__(self, desks: Desks, url: str) -> None:
        self.desks = desks
        self.url = url
        wait_for(self._ready, "the demo to open the session and its desk and enrol its players (its game announced)")
        self.visitor = self.admit("99000001K")
        desks(CASHIER, "open_cash_desk", desk=DESK, float_cents=20_000)
        (opened,) = desks(CASHIER, "open_player_account", visitor=self.visitor, medium="ticket", pin=PIN)["records"]
        self.account = self.payload(opened["seq"])["account"]
        desks(CASHIER, "load_credit", account=self.account, amount_cents=2_000, desk=DESK)
        self.balance = 2_000

    def _ready(self) -> bool:
        console, view = self.desks.console()
        console.close()
        return view["game"] is not None  # announced once the demo's players are admitted and enrolled

    def payload(self, seq: int) -> dict[str, Any]:
        (found,) = [r for r in records(self.url) if r.seq == seq]
        return found.payload

    def admit(self, document: str) -> int:
        (admitted,) = self.desks(DOOR, "admit_visitor", name=f"Visitor {document}", document=document,
                birth_date="1980-01-01")["records"]
        return int(self.payload(admitted["seq"])["number"])

    def balance_now(self) -> int:
        return int(self.desks(CASHIER, "find_player_account", account=self.account)["result"]["balance_cents"])


@pytest.fixture(scope="module")
def day(hall: HallProcess) -> Day:
    return Day(Desks(hall), f"sqlite:///{hall.folder / 'hall.sqlite3'}")


def under_the_fault(day: Day, kind: str, where: str) -> WireSocket:
    """Staff while the storage is at fault: the answers name it, the console's alarm says it; the
    balance still reads as it was.  The console is left open: it is told when the fault is gone."""
    console, shown = day.desks.console()
    status, answer = day.desks.send(CASHIER, "load_credit", account=day.account, amount_cents=300, desk=DESK)
    refused_for_storage(status, answer, kind, where)
    alarm = storage_alarm(console, raised=True, shown=shown)
    assert alarm is not None and alarm["kind"] == kind and where in alarm["line"], alarm
    status, answer = day.desks.send(DOOR, "admit_visitor", name="Visitor 99000009Z", document="99000009Z",
            birth_date="1980-01-01")
    refused_for_storage(status, answer, kind, where)  # refused at once now, before it is decided
    assert day.balance_now() == day.balance
    return console


def gone(day: Day, console: WireSocket) -> None:
    """The fault is gone: the alarm clears, the demo goes on, the next visitor follows the last."""
    assert storage_alarm(console, raised=False) is None
    demo_goes_on(console)
    console.close()
    last = max(r.payload["number"] for r in records(day.url) if r.type == "visitor_admitted")  # the demo's too
    day.visitor = day.admit(f"9900{last + 1:04d}V")
    assert day.visitor == last + 1
    day.desks(CASHIER, "load_credit", account=day.account, amount_cents=300, desk=DESK)
    day.balance += 300
    assert day.balance_now() == day.balance


def test_N2_a_lock_held_by_another_program_is_named_and_the_hall_goes_on_once_it_is_released(
    hall: HallProcess, day: Day,
) -> None:
    database = hall.folder / "hall.sqlite3"
    before = len(records(day.url))
    holder = sqlite3.connect(database, timeout=60, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another program's write transaction, left open
        console = under_the_fault(day, "locked", str(database))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    gone(day, console)
    journal = records(day.url)
    staff = [r for r in journal[before:] if r.payload["actor"]["name"] in (CASHIER, DOOR)]
    assert counted(staff) == {"visitor_admitted": 1, "credit_loaded": 1, "posting": 1}, [r.type for r in staff]


def test_N1_the_database_file_made_read_only_refuses_commands_and_nothing_differs_once_it_is_writable(
    hall: HallProcess, day: Day,
) -> None:
    database = hall.folder / "hall.sqlite3"
    files = [database, database.with_name("hall.sqlite3-wal")]
    before = len(records(day.url))
    chattr("+i", *files)
    try:
        console = under_the_fault(day, "read-only", str(database))
    finally:
        chattr("-i", *files)
    gone(day, console)
    journal = records(day.url)
    staff = [r for r in journal[before:] if r.payload["actor"]["name"] in (CASHIER, DOOR)]
    assert counted(staff) == {"visitor_admitted": 1, "credit_loaded": 1, "posting": 1}, [r.type for r in staff]
    assert [r.seq for r in journal] == list(range(1, len(journal) + 1))
    assert verified(hall.folder, day.url) >= len(journal)


def test_N2_a_full_disk_is_named_a_stop_on_it_leaves_no_partial_file_a_start_says_so_and_the_demo_goes_on_after(
    hall: HallProcess, day: Day, disk: Path,
) -> None:
    database = hall.folder / "hall.sqlite3"
    filler = fill(disk)
    try:
        console = under_the_fault(day, "disk full", str(database))
        console.close()
        hall.stop()  # on the full disk: its checkpoint cannot be written, and leaves nothing half-done
        assert partial_files(hall.folder) == []
        made = sorted(hall.folder.rglob("*"))
        refused = subprocess.run(
            [sys.executable, "-c", "from hall_server.cli import main; main()", "hall", "serve", "--config",
             str(hall.config)], cwd=hall.folder, env={**os.environ, "BINGO_HOME": str(hall.folder)},
            capture_output=True, text=True, timeout=START)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert f"the disk holding {hall.folder} is full" in refused.stderr and "None" not in refused.stderr, \
            refused.stderr
        assert sorted(hall.folder.rglob("*")) == made  # the refused start made nothing
    finally:
        filler.unlink()
    hall.start()
    day.desks.forget()
    assert day.balance_now() == day.balance
    console, _ = day.desks.console()
    demo_goes_on(console)
    console.close()
    # The demo goes on committing, and each commit writes the head through a partial file for a
    # moment: none is left behind once the folder is seen without one.
    wait_until(lambda: partial_files(hall.folder) == [], 10, "the folder with no partial file",
               seen=lambda: partial_files(hall.folder), interval=0.01)


def test_N3_a_fatal_signal_leaves_its_line_in_the_log(hall: HallProcess) -> None:
    """SIGBUS (what a write through the mapping of an immutable ``-shm`` file brings) is logged."""
    assert hall.process is not None
    hall.process.send_signal(signal.SIGBUS)
    assert hall.process.wait(WAIT) == -signal.SIGBUS
    hall.process = None
    wait_for(lambda: b"Fatal Python error: Bus error" in hall.output, "the fatal signal's line in the log")
