"""Crash recovery (R86.1, R92.3, R96.4): ``kill -9`` the real hall server at a random
moment of a session, start it again on the same folder, and hold the journal, the
screens and the money to account.

Each run copies a provisioned hall folder (configuration, PKI, keys, card set), starts
``bingo hall serve`` on loopback over TLS, and lets the staff (``tests/crash/session.py``)
run a whole session on their console WebSockets.  Once command number ``k`` (drawn from
the run's seed) is handed over, SIGKILL follows a random few milliseconds later (before
the command is read, while it commits, in the middle of a burst of sales, draws or
loads) or the instant a console shows a record after it.  Then:

* ``bingo journal verify`` passes on the folder (and database) the dead process left;
* every command answered before the kill is in the journal, once, where its answer
  said; whatever was not answered is in it at most as the unanswered commands' records,
  after every answered one; every record any console was shown (every ball on screen)
  is in the journal as shown: nothing was shown that was not committed;
* the restarted server's console snapshot equals the hall rebuilt in-process from the
  same journal (``build_hall`` on a copy of the folder), and its ledger equals the
  postings folded independently, summing to zero;
* the staff carry the session on to its end from what the restarted hall shows; then
  every card of both series was sold once, every game's balls are distinct, each prize
  was paid once to the cards that won it, and the totals that do not depend on the
  balls (sales, prize funds, house, tax, loads, cash-outs, the drawer) equal those of
  an uninterrupted session in the same test module.

The balls come from the server's generator; nothing can script them (see
``docs/crash-recovery.md``).

The campaign runs on the embedded SQLite database and on a real PostgreSQL cluster
the tests start (``tests/support/postgres.py``): each run's hall gets a copy of the
provisioned folder and, on PostgreSQL, a copy of the provisioned database.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from twisted.internet.testing import MemoryReactorClock

from hall_server.config import DEFAULT_TIMEZONE, load_config
from hall_server.web.redaction import redacted
from hall_server.web.view import HallView
from protocol.ledger import account_kind
from server_kit.db.database import create
from server_kit.journal import table as table
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from server_kit.settings import toml_string
from tests.crash.session import (
    CASH_OUTS,
    DESK,
    GAMES,
    LOADS,
    HallModel,
    Kill,
    Sent,
    ServerKilled,
    Staff,
)
from tests.crash.wire import LiveSocket
from tests.support.clock import midday_zone
from tests.support.waiting import WAIT, wait_until
from tests.support.postgres import PostgresCluster
from tests.web.conftest import HallProcess

pytestmark = pytest.mark.integration

#: Runs per database: the embedded default takes most, PostgreSQL the rest.
RUNS = {"sqlite": 20, "postgresql": 4}
#: Runs whose seed is a multiple of this kill the restarted server a second time.
TWICE_EVERY = 4


# --- The journal, read from the folder ------------------------------------------------------


def database_url(folder: Path) -> str:
    """The database of the hall in ``folder``, as its configuration names it."""
    return load_config(folder / "hall.toml").database_url


def journal_records(folder: Path) -> list[dict[str, Any]]:
    """The journal as the consoles are shown records: seq, time, type, payload."""
    engine = create(database_url(folder))
    try:
        return [{"seq": r.seq, "time_ms": r.time_ms, "type": r.type, "payload": dict(r.payload)}
                for r in table.read(engine)]
    finally:
        engine.dispose()


def bingo_journal_verify(folder: Path) -> subprocess.Popen[str]:
    """``bingo journal verify`` on the hall's folder, as an inspector runs it (started, not awaited)."""
    return subprocess.Popen(
        [sys.executable, "-c", "from hall_server.cli import main; main()", "--db", database_url(folder),
         "journal", "verify"],
        cwd=folder, env={**os.environ, "BINGO_HOME": str(folder)}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True,
    )


def verified(command: subprocess.Popen[str], *records: int) -> None:
    """The inspector's check passed on one of the journals ``records`` says (it reads one snapshot)."""
    output, _ = command.communicate(timeout=60)
    assert command.returncode == 0 and any(f"{n} record(s) verified" in output for n in records), (records, output)


def journal_verifies(folder: Path) -> int:
    """The same verification in this process: chain, signatures and the head file."""
    engine = create(database_url(folder))
    try:
        key = load_journal_key(folder / "keys" / "journal-signing.pem")
        return Journal(engine, key, head=folder / "journal.head").verify()
    finally:
        engine.dispose()


def signed_balances(records: list[dict[str, Any]]) -> dict[str, int]:
    """Debit minus credit per account over every posting: folded here, not by the server."""
    balances: Counter[str] = Counter()
    for record in records:
        if record["type"] == "posting":
            for account, cents in record["payload"]["debits"]:
                balances[account] += cents
            for account, cents in record["payload"]["credits"]:
                balances[account] -= cents
    return dict(balances)


def model_of(records: list[dict[str, Any]]) -> HallModel:
    model = HallModel()
    for record in records:
        model.fold(record)
    return model


# --- What a kill may and may not leave ------------------------------------------------------------


def check_after_kill(
    folder: Path, sent: list[Sent], shown: list[dict[str, Any]], life: int, since: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The journal the dead server left holds exactly what was answered and shown.

    ``since`` is the journal's length when this life of the server started.  Returns
    the journal and this life's records committed without an answer.
    """
    records = journal_records(folder)
    by_seq = {r["seq"]: r for r in records}
    assert list(by_seq) == list(range(1, len(records) + 1))

    # Nothing reached a screen that is not committed: every ball shown is in the journal
    # (as screens see records: without their secrets).
    for record in shown:
        assert redacted(by_seq.get(record["seq"])) == record, f"shown but not so in the journal: {record}"

    # Every answered command is in the journal where its answer said, and only once.
    claimed: set[int] = set()
    for item in sent:
        if item.answer is None or not item.answer["ok"]:
            continue
        for answered in item.answer["records"]:
            found = by_seq.get(answered["seq"])
            assert found is not None and found["type"] == answered["type"], (item, answered)
            assert found["payload"]["actor"]["name"] == item.staff, (item, found)
            claimed.add(answered["seq"])
        first = by_seq[item.answer["records"][0]["seq"]]
        if first["type"] in SAID_AGAIN:
            continue
        twins = [r["seq"] for r in records if r["type"] == first["type"] and _fact(r) == _fact(first)]
        assert twins == [first["seq"]], f"{item.command} {item.args} is in the journal at {twins}"

    # Whatever was not answered comes from the commands left unanswered in this life,
    # after every answered one (the staff wait for a burst's answers before the next).
    unanswered = [item for item in sent if item.life == life and item.answer is None]
    life_claims = [seq for item in sent if item.life == life and item.answer and item.answer["ok"]
                   for seq in (r["seq"] for r in item.answer["records"])]
    # A prize found closes by itself after the wait with no new claim (R85.6): the hall's own record.
    extra = [r for r in records if r["seq"] not in claimed and r["seq"] > since
             and not (r["type"] == "prize_closed" and r["payload"]["actor"]["role"] == "system")]
    if extra:
        assert unanswered, f"records nobody asked for: {extra}"
        assert min(r["seq"] for r in extra) > max(life_claims, default=0)
        assert {r["payload"]["actor"]["name"] for r in extra} <= {item.staff for item in unanswered}
    return records, extra


#: Facts a run may rightly record twice with the same content: the room chief's verification
#: and the game's resumption after each restart from a crash (R92.5e).
SAID_AGAIN = frozenset({"system_verified", "game_resumed"})


def _fact(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record["payload"].items() if k != "actor"}


def restart_journaled(folder: Path, killed_at: int) -> list[dict[str, Any]]:
    """The journal once the restarted server has journaled its start after a crash (R92.5e): one commit,
    ``restarted_after_crash`` and the suspension of the game in progress."""
    wait_until(lambda: any(r["type"] == "restarted_after_crash" for r in journal_records(folder)[killed_at:]), WAIT,
               "the restarted hall server to journal its start after a crash")
    return journal_records(folder)


def rebuilt_in_process(folder: Path, scratch: Path) -> Any:
    """The hall the composition root builds from a copy of ``folder``'s journal, not started."""
    from hall_server.tap import build_hall

    copy = scratch / "rebuilt"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy)
    return build_hall(load_config(copy / "hall.toml"), MemoryReactorClock())


def last_view(socket: LiveSocket) -> dict[str, Any]:
    """The last picture a console showed: with its last record, or its snapshot."""
    return [m.message["view"] for m in socket.messages if m.message.get("type") in ("snapshot", "record")][-1]


def view_at(folder: Path, seq: int) -> dict[str, Any]:
    """The console picture replayed in this process from the journal's first ``seq`` records."""
    config = load_config(folder / "hall.toml")
    view = HallView(config.name, warnings=config.responsible.warnings, claim_wait_s=config.draw.claim_wait_s)
    engine = create(database_url(folder))
    try:
        for record in table.read(engine):
            if record.seq > seq:
                break
            view.apply(record)
    finally:
        engine.dispose()
    return json.loads(json.dumps(view.console()))


def check_recovered(staff: Staff, rebuilt: Any, records: list[dict[str, Any]], before: dict[str, Any],
                    killed_at: int, folder: Path) -> None:
    """The restarted server shows what the journal rebuilds to, and its money balances.

    ``before`` is the last picture shown before the kill: when nothing was committed
    unseen after it, the hall rebuilt from the dead server's folder shows exactly that
    picture again.  The restarted server has journaled its start after a crash since
    (``restarted_after_crash`` with the game's suspension, R92.5e): those records, after
    ``killed_at``, are folded into the rebuilt hall's picture before the two are compared.
    """
    if before["seq"] == killed_at:
        assert json.loads(json.dumps(rebuilt.view.console())) == before
    engine = create(database_url(folder))
    try:
        for record in table.read(engine, after=killed_at):
            if record.seq <= len(records):
                rebuilt.view.apply(record)
    finally:
        engine.dispose()
    snapshot = staff.watcher.snapshot()
    assert snapshot["view"]["seq"] == len(records)
    assert snapshot["view"] == json.loads(json.dumps(rebuilt.view.console()))
    balances = signed_balances(records)
    assert sum(balances.values()) == 0
    for account, signed in balances.items():
        normal = signed if account_kind(account).normal == "debit" else -signed
        assert rebuilt.ledger.balance(account) == normal, account


# --- The whole session, judged at its end -------------------------------------------------------


def session_totals(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Everything about a finished session that does not depend on which balls fell."""
    balances = signed_balances(records)
    games: dict[str, dict[str, Any]] = {}
    for record in records:
        p = record["payload"]
        if record["type"] == "sale_closed":
            games[p["game_id"]] = {
                "cards": p["cards_sold"], "collection": p["collection_cents"],
                "line_fund": p["line_cents"] - p["carry_line_cents"],
                "bingo_fund": p["bingo_cents"] - p["carry_bingo_cents"],
                "house": p["house_cents"], "tax": p["tax_cents"],
            }
    paid = sum(r["payload"]["amount_cents"] for r in records if r["type"] == "prize_paid")
    first_restart = min((r["seq"] for r in records if r["type"] == "restarted_after_crash"), default=len(records) + 1)
    carried = -(balances.get("carry:line", 0) + balances.get("carry:bingo", 0))
    return {
        "games": list(games.values()),
        # A start after a crash adds its record, the game's suspension and resumption, and the room chief's
        # verification after it (R92.5e): an uninterrupted session has none of them.
        "types": sorted(Counter(r["type"] for r in records
                                if r["type"] not in ("ball_drawn", "prize_won", "claim_rejected", "posting",
                                                     "restarted_after_crash", "game_suspended", "game_resumed")
                                and not (r["type"] == "system_verified" and r["seq"] > first_restart)).items()),
        "prizes": paid + carried,
        "house": balances.get("house", 0),
        "tax": balances.get("tax", 0),
        "sellers": {a: c for a, c in balances.items() if a.startswith("cash:") and a != f"cash:{DESK}"},
        # The drawer pays the prizes; what the splits left in the carries is not paid yet.
        "drawer_and_carries": balances.get(f"cash:{DESK}", 0) - carried,
        "players": sorted(c for a, c in balances.items() if a.startswith("player:")),
        "loads": sorted(r["payload"]["amount"] for r in records if r["type"] == "credit_loaded"),
        "cash_outs": sorted(r["payload"]["amount"] for r in records if r["type"] == "credit_cashed_out"),
    }


def check_whole_session(records: list[dict[str, Any]]) -> None:
    """Nothing lost or doubled, whatever the balls: cards, balls, prizes, money."""
    model = model_of(records)
    assert model.closed and model.reconciled and len(model.games) == len(GAMES)
    sold: Counter[tuple[int, int]] = Counter(
        (r["payload"]["series"], n)
        for r in records if r["type"] == "paper_cards_sold"
        for n in range(r["payload"]["first"], r["payload"]["last"] + 1))
    planned = sum(count for game in GAMES for _, count in game)
    every_card = {(1001, n) for n in range(1, 61)} | {(1002, n) for n in range(1, 37)}
    assert set(sold) == every_card and len(every_card) == planned
    assert set(sold.values()) == {1}
    for game in model.games:
        assert len(game.balls) == len(set(game.balls)), game.balls
        assert game.paid == {"line", "bingo"} and game.closed and game.collected
        paid = [r["payload"] for r in records if r["type"] == "prize_paid" and r["payload"]["game_id"] == game.game_id]
        won = {(r["payload"]["pattern"], f"{r['payload']['series']}-{r['payload']['card_number']}") for r in records
               if r["type"] == "prize_won" and r["payload"]["game_id"] == game.game_id}
        for prize in paid:
            assert {(prize["prize"], card) for card, _ in prize["payments"]} == {w for w in won if w[0] == prize["prize"]}
            assert prize["ball_count"] == game.won[prize["prize"]] <= len(game.balls)
    balances = signed_balances(records)
    assert sum(balances.values()) == 0
    assert all(cents == 0 for account, cents in balances.items() if account.startswith("stakes:"))
    reconciled = [r["payload"] for r in records if r["type"] == "cash_desk_reconciled"]
    assert [r["difference"] for r in reconciled] == [0]
    assert sorted(c for _, c in model.loads) == sorted(c for _, c in LOADS)
    assert sorted(c for _, c in model.cash_outs) == sorted(c for _, c in CASH_OUTS)


# --- Fixtures and runs ----------------------------------------------------------------------------


#: The journal's opening record, written at the first start: the staff's model starts after it.
OPENED = 1


class Backend:
    """Where a run's hall keeps its database: SQLite in its folder, or a PostgreSQL database."""

    def __init__(self, name: str, cluster: PostgresCluster | None) -> None:
        self.name = name
        self.cluster = cluster

    def provision(self, folder: Path) -> None:
        """Name the database in a new hall folder's configuration (SQLite: the default).

        The hall keeps the time of a zone where it is midday now: a run compares the
        restarted server's picture with the journal's, and the hall's day must not turn
        between the two (at its midnight the people present and the jackpot's day reset).
        """
        HallProcess(folder)  # writes the configuration
        config = folder / "hall.toml"
        text = config.read_text()
        assert text.count(f"timezone = {toml_string(str(DEFAULT_TIMEZONE))}") == 1
        config.write_text(text.replace(f"timezone = {toml_string(str(DEFAULT_TIMEZONE))}",
                                       f"timezone = {toml_string(midday_zone())}"))
        if self.cluster is not None:
            self._point(folder, self.cluster.create_database())

    def copy(self, template: Path, folder: Path) -> None:
        """``folder`` becomes a copy of the hall in ``template``, its database included."""
        shutil.copytree(template, folder)
        if self.cluster is not None:
            source = database_url(template).rsplit("/", 1)[1]
            self._point(folder, self.cluster.create_database(template=source))

    @staticmethod
    def _point(folder: Path, url: str) -> None:
        config = folder / "hall.toml"
        text = re.sub(r'\n\[database\]\nurl = "[^"]*"\n', "\n", config.read_text())
        config.write_text(text + f'\n[database]\nurl = "{url}"\n')


@pytest.fixture(scope="module")
def backend(request: pytest.FixtureRequest) -> Backend:
    """The database of the runs (parametrised indirectly, with the seeds)."""
    if request.param == "sqlite":
        return Backend("sqlite", None)
    return Backend("postgresql", request.getfixturevalue("postgres_cluster"))


@pytest.fixture(scope="module")
def provisioned(backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hall folder after its first start (PKI, keys, card set), its journal just opened."""
    folder = tmp_path_factory.mktemp("template") / "hall"
    folder.mkdir()
    backend.provision(folder)
    HallProcess(folder).start().stop()
    assert [r["type"] for r in journal_records(folder)] == ["journal_opened"]
    return folder


@pytest.fixture(scope="module")
def uninterrupted(
    backend: Backend, provisioned: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], list[str]]:
    """An uninterrupted session's ball-independent totals, and the commands it took."""
    folder = tmp_path_factory.mktemp("uninterrupted") / "hall"
    backend.copy(provisioned, folder)
    hall = HallProcess(folder).start()
    sent: list[Sent] = []
    staff = Staff(hall, HallModel(seq=OPENED), sent, life=0)
    try:
        staff.play(random.Random(0))
    finally:
        staff.close()
        hall.stop()
    records = journal_records(folder)
    check_whole_session(records)
    return session_totals(records), [item.command for item in sent]


def kills_for(seed: int, commands: list[str]) -> list[Kill]:
    """Where run ``seed`` kills: at a command of the session, a few ms after it is handed over.

    ``commands`` are the uninterrupted session's commands in order.  Draws are most of
    them, so one run in five aims at a burst of sales and one in five at a movement of
    money (loads, prizes, cash-outs); the rest pick any command in the first nine
    tenths.  Every :data:`TWICE_EVERY`-th run kills again, in the first half of what is
    left.  Indices count the commands given since the last restart.
    """
    rng = random.Random(f"kill-{seed}")
    aims = {0: ("sell_cards",), 1: ("load_credit", "pay_prizes", "cash_out")}.get(seed % 5)
    targets = [i for i, name in enumerate(commands) if aims is None or name in aims]
    first = rng.choice([i for i in targets if 0 < i < len(commands) * 0.9])
    indices = [first]
    if seed % TWICE_EVERY == 0:
        indices.append(rng.randrange(1, max(2, (len(commands) - first) // 2)))
    return [Kill(index, rng.choice((0.0, rng.uniform(0, 0.004), rng.uniform(0, 0.03))), rng.random() < 0.4)
            for index in indices]


@pytest.mark.req("R96.4", "R92.3", "R86.1-2")
@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize("seed", range(1, RUNS["sqlite"] + 1))
def test_a_hall_killed_at_a_random_moment_recovers_and_loses_or_doubles_nothing(
    seed: int, backend: Backend, provisioned: Path, uninterrupted: tuple[dict[str, Any], list[str]], tmp_path: Path
) -> None:
    killed_at_random(seed, backend, provisioned, uninterrupted, tmp_path)


@pytest.mark.req("R96.4", "R92.3", "R86.1-2")
@pytest.mark.parametrize("backend", ["postgresql"], indirect=True)
@pytest.mark.parametrize("seed", range(1, RUNS["postgresql"] + 1))
def test_a_hall_on_postgresql_killed_at_a_random_moment_recovers_and_loses_or_doubles_nothing(
    seed: int, backend: Backend, provisioned: Path, uninterrupted: tuple[dict[str, Any], list[str]], tmp_path: Path
) -> None:
    killed_at_random(seed, backend, provisioned, uninterrupted, tmp_path)


def killed_at_random(
    seed: int, backend: Backend, provisioned: Path, uninterrupted: tuple[dict[str, Any], list[str]], tmp_path: Path
) -> None:
    """One run: kill the hall at the run's moments, restart it, check everything, play to the end."""
    totals, commands = uninterrupted
    folder = tmp_path / "hall"
    backend.copy(provisioned, folder)
    hall = HallProcess(folder).start()
    rng = random.Random(seed)
    sent: list[Sent] = []
    model = HallModel(seq=OPENED)
    # What each life leaves for the next: the journal, the hall rebuilt from it, the last picture.
    records: list[dict[str, Any]] = journal_records(folder)
    rebuilt: Any = None
    before: dict[str, Any] = {}
    try:
        for life, kill in enumerate(kills_for(seed, commands)):
            # After a restart the kill point counts from the commands already given.
            kill = Kill(kill.index + len(sent), kill.delay, kill.on_shown) if life else kill
            staff = Staff(hall, model, sent, life, kill)
            if life:
                check_recovered(staff, rebuilt, records, before, killed_at, folder)
            try:
                staff.play(rng)
            except ServerKilled:
                pass
            if staff.killer is not None:
                staff.killer.join()  # a session that ended first is killed idle, after its end
            hall.kill()
            shown = [record for socket in staff.all_sockets() for record in socket.records()]
            before = last_view(staff.watcher)
            staff.close()
            # The inspector's check runs while the server starts again: two cores, two jobs.
            verifying = bingo_journal_verify(folder)
            records, unanswered = check_after_kill(folder, sent, shown, life, len(records))
            in_flight = [item.command for item in sent if item.life == life and item.answer is None]
            when = "as a record was shown" if kill.on_shown else f"{kill.delay * 1000:.1f} ms"
            print(f"run {seed}: killed {when} after command {kill.index} was sent; "
                  f"{len(in_flight)} unanswered ({', '.join(sorted(set(in_flight)))}), "
                  f"{len(unanswered)} record(s) of theirs committed, {len(shown)} shown, {len(records)} in the journal")
            # The picture the live server built record by record is the journal's, replayed (the
            # series on sale and the operator's jackpot contributions are the games module's, the people
            # present the admission module's, not the view's: the rebuilt hall checks them).
            modules = {"series": None, "jackpot_contributions": None, "presence": None}
            assert {**before, **modules} == {**view_at(folder, before["seq"]), **modules}
            rebuilt = rebuilt_in_process(folder, tmp_path)
            hall.start()
            killed_at = len(records)
            records = restart_journaled(folder, killed_at)
            # The check ran beside the start: it read the journal the kill left, or that with the
            # restart's one commit (R92.5e); nothing else is committed before the staff sign in.
            verified(verifying, killed_at, len(records))
            model = model_of(records)
        staff = Staff(hall, model, sent, life + 1)
        check_recovered(staff, rebuilt, records, before, killed_at, folder)
        staff.play(rng)
        shown = [record for socket in staff.all_sockets() for record in socket.records()]
        staff.close()
    finally:
        hall.stop()
    records, _ = check_after_kill(folder, sent, shown, life + 1, len(records))
    assert journal_verifies(folder) == len(records)
    check_whole_session(records)
    assert session_totals(records) == totals
