"""The refusals of a card set's import, a series' or a library's registration and the card catalog
in the reader's language (docs/languages.md, "The refusals to staff"): ``str(error)`` is the English
text it always was (the CLI ``bingo cards``, the logs), ``hall_server.i18n.said`` says the catalog's
template in Catalan; a sentence wrapped around another English one stays English.  The card store
runs on a real SQLite database; the console's channel answers a refusal of the card catalog in the
language the request names."""

from __future__ import annotations

import io
import random
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import Engine
from twisted.internet.task import Clock

from hall_server import i18n
from hall_server.hall.admission import AdmissionModule
from hall_server.hall.cashier import CashierModule
from hall_server.hall.catalog import StoreCardCatalog
from hall_server.hall.games import GamesModule
from hall_server.hall.ledger import LedgerModule
from hall_server.hall.session import SessionModule
from hall_server.store import cards as store
from hall_server.store.cards import VIRTUAL_SERIES_NUMBER, CardStoreError
from hall_server.store.database import open_database
from protocol.cardfile import CardFileError, card_codes, read_card_file, write_card_file
from protocol.errors import DomainError
from protocol.strips import sample_strips
from server_kit.core import CommandCore, run_inline
from server_kit.journal.sql import Journal
from server_kit.web.channel import CommandChannel, CommandRequest, SeenRequests
from tests.hall.test_games import RULES, SELLER, ScriptedBalls
from tests.unit.test_cardfile import edit
from tests.hall.test_session import open_session

KEY = bytes(range(32))
CELLS = sample_strips(2, random.Random(32).randbytes).reshape(-1, 27)  # 12 cards, two whole strips


def card_file(codes: bool = True) -> str:
    ids = [f"V9-{k}" for k in range(1, len(CELLS) + 1)]
    strips = [f"S{(k - 1) // 6 + 1}" for k in range(1, len(CELLS) + 1)]
    out = io.StringIO()
    write_card_file(out, ids, strips, CELLS, card_codes(KEY, ids, CELLS) if codes else None)
    return out.getvalue()


def refused(text: str) -> CardFileError:
    with pytest.raises(CardFileError) as raised:
        read_card_file(io.StringIO(text), code_key=KEY)
    return raised.value


def swapped_cells(text: str, line: int, other: int) -> str:
    """``line``'s card given the numbers of ``other``'s (its id, strip and code kept)."""
    lines = text.splitlines()
    mine, theirs = lines[line - 1].split(","), lines[other - 1].split(",")
    lines[line - 1] = ",".join([*mine[:2], *theirs[2:29], *mine[29:]])
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(("mutate", "english", "catalan"), [
    (lambda t: "", "line 1: the file is empty; expected the header card_id,strip,r1c1,...",
     "línia 1: el fitxer és buit; s'esperava la capçalera card_id,strip,r1c1,..."),
    (lambda t: t.replace("card_id", "id", 1),
     "line 1: the header must be card_id,strip,r1c1,...,r3c9 with an optional code column",
     "línia 1: la capçalera ha de ser card_id,strip,r1c1,...,r3c9, amb una columna code opcional"),
    (lambda t: t + "V9-99,S3,1\n", "line 14: 3 fields, the header has 30",
     "línia 14: el nombre de camps és 3 i la capçalera en té 30"),
    (lambda t: edit(t, 2, 0, " "), "line 2: card_id is empty", "línia 2: card_id és buit"),
    (lambda t: edit(t, 3, 0, "V9-1"), "line 3: card_id 'V9-1' already appears on line 2",
     "línia 3: el card_id 'V9-1' ja apareix a la línia 2"),
    (lambda t: edit(t, 4, 5, "1.5"), "line 4: r1c4 is '1.5', not a number 0-90",
     "línia 4: la columna r1c4 val '1.5', no un número del 0 al 90"),
    (lambda t: edit(t, 4, 5, "95"), "line 4: r1c4 is 95, not a number 0-90",
     "línia 4: la columna r1c4 val 95, no un número del 0 al 90"),
    (lambda t: edit(t, 5, 29, "XYZ"), "line 5: code 'XYZ' is not lowercase hexadecimal",
     "línia 5: el codi 'XYZ' no és hexadecimal en minúscules"),
    (lambda t: t.splitlines()[0] + "\n", "the file holds no cards", "el fitxer no conté cap cartró"),
    (lambda t: edit(t, 8, 1, "S9"), "line 8: strip 'S9' has 1 cards, a strip has 6",
     "línia 8: la tira 'S9' té 1 cartrons; una tira en té 6"),
    (lambda t: appended(t, "X-1", "", 4), "line 14: card X-1 has the same numbers as card V9-3 on line 4",
     "línia 14: el cartró X-1 té els mateixos números que el cartró V9-3 de la línia 4"),
    (lambda t: edit(t, 3, 29, "0" * 16),
     "line 3: card V9-2: the security code does not match (a forged or altered card, or the wrong key)",
     "línia 3: cartró V9-2: el codi de seguretat no coincideix (un cartró falsificat o alterat, o una clau "
     "equivocada)"),
])
def test_a_bad_card_file_is_refused_in_english_as_before_and_said_in_catalan(
        mutate: Callable[[str], str], english: str, catalan: str) -> None:
    error = refused(mutate(card_file()))
    assert str(error) == i18n.said(error, "en") == english
    assert error.template is not None, f"{english!r} is not a catalog sentence"
    assert i18n.said(error, "ca") == catalan
    assert error.reason == english.removeprefix(f"line {error.line}: ")


def appended(text: str, card_id: str, strip: str, like: int) -> str:
    """``text`` with one more card: ``card_id`` in ``strip`` holding the numbers of line ``like``'s card."""
    fields = text.splitlines()[like - 1].split(",")
    return text + ",".join([card_id, strip, *fields[2:29], *([""] if len(fields) > 29 else [])]) + "\n"


def test_a_strips_refusals_are_said_in_catalan() -> None:
    error = refused(appended(card_file(codes=False), "V9-13", "S1", 2))
    assert str(error) == "line 14: strip 'S1' continues here, but its cards must be consecutive (it started on line 2)"
    assert i18n.said(error, "ca") == ("línia 14: la tira 'S1' continua aquí, però els seus cartrons han de ser "
                                      "consecutius (començava a la línia 2)")
    error = refused(swapped_cells(card_file(codes=False), 3, 2))  # card 2 of S1 holds card 1's numbers
    prefix = "line 2: strip 'S1' does not hold 1..90 once: "
    assert str(error).startswith(prefix) and str(error).endswith(" missing")
    numbers = str(error).removeprefix(prefix).removesuffix(" missing")
    assert numbers and all(n.isdigit() for n in numbers.split(", "))
    assert i18n.said(error, "ca") == ("línia 2: la tira 'S1' no conté cada número de l'1 al 90 una sola vegada; "
                                      f"hi falten: {numbers}")


def test_a_sentence_around_another_english_sentence_stays_english() -> None:
    """Python's CSV reader's and a card's own check's sentences are English: the line's refusal is too."""
    error = refused(card_file().splitlines()[0] + "\n" + "x" * 200_000 + "\n")
    assert str(error).startswith("line 2: not valid CSV: ")
    assert error.template is None and i18n.said(error, "ca") == str(error)
    bad = card_file(codes=False).splitlines()
    fields = bad[6].split(",")
    fields[2:11] = ["0"] * 9  # row 1 of card V9-6 empty
    bad[6] = ",".join(fields)
    error = refused("\n".join(bad) + "\n")
    assert str(error).startswith("line 7: card V9-6: row 1 holds ")
    assert error.template is None and i18n.said(error, "ca") == str(error)


@pytest.fixture
def engine(tmp_path: Path) -> Engine:
    engine = open_database(f"sqlite:///{tmp_path / 'cards.sqlite3'}")
    store.add_card_set(engine, "classic", CELLS, [f"S{k // 6 + 1}" for k in range(len(CELLS))], "imported")
    store.add_series(engine, "classic", 7, 150, None)
    return engine


def store_refusal(action: Callable[[], object]) -> CardStoreError:
    with pytest.raises(CardStoreError) as raised:
        action()
    return raised.value


def test_the_card_stores_refusals_read_as_before_and_are_said_in_catalan(engine: Engine) -> None:
    other = sample_strips(1, random.Random(5).randbytes).reshape(-1, 27)
    library = sample_strips(1, random.Random(6).randbytes).reshape(-1, 27)
    store.add_library(engine, "main", "V1", library, [""] * len(library))
    cases: list[tuple[Callable[[], object], str, str]] = [
        (lambda: store.add_card_set(engine, "classic", other, [""] * 6, "imported"),
         "a card set named 'classic' already exists", "ja existeix un joc de cartrons anomenat 'classic'"),
        (lambda: store.add_card_set(engine, "copy", np.concatenate([other, CELLS[3:4]]), [""] * 7, "imported"),
         "card 7 of the new set has the same numbers as card 4 of set 'classic'; no card may repeat a registered card",
         "el cartró 7 del joc nou té els mateixos números que el cartró 4 del joc 'classic'; cap cartró no pot "
         "repetir un cartró registrat"),
        (lambda: store.add_card_set(engine, "copy", library[2:3], [""], "imported"),
         "card 1 of the new set has the same numbers as virtual card V1-3; no card may repeat a registered card",
         "el cartró 1 del joc nou té els mateixos números que el cartró virtual V1-3; cap cartró no pot repetir un "
         "cartró registrat"),
        (lambda: store.add_card_set(engine, "twice", np.concatenate([other[:2], other[1:2]]), [""] * 3, "imported"),
         "card 3 of the new set has the same numbers as card 2 of the new set; no card may repeat a registered card",
         "el cartró 3 del joc nou té els mateixos números que el cartró 2 del joc nou; cap cartró no pot repetir un "
         "cartró registrat"),
        (lambda: store.add_library(engine, "second", "V2", np.concatenate([other[:5], CELLS[:1]]), [""] * 6),
         "V2-6 has the same numbers as card 1 of set 'classic'; no card may repeat a registered card",
         "el cartró V2-6 té els mateixos números que el cartró 1 del joc 'classic'; cap cartró no pot repetir un "
         "cartró registrat"),
        (lambda: store.add_library(engine, "main", "V3", other, [""] * 6),
         "a library named 'main' already exists", "ja existeix una biblioteca anomenada 'main'"),
        (lambda: store.add_library(engine, "second", "V1", other, [""] * 6),
         "virtual series 'V1' is already used by another library",
         "la sèrie virtual 'V1' ja la fa servir una altra biblioteca"),
        (lambda: store.add_series(engine, "classic", 0, 150, None),
         "a series number is a positive whole number, not 0", "un número de sèrie és un nombre enter positiu, no 0"),
        (lambda: store.add_series(engine, "classic", VIRTUAL_SERIES_NUMBER, 150, None),
         "series 9001 is the number the terminals' virtual cards are played under; give the paper series another "
         "number",
         "la sèrie 9001 és el número amb què es juguen els cartrons virtuals dels terminals; doneu un altre número a "
         "la sèrie de paper"),
        (lambda: store.add_series(engine, "classic", 8, 0, None),
         "a face value is at least 1 cent, not 0", "un valor facial és com a mínim d'1 cèntim, no 0"),
        (lambda: store.add_series(engine, "missing", 8, 150, None),
         "there is no card set named 'missing'", "no hi ha cap joc de cartrons anomenat 'missing'"),
        (lambda: store.add_series(engine, "classic", 8, 150, 13),
         "series 8 can print 1 to 12 cards of set 'classic', not 13",
         "la sèrie 8 pot imprimir d'1 a 12 cartrons del joc 'classic', no 13"),
        (lambda: store.add_series(engine, "classic", 7, 150, None),
         "series 7 already exists", "la sèrie 7 ja existeix"),
        (lambda: store.find_series(engine, 8), "there is no series 8", "no hi ha cap sèrie 8"),
        (lambda: store.library_cards(engine, "other"),
         "there is no library named 'other'", "no hi ha cap biblioteca anomenada 'other'"),
    ]
    before = store.count_cards(engine)
    for action, english, catalan in cases:
        error = store_refusal(action)
        assert error.template is not None, f"{english!r} is not a catalog sentence"
        assert str(error) == i18n.said(error, "en") == english
        assert i18n.said(error, "ca") == catalan
    assert store.count_cards(engine) == before, "a refused registration leaves the database as it was"


def test_the_console_hears_the_card_catalogs_refusal_in_its_language(engine: Engine, tmp_path: Path) -> None:
    """A seller announces a sale of a series nobody registered, through the console's channel on a hall
    whose card catalog is the database's: the Catalan console reads Catalan, the English one (and the
    refusal itself) the English text, and nothing is journaled."""
    clock = Clock()
    clock.advance(1_780_000_000)
    journal = Journal(open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=tmp_path / "journal.head")
    core = CommandCore(journal, clock, run_inline)
    session, ledger = SessionModule(core), LedgerModule(core)
    cashier = CashierModule(core, ledger, AdmissionModule(core, []), ["desk1"])
    GamesModule(core, session, ledger, StoreCardCatalog(engine), ScriptedBalls(), RULES, desks=cashier)
    open_session(session)
    channel, seen = CommandChannel(core, say=i18n.said), SeenRequests()
    written = core.seq

    def announce(request_id: str, language: str) -> dict[str, object]:
        answered: list[dict[str, object]] = []
        channel.submit(SELLER, CommandRequest(request_id, "announce_sale", {"series": 77}, language),
                       seen).addCallback(answered.append)
        (answer,) = answered
        return answer

    assert announce("r1", "ca") == {"id": "r1", "ok": False, "error": {
        "code": "refused", "message": "no hi ha cap sèrie 77; registreu-la abans de vendre-la"}}
    assert announce("r2", "en")["error"] == {
        "code": "refused", "message": "there is no series 77; register it before selling it"}
    assert core.seq == written, "a refused sale's announcement writes nothing"
    with pytest.raises(DomainError, match="^there is no series 77; register it before selling it$"):
        StoreCardCatalog(engine).series(77)
