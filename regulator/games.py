"""The receiver's check of each finished game of a hall, from the records alone (R92.7, R95).

:class:`HallGames` folds a hall's records as they are stored (``sale_opened``,
``paper_cards_sold``, ``virtual_cards_bought``, ``ball_drawn``, ``ball_corrected``,
``ball_voided`` (older journals), ``prize_won``, ``prize_paid``, ``game_closed``,
``cards_collected``) and, once a closed
game's cards are collected (its last prize is paid after the close), replays what the
records allow without the hall's card library:

* **the draw**: every ball is 1-90, none twice, numbered one after another; a misread ball
  corrected (R85.5) is the last ball, replaced by the ball read again;
* **the winners**: every card paid a line or a bingo was declared a winner of it
  (``prize_won``) no later than the ball it is paid on, and every declared winner is paid;
* **the money**: each line's and bingo's payments are the split of its amount among its
  winning cards by their stakes (``protocol.settlement.split_prize``: a paper card at
  100%, a virtual card at the stake it was bought at), and what the split leaves is the
  carry; a pot prize's payments and carry add up to its amount.

A game whose records do not agree is a ``replay_differs`` alert naming the game and what
differs.  That the winning cards hold the numbers of their pattern is what the audit
export's full replay checks (``bingo audit verify``, with the cards); the receiver has
no card layouts.  Each checked game is kept (the last :data:`KEPT` of each hall) for
the receiver's page: its balls, cards sold, prizes and the verdict.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from protocol.chain import Record
from protocol.errors import DomainError
from protocol.settlement import split_prize

#: The games kept per hall for the page.
KEPT = 10
#: The prizes paid by a split among their winners by stake.
SPLIT_PRIZES = ("line", "bingo")


@dataclass
class _Game:
    game_id: str
    series: int | None = None
    balls: list[int] = field(default_factory=list)
    voided: bool = False
    faults: list[str] = field(default_factory=list)
    stakes: dict[str, int] = field(default_factory=dict)  # virtual card "series-number" -> stake %
    won: dict[str, dict[str, int]] = field(default_factory=dict)  # pattern -> card -> ball count
    paid: list[dict[str, Any]] = field(default_factory=list)
    cards_sold: int = 0
    closed: Record | None = None  # the game_closed record, once there is one


@dataclass(frozen=True)
class CheckedGame:
    """A closed game as the receiver checked it."""

    game_id: str
    closed_seq: int
    closed_ms: int
    balls: int
    cards_sold: int
    prizes: tuple[tuple[str, int, int], ...]  # (prize, amount in cents, winning cards)
    faults: tuple[str, ...]

    @property
    def verified(self) -> bool:
        return not self.faults


class HallGames:
    """One hall's games, folded from its records; ``on_fault(seq, detail)`` for each game that differs."""

    def __init__(self, on_fault: Callable[[int, str], None]) -> None:
        self.on_fault = on_fault
        self.open: dict[str, _Game] = {}
        self.checked: deque[CheckedGame] = deque(maxlen=KEPT)

    def fold(self, records: Iterable[Record]) -> None:
        for record in records:
            self._fold(record)

    def _fold(self, record: Record) -> None:
        p = record.payload
        kind = record.type
        game_id = p.get("game_id")
        if not isinstance(game_id, str):
            return
        if kind == "sale_opened":
            self.open[game_id] = _Game(game_id, p.get("series"))
            return
        game = self.open.get(game_id)
        if game is None:
            return  # a network game's, or one opened before the feed began
        if kind == "paper_cards_sold":
            game.cards_sold += int(p.get("last", 0)) - int(p.get("first", 0)) + 1
        elif kind == "virtual_cards_bought":
            for number in range(int(p["first"]), int(p["last"]) + 1):
                game.stakes[f"{p['series']}-{number}"] = int(p["stake_pct"])
            game.cards_sold += int(p["last"]) - int(p["first"]) + 1
        elif kind == "ball_drawn":
            self._ball(game, int(p["ball"]), int(p["ball_count"]))
        elif kind == "ball_corrected":
            if game.balls and game.balls[-1] == p.get("misread") and len(game.balls) == p.get("ball_count"):
                game.balls[-1] = int(p["ball"])
            else:
                game.faults.append(f"ball {p.get('misread')} is corrected, but it is not the last ball drawn")
        elif kind == "ball_voided":
            game.voided = True
            if p.get("ball") in game.balls:
                game.balls.remove(p["ball"])
        elif kind == "prize_won":
            card = f"{p['series']}-{p['card_number']}"
            game.won.setdefault(str(p["pattern"]), {}).setdefault(card, int(p["ball_count"]))
        elif kind == "prize_paid":
            game.paid.append(dict(p))
        elif kind == "game_refunded":
            del self.open[game_id]  # every stake returned: no prize to check
        elif kind == "game_closed":
            game.closed = record  # its last prize is paid after the close: checked once its cards are collected
        elif kind == "cards_collected" and game.closed is not None:
            del self.open[game_id]
            self._close(game, game.closed)

    def _ball(self, game: _Game, ball: int, count: int) -> None:
        if not 1 <= ball <= 90:
            game.faults.append(f"ball {count} is {ball}, not a ball of 1-90")
        elif ball in game.balls:
            game.faults.append(f"ball {ball} is drawn twice (as ball {count})")
        if not game.voided and count != len(game.balls) + 1:
            game.faults.append(f"ball {ball} is numbered {count}, after {len(game.balls)} balls")
        game.balls.append(ball)

    def _close(self, game: _Game, record: Record) -> None:
        faults = list(game.faults)
        prizes = []
        for paid in game.paid:
            prize, amount, carry = str(paid["prize"]), int(paid["amount_cents"]), int(paid["carry_cents"])
            payments = [(str(card), int(cents)) for card, cents in paid["payments"]]
            prizes.append((prize, amount, len(payments)))
            where = f"game {game.game_id}, the {prize} of ball {paid['ball_count']}"
            if sum(c for _, c in payments) + carry != amount:
                faults.append(f"{where}: the payments and the carry add up to "
                              f"{sum(c for _, c in payments) + carry} cents, not the prize's {amount}")
                continue
            if prize not in SPLIT_PRIZES:
                continue
            winners = game.won.get(prize, {})
            for card, _ in payments:
                if card not in winners:
                    faults.append(f"{where}: card {card} is paid but was not declared a winner of it")
                elif winners[card] > int(paid["ball_count"]):
                    faults.append(f"{where}: card {card} is paid before the ball it won on ({winners[card]})")
            try:
                split = split_prize(amount, [game.stakes.get(card, 100) for card, _ in payments])
            except DomainError as error:
                faults.append(f"{where}: the split cannot be made: {error}")
                continue
            expected = list(split.payments)
            if [c for _, c in payments] != expected or carry != split.carry:
                faults.append(f"{where}: paid {[c for _, c in payments]} with {carry} carried; the split by stake "
                              f"is {expected} with {split.carry} carried")
        for prize in SPLIT_PRIZES:
            paid_cards = {str(card) for paid in game.paid if paid["prize"] == prize for card, _ in paid["payments"]}
            for card in sorted(set(game.won.get(prize, {})) - paid_cards):
                faults.append(f"game {game.game_id}: card {card} won the {prize} and was never paid")
        checked = CheckedGame(game.game_id, record.seq, record.time_ms, len(game.balls), game.cards_sold,
                              tuple(prizes), tuple(faults))
        self.checked.append(checked)
        if faults:
            self.on_fault(record.seq, "; ".join(faults)[:1000])
