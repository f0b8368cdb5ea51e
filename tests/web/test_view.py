"""The consoles' and boards' picture copies the records, and the board shows no staff data."""

import pytest

from hall_server.web.view import HallView
from protocol.chain import Record
from protocol.records import ActorStamp, JournalRecord
from protocol.records.cashier import Posting, PostingReference
from protocol.records.game import (
    BallCorrected,
    BallCorrectionSigned,
    BallDrawn,
    BallVoided,
    GameSuspended,
)
from protocol.records.prizes import CardRefused, ClaimRejected, PrizeClosed, PrizePaid, PrizeWon, ReserveBoostAnnounced
from protocol.records.sale import CardSold, PaperCardsSold, SaleClosed, SaleOpened
from protocol.records.session import BallsCounted, SessionClosed, SessionOpened, SystemVerified
from protocol.records.terminals import VirtualCardsBought

GAME = "2026-11-29-s1-g1"


def records(*made: JournalRecord) -> list[Record]:
    return [Record(seq, 1_000 * seq, one.type, one.to_payload(), "0" * 64, "h", "s") for seq, one in enumerate(made, 1)]


def opened(actor: ActorStamp | None = None) -> SaleOpened:
    return SaleOpened(game_id=GAME, series=7, first_card=1, price_cents=100, patterns=("line", "bingo"), session=1,
                      game_number=1, card_set="classic", card_count=60, actor=actor)


def closed(cards_sold: int, collection_cents: int, line_cents: int, bingo_cents: int) -> SaleClosed:
    return SaleClosed(game_id=GAME, cards_sold=cards_sold, collection_cents=collection_cents, line_cents=line_cents,
                      bingo_cents=bingo_cents, carry_line_cents=0, carry_bingo_cents=0, contributions={},
                      house_cents=0, tax_cents=0, series=((7, cards_sold),))


def drawn(ball: int, ball_count: int, line: tuple[str, ...] = (), bingo: tuple[str, ...] = (),
          game_id: str = GAME) -> BallDrawn:
    return BallDrawn(game_id=game_id, ball=ball, ball_count=ball_count, completed_line=line, completed_bingo=bingo)


def won(series: int, card_number: int, ball_count: int) -> PrizeWon:
    return PrizeWon(game_id=GAME, pattern="line", series=series, card_number=card_number, ball_count=ball_count)


def prize_closed(ball_count: int) -> PrizeClosed:
    return PrizeClosed(game_id=GAME, patterns=("line",), ball_count=ball_count, closed_by="sam")


def corrected(misread: int, ball: int, ball_count: int, reason: str, line: tuple[str, ...],
              actor: ActorStamp | None = None) -> BallCorrected:
    return BallCorrected(game_id=GAME, misread=misread, ball=ball, ball_count=ball_count, reason=reason,
                         signed_by=("rui", "teo"), completed_line=line, actor=actor)


def paper(first: int, last: int) -> PaperCardsSold:
    count = last - first + 1
    return PaperCardsSold(game_id=GAME, series=7, first=first, last=last, count=count, seller="sam",
                          account="cash:sam", amount_cents=100 * count, price_cents=100)


def counted() -> BallsCounted:
    return BallsCounted(stage="opening", ball_set="set-1", counted=90, missing=(), repeated=(), witnesses=("ana",),
                        room_chief="rui")


@pytest.mark.req("R85.5", "R92.11-12")
def test_the_picture_follows_sale_draw_void_claims_and_payments() -> None:
    view = HallView("Sala")
    actor = ActorStamp("sam", "seller_caller")
    for record in records(
        opened(actor),
        CardSold(game_id=GAME, series=7, card_number=1, price_cents=100, stake_cents=100, account="cash:sam"),
        CardSold(game_id=GAME, series=7, card_number=2, price_cents=100, stake_cents=100, account="cash:sam"),
        closed(2, 200, 30, 110),
        drawn(5, 1),
        drawn(17, 2, line=("7-2",)),
        BallVoided(game_id=GAME, ball=17, ball_count=2, voided_by="rui", role="room_chief", reason="misread"),
        drawn(18, 2, line=("7-1",), bingo=("7-2",)),
        ClaimRejected(game_id=GAME, series=7, card_number=9, reason="not sold", ball_count=2),
        won(7, 1, 2),
        PrizePaid(game_id=GAME, prize="line", ball_count=2, amount_cents=30, carry_cents=0, payments=(("7-1", 30),),
                  desk="desk1"),
    ):
        view.apply(record)
    game = view.board()["game"]
    assert game["balls"] == [5, 18] and game["last_ball"] == 18
    assert game["cards_sold"] == 2 and game["prizes"] == {"line": 30, "bingo": 110}
    assert game["completed"] == [
        {"series": 7, "card_number": 2, "pattern": "bingo", "ball_count": 2},
        {"series": 7, "card_number": 1, "pattern": "line", "ball_count": 2},
    ]
    assert game["winners"] == [{"series": 7, "card_number": 1, "pattern": "line", "ball_count": 2, "stake_pct": 100}]
    assert game["paid"] == [{"prize": "line", "amount_cents": 30, "carry_cents": 0,
                             "payments": [{"series": 7, "card_number": 1, "cents": 30}]}]
    assert "rejected" not in game and "sam" not in str(view.board())
    console = view.console()
    assert console["game"]["rejected"] == [{"series": 7, "card_number": 9, "reason": "not sold"}]
    assert console["recent"][0]["type"] == "prize_paid" and view.seq == 11


def test_board_1920x1080_the_picture_gives_each_winners_stake_and_what_the_split_left_to_carry() -> None:
    """The board shows a share beside its card's stake and what went to no card, so the amounts add up."""
    view = HallView("Sala")
    for record in records(
        opened(),
        paper(1, 10),
        VirtualCardsBought(game_id=GAME, terminal="t1", account="player:1", request="r1", series=9001,
                           series_label="V1", first=4, last=6, quantity=3, stake_pct=50, stake_cents=50,
                           amount_cents=150, signed_in="1", price_cents=100),
        closed(13, 1_150, 9_597, 500),
        drawn(5, 1),
        won(7, 5, 1),
        won(9001, 5, 1),
        PrizePaid(game_id=GAME, prize="line", ball_count=1, amount_cents=9_597, carry_cents=2_400,
                  payments=(("7-5", 4_798), ("9001-5", 2_399)), desk="desk1"),
    ):
        view.apply(record)
    game = view.board()["game"]
    assert [(w["series"], w["card_number"], w["stake_pct"]) for w in game["winners"]] == [(7, 5, 100), (9001, 5, 50)]
    (paid,) = game["paid"]
    assert paid["carry_cents"] + sum(p["cents"] for p in paid["payments"]) == paid["amount_cents"] == 9_597


@pytest.mark.req("R85.6", "R85.5", "R82.8")
def test_the_picture_shows_the_claim_pause_a_correction_waiting_and_done_and_a_refused_card() -> None:
    view = HallView("Sala", claim_wait_s=12)
    chief, table = ActorStamp("rui", "room_chief"), ActorStamp("teo", "table_chief")
    steps = records(
        opened(),
        closed(2, 200, 30, 110),
        drawn(5, 1),
        BallCorrectionSigned(game_id=GAME, ball_count=1, misread=5, corrected=50, reason="read 50 as 5", signer="rui",
                             role="room_chief").stamped(chief),
        corrected(5, 50, 1, "read 50 as 5", ("7-1",), table),
        CardRefused(game_id=GAME, series=7, card_number=2, reason="torn", refused_by="teo", ball_count=1),
        won(7, 1, 1),
        prize_closed(1),
    )
    for record in steps[:4]:
        view.apply(record)
    assert view.console()["game"]["correction"] == {"ball_count": 1, "misread": 5, "corrected": 50,
                                                    "reason": "read 50 as 5", "signer": "rui", "role": "room_chief"}
    assert "correction" not in view.board()["game"], "a correction waiting is for the staff"
    view.apply(steps[4])
    game = view.console()["game"]
    assert game["balls"] == [50] and game["correction"] is None and game["corrections"][0]["signed_by"] == ["rui", "teo"]
    assert game["completed"] == [{"series": 7, "card_number": 1, "pattern": "line", "ball_count": 1}]
    view.apply(steps[5])
    view.apply(steps[6])
    board = view.board()["game"]
    assert board["pause"] == {"patterns": ["line"], "ball_count": 1, "balls_drawn": 1, "since_ms": 7_000}
    assert view.console()["claim_wait_s"] == 12
    assert view.console()["game"]["refused"] == [{"series": 7, "card_number": 2, "reason": "torn", "refused_by": "teo"}]
    view.apply(steps[7])
    assert view.board()["game"]["pause"] is None


def test_records_of_another_game_or_module_leave_the_game_alone() -> None:
    view = HallView("Sala")
    for record in records(
        opened(),
        drawn(5, 1, game_id="another"),
        Posting(debits=(("cash:desk1", 100),), credits=(("player:1", 100),), reason="credit loaded",
                reference=PostingReference(game_id=None, card=None, event_seq=None)),
    ):
        view.apply(record)
    assert view.board()["game"]["balls"] == [] and view.seq == 3


@pytest.mark.req("R91")
def test_the_board_tells_the_players_of_a_reserve_boost_and_a_later_announcement_replaces_it() -> None:
    view = HallView("Sala")
    boost = {"allowance_cents": 300, "boosted_before_cents": 0, "reserve_cents": 1_000}
    for record in records(
        opened(),
        ReserveBoostAnnounced(game_id=GAME, line_cents=200, bingo_cents=100, **boost),
        ReserveBoostAnnounced(game_id="another", line_cents=5, bingo_cents=5, **boost),
        ReserveBoostAnnounced(game_id=GAME, line_cents=100, bingo_cents=150, **boost),
    ):
        view.apply(record)
    assert view.board()["game"]["reserve_boost"] == {"line_cents": 100, "bingo_cents": 150}


@pytest.mark.req("R82.4", "R82.5")
def test_the_series_cards_sold_are_those_of_committed_records_over_the_catalogs_count() -> None:
    """A picture sent after record N showed a series' cards sold by a command decided and not yet committed
    (the games module counts those): a hall killed then restarted showed fewer.  The picture now takes the
    count from the records it folded, over the catalog's count of cards sold before the hall kept the series."""
    catalog = [{"series": 7, "card_set": "classic", "price_cents": 100, "card_count": 60, "last_sold": 0},
               {"series": 8, "card_set": "classic", "price_cents": 100, "card_count": 60, "last_sold": 12}]
    view = HallView("Sala", series=lambda: [dict(one) for one in catalog])
    for record in records(opened(), paper(1, 6), paper(7, 9)):
        view.apply(record)
    assert [(one["series"], one["last_sold"]) for one in view.console()["series"]] == [(7, 9), (8, 12)]


@pytest.mark.req("R87.a")
def test_desk_row_chips_end_when_the_line_is_won() -> None:
    """Once the line is won, a row completed by a later ball is no prize: the desks list no ROW."""
    view = HallView("Sala")
    steps = records(
        opened(),
        closed(3, 300, 30, 110),
        drawn(5, 1, line=("7-1",)),
        won(7, 1, 1),
        prize_closed(1),
        drawn(6, 2, line=("7-2",), bingo=("7-3",)),
        corrected(6, 60, 2, "read 60 as 6", ("7-2",)),
    )
    for record in steps[:5]:
        view.apply(record)
    assert [c["pattern"] for c in view.console()["game"]["completed"]] == ["line"], "the line's own ball lists it"
    view.apply(steps[5])
    assert view.console()["game"]["completed"] == [{"series": 7, "card_number": 3, "pattern": "bingo", "ball_count": 2}]
    view.apply(steps[6])
    assert view.console()["game"]["completed"] == [], "a corrected ball lists no row either"


def test_desk_faults_of_session_1_are_not_listed_in_session_2() -> None:
    view = HallView("Sala")
    for record in records(
        counted(),
        SessionOpened(session=1, date="2026-11-29"),
        GameSuspended(game_id=GAME, state="drawing", reason="blower jammed"),
        SessionClosed(session=1, games=1),
        SystemVerified(date="2026-11-30", passed=False, results={"clock": "behind"}),
        counted(),
        SessionOpened(session=2, date="2026-11-30"),
    ):
        view.apply(record)
    faults = view.console()["faults"]
    assert view.console()["session"]["number"] == 2
    assert [f["type"] for f in faults] == ["system_verified"], "only the fault since session 1 closed"
