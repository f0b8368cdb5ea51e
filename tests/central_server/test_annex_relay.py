"""The central server relays a hall-annex pair's joint game (R3.5.b) over the communications endpoint.

A real central server on real TLS and SQLite; two halls of a configured pair and a third
member hall in no pair, each with its own certificate, speak AMP to it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import pytest_twisted

from central_server.module import REFUSED
from protocol.records.central import CentralAnnexRelayed
from server_kit.amp.commands import error_class
from server_kit.pki import issue_certificate
from tests.central_server.conftest import Running, start_central, stop_central
from tests.central_server.support import until

pytestmark = [pytest.mark.integration]


@pytest_twisted.async_yield_fixture
async def paired(tmp_path: Path) -> Any:
    running = await start_central(tmp_path, f"sqlite:///{tmp_path / 'central.sqlite3'}",
                                  halls=("hall-1", "hall-2", "hall-3"), annex=(("hall-1", "hall-2"),))
    issue_certificate(running.pki_dir, "server", "hall-3")
    yield running
    await stop_central(running)


def ball(request_id: str, number: int, count: int, hall: str = "hall-1") -> dict[str, Any]:
    return {"request_id": request_id, "hall_id": hall, "game_id": "hall-1.j7", "kind": "ball", "ball": number,
            "ball_count": count}


@pytest_twisted.ensureDeferred
async def test_a_ball_of_the_main_hall_is_journaled_pushed_to_the_annex_and_a_resend_changes_nothing(
        paired: Running) -> None:
    main = await paired.hall("hall-1")
    annex = await paired.hall("hall-2")
    first = await main.call("annex_post", **ball("hall-1.41", 17, 1))
    assert first == {"request_id": "hall-1.41", "seq": 1}
    await until(lambda: annex.pushed("annex_delivered"), "the ball to reach the annex")
    (pushed,) = annex.pushed("annex_delivered")
    assert {k: v for k, v in pushed.items() if v is not None} == {
        "seq": 1, "from_hall": "hall-1", "game_id": "hall-1.j7", "kind": "ball", "ball": 17, "ball_count": 1}
    again = await main.call("annex_post", **ball("hall-1.41", 17, 1))
    assert again == first
    with pytest.raises(error_class("request_id_reused")):
        await main.call("annex_post", **ball("hall-1.41", 18, 1))
    second = await main.call("annex_post", **ball("hall-1.42", 5, 2))
    assert second["seq"] == 2
    relayed = paired.records(CentralAnnexRelayed.type)
    assert [(r.payload["to_hall"], r.payload["seq"], r.payload["item"]["ball"]) for r in relayed] == [
        ("hall-2", 1, 17), ("hall-2", 2, 5)]


@pytest_twisted.ensureDeferred
async def test_a_hall_that_was_away_fetches_what_its_partner_posted_page_by_page(paired: Running) -> None:
    main = await paired.hall("hall-1")
    for count in range(1, 4):
        await main.call("annex_post", **ball(f"hall-1.{count}", count + 10, count))
    annex = await paired.hall("hall-2")  # connected after the posts: it asks
    page = await annex.call("annex_fetch", hall_id="hall-2", after=1)
    assert [(i["seq"], i["ball"]) for i in page["items"]] == [(2, 12), (3, 13)]
    assert page["more"] is False and page["last_seq"] == 3
    back = await annex.call("annex_post", request_id="hall-2.9", hall_id="hall-2", game_id="hall-1.j7", kind="sales",
                            cards=30, cents=3000)
    assert back["seq"] == 1  # the main hall's own stream
    mine = await main.call("annex_fetch", hall_id="hall-1", after=0)
    assert [(i["from_hall"], i["kind"], i["cards"], i["cents"]) for i in mine["items"]] == [
        ("hall-2", "sales", 30, 3000)]


@pytest_twisted.ensureDeferred
async def test_a_hall_in_no_pair_is_refused_with_not_annex_pair_and_the_refusal_is_on_file(
        paired: Running) -> None:
    stranger = await paired.hall("hall-3")
    before = len(paired.records(CentralAnnexRelayed.type))
    with pytest.raises(error_class("not_annex_pair")) as refused:
        await stranger.call("annex_post", **ball("hall-3.1", 17, 1, hall="hall-3"))
    assert "hall-3 is in no hall-annex pair" in str(refused.value)
    with pytest.raises(error_class("not_annex_pair")):
        await stranger.call("annex_fetch", hall_id="hall-3", after=0)
    assert len(paired.records(CentralAnnexRelayed.type)) == before
    codes = [(r.payload["peer"], r.payload["command"], r.payload["code"]) for r in paired.records(REFUSED)]
    assert ("hall-3", "annex_post", "not_annex_pair") in codes


@pytest_twisted.ensureDeferred
async def test_a_hall_posting_for_its_partner_is_refused_with_hall_mismatch(paired: Running) -> None:
    annex = await paired.hall("hall-2")
    with pytest.raises(error_class("hall_mismatch")):
        await annex.call("annex_post", **ball("hall-2.1", 17, 1, hall="hall-1"))
    assert paired.records(CentralAnnexRelayed.type) == []


@pytest_twisted.ensureDeferred
async def test_N20_only_the_declared_kinds_are_relayed_from_the_hall_that_says_them_with_their_fields(
        paired: Running) -> None:
    """The annex cannot open, draw or close the main hall's game, and no item carries another kind's
    fields or lacks its own: each is refused (``bad_argument``), relayed to nobody, on file."""
    main = await paired.hall("hall-1")
    annex = await paired.hall("hall-2")
    game = {"hall_id": "hall-2", "game_id": "hall-1.j7"}
    refused = [
        (annex, {"request_id": "hall-2.1", **game, "kind": "ball", "ball": 17, "ball_count": 1},
         "hall hall-2 is the pair's annex; an item 'ball' comes from the main hall only"),
        (annex, {"request_id": "hall-2.2", **game, "kind": "opened", "cents": 100, "line_bp": 2000, "bingo_bp": 5000},
         "an item 'opened' comes from the main hall only"),
        (annex, {"request_id": "hall-2.3", **game, "kind": "closed", "cards": 0},
         "an item 'closed' comes from the main hall only"),
        (annex, {"request_id": "hall-2.4", **game, "kind": "sales", "cards": 30, "cents": 3000, "ball": 90},
         "an item 'sales' carries no ball"),
        (annex, {"request_id": "hall-2.5", **game, "kind": "claim", "pattern": "bingo", "card": "1001-17"},
         "an item 'claim' carries pattern, card, ball_count; ball_count missing"),
        (main, {"request_id": "hall-1.6", "hall_id": "hall-1", "game_id": "hall-1.j7", "kind": "ball", "ball": 17},
         "ball_count missing"),
        (annex, {"request_id": "hall-2.6", **game, "kind": "not_played", "reason": "power cut"},
         "an item 'not_played' comes from the main hall only"),
    ]
    for hall, post, said in refused:
        with pytest.raises(error_class("bad_argument")) as caught:
            await hall.call("annex_post", **post)
        assert said in str(caught.value), caught.value
    assert paired.records(CentralAnnexRelayed.type) == []
    assert annex.pushed("annex_delivered") == [] and main.pushed("annex_delivered") == []
    codes = [(r.payload["peer"], r.payload["code"]) for r in paired.records(REFUSED)]
    assert codes.count(("hall-2", "bad_argument")) == 6 and codes.count(("hall-1", "bad_argument")) == 1
    # What the declarations allow still goes through.
    assert (await annex.call("annex_post", request_id="hall-2.9", **game, kind="sales", cards=30, cents=3000))["seq"] == 1
    assert (await main.call("annex_post", **ball("hall-1.9", 17, 1)))["seq"] == 1
    not_played = {"hall_id": "hall-1", "game_id": "hall-1.j7", "kind": "not_played", "reason": "power cut (R96.2)"}
    assert (await main.call("annex_post", request_id="hall-1.10", **not_played))["seq"] == 2
