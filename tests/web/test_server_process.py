"""The hall server as a process: TLS from its own PKI on loopback, the console API, a
whole game through the command channel, and the same state after a restart."""

from pathlib import Path

import pytest

from tests.web.conftest import ALL_BALLS, PASSWORD, HallProcess, HttpClient

pytestmark = pytest.mark.integration


@pytest.fixture
def hall(tmp_path: Path):
    process = HallProcess(tmp_path).start()
    yield process
    process.stop()


def signed_in(hall: HallProcess, name: str) -> HttpClient:
    client = HttpClient(hall)
    status, answer = client.call("POST", "/login", {"name": name, "password": PASSWORD})
    assert status == 200, answer
    return client


class Staff:
    def __init__(self, hall: HallProcess) -> None:
        self.clients = {name: signed_in(hall, name) for name in ("admin", "rosa", "tomas", "sam", "carla")}
        self.counter = 0

    def __call__(self, name: str, command: str, **args: object) -> dict:
        self.counter += 1
        status, answer = self.clients[name].call(
            "POST", "/api/command", {"id": f"t{self.counter}", "command": command, "args": args}
        )
        assert status == 200 and answer["ok"], answer
        return answer


@pytest.mark.req("R80", "R84.2", "R77.1", "R85.5", "R85.11", "R92.11-12")
def test_a_whole_game_over_tls_then_the_same_picture_after_a_restart(hall: HallProcess, tmp_path: Path) -> None:
    assert hall.base.startswith("https://")
    staff = Staff(hall)
    staff("admin", "run_verification", date="2026-11-29")
    staff("rosa", "count_balls", stage="opening", balls_present=ALL_BALLS, witnesses=["Maria Public"])
    staff("rosa", "sign_session_opening")
    staff("admin", "sign_session_opening")
    staff("carla", "open_cash_desk", desk="desk-1", float_cents=50_000)
    staff("sam", "announce_sale", series=1001)
    staff("sam", "sell_cards", series=1001, first=1, last=60)
    # A seller-caller may not close the sale (R80): refused, nothing changed.
    status, refused = staff.clients["sam"].call("POST", "/api/command", {"id": "x1", "command": "close_sale", "args": {}})
    assert status == 403 and refused["error"]["code"] == "not_allowed"
    staff("rosa", "close_sale")
    bingo = None
    while bingo is None:
        records = staff("sam", "draw_ball")["records"]
        assert [r["type"] for r in records] == ["ball_drawn"]
        board = HttpClient(hall).call("GET", "/api/board")[1]["view"]["game"]
        for card in board["completed"]:
            if card["pattern"] == "bingo":
                bingo = card
    staff("tomas", "verify_claim", series=bingo["series"], card_number=bingo["card_number"])
    status, board = HttpClient(hall).call("GET", "/api/board")
    winners = board["view"]["game"]["winners"]
    assert {"series": bingo["series"], "card_number": bingo["card_number"], "pattern": "bingo"}.items() <= winners[-1].items()
    assert board["view"]["game"]["cards_sold"] == 60 and board["view"]["game"]["prizes"]["bingo"] > 0
    hall.stop()
    hall.start()
    assert HttpClient(hall).call("GET", "/api/board")[1] == board  # rebuilt from the journal
    status, _ = HttpClient(hall).call("GET", "/api/state")
    assert status == 401  # sign-ins end with the process


def test_a_bad_sign_in_over_the_wire_reveals_nothing(hall: HallProcess) -> None:
    client = HttpClient(hall)
    assert client.call("POST", "/login", {"name": "rosa", "password": "nope"}) == client.call(
        "POST", "/login", {"name": "ghost", "password": "nope"}
    ) == (401, {"id": None, "ok": False, "error": {"code": "sign_in_refused", "message": "name or password not recognised"}})
