"""The second penetration test's connection flood against a real central server, and what it costs now.

    .venv/bin/python bench/bench_connections.py [--bare 3000] [--half 400] [--addresses 30] [--descriptors 1024]

Starts ``bingo central serve`` with its default ``[connections]`` (docs/security.md,
"Connections") and its file-descriptor limit capped at ``--descriptors`` (the usual
1,024), then opens ``--bare`` TCP connections that send nothing and ``--half`` that send
half a TLS ClientHello, spread over ``--addresses`` loopback addresses (127.0.0.2 and up),
while a hall (from 127.0.0.1) says ``hello`` and buys a card.  Printed:

* how many of the flood's connections the server closed as they came (per address and
  descriptor bounds), and how many it held at most at once (``/proc/PID/fd``);
* the seconds from the flood's end until the server had cut every one of them;
* whether the hall's ``hello`` and purchase during the flood were answered, and after how long.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from twisted.internet import defer, reactor, task  # noqa: E402

from tests.central_server.support import CentralProcess, config_text, connect, make_pki  # noqa: E402
from tests.security.test_connections import accept_queue, client_hello, is_closed  # noqa: E402


def flood(port: int, bare: int, half: int, addresses: int, server_pid: int) -> tuple[list[socket.socket], int, int]:
    """The flood's sockets, how many the server closed at once, and the most descriptors it held."""
    hello = client_hello()
    opened: list[socket.socket] = []
    most = 0
    for index in range(bare + half):
        raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        raw.bind((f"127.0.0.{2 + index % addresses}", 0))
        raw.connect(("127.0.0.1", port))
        if index >= bare:
            try:
                raw.sendall(hello[: len(hello) // 2])
            except OSError:
                pass
        opened.append(raw)
        if index % 20 == 19:
            while accept_queue(port):
                time.sleep(0.01)
            most = max(most, len(os.listdir(f"/proc/{server_pid}/fd")))
    time.sleep(0.5)  # the refusals' FINs arrive
    return opened, sum(is_closed(raw) for raw in opened), most


@defer.inlineCallbacks
def run(options: argparse.Namespace) -> Any:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    folder = Path(tempfile.mkdtemp(prefix="bench-connections-"))
    pki_dir = make_pki(folder / "pki")
    home = folder / "central"
    home.mkdir()
    config = home / "central.toml"
    config.write_text(config_text(home, pki_dir, f"sqlite:///{home / 'central.sqlite3'}", opens_after_ms=0,
                                  sale_ms=3_600_000))
    capped = (f"import resource; resource.setrlimit(resource.RLIMIT_NOFILE, ({options.descriptors}, "
              f"{options.descriptors})); from central_server.cli import central; central()")
    central = CentralProcess(config, [sys.executable, "-c", capped, "serve", "--config", str(config)]).start()
    assert central.process is not None
    try:
        hall = yield defer.ensureDeferred(connect(central.port, pki_dir, "hall-1"))
        yield hall.hello("hall-1")
        started = time.monotonic()
        sockets, refused, most = flood(central.port, options.bare, options.half, options.addresses,
                                       central.process.pid)
        flooded = time.monotonic()
        asked = time.monotonic()
        second = yield defer.ensureDeferred(connect(central.port, pki_dir, "hall-2"))
        yield second.hello("hall-2")
        hello_s = time.monotonic() - asked
        bought = yield hall.buy("bench-1", count=1)
        while sum(not is_closed(raw) for raw in sockets):
            yield task.deferLater(reactor, 0.1, lambda: None)
        cut = time.monotonic()
        total = options.bare + options.half
        print(f"flood: {total} connections ({options.bare} bare, {options.half} half a ClientHello) from "
              f"{options.addresses} addresses in {flooded - started:.1f} s, against {options.descriptors} descriptors")
        print(f"closed as they came: {refused}; held at once: at most {most} descriptors of the server's")
        print(f"every connection of the flood cut {cut - flooded:.1f} s after its end")
        print(f"a hall's hello during the flood: answered in {hello_s:.2f} s; a purchase: {bought['status']}")
        for raw in sockets:
            raw.close()
        hall.transport.loseConnection()
        second.transport.loseConnection()
    finally:
        central.stop()
        reactor.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bare", type=int, default=3000)
    parser.add_argument("--half", type=int, default=400)
    parser.add_argument("--addresses", type=int, default=30)
    parser.add_argument("--descriptors", type=int, default=1024)
    options = parser.parse_args()
    reactor.callWhenRunning(run, options)  # type: ignore[attr-defined]
    reactor.run()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
