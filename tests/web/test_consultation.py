"""The regulator's consultation of a hall (R95.3): a real demo hall over real TLS, a regulator
certificate of the operator's authority, read-only queries, and every query journaled before
it is answered; every other certificate, no certificate and every method but GET refused."""

from __future__ import annotations

from contextlib import closing
import http.client
import json
import re
import sqlite3
from pathlib import Path
from typing import Any, Iterator

import pytest

from hall_server.config import DEFAULT_STAFF, default_config_text
from tests.support.waiting import WAIT, wait_until
from tests.web.conftest import _HASH, HallProcess
from tests.web.test_console_browser import browser, shot  # noqa: F401 (fixtures)
from tests.web.test_languages_browser import VISIBLE_TEXT, english_left

REGULATOR = ("regulator", "inspector-ana")


@pytest.fixture(scope="module")
def demo_hall(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HallProcess]:
    folder = tmp_path_factory.mktemp("consulted-hall")
    (folder / "hall.toml").write_text(default_config_text("Demo hall", [(n, r, _HASH) for n, r in DEFAULT_STAFF], port=0))
    hall = HallProcess(folder, demo=True, demo_pace=0.05).start()
    wait_until(lambda: _types(hall, "game_closed"), WAIT * 6, "the demo to close a game")
    yield hall
    hall.stop()


def _rows(hall: HallProcess, sql: str, *args: Any) -> list[Any]:
    with closing(sqlite3.connect(hall.folder / "hall.sqlite3")) as database, database:
        return database.execute(sql, args).fetchall()


def _types(hall: HallProcess, kind: str) -> list[dict[str, Any]]:
    return [json.loads(p) for (p,) in _rows(hall, "SELECT payload FROM journal WHERE type = ? ORDER BY seq", kind)]


def _get(hall: HallProcess, path: str, certificate: tuple[str, str] | None = REGULATOR,
         method: str = "GET") -> tuple[int, dict[str, Any]]:
    connection = http.client.HTTPSConnection("localhost", hall.port, timeout=30,
                                             context=hall.tls_context(certificate))
    connection.request(method, path)
    response = connection.getresponse()
    body = json.loads(response.read() or b"{}")
    connection.close()
    return response.status, body


@pytest.mark.integration
@pytest.mark.req("R95.3")
def test_a_regulator_certificate_consults_games_records_accounts_and_terminals_and_each_query_is_journaled(
    demo_hall: HallProcess,
) -> None:
    status, index = _get(demo_hall, "/regulator/api/")
    assert status == 200 and "games" in index["queries"] and "records?after=SEQ&limit=N&type=T" in index["queries"]

    status, listed = _get(demo_hall, "/regulator/api/games")
    closed = [g for g in listed["games"] if g["state"] == "closed"]
    assert status == 200 and closed and all(g["cards_sold"] > 0 and g["collection_cents"] > 0 for g in closed)
    game_id = closed[0]["game_id"]
    status, one = _get(demo_hall, f"/regulator/api/games/{game_id}")
    drawn = [p["ball"] for p in _types(demo_hall, "ball_drawn") if p["game_id"] == game_id]
    assert status == 200 and one["game"]["balls"] == drawn and one["game"]["prizes"]
    assert sum(s["last"] - s["first"] + 1 for s in one["game"]["paper_sales"]) == one["game"]["paper_cards"]

    status, page = _get(demo_hall, "/regulator/api/records?after=0&limit=3")
    stored = _rows(demo_hall, "SELECT seq, type, hash FROM journal ORDER BY seq LIMIT 3")
    assert status == 200 and [(r["seq"], r["type"], r["hash"]) for r in page["records"]] == stored
    assert page["next_after"] == 3
    status, opened = _get(demo_hall, "/regulator/api/records?type=player_account_opened&limit=1")
    (account,) = opened["records"]
    assert "pin_hash" not in account["payload"]  # a secret's hash is not the regulator's to read
    number = account["payload"]["account"]
    status, movements = _get(demo_hall, f"/regulator/api/accounts/{number}")
    assert status == 200 and movements["opened"]["seq"] == account["seq"]
    assert movements["balance_cents"] == sum(m["change_cents"] for m in movements["movements"])
    status, staff = _get(demo_hall, "/regulator/api/staff-actions?limit=20")
    assert status == 200 and staff["records"]
    assert all(r["payload"]["actor"]["role"] != "system" for r in staff["records"])
    status, terminals = _get(demo_hall, "/regulator/api/terminals")
    assert status == 200
    assert any(r["type"] == "terminal_enrolled" and "token_hash" not in r["payload"] for r in terminals["terminals"])

    consulted = _types(demo_hall, "regulator_consulted")
    assert [c["query"] for c in consulted[-8:]] == [
        "", "games", f"games/{game_id}", "records?after=0&limit=3", "records?type=player_account_opened&limit=1",
        f"accounts/{number}", "staff-actions?limit=20", "terminals"]
    assert all(c["regulator"] == "inspector-ana" and c["answered"] for c in consulted[-8:])
    assert all(c["actor"] == {"name": "inspector-ana", "role": "regulator"} for c in consulted[-8:])


@pytest.mark.integration
@pytest.mark.req("R95.3")
@pytest.mark.parametrize(("path", "status", "message"), [
    ("/regulator/api/games/no-such-game", 404, "no game no-such-game in this hall's journal"),
    ("/regulator/api/accounts/12ab", 400, "an account number is 6 to 20 digits, not '12ab'"),
    ("/regulator/api/accounts/999999999999", 404, "no player account 999999999999 was ever opened in this hall"),
    ("/regulator/api/records?limit=100000", 400, "limit is a whole number from 1 to 500, not '100000'"),
    ("/regulator/api/records?after=-1", 400, "after is a whole number from 0 to 1000000000000000, not '-1'"),
    ("/regulator/api/records?type=DROP%20TABLE", 400, "a record type is lower-case letters and _, not 'DROP TABLE'"),
    ("/regulator/api/cashier/pay", 404, "no query 'cashier/pay'"),
])
def test_a_malformed_or_unknown_query_is_refused_with_its_reason_and_journaled_as_unanswered(
    demo_hall: HallProcess, path: str, status: int, message: str,
) -> None:
    answered, body = _get(demo_hall, path)
    assert answered == status and not body["ok"] and body["error"]["message"].startswith(message)
    last = _types(demo_hall, "regulator_consulted")[-1]
    assert last["regulator"] == "inspector-ana" and not last["answered"]
    assert last["query"] == path.removeprefix("/regulator/api/")  # as it was asked


@pytest.mark.integration
@pytest.mark.req("R95.3")
@pytest.mark.parametrize("certificate", [None, ("staff", "admin"), ("terminal", "T9"), ("server", "hall-7"), ("operator", "op-1")])
def test_without_a_regulator_certificate_nothing_is_answered_and_nothing_journaled(
    demo_hall: HallProcess, certificate: tuple[str, str] | None,
) -> None:
    before = _rows(demo_hall, "SELECT count(*) FROM journal WHERE type = 'regulator_consulted'")
    status, body = _get(demo_hall, "/regulator/api/games", certificate)
    assert status == 403 and body["error"]["message"].startswith("the regulator's consultation answers a connection")
    assert _rows(demo_hall, "SELECT count(*) FROM journal WHERE type = 'regulator_consulted'") == before


@pytest.mark.integration
@pytest.mark.req("R95.3")
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE"])
def test_the_consultation_is_read_only(demo_hall: HallProcess, method: str) -> None:
    before = len(_types(demo_hall, "regulator_consulted"))
    status, body = _get(demo_hall, "/regulator/api/games", method=method)
    assert status == 405 and body["error"]["message"] == "the regulator's consultation is read-only: GET only"
    assert len(_types(demo_hall, "regulator_consulted")) == before  # no data was read


@pytest.mark.integration
@pytest.mark.req("R95.3")
def test_the_regulators_page_in_a_real_browser_shows_the_games_a_game_the_records_and_an_account(
    demo_hall: HallProcess, browser: Any,
) -> None:
    cert, key = demo_hall.certificate(*REGULATOR)
    certificates = [{"origin": demo_hall.base, "certPath": str(cert), "keyPath": str(key)}]
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1920, "height": 1080},
                                  client_certificates=certificates)
    page = context.new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(f"{demo_hall.base}/regulator")
    page.wait_for_selector("#games tbody tr.pick")
    assert page.evaluate("document.documentElement.lang") == "ca"  # the hall's language (hall.toml)
    game_id = page.locator("#games tbody tr.pick").last.get_attribute("data-game")
    page.locator(f'#games tbody tr[data-game="{game_id}"]').click()
    page.wait_for_selector("#game h3")
    drawn = [p["ball"] for p in _types(demo_hall, "ball_drawn") if p["game_id"] == game_id]
    assert page.inner_text("#game .balls-line").split() == [str(b) for b in drawn]
    assert page.text_content("#game-title") == f"Partida {game_id}"
    assert page.locator("#game h3").first.inner_text() == f"{len(drawn)} boles, en l'ordre del sorteig"
    assert page.locator("#records tbody tr").count() > 0
    opened = _types(demo_hall, "player_account_opened")[0]["account"]
    page.fill("#account", opened)
    page.click("#account-form button")
    page.wait_for_selector("#account-answer p")
    # In Catalan: the amounts as CLDR writes them, the times 24-hour in the hall's time zone.
    said = page.inner_text("#account-answer p")
    assert re.fullmatch(rf"Compte {opened}, obert al registre \d+ \(\d{{1,2}}/\d{{1,2}}/\d{{2}} \d{{1,2}}:\d{{2}}:\d{{2}}\); "
                        r"saldo -?[\d.]+,\d\d\xa0€", said), said
    # No English text of the catalogs on the page, outside the journal's own data (its records); the account's
    # movements are said in Catalan, as the statement prints them.
    example = page.get_attribute("#type", "placeholder")  # names a record type, prize_paid, as the journal does
    texts = [t for t in page.evaluate(VISIBLE_TEXT, "#records tbody, #status") if t != example]
    assert not [(english, text) for text in texts for english, pattern in english_left("ca") if pattern.search(text)]
    shot(page, "regulator-consultation-ca")
    # The reader picks English: the answers shown are written again, not asked again (each query is journaled).
    asked = len(_types(demo_hall, "regulator_consulted"))
    page.click(".language-chooser button[data-language=en]")
    page.wait_for_selector("html[lang=en]", state="attached")
    assert page.text_content("#game-title") == f"Game {game_id}"
    assert f"Account {opened}" in page.inner_text("#account-answer")
    assert len(_types(demo_hall, "regulator_consulted")) == asked
    shot(page, "regulator-consultation")
    queries = [c["query"] for c in _types(demo_hall, "regulator_consulted")]
    assert f"games/{game_id}" in queries and f"accounts/{opened}" in queries

    stranger = browser.new_context(ignore_https_errors=True).new_page()
    answer = stranger.goto(f"{demo_hall.base}/regulator/")
    assert answer is not None and answer.status == 403
    assert "regulator certificate" in stranger.inner_text("body")
    stranger.context.close()
    context.close()


@pytest.mark.req("R95.3")
def test_the_page_names_every_state_the_minutes_give_a_game_in_the_pages_language() -> None:
    """The consultation answers a game's state as the minutes word it ("sale closed"); the page has a
    translated name for each, or the regulator would read that game's state in English."""
    from hall_server.reports.minutes import _OUTCOMES
    from protocol.game import State

    script = (Path(__file__).parents[2] / "hall_server/web/static/regulator.js").read_text()
    table = script[script.index("const STATES"):script.index("});", script.index("const STATES"))]
    named = {key.strip('"') for key in re.findall(r'(\w+|"[^"]+"): t\(', table)}
    resumed = {str(state).replace("_", " ") for state in (State.SCHEDULED, State.SELLING, State.SALE_CLOSED)}
    assert set(_OUTCOMES.values()) | resumed <= named, sorted(set(_OUTCOMES.values()) | resumed - named)
