"""The video bingo machines in the hall server (R3.5.d, R73.7, R73.9, REGULATION.md section 9):
plays committed in one record, meters folded from the journal, the ledger in integer cents,
the hall's rules and the jackpots.  A real SQLite journal, run inline on a task.Clock."""

from __future__ import annotations

import pytest
from twisted.internet.task import Clock

from hall_server.hall.responsible import ResponsiblePlayModule
from hall_server.hall.videobingo import JackpotRule, VbConfigError, VbRefused, load_machines, share
from protocol.records import build
from protocol.videobingo.paytable import load_paytable
from server_kit.core import NotAllowed
from server_kit.journal.sql import Journal
from tests.hall.conftest import result
from tests.videobingo.halls import (
    CASHIER,
    CHIEF,
    CLASSIC,
    Hall,
    build_hall,
    config,
    count,
    insert_cash,
    machine,
    player,
    requests,
)
from tests.videobingo.paytables import EXAMPLES


@pytest.mark.req("R3.5.d")
def test_a_play_is_committed_in_one_record_with_its_postings_before_it_is_answered(hall: Hall) -> None:
    """R3.5.d: the server deals and draws; cards, balls, outcome and meters after are one vb_play record."""
    insert_cash(hall, "vb-1", 1, 1_000, "c1")
    shown = result(hall.vb.play("vb-1", 1, 4, False, "p1"))
    plays = [r for r in hall.journal.records() if r.type == "vb_play"]
    assert len(plays) == 1
    record = plays[0].payload
    assert shown["seq"] == plays[0].seq and shown["cards"] == [list(c) for c in record["cards"]]
    assert shown["balls"] == list(record["balls"]) and len(record["balls"]) == 30
    outcome = hall.vb.machines["vb-1"].game.outcome(record["cards"], record["balls"])
    assert record["won_cents"] == outcome.won * 20 and record["stake_cents"] == 80
    assert record["meters"]["stakes"] == 80 and record["meters"]["plays"] == 1
    assert shown["credit_after_cents"] == 1_000 - 80 + outcome.won * 20 == hall.vb.credit("vb-1", 1)
    assert hall.ledger.ledger.total() == 0
    assert hall.vb.reconcile() == []


@pytest.mark.req("R3.5.d")
def test_a_play_with_no_credit_is_refused_and_changes_nothing(hall: Hall) -> None:
    before = count(hall.journal)
    with pytest.raises(VbRefused, match=r"^Not enough credit: 1 card costs 0.20 EUR and the credit is 0.00 EUR\. Add credit, or play fewer cards\.$") as refused:
        result(hall.vb.play("vb-1", 1, 1, False, "p1"))
    assert refused.value.code == "no_credit"
    insert_cash(hall, "vb-1", 1, 50, "c1")
    with pytest.raises(VbRefused, match="3 cards cost 0.60 EUR and the credit is 0.50 EUR"):
        result(hall.vb.play("vb-1", 1, 3, False, "p2"))
    assert count(hall.journal) == before + 2  # the credit in and its posting, nothing else
    assert hall.vb.meters("vb-1").plays == 0


@pytest.mark.req("R3.5.d")
@pytest.mark.parametrize("cards, why", [(5, "a play holds 1 to 4 cards on this machine, not 5"),
                                        (0, "a play holds 1 to 4 cards on this machine, not 0"),
                                        (True, "the number of cards is a whole number, not True"),
                                        ("2", "the number of cards is a whole number, not '2'")])
def test_a_play_with_more_cards_than_allowed_is_refused(hall: Hall, cards: object, why: str) -> None:
    insert_cash(hall, "vb-1", 1, 1_000, "c1")
    before = count(hall.journal)
    with pytest.raises(VbRefused, match=why) as refused:
        result(hall.vb.play("vb-1", 1, cards, False, "p1"))
    assert refused.value.code == "cards" and count(hall.journal) == before


def test_cards_are_kept_from_the_previous_play_when_the_player_asks(hall: Hall) -> None:
    insert_cash(hall, "vb-1", 1, 1_000, "c1")
    with pytest.raises(VbRefused, match="there is no previous play on this station; take new cards"):
        result(hall.vb.play("vb-1", 1, 2, True, "p0"))
    first = result(hall.vb.play("vb-1", 1, 2, False, "p1"))
    kept = result(hall.vb.play("vb-1", 1, 2, True, "p2"))
    assert kept["cards"] == first["cards"] and kept["balls"] != first["balls"]
    with pytest.raises(VbRefused, match=r"the previous play held 2 card\(s\), not 3"):
        result(hall.vb.play("vb-1", 1, 3, True, "p3"))
    fresh = result(hall.vb.play("vb-1", 1, 2, False, "p4"))
    assert fresh["cards"] != first["cards"]


def test_a_request_sent_again_gets_its_first_answer_and_is_never_charged_twice(hall: Hall, journal: Journal,
                                                                              clock: Clock) -> None:
    insert_cash(hall, "vb-1", 1, 1_000, "c1")
    again = insert_cash(hall, "vb-1", 1, 1_000, "c1")
    assert again["repeated"] and hall.vb.credit("vb-1", 1) == 1_000
    first = result(hall.vb.play("vb-1", 1, 4, False, "p1"))
    credit = hall.vb.credit("vb-1", 1)
    # After a restart the station's answers are the journal's.
    rebuilt = build_hall(journal, clock, config())
    repeat = result(rebuilt.vb.play("vb-1", 1, 4, False, "p1"))
    assert repeat["repeated"] and {**repeat, "repeated": False} == {**first, "repeated": False}
    assert rebuilt.vb.credit("vb-1", 1) == credit and rebuilt.vb.meters("vb-1").plays == 1


def test_the_meters_only_increase_survive_a_restart_and_agree_with_the_ledger(hall: Hall, journal: Journal,
                                                                             clock: Clock) -> None:
    number = player(hall, credit=5_000)
    result(hall.vb.sign_in("vb-1", 2, number))
    insert_cash(hall, "vb-1", 1, 2_000, "c1")
    result(hall.vb.credit_in("vb-1", 2, "account", 3_000, "a1"))
    ids = requests()
    seen = []
    for _ in range(30):
        for station in (1, 2):
            if hall.vb.credit("vb-1", station) >= 80:
                result(hall.vb.play("vb-1", station, 4, False, next(ids)))
                seen.append(hall.vb.meters("vb-1").to_dict())
    for earlier, later in zip(seen, seen[1:]):
        assert all(later[k] >= earlier[k] for k in earlier)
    out = result(hall.vb.credit_out("vb-1", 2, "account", "o1"))
    meters = hall.vb.meters("vb-1")
    assert meters.credits_in == 5_000 and meters.cash_in == 2_000
    assert meters.credits_out == out["amount_cents"] and meters.cash_out == 0
    assert hall.vb.credit("vb-1", 2) == 0 and hall.cashier.balance(number) == 2_000 + out["amount_cents"]
    assert hall.vb.reconcile() == []
    rebuilt = build_hall(journal, clock, config())
    assert rebuilt.vb.meters("vb-1") == meters and rebuilt.vb.reconcile() == []
    answer = result(rebuilt.vb.reconcile_command(CHIEF))
    assert answer["agree"] is True and answer["differences"] == []
    shown = result(rebuilt.vb.meters_command(CHIEF, "vb-1"))
    assert shown["vb-1"]["plays"] == meters.plays and shown["vb-1"]["state"] == "playing"


def test_a_machine_whose_meters_cannot_be_read_does_not_play(hall: Hall, journal: Journal, clock: Clock) -> None:
    """A record whose meters disagree with the journal's fold: the machine refuses to play, the others go on."""
    insert_cash(hall, "vb-1", 1, 1_000, "c1")
    meters = {**hall.vb.meters("vb-1").to_dict(), "credits_in": 999_999}
    forged = build("vb_credit_in", {"machine": "vb-1", "station": 1, "source": "cash", "account": None, "amount": 1,
                                    "request": "x", "meters": meters})
    journal.commit(journal.seal(hall.core.now_ms(), [forged], journal.last))
    rebuilt = build_hall(journal, clock, config())
    with pytest.raises(VbRefused, match="machine vb-1 does not play: its meters cannot be read") as refused:
        result(rebuilt.vb.play("vb-1", 1, 1, False, "p1"))
    assert refused.value.code == "meters"
    assert "meters cannot be read" in result(rebuilt.vb.meters_command(CHIEF, ""))["vb-1"]["state"]


def test_the_last_ten_plays_are_recalled_latest_first(hall: Hall) -> None:
    insert_cash(hall, "vb-1", 1, 5_000, "c1")
    numbers = [result(hall.vb.play("vb-1", 1, 1, False, f"p{n}"))["number"] for n in range(12)]
    recalled = result(hall.vb.recall_command(CHIEF, "vb-1"))
    assert [play["number"] for play in recalled] == numbers[::-1][:10]
    with pytest.raises(NotAllowed):
        result(hall.vb.recall_command(CASHIER, "vb-1"))


@pytest.mark.req("R3.5.d")
def test_a_machine_beyond_the_seat_ratio_is_not_admitted_and_refuses_to_play(journal: Journal, clock: Clock) -> None:
    """R3.5.d: one machine per five seats of traditional bingo; 12 seats allow two machines."""
    machines = tuple(machine(f"vb-{n}") for n in (1, 2, 3))
    hall = build_hall(journal, clock, config(*machines, seats=12))
    for n in (1, 2, 3):
        result(hall.vb.enrol_station(CHIEF, f"vb-{n}", 1))
    insert_cash(hall, "vb-2", 1, 100, "c1")
    result(hall.vb.play("vb-2", 1, 1, False, "p1"))
    with pytest.raises(VbRefused, match=r"machine vb-3 is beyond the hall's ratio: 12 seats of traditional bingo "
                                        r"allow 2 machine\(s\), one per 5 seats \(R3.5.d\)") as refused:
        insert_cash(hall, "vb-3", 1, 100, "c1")
    assert refused.value.code == "R3.5.d"


@pytest.mark.req("R73.9")
def test_a_machine_of_more_than_fifteen_stations_is_not_admitted(journal: Journal, clock: Clock) -> None:
    hall = build_hall(journal, clock, config(machine("vb-1", stations=16), machine("vb-2", stations=15)))
    with pytest.raises(VbRefused, match=r"machine vb-1 has 16 stations; a multi-station machine has at most 15 \(R73.9\)") as refused:
        hall.vb.playable("vb-1")
    assert refused.value.code == "R73.9"
    assert hall.vb.playable("vb-2").machine_id == "vb-2"


@pytest.mark.req("R73.7")
@pytest.mark.parametrize("zone", ["bingo room", " ", ""])
def test_a_machine_not_in_a_zone_apart_is_not_admitted(journal: Journal, clock: Clock, zone: str) -> None:
    hall = build_hall(journal, clock, config(machine("vb-1", zone=zone)))
    with pytest.raises(VbRefused, match=r"machines stand in a space apart from the bingo room 'bingo room' \(R73.7\)") as refused:
        hall.vb.playable("vb-1")
    assert refused.value.code == "R73.7"


def test_a_paytable_under_the_minimum_return_is_not_admitted(journal: Journal, clock: Clock) -> None:
    """REGULATION.md section 9: the paytable returns at least 80% of the stakes."""
    poor = load_paytable((EXAMPLES / "vb-formats-example.json").read_bytes())
    hall = build_hall(journal, clock, config(), {"vb-1": poor})
    with pytest.raises(VbRefused, match=r"machine vb-1's paytable returns 8.26%, under the minimum of 80.00%"):
        hall.vb.playable("vb-1")
    strict = build_hall(journal, clock, config(min_rtp_bp=8400))
    with pytest.raises(VbRefused, match=r"returns 83.55%, under the minimum of 84.00%"):
        strict.vb.playable("vb-1")


def test_one_player_is_signed_in_on_one_station_only(hall: Hall) -> None:
    """REGULATION.md section 9: one player may not hold two machines while others wait (configurable)."""
    number = player(hall)
    result(hall.vb.sign_in("vb-1", 1, number))
    with pytest.raises(VbRefused, match="you are signed in on station 1 of machine vb-1") as refused:
        result(hall.vb.sign_in("vb-1", 2, number))
    assert refused.value.code == "one_station"
    result(hall.vb.sign_out("vb-1", 1))
    result(hall.vb.sign_in("vb-1", 2, number))


def test_with_the_rule_off_a_player_may_sign_in_on_two_stations(journal: Journal, clock: Clock) -> None:
    hall = build_hall(journal, clock, config(one_station_per_player=False))
    result(hall.vb.enrol_station(CHIEF, "vb-1", 1))
    result(hall.vb.enrol_station(CHIEF, "vb-1", 2))
    number = player(hall)
    result(hall.vb.sign_in("vb-1", 1, number))
    result(hall.vb.sign_in("vb-1", 2, number))


def test_credit_from_the_account_needs_a_signed_in_player_with_the_credit(hall: Hall) -> None:
    with pytest.raises(VbRefused, match="sign in with your account and PIN"):
        result(hall.vb.credit_in("vb-1", 1, "account", 100, "a1"))
    number = player(hall, credit=300)
    result(hall.vb.sign_in("vb-1", 1, number))
    with pytest.raises(VbRefused, match="your account holds 3.00 EUR; it cannot put 5.00 EUR on the machine"):
        result(hall.vb.credit_in("vb-1", 1, "account", 500, "a2"))
    for amount, why in ((0, "a credit in is 1 to"), (2.5, "not 2.5"), (True, "not True")):
        with pytest.raises(VbRefused, match=why):
            result(hall.vb.credit_in("vb-1", 1, "account", amount, "a3"))
    with pytest.raises(VbRefused, match="puts credit in as cash \\(its cash device's signed note\\) or from the "
                                        "account, not 'card'"):
        result(hall.vb.credit_in("vb-1", 1, "card", 100, "a4"))


def test_cash_out_in_cash_is_bounded_by_the_cash_box(hall: Hall) -> None:
    number = player(hall, credit=1_000)
    result(hall.vb.sign_in("vb-1", 1, number))
    result(hall.vb.credit_in("vb-1", 1, "account", 1_000, "a1"))
    with pytest.raises(VbRefused, match="the machine's cash box holds 0.00 EUR, less than the 10.00 EUR to pay") as refused:
        result(hall.vb.credit_out("vb-1", 1, "cash", "o1"))
    assert refused.value.code == "cash_box"
    result(hall.vb.credit_out("vb-1", 1, "account", "o2"))
    with pytest.raises(VbRefused, match="there is no credit on this station to pay out"):
        result(hall.vb.credit_out("vb-1", 1, "account", "o3"))
    assert hall.cashier.balance(number) == 1_000 and hall.vb.reconcile() == []


def test_the_jackpot_share_of_the_stakes_loses_and_makes_up_no_cent() -> None:
    total = 0
    stakes = 0
    for stake in [20, 40, 60, 80, 20, 20, 80] * 50:
        total += share(stakes, stakes + stake, 150)
        stakes += stake
    assert total == stakes * 150 // 10000


@pytest.mark.req("R3.5.d")
def test_jackpots_are_fed_held_for_players_won_and_paid_once(journal: Journal, clock: Clock) -> None:
    """The machine jackpot and the linked superjackpot: fed from the stakes, held in vbjackpot accounts, won by
    the configured pattern within the configured balls, paid onto the station's credit; meters agree."""
    machines = (machine("vb-1", jackpot=JackpotRule(200, "corners", 12), linked=True),
                machine("vb-2", linked=True))
    hall = build_hall(journal, clock, config(*machines, superjackpot=JackpotRule(100, "top line", 14)))
    for m in ("vb-1", "vb-2"):
        result(hall.vb.enrol_station(CHIEF, m, 1))
        insert_cash(hall, m, 1, 50_000, "c1")
        insert_cash(hall, m, 1, 50_000, "c2")
    won = {"machine": 0, "super": 0}
    ids = requests()
    for _ in range(150):
        for m in ("vb-1", "vb-2"):
            before_machine, before_super = hall.vb.jackpot(m), hall.vb.jackpot("super")
            shown = result(hall.vb.play(m, 1, 4, False, next(ids)))
            for win in shown["jackpots"]:
                won[win["which"]] += 1
                if win["which"] == "machine":
                    assert m == "vb-1" and win["cents"] >= before_machine and hall.vb.jackpot(m) == 0
                else:
                    assert win["cents"] >= before_super and hall.vb.jackpot("super") == 0
    assert won["machine"] and won["super"]
    assert hall.vb.jackpot("vb-2") == 0
    assert hall.vb.reconcile() == [] and hall.ledger.ledger.total() == 0
    meters = hall.vb.meters("vb-1")
    assert meters.jackpot_contributions == meters.stakes * 200 // 10000 + meters.stakes * 100 // 10000


def test_a_jackpot_pattern_must_be_in_the_paytable() -> None:
    bad = config(machine("vb-1", jackpot=JackpotRule(100, "full house", 10)))
    with pytest.raises(VbConfigError, match="the jackpot's pattern 'full house' is not in its paytable"):
        load_machines(bad, {"vb-1": CLASSIC})


def test_retiring_a_machine_moves_its_pending_jackpot_to_one_of_the_same_model_and_stake(
        journal: Journal, clock: Clock) -> None:
    rule = JackpotRule(500, "bingo", 30)
    machines = (machine("vb-1", jackpot=rule), machine("vb-2", credit_cents=50, jackpot=rule),
                machine("vb-3", jackpot=rule))
    hall = build_hall(journal, clock, config(*machines))
    result(hall.vb.enrol_station(CHIEF, "vb-1", 1))
    insert_cash(hall, "vb-1", 1, 1_000, "c1")
    for n in range(5):
        result(hall.vb.play("vb-1", 1, 4, False, f"p{n}"))
    with pytest.raises(VbRefused, match="cash it out first"):
        result(hall.vb.retire(CHIEF, "vb-1", "screen broken"))
    result(hall.vb.sign_in("vb-1", 1, player(hall)))
    result(hall.vb.credit_out("vb-1", 1, "account", "o1"))
    pending = hall.vb.jackpot("vb-1")
    assert pending == 5 * 80 * 500 // 10000
    records = result(hall.vb.retire(CHIEF, "vb-1", "screen broken"))
    assert records[0].payload["jackpot_to"] == "vb-3" and records[0].payload["jackpot_cents"] == pending
    assert hall.vb.jackpot("vb-1") == 0 and hall.vb.jackpot("vb-3") == pending
    with pytest.raises(VbRefused, match=r"machine vb-1 is retired \(screen broken\)"):
        hall.vb.playable("vb-1")
    assert hall.vb.reconcile() == []
    rebuilt = build_hall(journal, clock, config(*machines))
    assert rebuilt.vb.jackpot("vb-3") == pending and "vb-1" in rebuilt.vb.state.retired


def test_a_session_does_not_close_while_the_meters_disagree_with_the_ledger(hall: Hall) -> None:
    assert hall.vb.closing_check() is None
    insert_cash(hall, "vb-1", 1, 1_000, "c1")
    hall.vb.state.meters["vb-1"].credits_in += 1  # as a meter that lost its memory would
    why = hall.vb.closing_check()
    assert why is not None and "stations' credit is 10.00 EUR in the ledger, 10.01 EUR by the meters" in why


def test_a_checkpoint_of_the_machines_restores_what_the_journal_replays(hall: Hall, journal: Journal,
                                                                       clock: Clock) -> None:
    insert_cash(hall, "vb-1", 1, 2_000, "c1")
    for n in range(12):
        result(hall.vb.play("vb-1", 1, 2, n % 3 == 2, f"p{n}"))
    state = hall.core.checkpoint()
    restored = build_hall(journal, clock, config(), recover=False)
    restored.core.restore(state, hall.core.seq, hall.core.last_hash or "")
    assert restored.vb.state == hall.vb.state
    assert restored.vb.recall("vb-1") == hall.vb.recall("vb-1")


@pytest.mark.req("R97.2")
def test_a_players_daily_limit_and_self_exclusion_hold_on_the_machines(hall: Hall) -> None:
    """R97.2: credit taken from the account onto a machine is the day's spending; an excluded player cannot sign in."""
    responsible = ResponsiblePlayModule(hall.core, hall.cashier, hall.cashier.admission, None)
    hall.vb.credit_checks.append(responsible.purchase_refusal)
    number = player(hall, credit=5_000)
    result(responsible.set_limit(CASHIER, number, 1_000))
    result(hall.vb.sign_in("vb-1", 1, number))
    result(hall.vb.credit_in("vb-1", 1, "account", 600, "a1"))
    with pytest.raises(VbRefused, match=r"you have spent 6.00 EUR today, so you may spend 4.00 EUR more \(R97.2\)") as refused:
        result(hall.vb.credit_in("vb-1", 1, "account", 500, "a2"))
    assert refused.value.code == "responsible_play"
    result(hall.vb.sign_out("vb-1", 1))
    result(responsible.exclude_document(CASHIER, "Anna Vidal", "identity card", "12345678A", "1980-01-01", 30))
    with pytest.raises(VbRefused, match=r"you excluded yourself from play until .* \(R97.2\)"):
        result(hall.vb.sign_in("vb-1", 1, number))
