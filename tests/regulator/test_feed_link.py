"""The feed over its real link: AMP over mutual TLS on loopback, from a hall's signed SQL
journal to the receiver's store, through outages of the receiver (R92.7, R95.3).

What each test proves: every record committed reaches the receiver once, in order,
after the receiver was away and came back; the feed goes only to a regulator's
certificate; the receiver takes records only from a hall's or the central server's
certificate, and only for its own identity."""

from __future__ import annotations

from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet import reactor, task, threads
from twisted.internet.endpoints import SSL4ClientEndpoint, connectProtocol
from twisted.logger import formatEvent, globalLogPublisher
from twisted.protocols import amp
from twisted.python.threadable import isInIOThread

from hall_server.store.database import open_database as open_hall_database
from protocol.regulator_feed import Hello, encode
from regulator.service import ReceiverService, ReceiverSettings
from server_kit.feed.cursor import FeedCursor
from server_kit.feed.link import FeedHello, FeedLinkService, FeedRefusedError, ReceiverAddress
from server_kit.journal.sql import Journal
from server_kit.pki import client_tls_options, init_authority, issue_certificate
from tests.regulator.registration import register_in

pytestmark = [pytest.mark.integration]
HALL = "h1"


@pytest.fixture
def pki_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "pki"
    init_authority(directory, "Acme Bingo")
    issue_certificate(directory, "server", HALL)
    issue_certificate(directory, "regulator", "regulator")
    return directory


def journal_at(folder: Path) -> Journal:
    """A hall's journal in ``folder``, its key registered with the receiver in ``folder/regulator``."""
    key = Ed25519PrivateKey.generate()
    register_in(folder / "regulator", f"hall:{HALL}", key)
    journal = Journal(open_hall_database(f"sqlite:///{folder / 'hall.sqlite3'}"), key, head=folder / "journal.head")
    journal.initialise(1_000, {"hall": HALL})
    return journal


def commit(journal: Journal, count: int) -> None:
    for _ in range(count):
        assert journal.last is not None
        journal.append(journal.last.time_ms + 1, [("journal_opened", {"hall": HALL})])


def pem(journal: Journal) -> str:
    return journal.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


async def until(predicate: Any, what: str, seconds: float = 30.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if predicate():
            return
        await task.deferLater(reactor, 0.05, lambda: None)
    raise AssertionError(f"waited {seconds} s for {what}")


async def receiver(tmp_path: Path, pki_dir: Path, port: int = 0, web_port: int | None = None) -> ReceiverService:
    service = ReceiverService(reactor, ReceiverSettings(tmp_path / "regulator", pki_dir, "regulator", port,
                                                        "127.0.0.1", web_port=web_port))
    service.startService()
    await service.listening
    return service


async def stop(service: ReceiverService) -> None:
    await service.stopService()


def held(service: ReceiverService, sender: str = f"hall:{HALL}") -> list[int]:
    return [r.seq for r in service.store.records(sender)]


@pytest.mark.req("R92.7")
@pytest_twisted.ensureDeferred
async def test_every_record_reaches_the_receiver_once_in_order_across_its_outages(tmp_path: Path, pki_dir: Path) -> None:
    (tmp_path / "regulator").mkdir()
    journal = journal_at(tmp_path)
    commit(journal, 450)  # more than two batches
    first = await receiver(tmp_path, pki_dir)
    port = first.port.getHost().port
    cursor = FeedCursor(journal, f"hall:{HALL}", pem(journal))
    link = FeedLinkService(reactor, cursor, ReceiverAddress("127.0.0.1", port, pki_dir, HALL, "localhost"),
                           read=threads.deferToThread)
    link.startService()
    try:
        await until(lambda: held(first) == list(range(1, 452)), "the 451 records")
        commit(journal, 7)
        link.wake()
        await until(lambda: len(held(first)) == 458, "the 7 records committed after")
        assert link.status().lag == 0 and link.status().line() == "feed: connected, acknowledged 458 of 458 (lag 0)"
        # The receiver goes away; the hall commits on; the receiver comes back on its port.
        await stop(first)
        await until(lambda: not cursor.connected, "the link to see the receiver gone")
        commit(journal, 30)
        assert link.status().line() == "feed: not connected, acknowledged 458 of 488 (lag 30)"
        second = await receiver(tmp_path, pki_dir, port)
        try:
            await until(lambda: held(second) == list(range(1, 489)), "every record after the outage", 60)
            assert second.store.alerts() == []
            stored = list(second.store.records(f"hall:{HALL}"))
            assert [r.hash for r in stored] == [r.hash for r in journal.records()]
        finally:
            await link.stopService()
            await stop(second)
    finally:
        if link.running:
            await link.stopService()


@pytest.mark.req("R92.7")
@pytest_twisted.ensureDeferred
async def test_the_feed_goes_only_to_a_regulators_certificate(tmp_path: Path, pki_dir: Path) -> None:
    """A hall's certificate can serve TLS too: one posing as the receiver is sent nothing."""
    (tmp_path / "regulator").mkdir()
    issue_certificate(pki_dir, "server", "impostor")
    journal = journal_at(tmp_path)
    fake = ReceiverService(reactor, ReceiverSettings(tmp_path / "regulator", pki_dir, "impostor", 0, "127.0.0.1",
                                                     web_port=None))
    fake.startService()
    await fake.listening
    cursor = FeedCursor(journal, f"hall:{HALL}", pem(journal))
    link = FeedLinkService(reactor, cursor,
                           ReceiverAddress("127.0.0.1", fake.port.getHost().port, pki_dir, HALL, "localhost"))
    said: list[str] = []

    def observe(event: dict[str, Any]) -> None:
        if event.get("log_namespace", "").startswith("server_kit.feed.link"):
            said.append(formatEvent(event))

    globalLogPublisher.addObserver(observe)
    link.startService()
    try:
        await until(lambda: any("refused" in line for line in said), "the link to refuse the impostor")
        assert held(fake) == [] and fake.store.senders() == []
        assert cursor.acked is None
        assert any("the receiver presented impostor's certificate, a server's: the feed goes only to a regulator's "
                   "certificate" in line for line in said), said
    finally:
        globalLogPublisher.removeObserver(observe)
        await link.stopService()
        await stop(fake)


async def say_hello(pki_dir: Path, port: int, certificate: str, hello: Hello) -> Any:
    endpoint = SSL4ClientEndpoint(reactor, "127.0.0.1", port, client_tls_options(pki_dir, certificate, "localhost"))
    connection = await connectProtocol(endpoint, amp.AMP())
    try:
        return await connection.callRemote(FeedHello, message=encode(hello))
    finally:
        connection.transport.loseConnection()


@pytest.mark.req("R92.7")
@pytest_twisted.ensureDeferred
async def test_the_receiver_takes_a_feed_only_from_a_hall_or_central_certificate_and_for_itself(
    tmp_path: Path, pki_dir: Path
) -> None:
    (tmp_path / "regulator").mkdir()
    issue_certificate(pki_dir, "terminal", "t-1")
    journal = journal_at(tmp_path)
    service = await receiver(tmp_path, pki_dir)
    port = service.port.getHost().port
    try:
        # A hall may not feed another hall's identity.
        with pytest.raises(FeedRefusedError, match="the certificate is hall:h1's: it may not feed hall:h2"):
            await say_hello(pki_dir, port, HALL, Hello("hall:h2", pem(journal)))
        # A terminal's certificate is cut off: no answer at all.
        with pytest.raises(Exception) as cut:
            await say_hello(pki_dir, port, "t-1", Hello(f"hall:{HALL}", pem(journal)))
        assert not isinstance(cut.value, FeedRefusedError)
        # The hall itself is told where its feed stands.
        answer = await say_hello(pki_dir, port, HALL, Hello(f"hall:{HALL}", pem(journal)))
        assert b'"acked":0' in answer["message"]
        assert [s.sender for s in service.store.senders()] == [f"hall:{HALL}"]
    finally:
        await stop(service)


@pytest.mark.req("R92.7")
@pytest.mark.campaign
@pytest.mark.timeout(600)
@pytest_twisted.ensureDeferred
async def test_a_hundred_random_disconnects_and_restarts_of_either_side_leave_no_gap_and_no_duplicate(
    tmp_path: Path, pki_dir: Path
) -> None:
    """Each of 120 runs, drawn from a seed, while the hall commits: the receiver stopped and
    started again on its port, the connection cut under both, or the hall's link stopped
    and a new one started (a restarted hall: its cursor knows nothing but the journal)."""
    import random

    rng = random.Random(14)
    (tmp_path / "regulator").mkdir()
    journal = journal_at(tmp_path)
    service = await receiver(tmp_path, pki_dir)
    port = service.port.getHost().port

    def new_link() -> FeedLinkService:
        cursor = FeedCursor(journal, f"hall:{HALL}", pem(journal))
        # The journal read on a thread, as the servers read it: a cut while a read is out loses nothing.
        started = FeedLinkService(reactor, cursor, ReceiverAddress("127.0.0.1", port, pki_dir, HALL, "localhost"),
                                  read=threads.deferToThread)
        started.startService()
        return started

    link = new_link()
    done: dict[str, int] = {"receiver": 0, "cut": 0, "hall": 0}
    try:
        for run in range(120):
            commit(journal, rng.randint(0, 40))
            link.wake()
            await task.deferLater(reactor, rng.uniform(0.0, 0.15), lambda: None)
            what = rng.choice(["receiver", "cut", "hall"])
            done[what] += 1
            if what == "receiver":
                await stop(service)
                commit(journal, rng.randint(0, 5))
                service = await receiver(tmp_path, pki_dir, port)
            elif what == "cut":
                for connection in list(service.factory.connections):
                    connection.transport.abortConnection()
            else:
                await link.stopService()
                link = new_link()
        commit(journal, 3)
        link.wake()
        await until(lambda: held(service) == list(range(1, journal.last.seq + 1)), "every record at the end", 120)
        stored = list(service.store.records(f"hall:{HALL}"))
        assert [r.hash for r in stored] == [r.hash for r in journal.records()]  # none missing, none twice, as signed
        assert service.store.alerts() == []
        assert min(done.values()) >= 30 and sum(done.values()) == 120
    finally:
        await link.stopService()
        await stop(service)


def signer_of(pki_dir: Path) -> Any:
    from server_kit.pki import PkiFolder
    from server_kit.reports.cms import ReportSigner
    from server_kit.pki.folder import load_report_signing

    issue_certificate(pki_dir, "report-signing", "h1-reports")
    folder = PkiFolder(pki_dir)
    return ReportSigner(*load_report_signing(folder.cert("h1-reports"), folder.key("h1-reports")))


def write_report(folder: Path, signer: Any, text: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.json").write_bytes(text)
    (folder / "report.json.p7s").write_bytes(signer.sign(text))


@pytest.mark.req("R95.4", "R83.5", "R92.7")
@pytest_twisted.ensureDeferred
async def test_a_signed_report_is_sent_after_the_records_and_again_until_acknowledged_and_checked_with_openssl(
    tmp_path: Path, pki_dir: Path
) -> None:
    from server_kit.feed.reports import ReportOutbox

    (tmp_path / "regulator").mkdir()
    journal = journal_at(tmp_path)
    commit(journal, 5)
    signer = signer_of(pki_dir)
    reports = tmp_path / "hall-reports"
    write_report(reports / "daily-2026-12-01", signer, b'{"day": "2026-12-01", "sales_cents": 15600}')
    service = await receiver(tmp_path, pki_dir)
    port = service.port.getHost().port
    outbox = ReportOutbox(reports, f"hall:{HALL}")
    off_the_reactor: set[str] = set()

    def read(function: Any, *args: Any) -> Any:  # the feed's thread, noting what it ran there
        def run() -> Any:
            if not isInIOThread():
                off_the_reactor.add(function.__name__)
            return function(*args)
        return threads.deferToThread(run)

    link = FeedLinkService(reactor, FeedCursor(journal, f"hall:{HALL}", pem(journal)),
                           ReceiverAddress("127.0.0.1", port, pki_dir, HALL, "localhost"), outbox, read)
    link.startService()
    try:
        await until(lambda: len(service.inbox.received()) == 1, "the report at the receiver")
        assert held(service) == list(range(1, 7))  # the records first
        (first,) = service.inbox.received()
        assert first.name == "daily-2026-12-01" and first.verified, first
        kept = service.inbox.folder(f"hall:{HALL}", "daily-2026-12-01")
        assert (kept / "report.json").read_bytes() == (reports / "daily-2026-12-01" / "report.json").read_bytes()
        await until((reports / "daily-2026-12-01" / ".delivered").exists, "the sender to note the ack")
        # The reports' folder is read, and the ack kept in it, on the feed's thread, never the reactor's.
        assert {"find_due", "matches", "write_delivered"} <= off_the_reactor, off_the_reactor
        # The receiver goes away before a second report is acknowledged; it is sent when it is back.
        await stop(service)
        write_report(reports / "daily-2026-12-02", signer, b'{"day": "2026-12-02", "sales_cents": 200}')
        link.report_written()
        # A report changed after it was signed: kept as evidence, and an alert names the file.
        write_report(reports / "daily-2026-12-03", signer, b'{"day": "2026-12-03", "sales_cents": 300}')
        (reports / "daily-2026-12-03" / "report.json").write_bytes(b'{"day": "2026-12-03", "sales_cents": 301}')
        service = await receiver(tmp_path, pki_dir, port)
        await until(lambda: len(service.inbox.received()) == 3, "the reports after the outage", 60)
        by_name = {r.name: r for r in service.inbox.received()}
        assert by_name["daily-2026-12-02"].verified
        assert not by_name["daily-2026-12-03"].verified
        assert "report.json.p7s" in by_name["daily-2026-12-03"].detail
        # The alert follows the report's own record, in a commit of its own on the receiver's feed thread.
        await until(lambda: len(service.store.alerts()) == 1, "the alert of the report changed after it was signed")
        (alert,) = service.store.alerts()
        assert alert.kind == "report_unverified" and "daily-2026-12-03" in alert.detail
        # Acknowledged reports are not sent again on the next connection.
        for connection in list(service.factory.connections):
            connection.transport.abortConnection()
        commit(journal, 2)
        await until(lambda: len(held(service)) == 8, "the records after the cut")
        await task.deferLater(reactor, 1.5, lambda: None)
        assert len(service.inbox.received()) == 3, [(r.name, r.verified) for r in service.inbox.received()]
    finally:
        await link.stopService()
        await stop(service)


@pytest.mark.req("R95.4", "R92.7")
@pytest_twisted.ensureDeferred
async def test_a_report_larger_than_a_message_arrives_in_parts_and_a_cut_delivery_goes_on_at_the_part_lacking(
    tmp_path: Path, pki_dir: Path
) -> None:
    """A busy day's audit export is larger than one message of the feed: it goes in parts, each kept on the
    receiver's disk as it comes; the connection cut as the second part arrives, the delivery goes on from the
    part the receiver lacks, and the report is taken once, whole, its signature checked."""
    from protocol.regulator_feed import PART_BYTES
    from server_kit.feed.reports import ReportOutbox

    (tmp_path / "regulator").mkdir()
    journal = journal_at(tmp_path)
    commit(journal, 3)
    reports = tmp_path / "hall-reports"
    text = b"".join(b'{"card": %d, "cells": [1, 12, 23, 34, 45, 56, 67, 78, 89]}\n' % i for i in range(200_000))
    assert 2 * PART_BYTES < len(text) < 3 * PART_BYTES  # three parts with its signature
    write_report(reports / "daily-2026-12-01", signer_of(pki_dir), text)
    service = await receiver(tmp_path, pki_dir)
    inbox = service.inbox
    assert inbox is not None
    taken: list[int] = []
    take_part = inbox.take_part

    def spy(part: Any, certified: str) -> Any:
        taken.append(part.index)
        answer = take_part(part, certified)
        if taken.count(1) == 1 and part.index == 1:  # the connection cut as the second part is kept
            reactor.callFromThread(lambda: [c.transport.abortConnection() for c in list(service.factory.connections)])
        return answer

    inbox.take_part = spy  # type: ignore[method-assign]
    link = FeedLinkService(reactor, FeedCursor(journal, f"hall:{HALL}", pem(journal)),
                           ReceiverAddress("127.0.0.1", service.port.getHost().port, pki_dir, HALL, "localhost"),
                           ReportOutbox(reports, f"hall:{HALL}"))
    link.startService()
    try:
        await until(lambda: len(inbox.received()) == 1, "the report, in parts, at the receiver", 90)
        (report,) = inbox.received()
        assert report.name == "daily-2026-12-01" and report.verified, report
        kept = inbox.folder(f"hall:{HALL}", "daily-2026-12-01")
        assert (kept / "report.json").read_bytes() == text
        # Part 0 went once: after the cut the sender went on from the part the receiver lacked.
        assert taken.count(0) == 1 and sorted(set(taken)) == [0, 1, 2] and len(taken) <= 4, taken
        assert not any((kept.parent / ".incoming").iterdir())  # nothing of it left half-held
        await until((reports / "daily-2026-12-01" / ".delivered").exists, "the sender to note the ack")
        assert link.resume == {}
    finally:
        await link.stopService()
        await stop(service)


@pytest.mark.req("R92.7")
@pytest_twisted.ensureDeferred
async def test_a_record_altered_at_the_hall_is_named_at_the_receiver_and_not_sent_again_in_a_tight_loop(
    tmp_path: Path, pki_dir: Path
) -> None:
    import sqlite3

    (tmp_path / "regulator").mkdir()
    journal = journal_at(tmp_path)
    commit(journal, 5)
    with closing(sqlite3.connect(tmp_path / "hall.sqlite3")) as db, db:  # someone with the file edits record 3
        db.execute("UPDATE journal SET payload = ? WHERE seq = 3", ('{"hall":"forged"}',))
    service = await receiver(tmp_path, pki_dir)
    said: list[str] = []

    def observe(event: dict[str, Any]) -> None:
        if "sending again from there" in formatEvent(event):
            said.append(formatEvent(event))

    globalLogPublisher.addObserver(observe)
    link = FeedLinkService(reactor, FeedCursor(journal, f"hall:{HALL}", pem(journal)),
                           ReceiverAddress("127.0.0.1", service.port.getHost().port, pki_dir, HALL, "localhost"))
    link.startService()
    try:
        await until(lambda: service.store.alerts(), "the receiver to name the altered record")
        (alert,) = service.store.alerts()
        assert (alert.kind, alert.seq) == ("bad_signature", 3)
        for _ in range(10):
            commit(journal, 1)
            link.wake()  # commits go on: still nothing is sent before the wait is over
            await task.deferLater(reactor, 0.1, lambda: None)
        assert held(service) == [1, 2] and len(said) == 1, said
    finally:
        globalLogPublisher.removeObserver(observe)
        await link.stopService()
        await stop(service)


def test_a_look_at_the_reports_that_found_none_does_not_hide_one_written_meanwhile(tmp_path: Path) -> None:
    """The folder is read off the reactor: a report written while it was read keeps the outbox looking."""
    from server_kit.feed.reports import ReportOutbox

    outbox = ReportOutbox(tmp_path / "reports", f"hall:{HALL}")
    version = outbox.version
    assert outbox.find_due() is None
    outbox.changed()  # a day's report written while the folder was read
    outbox.clear(version)
    assert outbox.dirty
    version = outbox.version
    assert outbox.find_due() is None
    outbox.clear(version)
    assert not outbox.dirty and outbox.due() is None
