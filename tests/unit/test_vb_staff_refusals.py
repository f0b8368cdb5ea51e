"""The video bingo staff commands' refusals in the console's language (docs/languages.md, "The
refusals to staff"): made by the module itself on a real SQLite journal, each keeps its English text
as ``str(error)`` (journal, logs, CLI) and is said in Catalan from the console's catalog, amounts
as CLDR writes them; the command channel answers one in the request's language."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet import defer
from twisted.internet.task import Clock

from hall_server import i18n
from hall_server.hall.roles import Role
from hall_server.hall.videobingo import JackpotRule, VbRefused
from hall_server.store.database import open_database
from protocol.errors import N_
from server_kit.core import Actor
from server_kit.journal.sql import Journal
from server_kit.web.channel import CommandChannel, SeenRequests, parse_request
from tests.hall.conftest import result
from tests.videobingo.halls import CASHIER, CHIEF, Hall, build_hall, cash_device, config, count, insert_cash, machine, \
    player

SECOND_CASHIER = Actor("marc", Role.CASHIER)
NB = "\u00a0"


def _journal(folder: Path) -> Journal:
    folder.mkdir()
    return Journal(open_database(f"sqlite:///{folder / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                   head=folder / "journal.head")


def refusal(deferred: defer.Deferred[Any]) -> VbRefused:
    with pytest.raises(VbRefused) as raised:
        result(deferred)
    return raised.value


def test_the_staff_commands_refuse_as_they_did_in_english_and_are_said_in_catalan(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(1_780_000_000)
    hall = build_hall(_journal(tmp_path / "hall"), clock, config(cash_box_counters=2))
    result(hall.vb.enrol_station(CHIEF, "vb-1", 1))
    device = cash_device(hall, "vb-1")
    before = count(hall.journal)
    refused: list[tuple[VbRefused, str, str, str]] = []  # the refusal, its code, English, Catalan

    # Enrolling: a machine the hall does not have, a station it does not have, the same cash device again.
    refused.append((refusal(hall.vb.enrol_station(CHIEF, "vb-9", 1)), "unknown_machine",
                    "there is no video bingo machine 'vb-9'; the machines are vb-1",
                    "no hi ha cap màquina de videobingo 'vb-9'; les màquines són vb-1"))
    refused.append((refusal(hall.vb.enrol_station(CHIEF, "vb-1", 9)), "station",
                    "machine vb-1 has stations 1 to 2, not 9", "la màquina vb-1 té els llocs d'1 a 2, no 9"))
    refused.append((refusal(hall.vb.enrol_cash_device(CHIEF, "vb-1", device.public_key)), "cash_device",
                    f"machine vb-1's cash device {device.fingerprint} is enrolled already",
                    f"el dispositiu d'efectiu {device.fingerprint} de la màquina vb-1 ja està donat d'alta"))
    refused.append((refusal(hall.vb.enrol_cash_device(CHIEF, "vb-1", "not a key")), "cash_device",
                    "the cash device's public key is neither 64 hex digits nor a PEM public key",
                    "la clau pública del dispositiu d'efectiu no és ni 64 dígits hexadecimals ni una clau pública PEM"))
    refused.append((refusal(hall.vb.enrol_cash_device(CHIEF, "vb-1", " ")), "cash_device",
                    "give the cash device's Ed25519 public key: 64 hex digits, or its PEM block",
                    "doneu la clau pública Ed25519 del dispositiu d'efectiu: 64 dígits hexadecimals, o el seu bloc PEM"))

    # Retiring: no reason given; a station's credit still on the machine.
    refused.append((refusal(hall.vb.retire(CHIEF, "vb-1", "  ")), "reason",
                    "say why the machine is retired; it goes into the record",
                    "indiqueu per què es retira la màquina; el motiu queda al registre"))
    for n, amount in enumerate((50_000, 50_000, 23_456)):  # a note is at most 500.00 EUR
        insert_cash(hall, "vb-1", 1, amount, f"c{n}")
    before = count(hall.journal)
    refused.append((refusal(hall.vb.retire(CHIEF, "vb-1", "screen broken")), "credit",
                    "machine vb-1's stations hold 1234.56 EUR; cash it out first",
                    f"els llocs de la màquina vb-1 tenen 1.234,56{NB}€ de saldo; pagueu-lo abans"))

    # Cash at the desk: a station out of range, an amount out of range, a desk not open (the desk's sentence).
    refused.append((refusal(hall.vb.desk_credit_in(CASHIER, "vb-1", 3, 500, "desk1")), "station",
                    "machine vb-1 has stations 1 to 2, not 3", "la màquina vb-1 té els llocs d'1 a 2, no 3"))
    refused.append((refusal(hall.vb.desk_credit_in(CASHIER, "vb-1", 1, 0, "desk1")), "amount",
                    "a credit in is 1 to 1000000 cents, not 0", "una entrada de saldo és d'1 a 1000000 cèntims, no 0"))
    refused.append((refusal(hall.vb.desk_credit_in(CASHIER, "vb-1", 1, 500, "desk1")), "desk",
                    "cash desk desk1 is not open; open it with its float first",
                    "la caixa desk1 no està oberta; primer obriu-la amb el seu fons"))

    # Counting the cash box: a count that is no amount; the first counter again; two counts that differ.
    refused.append((refusal(hall.vb.count_cash_box(CASHIER, "vb-1", -1)), "amount",
                    "the counted cash is a whole number of cents, zero or more, not -1",
                    "l'efectiu comptat és un nombre enter de cèntims, zero o més, no -1"))
    assert result(hall.vb.count_cash_box(CASHIER, "vb-1", 123_000))["stands"] is False
    before = count(hall.journal)
    refused.append((refusal(hall.vb.count_cash_box(CASHIER, "vb-1", 123_000)), "second_counter",
                    "you gave the first count of machine vb-1's cash box; a second person counts it too",
                    "heu fet el primer recompte de la caixa de la màquina vb-1; l'ha de comptar també una segona "
                    "persona"))
    refused.append((refusal(hall.vb.count_cash_box(SECOND_CASHIER, "vb-1", 123_456)), "counts_differ",
                    "eva counted 1230.00 EUR in machine vb-1's cash box, you 1234.56 EUR: count it again together; "
                    "eva's count waits for a second that agrees",
                    f"eva ha comptat 1.230,00{NB}€ a la caixa de la màquina vb-1, i el vostre recompte és "
                    f"1.234,56{NB}€: torneu-la a comptar junts; el recompte fet per eva espera un segon recompte que hi "
                    "coincideixi"))

    assert count(hall.journal) == before, "a refusal journals nothing"
    for error, code, english, catalan in refused:
        assert error.template is not None, f"{english!r} is not a catalog sentence"
        assert error.code == code
        assert str(error) == i18n.said(error, "en") == english
        assert i18n.said(error, "ca") == catalan


def test_a_machines_jackpot_no_other_machine_can_take_is_said_with_its_amounts_by_cldr(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(1_780_000_000)
    rule = JackpotRule(500, "bingo", 30)
    hall = build_hall(_journal(tmp_path / "hall"), clock,
                      config(machine("vb-1", jackpot=rule), machine("vb-2", credit_cents=50, jackpot=rule)))
    result(hall.vb.enrol_station(CHIEF, "vb-1", 1))
    insert_cash(hall, "vb-1", 1, 1_000, "c1")
    for n in range(5):
        result(hall.vb.play("vb-1", 1, 4, False, f"p{n}"))
    result(hall.vb.sign_in("vb-1", 1, player(hall)))
    result(hall.vb.credit_out("vb-1", 1, "account", "o1"))
    assert hall.vb.jackpot("vb-1") == 5 * 80 * 500 // 10_000 == 20
    error = refusal(hall.vb.retire(CHIEF, "vb-1", "screen broken"))
    assert str(error) == ("machine vb-1's jackpot holds 0.20 EUR owed to players; no other machine of model 'classic' "
                          "at 0.20 EUR a credit can take it")
    assert i18n.said(error, "ca") == (
        f"el jackpot de la màquina vb-1 té 0,20{NB}€ que es deuen als jugadors; cap altra màquina del model "
        f"'classic' a 0,20{NB}€ el crèdit no el pot rebre")
    assert i18n.said(error, "fr").startswith(f"le jackpot de la machine vb-1 contient 0,20{NB}€ dus aux joueurs{NB};")


def test_an_unknown_machine_keeps_what_the_machines_screen_reads(tmp_path: Path) -> None:
    """Met by staff and by a machine: the console says the template, the machine's screen its reason
    (``vb.js``), which is sent with no params, as before."""
    clock = Clock()
    clock.advance(1_780_000_000)
    hall = build_hall(_journal(tmp_path / "hall"), clock, config())
    error = refusal(hall.vb.retire(CHIEF, "vb-7", "gone"))
    assert (error.code, error.reason, error.params) == ("unknown_machine", "unknown_machine", {})
    assert i18n.said(error, "es") == "no hay ninguna máquina de videobingo 'vb-7'; las máquinas son vb-1"
    none = build_hall(_journal(tmp_path / "empty"), clock, config(machine("vb-1")), recover=True)
    none.vb.machines.clear()
    empty = refusal(none.vb.enrol_station(CHIEF, "vb-1", 1))
    assert str(empty) == "there is no video bingo machine 'vb-1'; the machines are none"
    assert i18n.said(empty, "ca") == "no hi ha cap màquina de videobingo 'vb-1'; la sala no en té cap"


def test_a_template_is_filled_by_its_template_params_only() -> None:
    with pytest.raises(TypeError):
        VbRefused("station", "plain text {machine}", template_params={"machine": "vb-1"})
    made = VbRefused("retired", N_("machine {machine} is already retired"), template_params={"machine": "{x}"})
    assert str(made) == "machine {x} is already retired" and made.params == {} and made.reason == ""


def test_the_console_channel_answers_a_video_bingo_refusal_in_the_requests_language(tmp_path: Path) -> None:
    """The two counts that differ, asked by the console in Catalan and by a script with no language."""
    clock = Clock()
    clock.advance(1_780_000_000)
    hall = build_hall(_journal(tmp_path / "hall"), clock, config(cash_box_counters=2))
    channel = CommandChannel(hall.core, say=i18n.said)

    def staff(actor: Actor, language: str, **args: Any) -> dict[str, Any]:
        answers: list[Any] = []
        text = json.dumps({"id": f"{actor.name}-{count(hall.journal)}-{language}", "command": "vb_count_cash_box",
                           "args": args, "language": language})
        channel.submit(actor, parse_request(text), SeenRequests()).addBoth(answers.append)
        (answer,) = answers
        return answer

    assert staff(CASHIER, "ca", machine="vb-1", counted_cents=0)["ok"]
    catalan = staff(SECOND_CASHIER, "ca", machine="vb-1", counted_cents=500)
    assert catalan == {"id": catalan["id"], "ok": False, "error": {"code": "refused", "message": (
        f"eva ha comptat 0,00{NB}€ a la caixa de la màquina vb-1, i el vostre recompte és 5,00{NB}€: torneu-la a "
        "comptar junts; el recompte fet per eva espera un segon recompte que hi coincideixi")}}
    english = staff(SECOND_CASHIER, "", machine="vb-1", counted_cents=500)
    assert english["error"]["message"] == (
        "eva counted 0.00 EUR in machine vb-1's cash box, you 5.00 EUR: count it again together; eva's count waits "
        "for a second that agrees")
