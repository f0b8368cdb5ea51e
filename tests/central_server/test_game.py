"""A whole network game through the central server's endpoint: real TLS, real certificates,
the real database (SQLite and PostgreSQL), two halls' AMP clients.

The halls say hello, buy cards while the sale is open, get the sale's close, every ball,
every prize and their credits pushed, and the game ends at the bingo.  What the halls
were told is held against the journal: the journal verifies, the game rebuilt from it
is the game the server holds, and every push followed its commit.
"""

from __future__ import annotations

from typing import Any

import pytest
import pytest_twisted


from central_server.domain.game import CentralGame
from central_server.module import game_record
from protocol.records.central import GAME_RECORDS
from server_kit.journal import table
from tests.central_server.conftest import Running
from tests.central_server.support import until

pytestmark = pytest.mark.integration


async def fetch_all(client: Any, name: str, items: str, **arguments: Any) -> list[dict[str, Any]]:
    """Every item of a paged list, page after page."""
    found: list[dict[str, Any]] = []
    after = 0
    while True:
        page = await client.call(name, after=after, **arguments)
        found += page[items]
        if not page["more"]:
            return found
        after = found[-1]["seq"]


async def play_to_the_end(central: Running, clients: list[Any]) -> None:
    """Advance the clock ball by ball, waiting for each ball to reach every hall, until the game ends."""
    while central.game.phase not in ("closed", "not_played"):
        await central.next_ball()
    await until(lambda: all(c.pushed("game_closed") for c in clients), "game_closed at every hall")


@pytest.mark.req("R92.5", "R93.1", "R93.6", "R93.8", "R93.9", "R93.10", "R93.12-13", "R92.11-12", "R92.3")
@pytest_twisted.ensureDeferred
async def test_two_halls_play_a_whole_network_game_over_mutual_tls(central_on: Running) -> None:
    central = central_on
    one, two = await central.hall("hall-1"), await central.hall("hall-2")
    assert (await one.get_game())["phase"] == "scheduled"
    refused = await one.buy("early", count=1)
    assert (refused["status"], refused["refusal_code"]) == ("refused", "sale_not_open")

    await central.open_sale()
    await until(lambda: one.pushed("sale_opened") and two.pushed("sale_opened"), "sale_opened at both halls")
    opened = one.pushed("sale_opened")[0]
    assert opened["closes_at_ms"] == central.game.closes_at_ms and opened["remaining_ms"] == 10_000

    # Every card of the series is sold, in the order the requests arrive (R93.6).
    answers = []
    for k in range(5):
        answers.append(await one.buy(f"h1-{k}", terminal=f"T{k}", player=f"p{k}", count=6))
        answers.append(await two.buy(f"h2-{k}", hall="hall-2", terminal=f"K{k}", player=f"q{k}", count=6))
    assert [a["decision"] for a in answers] == list(range(2, 12))
    assert [a["first_card"] for a in answers] == list(range(1, 61, 6))
    assert all(a["status"] == "confirmed" and a["amount_cents"] == 600 for a in answers)
    # A resend has its effect once: the first answer, word for word, and nothing journaled.
    length = central.journal_length()
    assert await one.buy("h1-0", terminal="T0", player="p0", count=6) == answers[0]
    assert central.journal_length() == length
    exhausted = await two.buy("h2-late", hall="hall-2", terminal="K9", player="q9", count=1)
    assert exhausted["refusal_code"] == "series_exhausted"

    # The deadline is the central clock's: the sale closes there, and nothing is sold after it (R93.8).
    await central.close_sale()
    await until(lambda: one.pushed("sale_closed") and two.pushed("sale_closed"), "sale_closed at both halls")
    closed = {hall: c.pushed("sale_closed")[0] for hall, c in (("hall-1", one), ("hall-2", two))}
    assert closed["hall-1"]["cards_sold"] == 60 and closed["hall-1"]["sales_cents"] == 6000
    assert closed["hall-1"]["hall_sales_cents"] == closed["hall-2"]["hall_sales_cents"] == 3000
    assert {p["pattern"]: p["amount_cents"] for p in closed["hall-1"]["prizes"]} == {"line": 1200, "bingo": 3000}
    after = await one.buy("after-close", count=1)
    assert after["refusal_code"] == "sale_over"

    await play_to_the_end(central, [one, two])

    # Every hall saw every ball, in order, numbered; and the same balls as the game.
    for client in (one, two):
        seen = client.pushed("ball_drawn")
        assert [b["ball_count"] for b in seen] == list(range(1, len(central.game.balls) + 1))
        assert [b["ball"] for b in seen] == central.game.balls
    balls = await one.call("get_balls", game_id="net-1", hall_id="hall-1", after_count=0)
    assert balls == {"balls": central.game.balls, "ball_count": len(central.game.balls)}
    # The prizes, the winners with the hall and terminal of each card (R92.11), the credits.
    prizes = one.pushed("prize_won")
    assert [p["pattern"] for p in prizes][-1] == "bingo" and prizes[-1]["final"] is True
    winners = await fetch_all(one, "get_winners", "winners", game_id="net-1", hall_id="hall-1")
    assert len(winners) == sum(p["winner_count"] for p in prizes)
    assert all(w["hall_id"] in ("hall-1", "hall-2") and w["terminal_id"][0] in "TK" for w in winners)
    paid: dict[str, int] = {}
    for hall, client in (("hall-1", one), ("hall-2", two)):
        credits = await fetch_all(client, "get_credits", "credits", game_id="net-1", hall_id=hall)
        assert [c["seq"] for c in credits] == list(range(1, len(credits) + 1))
        assert credits == [] or client.pushed("credits_available")[-1]["last_seq"] == len(credits)
        paid[hall] = sum(c["amount_cents"] for c in credits)
    assert sum(paid.values()) == sum(w["payment_cents"] for w in winners)
    assert sum(paid.values()) + sum(c["carry_cents"] for c in one.pushed("game_closed")[0]["carries"]) == 4200

    # The journal is the game: it verifies, and the game rebuilt from it is the one served.
    assert central.server.journal.verify() == central.journal_length()
    records = [r for r in table.read(central.server.engine) if r.type in GAME_RECORDS]
    events = [game_record(r) for r in records]
    rebuilt = CentralGame.replay(events, central.server.module.library["V1"])
    assert rebuilt.events == central.game.events
    # Each hall decision is journaled with the hall and its request id (the actor stamp).
    stamped = [r.payload["actor"] for r in records if r.type == "central_purchase_confirmed"]
    assert stamped[0] == {"name": "hall-1", "role": "hall", "request": "h1-0"}


@pytest.mark.req("R96.3", "R96.2")
@pytest_twisted.ensureDeferred
async def test_a_failed_terminal_is_refunded_once_and_force_majeure_returns_every_stake(central: Running) -> None:
    one = await central.hall("hall-1")
    await central.open_sale()
    bought = await one.buy("b1", terminal="T7", player="p7", count=4, pct=50)
    assert bought["amount_cents"] == 200
    failed = await one.call("terminal_failed", request_id="f1", game_id="net-1", hall_id="hall-1",
                            terminal_id="T7", reason="screen dark", declared_by="room chief M. Puig")
    assert (failed["refunded_cards"], failed["refunded_cents"], failed["paid_by"]) == (4, 200, "stakes")
    again = await one.call("terminal_failed", request_id="f1", game_id="net-1", hall_id="hall-1",
                           terminal_id="T7", reason="screen dark", declared_by="room chief M. Puig")
    assert again == failed
    later = await one.buy("b2", terminal="T7", player="p7", count=1)
    assert later["refusal_code"] == "terminal_failed"
    await one.buy("b3", terminal="T8", player="p8", count=2)

    await central.server.module.declare_not_played("net-1", "the central site lost power", _operator())
    await until(lambda: one.pushed("game_not_played"), "game_not_played at the hall")
    credits = await fetch_all(one, "get_credits", "credits", game_id="net-1", hall_id="hall-1")
    assert [(c["kind"], c["amount_cents"], c["terminal_id"]) for c in credits] == [
        ("refund", 200, "T7"), ("refund", 200, "T8"),
    ]
    assert one.pushed("game_not_played")[0]["last_credit_seq"] == 2


def _operator() -> Any:
    from server_kit.core import Actor

    return Actor("operator J. Vidal", "operator")


@pytest.mark.req("R93.1", "R92.5")
@pytest_twisted.ensureDeferred
async def test_a_hall_saying_hello_while_a_sale_is_open_is_told_of_the_sale_with_the_time_left(central: Running) -> None:
    """A hall away when the sale opened (killed, or the central server restarted and opened it
    before the hall was back) hears ``sale_opened`` at its hello, while the sale lasts (R93.1)."""
    one = await central.hall("hall-1")
    await central.open_sale()
    await until(lambda: one.pushed("sale_opened"), "sale_opened at hall-1")
    central.clock.advance(4)
    late = await central.hall("hall-2")
    central.clock.advance(0)  # the push follows the hello's answer
    await late.get_game("hall-2")  # anything sent before this answer has arrived
    (told,) = late.pushed("sale_opened")
    assert told["closes_at_ms"] == central.game.closes_at_ms
    assert told["remaining_ms"] == central.game.closes_at_ms - int(central.clock.seconds() * 1000)
    assert len(one.pushed("sale_opened")) == 1, "a hall that was there is not told again"

    await one.buy("h1-a", count=3)
    await central.close_sale()
    again = await central.hall("hall-2")
    central.clock.advance(0)
    await again.get_game("hall-2")
    assert again.pushed("sale_opened") == [], "a sale that is over is not announced as on sale"
    assert [told["phase"] for told in again.pushed("game_under_way")] == ["sale_closed"], "it is told under way"


@pytest.mark.req("R92.5", "R92.11-12")
@pytest_twisted.ensureDeferred
async def test_a_hall_of_version_2_saying_hello_after_a_sale_closed_is_told_the_game_under_way(central: Running) -> None:
    """A hall that links only after a game's sale closed hears ``game_under_way`` at its hello
    (protocol version 2): the sale and its close, so it shows the game and catches up."""
    one = await central.hall("hall-1")
    await central.open_sale()
    await one.buy("h1-a", count=4, pct=50)
    await central.close_sale()
    await central.next_ball()
    late = await central.hall("hall-2", hello=False)
    assert (await late.call("hello", hall_id="hall-2", versions=[1, 2], software="test-hall 2.0"))["version"] == 2
    central.clock.advance(0)  # the push follows the hello's answer
    await late.get_game("hall-2")
    (told,) = late.pushed("game_under_way")
    game = central.game
    assert game.sale is not None
    assert (told["game_id"], told["phase"], told["cards_sold"], told["sales_cents"], told["ball_count"]) == (
        "net-1", "drawing", 4, 200, 1)
    assert {p["pattern"]: p["amount_cents"] for p in told["prize_amounts"]} == dict(game.sale.prize_amounts)
    assert told["closes_at_ms"] == game.closes_at_ms and late.pushed("sale_opened") == []
    assert one.pushed("game_under_way") == [], "a hall that was there is not told"


@pytest_twisted.ensureDeferred
async def test_N7_hello_answers_the_furthest_record_of_its_journal_the_hall_said_before(central: Running) -> None:
    """What a hall said of its journal is kept and told back: a hall rolled back sees it is behind."""
    one = await central.hall("hall-1", hello=False)
    first, later = "a" * 64, "b" * 64

    async def hello(**journal: object) -> dict:  # type: ignore[type-arg]
        return await one.call("hello", hall_id="hall-1", versions=[2], software="test-hall 2.0", **journal)

    answer = await hello(journal_seq=5, journal_hash=first)
    assert answer["hall_journal_seq"] is None and answer["hall_journal_hash"] is None  # nothing said before
    assert (await hello(journal_seq=9, journal_hash=later))["hall_journal_seq"] == 5
    behind = await hello(journal_seq=3, journal_hash=first)  # cut back: what it said stays
    assert (behind["hall_journal_seq"], behind["hall_journal_hash"]) == (9, later)
    assert (await hello())["hall_journal_seq"] == 9  # a hall that does not say keeps what it said
    refused = await one.call("hello", hall_id="hall-1", versions=[2], software="test-hall 2.0",
                             journal_seq=10).addErrback(lambda failure: failure.value)
    assert getattr(refused, "code", None) == "bad_argument"
    assert str(refused) == "hello: journal_seq and journal_hash are said together, or neither"


@pytest_twisted.ensureDeferred
async def test_every_module_of_the_central_server_keeps_a_restore_point(central: Running) -> None:
    """Without a savepoint of the play gate the central core took no restore point: it kept every record
    committed since its start in memory (a day's purchases) and a failed commit folded them all again."""
    core = central.server.core
    assert core.unkept_modules() == []
    assert "PlayGate" in core.module_names()
    gate = central.server.gate
    gate.stopped = {"cause": "crash", "seq": 3}
    point = gate.savepoint()
    gate.stopped = None
    gate.rollback(point)
    assert gate.stopped == {"cause": "crash", "seq": 3} and gate.stopped is not point
