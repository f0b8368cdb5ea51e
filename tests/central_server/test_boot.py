"""The central server's start on the server kit's foundation (``server_kit/boot.py``): its checkpoints, its
signed head, its run marker.

A state restored from a checkpoint is the state a whole replay of the journal gives: every
module of the core (the network games with their winners' detectors, the prize terms, the
programme's chain, the reports acknowledged, the play gate), the request ids remembered,
and what the operator is answered.  A clean stop writes a checkpoint and removes the run
marker, and the next start restores from it; a head file that lags the journal is brought
up to it; a journal altered in a record refuses the start in one line and leaves the marker
(R92.5e).
"""

from __future__ import annotations

import dataclasses
import enum
import sqlite3
from collections import deque
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_twisted
from twisted.internet import reactor

from central_server.config import load_config
from central_server.server import CentralServer, add_modules
from central_server.tap import CHECKPOINTS, build_central
from server_kit.boot import StartRefused
from server_kit.clock import JournalClock
from server_kit.core import CommandCore, run_inline
from server_kit.journal.projection import decode
from server_kit.journal.sql import Journal, read_head
from server_kit.keys import load_journal_key
from server_kit.run_marker import RunMarker
from tests.central_server.conftest import Running, start_central, stop_central
from tests.central_server.support import until
from tests.support.engines import failing, watch_disposals

pytestmark = pytest.mark.integration


def fresh_core(server: CentralServer) -> CommandCore:
    """A command core over the server's journal with the central server's modules, nothing folded yet."""
    config = server.config
    journal = Journal(server.engine, load_journal_key(config.journal_key), head=config.journal_head)
    clock = JournalClock.of(reactor)
    core = CommandCore(journal, clock, run_inline)
    add_modules(core, clock, config, server.module.library, journal, server.engine, run_inline)
    return core


def canonical(value: Any) -> Any:
    """``value`` as plain comparable data, whatever its objects: a dict's keys in order (a record's
    payload read back from the journal is in canonical order, the one decided is not), an object's
    fields by name, an array's type, shape and bytes."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, enum.Enum):
        return [type(value).__qualname__, value.value]
    if isinstance(value, np.ndarray):
        return ["array", value.dtype.str, list(value.shape), value.tobytes().hex()]
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return ["dict", sorted([repr(canonical(k)), canonical(v)] for k, v in value.items())]
    if isinstance(value, (list, tuple, deque)):
        return [canonical(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return ["set", sorted(repr(canonical(item)) for item in value)]
    if dataclasses.is_dataclass(value):
        fields = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    else:
        slots = [name for cls in type(value).__mro__ for name in getattr(cls, "__slots__", ())]
        fields = {**{name: getattr(value, name) for name in slots if hasattr(value, name)}, **vars(value)}
    return [type(value).__qualname__, sorted([name, canonical(field)] for name, field in fields.items())]


def state_of(core: CommandCore) -> Any:
    """Everything a core's modules hold of the journal, as comparable data: each network game whole
    (its sale, purchases, balls, winners, credits and winners' detector), the tables beside the games,
    the prize terms, the programme's chain, the reports acknowledged, the play gate, the request ids
    remembered, and the operator's list of games."""
    module, terms, programme, deliveries, gate = core.modules
    return canonical({
        "games": module.games, "scheduled_at_ms": module.scheduled_at_ms, "opens_after": module.opens_after,
        "committed": module._committed, "annex": (module.annex.streams, module.annex.requests),
        "terms": terms.checkpoint(), "chain": (programme.chain, programme.requested),
        "acknowledged": deliveries.acknowledged, "stopped": gate.stopped, "requests": core.requests,
        "seq": (core.seq, core.last_hash, core.folded), "operator": module._games_page(0),
    })


def replayed(server: CentralServer) -> CommandCore:
    """The central server's modules rebuilt from the whole journal."""
    core = fresh_core(server)
    core.recover()
    return core


async def play_a_game(central: Running) -> None:
    """Two halls buy cards, the sale closes and every ball is drawn until the game ends."""
    one, two = await central.hall("hall-1"), await central.hall("hall-2")
    await central.open_sale()
    for k in range(4):
        await one.buy(f"h1-{k}", terminal=f"T{k}", player=f"p{k}", count=5)
        await two.buy(f"h2-{k}", hall="hall-2", terminal=f"K{k}", player=f"q{k}", count=5)
    await central.close_sale()
    while central.game.phase not in ("closed", "not_played"):
        await central.next_ball()


async def restart(central: Running) -> CentralServer:
    """The central server built and started again on the same folder, its games' clock going on."""
    source = central.server.config.source
    assert source is not None
    server = build_central(load_config(source), reactor, central.clock)
    server.service.startService()
    await server.listener.listening
    return server


@pytest_twisted.ensureDeferred
async def test_a_state_restored_from_a_checkpoint_is_the_state_a_whole_replay_gives(central: Running) -> None:
    """After a network game played to its end, the modules restored from a checkpoint of the running
    server and the records after it equal those replayed from the whole journal."""
    await play_a_game(central)
    server = central.server
    await until(server.core.settled, "every record committed")
    seq, last_hash, state = server.core.seq, server.core.last_hash, server.core.checkpoint()
    assert list(decode(state["modules"]["CentralModule"])["games"]) == ["net-1"], "the checkpoint holds the game"
    restored = fresh_core(server)
    assert last_hash is not None
    restored.restore(state, seq, last_hash)
    assert restored.recover(after=seq) == 0
    whole = replayed(server)
    assert state_of(restored) == state_of(whole)
    game = restored.modules[0].games["net-1"]
    assert game.phase == "closed" and game.winners and game.balls == server.module.games["net-1"].balls


@pytest.mark.req("R92.5e")
@pytest_twisted.ensureDeferred
async def test_R92_5e_a_clean_stop_writes_a_checkpoint_removes_the_marker_and_the_next_start_restores_it(
        central: Running) -> None:
    """A clean stop writes a checkpoint at the last record and removes the run marker; the next start
    restores from that checkpoint (no crash found), and its state is the state of a whole replay."""
    home = central.server.config.home
    await play_a_game(central)
    await until(central.server.core.settled, "every record committed")  # a stop checkpoints committed state
    last = central.server.core.seq
    await central.server.service.stopService()
    central.server.engine.dispose()
    assert not RunMarker(home).left_behind()
    assert central.server.checkpointing is not None
    written = central.server.checkpointing.written_seq
    assert written >= last and any((home / CHECKPOINTS).iterdir()), "a checkpoint was written at the stop"

    server = central.server = await restart(central)  # stopped by the fixture
    assert server.recovered_from == written and not server.crashed
    assert server.gate is not None and server.gate.stopped is None  # a clean stop interrupts no play
    assert state_of(server.core) == state_of(replayed(server))


@pytest_twisted.ensureDeferred
async def test_a_head_file_that_lags_the_journal_is_brought_up_to_it_at_the_next_start(central: Running) -> None:
    """A stop between a commit and the head's write: the head file names an earlier record than the
    journal's last; the next start verifies the journal against it and signs the head anew."""
    config = central.server.config
    await central.server.service.stopService()
    central.server.engine.dispose()
    lagging = config.journal_head.read_bytes()

    server = central.server = await restart(central)  # the start journals the leadership taken
    await server.service.stopService()
    server.engine.dispose()
    config.journal_head.write_bytes(lagging)
    behind = read_head(config.journal_head)
    assert behind is not None

    server = central.server = await restart(central)
    head = read_head(config.journal_head)
    assert server.journal.last is not None and head is not None
    assert behind.seq < head.seq == server.journal.last.seq


@pytest.mark.req("R92.5e", "R92.3")
@pytest_twisted.ensureDeferred
async def test_R92_5e_a_journal_altered_in_a_record_refuses_the_start_in_one_line_and_leaves_the_marker(
        tmp_path: Path) -> None:
    """A record altered in the database (before the checkpoint of the clean stop): the start is refused
    with one line naming the record, and the run marker is left, so the start after it is one after a
    stop of play (R92.5e: "a journal that fails its check")."""
    central = await start_central(tmp_path, f"sqlite:///{tmp_path / 'central.sqlite3'}")
    config = central.server.config
    await stop_central(central)
    assert not RunMarker(config.home).left_behind() and config.source is not None
    with closing(sqlite3.connect(tmp_path / "central.sqlite3")) as database, database:
        database.execute("UPDATE journal SET payload = replace(payload, 'central-a', 'central-b') WHERE seq = 1")

    with pytest.raises(StartRefused) as refused:
        build_central(load_config(config.source), reactor, central.clock)
    said = str(refused.value)
    assert "\n" not in said
    assert said == ("the journal does not verify: record 1: its content does not match its hash (altered); "
                    "the central server does not serve on a broken journal")
    assert RunMarker(config.home).left_behind()


@pytest_twisted.ensureDeferred
async def test_a_start_refused_after_its_journal_is_open_lets_the_database_go(
        central: Running, monkeypatch: pytest.MonkeyPatch) -> None:
    """A part built after the journal that fails (the halls' port's TLS, say) stops the start, and
    the database's connections are closed before the error goes on (a second start on the running
    server's folder: it reads the journal and fails before it takes the leadership)."""
    import central_server.tap as tap

    source = central.server.config.source
    assert source is not None
    disposed = watch_disposals(monkeypatch)
    monkeypatch.setattr(tap.pki, "server_tls_options", failing("the port's certificate is missing"))
    with pytest.raises(RuntimeError, match="certificate is missing"):
        build_central(load_config(source), reactor, central.clock)
    assert len(disposed) == 1
