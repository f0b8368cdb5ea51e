"""The video bingo machine's screen in the hall's Catalan, in a real headless browser (Debian's
chromium driven by Playwright) against a real ``bingo hall serve`` process over TLS whose
``[hall] language`` is ``ca``: the hall's refusal of a play with too little credit, journaled in
English, is said in Catalan with the amounts in CLDR form (from its reason and params); the
play's stake line, the win line, the paytable, the masked account and the sign-out are Catalan
too, and no English text of the catalog is left on the page."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hall_server import i18n
from hall_server.config import DEFAULT_HELP, DEFAULT_WARNINGS
from tests.support.waiting import WAIT
from tests.terminals.test_kiosk_browser import Staff, player
from tests.videobingo.paytables import EXAMPLES
from tests.videobingo.test_vb_power_loss import VIDEOBINGO, balances, journal_records
from tests.videobingo.test_vb_screen_browser import LANDSCAPE, MACHINE, screen
from tests.web.conftest import HallProcess
from tests.web.test_console_browser import browser, shot  # noqa: F401 (fixtures)
from tests.web.test_languages_browser import english_on

pytestmark = pytest.mark.integration

NBSP = "\xa0"


@pytest.fixture(scope="module")
def catalan_machine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[HallProcess, str, str]]:
    """A hall speaking Catalan with one machine, its session open, a player with 20 € on the account and
    station 1 enrolled."""
    hall = HallProcess(Path(tmp_path_factory.mktemp("catalan-machine")), language="ca")
    with open(hall.config, "a") as config:
        config.write(VIDEOBINGO.format(paytable=EXAMPLES / "vb-classic-3x5.json"))
    hall.start()
    try:
        staff = Staff(hall)
        staff.open_the_session()
        account = player(staff, "44444444D", 2_000)
        token = staff("rosa", "enrol_vb_station", machine=MACHINE, station=1)["result"]["token"]
        yield hall, account, token
    finally:
        hall.stop()


def test_a_catalan_machine_says_the_halls_refusal_and_the_stake_in_catalan(
    catalan_machine: tuple[HallProcess, str, str], browser: Any
) -> None:
    hall, account, token = catalan_machine
    page = screen(browser, hall, LANDSCAPE, 1, token)
    assert page.evaluate("document.documentElement.lang") == "ca"
    assert page.inner_text("#link") == "connectat"
    # The paytable: its patterns' names and its return as Catalan writes them.
    assert page.inner_text("#paytable tr[data-pattern='top and middle lines'] td:first-child") == "línies superior i del mig"
    assert page.inner_text("#rtp") == f"30 boles de 60 · retorn 83,55 % · 1 crèdit = 0,20{NBSP}€ per cartró"
    page.fill("#account", account)
    page.fill("#pin", "4821")
    page.press("#pin", "Enter")
    page.wait_for_selector("#account-credit:not([hidden])")
    assert page.inner_text("#who") == f"Compte •••• {account[-4:]}"  # never the whole number on a public machine
    # R97.2: the operator's warnings in turn and a help page, the defaults in the player's language.
    assert page.inner_text("#warning") in {i18n.translate("ca", w) for w in DEFAULT_WARNINGS}
    page.click("#help")
    page.wait_for_selector("#help-panel:not([hidden])")
    assert page.inner_text("#help-title") == "Jugueu amb responsabilitat"
    assert page.inner_text("#help-text").startswith(i18n.translate("ca", DEFAULT_HELP)[:40])
    shot(page, "vb-ca-help")
    page.click("#help-close")
    page.wait_for_selector("#help-panel", state="hidden")

    # A play with no credit: the hall refuses it (in English, in its journal); the screen says it in Catalan.
    page.click("#counts .count[data-count='1']")
    assert page.inner_text("#play") == f"Jugar 1 cartró · 0,20{NBSP}€"
    page.click("#play")
    page.wait_for_selector("#message:not(.ok):not([hidden])")
    assert page.inner_text("#message") == (
        f"Saldo insuficient: 1 cartró costa 0,20{NBSP}€ i el saldo és 0,00{NBSP}€. Afegiu saldo o jugueu menys cartrons.")
    assert english_on(page, "ca") == []
    shot(page, "vb-ca-refused")
    assert not [r for r in journal_records(hall.folder) if r["type"] == "vb_play"]

    page.wait_for_selector("#play:enabled")
    page.click("#account-credit .take[data-cents='1000']")
    page.wait_for_selector(f"#credit:text('10,00{NBSP}€')")
    assert page.inner_text("#credits") == "50 crèdits"
    page.click("#counts .count[data-count='2']")
    assert page.inner_text("#play") == f"Jugar 2 cartrons · 0,40{NBSP}€"
    page.click("#play")
    page.wait_for_selector("#win.done")
    (play,) = [r["payload"] for r in journal_records(hall.folder) if r["type"] == "vb_play"]
    won = sum(r["credits"] for r in play["results"])
    win = page.inner_text("#win")
    if play["won_cents"]:
        assert win.startswith(f"Premi {won} crèdit"), win
    else:  # the stake line: the credits and the euros staked
        assert win == f"Sense premi · aposta 2 crèdits (0,40{NBSP}€)", win
    assert english_on(page, "ca") == []
    shot(page, "vb-ca-played")

    page.click("#sign-out")
    page.wait_for_selector("#sign-in-form:not([hidden])")
    credit = 1_000 - play["stake_cents"] + play["won_cents"] + sum(j["cents"] for j in play["jackpots"])
    euros = f"{credit // 100},{credit % 100:02d}{NBSP}€"
    assert page.inner_text("#message") == f"Heu tancat la sessió. El vostre saldo de {euros} ha tornat al vostre compte."
    assert balances(journal_records(hall.folder)).get(f"vbcredit:{MACHINE}.1", 0) == 0
    shot(page, "vb-ca-signed-out")
