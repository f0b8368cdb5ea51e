"""What ``bingo backup`` and ``bingo restore`` cost for a hall with a long journal.

    .venv/bin/python bench/bench_backup.py [--records 100000] [--folder DIR]

Builds a hall folder of ``--records`` records of days of play (as bench_restart.py builds
it: sessions, games sold, drawn, claimed, paid), writes its checkpoint as a clean stop
does, then times the backup (the checkpoint and the head read, SQLite's online backup of
the database, the archive written and signed) and the restore (every member checked,
the database put in place, the whole journal verified: every hash, link and signature),
and prints the sizes.  ``--folder`` keeps the hall folder (and reuses it when it already
holds a journal).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_restart import generate, prepare, start, write_checkpoint  # noqa: E402

from hall_server.backup import hall_folder  # noqa: E402
from hall_server.config import load_config  # noqa: E402
from server_kit.backup import backup, restore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--folder", type=Path, default=None)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="bench-backup-"))
    folder = args.folder or scratch / "hall"
    try:
        config = folder / "hall.toml"
        if not (folder / "hall.sqlite3").exists():
            prepare(folder, strips=1_000)
            began = time.perf_counter()
            count = generate(config, args.records)
            print(f"journal: {count:,} records generated in {time.perf_counter() - began:.0f} s", flush=True)
            write_checkpoint(start(config))
        database = (folder / "hall.sqlite3").stat().st_size + sum(
            p.stat().st_size for p in folder.glob("hall.sqlite3-*"))
        began = time.perf_counter()
        made = backup(hall_folder(load_config(config)), scratch / "hall.tar.gz")
        took = time.perf_counter() - began
        print(f"backup: {took:.1f} s; journal records 1 to {made.manifest['journal']['last_seq']:,}; database "
              f"{database / 1e6:.1f} MB on disk, archive {made.size / 1e6:.1f} MB", flush=True)
        began = time.perf_counter()
        restored = restore(made.archive, scratch / "restored", keys=folder)
        took = time.perf_counter() - began
        print(f"restore: {took:.1f} s, of it the whole journal verified ({restored.verified:,} records, each "
              f"signature) and {len(restored.checkpoints)} checkpoint checked", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
