"""``bingo central backup`` of the replicated central server while it plays, and ``bingo restore``
into a new folder and a database made again, which starts with the snapshot's games.

Real processes: the database pair (etcd x3, PostgreSQL 15 x2 under Patroni, started as
``bingo central cluster start`` starts it, once for the module) and one central server
process beside Patroni's leader (``[replica]``), a hall buying cards over AMP in mutual
TLS.  The backup is taken while a game draws (``pg_dump`` of the leader in one snapshot);
the hall then buys in the next game; the database is lost (dropped) and made again,
empty; the archive is restored into it and a new folder; the process started there
verifies the journal and holds every game's cards and stakes as they stood at the
archive's last record, read from the original journal up to that record.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
import pytest_twisted
from twisted.internet import reactor, task
from twisted.internet.threads import deferToThread

from central_server.audit import rebuilt_games, verified_journal
from central_server.config import load_config
from server_kit import backup
from server_kit.pki import export_bundle
from tests.central_server.support import (
    CENTRAL, GAME, OPERATOR, CentralProcess, HallClient, connect, make_pki)
from tests.ops import pair
from simulation.replica import TOOK
from tests.replica.test_cluster import installed
from tests.support.waiting import START, wait_until

pytestmark = [pytest.mark.integration]
REPO = Path(__file__).resolve().parents[2]
#: Purchases in each game (hall-1, two cards each).
PURCHASES = 3


def bingo(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", "from hall_server.cli import main; main()", *args],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=300)


class Network:
    """The pair, the operator's authority, and the central process beside the leader."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cluster = root / "cluster"
        self.pki = make_pki(root / "pki")
        self.home = root / "central"
        self.operator = root / "operator"
        self.config = self.home / "central.toml"
        self.process: CentralProcess | None = None

    def prepare(self) -> None:
        pair.start(self.cluster, self.pki)
        export_bundle(self.pki, CENTRAL, self.home / "pki")
        export_bundle(self.pki, OPERATOR, self.operator)
        games = GAME.format(game_id="net-0", sale_ms=15_000, ball_ms=1_000, series="V1", opens_after="opens_after_ms = 2000\n")
        games += GAME.format(game_id="net-1", sale_ms=15_000, ball_ms=1_000, series="V1", opens_after="")
        self.config.write_text(
            f'[central]\nid = "{CENTRAL}"\nhome = "{self.home}"\n\n[listen]\ninterface = "127.0.0.1"\nport = 0\n\n'
            + pair.node_sections(self.cluster, pair.leader(self.cluster), self.home / "pki" / "ca.pem")
            + '\n[network]\nhalls = ["hall-1", "hall-2"]\n\n[[series]]\nlabel = "V1"\ncards = 60\n' + games)

    def games(self, port: int) -> dict[str, dict[str, Any]]:
        """The operator's list of the games of the process on ``port``."""
        shown = bingo("central", "games", "--server", f"localhost:{port}", "--pki-dir", str(self.operator), "--json")
        assert shown.returncode == 0, shown.stderr
        return {game["game_id"]: game for game in json.loads(shown.stdout)["games"]}


def active(process: CentralProcess) -> CentralProcess:
    """``process``, once it took the central leadership beside the leader (it listens as the standby first)."""
    wait_until(lambda: TOOK.search(process.output), START, "the process beside the leader to take the leadership",
               seen=lambda: process.output.decode(errors="replace")[-2000:])
    return process


@pytest.fixture(scope="module")
def network() -> Iterator[Network]:
    installed()
    root = Path(tempfile.mkdtemp(prefix="bingo-backup-pair-"))
    os.chmod(root, 0o755)  # the postgres user enters it
    made = Network(root)
    try:
        made.prepare()
        made.process = active(CentralProcess(made.config).start())
        yield made
    finally:
        if made.process is not None:
            made.process.kill()
        pair.stop(made.cluster)
        shutil.rmtree(root, ignore_errors=True)


async def game_where(client: HallClient, game: str, test: Any, what: str, timeout: float = 120.0) -> dict[str, Any]:
    deadline = reactor.seconds() + timeout  # type: ignore[attr-defined]
    while True:
        state = await client.get_game(game=game)
        if test(state):
            return state
        if reactor.seconds() > deadline:  # type: ignore[attr-defined]
            raise AssertionError(f"waited {timeout} s for {what}; {game} is {state}")
        await task.deferLater(reactor, 0.1, lambda: None)


async def buy(client: HallClient, game: str, prefix: str) -> None:
    for k in range(PURCHASES):
        answer = await client.buy(f"{prefix}{k}", game=game, terminal=f"T{k}", player=f"p{k}", count=2)
        assert answer["status"] == "confirmed" and answer["card_count"] == 2, answer


@pytest.mark.timeout(900)
@pytest_twisted.ensureDeferred
async def test_the_central_server_backed_up_while_it_plays_restores_into_a_database_made_again_and_starts(
    network: Network, tmp_path: Path
) -> None:
    process = network.process
    assert process is not None
    client = await connect(process.port, network.pki, "hall-1")
    await client.hello("hall-1")
    await game_where(client, "net-0", lambda g: g["phase"] == "selling", "net-0's sale to open")
    await buy(client, "net-0", "a")
    await game_where(client, "net-0", lambda g: g["ball_count"] >= 2, "net-0 to draw")
    archive = tmp_path / "central.tar.gz"
    made = await deferToThread(bingo, "central", "backup", "--config", str(network.config), "--out", str(archive))
    assert made.returncode == 0, made.stderr
    assert "database: postgresql, one snapshot: " in made.stdout
    with tarfile.open(archive, "r:*") as tar:
        stream = tar.extractfile(f"{backup.ROOT}/{backup.MANIFEST}")
        assert stream is not None
        manifest = json.load(stream)
        assert f"{backup.ROOT}/database.pgdump" in tar.getnames()
    seq, hash = manifest["journal"]["last_seq"], manifest["journal"]["last_hash"]
    # The game went on after the snapshot, and the next game sold: the original is past the backup.
    opened = await deferToThread(bingo, "central", "open-sale", "net-1", "--server", f"localhost:{process.port}",
                                 "--pki-dir", str(network.operator))
    assert opened.returncode == 0, opened.stderr
    await buy(client, "net-1", "b")
    assert client.transport is not None
    client.transport.loseConnection()
    process.stop()

    records, _, library = verified_journal(load_config(network.config))
    assert records[seq - 1].hash == hash and len(records) > seq
    at_backup, _, _ = rebuilt_games([r for r in records if r.seq <= seq], library)
    now, _, _ = rebuilt_games(records, library)
    expected = {game_id: game.sales_by_hall()["hall-1"] for game_id, game in at_backup.items()}
    assert expected["net-0"] == (2 * PURCHASES, 2 * PURCHASES * 100) and expected["net-1"] == (0, 0)
    assert now["net-1"].sales_by_hall()["hall-1"] == (2 * PURCHASES, 2 * PURCHASES * 100)

    pair.make_database_again(network.cluster)
    home = tmp_path / "restored"
    url = load_config(network.config).database_url
    restored = await deferToThread(bingo, "restore", str(archive), "--home", str(home), "--db", url,
                                   "--keys", str(network.home))
    assert restored.returncode == 0, restored.stderr
    assert f"last record {seq} " in restored.stdout and f"hash {hash}; the head now names it" in restored.stdout
    config = load_config(home / "central.toml")
    assert config.home == home and config.database_url == url and config.replica is not None

    again = active(CentralProcess(home / "central.toml").start())
    try:
        assert b"Journal verified: " in again.output
        games = await deferToThread(network.games, again.port)
    finally:
        again.stop()
    assert {game_id: (game["cards_in_play"], game["sales_cents"]) for game_id, game in games.items()} == expected
    assert games["net-0"]["ball_count"] >= len(at_backup["net-0"].balls)
    restored_records, _, _ = verified_journal(config)
    assert [r.hash for r in restored_records[:seq]] == [r.hash for r in records[:seq]]
