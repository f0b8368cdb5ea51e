"""A staff console and an information board as a program: WebSocket over real TLS.

:class:`LiveSocket` opens ``/ws`` (a signed-in console) or ``/board/ws`` (a public
board) of a real hall server process, the way a browser does: TLS checked against the
hall's own certificate authority, the sign-in cookie from ``POST /login``, RFC 6455
framing by ``wsproto``.  One thread per socket owns the TLS connection (reads and
writes both, since an ``SSLSocket`` is not safe for a reader and a writer on two
threads), and notes the arrival time of every message, so the crash tests can say
what a screen showed before a ``kill -9`` and the benchmark how long a ball took to
reach it.
"""

from __future__ import annotations

import json
import queue
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field
from http.cookiejar import CookieJar
from typing import Any, Callable, cast
from urllib.request import HTTPCookieProcessor

from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    CloseConnection,
    Ping,
    RejectConnection,
    Request,
    TextMessage,
)

from tests.support.waiting import WAIT, timed_out
from tests.web.conftest import PASSWORD, HallProcess, HttpClient


class SocketClosed(Exception):
    """The server went away (killed, or closed the socket) before an answer came."""


def sign_in_cookie(hall: HallProcess, name: str, password: str = PASSWORD) -> str:
    """The session cookie of a fresh sign-in of ``name`` (``POST /login`` over TLS)."""
    client = HttpClient(hall)
    status, answer = client.call("POST", "/login", {"name": name, "password": password})
    if status != 200:
        raise AssertionError(f"{name} could not sign in: {status} {answer}")
    handlers = cast(Any, client.opener).handlers  # the client's own cookie jar holds the sign-in
    jar: CookieJar = next(h for h in handlers if isinstance(h, HTTPCookieProcessor)).cookiejar
    return next(c.value for c in jar if c.name == "bingo_session" and c.value is not None)


@dataclass
class Received:
    """A message as it arrived: ``time.monotonic()`` and ``time.time()`` at arrival."""

    at: float
    wall: float
    message: dict[str, Any]


@dataclass
class LiveSocket:
    """One WebSocket to the hall; ``messages`` grows as they arrive."""

    hall: HallProcess
    path: str = "/ws"
    cookie: str | None = None
    messages: list[Received] = field(default_factory=list)
    answers: dict[str, Received] = field(default_factory=dict)
    #: Called on the socket's thread with each message as it arrives (the crash tests
    #: kill the server the instant a screen shows a record).
    on_message: Callable[[dict[str, Any]], None] | None = None

    def __post_init__(self) -> None:
        self.closed = threading.Event()
        self.accepted = threading.Event()
        self.changed = threading.Condition()
        self._outbox: queue.SimpleQueue[bytes] = queue.SimpleQueue()
        self._wake_r, self._wake_w = socket.socketpair()
        raw = socket.create_connection(("127.0.0.1", self.hall.port), timeout=10)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._tls = self.hall.tls_context().wrap_socket(raw, server_hostname="localhost")
        self._ws = WSConnection(ConnectionType.CLIENT)
        headers = [(b"cookie", f"bingo_session={self.cookie}".encode())] if self.cookie else []
        self._tls.sendall(self._ws.send(Request(host=f"localhost:{self.hall.port}", target=self.path,
                                                extra_headers=headers)))
        self._thread = threading.Thread(target=self._run, name=f"socket {self.path}", daemon=True)
        self._thread.start()
        if not self.accepted.wait(WAIT):
            raise timed_out(f"the hall to accept the WebSocket {self.path}", WAIT)
        if self.closed.is_set():
            raise AssertionError(f"the hall refused the WebSocket {self.path}")

    # --- The socket's own thread -------------------------------------------------------

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._tls, selectors.EVENT_READ, "tls")
        selector.register(self._wake_r, selectors.EVENT_READ, "wake")
        text: list[str] = []
        try:
            while not self.closed.is_set():
                for key, _ in selector.select(timeout=1):
                    if key.data == "wake":
                        self._wake_r.recv(4096)
                        while not self._outbox.empty():
                            self._tls.sendall(self._outbox.get())
                        continue
                    data = self._tls.recv(1 << 16)
                    while self._tls.pending():  # TLS may hold decrypted bytes select cannot see
                        data += self._tls.recv(1 << 16)
                    if not data:
                        return
                    self._ws.receive_data(data)
                    self._events(text)
        except (OSError, ValueError):
            return  # reset by a killed server, or closed by us
        finally:
            self.closed.set()
            with self.changed:
                self.changed.notify_all()
            selector.close()

    def _events(self, text: list[str]) -> None:
        for event in self._ws.events():
            if isinstance(event, AcceptConnection):
                self.accepted.set()
            elif isinstance(event, RejectConnection):
                self.accepted.set()
                raise OSError(f"WebSocket refused: {event.status_code}")
            elif isinstance(event, Ping):
                self._tls.sendall(self._ws.send(event.response()))
            elif isinstance(event, CloseConnection):
                raise OSError("closed by the server")
            elif isinstance(event, TextMessage):
                text.append(event.data)
                if event.message_finished:
                    at, wall = time.monotonic(), time.time()  # arrival, before the parsing
                    received = Received(at, wall, json.loads("".join(text)))
                    text.clear()
                    with self.changed:
                        self.messages.append(received)
                        if received.message.get("type") == "answer":
                            self.answers[str(received.message.get("id"))] = received
                        self.changed.notify_all()
                    if self.on_message is not None:
                        self.on_message(received.message)

    # --- For the test's thread ------------------------------------------------------------

    def send(self, value: dict[str, Any]) -> float:
        """Queue a JSON message for the socket's thread; the time it was handed over."""
        if self.closed.is_set():
            raise SocketClosed(self.path)
        self._outbox.put(self._ws.send(TextMessage(data=json.dumps(value))))
        sent = time.monotonic()
        self._wake_w.send(b"x")
        return sent

    def wait_for(self, predicate: Any, timeout: float = WAIT, what: str = "the awaited message") -> None:
        """Block until ``predicate()`` holds, woken by each message; :class:`SocketClosed`
        if the socket closes first, :class:`~tests.support.waiting.WaitTimeout` naming
        ``what`` after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self.changed:
            while not predicate():
                if self.closed.is_set():
                    raise SocketClosed(self.path)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise timed_out(f"{what} on {self.path}", timeout,
                                    lambda: f"{len(self.messages)} message(s), the last "
                                            f"{self.messages[-1].message.get('type') if self.messages else None}")
                self.changed.wait(left)

    def answer(self, request_id: str, timeout: float = WAIT) -> dict[str, Any]:
        self.wait_for(lambda: request_id in self.answers, timeout, f"the answer to command {request_id}")
        return self.answers[request_id].message

    def records(self) -> list[dict[str, Any]]:
        """The committed records this console was shown, in arrival order."""
        with self.changed:
            return [m.message["record"] for m in self.messages if m.message.get("type") == "record"]

    def snapshot(self, timeout: float = WAIT) -> dict[str, Any]:
        """The first message of a console socket: the whole picture as of the connection."""
        self.wait_for(lambda: bool(self.messages), timeout, "the first picture")
        first = self.messages[0].message
        assert first["type"] in ("snapshot", "board"), first
        return first

    def close(self) -> None:
        self.closed.set()
        self._wake_w.send(b"x")  # the socket's thread sees ``closed`` at once
        self._thread.join(5)
        for owned in (self._tls, self._wake_r, self._wake_w):
            owned.close()


def console(hall: HallProcess, name: str) -> LiveSocket:
    """A signed-in console of staff member ``name``."""
    return LiveSocket(hall, "/ws", sign_in_cookie(hall, name))


def board(hall: HallProcess) -> LiveSocket:
    """A public information board."""
    return LiveSocket(hall, "/board/ws")
