"""What the journal check before every start costs: the whole journal verified.

    .venv/bin/python bench/bench_journal.py [--records 100000] [--folder DIR]

Appends ``--records`` postings (in commits of 1,000) to a SQLite journal in a scratch
folder, then times :meth:`Journal.verify` - every record's hash, link and Ed25519
signature, and the signed head, as the hall server does before it serves with no
checkpoint - against a plain read of the same records and a read that parses each
through its declaration (protocol/records), as recovery does; and
:meth:`Journal.verify_links` - every record's hash and link up to the last, without the
signatures, as a start from a checkpoint at the last record does - in wall and CPU
seconds.  ``--folder`` keeps the journal (and reuses one already there).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

BATCH = 1_000


def main() -> None:
    from hall_server.store.database import open_database
    from protocol.records import parse
    from server_kit.journal.sql import Journal
    from server_kit.keys import load_journal_key

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.folder or Path(scratch)
        journal = Journal(open_database(f"sqlite:///{folder / 'hall.sqlite3'}"),
                          load_journal_key(folder / "journal-signing.pem", create=True), head=folder / "journal.head")
        actor = {"name": "carla", "role": "cashier"}
        for commit in range(0 if journal.last is not None else max(1, args.records // BATCH)):
            journal.append(1_790_000_000_000 + commit, [
                ("posting", {"debits": [["cash:desk-1", 100 + n]], "credits": [["player:10000000001", 100 + n]],
                             "reason": "credit loaded", "reference": {"game_id": None, "card": None, "event_seq": None},
                             "actor": actor})
                for n in range(BATCH)
            ])
        assert journal.last is not None
        start, cpu = time.perf_counter(), time.process_time()
        linked = journal.verify_links((journal.last.seq, journal.last.hash))
        links, links_cpu = time.perf_counter() - start, time.process_time() - cpu
        start, cpu = time.perf_counter(), time.process_time()
        count = journal.verify()
        verified, verified_cpu = time.perf_counter() - start, time.process_time() - cpu
        start = time.perf_counter()
        read = sum(1 for _ in journal.records())
        plain = time.perf_counter() - start
        start = time.perf_counter()
        for record in journal.records():
            parse(record)
        declared = time.perf_counter() - start
        journal.engine.dispose()
    print(f"journal verified whole: {count:,} records in {verified:.2f} s ({verified_cpu:.2f} s of CPU) = "
          f"{count / verified:,.0f} records/s "
          f"(a plain read of the {read:,} records: {plain:.2f} s; read and parsed through their "
          f"declarations, as recovery does: {declared:.2f} s)")
    print(f"hashes and links only, up to the last record (a start from a checkpoint there): {linked:,} records in "
          f"{links:.2f} s ({links_cpu:.2f} s of CPU) = {linked / links:,.0f} records/s")


if __name__ == "__main__":
    main()
