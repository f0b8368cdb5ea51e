"""The regulator's feed: records a second from a hall's signed journal to the receiver's store.

    .venv/bin/python bench/bench_feed.py [--records 20000]

In one process, on loopback: a hall's SQL journal (SQLite, every record signed), the
feed's link (``server_kit/feed/link.py``, AMP over mutual TLS with real certificates)
and the reference receiver (``regulator/``: every record's hash, Ed25519 signature and
link checked, stored in its SQLite database).  Two figures:

* **catch-up**: ``--records`` records committed before the receiver starts, then sent in
  batches of 200 until the receiver holds them all: records a second;
* **live**: one record committed at a time, the link woken by the commit as the hall's
  core does: commit to stored-and-acknowledged, p50 and p99 over 300 records.

The baseline in the same run is the journal's own append rate (records a second) for
the same records: the feed next to what produces it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from twisted.internet import defer, reactor, task  # noqa: E402

from hall_server.store.database import open_database  # noqa: E402
from regulator.senders import SenderRegistry  # noqa: E402
from regulator.service import ReceiverService, ReceiverSettings  # noqa: E402
from server_kit.feed.cursor import FeedCursor  # noqa: E402
from server_kit.feed.link import FeedLinkService, ReceiverAddress  # noqa: E402
from server_kit.journal.sql import Journal  # noqa: E402
from server_kit.pki import init_authority, issue_certificate  # noqa: E402

ENTRY = ("journal_opened", {"hall": "h1"})


async def until(predicate: Any, seconds: float = 600.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("the receiver did not catch up in time")
        await task.deferLater(reactor, 0.001, lambda: None)


async def run(records: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="bench-feed-"))
    pki = folder / "pki"
    init_authority(pki, "Bench")
    issue_certificate(pki, "server", "h1")
    issue_certificate(pki, "regulator", "regulator")
    key = Ed25519PrivateKey.generate()
    journal = Journal(open_database(f"sqlite:///{folder / 'hall.sqlite3'}"), key, head=folder / "journal.head")
    journal.initialise(1, {"hall": "h1"})
    started = time.perf_counter()
    for at in range(0, records, 200):
        journal.append(2 + at, [ENTRY] * min(200, records - at))
    append_rate = records / (time.perf_counter() - started)

    (folder / "regulator").mkdir()
    service = ReceiverService(reactor, ReceiverSettings(folder / "regulator", pki, "regulator", 0, "127.0.0.1",
                                                        web_port=None))
    SenderRegistry(folder / "regulator").register("hall:h1", key.public_key())  # as bingo regulator register-sender
    service.startService()
    await service.listening
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    cursor = FeedCursor(journal, "hall:h1", pem)
    link = FeedLinkService(reactor, cursor, ReceiverAddress("127.0.0.1", service.port.getHost().port, pki, "h1",
                                                            "localhost"))
    total = records + 1
    started = time.perf_counter()
    link.startService()
    await until(lambda: cursor.acked == total)
    catch_up = total / (time.perf_counter() - started)

    latencies = []
    for _ in range(300):
        begun = time.perf_counter()
        journal.append(int(time.time() * 1000), [ENTRY])
        link.wake()
        target = journal.last.seq if journal.last else 0
        await until(lambda: cursor.acked == target)
        latencies.append((time.perf_counter() - begun) * 1000)
    await link.stopService()
    await service.stopService()
    cuts = statistics.quantiles(latencies, n=100)
    print(f"journal append (baseline): {append_rate:,.0f} records/s")
    print(f"feed catch-up: {catch_up:,.0f} records/s over {total:,} records ({catch_up / append_rate:.2f}x the append)")
    print(f"feed live, commit to acknowledged: p50 {statistics.median(latencies):.1f} ms, p99 {cuts[98]:.1f} ms, "
          f"max {max(latencies):.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    args = parser.parse_args()
    done = defer.ensureDeferred(run(args.records))
    done.addErrback(lambda failure: print(failure.getTraceback(), file=sys.stderr))
    done.addBoth(lambda _: reactor.stop())
    reactor.run()


if __name__ == "__main__":
    main()
