"""``bingo central schedule-game`` sent again with its request id schedules nothing more.

A real ``bingo central serve`` with a ``[programme]`` whose hours are not now (so the programme
itself schedules nothing), and the operator's ``bingo central schedule-game`` processes: the
request carries an id (the operator's ``--request-id``, or one the tool makes and prints); sent
twice with one id it makes one game, and two ids make two games.
"""

from __future__ import annotations

import datetime
import re
from pathlib import Path

import pytest

from tests.central_server.support import CentralProcess, config_text, make_pki, programme_text
from tests.central_server.test_operator import Operator, journal

pytestmark = [pytest.mark.integration]


def games(config: Path) -> list[tuple[str, str, str | None]]:
    """The one-off games on file: (record type, game, the request id stamped on it)."""
    return [(r.type, r.payload["game_id"], r.payload["actor"].get("request")) for r in journal(config)
            if r.type in ("central_game_scheduled", "central_game_queued")]


async def test_schedule_game_twice_with_one_request_id_schedules_one_game_and_two_ids_two(tmp_path: Path) -> None:
    pki_dir = make_pki(tmp_path / "pki")
    home = tmp_path / "central"
    home.mkdir()
    config = home / "central.toml"
    hour = datetime.datetime.now(datetime.timezone.utc).hour
    hours = f"{(hour + 2) % 24:02d}:00-{(hour + 3) % 24:02d}:00"  # not now: only the operator's games
    config.write_text(config_text(home, pki_dir, f"sqlite:///{home / 'central.sqlite3'}", games=(),
                                  programme=programme_text(opens_after_ms=600_000, hours=hours)))
    process = CentralProcess(config).start()
    operator = Operator(tmp_path, process, pki_dir)
    try:
        first = await operator.run("schedule-game", "--request-id", "olga-7")
        assert first.returncode == 0, first.stderr
        game = first.stdout.split(" ", 1)[0]
        assert re.fullmatch(r"net-\d{4}-\d\d-\d\d-1", game), first.stdout
        assert first.stdout.endswith("[request olga-7]\n") and " is scheduled (the chain's first game)" in first.stdout
        again = await operator.run("schedule-game", "--request-id", "olga-7")
        assert again.returncode == 0, again.stderr
        assert again.stdout.startswith(f"this request was carried out before, and nothing more is scheduled: {game} "
                                       "is scheduled"), again.stdout
        assert games(config) == [("central_game_scheduled", game, "olga-7")]

        # No --request-id: the tool makes one and prints it; that id sent again changes nothing.
        second = await operator.run("schedule-game")
        assert second.returncode == 0, second.stderr
        made = re.search(r"\[request (schedule-[0-9a-f]{16})\]\n$", second.stdout)
        assert made, second.stdout
        queued = second.stdout.split(" ", 1)[0]
        assert queued != game and f"{queued} is queued: it is scheduled once {game} is over" in second.stdout
        repeat = await operator.run("schedule-game", "--request-id", made.group(1))
        assert repeat.returncode == 0, repeat.stderr
        assert repeat.stdout.startswith(f"this request was carried out before, and nothing more is scheduled: "
                                        f"{queued} is queued"), repeat.stdout
        assert games(config) == [("central_game_scheduled", game, "olga-7"),
                                 ("central_game_queued", queued, made.group(1))], "two ids: two games, no more"
    finally:
        process.stop()
