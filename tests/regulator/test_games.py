"""The receiver replays each finished game of a hall from its records (R92.7, R88.2, R88.4-5, R85.9).

The records are sealed by the journal code every server uses and fed to a real receiver
(its SQLite store and its own signed journal): a game whose records agree is verified; a
hall that signed records that do not agree - a payment off by a cent, a card paid that
never won, a winner never paid, a ball drawn twice - is a ``replay_differs`` alert, raised
once, and the game is shown with what differs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from protocol.records import REGISTRY
from protocol.regulator_feed import Batch, Hello
from regulator import store as regulator_store
from regulator.receiver import REPLAY_DIFFERS, Receiver
from server_kit.journal.fake import FakeJournal
from server_kit.journal.sql import Journal
from tests.regulator.test_receiver import pem
from tests.regulator.registration import register

HALL = "hall:h1"
GAME = "2026-12-02-s1-g1"
CALLER = {"name": "caller", "role": "seller_caller"}


def ball(number: int, count: int) -> tuple[str, dict[str, Any]]:
    return ("ball_drawn", {"actor": CALLER, "game_id": GAME, "ball": number, "ball_count": count,
                           "completed_line": [], "completed_bingo": [], "entered_by": None})


def won(pattern: str, series: int, card: int, count: int) -> tuple[str, dict[str, Any]]:
    return ("prize_won", {"actor": CALLER, "game_id": GAME, "pattern": pattern, "series": series,
                          "card_number": card, "ball_count": count})


def paid(prize: str, amount: int, carry: int, payments: list[list[Any]], count: int) -> tuple[str, dict[str, Any]]:
    return ("prize_paid", {"actor": CALLER, "game_id": GAME, "prize": prize, "ball_count": count,
                           "amount_cents": amount, "carry_cents": carry, "payments": payments, "desk": "cash:desk-1"})


def game(*, line_payments: list[list[Any]] | None = None, bingo_paid: bool = True,
         balls: list[int] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """A game of the hall: 40 paper cards of series 1001 and 10 virtual cards of 9001 at 50%;
    the line shared by paper card 7 and virtual card 3 (1170 and 585 of 2340, 585 carried),
    the bingo won by paper card 12."""
    drawn = balls or list(range(1, 31))
    entries: list[tuple[str, dict[str, Any]]] = [
        ("sale_opened", {"actor": CALLER, "game_id": GAME, "series": 1001, "first_card": 1, "card_count": 600,
                         "card_set": "hall", "closes_at_ms": None, "game_number": 1, "patterns": ["line", "bingo"],
                         "price_cents": 100, "session": 1}),
        ("paper_cards_sold", {"actor": CALLER, "game_id": GAME, "series": 1001, "first": 1, "last": 40,
                              "count": 40, "amount_cents": 4000, "seller": "ana", "account": "cash:ana",
                              "price_cents": 100}),
        ("virtual_cards_bought", {"actor": {"name": "hall-server", "role": "system"}, "game_id": GAME,
                                  "terminal": "T1", "account": "player:123456", "signed_in": "123456",
                                  "series": 9001, "series_label": "V1", "first": 1, "last": 10, "quantity": 10,
                                  "stake_pct": 50, "stake_cents": 50, "price_cents": 100, "amount_cents": 500,
                                  "request": "r1"}),
    ]
    entries += [ball(b, i) for i, b in enumerate(drawn[:20], 1)]
    entries += [won("line", 1001, 7, 20), won("line", 9001, 3, 20)]
    entries.append(paid("line", 2340, 585, line_payments or [["1001-7", 1170], ["9001-3", 585]], 20))
    entries += [ball(b, i) for i, b in enumerate(drawn[20:], 21)]
    entries.append(won("bingo", 1001, 12, len(drawn)))
    entries.append(("game_closed", {"actor": CALLER, "game_id": GAME, "house_cents": 900, "tax_cents": 300,
                                    "tax_base_cents": 3000}))
    if bingo_paid:
        entries.append(paid("bingo", 8580, 0, [["1001-12", 8580]], len(drawn)))
    entries.append(("cards_collected", {"actor": CALLER, "game_id": GAME, "cards": 50}))
    return entries


def fed(tmp_path: Path, entries: list[tuple[str, dict[str, Any]]]) -> Receiver:
    source = FakeJournal()
    source.append(1_000, [("journal_opened", {"hall": "h1"})])
    for n, (kind, payload) in enumerate(entries, 1):
        echoed = {"type": kind} if REGISTRY[kind].carries_type else {}  # an event repeats its type
        source.append(1_000 + n, [(kind, {**payload, **echoed})])
    engine = regulator_store.open_database(f"sqlite:///{tmp_path / 'regulator.sqlite3'}")
    own = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    own.initialise(1_000, {"receiver": "regulator"})
    receiver = Receiver(regulator_store.Store(engine), clock=lambda: 5_000, journal=own)
    register(receiver, HALL, source.key)
    receiver.hello(Hello(HALL, pem(source.key)), HALL)
    records = list(source.records())
    for at in range(0, len(records), 7):  # in batches, as the link sends them
        receiver.batch(Batch(HALL, tuple(records[at:at + 7])), HALL)
    return receiver


def checked(receiver: Receiver) -> Any:
    games = receiver.games_of(HALL)
    assert games is not None
    (one,) = games.checked
    return one


def differs(receiver: Receiver) -> list[str]:
    return [a.detail for a in receiver.store.alerts() if a.kind == REPLAY_DIFFERS]


@pytest.mark.req("R92.7")
def test_a_game_whose_records_agree_is_verified(tmp_path: Path) -> None:
    receiver = fed(tmp_path, game())
    one = checked(receiver)
    assert one.verified and one.balls == 30 and one.cards_sold == 50
    assert one.prizes == (("line", 2340, 2), ("bingo", 8580, 1))
    assert receiver.store.alerts() == []


def corrected(entries: list[tuple[str, dict[str, Any]]], count: int, misread: int) -> list[tuple[str, dict[str, Any]]]:
    """``entries`` with ball ``count`` first announced as ``misread``, then corrected by both chiefs (R85.5)."""
    at = next(i for i, (kind, p) in enumerate(entries) if kind == "ball_drawn" and p["ball_count"] == count)
    ball_ = entries[at][1]["ball"]
    correction = ("ball_corrected", {"actor": {"name": "teo", "role": "table_chief"}, "game_id": GAME,
                                     "misread": misread, "ball": ball_, "ball_count": count, "reason": "misread",
                                     "signed_by": ["rui", "teo"], "completed_line": [], "completed_bingo": []})
    return [*entries[:at], ball(misread, count), correction, *entries[at + 1:]]


@pytest.mark.req("R85.5", "R92.7")
def test_a_misread_ball_corrected_counts_once_and_its_number_may_come_out_later(tmp_path: Path) -> None:
    """Ball 5 was announced as 30 and corrected to 5; 30, still in the chamber, is drawn as ball 30."""
    receiver = fed(tmp_path, corrected(game(), 5, 30))
    one = checked(receiver)
    assert one.verified and one.balls == 30, one.faults


@pytest.mark.req("R92.7")
@pytest.mark.parametrize(("entries", "said"), [
    (game(line_payments=[["1001-7", 1171], ["9001-3", 584]]),
     "the line of ball 20: paid [1171, 584] with 585 carried; the split by stake is [1170, 585] with 585 carried"),
    (game(line_payments=[["1001-7", 1170], ["1001-8", 585]]),
     "the line of ball 20: card 1001-8 is paid but was not declared a winner of it"),
    (game(bingo_paid=False), "card 1001-12 won the bingo and was never paid"),
    (game(balls=[*range(1, 30), 5]), "ball 5 is drawn twice (as ball 30)"),
    (corrected(game(), 5, 3), "ball 3 is drawn twice (as ball 5)"),
    (game(line_payments=[["1001-7", 1170], ["9001-3", 1170]]),
     "the payments and the carry add up to 2925 cents, not the prize's 2340"),
])
def test_a_game_whose_signed_records_do_not_agree_raises_replay_differs_once(
    tmp_path: Path, entries: list[tuple[str, dict[str, Any]]], said: str
) -> None:
    receiver = fed(tmp_path, entries)
    assert not checked(receiver).verified
    (detail,) = differs(receiver)
    assert said in detail, detail
    # A receiver started again folds the same records: the alert is not raised twice.
    again = Receiver(receiver.store, clock=lambda: 6_000, journal=receiver.journal)
    again.games_of(HALL)
    assert differs(again) == [detail]
    assert [r.type for r in receiver.journal.records()].count("feed_alert_raised") == 1  # type: ignore[union-attr]


@pytest.mark.req("R92.7")
def test_a_read_only_receiver_shows_a_differing_game_and_records_no_alert(tmp_path: Path) -> None:
    """``bingo regulator status`` folds the store with a read-only receiver: a game whose records
    differ is shown with what differs, and nothing is written, not even the alert."""
    receiver = fed(tmp_path, game(bingo_paid=False))
    store = receiver.store
    engine = store.engine
    with engine.begin() as db:
        db.exec_driver_sql("DELETE FROM feed_alert")  # as if the serving receiver had not raised it yet
    journaled = len(list(receiver.journal.records()))  # type: ignore[union-attr]
    reader = Receiver(store, clock=lambda: 7_000, read_only=True)
    games = reader.games_of(HALL)
    assert games is not None
    (one,) = games.checked
    assert not one.verified and any("never paid" in fault for fault in one.faults)
    assert store.alerts() == []
    assert len(list(receiver.journal.records())) == journaled  # type: ignore[union-attr]
