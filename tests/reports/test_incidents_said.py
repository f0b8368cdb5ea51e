"""The texts the server composes for staff and for the minutes are said in the reader's language.

A journal's fault found by the verification, several faults of one check, and the minutes' incidents
(a refusal at the door, a failed terminal, a blower's fault, a step of the clock, a failed
verification) are written in English in the journal and the data files, and keep the catalog's
template and parts (``protocol.errors.Phrase``): a Catalan minutes book, daily report or console
says them in Catalan, while the English text stays exactly what it was.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from hall_server.reports.minutes import incident_entry
from hall_server.reports.printed import wording
from hall_server.store.database import open_database
from hall_server.verification import verify_system
from protocol.chain import Record
from protocol.errors import N_, Phrase, one_or_joined
from protocol.records.clock import ClockStepped
from protocol.records.game import BallDrawn
from server_kit.journal.sql import Journal
from server_kit.reports.document import DATA
from server_kit.verification import check_journal, write_manifest

CATALAN = wording("ca")


@pytest.fixture
def journal(tmp_path: Path) -> Journal:
    engine = open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}")
    return Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")


def record(type: str, /, **payload: Any) -> Record:
    return Record(7, 1_790_000_000_000, type, payload, "0" * 64, "1" * 64, "")


@pytest.mark.req("R84.1", "R92.5e")
def test_a_journal_altered_is_said_in_catalan_and_journaled_in_english(journal: Journal) -> None:
    journal.append(1_790_000_000_000, [BallDrawn("g1", 1, 1)])
    with journal.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE journal SET payload = replace(payload, '\"ball\":1', '\"ball\":2') WHERE seq = 1")
    fault = check_journal(journal)
    assert fault == "record 1: its content does not match its hash (altered)"
    assert isinstance(fault, Phrase)
    assert CATALAN.said(fault.said(), fault) == "registre 1: el seu contingut no correspon al seu hash (alterat)"
    assert DATA.said(fault.said(), "") == fault, "the English words are the journaled text"


@pytest.mark.req("R84.1", "R92.5e")
def test_a_journal_whose_head_file_is_gone_names_the_file_in_catalan(journal: Journal, tmp_path: Path) -> None:
    journal.append(1_790_000_000_000, [BallDrawn("g1", 1, 1)])
    journal.head.unlink()
    fault = check_journal(journal)
    assert isinstance(fault, Phrase) and str(journal.head) in fault
    said = CATALAN.said(fault.said(), fault)
    assert said.startswith(f"falta el fitxer de capçalera del diari {journal.head} però el diari té 1 registres"), said


@pytest.mark.req("R84.1")
def test_several_faults_of_one_check_are_each_said_in_the_readers_language() -> None:
    faults = [Phrase(N_("the {blower} blower is not connected"), blower="main"), "a text as written",
              Phrase(N_("the database schema is not at the newest migration"))]
    joined = one_or_joined(faults)
    assert joined == ("the main blower is not connected; a text as written; "
                      "the database schema is not at the newest migration"), "the journaled English is unchanged"
    assert isinstance(joined, Phrase)
    assert CATALAN.said(joined.said(), joined) == (
        "el bombo principal no està connectat; a text as written; l'esquema de la base de dades no és a la darrera "
        "migració")
    assert wording("fr").said(joined.said(), joined).startswith("le boulier principal n'est pas connecté ; ")
    assert one_or_joined([faults[1]]) == "a text as written" and one_or_joined([]) is None


@pytest.mark.req("R75.4", "R77.2")
@pytest.mark.parametrize(("made", "english", "catalan"), [
    (record("terminal_failed", type="terminal_failed", terminal_id="K3", game_id="g-2"),
     "terminal K3 failed in game g-2: its cards left the game (R96.3)",
     "el terminal K3 ha fallat a la partida g-2: els seus cartrons han sortit de la partida (R96.3)"),
    (record("entry_refused", document="Y1234567", name="Anna", ground="minor", reason="born 2010-01-01"),
     "under 18 (R75.1, R97.1): born 2010-01-01", "menor de 18 anys (R75.1, R97.1): born 2010-01-01"),
    (record("self_excluded", document="Y1234567", days=30, until="2027-01-05", terminal="K1"),
     "excluded from play for 30 days, until 2027-01-05, at terminal K1",
     "exclusió del joc durant 30 dies, fins al 2027-01-05, al terminal K1"),
    (record("blower_switched", to="reserve", **{"from": "main"}),
     "drawing from the reserve blower instead of the main", "s'extreu del bombo de reserva en lloc del principal"),
    (record(ClockStepped.type, step_ms=-2500, wall_ms=1, ahead_ms=2500),
     "the server's clock stepped back by 2.5 s; the records' times carry on 2.5 s ahead of it",
     "el rellotge del servidor ha retrocedit 2.5 s; les hores dels registres continuen 2.5 s per davant seu"),
])
def test_an_incident_of_the_minutes_is_said_in_catalan_and_written_in_english(
        made: Record, english: str, catalan: str) -> None:
    if made.type == ClockStepped.type:
        described = ClockStepped(step_ms=-2500, wall_ms=1, ahead_ms=2500).describe()
        text, said = str(described), described.said()
    else:
        entry = incident_entry(made, "rosa", "room_chief")
        assert entry is not None
        text, said = entry.text, entry.said
    assert text == english
    assert DATA.said(said, "") == english, "the data files keep the English text"
    assert CATALAN.said(said, text) == catalan


@pytest.mark.req("R84.1", "R77.2")
def test_a_failed_verification_in_the_minutes_says_each_checks_fault_from_its_template(journal: Journal,
                                                                                        tmp_path: Path) -> None:
    journal.append(1_790_000_000_000, [BallDrawn("g1", 1, 1)])
    with journal.engine.begin() as connection:
        connection.exec_driver_sql("UPDATE journal SET payload = replace(payload, '\"ball\":1', '\"ball\":2') WHERE seq = 1")
    manifest = tmp_path / "manifest.json"
    write_manifest(manifest)
    results = verify_system(journal, journal.engine, lambda: 1_790_000_000_000, manifest)
    said = {check: fault.said() for check, fault in results.items() if isinstance(fault, Phrase)}
    payload = {"date": "2026-12-06", "passed": False, "said": said,
               "results": {check: None if fault is None else str(fault) for check, fault in results.items()}}
    entry = incident_entry(record("system_verified", **payload), "ines", "administrator")
    assert entry is not None
    assert entry.text == ("for the session of 2026-12-06: journal: record 1: its content does not match its hash "
                          "(altered)")
    assert CATALAN.said(entry.said, entry.text) == (
        "per a la sessió del 2026-12-06: diari: registre 1: el seu contingut no correspon al seu hash (alterat)")


@pytest.mark.req("R75.4", "R77.2")
def test_the_visitors_an_incident_names_are_said_in_the_minutes_language() -> None:
    from hall_server.reports.minutes import MinutesBook

    entry = MinutesBook._book_entry(record("incident_recorded", number=1, description="una disputa", visitors=[12]),
                                    "rosa", "room_chief")
    assert entry.people == ("visitor 12",) and entry.text == "una disputa"
    assert [CATALAN.t(person) for person in entry.people] == ["visitant 12"]
    assert CATALAN.t("Maria Visitor") == "Maria Visitor", "a person's name reads as written"
