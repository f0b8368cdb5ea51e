"""Admission: visitor records, the regulator's banned list, complaints and incidents (R75, R77.2, R81.b)."""

import hashlib
import re
from pathlib import Path

import pytest

from hall_server.hall.admission import (
    AdmissionError,
    AdmissionModule,
    BannedListError,
    StaffIdentity,
    normalize_document,
    read_banned_list_file,
)
from hall_server.hall.roles import Role
from server_kit.core import Actor, CommandCore, NotAllowed
from server_kit.journal.sql import Journal
from tests.hall.conftest import result

DOOR = Actor("lluis", Role.ADMISSION)
ADMIN = Actor("ines", Role.ADMINISTRATOR)
CHIEF = Actor("rui", Role.ROOM_CHIEF)
CASHIER = Actor("eva", Role.CASHIER)
STAFF = [StaffIdentity("Eva Puig", "X-1111111-A"), StaffIdentity("Rui Costa", "P 2222222")]
DAY = 24 * 3600

# The clock fixture stands at 2026-05-28 22:26 in Andorra.
BANNED = (
    "document,name,until\n"
    "B1000001,Joan Banned,\n"
    '"B1000002","Ferrer, Maria",2026-05-28\n'
    "B1000003,Past Ban,2026-05-27\n"
)


@pytest.fixture
def admission(core: CommandCore) -> AdmissionModule:
    return AdmissionModule(core, STAFF)


def with_list(admission: AdmissionModule, content: str = BANNED) -> AdmissionModule:
    result(admission.import_banned_list(ADMIN, content, "craj-2026-05-28.csv"))
    return admission


@pytest.mark.req("R75.1-3")
def test_visitors_get_consecutive_numbers_and_only_name_and_document_are_kept(
    admission: AdmissionModule, journal: Journal
) -> None:
    with_list(admission)
    first = result(admission.admit_visitor(DOOR, " Anna Vidal ", "12.345-678 a", "1980-01-01"))
    second = result(admission.admit_visitor(DOOR, "Pere Roca", "99887766", "1980-01-01"))
    assert [r.payload["number"] for r in first + second] == [1, 2]
    visitor = admission.visitor(1)
    assert (visitor.name, visitor.document, visitor.admitted_by) == ("Anna Vidal", "12345678A", "lluis")
    # The birth date read on the document is checked, never kept (R75.3): only that the check passed.
    assert set(first[0].payload) == {"number", "name", "document", "age_checked", "actor"}
    assert first[0].payload["age_checked"] is True and "1980" not in str(first[0].payload)
    assert journal.verify() == 3


@pytest.mark.req("R75.1-3")
def test_nobody_is_admitted_before_the_banned_list_is_imported(admission: AdmissionModule, journal: Journal) -> None:
    with pytest.raises(AdmissionError, match="banned list has not been imported"):
        result(admission.admit_visitor(DOOR, "Anna Vidal", "12345678A", "1980-01-01"))
    assert list(journal.records()) == []


@pytest.mark.req("R75.1-3")
def test_a_banned_person_is_refused_at_the_door_until_the_end_of_the_ban(
    admission: AdmissionModule, journal: Journal, clock
) -> None:
    with_list(admission)
    (refused,) = result(admission.admit_visitor(DOOR, "Joan", "b-1000001", "1980-01-01"))
    assert (refused.type, refused.payload["ground"]) == ("entry_refused", "banned")
    assert re.match(r"document B1000001 .* without end date \(R75.2\)", refused.payload["reason"])
    # Banned through 2026-05-28 inclusive: refused today...
    (refused,) = result(admission.admit_visitor(DOOR, "Maria Ferrer", "B1000002", "1980-01-01"))
    assert refused.type == "entry_refused" and "until 2026-05-28" in refused.payload["reason"]
    # ...a ban that ended yesterday no longer applies.
    (admitted,) = result(admission.admit_visitor(DOOR, "Past Ban", "B1000003", "1980-01-01"))
    assert admitted.type == "visitor_admitted" and admitted.payload["number"] == 1
    assert [r.type for r in journal.records()] == ["banned_list_imported", "entry_refused", "entry_refused",
                                                    "visitor_admitted"]
    clock.advance(DAY)  # 2026-05-29: the dated ban is over, the open-ended one is not
    result(admission.admit_visitor(DOOR, "Maria Ferrer", "B1000002", "1980-01-01"))
    assert admission.is_banned("B1000001", admission.today(admission.core.now_ms()))
    assert not admission.is_banned("B1000002", admission.today(admission.core.now_ms()))


@pytest.mark.req("R75.1-3")
def test_the_import_records_the_files_sha256_and_row_count_and_replaces_the_whole_list(
    admission: AdmissionModule, journal: Journal
) -> None:
    (record,) = result(admission.import_banned_list(ADMIN, BANNED, "craj-2026-05-28.csv"))
    assert record.type == "banned_list_imported"
    assert record.payload["sha256"] == hashlib.sha256(BANNED.encode()).hexdigest()
    assert record.payload["rows"] == 3 and record.payload["replaces"] is None
    assert admission.ban_of("B1000002").name == "Ferrer, Maria"
    newer = "document,name,until\nB2000001,New Person,\n"
    (second,) = result(admission.import_banned_list(ADMIN, newer, "craj-2026-05-29.csv"))
    assert second.payload["replaces"] == record.payload["sha256"]
    assert admission.ban_of("B1000001") is None, "a new list replaces the old one entirely"
    assert admission.ban_of("B2000001") is not None
    assert admission.state.banned_list.rows == 1 and admission.state.banned_list.seq == second.seq


@pytest.mark.req("R75.1-3")
def test_importing_the_list_in_force_again_is_refused(admission: AdmissionModule, journal: Journal) -> None:
    with_list(admission)
    with pytest.raises(AdmissionError, match="already the list in force"):
        with_list(admission)
    assert len(list(journal.records())) == 1


@pytest.mark.req("R75.1-3")
def test_a_file_on_disk_hashes_as_sha256sum_does_with_bom_crlf_and_quoted_commas(
    admission: AdmissionModule, tmp_path: Path
) -> None:
    data = '\ufeffDocument,Name,Until\r\n"C 300-1","Soler, Jordi",2027-01-31\r\n\r\nC3002,Rosa Mas,\r\n'.encode()
    path = tmp_path / "banned.csv"
    path.write_bytes(data)
    (record,) = result(admission.import_banned_list(ADMIN, read_banned_list_file(str(path)), path.name))
    assert record.payload["sha256"] == hashlib.sha256(data).hexdigest()
    assert record.payload["people"] == [["C3001", "Soler, Jordi", "2027-01-31"], ["C3002", "Rosa Mas", None]]


def test_a_file_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "banned.csv"
    path.write_bytes("document,name,until\nA1,Jos\xe9,\n".encode("latin-1"))
    with pytest.raises(BannedListError, match="not UTF-8"):
        read_banned_list_file(str(path))


@pytest.mark.req("R75.1-3")
@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "the file is empty"),
        ("document,name,until\n", "lists nobody"),
        ("doc,name,until\nA1,X,\n", "line 1: the header must be document,name,until"),
        ("document,name,until\nA1,X,\nA2,Y\n", "line 3: expected 3 fields"),
        ("document,name,until\nA1,X,,extra\n", "line 2: expected 3 fields"),
        ("document,name,until\nA1,X,31/12/2026\n", "line 2: until '31/12/2026' is not a date YYYY-MM-DD"),
        ("document,name,until\nA1,X,2026-02-30\n", "line 2: until '2026-02-30' is not a real date"),
        ("document,name,until\nA1,X,\n\nA2,Y,\na-1,Z,\n", "line 5: document A1 is already listed on line 2"),
        ("document,name,until\n,X,\n", "line 2: give the number of the identity document"),
        ("document,name,until\nA#1,X,\n", "line 2: an identity document number has letters and digits only"),
        ("document,name,until\nA1,,\n", "line 2: document A1 has no name"),
        ('document,name,until\nA1,"X\n', "not valid CSV"),
    ],
)
def test_a_malformed_file_names_its_line_and_imports_nothing(
    admission: AdmissionModule, journal: Journal, content: str, message: str
) -> None:
    with pytest.raises(BannedListError, match=message) as caught:
        result(admission.import_banned_list(ADMIN, content, "bad.csv"))
    assert "nothing was imported" in str(caught.value)
    assert list(journal.records()) == []
    assert admission.state.banned_list is None


def test_a_bad_row_after_good_ones_imports_none_of_them(admission: AdmissionModule) -> None:
    with_list(admission)
    with pytest.raises(BannedListError, match="line 3"):
        result(admission.import_banned_list(ADMIN, "document,name,until\nZ1,Zed,\nZ2,Zed,never\n", "b.csv"))
    assert admission.ban_of("Z1") is None and admission.ban_of("B1000001") is not None


@pytest.mark.req("R81.b")
def test_staff_are_known_by_their_documents_in_normal_form(admission: AdmissionModule) -> None:
    assert admission.is_staff("x 1111111 a") and admission.is_staff("P2222222")
    assert not admission.is_staff("P2222223")
    assert normalize_document(" ab-12.3/4 ") == "AB1234"


@pytest.mark.req("R75.5")
def test_the_complaints_book_numbers_each_complaint_as_given(admission: AdmissionModule) -> None:
    result(admission.record_complaint(DOOR, "Anna Vidal", "The queue at the door took 40 minutes."))
    result(admission.record_complaint(CHIEF, "Pere Roca", "Ball 7 was announced twice."))
    assert [(c.number, c.complainant, c.recorded_by) for c in admission.state.complaints] == [
        (1, "Anna Vidal", "lluis"),
        (2, "Pere Roca", "rui"),
    ]
    with pytest.raises(AdmissionError, match="give the complaint's text"):
        result(admission.record_complaint(DOOR, "Anna Vidal", "   "))


@pytest.mark.req("R75.4", "R77.2")
def test_incidents_are_recorded_for_the_minutes_with_the_visitors_involved(admission: AdmissionModule) -> None:
    with_list(admission)
    result(admission.admit_visitor(DOOR, "Anna Vidal", "12345678A", "1980-01-01"))
    result(admission.record_incident(DOOR, "Banned person B1000001 insisted on entering; left.", []))
    result(admission.record_incident(CHIEF, "Visitor 1 argued with a seller.", [1]))
    first, second = admission.state.incidents
    assert (first.number, first.visitors, first.role) == (1, (), "admission")
    assert (second.number, second.visitors, second.recorded_by, second.role) == (2, (1,), "rui", "room_chief")
    with pytest.raises(AdmissionError, match="there is no visitor record 9"):
        result(admission.record_incident(CHIEF, "Unknown visitor.", [9]))
    with pytest.raises(AdmissionError, match="named twice"):
        result(admission.record_incident(CHIEF, "Twice.", [1, 1]))
    with pytest.raises(AdmissionError, match="whole number"):
        result(admission.record_incident(CHIEF, "Bool.", [True]))
    assert len(admission.state.incidents) == 2


@pytest.mark.req("R80")
@pytest.mark.parametrize(
    ("actor", "command", "args"),
    [
        (CASHIER, "admit_visitor", ("Anna", "12345678A", "1980-01-01")),
        (CHIEF, "admit_visitor", ("Anna", "12345678A", "1980-01-01")),
        (DOOR, "import_banned_list", (BANNED, "x.csv")),
        (CASHIER, "record_incident", ("Something.", [])),
        (Actor("ana", Role.SELLER_CALLER), "record_complaint", ("Anna", "Too loud.")),
    ],
)
def test_each_desk_gives_only_its_own_commands(
    admission: AdmissionModule, journal: Journal, actor: Actor, command: str, args: tuple
) -> None:
    handler = admission.core.commands[command].handler
    with pytest.raises(NotAllowed, match=f"may not {command.replace('_', ' ')}"):
        result(handler(actor, *args))
    assert list(journal.records()) == []


@pytest.mark.req("R75.1-3")
@pytest.mark.parametrize(
    ("name", "document", "message"),
    [
        ("", "12345678A", "give the visitor's name"),
        ("Anna", "", "give the number of the identity document"),
        ("Anna", "12 34 ?", "letters and digits only"),
        ("Anna", 12345678, "is text"),
        ("Anna", "A" * 33, "at most 32"),
    ],
)
def test_a_visitor_record_needs_a_name_and_a_document_number(
    admission: AdmissionModule, journal: Journal, name: str, document: object, message: str
) -> None:
    with_list(admission)
    with pytest.raises(AdmissionError, match=message):
        result(admission.admit_visitor(DOOR, name, document, "1980-01-01"))
    assert len(list(journal.records())) == 1


@pytest.mark.req("R96.4", "R77.3")
def test_the_admission_state_rebuilds_from_the_journal(admission: AdmissionModule, journal: Journal, clock) -> None:
    with_list(admission)
    result(admission.admit_visitor(DOOR, "Anna Vidal", "12345678A", "1980-01-01"))
    result(admission.record_complaint(DOOR, "Anna Vidal", "Cold room."))
    result(admission.record_incident(CHIEF, "Spilled drink at table 4.", [1]))
    again = AdmissionModule(CommandCore(journal, clock, admission.core.run_blocking), STAFF)
    assert again.core.recover() == 4
    assert again.state == admission.state


def test_desk_admission_refusal_text_is_not_doubled(admission: AdmissionModule, journal: Journal) -> None:
    """The door's record keeps the ground alone: the desk and the minutes say "Entry refused to
    <name>: <ground>" once, not "entry refused: entry refused: ..."."""
    with_list(admission)
    refusals = [
        result(admission.admit_visitor(DOOR, "Joan", "B1000001", "1980-01-01"))[0],
        result(admission.admit_visitor(DOOR, "Nen", "12345678A", "2015-01-01"))[0],
    ]
    for refused in refusals:
        assert refused.type == "entry_refused"
        assert "refused" not in refused.payload["reason"].lower(), refused.payload["reason"]
    assert refusals[1].payload["reason"].startswith("the visitor is ")


@pytest.mark.req("R81.b")
def test_desk_generated_staff_have_documents_and_the_door_refuses_them(core: CommandCore, tmp_path: Path) -> None:
    """Every login the generated configuration holds carries an identity document, and the door
    refuses a member of staff's document as a visitor's, saying why."""
    from hall_server.config import DEFAULT_STAFF, default_config_text, hash_password, load_config, placeholder_document

    path = tmp_path / "hall.toml"
    password_hash = hash_password("correct horse")
    path.write_text(default_config_text("Hall", [(n, r, password_hash) for n, r in DEFAULT_STAFF]))
    staff = load_config(path).staff
    documents = [m.document for m in staff]
    assert all(documents) and len(set(documents)) == len(staff) == len(DEFAULT_STAFF), documents
    door = AdmissionModule(core, [StaffIdentity(m.name, m.document) for m in staff if m.document])
    with_list(door)
    seller = next(m for m in staff if m.role == Role.SELLER_CALLER)
    assert seller.document == placeholder_document(4)
    (refused,) = result(door.admit_visitor(DOOR, "Sam Seller", seller.document.lower(), "1980-01-01"))
    assert (refused.type, refused.payload["ground"]) == ("entry_refused", "staff")
    assert refused.payload["reason"] == (f"document {seller.document} belongs to sam, a member of this hall's staff; "
                                         "staff may not play (R81.b), so a member of staff is not admitted as a visitor")
    (admitted,) = result(door.admit_visitor(DOOR, "Anna Vidal", "12345678A", "1980-01-01"))
    assert admitted.type == "visitor_admitted"
