"""``bingo demo`` as a newcomer runs it: the installed command, in a hall's folder, exits 0 and
leaves the hall's card registry as it found it (no card set without its series, nothing at all)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hall_server.store.cards import list_libraries, list_sets
from hall_server.store.database import open_database


def test_bingo_demo_exits_0_and_leaves_no_orphan_card_set(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hall.sqlite3'}"
    engine = open_database(url)  # a hall's database, as `bingo hall serve` leaves it
    before = sorted(p.name for p in tmp_path.iterdir())
    bingo = Path(sys.executable).with_name("bingo")
    environment = {**os.environ, "BINGO_HOME": str(tmp_path)}
    for _ in range(2):  # a second run as well: nothing left by the first gets in its way
        run = subprocess.run([str(bingo), "--db", url, "demo", "--pace", "0", "--cards", "60"], cwd=tmp_path,
                             env=environment, capture_output=True, text=True, timeout=300)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
        assert "Sale closed: 60 cards sold" in run.stdout
        assert "Game over: 60 cards sold for 60.00 EUR" in run.stdout, run.stdout[-500:]
    assert list_sets(engine) == [] and list_libraries(engine) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == before
