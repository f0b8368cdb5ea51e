"""R75.6: the prizes of 15,000 EUR or more are summed per beneficiary, not per card - one person's prizes
in one game (every card, every prize: line, bingo, pots), one account's prizes in one day, video bingo
plays and machine jackpots included - and the beneficiary is identified: an account holder by the
account, a paper winner by the identity document the cashier records before paying.  Played through the
real hall modules; the daily report's beneficiaries are checked against the journal's own payments."""

from __future__ import annotations

import datetime
import json
import random
from pathlib import Path

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock

from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.hall.games import GameModuleError
from hall_server.hall.videobingo import VbRefused, VideoBingoModule, load_machines
from hall_server.reports.daily import hall_day
from hall_server.reports.daily_files import DailyReporter, day_folder
from hall_server.store.database import open_database
from protocol.daily import ACCOUNT, LARGE_WIN_CENTS, PAPER_WINNER, VIDEO_BINGO
from protocol.settlement import PrizeRules
from protocol.records.secrets import secrets_held
from regulator.web import shown_record
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key
from server_kit.pki import Role as CertificateRole
from server_kit.reports.daily import daily_report
from server_kit.reports.document import Cents
from tests.audit.halls import CASHIER, CHIEF, SAFE, SELLERS, SET_CELLS, AuditHall
from tests.hall.conftest import result
from tests.reports.large_win_games import (
    COIN, DAY, PAPER_RULES, WINNER, Steered, draw_to_bingo, new_hall, numbers, paid_to, paper_jackpot_game,
    steered_vb_hall, virtual_game,
)
from tests.reports.test_daily_report import issue_signer
from tests.videobingo.halls import CASHIER as VB_CASHIER
from tests.videobingo.halls import CHIEF as VB_CHIEF
from tests.videobingo.halls import config, machine, player, requests

HALL = "Audit hall"


@pytest.mark.req("R75.6")
def test_R75_6_a_paper_cards_bingo_and_jackpot_in_one_game_are_paid_only_to_an_identified_winner_and_reported(
        tmp_path: Path) -> None:
    """A paper card that wins a 3,000 EUR bingo and a 14,000 EUR jackpot in one game is one winner of
    17,000 EUR: the payment is refused until the cashier records the identity document, and the daily
    report names the identity record and the prizes that make the sum; the inspector sees no document."""
    hall = new_hall(tmp_path, PAPER_RULES)
    game_id = paper_jackpot_game(hall)
    before, cash = len(hall.records()), hall.ledger.balance("cash:safe")
    with pytest.raises(GameModuleError, match=rf"paper card {WINNER} wins .* in game {game_id} .*\(R75.6\)"):
        result(hall.games.pay_prizes(CASHIER, SAFE))
    assert len(hall.records()) == before and hall.ledger.balance("cash:safe") == cash

    (identified,) = result(hall.games.identify_paper_winner(CASHIER, [WINNER], "x-123.456 7", " Joana Puig "))
    assert (identified.type, identified.payload["cards"], identified.payload["document"],
            identified.payload["name"]) == ("prize_winner_identified", [WINNER], "X1234567", "Joana Puig")
    paid = result(hall.games.pay_prizes(CASHIER, SAFE))
    assert {r.payload["prize"] for r in paid if r.type == "prize_paid"} == {"bingo", "jackpot"}
    result(hall.games.collect_cards(CHIEF))
    hall.close_day()

    records = hall.records()
    total = paid_to(records, game_id, {WINNER})
    assert total == identified.payload["total_cents"] and total >= 1_700_000
    assert all(cents < LARGE_WIN_CENTS for r in records if r.type == "prize_paid" for _, cents in r.payload["payments"]
               if r.payload["prize"] != "jackpot")
    report = hall_day(records, DAY, HALL, DEFAULT_TIMEZONE)
    (win,) = report.large_wins()
    assert (win.beneficiary.kind, win.beneficiary.identity_seq, win.game_id, win.total_cents) == (
        PAPER_WINNER, identified.seq, game_id, total)
    assert {(p.prize, p.card) for p in win.prizes} >= {("bingo", WINNER), ("jackpot", WINNER)}
    tables = {t.key: t for t in daily_report(report).tables}
    (row,) = tables["large_wins"].rows
    assert row[2:5] == (PAPER_WINNER, f"identity record {identified.seq}", identified.seq) and row[-1] == Cents(total)
    assert sum(r[6].value for r in tables["large_win_prizes"].rows) == total
    assert "X1234567" not in repr(tables) and "Joana" not in repr(tables)  # the report names the record only

    # The feed carries the record; the receiver shows the document to the regulator, never to an inspector.
    assert secrets_held(identified.type, identified.payload) == []
    shown = shown_record(identified, CertificateRole.inspector)
    assert "document" not in shown["payload"] and "name" not in shown["payload"]
    assert shown["withheld"] == ["document", "name"]
    assert shown_record(identified, CertificateRole.regulator)["payload"]["document"] == "X1234567"


@pytest.mark.req("R75.6")
def test_R75_6_an_identity_is_asked_only_at_the_threshold_and_for_winning_paper_cards(tmp_path: Path) -> None:
    """Below 15,000 EUR no identity is kept (R75.3); a card that won nothing is not a paper winner's; each
    refusal writes nothing, and the payment below the threshold needs no identity."""
    hall = new_hall(tmp_path, PrizeRules(line_bp=1500, bingo_bp=5500))
    result(hall.games.announce_sale(SELLERS[0], 1001))
    result(hall.games.sell_cards(SELLERS[0], 1001, 1, 12))
    result(hall.games.close_sale(CHIEF))
    first = numbers(SET_CELLS[0])
    hall.balls.script = first + [b for b in random.Random(5).sample(range(1, 91), 90) if b not in first]
    draw_to_bingo(hall)
    game = hall.games.current
    winners = set(hall.games.paper_wins(game, hall.games.payments_due(game)))
    loser = next(f"1001-{n}" for n in range(1, 13) if f"1001-{n}" not in winners)
    before = len(hall.records())
    for cards, message in (([WINNER], rf"cards {WINNER} win .* less than 15000.00 EUR: no identity is asked"),
                           ([loser], rf"card {loser} won nothing to pay"),
                           (["1001-x"], r"a card is named SERIES-NUMBER"),
                           ([], r"name the person's winning paper cards")):
        with pytest.raises(GameModuleError, match=message):
            result(hall.games.identify_paper_winner(CASHIER, cards, "X1234567", "Joana Puig"))
    with pytest.raises(GameModuleError, match="give the number of the identity document"):
        result(hall.games.identify_paper_winner(CASHIER, [WINNER], " ", "Joana Puig"))
    assert len(hall.records()) == before
    assert result(hall.games.pay_prizes(CASHIER, SAFE))  # below the threshold: paid without an identity


@pytest.mark.req("R75.6")
def test_R75_6_an_account_whose_two_cards_win_16999_99_in_one_game_is_one_large_win(tmp_path: Path) -> None:
    """Two cards of one account win a 2,999.99 EUR line and a 14,000 EUR bingo: no card reaches 15,000 EUR,
    the account does, and the report names the account, its visitor, and both prizes."""
    rules = PrizeRules(line_bp=1500, bingo_bp=5500, line_minimum_cents=299_999, bingo_minimum_cents=1_400_000)
    hall = new_hall(tmp_path, rules)
    game_id = virtual_game(hall, 0)
    hall.close_day()
    records = hall.records()
    payments = [(r.payload["prize"], card, cents) for r in records if r.type == "prize_paid"
                for card, cents in r.payload["payments"]]
    assert sum(c for _, _, c in payments) == 1_699_999 and all(c < LARGE_WIN_CENTS for _, _, c in payments)
    assert len({card for _, card, _ in payments}) == 2
    (win,) = hall_day(records, DAY, HALL, DEFAULT_TIMEZONE).large_wins()
    assert (win.beneficiary.kind, win.beneficiary.ref, win.beneficiary.visitor, win.game_id, win.total_cents) == (
        ACCOUNT, hall.accounts[0], 1, None, 1_699_999)
    assert sorted((p.game_id, p.prize, p.card, p.cents) for p in win.prizes) == sorted(
        (game_id, prize, card, cents) for prize, card, cents in payments)


@pytest.mark.req("R75.6")
def test_R75_6_one_accounts_prizes_add_up_over_the_day(tmp_path: Path) -> None:
    """An account's prizes of two games of the day, each under 15,000 EUR, are one large win; another
    account's one game is not."""
    rules = PrizeRules(line_bp=1500, bingo_bp=5500, bingo_minimum_cents=800_000)
    hall = new_hall(tmp_path, rules)
    games = [virtual_game(hall, 1), virtual_game(hall, 2), virtual_game(hall, 1)]
    hall.close_day()
    records = hall.records()
    per_game = {g: paid_to(records, g, {card for r in records if r.type == "prize_paid" and r.payload["game_id"] == g
                                        for card, _ in r.payload["payments"]}) for g in games}
    assert all(800_000 <= cents < LARGE_WIN_CENTS for cents in per_game.values())
    (win,) = hall_day(records, DAY, HALL, DEFAULT_TIMEZONE).large_wins()
    assert (win.beneficiary.ref, win.game_id) == (hall.accounts[1], None)
    assert {p.game_id for p in win.prizes} == {games[0], games[2]}
    assert win.total_cents == per_game[games[0]] + per_game[games[2]]


# --- Video bingo (R75.6, R3.5.d) -----------------------------------------------------------------

CREDIT = 800_000  # 8,000 EUR a credit: a winning play of the steered machine pays 16,000 EUR


@pytest.mark.req("R75.6")
def test_R75_6_a_video_bingo_win_is_the_accounts_and_an_anonymous_one_goes_out_only_to_an_account(
        tmp_path: Path) -> None:
    """A play of 16,000 EUR by a signed-in player is the account's large win; the same win on a station
    nobody signed in to cannot go out in cash: it goes to the account of the player who signs in, whose
    holder the report names."""
    clock = Clock()
    clock.advance(1_793_000_000)
    hall, _ = steered_vb_hall(tmp_path, clock, CREDIT)
    ids = requests()
    signed = player(hall, "11111111A", credit=CREDIT)
    result(hall.vb.sign_in("vb-1", 1, signed))
    result(hall.vb.credit_in("vb-1", 1, "account", CREDIT, next(ids)))
    assert result(hall.vb.play("vb-1", 1, 1, False, next(ids)))["won_cents"] == 2 * CREDIT

    # Cash the cashier takes at the desk onto station 2, nobody signed in there.
    result(hall.vb.desk_credit_in(VB_CASHIER, "vb-1", 2, CREDIT, "desk1"))
    assert result(hall.vb.play("vb-1", 2, 1, False, next(ids)))["won_cents"] == 2 * CREDIT
    before = len(list(hall.journal.records()))
    with pytest.raises(VbRefused, match=r"win of 15000.00 EUR or more .* identified .*\(R75.6\)"):
        result(hall.vb.credit_out("vb-1", 2, "cash", next(ids)))
    assert len(list(hall.journal.records())) == before
    later = player(hall, "22222222B")
    result(hall.vb.sign_in("vb-1", 2, later))
    result(hall.vb.credit_out("vb-1", 2, "account", next(ids)))
    assert hall.ledger.balance(f"player:{later}") == 2 * CREDIT

    day = datetime.datetime.fromtimestamp(clock.seconds(), DEFAULT_TIMEZONE).date().isoformat()
    wins = hall_day(list(hall.journal.records()), day, HALL, DEFAULT_TIMEZONE).large_wins()
    assert [(w.beneficiary.kind, w.beneficiary.ref, w.game_id, w.total_cents) for w in wins] == [
        (ACCOUNT, signed, None, 2 * CREDIT), (ACCOUNT, later, None, 2 * CREDIT)]
    assert [(p.source, p.game_id, p.prize, p.card) for w in wins for p in w.prizes] == [
        (VIDEO_BINGO, "vb-1#1", "play", "vb-1.1"), (VIDEO_BINGO, "vb-1#2", "play", "vb-1.2")]


@pytest.mark.req("R75.6")
def test_R75_6_a_machine_win_after_the_sessions_close_is_reported_at_the_next_close(tmp_path: Path) -> None:
    """The machines play on after the session's close: a 16,000 EUR play that evening is not in the report
    the close wrote; the next session's close writes that day's report again with it, and the feed is told."""
    home = tmp_path / "hall"
    home.mkdir()
    issue_signer(tmp_path / "ca", "large-wins-reports", home)
    clock = Clock()
    clock.advance(datetime.datetime(2026, 11, 2, 9, tzinfo=DEFAULT_TIMEZONE).timestamp())
    journal = Journal(open_database(f"sqlite:///{home / 'hall.sqlite3'}"),
                      load_journal_key(home / "keys" / "journal-signing.pem", create=True), head=home / "journal.head")
    hall = AuditHall(journal, clock, PrizeRules(line_bp=1500, bingo_bp=5500))
    vb_config = config(machine("vb-1", credit_cents=CREDIT, stations=1))
    vb = VideoBingoModule(hall.core, hall.ledger, hall.cashier, vb_config, load_machines(vb_config, {"vb-1": COIN}),
                          rng=Steered())
    reporter = DailyReporter(journal, home, HALL, DEFAULT_TIMEZONE, defer.maybeDeferred)
    told: list[int] = []
    reporter.listeners.append(lambda: told.append(1))
    hall.core.observers.append(reporter.record_committed)
    hall.prepare()
    hall.open_day("2026-11-02")
    hall.close_day()
    first = day_folder(home, "2026-11-02")
    assert reporter.written == [first] and reporter.updated == []
    written = (first / "report.json").read_bytes()

    clock.advance(10 * 3600)  # 19:00: the machines play on
    ids = requests()
    result(vb.enrol_station(VB_CHIEF, "vb-1", 1))
    result(vb.sign_in("vb-1", 1, hall.accounts[0]))
    result(vb.credit_in("vb-1", 1, "account", CREDIT, next(ids)))
    assert result(vb.play("vb-1", 1, 1, False, next(ids)))["won_cents"] == 2 * CREDIT
    assert (first / "report.json").read_bytes() == written  # nothing is written until the next close

    clock.advance(14 * 3600)
    hall.open_day("2026-11-03")
    hall.close_day()
    assert reporter.written == [first, day_folder(home, "2026-11-03")] and reporter.updated == [first]
    assert told == [1, 1]
    tables = json.loads((first / "report.json").read_text())["tables"]
    (win,) = tables["large_wins"]["rows"]
    assert (win["beneficiary_kind"], win["beneficiary"], win["total_cents"]) == (ACCOUNT, hall.accounts[0], 2 * CREDIT)
    assert [(p["source"], p["prize"]) for p in tables["large_win_prizes"]["rows"]] == [(VIDEO_BINGO, "play")]
    assert tables["machines"]["rows"][0]["plays"] == 1


@pytest.mark.req("R75.6")
def test_R75_6_a_winners_other_card_joins_their_identity_and_another_document_is_refused(tmp_path: Path) -> None:
    """Card 1001-2 won the line, paid at once; its holder's card 1001-1 wins the bingo and the jackpot.  The
    winner, identified on 1001-1, names 1001-2 with the same document: one person in the report, with both
    cards' prizes; the same card under another document is refused."""
    hall = new_hall(tmp_path, PAPER_RULES)
    game_id = paper_jackpot_game(hall, line_card=2)
    (line,) = [r for r in hall.records() if r.type == "prize_paid"]
    assert line.payload["prize"] == "line" and [c for c, _ in line.payload["payments"]] == ["1001-2"]
    (first,) = result(hall.games.identify_paper_winner(CASHIER, [WINNER], "X1234567", "Joana Puig"))
    with pytest.raises(GameModuleError, match=rf"card {WINNER}'s winner was identified with another document in "
                                              rf"record {first.seq}"):
        result(hall.games.identify_paper_winner(CASHIER, [WINNER, "1001-2"], "Y7654321", "Pere Mas"))
    (again,) = result(hall.games.identify_paper_winner(CASHIER, [WINNER, "1001-2"], "x1234567", "Joana Puig"))
    # A start from a checkpoint knows the game's identities as the journal built them.
    built = hall.games.snapshot()
    assert [g["identified"] for g in built["games"]][-1] == [(WINNER, again.seq, "X1234567"),
                                                             ("1001-2", again.seq, "X1234567")]
    state = json.loads(json.dumps(hall.core.checkpoint()))
    hall.core.restore(state, hall.core.seq, hall.core.last_hash or "")
    assert hall.games.snapshot() == built
    result(hall.games.pay_prizes(CASHIER, SAFE))
    result(hall.games.collect_cards(CHIEF))
    total = paid_to(hall.records(), game_id, {WINNER, "1001-2"})
    assert again.payload["total_cents"] == total > paid_to(hall.records(), game_id, {WINNER})
    (win,) = hall_day(hall.records(), DAY, HALL, DEFAULT_TIMEZONE).large_wins()
    assert (win.beneficiary.identity_seq, win.total_cents) == (first.seq, total)
    assert {(p.prize, p.card) for p in win.prizes} == {("line", "1001-2"), ("bingo", WINNER), ("jackpot", WINNER)}
