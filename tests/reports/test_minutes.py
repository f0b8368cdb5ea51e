"""The minutes book made from a journal played through the real hall modules (R77, R83.3-5)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet.task import Clock

from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.reports.layout import card_ranges, game_report, month_report, session_report, stake_percent
from hall_server.reports.minutes import POTS, build
from hall_server.store.database import open_database
from protocol.chain import Record, seal
from protocol.errors import DomainError
from protocol.money import format_cents
from server_kit.journal.sql import Journal
from server_kit.reports.document import Column, JournalRange, Report, ReportError, Table
from server_kit.reports.render import to_csv, to_pdf
from tests.hall.conftest import clock, journal, result  # noqa: F401  (fixtures shared with the hall tests)
from tests.hall.test_games import sell
from tests.hall.test_session import CHIEF
from tests.reports.conftest import PlayedHall, csv_tables, pdf_strings
from tests.reports.scenario import COMPLAINT, EXTRA_CHECK, INCIDENT, OPERATOR_JACKPOT, WITNESS, play
from tests.terminals.conftest import SELLER, VIRTUAL_NUMBER, build_hall, prepare
from tests.terminals.test_virtual import buy

ROOT = Path(__file__).resolve().parents[2]
HALL = "Sala Andorra"


def rendered(report: Report) -> tuple[dict[str, list[dict[str, str]]], list[str]]:
    return csv_tables(to_csv(report)), pdf_strings(to_pdf(report))


def balls_of(records: list[Record], game_id: str) -> list[int]:
    return [r.payload["ball"] for r in records if r.type == "ball_drawn" and r.payload["game_id"] == game_id]


def in_pdf(shown: list[str], *texts: str) -> None:
    """Each text is a cell of the PDF; a text of several words may wrap over lines of its cell."""
    running = " ".join(shown)
    for text in texts:
        assert text in shown or (" " in text and text in running), f"{text!r} is not shown in the PDF"


# --- A game --------------------------------------------------------------------------------


@pytest.mark.req("R77.1", "R83.3-4", "R82.6", "R92.3")
def test_the_minutes_of_a_game_with_a_second_series_hold_every_field_the_articles_list(hall_home: PlayedHall) -> None:
    played, book = hall_home.played, hall_home.book
    records = played.records()
    game_id = played.game_ids[1]
    (opened,) = played.of_game(game_id, "sale_opened")
    (closed,) = played.of_game(game_id, "sale_closed")
    balls = balls_of(records, game_id)
    tables, shown = rendered(game_report(book.game(game_id), hall_name=HALL, timezone=DEFAULT_TIMEZONE))

    (game,) = tables["game"]
    assert game["game_id"] == game_id and game["game_number"] == "2" and game["session"] == "1"
    assert game["face_value_cents"] == str(opened.payload["price_cents"]) == "100"
    assert game["series_in_play"] == "7 8"
    assert game["collection_cents"] == str(closed.payload["collection_cents"]) == "3000"
    assert game["line_prize_cents"] == str(closed.payload["line_cents"])
    assert game["bingo_prize_cents"] == str(closed.payload["bingo_cents"])
    assert game["physical_cards"] == "30" and game["virtual_cards"] == "0" and game["state"] == "closed"
    assert [(s["series"], s["opened_as"], s["first_card"], s["last_card"], s["cards"]) for s in tables["series"]] == [
        ("7", "first series", "41", "60", "20"),
        ("8", "second series", "1", "10", "10"),
    ]
    in_pdf(shown, game_id, "1.00 EUR", "7 8", "30.00 EUR", "second series", "41", "60",
           format_cents(closed.payload["line_cents"]), format_cents(closed.payload["bingo_cents"]))

    # Balls drawn in order, in both renderings.
    drawn = [row for row in tables["draw"] if row["event"] == "ball drawn"]
    assert [int(row["ball"]) for row in drawn] == balls
    assert [int(row["ball_order"]) for row in drawn] == list(range(1, len(balls) + 1))
    assert [int(shown[i - 1]) for i, text in enumerate(shown) if text == "ball drawn"] == balls

    # The winning cards at each prize, with the ball, and the prizes paid to them.
    won = played.of_game(game_id, "prize_won")
    assert [(w["prize"], w["card"], int(w["ball_order"]), int(w["ball"])) for w in tables["winners"]] == [
        (r.payload["pattern"], f"{r.payload['series']}-{r.payload['card_number']}", r.payload["ball_count"],
         balls[r.payload["ball_count"] - 1]) for r in won
    ]
    paid = played.of_game(game_id, "prize_paid")
    expected = [(r.payload["prize"], card, cents, r.payload["amount_cents"]) for r in paid for card, cents in r.payload["payments"]]
    assert [(p["prize"], p["card"], int(p["paid_cents"]), int(p["amount_cents"])) for p in tables["prizes"]] == expected
    assert {p for p, *_ in expected} == {"line", "bingo", "jackpot"}
    for prize, card, cents, _ in expected:
        in_pdf(shown, prize, card, format_cents(cents))


@pytest.mark.req("R77.1", "R89.6", "R90.4", "R91.10", "R91")
def test_pot_values_collection_and_payout_appear_with_the_balls_drawn(hall_home: PlayedHall) -> None:
    played, book = hall_home.played, hall_home.book
    game_id = played.game_ids[1]
    (closed,) = played.of_game(game_id, "sale_closed")
    (jackpot,) = [r for r in played.of_game(game_id, "prize_paid") if r.payload["prize"] == "jackpot"]
    tables, shown = rendered(game_report(book.game(game_id), hall_name=HALL, timezone=DEFAULT_TIMEZONE))

    collected = {row["detail"].split(" ")[0]: int(row["amount_cents"]) for row in tables["draw"]
                 if row["event"] == "pot collected"}
    assert collected == closed.payload["contributions"]
    assert all(row["ball_order"] == "0" for row in tables["draw"] if row["event"] == "pot collected")
    (payout,) = [row for row in tables["draw"] if row["event"] == "pot paid"]
    assert (payout["ball_order"], payout["cards"], int(payout["amount_cents"])) == (
        str(jackpot.payload["ball_count"]), "7-41", jackpot.payload["amount_cents"])
    assert payout["ball"] == str(balls_of(played.records(), game_id)[jackpot.payload["ball_count"] - 1])

    pots = {row["pot"]: row for row in tables["pots"]}
    accumulated = pots["jackpot_accumulated"]
    # The accumulated jackpot at the draw: the operator's contribution and the 7% of both games' sales.
    assert int(accumulated["level_at_draw_cents"]) == OPERATOR_JACKPOT + 280 + 210 == jackpot.payload["amount_cents"]
    assert int(accumulated["paid_cents"]) == jackpot.payload["amount_cents"]
    assert accumulated["in_play"] == "bingo within 40 balls" and pots["superbingo"]["in_play"] == "no"
    moved = int(accumulated["moved_cents"])
    assert moved > 0 and int(pots["jackpot_reserve"]["moved_cents"]) == -moved
    assert int(accumulated["level_after_cents"]) == moved
    in_pdf(shown, "pot collected", "pot paid", "bingo within 40 balls", format_cents(jackpot.payload["amount_cents"]))


def test_a_refunded_game_shows_its_suspensions_and_the_stakes_returned(hall_home: PlayedHall) -> None:
    played, book = hall_home.played, hall_home.book
    game = book.game(played.game_ids[2])
    tables, shown = rendered(game_report(game, hall_name=HALL, timezone=DEFAULT_TIMEZONE))
    (row,) = tables["game"]
    assert (row["state"], row["refunded_cents"], row["prizes_paid_cents"]) == ("refunded", "1000", "0")
    assert [r["event"] for r in tables["draw"] if r["event"].startswith("game")] == [
        "game suspended", "game suspended for good", "game refunded"]
    assert {int(r["collected_cents"]) for r in tables["pots"]} == {0}, "the pots gave back what the close set aside"
    in_pdf(shown, "refunded", "blower pump stopped", "no spare pump")


# --- A session ------------------------------------------------------------------------------


@pytest.mark.req("R77.1", "R77.2", "R75.4", "R75.5", "R84.1", "R84.2", "R84.3", "R83.5")
def test_the_session_minutes_hold_the_opening_every_game_the_incidents_and_the_closing(hall_home: PlayedHall) -> None:
    played, book = hall_home.played, hall_home.book
    tables, shown = rendered(session_report(book.session(1), hall_name=HALL, timezone=DEFAULT_TIMEZONE))

    (session,) = tables["session"]
    assert (session["date"], session["state"]) == ("2026-12-01", "closed")
    assert [(s["act"], s["role"], s["signer"]) for s in tables["signatures"]] == [
        ("opening", "administrator", "ines"), ("opening", "room chief", "rui"),
        ("closing", "administrator", "ines"), ("closing", "room chief", "rui"),
    ]
    assert sorted(v["check"] for v in tables["verification"]) == [
        "clock", "database", "draw_device", "journal", "links", "software", "terminals"]
    assert {v["result"] for v in tables["verification"]} == {"passed"}
    assert [(c["stage"], c["counted"], c["missing"], c["witnesses"]) for c in tables["ball_counts"]] == [
        ("opening", "90", "none", "Marta Soler (public)"),
        ("extra", "90", "none", WITNESS),
        ("closing", "90", "none", WITNESS),
    ]
    kinds = {row["kind"]: row for row in tables["incidents"]}
    assert kinds["incident"]["text"] == INCIDENT and kinds["incident"]["people"] == "visitor 1"
    assert kinds["complaint"]["text"] == COMPLAINT and kinds["complaint"]["people"] == "Pere Mas"
    assert kinds["extra ball check requested"]["text"] == EXTRA_CHECK
    # Every game's own minutes are in the session's.
    for number, game_id in enumerate(played.game_ids[:3], start=1):
        (game,) = tables[f"game_{number}.game"]
        assert game["game_id"] == game_id
        assert [int(r["ball"]) for r in tables[f"game_{number}.draw"] if r["event"] == "ball drawn"] == balls_of(
            played.records(), game_id)
    assert "2027-01-04-s2-g1" not in {row["game_id"] for row in tables["summary"]}
    in_pdf(shown, "2026-12-01", "ines", "rui", "administrator", "room chief", "Marta Soler (public)",
           INCIDENT, COMPLAINT, EXTRA_CHECK, *played.game_ids[:3])


@pytest.mark.req("R91.11", "R77.1")
def test_the_session_minutes_show_the_jackpots_bank_deposit_and_its_funds_at_the_closing(
    hall_home: PlayedHall,
) -> None:
    """R91.11: the day's deposit into the jackpot's bank account, with what was due, and the
    jackpot's funds and account at the closing (equal: the closing waits for the deposit)."""
    played, book = hall_home.played, hall_home.book
    (record,) = [r for r in played.records() if r.type == "jackpot_deposited"]
    tables, shown = rendered(session_report(book.session(1), hall_name=HALL, timezone=DEFAULT_TIMEZONE))
    (row,) = tables["jackpot_bank"]
    assert (row["kind"], row["counterpart"], row["reference"], row["by"]) == ("deposit", "desk1", "slip-0001", "eva")
    assert int(row["amount_cents"]) == int(row["due_before_cents"]) == record.payload["amount"] > 0
    assert int(row["bank_after_cents"]) == int(row["funds_cents"])
    (at_close,) = tables["jackpot_at_close"]
    funds = played.hall.balance("pot:jackpot_accumulated") + played.hall.balance("pot:jackpot_reserve")
    assert int(at_close["funds_cents"]) == int(at_close["bank_cents"]) == record.payload["bank_after"]
    assert funds >= record.payload["bank_after"]  # session 2's sale has added to the funds since
    in_pdf(shown, "slip-0001", format_cents(record.payload["amount"]))
    (second,) = csv_tables(to_csv(session_report(book.session(2), hall_name=HALL, timezone=DEFAULT_TIMEZONE)))[
        "jackpot_at_close"]
    assert second["funds_cents"] == second["bank_cents"] == "", "session 2 is still open"


@pytest.mark.req("R83.5")
def test_the_daily_summary_keeps_running_totals_of_games_cards_prizes_and_collection(hall_home: PlayedHall) -> None:
    played, book = hall_home.played, hall_home.book
    tables, shown = rendered(session_report(book.session(1), hall_name=HALL, timezone=DEFAULT_TIMEZONE))
    prizes = [sum(c for r in played.of_game(g, "prize_paid") for _, c in r.payload["payments"])
              for g in (*played.game_ids[:3], played.last_game_id)]
    rows = [(int(r["total_games"]), int(r["total_cards"]), int(r["total_prizes_paid_cents"]),
             int(r["total_collection_cents"])) for r in tables["summary"]]
    # Game 3 was refunded: a game played, but no card or stake stays in the totals.
    assert rows == [
        (1, 40, prizes[0], 4000),
        (2, 70, prizes[0] + prizes[1], 7000),
        (3, 70, prizes[0] + prizes[1], 7000),
        (4, 80, sum(prizes), 8000),
    ]
    (totals,) = tables["totals"]
    assert (totals["games"], totals["cards_sold"], totals["collection_cents"], totals["refunded_cents"]) == (
        "4", "80", "8000", "1000")
    in_pdf(shown, "80.00 EUR", format_cents(sum(prizes)), "10.00 EUR")


@pytest.mark.req("R83.5", "R92.3", "R98")
def test_the_totals_of_the_minutes_match_the_ledger(hall_home: PlayedHall) -> None:
    played, book = hall_home.played, hall_home.book
    ledger = played.hall.ledger.ledger
    for game_id in (*played.game_ids, played.last_game_id):
        game = book.game(game_id)
        sales = sum(p.amount for p in ledger.postings_for(game_id, "sale:paper"))
        prizes = sum(p.amount for p in ledger.postings_for(game_id) if p.reason.startswith("prize:"))
        refunds = sum(p.amount for p in ledger.postings_for(game_id, "refund:game"))
        assert (game.stakes_cents, game.prizes_paid_cents, game.refunded_cents) == (sales, prizes, refunds)
    (totals,) = csv_tables(to_csv(session_report(book.session(1), hall_name=HALL, timezone=DEFAULT_TIMEZONE)))["totals"]
    assert int(totals["tax_cents"]) == played.hall.balance("tax")
    for pot in POTS:
        assert book.pot_level(pot) == played.hall.balance(pot)


# --- The month ---------------------------------------------------------------------------------


@pytest.mark.req("R77.4")
def test_the_monthly_count_lists_the_physical_and_virtual_cards_sold(hall_home: PlayedHall) -> None:
    book = hall_home.book
    tables, shown = rendered(month_report(book.month("2026-12"), hall_name=HALL, timezone=DEFAULT_TIMEZONE))
    (month,) = tables["month"]
    assert (month["sessions"], month["games"], month["physical_cards"], month["virtual_cards"],
            month["refunded_cards"]) == ("1", "4", "90", "0", "10")
    assert [(s["kind"], s["series"], s["games"], s["cards"], s["refunded_cards"]) for s in tables["series"]] == [
        ("physical", "7", "2", "60", "0"),
        ("physical", "8", "3", "30", "10"),
    ]
    in_pdf(shown, "2026-12", "90", "60", "30")
    (january,) = csv_tables(to_csv(month_report(book.month("2027-01"), hall_name=HALL, timezone=DEFAULT_TIMEZONE)))["month"]
    assert (january["physical_cards"], january["games"]) == ("20", "1")
    with pytest.raises(ReportError, match=r"no session was held in 2026-11; the journal holds sessions in 2026-12, 2027-01"):
        book.month("2026-11")
    with pytest.raises(ReportError, match="YYYY-MM"):
        book.month("2026-13")


@pytest.mark.req("R77.4", "R83.3-4", "R82.13-16")
def test_virtual_cards_bought_on_terminals_are_listed_with_their_stake_percentages(tmp_path: Path) -> None:
    clock = Clock()
    clock.advance(1_780_000_000)
    journal = Journal(open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=tmp_path / "journal.head")
    hall = build_hall(journal, clock)
    prepare(hall)
    anna, bea = hall.player("11111111A", 10_000), hall.player("22222222B", 10_000)
    hall.terminal("T1"), hall.terminal("T2"), hall.terminal("T3")
    (opened,) = result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 60))
    buy(hall, "T1", anna, 3, 50)
    buy(hall, "T2", bea, 2)
    buy(hall, "T3", bea, 1, 25)
    result(hall.virtual.declare_failed(CHIEF, "T3", "screen dead"))  # its card is refunded (R96.3)
    sell(hall, 7, 1, 10)
    result(hall.games.close_sale(CHIEF))
    game_id = opened.payload["game_id"]
    book = build(hall.records())
    tables, shown = rendered(game_report(book.game(game_id), hall_name=HALL, timezone=DEFAULT_TIMEZONE))
    virtual = str(VIRTUAL_NUMBER)
    assert [(v["series"], v["series_label"], v["stake_percent"], v["stake_cents"], v["cards"], v["card_numbers"],
             v["terminals"], v["amount_cents"]) for v in tables["virtual_cards"]] == [
        (virtual, "V1", "25%", "25", "1", "6", "T3", "25"),
        (virtual, "V1", "50%", "50", "3", "1-3", "T1", "150"),
        (virtual, "V1", "100%", "100", "2", "4-5", "T2", "200"),
    ]
    (row,) = tables["game"]
    assert (row["physical_cards"], row["virtual_cards"], row["refunded_cards"], row["refunded_cents"],
            row["collection_cents"]) == ("10", "6", "1", "25", "1350")
    assert [r["detail"] for r in tables["draw"] if r["event"] == "terminal failed"] == ["T3"]
    ledger = hall.ledger.ledger
    stakes = sum(p.amount for reason in ("sale:paper", "sale:virtual") for p in ledger.postings_for(game_id, reason))
    refunds = sum(p.amount for p in ledger.postings_for(game_id, "refund:terminal"))
    assert int(row["collection_cents"]) == stakes - refunds
    in_pdf(shown, "50%", "100%", "1-3", "4-5", "1.50 EUR", "13.50 EUR")
    month = csv_tables(to_csv(month_report(book.month("2026-12"), hall_name=HALL, timezone=DEFAULT_TIMEZONE)))
    assert [(s["kind"], s["series"], s["cards"], s["refunded_cards"]) for s in month["series"]] == [
        ("physical", "7", "10", "0"), ("virtual", virtual, "6", "1")]
    (summary,) = csv_tables(to_csv(session_report(book.session(1), hall_name=HALL, timezone=DEFAULT_TIMEZONE)))["summary"]
    assert (summary["cards"], summary["refunded_cards"], summary["total_cards"]) == ("16", "1", "15")


@pytest.mark.req("R85.6", "R85.5", "R82.8", "R77.1")
def test_the_minutes_show_the_prizes_closed_the_balls_corrected_and_the_cards_refused(
    journal: Journal, clock: Clock,
) -> None:
    from tests.hall.test_claim_pause import blower_game, draw, shared_line

    hall, desks, _ = blower_game(journal, clock)
    caller, table, chief = desks["caller"], desks["table"], desks["chief"]
    misread = draw(caller, 1)[0].payload["ball"]
    read_again = next(b for b in range(90, 0, -1) if b not in hall.balls.script[:20])
    chief("correct_ball", ball=misread, corrected=read_again, reason="the reader read it upside down")
    table("correct_ball", ball=misread, corrected=read_again, reason="the ball on the rack")
    draw(caller, 1)
    table("refuse_card", series=7, card_number=2, reason="the numbers were scratched")
    while hall.games.current.machine.state != "line_won":
        draw(caller, 1)
        clock.advance(30)  # nobody calls: a card found is a virtual one, and the wait closes its prize
    game_id = hall.games.current.game_id
    tables, shown = rendered(game_report(build(hall.records()).game(game_id), hall_name=HALL,
                                         timezone=DEFAULT_TIMEZONE))
    (corrected,) = tables["balls_corrected"]
    assert (corrected["ball_order"], corrected["misread"], corrected["ball"], corrected["signed_by"],
            corrected["reason"]) == ("1", str(misread), str(read_again), "rui teo", "the reader read it upside down")
    (refused,) = tables["cards_refused"]
    assert (refused["card"], refused["ball_order"], refused["refused_by"], refused["reason"]) == (
        "7-2", "2", "teo", "the numbers were scratched")
    events = [(r["event"], r["ball"], r["detail"]) for r in tables["draw"]]
    assert ("ball corrected", str(read_again),
            f"announced as {misread}; signed by rui and teo: the reader read it upside down (R85.5)") in events
    assert ("correction signed", str(misread), f"read again as {read_again}; by rui (room chief): "
            "the reader read it upside down") in events
    assert [e for e in events if e[0] == "ball drawn"][0][1] == str(misread), "the ball as announced stays in the record"
    closed = [e for e in events if e[0] == "prize closed"]
    assert closed == [("prize closed", closed[0][1], "line: no other card, closed after 10 s with no new claim (R85.6)")]
    in_pdf(shown, "Cards refused as invalid (R82.8)", "Misread balls corrected (R85.5)", "the numbers were scratched")


def test_stake_percentages_and_card_ranges_read_as_printed() -> None:
    assert stake_percent(50, 100) == "50.00%" and stake_percent(1, 3) == "33.33%" and stake_percent(300, 300) == "100.00%"
    assert card_ranges([9, 1, 2, 3, 7, 10]) == "1-3 7 9-10" and card_ranges([]) == ""


# --- Always up to date, and nothing but a projection ---------------------------------------------


@pytest.mark.req("R77.3")
def test_the_minutes_are_made_from_the_journal_as_it_stands_and_the_same_records_give_the_same_bytes(
    tmp_path: Path,
) -> None:
    clock = Clock()
    clock.advance(1_780_000_000)
    journal = Journal(open_database(f"sqlite:///{tmp_path / 'hall.sqlite3'}"), Ed25519PrivateKey.generate(),
                      head=tmp_path / "journal.head")
    played = play(journal, clock)
    game_id = played.game_ids[3]

    def report() -> Report:
        return session_report(build(journal.records()).session(2), hall_name=HALL, timezone=DEFAULT_TIMEZONE)

    before = report()
    assert to_pdf(report()) == to_pdf(before) and to_csv(report()) == to_csv(before)
    for _ in range(3):
        played.hall.draw()
    after = report()
    assert after.journal_range.first_seq == before.journal_range.first_seq
    assert after.journal_range.last_seq == before.journal_range.last_seq + 3 == played.hall.core.seq
    assert after.journal_range.last_hash == journal.last.hash
    drawn = [int(r["ball"]) for r in csv_tables(to_csv(after))["game_1.draw"] if r["event"] == "ball drawn"]
    assert drawn == balls_of(played.records(), game_id) and len(drawn) == 3
    # A closed session's minutes do not move as the journal grows.
    closed = session_report(build(journal.records()).session(1), hall_name=HALL, timezone=DEFAULT_TIMEZONE)
    played.hall.draw()
    again = session_report(build(journal.records()).session(1), hall_name=HALL, timezone=DEFAULT_TIMEZONE)
    assert to_pdf(again) == to_pdf(closed)


def test_the_fold_takes_the_journal_whole_and_in_order() -> None:
    key = Ed25519PrivateKey.generate()
    first = seal(key, None, 0, "system_verified", {"date": "2026-12-01", "results": {}, "passed": True})
    second = seal(key, first, 0, "system_verified", {"date": "2026-12-01", "results": {}, "passed": True})
    with pytest.raises(ReportError, match="record 2 came where record 1 was expected"):
        build([second])
    assert issubclass(ReportError, DomainError)
    book = build([first, second])
    with pytest.raises(ReportError, match="there is no session 1 in the journal; it holds no session yet"):
        book.session(1)
    with pytest.raises(ReportError, match="there is no game 'x' in the journal"):
        book.game("x")


@pytest.mark.parametrize("name", ["minutes.py", "layout.py"])
def test_the_minutes_are_a_pure_projection_apart_from_their_rendering(name: str) -> None:
    """The fold and the layout import no framework: no I/O, no clock, no PDF library (STYLE.md 1)."""
    tree = ast.parse((ROOT / "hall_server" / "reports" / name).read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    frameworks = {"twisted", "sqlalchemy", "reportlab", "click", "os", "pathlib", "time"}
    assert not {m for m in imported if m.split(".")[0] in frameworks}
    assert not {m for m in imported if m.startswith("hall_server.") and not m.startswith("hall_server.reports")}


def test_a_complaint_longer_than_a_page_is_printed_whole_across_pages() -> None:
    text = " ".join(f"word{n}" for n in range(3000))
    table = Table("incidents", "Incidents", (Column("seq", "Record"), Column("text", "Text")), ((1, text),))
    pdf = to_pdf(Report("session", "1", "Long", JournalRange(1, 2, "a" * 64), (table,)))
    shown = " ".join(pdf_strings(pdf))
    assert pdf.count(b"/Type /Page\n") > 1
    assert "word0 " in shown and "word2999" in shown
