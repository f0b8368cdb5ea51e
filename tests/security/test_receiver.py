"""The regulator's receiver attacked as a process: ``bingo regulator serve``, real mutual TLS on
loopback, its feed port spoken to as a hall speaks (AMP) and its page as a browser asks.

What each test proves, named for the finding it closes:

* N1 - the page and its APIs answer a regulator's or an inspector's certificate only
  (every other role of the operator's PKI: 403 before anything is read; none, or a
  certificate that is no TLS client: no handshake); the receiver stores no secret (a PIN's
  or a token's hash) and refuses a record that holds one; visitors' names and documents
  only to the regulator's role;
* N9 - ``/api/records`` reads a page, not a sender's every record, off the reactor: a
  flood of requests on a sender of 60,000 records leaves the receiver's memory flat and
  its feed answering;
* N10 - a hall's TLS certificate alone raises no flood of false "rewritten" alerts (a
  record is checked against the registered key before anything else, and alerts are
  counted per sender), and a hall the regulator has not registered feeds nothing;
* N11 - every folder of the receiver is 0700 and every file 0600, reports included;
* N13 - a report is taken as signed only by the sender's own report-signing certificate;
* N16 - no ``Server`` banner, HSTS on every answer of the page.

One receiver process serves the module; each test feeds its own senders or records.
"""

from __future__ import annotations

from contextlib import closing
import hashlib
import http.client
import json
import os
import socket
import sqlite3
import ssl
import stat
import struct
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.chain import Record, canonical_json, sealed_form
from protocol.regulator_feed import Ack, Batch, Hello, Position, Report, ReportAck, decode, encode
from server_kit.journal.fake import FakeJournal
from server_kit.pki import PkiFolder, Role, export_bundle, init_authority, issue_certificate
from server_kit.pki.folder import load_report_signing
from server_kit.ports import reserve_port
from server_kit.reports.cms import ReportSigner
from tests.regulator.test_feed_processes import REPO, ReceiverProcess
from tests.support.waiting import WAIT, wait_until

pytestmark = [pytest.mark.integration]

HALL, OTHER, SECRETS, BIG, UNREGISTERED = "hall-1", "hall-2", "hall-3", "hall-big", "hall-5"
REGULATOR, INSPECTOR = "reg-ana", "insp-ivo"
PIN_HASH = "scrypt$16384$8$1$" + "5a" * 16 + "$" + "c3" * 32
TOKEN_HASH = hashlib.sha256(b"the kiosk's enrolment token").hexdigest()
VISITOR = {"number": 1, "name": "Marta Puig Serra", "document": "X1234567A"}
FILLER = 120  # records after the facts, so a hall holds more than a forged flood names


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from regulator.cli import regulator; regulator()", *args],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=60)


class FeedRefused(Exception):
    """The receiver answered ``FEED_REFUSED``; the message is its reason."""


class BlockingFeed:
    """A sender's AMP connection to the receiver over mutual TLS, one command at a time, as a
    hall's link speaks it (``server_kit/feed/link.py``), on a plain blocking socket."""

    def __init__(self, world: "World", certificate: str) -> None:
        context = ssl.create_default_context(cafile=str(world.pki / "ca.pem"))
        folder = PkiFolder(world.pki)
        context.load_cert_chain(str(folder.cert(certificate)), str(folder.key(certificate)))
        raw = socket.create_connection(("127.0.0.1", world.receiver.port), timeout=WAIT)
        self.socket = context.wrap_socket(raw, server_hostname="localhost")
        self.asked = 0

    def close(self) -> None:
        self.socket.close()

    def __enter__(self) -> "BlockingFeed":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def call(self, command: bytes, message: bytes) -> Any:
        self.asked += 1
        box = {b"_command": command, b"_ask": str(self.asked).encode()}
        pieces = [message[at:at + 0xFFFF] for at in range(0, len(message), 0xFFFF)] or [b""]
        box[b"message"] = str(len(pieces)).encode()
        for index, piece in enumerate(pieces):
            box[b"message." + str(index).encode()] = piece
        self.socket.sendall(b"".join(struct.pack(">H", len(k)) + k + struct.pack(">H", len(v)) + v
                                     for k, v in box.items()) + b"\x00\x00")
        answer = self._box()
        if b"_error" in answer:
            raise FeedRefused(answer.get(b"_error_description", b"").decode())
        count = int(answer[b"message"])
        return decode(b"".join(answer[b"message." + str(i).encode()] for i in range(count)))

    def _box(self) -> dict[bytes, bytes]:
        box: dict[bytes, bytes] = {}
        while True:
            (length,) = struct.unpack(">H", self._exactly(2))
            if length == 0:
                return box
            key = self._exactly(length)
            (length,) = struct.unpack(">H", self._exactly(2))
            box[key] = self._exactly(length)

    def _exactly(self, count: int) -> bytes:
        data = b""
        while len(data) < count:
            chunk = self.socket.recv(count - len(data))
            if not chunk:
                raise ConnectionError("the receiver closed the connection")
            data += chunk
        return data

    def hello(self, sender: str, key: Ed25519PrivateKey) -> Position:
        pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                            serialization.PublicFormat.SubjectPublicKeyInfo).decode()
        return self.call(b"FeedHello", encode(Hello(sender, pem)))  # type: ignore[no-any-return]

    def batch(self, sender: str, records: list[Record]) -> Ack:
        return self.call(b"FeedBatch", encode(Batch(sender, tuple(records))))  # type: ignore[no-any-return]

    def report(self, sender: str, name: str, files: dict[str, bytes]) -> ReportAck:
        return self.call(b"FeedReport", encode(Report(sender, name, files)))  # type: ignore[no-any-return]


@dataclass
class World:
    home: Path
    pki: Path
    receiver: ReceiverProcess
    keys: dict[str, Ed25519PrivateKey]  # each registered hall's journal key
    records: list[Record]  # hall-1's journal, as kept (its secrets in it)

    @property
    def web(self) -> int:
        assert self.receiver.web_port is not None
        return self.receiver.web_port


def _hall_journal(key: Ed25519PrivateKey) -> list[Record]:
    journal = FakeJournal(key)
    journal.append(1_000, [("journal_opened", {"hall": HALL})])
    journal.append(1_010, [("visitor_admitted", VISITOR)])
    journal.append(1_020, [("player_account_opened", {"account": "7001234", "medium": "card", "visitor": 1,
                                                      "pin_hash": PIN_HASH})])
    journal.append(1_030, [("terminal_enrolled", {"terminal": "kiosk-1", "token_hash": TOKEN_HASH, "place": "bar"})])
    for n in range(FILLER):
        journal.append(1_100 + n, [("journal_opened", {"hall": HALL})])
    return list(journal.records())


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    base = tmp_path_factory.mktemp("receiver")
    pki, home = base / "pki", base / "regulator"
    init_authority(pki, "Acme Bingo")
    for name in (HALL, OTHER, SECRETS, UNREGISTERED):
        issue_certificate(pki, "server", name)
    issue_certificate(pki, "regulator", "regulator")
    issue_certificate(pki, "regulator", REGULATOR)
    issue_certificate(pki, "inspector", INSPECTOR)
    for role in Role:  # one certificate of every role, for the matrix
        if not PkiFolder(pki).cert(f"any-{role}").exists():
            issue_certificate(pki, str(role), f"any-{role}")
    for name in (f"{HALL}-reports", f"{OTHER}-reports"):
        issue_certificate(pki, "report-signing", name)
    issue_certificate(pki, "terminal", "kiosk-1")
    export_bundle(pki, "regulator", base / "receiver-pki")
    keys = {name: Ed25519PrivateKey.generate() for name in (HALL, OTHER, SECRETS)}
    for name, key in keys.items():  # the regulator registers each hall, with the command
        public = base / f"{name}.pub.pem"
        public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                         serialization.PublicFormat.SubjectPublicKeyInfo))
        done = _run("register-sender", f"hall:{name}", "--journal-key", str(public), "--dir", str(home))
        assert done.returncode == 0, done.stderr
    receiver = ReceiverProcess(home, base / "receiver-pki", reserve_port(), reserve_port())
    receiver.umask = 0o022  # a usual login's: what the receiver writes is private by its own doing
    receiver.start()
    world = World(home, pki, receiver, keys, _hall_journal(keys[HALL]))
    try:
        wait_until(lambda: _reachable(world), WAIT, "the receiver's page to listen")
        with BlockingFeed(world, HALL) as feed:  # the hall's link sends its records sealed
            assert feed.hello(f"hall:{HALL}", keys[HALL]).acked == 0
            assert feed.batch(f"hall:{HALL}", [sealed_form(r) for r in world.records]).seq == len(world.records)
        yield world
    finally:
        receiver.kill()


def _reachable(world: World) -> bool:
    try:
        get(world, "/api/status", REGULATOR)
    except OSError:
        return False
    return True


def get(world: World, path: str, certificate: str | None) -> tuple[int, Any, http.client.HTTPResponse]:
    """``GET path`` on the receiver's page presenting ``certificate`` (or none): status, answer, response."""
    context = ssl.create_default_context(cafile=str(world.pki / "ca.pem"))
    if certificate is not None:
        folder = PkiFolder(world.pki)
        context.load_cert_chain(str(folder.cert(certificate)), str(folder.key(certificate)))
    connection = http.client.HTTPSConnection("localhost", world.web, timeout=WAIT, context=context)
    try:
        connection.request("GET", path)
        response = connection.getresponse()
        body = response.read()
    finally:
        connection.close()
    kind = response.getheader("Content-Type") or ""
    return response.status, json.loads(body) if "json" in kind else body.decode(), response


def alerts(world: World, sender: str) -> list[dict[str, Any]]:
    return [a for a in get(world, "/api/status", REGULATOR)[1]["alerts"] if a["sender"] == sender]


def held(world: World, sender: str) -> int:
    return next((s["seq"] for s in get(world, "/api/status", REGULATOR)[1]["senders"] if s["sender"] == sender), 0)


# --- N1: the page is the regulator's; no secret is stored -------------------------------------------------

PATHS = ("/", "/api/status", f"/api/records?sender=hall:{HALL}")


@pytest.mark.req("R95.3")
@pytest.mark.parametrize("kind", [None, *(str(role) for role in Role)])
def test_N1_the_page_and_its_apis_answer_a_regulators_or_an_inspectors_certificate_only(
    world: World, kind: str | None
) -> None:
    """The role matrix of the receiver's page: with no certificate anyone read every record of every hall."""
    certificate = None if kind is None else f"any-{kind}"
    for path in PATHS:
        if kind is None or kind == "report-signing":  # no TLS client certificate: no handshake, no HTTP at all
            with pytest.raises((ssl.SSLError, ConnectionError)):
                get(world, path, certificate)
            continue
        status, answer, _ = get(world, path, certificate)
        if kind in ("regulator", "inspector"):
            assert status == 200, (path, answer)
            continue
        assert status == 403, (kind, path, status)
        article = "an" if kind[0] in "aeiou" else "a"
        assert answer == {"error": "the receiver's page is the regulator's: it answers a regulator's or an "
                                   f"inspector's certificate of the operator's authority; {article} {kind} "
                                   f"certificate (any-{kind}) may not read it"}


def test_N1_the_receiver_stores_no_secret_and_refuses_a_record_that_holds_one(world: World) -> None:
    """PIN and token hashes were stored and served: a 4-digit PIN fell to an offline search of its hash."""
    sender, key = f"hall:{SECRETS}", world.keys[SECRETS]
    kept = _hall_journal(key)[:4]  # its opening, a visitor, a player account (PIN hash), a terminal (token hash)
    with BlockingFeed(world, SECRETS) as feed:
        feed.hello(sender, key)
        assert feed.batch(sender, kept[:2]).seq == 2
        assert feed.batch(sender, [kept[2]]).seq == 2  # the account as the hall keeps it: refused, not stored
        (alert,) = [a for a in alerts(world, sender) if a["kind"] == "secret_held"]
        assert alert["seq"] == 3 and "holds a secret (pin_hash, sealed)" in alert["detail"], alert
        assert feed.batch(sender, [sealed_form(r) for r in kept[2:]]).seq == 4  # sealed, as the feed sends them
    # The regulator reads the records as signed, each secret a commitment its signature covers.
    status, answer, _ = get(world, f"/api/records?sender={sender}&type=player_account_opened", REGULATOR)
    (account,) = answer["records"]
    assert status == 200 and set(account["payload"]["pin_hash"]) == {"commitment"} and "sealed" not in account["payload"]
    body = canonical_json({k: account[k] for k in ("seq", "time_ms", "type", "payload", "prev")})
    assert hashlib.sha256(body).hexdigest() == account["hash"] == kept[2].hash
    key.public_key().verify(bytes.fromhex(account["signature"]), body)
    # Nothing the receiver wrote holds a secret: not its database, its log, its journal, its files.
    secrets = [PIN_HASH, TOKEN_HASH] + [nonce for r in world.records + kept for nonce in r.payload.get("sealed", {}).values()]
    for path in world.home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [s for s in secrets if s.encode() in data], path
    assert not [s for s in secrets if s.encode() in world.receiver.output]


@pytest.mark.req("R75.1-3")
def test_N1_visitors_names_and_documents_are_shown_to_the_regulators_role_only(world: World) -> None:
    path = f"/api/records?sender=hall:{HALL}&type=visitor_admitted"
    status, answer, _ = get(world, path, REGULATOR)
    (visitor,) = answer["records"]
    assert status == 200 and visitor["payload"] == VISITOR and "withheld" not in visitor
    status, answer, _ = get(world, path, INSPECTOR)
    (visitor,) = answer["records"]
    assert status == 200 and visitor["payload"] == {"number": 1} and visitor["withheld"] == ["name", "document"]
    assert VISITOR["document"] not in json.dumps(answer) and VISITOR["name"] not in json.dumps(answer)


# --- N9: a page at a time, off the reactor -----------------------------------------------------------------

def _peak_kib(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith("VmHWM:")).split()[1])


def test_N9_records_are_read_a_bounded_page_at_a_time_off_the_reactor(world: World) -> None:
    """20 requests on a sender of 60,000 records read every row each, on the feed's reactor: a hall's
    hello waited 21.8 s.  Now each reads one page, off the reactor: the receiver's peak memory stays
    flat, the feed answers."""
    records = 60_000
    with closing(sqlite3.connect(world.home / "regulator.sqlite3", timeout=WAIT)) as db, db:
        db.execute("INSERT INTO feed_sender VALUES (?, ?, ?, ?, ?)", (f"hall:{BIG}", "", records, "0" * 64, 1))
        filler = json.dumps({"hall": BIG, "note": "x" * 1_000})
        db.executemany("INSERT INTO feed_record VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                       ((f"hall:{BIG}", seq, seq, "journal_opened", filler, "0" * 64, "%064x" % seq, "0" * 128)
                        for seq in range(1, records + 1)))
    pid = world.receiver.process.pid  # type: ignore[union-attr]
    Path(f"/proc/{pid}/clear_refs").write_text("5")  # the peak starts again from now
    before = _peak_kib(pid)
    queries = [f"/api/records?sender=hall:{BIG}", f"/api/records?sender=hall:{BIG}&limit=500",
               f"/api/records?sender=hall:{BIG}&after=59990&limit=500", f"/api/records?sender=hall:{BIG}&type=none"]
    # Twelve at once: the connection guard lets one certificate hold 16 connections, and a
    # connection the test just closed may not be counted out yet.
    with ThreadPoolExecutor(max_workers=12) as pool:
        flood = [pool.submit(get, world, queries[n % len(queries)], INSPECTOR) for n in range(12)]
        with BlockingFeed(world, HALL) as feed:  # the feed is answered while the flood is read
            assert feed.hello(f"hall:{HALL}", world.keys[HALL]).acked >= len(world.records)
        answers = [done.result(timeout=WAIT)[1] for done in flood]
    grown_mib = (_peak_kib(pid) - before) / 1024
    assert grown_mib < 40, f"the receiver's peak memory grew by {grown_mib:.0f} MiB reading pages of records"
    by_query = {q: a for q, a in zip(queries, answers)}
    first = by_query[queries[0]]
    assert [r["seq"] for r in first["records"]] == list(range(1, 101)) and first["next_after"] == 100
    assert [r["seq"] for r in by_query[queries[2]]["records"]] == list(range(59_991, 60_001))
    assert by_query[queries[2]]["next_after"] is None and by_query[queries[3]]["records"] == []
    # The pages follow one another: next_after is the after of the next.
    _, following, _ = get(world, f"/api/records?sender=hall:{BIG}&after={first['next_after']}&limit=3", REGULATOR)
    assert [r["seq"] for r in following["records"]] == [101, 102, 103] and following["next_after"] == 103


# --- N10: the registered key, signatures first, alerts counted -------------------------------------------

@pytest.mark.req("R92.7")
def test_N10_a_halls_certificate_alone_raises_no_flood_of_false_alerts_and_an_unregistered_hall_feeds_nothing(
    world: World,
) -> None:
    """With a hall's TLS certificate alone (not its journal key): 89 false "record rewritten" alerts in
    0.3 s; and a new hall name's first key was taken (60,000 forged records accepted for hall-5)."""
    sender = f"hall:{HALL}"
    forger = FakeJournal()  # the attacker's own journal key
    for n in range(89):
        forger.append(5_000 + n, [("journal_opened", {"hall": "forged"})])
    before = [a for a in alerts(world, sender) if a["kind"] in ("bad_signature", "broken_chain")]
    with BlockingFeed(world, HALL) as feed:
        stands = feed.hello(sender, world.keys[HALL]).acked  # the hall's public key: no secret
        for record in forger.records():  # records it holds, "rewritten", each on its own
            assert feed.batch(sender, [record]).seq == stands
    raised = [a for a in alerts(world, sender) if a["kind"] in ("bad_signature", "broken_chain")]
    assert before == [] and len(raised) == 1, raised
    (alert,) = raised
    assert (alert["kind"], alert["seq"], alert["repeats"], alert["last_seq"]) == ("bad_signature", 1, 88, 89)
    assert "does not verify against the key registered for hall:hall-1" in alert["detail"]
    # The page says how many, on the one alert.
    assert "and 88 more of its kind within a minute of it" in get(world, "/?lang=en", REGULATOR)[1]
    # A hall's certificate the regulator never registered: its hello is refused, nothing is stored.
    other = f"hall:{UNREGISTERED}"
    with BlockingFeed(world, UNREGISTERED) as feed:
        with pytest.raises(FeedRefused, match="hall:hall-5 is not registered with this receiver"):
            feed.hello(other, forger.key)
        with pytest.raises(FeedRefused, match="sent records before its hello"):
            feed.batch(other, list(forger.records()))
    assert held(world, other) == 0
    assert [a["kind"] for a in alerts(world, other)] == ["not_registered"]


# --- N11: the receiver's folder ----------------------------------------------------------------------------

def test_N11_every_folder_of_the_receiver_is_0700_and_every_file_0600_reports_included(world: World) -> None:
    """The database (every hall's records), the journal's head and key and the reports were 0644 in 0755."""
    signer = ReportSigner(*load_report_signing(PkiFolder(world.pki).cert(f"{HALL}-reports"),
                                               PkiFolder(world.pki).key(f"{HALL}-reports")))
    text = b'{"day": "2026-11-30"}'
    with BlockingFeed(world, HALL) as feed:
        feed.report(f"hall:{HALL}", "daily-2026-11-30", {"report.json": text, "report.json.p7s": signer.sign(text)})
    reports = list((world.home / "reports").rglob("*"))
    assert any(p.name == "report.json" for p in reports)
    paths = [world.home, *world.home.rglob("*")]
    loose = [f"{p.relative_to(world.home.parent)} {stat.filemode(p.stat().st_mode)}" for p in paths
             if stat.S_IMODE(p.stat().st_mode) != (0o700 if p.is_dir() else 0o600)]
    assert loose == []
    assert {p.name for p in paths} >= {"regulator.sqlite3", "senders.toml", "journal.head", "journal-signing.pem",
                                       "reports", "report.json.p7s"}


# --- N13: the sender's own report-signing certificate ------------------------------------------------------

@pytest.mark.req("R92.7")
def test_N13_a_report_is_taken_as_signed_only_by_the_senders_own_report_signing_certificate(world: World) -> None:
    """A kiosk's key was accepted as a report's signer (any certificate of the operator's authority)."""
    folder = PkiFolder(world.pki)

    def signer(name: str) -> ReportSigner:  # any certificate's EC key signs CMS: what the attacker held
        key = serialization.load_pem_private_key(folder.key(name).read_bytes(), password=None)
        return ReportSigner(x509.load_pem_x509_certificate(folder.cert(name).read_bytes()), key)  # type: ignore[arg-type]

    sent = {"daily-2026-12-01": signer("kiosk-1"), "daily-2026-12-02": signer(f"{OTHER}-reports"),
            "daily-2026-12-03": signer(f"{HALL}-reports")}
    with BlockingFeed(world, HALL) as feed:
        for name, by in sent.items():
            text = json.dumps({"day": name[6:], "sales_cents": 15_600}).encode()
            feed.report(f"hall:{HALL}", name, {"report.json": text, "report.json.p7s": by.sign(text)})
    received = {r["name"]: r for r in get(world, "/api/status", REGULATOR)[1]["reports"] if r["name"] in sent}
    assert not received["daily-2026-12-01"]["verified"]
    assert ("report.json.p7s: signed by the terminal certificate kiosk-1, not by a report-signing certificate of "
            "this sender (hall-1-reports)") in received["daily-2026-12-01"]["detail"]
    assert not received["daily-2026-12-02"]["verified"]
    assert "signed by the report-signing certificate hall-2-reports" in received["daily-2026-12-02"]["detail"]
    assert received["daily-2026-12-03"]["verified"], received["daily-2026-12-03"]
    unverified = [a for a in alerts(world, f"hall:{HALL}") if a["kind"] == "report_unverified"]
    assert unverified and "kiosk-1" in unverified[0]["detail"]


# --- N16: the page's headers -------------------------------------------------------------------------------

def test_N16_the_page_sends_no_server_banner_and_hsts_on_every_answer(world: World) -> None:
    for path, certificate in (("/", REGULATOR), ("/api/status", INSPECTOR), ("/nowhere", REGULATOR),
                              ("/", "any-terminal")):
        status, _, response = get(world, path, certificate)
        assert response.getheader("Server") is None, (path, response.getheader("Server"))
        assert response.getheader("Strict-Transport-Security") == "max-age=31536000", (path, status)
