"""The regulator's consultation of the central server (R95.3): a real central server process,
two halls buying over mutual TLS, a whole network game, then read-only queries over HTTPS
with a regulator certificate of the operator's authority; every query journaled before it
is answered, every other certificate and every method but GET refused, nothing changed."""

from __future__ import annotations

from contextlib import closing
import datetime
import http.client
import json
import re
import sqlite3
import ssl
import zoneinfo
from pathlib import Path
from typing import Any, Iterator

import pytest
import pytest_twisted

from twisted.internet import defer, reactor, task

from central_server import i18n
from central_server.config import load_config
from central_server.daily import central_daily_files, read_day, read_year
from server_kit.i18n import money
from server_kit.pki import issue_certificate
from server_kit.reports.render import to_csv
from server_kit.pki.folder import PkiFolder
from server_kit.ports import reserve_port
from tests.central_server.support import CentralProcess, HallClient, config_text, connect, make_pki
from tests.support.catalogs import english_texts
from tests.support.waiting import WAIT, wait_until
from tests.reports.conftest import pdf_strings
from tests.web.test_console_browser import browser, shot  # noqa: F401 (fixtures)
from tests.web.test_languages_browser import VISIBLE_TEXT

INSPECTOR = "inspector-ana"


class Consulted:
    """The central server of the module, after one network game, and how to ask it."""

    def __init__(self, home: Path, pki_dir: Path, process: CentralProcess, port: int) -> None:
        self.home, self.pki_dir, self.process, self.port = home, pki_dir, process, port
        self.base = f"https://localhost:{port}"

    def rows(self, sql: str, *args: Any) -> list[Any]:
        with closing(sqlite3.connect(self.home / "central.sqlite3")) as database, database:
            return database.execute(sql, args).fetchall()

    def payloads(self, kind: str) -> list[dict[str, Any]]:
        return [json.loads(p) for (p,) in self.rows("SELECT payload FROM journal WHERE type = ? ORDER BY seq", kind)]

    def files(self, name: str) -> tuple[Path, Path]:
        folder = PkiFolder(self.pki_dir)
        return folder.cert(name), folder.key(name)

    def context(self, name: str | None = INSPECTOR) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.pki_dir / "ca.pem"))
        if name is not None:
            context.load_cert_chain(*map(str, self.files(name)))
        return context

    def get(self, path: str, name: str | None = INSPECTOR, method: str = "GET") -> tuple[int, dict[str, Any]]:
        connection = http.client.HTTPSConnection("localhost", self.port, timeout=30, context=self.context(name))
        connection.request(method, path)
        response = connection.getresponse()
        body = json.loads(response.read() or b"{}")
        connection.close()
        return response.status, body


async def _sleep(seconds: float) -> None:
    await task.deferLater(reactor, seconds, lambda: None)


async def _play(process: CentralProcess, pki_dir: Path) -> None:
    """Two halls buy the 60 cards of the series, 10 at terminals T0-T2 each; the game is played to its end."""
    clients: list[HallClient] = []
    for hall in ("hall-1", "hall-2"):
        client = await connect(process.port, pki_dir, hall)
        await client.hello(hall)
        clients.append(client)

    async def phase() -> str:
        return str((await clients[0].get_game())["phase"])

    for _ in range(600):
        if await phase() == "selling":
            break
        await _sleep(0.05)
    for k, client in enumerate(clients):
        hall = f"hall-{k + 1}"
        for t in range(3):
            await client.buy(f"{hall}-r{t}", hall=hall, terminal=f"T{t}", player=f"{hall}-p{t}", count=10,
                             pct=100 if t else 50)
    for _ in range(2400):
        if await phase() == "closed":
            break
        await _sleep(0.05)
    for client in clients:
        client.transport.loseConnection()


@pytest.fixture(scope="module")
def central(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Consulted]:
    folder = tmp_path_factory.mktemp("consulted-central")
    pki_dir = make_pki(folder / "pki")
    issue_certificate(pki_dir, "regulator", INSPECTOR)
    home = folder / "central"
    home.mkdir()
    port = reserve_port()
    text = config_text(home, pki_dir, f"sqlite:///{home / 'central.sqlite3'}", sale_ms=10_000, ball_ms=1_000,
                       opens_after_ms=200)
    (home / "central.toml").write_text(text + f'\n[consultation]\ninterface = "127.0.0.1"\nport = {port}\n')
    process = CentralProcess(home / "central.toml").start()
    consulted = Consulted(home, pki_dir, process, port)
    try:
        pytest_twisted.blockon(defer.ensureDeferred(_play(process, pki_dir)))
        wait_until(lambda: consulted.payloads("central_game_closed"), WAIT * 3, "the network game to close")
        yield consulted
    finally:
        process.stop()


def _money(central: Consulted) -> dict[str, int]:
    """Each hall's net movement as the journal's own records say: prizes paid less stakes charged and returned."""
    net: dict[str, int] = {}
    for p in central.payloads("central_purchase_confirmed"):
        net[p["hall_id"]] = net.get(p["hall_id"], 0) - p["amount_cents"]
    for p in central.payloads("central_stake_returned"):
        net[p["hall_id"]] = net.get(p["hall_id"], 0) + p["amount_cents"]
    for p in central.payloads("central_card_won"):
        net[p["hall_id"]] = net.get(p["hall_id"], 0) + p["payment_cents"]
    return net


@pytest.mark.integration
@pytest.mark.req("R95.3", "R92.11-12", "R93.7")
def test_a_regulator_certificate_consults_the_network_games_halls_terminals_money_and_records(
    central: Consulted,
) -> None:
    status, index = central.get("/regulator/api/")
    assert status == 200 and {"games", "games/<game_id>", "halls", "terminals"} <= set(index["queries"])

    status, listed = central.get("/regulator/api/games")
    (game,) = listed["games"]
    purchases = central.payloads("central_purchase_confirmed")
    wins = central.payloads("central_card_won")
    assert status == 200 and game["game_id"] == "net-1" and game["state"] == "closed"
    assert game["cards_sold"] == sum(p["card_count"] for p in purchases) == 60
    assert game["prizes_paid_cents"] == sum(w["payment_cents"] for w in wins) > 0

    status, one = central.get("/regulator/api/games/net-1")
    whole = one["game"]
    assert status == 200
    assert whole["balls_drawn"] == [b["ball"] for b in central.payloads("central_ball_drawn")]
    assert [(p["hall"], p["terminal"], p["card_count"]) for p in whole["purchases"]] == [
        (p["hall_id"], p["terminal_id"], p["card_count"]) for p in purchases]
    assert [(w["hall"], w["terminal"], w["card"]) for w in whole["winners"]] == [
        (w["hall_id"], w["terminal_id"], f"{w['hall_id']}/V1-{w['card_number']}") for w in wins]
    assert {p["pattern"] for p in whole["prizes"]} == {"line", "bingo"}

    status, halls = central.get("/regulator/api/halls")
    assert status == 200 and [h["hall"] for h in halls["halls"]] == ["hall-1", "hall-2"]
    net = _money(central)
    for row in halls["halls"]:
        assert row["prizes_paid_cents"] - row["stakes_cents"] + row["returned_cents"] == net[row["hall"]]
    status, terminals = central.get("/regulator/api/terminals")
    assert status == 200 and len(terminals["terminals"]) == 6
    assert sum(t["cards"] for t in terminals["terminals"]) == 60

    for hall, cents in net.items():  # the movements add up to the cent, per hall
        status, moved = central.get(f"/regulator/api/movements?hall={hall}")
        assert status == 200 and moved["total_change_cents"] == cents
        assert moved["matching"] == len(moved["movements"]) and all(m["hall"] == hall for m in moved["movements"])
    player = purchases[0]["player_ref"]
    status, theirs = central.get(f"/regulator/api/movements?player={player}&limit=1")
    assert status == 200 and len(theirs["movements"]) == 1 and theirs["movements"][0]["change_cents"] < 0

    status, page = central.get("/regulator/api/records?after=0&limit=3")
    stored = central.rows("SELECT seq, type, hash FROM journal ORDER BY seq LIMIT 3")
    assert status == 200 and [(r["seq"], r["type"], r["hash"]) for r in page["records"]] == stored
    assert page["next_after"] == 3
    status, operator = central.get("/regulator/api/operator-actions")
    assert status == 200 and all(r["payload"]["actor"]["role"] == "operator" for r in operator["records"])

    consulted = central.payloads("regulator_consulted")
    asked = ["", "games", "games/net-1", "halls", "terminals", "movements?hall=hall-1", "movements?hall=hall-2",
             f"movements?player={player}&limit=1", "records?after=0&limit=3", "operator-actions"]
    assert [c["query"] for c in consulted[-len(asked):]] == asked
    assert all(c["regulator"] == INSPECTOR and c["answered"] for c in consulted[-len(asked):])
    assert all(c["actor"]["name"] == INSPECTOR and c["actor"]["role"] == "regulator" for c in consulted)


@pytest.mark.integration
@pytest.mark.req("R95.3")
@pytest.mark.parametrize(("path", "status", "message"), [
    ("/regulator/api/games/no-such-game", 404, "no network game no-such-game in the central server's journal"),
    ("/regulator/api/games/%3Cscript%3E", 400, "a game id is letters, digits and - _ . :, not '<script>'"),
    ("/regulator/api/movements?hall=hall-1%27%3B--", 400, "hall is letters, digits and - _ . : /, 1 to 64"),
    ("/regulator/api/movements?amount=5", 400, "movements are filtered by hall, terminal, player, game"),
    ("/regulator/api/movements?game=net-9", 404, "no network game net-9"),
    ("/regulator/api/records?limit=100000", 400, "limit is a whole number from 1 to 500, not '100000'"),
    ("/regulator/api/records?type=DROP%20TABLE", 400, "a record type is lower-case letters and _, not 'DROP TABLE'"),
    ("/regulator/api/operator/open_sale", 404, "no query 'operator/open_sale'"),
])
def test_a_malformed_or_unknown_query_is_refused_with_its_reason_and_journaled_as_unanswered(
    central: Consulted, path: str, status: int, message: str,
) -> None:
    answered, body = central.get(path)
    assert answered == status and not body["ok"] and body["error"]["message"].startswith(message)
    last = central.payloads("regulator_consulted")[-1]
    assert last["regulator"] == INSPECTOR and not last["answered"]


@pytest.mark.integration
@pytest.mark.req("R95.3", "R92.5")
@pytest.mark.parametrize("name", ["hall-1", "olga", "term-1"])
def test_another_certificate_of_the_authority_is_answered_nothing_and_nothing_is_journaled(
    central: Consulted, name: str,
) -> None:
    before = len(central.payloads("regulator_consulted"))
    status, body = central.get("/regulator/api/games", name)
    assert status == 403 and body["error"]["message"].startswith("the regulator's consultation answers a connection")
    assert len(central.payloads("regulator_consulted")) == before


@pytest.mark.integration
@pytest.mark.req("R95.3")
def test_no_certificate_gets_no_handshake(central: Consulted) -> None:
    with pytest.raises((ssl.SSLError, ConnectionError)):
        central.get("/regulator/api/games", None)


@pytest.mark.integration
@pytest.mark.req("R95.3")
@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
def test_the_consultation_is_read_only_and_changes_nothing(central: Consulted, method: str) -> None:
    before = central.rows("SELECT count(*), max(seq) FROM journal")
    status, body = central.get("/regulator/api/games", method=method)
    assert status == 405 and body["error"]["message"] == "the regulator's consultation is read-only: GET only"
    assert central.rows("SELECT count(*), max(seq) FROM journal") == before


def english_left(texts: list[str], language: str) -> list[str]:
    """The texts of ``texts`` that are a text of the central catalog in English, not ``language``'s: the
    whole text for a word ("Halls"), anywhere in it for a longer one (placeholders match anything). A text
    that is also the language's own word (Catalan "Sales" for halls) is not English left."""
    catalog = i18n.CATALOGS.catalog(language)
    own = {form for m in catalog if m.id for form in (m.string if isinstance(m.string, tuple) else (m.string,))}
    found = {f"{left.english!r} in {text!r}" for left in english_texts(catalog) for text in texts
             if text not in own and left.pattern.search(text)}
    return sorted(found)


@pytest.mark.integration
@pytest.mark.req("R95.3")
def test_the_regulators_page_in_a_real_browser_speaks_catalan_then_english_without_asking_again(
    central: Consulted, browser: Any,
) -> None:
    """The central server's language (Catalan, the default) on every text of the catalog, money by CLDR;
    the reader picks English and the answers shown are written again, not asked again."""
    cert, key = central.files(INSPECTOR)
    certificates = [{"origin": central.base, "certPath": str(cert), "keyPath": str(key)}]
    context = browser.new_context(ignore_https_errors=True, viewport={"width": 1920, "height": 1080},
                                  client_certificates=certificates)
    page = context.new_page()
    page.set_default_timeout(WAIT * 1000)
    page.goto(f"{central.base}/regulator")
    page.wait_for_selector("html[lang=ca]", state="attached")
    page.wait_for_selector("#games tbody tr.pick")
    page.locator('#games tbody tr[data-game="net-1"]').click()
    page.wait_for_selector("#game h3")
    drawn = [b["ball"] for b in central.payloads("central_ball_drawn")]
    assert page.inner_text("#game .balls-line").split() == [str(b) for b in drawn]
    assert page.text_content("#game-title") == "Partida net-1"
    page.wait_for_selector("#halls tbody tr")
    assert page.locator("#halls tbody tr").count() == 2
    assert page.locator("#terminals tbody tr").count() == 6
    cents = _money(central)["hall-2"]
    page.fill("#m-hall", "hall-2")
    page.click("#movements-form button")
    catalan = money(cents, "ca").replace("\xa0", " ")
    page.wait_for_function("(euros) => document.querySelector('#movements-total').textContent"
                           ".replace(/\\s/g, ' ').includes(`total: ${euros}`)", arg=catalan)
    page.wait_for_selector("#records tbody tr")
    # No English text of the catalog on the page, outside the journal's own data (its records); the movements
    # of money are said in Catalan too ("6 cartrons comprats, des del cartró 1").
    example = page.get_attribute("#type", "placeholder")  # names a record type, as the journal does
    texts = [t for t in page.evaluate(VISIBLE_TEXT, "#records tbody, #status") if t != example]
    assert not english_left(texts, "ca")
    words = page.locator("#movements tbody tr td:last-child").all_inner_texts()
    assert words and all(re.fullmatch(r"\d+ cartrons? comprats?, des del cartró \d+|(línia|bingo): cartró \d+ "
                                      r"guanyador a la bola \d+", w) for w in words), words
    assert page.get_attribute("#m-hall", "placeholder") == "qualsevol"
    shot(page, "central-regulator-consultation-ca")

    asked = len(central.payloads("regulator_consulted"))
    page.click(".language-chooser button[data-language=en]")
    page.wait_for_selector("html[lang=en]", state="attached")
    assert page.text_content("#game-title") == "Game net-1"
    assert f"total: {money(cents, 'en')}" in page.text_content("#movements-total")
    assert len(central.payloads("regulator_consulted")) == asked
    shot(page, "central-regulator-consultation")
    queries = [c["query"] for c in central.payloads("regulator_consulted")]
    assert "games/net-1" in queries and "movements?limit=200&hall=hall-2" in queries

    stranger = browser.new_context(ignore_https_errors=True).new_page()
    with pytest.raises(Exception):  # no certificate: the handshake itself fails
        stranger.goto(f"{central.base}/regulator/")
    stranger.context.close()
    context.close()


@pytest.mark.integration
def test_the_daily_and_yearly_pdfs_speak_the_central_servers_language_and_the_data_stays_english(
    central: Consulted,
) -> None:
    """The central server's Catalan (its default) on the PDF of the day's report and of the tax year;
    the JSON and the CSV keep the data's English words."""
    config = load_config(central.home / "central.toml")
    assert config.language == "ca"
    (ended,) = central.rows("SELECT time_ms FROM journal WHERE type = 'central_game_closed'")
    day = datetime.datetime.fromtimestamp(ended[0] / 1000, zoneinfo.ZoneInfo(config.timezone)).date().isoformat()
    data, pdf = central_daily_files(read_day(config, day), config.language)
    shown = [text.replace("\xa0", " ") for text in pdf_strings(pdf)]
    joined = " ".join(shown)
    for catalan in ("Informe diari", "servidor central", "Cartrons venuts", "Recaptació", "línia", "tancada"):
        assert catalan in joined, f"{catalan!r} not on the Catalan PDF: {shown[:40]}"
    assert not {"Cards sold", "Collection", "Prizes paid", "Daily report"} & set(shown)
    assert data.title.startswith("Daily report of") and "Cards sold" in {c.title for t in data.tables for c in t.columns}
    assert "cards_sold" in to_csv(data).decode()
    _, laid_out, yearly = read_year(config, int(day[:4]), day)
    assert "Exercici fiscal" in " ".join(pdf_strings(yearly)) and laid_out.title.startswith("Tax year")
