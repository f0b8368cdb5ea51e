"""The cashier: accounts, loads, cash-outs, statements, desk reconciliation (R92.5d, R93, R78, R81.b)."""

import hashlib
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from twisted.internet.task import Clock

from hall_server.hall.admission import AdmissionError, AdmissionModule, StaffIdentity
from hall_server.hall.cashier import (
    CashierError,
    CashierModule,
    luhn_check_digit,
    normalize_account_number,
    random_account_number,
)
from hall_server.hall.ledger import LedgerModule, posting_records
from hall_server.hall.roles import Role
from hall_server.statements import format_account_number, ticket_qr
from hall_server.store.database import open_database
from protocol.errors import DomainError
from protocol.ledger import Overdraft, Posting, Reference
from server_kit.core import Actor, CommandCore, NotAllowed, run_inline
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.reports.conftest import pdf_strings

CASHIER = Actor("eva", Role.CASHIER)
DOOR = Actor("lluis", Role.ADMISSION)
ADMIN = Actor("ines", Role.ADMINISTRATOR)
SELLER = Actor("ana", Role.SELLER_CALLER)
STAFF = [StaffIdentity("Marc Sala", "S7777777")]
BANNED = "document,name,until\nB1000001,Joan Banned,\n"
DAY = 24 * 3600


@dataclass
class Hall:
    core: CommandCore
    ledger: LedgerModule
    admission: AdmissionModule
    cashier: CashierModule


def build(journal: Journal, clock: Clock) -> Hall:
    core = CommandCore(journal, clock, run_inline)
    ledger = LedgerModule(core)
    admission = AdmissionModule(core, STAFF)
    cashier = CashierModule(core, ledger, admission, ["desk1", "desk2"], hall_name="Sala Andorra")
    return Hall(core, ledger, admission, cashier)


@pytest.fixture
def hall(journal: Journal, clock: Clock) -> Hall:
    hall = build(journal, clock)
    result(hall.admission.import_banned_list(ADMIN, BANNED, "craj.csv"))
    result(hall.cashier.open_desk(CASHIER, "desk1", 20_000))
    return hall


def admit(hall: Hall, document: str = "12345678A", name: str = "Anna Vidal") -> int:
    (record,) = result(hall.admission.admit_visitor(DOOR, name, document, "1980-01-01"))
    return record.payload["number"]


def open_account(hall: Hall, document: str = "12345678A", pin: str = "4821", medium: str = "ticket") -> str:
    (record,) = result(hall.cashier.open_account(CASHIER, admit(hall, document), medium, pin))
    return record.payload["account"]


def count(journal: Journal) -> int:
    return len(list(journal.records()))


@pytest.mark.req("R92.5", "R93.2-4", "R93.14")
def test_a_player_loads_credit_plays_it_down_and_cashes_out_the_rest(hall: Hall) -> None:
    number = open_account(hall)
    result(hall.cashier.load_credit(CASHIER, number, 5_000, "desk1"))
    assert hall.cashier.balance(number) == 5_000
    assert hall.ledger.balance("cash:desk1") == 25_000
    result(hall.cashier.cash_out(CASHIER, format_account_number(number), 3_250, "desk1", "cash", ""))
    assert hall.cashier.balance(number) == 1_750
    assert hall.ledger.balance("cash:desk1") == 21_750
    result(hall.cashier.cash_out(CASHIER, number, 1_750, "desk1", "cash", ""))
    result(hall.cashier.close_account(CASHIER, number))
    assert hall.cashier.account(number).closed
    assert hall.ledger.ledger.total() == 0


def test_account_numbers_carry_a_luhn_check_digit_so_typos_are_caught(hall: Hall) -> None:
    number = open_account(hall)
    assert len(number) == 12 and number.isdigit()
    assert luhn_check_digit(number[:-1]) == number[-1]
    assert luhn_check_digit("7992739871") == "3"  # the textbook example
    assert normalize_account_number(f" {number[:4]}-{number[4:8]} {number[8:]}".strip()) == number
    typo = number[:-2] + str((int(number[-2]) + 1) % 10) + number[-1]
    with pytest.raises(CashierError, match="mistyped: its check digit is wrong"):
        hall.cashier.balance(typo)
    other = random_account_number()
    while other == number:
        other = random_account_number()
    with pytest.raises(CashierError, match=f"there is no account {format_account_number(other)}"):
        hall.cashier.balance(other)
    with pytest.raises(CashierError, match="12 digits"):
        hall.cashier.balance("1234")


@pytest.mark.req("R92.5")
def test_the_pin_is_kept_only_as_a_salted_scrypt_hash(hall: Hall, journal: Journal) -> None:
    number = open_account(hall, pin="480215")
    record = [r for r in journal.records() if r.type == "player_account_opened"][0]
    stored = record.payload["pin_hash"]
    assert "480215" not in str(record.payload)
    scheme, n, r, p, salt, digest = stored.split("$")
    assert scheme == "scrypt" and len(bytes.fromhex(salt)) == 16
    expected = hashlib.scrypt(b"480215", salt=bytes.fromhex(salt), n=int(n), r=int(r), p=int(p), dklen=32)
    assert digest == expected.hex()
    assert hall.cashier.verify_pin(number, "480215")
    assert not hall.cashier.verify_pin(number, "480216")
    second = open_account(hall, document="87654321B", pin="480215")
    other = hall.cashier.account(second).pin_hash
    assert other != stored, "the same PIN hashes differently under another salt"


@pytest.mark.req("R92.5")
@pytest.mark.parametrize("pin", ["123", "123456789", "12a4", "", " 1234", 1234, "١٢٣٤"])
def test_a_pin_is_four_to_eight_digits(hall: Hall, journal: Journal, pin: object) -> None:
    visitor = admit(hall)
    before = count(journal)
    with pytest.raises(CashierError, match="a PIN is 4 to 8 digits"):
        result(hall.cashier.open_account(CASHIER, visitor, "ticket", pin))
    assert count(journal) == before


@pytest.mark.req("R75.1-3")
def test_no_account_for_a_person_on_the_banned_list_even_if_banned_after_entering(hall: Hall, journal: Journal) -> None:
    visitor = admit(hall, "C5555555")
    newer = BANNED + "C5555555,Late Ban,\n"
    result(hall.admission.import_banned_list(ADMIN, newer, "craj-update.csv"))
    before = count(journal)
    with pytest.raises(AdmissionError, match=r"opening an account refused: document C5555555 .* banned list"):
        result(hall.cashier.open_account(CASHIER, visitor, "card", "4821"))
    assert count(journal) == before
    assert hall.cashier.state.accounts == {}


@pytest.mark.req("R81.b")
def test_no_account_for_a_member_of_staff(journal: Journal, clock: Clock) -> None:
    # The door refuses a member of staff as a visitor; one admitted before joining the staff
    # (the hall restarted with the new staff list) still gets no account at the cashier.
    core = CommandCore(journal, clock, run_inline)
    before_hiring = AdmissionModule(core, [])
    result(before_hiring.import_banned_list(ADMIN, BANNED, "craj.csv"))
    (admitted,) = result(before_hiring.admit_visitor(DOOR, "Marc Sala", "s-7777777", "1980-01-01"))
    hall = build(journal, clock)
    hall.core.recover()
    (refused,) = result(hall.admission.admit_visitor(DOOR, "Marc Sala", "s-7777777", "1980-01-01"))
    assert (refused.type, refused.payload["ground"]) == ("entry_refused", "staff")
    before = count(journal)
    with pytest.raises(CashierError, match=r"belongs to a member of staff; staff may not play \(R81.b\)"):
        result(hall.cashier.open_account(CASHIER, admitted.payload["number"], "ticket", "4821"))
    assert count(journal) == before


@pytest.mark.req("R75.1-3", "R92.2")
def test_an_account_needs_a_visitor_admitted_today_without_another_open_account(hall: Hall, clock: Clock) -> None:
    with pytest.raises(AdmissionError, match="there is no visitor record 1"):
        result(hall.cashier.open_account(CASHIER, 1, "ticket", "4821"))
    visitor = admit(hall)
    clock.advance(DAY)
    with pytest.raises(CashierError, match="admitted on 2026-05-28, not today; they must pass the admission desk"):
        result(hall.cashier.open_account(CASHIER, visitor, "ticket", "4821"))
    today = admit(hall)
    (opened,) = result(hall.cashier.open_account(CASHIER, today, "ticket", "4821"))
    with pytest.raises(CashierError, match=f"visitor {today} already holds account"):
        result(hall.cashier.open_account(CASHIER, today, "ticket", "4821"))
    number = opened.payload["account"]
    result(hall.cashier.close_account(CASHIER, number))
    result(hall.cashier.open_account(CASHIER, today, "card", "4821"))
    with pytest.raises(CashierError, match="on a card or a ticket, not 'wristband'"):
        result(hall.cashier.open_account(CASHIER, admit(hall), "wristband", "4821"))


@pytest.mark.req("R92.5")
@pytest.mark.parametrize(
    ("amount", "message"),
    [
        (0, "more than zero, not 0"),
        (-500, "more than zero, not -500"),
        (12.5, "whole number of cents, not 12.5"),
        (True, "whole number of cents, not True"),
        ("500", "whole number of cents, not '500'"),
        (None, "whole number of cents, not None"),
    ],
)
def test_amounts_are_positive_whole_cents(hall: Hall, journal: Journal, amount: object, message: str) -> None:
    number = open_account(hall)
    result(hall.cashier.load_credit(CASHIER, number, 1_000, "desk1"))
    before = count(journal)
    with pytest.raises(CashierError, match=message):
        result(hall.cashier.load_credit(CASHIER, number, amount, "desk1"))
    with pytest.raises(CashierError, match=message):
        result(hall.cashier.cash_out(CASHIER, number, amount, "desk1", "cash", ""))
    assert count(journal) == before
    assert hall.cashier.balance(number) == 1_000


@pytest.mark.req("R93.14", "R93.2-4")
def test_a_cash_out_never_takes_an_account_below_zero(hall: Hall, journal: Journal) -> None:
    number = open_account(hall)
    result(hall.cashier.load_credit(CASHIER, number, 1_000, "desk1"))
    before = count(journal)
    with pytest.raises(CashierError, match=r"holds 10.00 EUR; it cannot pay out 10.01 EUR"):
        result(hall.cashier.cash_out(CASHIER, number, 1_001, "desk1", "cash", ""))
    assert count(journal) == before and hall.cashier.balance(number) == 1_000


def test_a_drawer_cannot_pay_out_cash_it_does_not_hold(hall: Hall, journal: Journal) -> None:
    number = open_account(hall)
    result(hall.cashier.load_credit(CASHIER, number, 1_000, "desk1"))
    # A prize credited by a game: more than desk 2's empty drawer holds.
    hall.core.allow({"pay_prize": {Role.SYSTEM}})
    prize = Posting.transfer(50_000, debit="house", credit=f"player:{number}", reason="bingo prize")
    result(hall.core.execute(Actor("hall-server", Role.SYSTEM), "pay_prize", lambda now: posting_records([prize])))
    result(hall.cashier.open_desk(CASHIER, "desk2", 0))
    before = count(journal)
    with pytest.raises(Overdraft, match="cash:desk2 holds 0.00 EUR"):
        result(hall.cashier.cash_out(CASHIER, number, 40_000, "desk2", "cash", ""))
    assert count(journal) == before


@pytest.mark.req("R78")
def test_prizes_are_paid_in_cash_by_transfer_or_by_cheque_never_in_kind(hall: Hall, journal: Journal) -> None:
    number = open_account(hall)
    result(hall.cashier.load_credit(CASHIER, number, 9_000, "desk1"))
    result(hall.cashier.cash_out(CASHIER, number, 2_000, "desk1", "cheque", "0012345"))
    result(hall.cashier.cash_out(CASHIER, number, 3_000, "desk1", "transfer", "AD12 0001 2030"))
    result(hall.cashier.cash_out(CASHIER, number, 1_000, "desk1", "cash", ""))
    assert [(c.method, c.reference, c.amount) for c in hall.cashier.state.cash_outs] == [
        ("cheque", "0012345", 2_000), ("transfer", "AD12 0001 2030", 3_000), ("cash", "", 1_000)
    ]
    # Cheques and transfers come from the operator's bank, not from the drawer.
    assert hall.ledger.balance("cash:desk1") == 20_000 + 9_000 - 1_000
    assert hall.ledger.balance("house") == 20_000 + 5_000  # the float and the bank payments
    before = count(journal)
    for method, reference, message in [
        ("voucher", "", "never in kind"),
        ("meal", "", "never in kind"),
        ("cheque", " ", "give the cheque number"),
        ("transfer", "", "give the transfer reference"),
        ("cash", "123", "a cash payment has no reference"),
        ("cheque", "9" * 65, "at most 64 characters"),
    ]:
        with pytest.raises(CashierError, match=message):
            result(hall.cashier.cash_out(CASHIER, number, 100, "desk1", method, reference))
    assert count(journal) == before


@pytest.mark.req("R93.14")
def test_a_closed_account_cannot_be_used_and_closes_only_at_zero(hall: Hall, journal: Journal) -> None:
    number = open_account(hall)
    result(hall.cashier.load_credit(CASHIER, number, 500, "desk1"))
    with pytest.raises(CashierError, match="still holds 5.00 EUR; cash it out before closing"):
        result(hall.cashier.close_account(CASHIER, number))
    result(hall.cashier.cash_out(CASHIER, number, 500, "desk1", "cash", ""))
    result(hall.cashier.close_account(CASHIER, number))
    before = count(journal)
    closed = "is closed and cannot be used"
    with pytest.raises(CashierError, match=closed):
        result(hall.cashier.load_credit(CASHIER, number, 500, "desk1"))
    with pytest.raises(CashierError, match=closed):
        result(hall.cashier.cash_out(CASHIER, number, 1, "desk1", "cash", ""))
    with pytest.raises(CashierError, match=closed):
        result(hall.cashier.close_account(CASHIER, number))
    with pytest.raises(CashierError, match=closed):
        hall.cashier.verify_pin(number, "4821")
    assert count(journal) == before
    assert b"closed" in result(hall.cashier.print_statement(CASHIER, number)), "its statement stays printable"


def test_desks_must_exist_and_be_open(hall: Hall, journal: Journal) -> None:
    number = open_account(hall)
    before = count(journal)
    with pytest.raises(CashierError, match="there is no cash desk 'desk9'; the desks are desk1, desk2"):
        result(hall.cashier.load_credit(CASHIER, number, 500, "desk9"))
    with pytest.raises(CashierError, match="cash desk desk2 is not open; open it with its float first"):
        result(hall.cashier.load_credit(CASHIER, number, 500, "desk2"))
    with pytest.raises(CashierError, match="cash desk desk1 is already open"):
        result(hall.cashier.open_desk(CASHIER, "desk1", 0))
    with pytest.raises(CashierError, match="float must be zero or more"):
        result(hall.cashier.open_desk(CASHIER, "desk2", -1))
    assert count(journal) == before


@pytest.mark.req("R80")
@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("open_player_account", (1, "ticket", "4821")),
        ("load_credit", ("ACCOUNT", 500, "desk1")),
        ("cash_out", ("ACCOUNT", 500, "desk1", "cash", "")),
        ("close_player_account", ("ACCOUNT",)),
        ("open_cash_desk", ("desk2", 0)),
        ("reconcile_cash_desk", ("desk1", 0)),
        ("print_player_ticket", ("ACCOUNT",)),
        ("print_account_statement", ("ACCOUNT",)),
    ],
)
@pytest.mark.parametrize("actor", [DOOR, SELLER, Actor("rui", Role.ROOM_CHIEF)])
def test_only_the_cashier_handles_money_and_accounts(
    hall: Hall, journal: Journal, command: str, args: tuple, actor: Actor
) -> None:
    number = open_account(hall)
    before = count(journal)
    handler = hall.core.commands[command].handler
    with pytest.raises(NotAllowed, match=f"may not {command.replace('_', ' ')}"):
        result(handler(actor, *[number if a == "ACCOUNT" else a for a in args]))
    assert count(journal) == before


@pytest.mark.req("R93.7")
def test_an_inspector_may_print_a_statement_but_not_move_money(hall: Hall) -> None:
    number = open_account(hall)
    assert result(hall.cashier.print_statement(ADMIN, number)).startswith(b"%PDF")
    with pytest.raises(NotAllowed):
        result(hall.cashier.load_credit(ADMIN, number, 100, "desk1"))


@pytest.mark.req("R93.7", "R93.2-4")
def test_the_statement_lists_every_movement_of_the_account_from_every_module(hall: Hall, journal: Journal, clock) -> None:
    number = open_account(hall)
    other = open_account(hall, document="87654321B")
    result(hall.cashier.load_credit(CASHIER, number, 5_000, "desk1"))
    result(hall.cashier.load_credit(CASHIER, other, 733, "desk1"))
    # A card purchase and a prize, posted by the games, are movements of the account too.
    hall.core.allow({"sell": {Role.SYSTEM}})
    system = Actor("hall-server", Role.SYSTEM)
    sale = Posting.transfer(1_500, debit=f"player:{number}", credit="stakes:g7", reason="virtual cards bought in game g7",
                            reference=Reference(game_id="g7"))
    prize = Posting.transfer(1_200, debit="stakes:g7", credit=f"player:{number}", reason="line prize in game g7",
                             reference=Reference(game_id="g7"))
    result(hall.core.execute(system, "sell", lambda now: posting_records([sale])))
    clock.advance(60)
    result(hall.core.execute(system, "sell", lambda now: posting_records([prize])))
    result(hall.cashier.cash_out(CASHIER, number, 2_000, "desk1", "cheque", "0012345"))
    statement = hall.cashier.statement(number)
    assert [(m.amount, m.balance) for m in statement.movements] == [
        (5_000, 5_000), (-1_500, 3_500), (1_200, 4_700), (-2_000, 2_700)
    ]
    assert statement.balance == hall.cashier.balance(number) == 2_700
    seqs = {r.seq for r in journal.records() if r.type == "posting" and f"player:{number}" in str(r.payload)}
    assert {m.seq for m in statement.movements} == seqs

    pdf = result(hall.cashier.print_statement(CASHIER, format_account_number(number)))
    assert pdf.startswith(b"%PDF")
    shown = " ".join(pdf_strings(pdf))
    for text in [
        f"statement of account {format_account_number(number)}",
        "Sala Andorra",
        "credit loaded in cash at desk desk1",
        "virtual cards bought in game g7",
        "line prize in game g7",
        "cashed out by cheque 0012345 at desk desk1",
        "-€15.00",  # the hall's language's (here English) money and short dates, by CLDR
        "€47.00",
        "Balance: €27.00",
        "Movements: 4",
        "Credited: €62.00",
        "Debited: €35.00",
        "5/28/26 22:2",
    ]:
        assert text in shown, text
    assert "€7.33" not in shown, "another account's movements stay off the statement"


@pytest.mark.req("R93.7")
def test_a_long_statement_runs_over_several_pages(hall: Hall) -> None:
    number = open_account(hall)
    for _ in range(60):
        result(hall.cashier.load_credit(CASHIER, number, 100, "desk1"))
    pdf = result(hall.cashier.print_statement(CASHIER, number))
    shown = " ".join(pdf_strings(pdf))
    assert "Page 2." in shown and "Movements: 60" in shown and "Balance: €60.00" in shown


@pytest.mark.req("R92.5")
def test_the_ticket_shows_the_number_as_text_and_as_a_qr_code(hall: Hall) -> None:
    number = open_account(hall, medium="card")
    pdf = result(hall.cashier.print_ticket(CASHIER, number))
    assert pdf.startswith(b"%PDF")
    assert format_account_number(number).encode() in pdf and b"Player card" in pdf
    assert pdf.count(b" re") > 50, "the QR code's modules are drawn (nothing else on a ticket is a rectangle)"
    assert ticket_qr(number).value == number
    assert b"4821" not in pdf


@pytest.mark.req("R92.5")
def test_reconciliation_records_cash_short_and_posts_it_to_the_desks_over_short_account(hall: Hall, journal: Journal) -> None:
    number = open_account(hall)
    result(hall.cashier.load_credit(CASHIER, number, 4_000, "desk1"))
    result(hall.cashier.cash_out(CASHIER, number, 1_500, "desk1", "cash", ""))
    records = result(hall.cashier.reconcile_desk(CASHIER, "desk1", 22_450))
    assert [r.type for r in records] == ["cash_desk_reconciled", "posting"]
    assert records[0].payload == {
        "desk": "desk1", "date": "2026-05-28", "expected": 22_500, "counted": 22_450, "difference": -50,
        "actor": CASHIER.to_dict(),
    }
    assert records[1].payload["debits"] == [["over_short:desk1", 50]]
    assert hall.ledger.balance("cash:desk1") == 22_450, "the drawer's account equals the count"
    assert hall.cashier.over_short("desk1") == 50
    assert hall.ledger.ledger.total() == 0
    (reconciliation,) = hall.cashier.state.reconciliations
    assert reconciliation.difference == -50 and reconciliation.cashier == "eva"
    # The desk is closed: a second reconciliation is refused, and so is business at it.
    before = count(journal)
    with pytest.raises(CashierError, match=r"desk1 is not open \(reconciled by eva in record \d+\)"):
        result(hall.cashier.reconcile_desk(CASHIER, "desk1", 22_450))
    with pytest.raises(CashierError, match="desk1 is not open"):
        result(hall.cashier.load_credit(CASHIER, number, 100, "desk1"))
    assert count(journal) == before


@pytest.mark.req("R92.5")
def test_reconciliation_records_cash_over_and_an_exact_count_posts_nothing(hall: Hall, clock) -> None:
    result(hall.cashier.open_desk(CASHIER, "desk2", 5_000))
    exact = result(hall.cashier.reconcile_desk(CASHIER, "desk1", 20_000))
    assert [r.type for r in exact] == ["cash_desk_reconciled"]
    over = result(hall.cashier.reconcile_desk(CASHIER, "desk2", 5_120))
    assert hall.cashier.state.reconciliations[0].difference == 0
    assert over[0].payload["difference"] == 120
    assert over[1].payload["credits"] == [["over_short:desk2", 120]]
    assert hall.cashier.over_short("desk2") == -120 and hall.cashier.over_short("desk1") == 0
    assert hall.ledger.balance("cash:desk2") == 5_120
    # Next day the desk opens again; the count is made against what it then holds.
    clock.advance(DAY)
    result(hall.cashier.open_desk(CASHIER, "desk2", 1_000))
    result(hall.cashier.reconcile_desk(CASHIER, "desk2", 6_100))
    assert hall.cashier.state.reconciliations[-1].expected == 6_120
    assert hall.cashier.state.reconciliations[-1].date == "2026-05-29"
    assert hall.cashier.over_short("desk2") == -100
    assert hall.ledger.ledger.total() == 0
    with pytest.raises(CashierError, match="counted cash is a whole number of cents"):
        result(hall.cashier.reconcile_desk(CASHIER, "desk1", 100.0))


@pytest.mark.req("R96.4", "R93.7")
def test_the_cashier_state_rebuilt_from_the_journal_equals_the_live_state(hall: Hall, journal: Journal, clock) -> None:
    number = open_account(hall)
    other = open_account(hall, document="87654321B", medium="card")
    result(hall.cashier.load_credit(CASHIER, number, 3_000, "desk1"))
    result(hall.cashier.load_credit(CASHIER, other, 1_000, "desk1"))
    result(hall.cashier.cash_out(CASHIER, number, 1_000, "desk1", "transfer", "T-77"))
    result(hall.cashier.cash_out(CASHIER, other, 1_000, "desk1", "cash", ""))
    result(hall.cashier.close_account(CASHIER, other))
    result(hall.cashier.reconcile_desk(CASHIER, "desk1", 22_990))
    again = build(journal, clock)
    again.core.recover()
    assert again.cashier.state == hall.cashier.state
    assert again.admission.state == hall.admission.state
    assert again.ledger.ledger.balances() == hall.ledger.ledger.balances()
    assert result(again.cashier.print_statement(CASHIER, number)) == result(hall.cashier.print_statement(CASHIER, number))
    assert journal.verify() == count(journal)


operation = st.tuples(
    st.sampled_from(["load", "cash_out", "cash_out_cheque"]),
    st.integers(0, 2),
    st.one_of(st.integers(-200, 6_000), st.just(0), st.floats(1, 100), st.booleans()),
)


@pytest.mark.req("R93.2-4", "R93.14", "R92.5")
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(operation, max_size=25))
def test_any_sequence_of_loads_and_cash_outs_keeps_balances_non_negative_and_the_ledger_at_zero(ops) -> None:
    with tempfile.TemporaryDirectory() as folder:
        engine = open_database(f"sqlite:///{Path(folder) / 'hall.sqlite3'}")
        journal = Journal(engine, Ed25519PrivateKey.generate(), head=Path(folder) / "journal.head")
        clock = Clock()
        clock.advance(1_780_000_000)
        hall = build(journal, clock)
        result(hall.admission.import_banned_list(ADMIN, BANNED, "craj.csv"))
        result(hall.cashier.open_desk(CASHIER, "desk1", 1_000))
        accounts = [open_account(hall, document=f"D{i}") for i in range(3)]
        model = {number: 0 for number in accounts}
        drawer = 1_000
        for kind, which, amount in ops:
            number = accounts[which]
            before = count(journal)
            valid = isinstance(amount, int) and not isinstance(amount, bool) and amount > 0
            try:
                if kind == "load":
                    result(hall.cashier.load_credit(CASHIER, number, amount, "desk1"))
                    model[number] += amount
                    drawer += amount
                elif kind == "cash_out":
                    result(hall.cashier.cash_out(CASHIER, number, amount, "desk1", "cash", ""))
                    model[number] -= amount
                    drawer -= amount
                else:
                    result(hall.cashier.cash_out(CASHIER, number, amount, "desk1", "cheque", "000123"))
                    model[number] -= amount
            except DomainError:
                assert count(journal) == before, "a refused command writes nothing"
                assert not valid or kind != "load", "a valid load is always accepted"
                assert not valid or amount > model[number] or (kind == "cash_out" and amount > drawer)
            else:
                assert valid
            for account in accounts:
                assert hall.cashier.balance(account) == model[account] >= 0
            assert hall.ledger.balance("cash:desk1") == drawer >= 0
            assert hall.ledger.ledger.total() == 0
