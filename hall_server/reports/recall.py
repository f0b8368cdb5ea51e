"""The hall's last games, as the desks and the terminals recall them (R83.4, R92.3).

:func:`recalled_games` reads the minutes book (:mod:`hall_server.reports.minutes`, the
fold of the journal the minutes and the daily report are made of) and answers with
the last finished games, newest first, as plain data in integer cents: the cards sold
(each series' first and last paper card, the virtual cards), the collection, the balls
in the order drawn, and each prize with its winning cards and where each was bought.
Nothing is counted again: every figure is the one the book folded from the records.

:func:`players_view` is what a terminal shows of it: balls and winners, never who sold
a card, which terminal bought it or whose account it is.

:class:`GameRecall` keeps the book and the last answer: it folds the records committed
since only once a record that can change the answer (a game's end, a prize paid) has
been committed.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from twisted.internet import defer

from hall_server.reports.minutes import GameMinutes, MinutesBook
from protocol.chain import Record
from protocol.errors import DomainError
from protocol.records import declared
from protocol.records.game import GameClosed, GameFinished, GameRefunded
from protocol.records.prizes import PrizePaid
from server_kit.core import RunBlocking

#: How many finished games are recalled at most.
RECALLED = 10
#: The states of a game that is over (the minutes' words for them).
ENDED = ("closed", "finished by hand", "refunded")
#: The records after which the recall may read differently.
CHANGES = (GameClosed, GameFinished, GameRefunded, PrizePaid)
_ENDINGS = ("game closed", "game finished", "game refunded")


class RecallError(DomainError):
    """A request for the recall that cannot be answered; the message says why."""


def checked_count(count: object) -> int:
    """``count`` as a number of games to recall, 1 to :data:`RECALLED`; :class:`RecallError` if not."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= RECALLED:
        raise RecallError(f"the last games are recalled 1 to {RECALLED} at a time, not {count!r}")
    return count


def _bought(game: GameMinutes, card: str) -> dict[str, Any]:
    """Where winning card ``series-number`` was bought: a seller's paper range or a terminal."""
    series, number = (int(part) for part in card.split("-"))
    for sale in game.paper_sales:
        if sale.series == series and sale.first <= number <= sale.last:
            return {"where": "paper", "seller": sale.seller}
    for virtual in game.virtual_cards:
        if virtual.series == series and virtual.card_number == number:
            label = game.virtual_labels.get(series)
            return {"where": "terminal", "terminal": virtual.terminal_id,
                    "shown_as": f"{label}-{number}" if label else card}
    return {"where": "unknown"}


def _patterns(game: GameMinutes) -> dict[tuple[str, int], str]:
    """(card, ball count) -> the pattern it was verified winning."""
    return {(w.card, w.order): w.pattern for w in game.winners}


def _prizes(game: GameMinutes) -> list[dict[str, Any]]:
    patterns = _patterns(game)
    prizes: list[dict[str, Any]] = []
    paid_patterns: set[str] = set()
    for paid in game.prizes:
        pattern = next((patterns[(card, paid.order)] for card, _ in paid.payments if (card, paid.order) in patterns),
                       paid.prize)
        paid_patterns.add(paid.prize)
        prizes.append({
            "prize": paid.prize, "pattern": pattern, "ball_count": paid.order, "ball": paid.ball,
            "amount_cents": paid.amount_cents, "carry_cents": paid.carry_cents, "paid": True,
            "winners": [{"card": card, "cents": cents, **_bought(game, card)} for card, cents in paid.payments],
        })
    announced = {"line": game.line_cents, "bingo": game.bingo_cents}
    for pattern in ("line", "bingo"):  # verified, and still to be paid at the desk
        won = [w for w in game.winners if w.pattern == pattern]
        if won and pattern not in paid_patterns:
            prizes.append({
                "prize": pattern, "pattern": pattern, "ball_count": won[0].order, "ball": won[0].ball,
                "amount_cents": announced[pattern] or 0, "carry_cents": 0, "paid": False,
                "winners": [{"card": w.card, "cents": None, **_bought(game, w.card)} for w in won],
            })
    return prizes


def game_recall(game: GameMinutes) -> dict[str, Any]:
    """One finished game as the desks recall it."""
    ended = next((e for e in reversed(game.draw) if e.event in _ENDINGS), None)
    span = game.journal_range
    return {
        "game_id": game.game_id, "session": game.session, "number": game.number, "state": game.state,
        "opened_ms": game.opened_ms, "ended_ms": ended.time_ms if ended else None,
        "price_cents": game.price_cents,
        "series": [{"series": s.series, "card_set": s.card_set, "first": s.first, "last": s.last, "count": s.count,
                    "amount_cents": s.amount_cents} for s in game.series if s.count],
        "paper_cards": game.physical_cards,
        "virtual_cards": len(game.virtual_cards),
        "cards_sold": game.cards_sold,
        "collection_cents": game.stakes_cents,
        "balls": list(game.drawn),
        "prizes": _prizes(game),
        "journal": {"first_seq": span.first_seq, "last_seq": span.last_seq, "last_hash": span.last_hash},
    }


def recalled_games(book: MinutesBook, count: int = RECALLED) -> list[dict[str, Any]]:
    """The last ``count`` finished games of ``book``, newest first."""
    ended = [game for game in book.games.values() if game.state in ENDED]
    return [game_recall(game) for game in reversed(ended[-checked_count(count):])]


def players_view(games: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a terminal shows of the recall: the balls and the winning cards, nobody's account."""
    return [
        {"game_id": g["game_id"], "number": g["number"], "state": g["state"], "ended_ms": g["ended_ms"],
         "balls": g["balls"],
         "prizes": [{"prize": prize["prize"], "ball_count": prize["ball_count"], "amount_cents": prize["amount_cents"],
                     "cards": [w.get("shown_as", w["card"]) for w in prize["winners"]]} for prize in g["prizes"]]}
        for g in games
    ]


class GameRecall:
    """The recall of the journal's last games, folded off the reactor and kept until it changes.

    The minutes book it reads is kept too: each fold reads only the records committed
    since the last one.  ``records(after)`` reads the committed journal after a sequence
    number; ``run`` runs the fold on a thread (inline in the tests), one fold at a time.
    :meth:`committed` hears every committed record.
    """

    def __init__(self, records: Callable[[int], Iterable[Record]], run: RunBlocking) -> None:
        self.records = records
        self.run = run
        self.generation = 0  # counts the committed records that may change the answer
        self._book = MinutesBook()
        self._folding = defer.DeferredLock()
        self._kept: tuple[int, list[dict[str, Any]]] | None = None

    def committed(self, record: Record) -> None:
        if isinstance(declared(record), CHANGES):
            self.generation += 1
            self._kept = None

    def _fold(self) -> list[dict[str, Any]]:
        book = self._book
        for record in self.records(book.last.seq if book.last is not None else 0):
            book.apply(record)
        return recalled_games(book, RECALLED)

    def games(self, count: int = RECALLED) -> "defer.Deferred[list[dict[str, Any]]]":
        """The last ``count`` finished games, newest first; fails with :class:`RecallError` for a bad count."""
        try:
            wanted = checked_count(count)
        except RecallError:
            return defer.fail()
        kept = self._kept
        if kept is not None and kept[0] == self.generation:
            return defer.succeed(kept[1][:wanted])
        generation = self.generation

        def folded(games: list[dict[str, Any]]) -> list[dict[str, Any]]:
            if generation == self.generation:  # nothing changed it while it was folded
                self._kept = (generation, games)
            return games[:wanted]

        answer: defer.Deferred[list[dict[str, Any]]] = self._folding.run(self.run, self._fold)
        return answer.addCallback(folded)
