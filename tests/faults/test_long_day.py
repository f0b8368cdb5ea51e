"""A hall's state over a long day, in process: a collected game lets go of its cards, every
dataclass a checkpoint keeps holds its state in its fields, and a checkpoint taken with
the demo's video bingo machine starts a hall without it (docs/journal.md, "Checkpoints")."""

from __future__ import annotations

import dataclasses
import json
import shutil
import zlib
from pathlib import Path
from typing import Any, Iterator

import pytest
from twisted.internet.testing import MemoryReactorClock

from bench.bench_restart import START_S, done, generate, prepare, start, write_checkpoint
from hall_server.config import HallConfig, load_config
from hall_server.hall.roles import Role
from hall_server.serve_demo import DEMO_MACHINE, demo_videobingo
from hall_server.tap import HallServer, build_hall
from server_kit.core import Actor, run_inline
from server_kit.journal.projection import encode
from terminals.vb_cash_device import CashDevice

pytestmark = [pytest.mark.integration]
CHIEF = Actor("rosa", Role.ROOM_CHIEF)
PLAYS = 3


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A hall folder after days of play, then a day with the demo's video bingo machine playing,
    and the checkpoint that hall wrote at its stop (of a state with the machine's module)."""
    folder = tmp_path_factory.mktemp("long-day")
    config = prepare(folder, strips=100)
    generate(config, 1_500)
    with_machine = dataclasses.replace(load_config(config), videobingo=demo_videobingo())
    hall = _started(with_machine)
    assert hall.videobingo is not None and hall.recovered_from == 0
    hall.core.run_blocking = run_inline
    done(hall.videobingo.enrol_station(CHIEF, DEMO_MACHINE, 1))
    device = CashDevice(DEMO_MACHINE)  # the machine's bill validator, its key its own
    done(hall.videobingo.enrol_cash_device(CHIEF, DEMO_MACHINE, device.public_key))
    done(hall.videobingo.credit_in(DEMO_MACHINE, 1, "cash", 500, "credit-1", device.insert(1, 500).to_json()))
    for number in range(PLAYS):
        done(hall.videobingo.play(DEMO_MACHINE, 1, 1, False, f"play-{number}"))
    # Started again, so its state is the journal's as read back, as a replay's is (the payloads'
    # keys in the stored order), and the checkpoint it writes is compared with a replay's.
    write_checkpoint(_started(with_machine))
    return folder


def _started(config: HallConfig) -> HallServer:
    clock = MemoryReactorClock()
    clock.advance(START_S + 10**7)
    return build_hall(config, clock)


@pytest.fixture
def hall_folder(played: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "hall"
    shutil.copytree(played, folder)
    return folder


def _replayed(folder: Path) -> HallServer:
    """The hall without the machine, started on the whole journal (its checkpoints put aside)."""
    (folder / "checkpoints").rename(folder / "checkpoints-aside")
    try:
        hall = start(folder / "hall.toml")
    finally:
        (folder / "checkpoints-aside").rename(folder / "checkpoints")
    assert hall.recovered_from == 0
    return hall


def test_a_checkpoint_taken_with_the_demos_machine_starts_the_hall_without_it(hall_folder: Path) -> None:
    """The finding: a demo's checkpoint made the next start without ``--demo`` replay the whole journal."""
    (path,) = (hall_folder / "checkpoints").iterdir()
    assert "VideoBingoModule" in json.loads(zlib.decompress(path.read_bytes().partition(b"\n")[2]))["modules"]
    restored = start(hall_folder / "hall.toml")
    assert restored.videobingo is None and restored.recovered_from == restored.core.seq
    replayed = _replayed(hall_folder)
    assert restored.core.checkpoint() == replayed.core.checkpoint()
    assert restored.ledger.ledger.balances() == replayed.ledger.ledger.balances()
    assert any(DEMO_MACHINE in account for account in restored.ledger.ledger.balances())  # the machine's money


def test_a_collected_game_keeps_only_what_the_session_asks_of_it(hall_folder: Path) -> None:
    hall = start(hall_folder / "hall.toml")
    games = hall.games.state.games
    collected = [game for game in games if game.collected]
    assert collected, "the day's games were played and collected"
    for game in collected:
        assert game.machine.sales == {} and game.machine.steps == [] and game.refs == () and game.detector is None
        assert game.sale.sold == [] and game.settlement is not None and game.over
    # What is left of a collected game is small: its settlement, its prizes, its state.
    assert max(len(json.dumps(encode(game))) for game in collected) < 8_000


def _objects(value: Any, seen: set[int]) -> Iterator[Any]:
    """Every object reachable from ``value`` through containers and attributes, once."""
    stack = [value]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, (str, bytes, int, float, bool, type(None))):
            continue
        seen.add(id(item))
        yield item
        if isinstance(item, dict):
            stack += [*item.keys(), *item.values()]
        elif isinstance(item, (list, tuple, set, frozenset)) or type(item).__name__ == "deque":
            stack += list(item)
        elif hasattr(item, "__dict__") and type(item).__module__.split(".")[0] in ("protocol", "hall_server", "server_kit"):
            stack += list(vars(item).values())


def test_every_dataclass_a_checkpoint_keeps_holds_its_state_in_its_fields(hall_folder: Path) -> None:
    """A checkpoint reads a dataclass by its fields (never its ``__dict__``, which CPython would
    then keep for good): an attribute set outside them would be lost at the next start."""
    hall = start(hall_folder / "hall.toml")
    seen: set[int] = set()
    checked = 0
    for module in hall.core._kept():
        for item in _objects(getattr(module, "state", None) or getattr(module, "ledger", None), seen):
            cls = type(item)
            if "__dataclass_fields__" in cls.__dict__ and hasattr(item, "__dict__"):
                names = {f.name for f in dataclasses.fields(item)}
                assert set(vars(item)) <= names, f"{cls.__qualname__} holds {sorted(set(vars(item)) - names)} outside its fields"
                checked += 1
    assert checked > 1_000
