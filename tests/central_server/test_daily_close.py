"""The central server writes its signed daily report at the day's close and sends it to the
regulator (R95.4, R83.5): at its start for every day that ended while it was down, and one
second after each midnight of its time zone; a day's folder that exists is never written
again; without a report-signing certificate it writes nothing and serves on.  A real
central server on SQLite and real TLS, its clock a ``task.Clock``; each file is checked by
stock ``openssl cms -verify`` against the operator's ``ca.pem``."""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor, task
from twisted.logger import formatEvent, globalLogPublisher

from central_server.config import load_config
from central_server.daily_close import MARGIN_S
from central_server.server import CentralServer
from central_server.tap import build_central
from protocol.replay import parse_scenario, render, replay
from server_kit.pki import install_report_signing, issue_certificate
from tests.central_server.conftest import EPOCH_S, Running
from tests.central_server.support import config_text, make_pki, until

pytestmark = [pytest.mark.integration]

DAY_S = 86_400
#: EPOCH_S's day, in UTC (the default time zone) and in Madrid alike.
GAME_DAY = "2026-05-28"
FILES = ("report.json", "report.csv", "report.pdf")
AUDIT_FILES = ("scenario.json", "result.json", "segment.json")


def central_folder(tmp_path: Path, *, signer: bool = True, timezone: str | None = None,
                   regulator_port: int | None = None) -> Path:
    """The central server's folder (with its report-signing pair) and its configuration, under the operator's
    authority ``tmp_path / "pki"`` (made when it is not there yet)."""
    pki = tmp_path / "pki"
    if not (pki / "ca.pem").exists():
        make_pki(pki)
    home = tmp_path / "central"
    home.mkdir()
    if signer:
        issue_certificate(pki, "report-signing", "central-reports")
        install_report_signing(pki, "central-reports", home)
    text = config_text(home, pki, f"sqlite:///{home / 'central.sqlite3'}")
    if timezone is not None:
        text = text.replace('[central]\n', f'[central]\ntimezone = "{timezone}"\n', 1)
    if regulator_port is not None:
        text += f'\n[regulator]\nhost = "127.0.0.1"\nport = {regulator_port}\nserver_name = "localhost"\n'
    path = home / "central.toml"
    path.write_text(text)
    return path


async def boot(path: Path, at_s: float) -> Running:
    """The central server of ``path`` started on a clock at ``at_s``, once its first pass of the days is over."""
    clock = task.Clock()
    clock.advance(at_s)
    server = build_central(load_config(path), reactor, clock)
    server.service.startService()
    port: Any = await server.listener.listening
    await until(lambda: "net-1" in server.module.games, "the configured game to be scheduled")
    await until(lambda: closer(server).next_pass_s is not None, "the first pass of the days")
    return Running(server, clock, server.config.pki_dir, port.getHost().port, [])


async def halt(running: Running) -> None:
    for client in running.clients:
        if client.transport is not None:
            client.transport.loseConnection()
    await running.server.service.stopService()
    running.server.engine.dispose()


def closer(server: CentralServer) -> Any:
    assert server.closer is not None
    return server.closer


async def play_a_game(central: Running) -> None:
    """net-1 with 10 cards bought at two halls, played to its bingo."""
    one, two = await central.hall("hall-1"), await central.hall("hall-2")
    await central.open_sale()
    assert (await one.buy("h1", terminal="T1", count=6))["status"] == "confirmed"
    assert (await two.buy("h2", hall="hall-2", terminal="K1", player="q1", count=4))["status"] == "confirmed"
    await central.close_sale()
    while central.game.phase != "closed":
        await central.next_ball()
    await until(central.server.core.settled, "the game's last records committed")


def armed_at(day_closer: Any, seconds: float) -> bool:
    """The closer's next pass is armed for ``seconds`` (to the millisecond)."""
    return day_closer.next_pass_s is not None and abs(day_closer.next_pass_s - seconds) < 0.001


def day_after(day: str, days: int = 1) -> str:
    return (datetime.date.fromisoformat(day) + datetime.timedelta(days=days)).isoformat()


def reports(home: Path) -> list[str]:
    """Every entry of the reports folder, hidden ones too."""
    folder = home / "reports"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def tables(folder: Path) -> dict[str, list[dict[str, Any]]]:
    return {key: t["rows"] for key, t in json.loads((folder / "report.json").read_text())["tables"].items()}


def openssl_verify(file: Path, ca_pem: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["openssl", "cms", "-verify", "-binary", "-inform", "DER", "-in", f"{file}.p7s", "-content", str(file),
         "-CAfile", str(ca_pem), "-purpose", "any", "-out", "/dev/null"],
        capture_output=True, text=True, timeout=60,
    )


@pytest.mark.req("R95.4", "R83.5")
@pytest_twisted.ensureDeferred
async def test_the_days_that_ended_while_the_central_server_was_down_are_reported_at_its_start(tmp_path: Path) -> None:
    """R95.4, R83.5: started three days after its game, the central server writes the report of the game's day
    and of the two empty days after it, each file verified by stock openssl against the operator's ca.pem."""
    path = central_folder(tmp_path)
    home = path.parent
    central = await boot(path, EPOCH_S)
    try:
        assert closer(central.server).written == []  # the journal began today: no day has ended
        await play_a_game(central)
    finally:
        await halt(central)

    central = await boot(path, EPOCH_S + 3 * DAY_S)
    try:
        days = [GAME_DAY, day_after(GAME_DAY), day_after(GAME_DAY, 2)]
        assert closer(central.server).written == [home / "reports" / f"daily-{day}" for day in days]
        # Beside the game's day, its audit export (R92.7); the empty days have none.
        assert closer(central.server).audits == [home / "reports" / f"audit-{GAME_DAY}"]
        assert reports(home) == [f"audit-{GAME_DAY}", *(f"daily-{day}" for day in days)]  # nothing half-written
        for day in days:
            for name in FILES:
                checked = openssl_verify(home / "reports" / f"daily-{day}" / name, tmp_path / "pki" / "ca.pem")
                assert checked.returncode == 0, checked.stderr
        audit = home / "reports" / f"audit-{GAME_DAY}"
        for name in AUDIT_FILES:
            assert openssl_verify(audit / name, tmp_path / "pki" / "ca.pem").returncode == 0, name
        scenario = json.loads((audit / "scenario.json").read_text())
        assert [len(g["cards"]) for g in scenario["sessions"][0]["games"]] == [10]
        assert render(replay(parse_scenario(scenario))) == (audit / "result.json").read_text()
        segment = json.loads((audit / "segment.json").read_text())
        ended = [r for r in central.server.journal.records() if r.type == "central_game_closed"]
        assert (segment["day"], segment["last_seq"], segment["last_hash"], segment["refused"]) == (
            GAME_DAY, ended[-1].seq, ended[-1].hash, None)
        played = tables(home / "reports" / f"daily-{GAME_DAY}")
        assert played["report"][0] == {"day": GAME_DAY, "origin": "central server", "server": "central-a",
                                       "timezone": "UTC"}
        (game,) = played["games"]
        assert (game["game_id"], game["state"], game["cards_sold"]) == ("net-1", "closed", 10)
        assert {(c["hall"], c["where"]) for c in played["cards"]} == {("hall-1", "T1"), ("hall-2", "K1")}
        assert played["winners"] and all(w["hall"] in ("hall-1", "hall-2") for w in played["winners"])
        assert tables(home / "reports" / f"daily-{days[1]}")["games"] == []
    finally:
        await halt(central)


@pytest.mark.req("R83.5")
@pytest_twisted.ensureDeferred
async def test_the_midnight_of_the_central_servers_time_zone_writes_the_days_report(tmp_path: Path) -> None:
    """R83.5: one second after the local midnight (Europe/Madrid, two hours before UTC's), the day's report
    is written while the central server runs; the next midnight writes the next day's."""
    path = central_folder(tmp_path, timezone="Europe/Madrid")
    home = path.parent
    central = await boot(path, EPOCH_S)
    try:
        await play_a_game(central)
        zone = datetime.timezone(datetime.timedelta(hours=2))  # Madrid's summer time
        midnight_s = datetime.datetime.fromisoformat(f"{day_after(GAME_DAY)}T00:00:00").replace(
            tzinfo=zone).timestamp()
        day_closer = closer(central.server)
        await until(lambda: armed_at(day_closer, midnight_s + MARGIN_S), "the pass armed for the local midnight")
        central.clock.advance(midnight_s + MARGIN_S - central.clock.seconds() - 0.5)
        assert reports(home) == []
        central.clock.advance(0.5)
        await until(lambda: armed_at(day_closer, midnight_s + DAY_S + MARGIN_S), "the pass after midnight")
        assert day_closer.written == [home / "reports" / f"daily-{GAME_DAY}"]
        assert [g["game_id"] for g in tables(home / "reports" / f"daily-{GAME_DAY}")["games"]] == ["net-1"]
        central.clock.advance(DAY_S)
        await until(lambda: armed_at(day_closer, midnight_s + 2 * DAY_S + MARGIN_S), "the next midnight's pass")
        assert reports(home) == [f"audit-{GAME_DAY}", f"daily-{GAME_DAY}", f"daily-{day_after(GAME_DAY)}"]
    finally:
        await halt(central)


@pytest.mark.req("R95.4")
@pytest_twisted.ensureDeferred
async def test_a_days_report_folder_that_exists_is_never_written_again(tmp_path: Path) -> None:
    """R95.4: a folder of a day already there (written by hand, or at an earlier start) is left as it is; the
    days are reported from the day after the newest folder."""
    path = central_folder(tmp_path)
    home = path.parent
    await halt(await boot(path, EPOCH_S))
    kept = home / "reports" / f"daily-{GAME_DAY}"
    kept.mkdir(parents=True)
    (kept / "note.txt").write_text("written by the operator")

    central = await boot(path, EPOCH_S + 2 * DAY_S)
    try:
        assert closer(central.server).written == [home / "reports" / f"daily-{day_after(GAME_DAY)}"]
        assert sorted(p.name for p in kept.iterdir()) == ["note.txt"]
    finally:
        await halt(central)
    written = home / "reports" / f"daily-{day_after(GAME_DAY)}" / "report.json"
    before = (written.read_bytes(), written.stat().st_mtime_ns)

    central = await boot(path, EPOCH_S + 2 * DAY_S + 60)
    try:
        assert closer(central.server).written == []
        assert (written.read_bytes(), written.stat().st_mtime_ns) == before
    finally:
        await halt(central)


@pytest.mark.req("R95.4")
@pytest_twisted.ensureDeferred
async def test_without_a_report_signing_certificate_nothing_is_written_and_the_central_server_serves_on(
    tmp_path: Path,
) -> None:
    """R95.4: a central server with no keys/report-signing.pem says how to get one, at its start and at the
    midnight, writes no report and goes on serving its halls."""
    path = central_folder(tmp_path, signer=False)
    home = path.parent
    await halt(await boot(path, EPOCH_S))
    said: list[str] = []

    def observe(event: dict[str, Any]) -> None:
        if "daily report is not written" in (formatEvent(event) or ""):
            said.append(formatEvent(event))

    globalLogPublisher.addObserver(observe)
    try:
        central = await boot(path, EPOCH_S + DAY_S)
        try:
            next_pass = closer(central.server).next_pass_s
            central.clock.advance(DAY_S)
            await until(lambda: armed_at(closer(central.server), next_pass + DAY_S), "the pass after midnight")
            assert closer(central.server).written == [] and reports(home) == []
            assert len(said) == 2 and "bingo pki issue report-signing" in said[0], said
            hall = await central.hall("hall-1")  # it still answers its halls
            assert (await hall.get_game())["phase"] == central.game.phase
        finally:
            await halt(central)
    finally:
        globalLogPublisher.removeObserver(observe)


@pytest.mark.req("R92.7", "R88.2", "R88.4-5", "R95.4")
@pytest_twisted.ensureDeferred
async def receiver_and_central(tmp_path: Path) -> tuple[Any, Path]:
    """A regulator's receiver listening, and a central server's folder feeding it, registered with its
    journal key (made before its first start); the receiver is to be stopped by the caller."""
    from regulator.senders import SenderRegistry
    from regulator.service import ReceiverService, ReceiverSettings
    from server_kit.keys import journal_key_path, load_journal_key

    (tmp_path / "regulator").mkdir()
    pki = make_pki(tmp_path / "pki")
    issue_certificate(pki, "regulator", "regulator")
    receiver = ReceiverService(reactor, ReceiverSettings(tmp_path / "regulator", pki, "regulator", 0, "127.0.0.1",
                                                         web_port=None))
    receiver.startService()
    await receiver.listening
    path = central_folder(tmp_path, regulator_port=receiver.port.getHost().port)
    SenderRegistry(tmp_path / "regulator").register(
        "central", load_journal_key(journal_key_path(path.parent), create=True).public_key())
    return receiver, path


async def test_the_central_servers_feed_delivers_the_days_report_to_the_regulator(tmp_path: Path) -> None:
    """R95.4, R92.7: the report written at the start is sent through the feed as ``central``'s; the receiver
    verifies its signatures against the operator's authority and the central server notes its ack.  The day's
    audit export goes the same way, and the receiver replays the network game card by card on the central
    server's records it holds; an export the central server signed with a payment changed is an
    ``audit_differs`` alert naming the game and the card."""
    from protocol.regulator_feed import Report
    from regulator.days import AUDIT_DIFFERS
    from server_kit.reports.cms import ReportSigner

    receiver, path = await receiver_and_central(tmp_path)
    home = path.parent
    try:
        central = await boot(path, EPOCH_S)
        try:
            await play_a_game(central)
        finally:
            await halt(central)
        central = await boot(path, EPOCH_S + DAY_S)
        try:
            folder = home / "reports" / f"daily-{GAME_DAY}"
            assert closer(central.server).written == [folder]
            await until(lambda: len(receiver.inbox.received()) == 2, "the reports at the receiver")
            assert {(r.sender, r.name, r.verified) for r in receiver.inbox.received()} == {
                ("central", f"daily-{GAME_DAY}", True), ("central", f"audit-{GAME_DAY}", True)}
            kept = receiver.inbox.folder("central", f"daily-{GAME_DAY}")
            assert (kept / "report.json").read_bytes() == (folder / "report.json").read_bytes()
            await until(lambda: len(central.records("central_report_delivered")) == 2,
                        "the central server to journal the acks")
            await until(lambda: receiver.receiver.days.verdicts(), "the day replayed at the receiver")
            (day,) = receiver.receiver.days.verdicts()
            assert (day.sender, day.day, day.verdict, day.games) == ("central", GAME_DAY, "verified", ("net-1",))
            assert receiver.store.alerts() == []
        finally:
            await halt(central)
        # The central server signs a result whose payment is not what its records say.
        audit = home / "reports" / f"audit-{GAME_DAY}"
        files = {p.name: p.read_bytes() for p in audit.iterdir() if not p.name.startswith(".")}
        recorded = json.loads(files["result.json"])
        paid = recorded["games"][0]["prizes"]["bingo"]["paid"][0]
        paid["cents"] += 1
        files["result.json"] = json.dumps(recorded).encode()
        files["result.json.p7s"] = ReportSigner.of_server(home).sign(files["result.json"])
        receiver.inbox.take(Report("central", f"audit-{GAME_DAY}", files), "central")
        (alert,) = receiver.store.alerts()
        assert (alert.sender, alert.kind) == ("central", AUDIT_DIFFERS)
        assert (f"result.json: game 1 of {GAME_DAY}: prizes.bingo.paid.card {paid['card']}.cents is {paid['cents']}; "
                f"the records say {paid['cents'] - 1}") in alert.detail, alert.detail
    finally:
        await receiver.stopService()


@pytest.mark.req("R95.4")
async def test_a_report_delivered_by_one_process_is_not_sent_again_by_the_process_that_takes_over(
        tmp_path: Path) -> None:
    """The other process of a replicated central server, on the same database with a home of its own,
    takes over after the day's report was delivered: the receiver's acknowledgement is in the replicated
    journal (``central_report_delivered``), so it neither writes that day again nor sends it."""
    import shutil

    from server_kit.keys import journal_key_path

    receiver, path = await receiver_and_central(tmp_path)
    home = path.parent
    pki = tmp_path / "pki"
    try:
        central = await boot(path, EPOCH_S)
        try:
            await play_a_game(central)
        finally:
            await halt(central)
        central = await boot(path, EPOCH_S + DAY_S)
        try:
            await until(lambda: len(central.records("central_report_delivered")) == 2,
                        "the first process to deliver the day's reports and journal the acks")
        finally:
            await halt(central)
        assert sorted(r.name for r in receiver.inbox.received()) == [f"audit-{GAME_DAY}", f"daily-{GAME_DAY}"]

        # The other process: the same database, journal key and signer, a home of its own.
        other = tmp_path / "central-b"
        (other / "keys").mkdir(parents=True)
        shutil.copy2(journal_key_path(home), journal_key_path(other))
        shutil.copy2(home / "journal.head", other / "journal.head")
        install_report_signing(pki, "central-reports", other)
        other_path = other / "central.toml"
        other_path.write_text(path.read_text().replace(f'home = "{home}"', f'home = "{other}"'))
        taking_over = await boot(other_path, EPOCH_S + DAY_S + 60)
        try:
            feed = taking_over.server.feed
            assert feed is not None and feed.outbox is not None

            def caught_up() -> bool:
                status = feed.status()
                return status.connected and status.acked == status.committed and not feed.outbox.dirty

            await until(caught_up, "the taking-over process's feed to hold nothing more to send")
            assert closer(taking_over.server).written == [], "a day the regulator acknowledged is not written again"
        finally:
            await halt(taking_over)
        received = [(r.name, r.digest) for r in receiver.inbox.received()]
        assert sorted(name for name, _ in received) == [f"audit-{GAME_DAY}", f"daily-{GAME_DAY}"], \
            "each report reached the regulator once"
    finally:
        await receiver.stopService()


async def play_game_of_the_day(central: Running, game_id: str) -> None:
    """The operator opens ``game_id``'s sale; two halls buy; it is drawn to its bingo."""
    from server_kit.core import Actor

    server = central.server
    one, two = await central.hall("hall-1"), await central.hall("hall-2")
    await server.module.open_sale(game_id, Actor("olga", "operator"))
    assert (await one.buy(f"{game_id}-a", count=5, game=game_id))["status"] == "confirmed"
    assert (await two.buy(f"{game_id}-b", hall="hall-2", terminal="K1", player="q1", count=3,
                          game=game_id))["status"] == "confirmed"
    def step() -> tuple[str, int]:
        game = server.module.games[game_id]
        return str(game.phase), len(game.balls)

    central.clock.advance(10.01)  # the sale's window
    await until(lambda: step()[0] != "selling" and (server.module.armed(game_id) or step()[0] == "closed"),
                f"{game_id}'s sale to close")
    while step()[0] != "closed":  # a ball a second, to the bingo
        before = step()
        central.clock.advance(1.01)
        await until(lambda: step() != before and server.module.armed(game_id) or step()[0] == "closed",
                    f"{game_id}'s next ball")
    await until(server.core.settled, "the game's last records committed")


@pytest.mark.req("R95.4", "R92.7")
async def test_a_receiver_configured_after_three_closed_days_receives_and_replays_each_oldest_first(
        tmp_path: Path) -> None:
    """The central server closes three days of network games with no [regulator]; configured then, its
    feed sends the journal and every day's audit export and daily report it lacks, oldest day first, and
    the receiver replays each day card by card."""
    from regulator.senders import SenderRegistry
    from regulator.service import ReceiverService, ReceiverSettings
    from server_kit.keys import journal_key_path, load_journal_key

    path = central_folder(tmp_path)
    home = path.parent
    games = ("net-1", "net-2", "net-3")
    path.write_text(config_text(home, tmp_path / "pki", f"sqlite:///{home / 'central.sqlite3'}", games=games,
                                opens_after_ms=None, sale_ms=10_000))
    days = [day_after(GAME_DAY, n) for n in range(3)]
    for n, game_id in enumerate(games):
        central = await boot(path, EPOCH_S + n * DAY_S)
        try:
            await play_game_of_the_day(central, game_id)
        finally:
            await halt(central)

    (tmp_path / "regulator").mkdir()
    issue_certificate(tmp_path / "pki", "regulator", "regulator")
    receiver = ReceiverService(reactor, ReceiverSettings(tmp_path / "regulator", tmp_path / "pki", "regulator", 0,
                                                         "127.0.0.1", web_port=None))
    receiver.startService()
    await receiver.listening
    try:
        SenderRegistry(tmp_path / "regulator").register(
            "central", load_journal_key(journal_key_path(home), create=True).public_key())
        path.write_text(path.read_text() + f'\n[regulator]\nhost = "127.0.0.1"\nport = {receiver.port.getHost().port}'
                                           '\nserver_name = "localhost"\n')
        central = await boot(path, EPOCH_S + 3 * DAY_S)
        try:
            await until(lambda: len(receiver.receiver.days.verdicts()) == 3 and len(receiver.inbox.received()) == 6,
                        "the three days' reports received and replayed at the receiver", 120)
            received = [(r.name, r.verified) for r in reversed(receiver.inbox.received())]  # in the order received
            assert received == [(f"{kind}-{day}", True) for day in days for kind in ("audit", "daily")], received
            verdicts = sorted((v.day, v.verdict, v.games) for v in receiver.receiver.days.verdicts())
            assert verdicts == [(day, "verified", (game_id,)) for day, game_id in zip(days, games)]
            assert receiver.store.alerts() == []
        finally:
            await halt(central)
    finally:
        await receiver.stopService()


@pytest.mark.req("R83.5")
def test_a_day_is_written_only_once_the_records_decided_before_its_close_are_committed(tmp_path: Path) -> None:
    """R83.5: a pass that finds the journal behind the records already decided (a commit in flight at midnight)
    writes nothing and looks again a second later; a folder left half-written by a stop is not a report the feed
    sends, and is written again whole."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from central_server import store
    from central_server.daily_close import RETRY_S, DayCloser
    from server_kit.core import run_inline
    from server_kit.feed.reports import ReportOutbox
    from server_kit.journal.sql import Journal

    pki = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    issue_certificate(pki, "report-signing", "central-reports")
    install_report_signing(pki, "central-reports", home)
    journal = Journal(store.open_database(f"sqlite:///{home / 'central.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=home / "journal.head")
    journal.initialise(int(EPOCH_S * 1000), {"central": "central-a"})
    stale = home / "reports" / f".daily-{GAME_DAY}.partial"
    stale.mkdir(parents=True)
    (stale / "report.json").write_text("{}")
    (stale / "report.json.p7s").write_text("half")
    outbox = ReportOutbox(home / "reports", "central")
    assert outbox.due() is None  # the feed passes a folder being written by

    assert journal.last is not None
    decided = [journal.last.seq + 1]  # one record decided, its commit not done
    clock = task.Clock()
    clock.advance(EPOCH_S + DAY_S)
    day_closer = DayCloser(journal, home, "central-a", "UTC", clock, run_inline, decided_seq=lambda: decided[0])
    told: list[int] = []
    day_closer.listeners.append(lambda: told.append(1))
    day_closer.startService()
    try:
        assert day_closer.written == [] and armed_at(day_closer, EPOCH_S + DAY_S + RETRY_S)
        decided[0] -= 1  # committed
        clock.advance(RETRY_S)
        assert day_closer.written == [home / "reports" / f"daily-{GAME_DAY}"] and told == [1]
        assert reports(home) == [f"daily-{GAME_DAY}"]
        outbox.changed()
        due = outbox.due()
        assert due is not None and due.name == f"daily-{GAME_DAY}"
        assert sorted(due.files) == sorted([*FILES, *(f"{name}.p7s" for name in FILES)])
    finally:
        day_closer.stopService()
        journal.engine.dispose()
