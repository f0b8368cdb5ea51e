"""The server's refusals to staff in the reader's language (docs/languages.md, "The server's
refusals"): a refusal made from a catalog's template keeps its English text as ``str(error)``
(journal, logs, CLI), and the command channel says it in the language the console reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server import i18n
from hall_server.hall.admission import DOCUMENT_TYPES, AdmissionError
from hall_server.hall.cashier import AMOUNT_REFUSED, CashierError, check_cents
from hall_server.hall.games import GameModuleError
from hall_server.hall.games.common import _whole
from hall_server.hall.games.payments import _card_label, _identity
from hall_server.hall.notices import DECISIONS
from hall_server.hall.session import SessionError
from hall_server.hall.virtual import VirtualError, check_terminal_id
from hall_server.statements import format_account_number
from hall_server.store.database import open_database
from protocol.errors import N_, Cents, DomainError, fill
from protocol.game import InvalidTransition, TraditionalGame
from protocol.money import format_cents
from server_kit.journal.sql import Journal
from server_kit.web.channel import ChannelError, CommandChannel, CommandRequest, parse_request
from tests.hall.conftest import result
from tests.hall.test_games import POT_RULES, SELLER, opened_hall
from tests.hall.test_opening_hours import ADMIN, FRIDAY_NOON_MS, hall_at
from tests.hall.test_session import CHIEF
from tests.network.test_annex_module import CHIEF as ANNEX_CHIEF
from tests.network.test_annex_module import SELLER as ANNEX_SELLER
from tests.network.test_annex_module import annex_hall, declared, item
from tests.terminals.conftest import CASHIER, DOOR, build_hall, prepare


def no_desk(name: str) -> CashierError:
    return CashierError(N_("there is no cash desk {desk!r}; the desks are {desks}"), desk=name, desks="desk-1, desk-2")


def test_the_english_text_is_the_template_filled_as_the_f_string_was() -> None:
    desk = "desk-9"
    assert str(no_desk(desk)) == f"there is no cash desk {desk!r}; the desks are desk-1, desk-2"
    short = CashierError(N_("account {account} holds {held}; it cannot pay out {amount}"),
                         account="1234 5678 9012", held=Cents(2_000), amount=Cents(123_456))
    assert str(short) == "account 1234 5678 9012 holds 20.00 EUR; it cannot pay out 1234.56 EUR"
    assert short.template == "account {account} holds {held}; it cannot pay out {amount}"
    assert str(SessionError(N_("the session is already open"))) == "the session is already open"
    plain = AdmissionError("a sentence with no template")
    assert str(plain) == "a sentence with no template" and plain.template is None


@pytest.mark.parametrize(("language", "said"), [
    ("ca", "no hi ha cap caixa 'desk-9'; les caixes són desk-1, desk-2"),
    ("es", "no hay ninguna caja 'desk-9'; las cajas son desk-1, desk-2"),
    ("fr", "il n'y a pas de caisse 'desk-9'\u00a0; les caisses sont desk-1, desk-2"),
    ("en", "there is no cash desk 'desk-9'; the desks are desk-1, desk-2"),
])
def test_a_refusal_is_said_in_each_language_of_the_hall(language: str, said: str) -> None:
    assert i18n.said(no_desk("desk-9"), language) == said


def test_amounts_are_written_by_cldr_in_the_readers_language() -> None:
    short = CashierError(N_("account {account} still holds {held}; cash it out before closing"),
                         account="1234 5678 9012", held=Cents(123_456))
    assert i18n.said(short, "ca") == "el compte 1234 5678 9012 encara té 1.234,56\u00a0€; pagueu-lo abans de tancar-lo"
    assert i18n.said(short, "fr").startswith("le compte 1234 5678 9012 contient encore 1\u202f234,56\u00a0€\u00a0;")
    assert i18n.said(short, "en") == str(short) == \
        "account 1234 5678 9012 still holds 1234.56 EUR; cash it out before closing"


@pytest.mark.parametrize("language", ["de", "", "CA", "ca_ES", "../ca", "{desk}"])
def test_a_language_the_hall_does_not_speak_reads_english(language: str) -> None:
    assert i18n.said(no_desk("desk-9"), language) == str(no_desk("desk-9"))


def test_a_param_is_data_never_a_template() -> None:
    """A value typed by a person holding braces is shown as typed, in English and in Catalan."""
    for typed in ("{x}", "{desks}", "{0}", "{desk.__class__}", "}{", "%s"):
        error = no_desk(typed)
        assert str(error) == f"there is no cash desk {typed!r}; the desks are desk-1, desk-2"
        assert i18n.said(error, "ca") == f"no hi ha cap caixa {typed!r}; les caixes són desk-1, desk-2"


def test_a_template_reads_its_params_and_nothing_else() -> None:
    """No attribute, index or positional field: a template (or a wrong translation) reaches no object."""
    for template in ("{desk.__class__}", "{desk[0]}", "{0}", "{}", "{other}"):
        with pytest.raises((KeyError, ValueError, IndexError)):
            fill(template, {"desk": "desk-1"})
    with pytest.raises(TypeError):
        DomainError("not a template {x}", x=1)  # params fill an N_() template only


def test_a_translation_that_does_not_fill_reads_english(monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def gettext(self, msgid: str) -> str:
            return "no hi ha cap caixa {desk.__class__} {missing}"

    monkeypatch.setattr(i18n, "translations", lambda language: Broken())
    assert i18n.said(no_desk("desk-9"), "ca") == str(no_desk("desk-9"))


def test_the_request_names_the_readers_language() -> None:
    request = parse_request('{"id": "r1", "command": "cash_out", "args": {}, "language": "ca"}')
    assert request.language == "ca"
    assert parse_request('{"id": "r1", "command": "cash_out", "args": {}}').language == ""
    for bad in ('1', '["ca"]', '"' + "c" * 17 + '"'):
        with pytest.raises(ChannelError) as refused:
            parse_request('{"id": "r1", "command": "cash_out", "args": {}, "language": ' + bad + '}')
        assert refused.value.code == "malformed"


def test_the_channel_answers_a_hall_refusal_in_the_requests_language() -> None:
    """The channel (server_kit) knows no catalog: the hall gives it ``said``; the refusal's English
    text is what the channel's own errors and the core see."""
    channel = CommandChannel(core=Any, say=i18n.said)  # the answer needs no core
    request = CommandRequest("r1", "cash_out", {}, "ca")
    refused = ChannelError("refused", str(no_desk("desk-9")), said=no_desk("desk-9"))
    assert str(refused) == "there is no cash desk 'desk-9'; the desks are desk-1, desk-2"
    assert channel.error_answer(request, refused) == {"id": "r1", "ok": False, "error": {
        "code": "refused", "message": "no hi ha cap caixa 'desk-9'; les caixes són desk-1, desk-2"}}
    own = ChannelError("unknown_command", "there is no command 'x'")
    assert channel.error_answer(request, own)["error"]["message"] == "there is no command 'x'"
    english = CommandChannel(core=Any)
    assert english.error_answer(request, refused)["error"]["message"] == str(refused)


@pytest.mark.parametrize(("what", "zero_allowed"), sorted(AMOUNT_REFUSED))
def test_an_amounts_refusal_reads_as_it_did_in_english_and_is_said_in_catalan(what: str, zero_allowed: bool) -> None:
    with pytest.raises(CashierError) as refused:
        check_cents(-5, what, zero_allowed=zero_allowed)
    assert str(refused.value) == f"the {what} must be {'zero or more' if zero_allowed else 'more than zero'}, not -5"
    said = i18n.said(refused.value, "ca")
    assert said != str(refused.value) and said.endswith(", no -5")


@pytest.mark.parametrize(("refuse", "english", "catalan"), [
    (lambda: check_terminal_id("kiosk 1!"),
     "a terminal id is 1-40 letters, digits, '-' or '_', not 'kiosk 1!'",
     "l'identificador d'un terminal té d'1 a 40 lletres, xifres, '-' o '_', no 'kiosk 1!'"),
    (lambda: _card_label("7/41"),
     "a card is named SERIES-NUMBER (7-41), not '7/41'",
     "un cartró s'indica SÈRIE-NÚMERO (7-41), no '7/41'"),
    (lambda: _whole("12", "a series"), "a series is a whole number, not '12'", "una sèrie és un nombre enter, no '12'"),
    # The admission desk's refusal, met while a prize's winner is identified, keeps its template.
    (lambda: _identity("", "Ana Puig"),
     "give the number of the identity document shown", "indiqueu el número del document d'identitat presentat"),
])
def test_the_games_and_terminals_refusals_read_as_before_and_are_said_in_catalan(
        refuse: Callable[[], object], english: str, catalan: str) -> None:
    with pytest.raises((GameModuleError, VirtualError)) as refused:
        refuse()
    assert str(refused.value) == english
    assert i18n.said(refused.value, "ca") == catalan
    assert i18n.said(refused.value, "en") == english


def test_a_value_named_by_a_phrase_without_a_sentence_of_its_own_stays_english() -> None:
    with pytest.raises(GameModuleError) as refused:
        _whole(1.5, "a widget")
    assert str(refused.value) == "a widget is a whole number, not 1.5"
    assert refused.value.template is None and i18n.said(refused.value, "ca") == str(refused.value)


def test_a_games_refusal_writes_its_amounts_by_cldr(tmp_path: Path) -> None:
    """A hall on a real journal refuses a reserve boost beyond the session's allowance (R91.7): English as
    the journal and the tests read it, Catalan and French with their amounts as CLDR writes them."""
    clock = Clock()
    clock.advance(1_780_000_000)
    journal = Journal(open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=tmp_path / "journal.head")
    hall = opened_hall(journal, clock, rules=POT_RULES)
    result(hall.games.announce_sale(SELLER, 9))
    with pytest.raises(GameModuleError) as refused:
        result(hall.games.announce_reserve_boost(CHIEF, 123_456, 0))
    assert str(refused.value) == (
        "a boost of 1234.56 EUR is refused: the session may add at most 0.00 EUR from the reserve (30% of the "
        "0.00 EUR it held at the session's start), its earlier games took 0.00 EUR, and the reserve holds 0.00 EUR "
        "(R91.7)")
    assert i18n.said(refused.value, "ca").startswith(
        "es rebutja un reforç de 1.234,56\u00a0€: la sessió pot afegir com a màxim 0,00\u00a0€ de la reserva "
        "(el 30\u00a0% dels 0,00\u00a0€ ")
    assert i18n.said(refused.value, "fr").startswith("un renfort de 1\u202f234,56\u00a0€ est refusé\u00a0:")


#: "cannot {doing} {when}" of the game's machine, each part a phrase of the catalogs.
MACHINE_SAID = {"ca": "no es pot treure una bola abans que s'obri la venda",
                "es": "no se puede sacar una bola antes de que se abra la venta",
                "fr": "on ne peut pas tirer une boule avant l'ouverture de la vente"}
#: The hall's "cannot draw a ball {when}".
HALL_SAID = {"ca": "no es pot treure una bola mentre la venda és oberta",
             "es": "no se puede sacar una bola mientras la venta está abierta",
             "fr": "on ne peut pas tirer une boule pendant que la vente est ouverte"}


def test_a_refusal_naming_the_games_state_is_said_whole_in_each_language(tmp_path: Path) -> None:
    """The game's state in a refusal (``while the sale is open``) is a phrase of the catalogs: the
    Catalan, Castilian and French consoles read the whole sentence, the journal and the CLI the English."""
    game = TraditionalGame("g1")
    with pytest.raises(InvalidTransition) as machine:
        game.draw_ball(7)
    assert str(machine.value) == "cannot draw a ball before the sale has opened"
    clock = Clock()
    clock.advance(1_780_000_000)
    journal = Journal(open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=tmp_path / "journal.head")
    hall = opened_hall(journal, clock)
    result(hall.games.announce_sale(SELLER, 9))
    with pytest.raises(InvalidTransition) as hall_refused:
        result(hall.games.draw_ball(SELLER))
    assert str(hall_refused.value) == "cannot draw a ball while the sale is open"
    for refused, said in ((machine.value, MACHINE_SAID), (hall_refused.value, HALL_SAID)):
        assert i18n.said(refused, "en") == str(refused)
        for language, text in said.items():
            assert i18n.said(refused, language) == text, language


def _journal(folder: Path) -> Journal:
    folder.mkdir()
    return Journal(open_database(f"sqlite:///{folder / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                   head=folder / "journal.head")


def test_the_annex_hours_pins_and_limits_refuse_as_they_did_in_english_and_are_said_in_catalan(
        tmp_path: Path) -> None:
    """The refusals of the hall-annex game, the opening hours' decision, the PIN lockouts and the
    responsible-play commands, made by the modules themselves on real journals: the English text is
    the one the f-strings wrote, the Catalan console reads the catalog's sentence with CLDR amounts."""
    clock = Clock()
    clock.advance(1_780_000_000)
    refused: list[tuple[DomainError, str, str]] = []

    def refusal(deferred: Any) -> DomainError:
        with pytest.raises(DomainError) as raised:
            result(deferred)
        return raised.value

    # The annex of a hall-annex game: the main hall opens it; a series of another price is not sold in it.
    annex = annex_hall(_journal(tmp_path / "annex"), clock)
    refused.append((refusal(annex.open_game(ANNEX_CHIEF)),
                    "only the main hall (hall-1) opens the hall-annex game; this hall is its annex",
                    "només la sala principal (hall-1) obre la partida sala-annex; aquesta sala n'és l'annexa"))
    result(annex.take(item(declared(annex) + 1, "opened", cents=100, line_bp=1500, bingo_bp=5500)))
    refused.append((refusal(annex.sell_cards(ANNEX_SELLER, 9, 1, 2)),
                    f"series 9 is worth {format_cents(200)}; the hall-annex game's card costs {format_cents(100)}",
                    "la sèrie 9 val 2,00\u00a0€; el cartró de la partida sala-annex costa 1,00\u00a0€"))
    result(annex.sell_cards(ANNEX_SELLER, 7, 1, 10))
    refused.append((refusal(annex.sell_cards(ANNEX_SELLER, 7, 12, 13)),
                    "card 11 of series 7 is the next one to sell (R82.5)",
                    "el cartró 11 de la sèrie 7 és el següent que cal vendre (R82.5)"))

    # The regulator's answer to a change of the opening hours: a word typed, an answer recorded already.
    (tmp_path / "hours").mkdir()
    _, hours, _ = hall_at(tmp_path / "hours", FRIDAY_NOON_MS)
    refused.append((refusal(hours.record_decision(ADMIN, "maybe", "CRAJ 2026/118")),
                    f"the regulator's answer is {' or '.join(DECISIONS)}, not 'maybe'",
                    "la resposta del regulador és aprovat o objectat, no 'maybe'"))
    result(hours.notify("every day 16:00-02:00"))
    result(hours.notify("mon-sat 17:00-01:00"))
    result(hours.record_decision(ADMIN, "approved", "CRAJ 2026/118"))
    refused.append((refusal(hours.record_decision(ADMIN, "objected", "CRAJ 2026/119")),
                    "the regulator's answer to the change to 'mon-sat 17:00-01:00' is recorded already: "
                    "approved (CRAJ 2026/118)",
                    "la resposta del regulador al canvi a 'mon-sat 17:00-01:00' ja està registrada: aprovat "
                    "(CRAJ 2026/118)"))

    # The cashier's desk: a PIN that is not locked, a daily limit out of bounds, a document's kind unknown.
    hall = build_hall(_journal(tmp_path / "hall"), clock)
    prepare(hall)
    number = hall.player("X1234567", credit=0)
    account = format_account_number(number)
    refused.append((refusal(hall.pins.clear(CASHIER, number)),
                    f"the PIN of account {account} is not locked",
                    f"el PIN del compte {account} no està bloquejat"))
    refused.append((refusal(hall.responsible.set_limit(CASHIER, number, -1)),
                    "the daily limit in cents is a whole number from 0 to 10000000, not -1",
                    "el límit diari en cèntims és un nombre enter de 0 a 10000000, no -1"))
    refused.append((refusal(hall.responsible.exclude_document(DOOR, "Joan Pla", "card", "X7654321", "1980-01-01", 30)),
                    f"the document's kind is one of {', '.join(DOCUMENT_TYPES)}, not 'card'",
                    "el tipus de document és un d'aquests: document d'identitat, passaport, permís de residència, "
                    "no 'card'"))

    for error, english, catalan in refused:
        assert error.template is not None, f"{english!r} is not a catalog sentence"
        assert str(error) == i18n.said(error, "en") == english
        assert i18n.said(error, "ca") == catalan
