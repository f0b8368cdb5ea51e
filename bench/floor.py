"""The floor: the least a server of the hall's I/O shape can do, for the benchmarks to stand beside.

Three bare servers with the real servers' I/O and nothing else: a request comes in, is
parsed, becomes one row, the row is committed durably by one writer thread in a group
commit, and the answer goes out after the commit.

* **terminals** - a WebSocket at ``/ws`` (Twisted's own, ``twisted.web.websocket``, as
  the terminal gateway's ``/kiosk/ws``), JSON text frames numbered as
  ``protocol/terminal_messages.py`` says; ``hello`` and ``sign_in`` are answered with a
  ``state`` at once (nothing is written), a ``buy`` becomes one row and is answered with
  ``bought`` once it is on disk, so :class:`terminals.client.TerminalClient` drives it
  unchanged;
* **machines** - the same for the video bingo stations (``bingo-vb-machine/1``): ``hello``
  answered with ``welcome``, a ``play`` one row, answered with ``play`` after the commit,
  so :class:`terminals.vb_machine.MachineClient` drives it unchanged;
* **consoles** - the command channel as ``bench/bench_commands.py`` drives the real one
  (a parsed request in, an answer ``{"id", "ok", "records": [{"seq", "type"}]}`` out):
  each command one row.

The rows go to one SQLite table opened by the real servers' own opening
(:func:`server_kit.db.database.create`: WAL, ``synchronous=FULL``, the busy timeout), in
statements of up to 1,000 rows as the journal writes them; after each transaction a head
file naming the last row is written, fsync'd, renamed and its folder fsync'd, as the
journal writes its signed head (``server_kit/journal/sql.py``).  So each commit makes
the journal's fsyncs: the WAL's, the head file's and its folder's.

Left out, since they are what the hall does and not how it talks: signatures and hashes
(no record is sealed, linked or signed, and the head is not signed), the schema checks of
the messages and the frame meter in front of the WebSocket, sessions, accounts, PINs,
cards, credit and every rule.  ``bought``, ``play`` and the commands' answers have the
real ones' fields, with nothing in them the floor would have to decide (no cards, no
balls, no money); ``welcome`` and ``state`` only what the clients read.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, cast

from twisted.internet import defer
from twisted.internet.interfaces import IListeningPort
from twisted.internet.threads import deferToThreadPool
from twisted.python.failure import Failure
from twisted.python.threadpool import ThreadPool
from twisted.web.resource import Resource
from twisted.web.server import Request, Site
from twisted.web.websocket import WebSocketResource, WebSocketTransport

from protocol.terminal_messages import VERSION
from server_kit.db.database import create
from server_kit.journal.sql import replace_durably

SCHEMA = "CREATE TABLE IF NOT EXISTS floor (seq INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, type TEXT NOT NULL, " \
         "payload TEXT NOT NULL)"
#: Rows in one INSERT statement at most, as the journal's (``server_kit.journal.table.ROWS_A_STATEMENT``).
ROWS_A_STATEMENT = 1000


@dataclass(frozen=True)
class Committed:
    """A row on disk: its number and the time it was given."""

    seq: int
    time_ms: int


@functools.lru_cache(maxsize=8)
def insert_sql(rows: int) -> str:
    """The statement inserting ``rows`` rows of four values."""
    return "INSERT INTO floor (seq, time_ms, type, payload) VALUES " + ", ".join(["(?, ?, ?, ?)"] * rows)


def write_head(path: Path, seq: int) -> None:
    """The last row's number at ``path``, written as the journal writes its head
    (:func:`server_kit.journal.sql.replace_durably`)."""
    replace_durably(path, json.dumps({"seq": seq}).encode())


class GroupCommit:
    """Rows committed by one writer thread: the rows that came while a transaction was in
    flight all go in the next one.

    :meth:`append` fires with the row's :class:`Committed` once its transaction and the head
    after it are on disk.  Rows sent by the answers themselves (a console sending its next
    command as soon as it is answered) are gathered until every answer of the batch is out,
    so that they share one transaction: the fewest commits.  (The hall's core hands the rows
    decided during a commit to the writer before it answers, so a row sent by an answer
    waits for the commit after: more, smaller commits, about the same commands a second.)
    """

    def __init__(self, folder: Path, reactor: Any) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.reactor = reactor
        self.engine = create(f"sqlite:///{folder / 'floor.sqlite3'}")
        self.head = folder / "floor.head"
        self.writer = ThreadPool(minthreads=1, maxthreads=1, name="floor-writer")
        self.rows = 0
        self.commits = 0
        self._connection = self.engine.raw_connection()
        self._database = cast(sqlite3.Connection, self._connection.driver_connection)
        self._waiting: list[tuple[str, str, defer.Deferred[Committed]]] = []
        self._in_flight = False
        self._answering = False
        self._next_seq = 1

    def start(self) -> None:
        with self._database:
            self._database.execute(SCHEMA)
        self.writer.start()

    def stop(self) -> None:
        """Stop the writer thread and close the database (nothing may be in flight)."""
        self.writer.stop()
        self._connection.close()
        self.engine.dispose()

    def append(self, kind: str, payload: str) -> defer.Deferred[Committed]:
        committed: defer.Deferred[Committed] = defer.Deferred()
        self._waiting.append((kind, payload, committed))
        if not self._in_flight and not self._answering:
            self._write_next()
        return committed

    def _write_next(self) -> None:
        batch, self._waiting = self._waiting, []
        if not batch:
            return
        self._in_flight = True
        first, now = self._next_seq, int(self.reactor.seconds() * 1000)
        self._next_seq += len(batch)
        rows = [(seq, now, kind, payload) for seq, (kind, payload, _committed) in enumerate(batch, start=first)]
        writing = deferToThreadPool(self.reactor, self.writer, self._write, rows)
        writing.addCallbacks(self._committed, self._failed, callbackArgs=(batch, first, now), errbackArgs=(batch,))

    def _write(self, rows: list[tuple[int, int, str, str]]) -> None:
        """On the writer thread: the rows in one transaction, then the head."""
        with self._database:  # committed on leaving, rolled back on an error
            for start in range(0, len(rows), ROWS_A_STATEMENT):
                chunk = rows[start:start + ROWS_A_STATEMENT]
                self._database.execute(insert_sql(len(chunk)), [value for row in chunk for value in row])
        write_head(self.head, rows[-1][0])

    def _committed(self, written: None, batch: list[tuple[str, str, defer.Deferred[Committed]]], first: int,
                   now: int) -> None:
        self._in_flight = False
        self.commits += 1
        self.rows += len(batch)
        self._write_next()  # what came during the commit goes to disk while its answers are written
        self._answering = True
        try:
            for seq, (_kind, _payload, committed) in enumerate(batch, start=first):
                committed.callback(Committed(seq, now))
        finally:
            self._answering = False
        if not self._in_flight:
            self._write_next()

    def _failed(self, failure: Failure, batch: list[tuple[str, str, defer.Deferred[Committed]]]) -> None:
        self._in_flight = False
        for _kind, _payload, committed in batch:
            committed.errback(failure)
        self._write_next()


# --- The WebSockets ------------------------------------------------------------------------------


class FloorSocket:
    """A WebSocket's JSON text messages to ``on_<type>`` methods, and ``send`` for the answers."""

    def __init__(self, rows: GroupCommit) -> None:
        self.rows = rows
        self.transport: WebSocketTransport | None = None

    def negotiationStarted(self, transport: WebSocketTransport) -> None:
        self.transport = transport

    def negotiationFinished(self) -> None:
        pass

    def textMessageReceived(self, text: str) -> None:
        message = json.loads(text)
        getattr(self, f"on_{message['type']}")(message)

    def bytesMessageReceived(self, data: bytes | bytearray) -> None:
        pass

    def pongReceived(self, payload: bytes) -> None:
        pass

    def connectionLost(self, reason: Failure) -> None:
        self.transport = None

    def send(self, message: dict[str, Any]) -> None:
        if self.transport is not None:
            self.transport.sendTextMessage(json.dumps(message, separators=(",", ":")))


class TerminalFloor(FloorSocket):
    """A player terminal's connection: ``hello``, ``sign_in`` and ``buy``, numbered both ways."""

    terminal = ""
    account: str | None = None
    outbound = 0

    def send_numbered(self, kind: str, **fields: Any) -> None:
        self.outbound += 1
        self.send({"v": VERSION, "seq": self.outbound, "type": kind, **fields})

    def send_state(self) -> None:
        player = None if self.account is None else {"account": self.account, "credit_cents": 0}
        self.send_numbered("state", time_ms=int(self.rows.reactor.seconds() * 1000), game=None, player=player, cards=[])

    def on_hello(self, message: dict[str, Any]) -> None:
        self.terminal = message["terminal"]
        self.send_state()

    def on_sign_in(self, message: dict[str, Any]) -> None:
        self.account = message["account"]
        self.send_numbered("signed_in", account=self.account, credit_cents=0)
        self.send_state()

    def on_buy(self, message: dict[str, Any]) -> None:
        row = {"terminal": self.terminal, "signed_in": self.account, **{k: message[k] for k in (
            "account", "quantity", "stake_pct", "request")}}
        self.rows.append("purchase", json.dumps(row)).addCallback(
            lambda _: self.send_numbered("bought", in_reply_to=message["seq"], request=message["request"], cards=[],
                                         credit_cents=0))


class MachineFloor(FloorSocket):
    """A video bingo station's connection: ``hello`` and ``play``."""

    machine = ""
    station = 0

    def on_hello(self, message: dict[str, Any]) -> None:
        self.machine, self.station = message["machine"], message["station"]
        self.send({"type": "welcome", "protocol": message["protocol"], "machine": self.machine,
                   "station": self.station, "credit_cents": 0, "last_play": None})

    def on_play(self, message: dict[str, Any]) -> None:
        row = {"machine": self.machine, "station": self.station, "cards": message["cards"], "keep": message["keep"],
               "request": message["request"]}
        self.rows.append("play", json.dumps(row)).addCallback(lambda done: self.send(self.shown(message, done)))

    def shown(self, message: dict[str, Any], done: Committed) -> dict[str, Any]:
        """The ``play`` answer's fields, as ``hall_server.hall.videobingo.PlayShown`` fills them."""
        return {"type": "play", "request": message["request"], "seq": done.seq, "machine": self.machine,
                "station": self.station, "number": done.seq, "at_ms": done.time_ms, "credit_cents": 0, "cards": [],
                "balls": [], "results": [], "stake_cents": 0, "won_cents": 0, "jackpots": [],
                "credit_after_cents": 0, "jackpot_cents": 0}


class _Factory:
    def __init__(self, socket: Callable[[], FloorSocket]) -> None:
        self.socket = socket

    def buildProtocol(self, request: Request) -> FloorSocket:
        return self.socket()


def listen(reactor: Any, rows: GroupCommit, socket: type[FloorSocket]) -> tuple[IListeningPort, str]:
    """``socket`` connections served at ``ws://127.0.0.1:<port>/ws``; the port and that URL."""
    root = Resource()
    root.putChild(b"ws", WebSocketResource(_Factory(lambda: socket(rows))))
    port: IListeningPort = reactor.listenTCP(0, Site(root), interface="127.0.0.1")
    return port, f"ws://127.0.0.1:{port.getHost().port}/ws"  # type: ignore[attr-defined]


# --- The consoles' channel -----------------------------------------------------------------------


class ConsoleFloor:
    """The command channel as the benchmark drives it: a parsed request, one row, the answer after the commit."""

    def __init__(self, rows: GroupCommit) -> None:
        self.rows = rows

    def submit(self, name: str, request: Any) -> defer.Deferred[dict[str, Any]]:
        """``request`` (a :class:`server_kit.web.channel.CommandRequest`) from the staff member ``name``."""
        row = {"actor": name, "request": request.request_id, "args": dict(request.args)}
        return self.rows.append(request.command, json.dumps(row)).addCallback(lambda done: {
            "id": request.request_id, "ok": True, "records": [{"seq": done.seq, "type": request.command}]})
