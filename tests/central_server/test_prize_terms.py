"""The prize terms of interconnected bingo are notified to the regulator before they apply
(R93.11, R94.3): the first terms at once; a change of the percentages 5 days after its
notice, the system refusing to schedule a game on them earlier; a change of the winning
combinations alone at once.  A real central server on a test clock, started again over
its journal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor, task

from central_server.config import load_config
from central_server.tap import build_central
from central_server.terms import NOTICE_MS
from server_kit.journal import table
from tests.central_server.conftest import EPOCH_S
from tests.central_server.support import config_text, make_pki

pytestmark = [pytest.mark.integration]


async def boot(path: Path, clock: task.Clock) -> Any:
    server = build_central(load_config(path), reactor, clock)
    server.service.startService()
    await server.listener.listening
    return server


async def halt(server: Any) -> None:
    await server.service.stopService()
    server.engine.dispose()


def notices(server: Any) -> list[dict[str, Any]]:
    return [dict(r.payload) | {"at": r.time_ms} for r in table.read(server.engine) if r.type == "prize_terms_notified"]


EXTRA = "[[games.prizes]]\npattern = PATTERN\nbasis_points = 1000\n[[games.prizes]]\npattern = { name = \"bingo\""
TWO_LINES = '{ name = "two_lines", rows = 2 }'
CORNERS = '{ name = "corners", positions = [[0, 0], [0, 4], [2, 0], [2, 4]] }'


def configured(home: Path, pki: Path, url: str, *, bingo_bp: int | None = None,
               extra: tuple[str, str] | None = None) -> str:
    """net-1 as the template says; net-2 too, or with its bingo share changed; with ``extra``,
    each game also has a third prize (net-1 the first pattern, net-2 the second) at 10%."""
    text = config_text(home, pki, url, games=("net-1", "net-2"))
    head, _, last = text.rpartition("[[games]]")
    if bingo_bp is not None:
        last = last.replace("basis_points = 5000", f"basis_points = {bingo_bp}")
    if extra is not None:
        bingo = '[[games.prizes]]\npattern = { name = "bingo"'
        head = head.replace(bingo, EXTRA.replace("PATTERN", extra[0]))
        last = last.replace(bingo, EXTRA.replace("PATTERN", extra[1]))
    return head + "[[games]]" + last


def central_folder(tmp_path: Path) -> tuple[Path, Path, str, Path, task.Clock]:
    """The operator's authority, the central server's folder, database URL, configuration path and clock."""
    pki = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    home.mkdir()
    clock = task.Clock()
    clock.advance(EPOCH_S)
    return pki, home, f"sqlite:///{home / 'central.sqlite3'}", home / "central.toml", clock


@pytest.mark.req("R94.3", "R93.11")
@pytest_twisted.ensureDeferred
async def test_a_change_of_percentages_waits_five_days_after_its_notice_and_a_change_of_combinations_does_not(
    tmp_path: Path,
) -> None:
    pki, home, url, path, clock = central_folder(tmp_path)
    start_ms = int(EPOCH_S * 1000)
    # First start: net-1's terms are the first, in force at once; net-2's are the same.
    text = config_text(home, pki, url, games=("net-1",))
    path.write_text(text)
    server = await boot(path, clock)
    try:
        (first,) = notices(server)
        assert first["applies_from_ms"] == start_ms and not first["percentages_changed"]
        assert first["prizes"] == [{"pattern": {"name": "line", "rows": 1}, "basis_points": 2000},
                                   {"pattern": {"name": "bingo", "rows": 3}, "basis_points": 5000}]
        assert "net-1" in server.module.games
    finally:
        await halt(server)
    # net-2 with the bingo at 55%: notified now, applies 5 days later; not scheduled before.
    path.write_text(configured(home, pki, url, bingo_bp=5500))
    clock.advance(60)
    server = await boot(path, clock)
    try:
        change = notices(server)[-1]
        assert change["game_id"] == "net-2" and change["percentages_changed"] and not change["combinations_changed"]
        assert change["applies_from_ms"] == change["at"] + NOTICE_MS
        assert "net-2" not in server.module.games
    finally:
        await halt(server)
    # Started again a day before: still refused, and notified once only.
    clock.advance(4 * 24 * 3600)
    server = await boot(path, clock)
    try:
        assert "net-2" not in server.module.games and len(notices(server)) == 2
    finally:
        await halt(server)
    # Five days after the notice: scheduled on the new terms.
    clock.advance(24 * 3600)
    server = await boot(path, clock)
    try:
        assert "net-2" in server.module.games and len(notices(server)) == 2
        assert [p.basis_points for p in server.module.games["net-2"].config.prizes] == [2000, 5500]
    finally:
        await halt(server)


@pytest.mark.req("R93.11")
@pytest_twisted.ensureDeferred
async def test_a_change_of_the_winning_combinations_alone_is_notified_and_applies_at_once(tmp_path: Path) -> None:
    pki, home, url, path, clock = central_folder(tmp_path)
    path.write_text(configured(home, pki, url, extra=(TWO_LINES, CORNERS)))
    server = await boot(path, clock)
    try:
        first, change = notices(server)
        assert change["game_id"] == "net-2" and change["combinations_changed"] and not change["percentages_changed"]
        assert change["applies_from_ms"] == change["at"]
        assert {"net-1", "net-2"} <= set(server.module.games)
    finally:
        await halt(server)
