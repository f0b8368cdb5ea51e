"""What the regulator may consult of the central server's records (R95.3): read-only answers.

:class:`CentralConsultation` answers a query path (the table of :data:`QUERIES`) with
plain data in integer cents, folded from the committed journal off the reactor: it keeps
the network games folded so far and reads only the records committed since the last
query.  Nothing here changes anything: the web resource
(:func:`server_kit.web.consultation.consultation_resource`) journals each query
(``regulator_consulted``) before it sends the answer (``docs/central-server.md``).

The central server holds no player account (each hall holds its players' money); what
it holds of the money is each purchase, each stake returned and each prize payment,
with the hall, the terminal and the player's reference the hall gave: ``movements``
answers those, filtered by hall, terminal, player or game.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping

from twisted.internet import defer

from central_server.module import game_record
from protocol.chain import Record
from protocol.records import ACTOR_KEY, RecordError
from protocol.records.central import (
    GAME_RECORDS,
    CentralBallDrawn,
    CentralCardWon,
    CentralGameClosed,
    CentralGameNotPlayed,
    CentralGameScheduled,
    CentralPrizeWon,
    CentralPurchaseConfirmed,
    CentralPurchaseRefused,
    CentralRecord,
    CentralSaleClosed,
    CentralSaleOpened,
    CentralStakeReturned,
    CentralTerminalFailed,
)
from server_kit.core import RunBlocking
from server_kit.web.consultation import PAGE, ConsultationError, number, records_page

#: The queries, as the API's index lists them.
QUERIES = {
    "games": "every network game: state, card price, cards sold, sales, prizes paid, balls, halls",
    "games/<game_id>": "one network game: its terms, every purchase and refusal with its hall and terminal, the "
                       "stakes returned, the balls, the prizes and every winning card with where it was bought",
    "halls": "each member hall's purchases, cards, stakes, stakes returned and prizes paid",
    "movements?hall=H&terminal=T&player=P&game=G&after=SEQ&limit=N":
        f"every movement of money (stake charged, stake returned, prize paid), optionally of one hall, terminal, "
        f"player or game, {PAGE} at most, with the total of all that match",
    "terminals": "every terminal that bought a card: its hall, purchases, cards, stakes, prizes, failures",
    "operator-actions?after=SEQ&limit=N": f"the records the operator's commands made, {PAGE} at most",
    "records?after=SEQ&limit=N&type=T": f"any record of the journal, {PAGE} at most, optionally of one type",
}
_ID = re.compile(r"[A-Za-z0-9_.:/-]{1,64}")
_FILTERS = ("hall", "terminal", "player", "game")
_STATES = {
    CentralGameScheduled: "scheduled", CentralSaleOpened: "selling", CentralSaleClosed: "drawing",
    CentralGameClosed: "closed", CentralGameNotPlayed: "not played",
}


@dataclass
class _Game:
    """One network game as its records say, in the order they were committed."""

    game_id: str
    config: Mapping[str, Any]
    first_seq: int
    last_seq: int = 0
    state: str = "scheduled"
    purchases: list[tuple[Record, CentralPurchaseConfirmed]] = field(default_factory=list)
    refused: list[tuple[Record, CentralPurchaseRefused]] = field(default_factory=list)
    returned: list[tuple[Record, CentralStakeReturned]] = field(default_factory=list)
    failed: list[tuple[Record, CentralTerminalFailed]] = field(default_factory=list)
    sale: CentralSaleClosed | None = None
    balls: list[int] = field(default_factory=list)
    prizes: list[CentralPrizeWon] = field(default_factory=list)
    wins: list[tuple[Record, CentralCardWon]] = field(default_factory=list)

    def apply(self, stored: Record, event: CentralRecord) -> None:
        self.last_seq = stored.seq
        self.state = _STATES.get(type(event), self.state)
        if isinstance(event, CentralPurchaseConfirmed):
            self.purchases.append((stored, event))
        elif isinstance(event, CentralPurchaseRefused):
            self.refused.append((stored, event))
        elif isinstance(event, CentralStakeReturned):
            self.returned.append((stored, event))
        elif isinstance(event, CentralTerminalFailed):
            self.failed.append((stored, event))
        elif isinstance(event, CentralSaleClosed):
            self.sale = event
        elif isinstance(event, CentralBallDrawn):
            self.balls.append(event.ball)
        elif isinstance(event, CentralPrizeWon):
            self.prizes.append(event)
        elif isinstance(event, CentralCardWon):
            self.wins.append((stored, event))

    @property
    def cards_sold(self) -> int:
        return sum(p.card_count for _, p in self.purchases) - sum(len(r.card_numbers) for _, r in self.returned)

    def summary(self) -> dict[str, Any]:
        return {"game_id": self.game_id, "state": self.state, "price_cents": int(self.config["price_cents"]),
                "series": str(self.config["series_label"]), "halls": list(self.config.get("halls", ())),
                "cards_sold": self.cards_sold,
                "sales_cents": sum(p.amount_cents for _, p in self.purchases)
                - sum(r.amount_cents for _, r in self.returned),
                "prizes_paid_cents": sum(w.payment_cents for _, w in self.wins), "balls": len(self.balls)}

    def whole(self) -> dict[str, Any]:
        series = str(self.config["series_label"])
        return {
            **self.summary(),
            "terms": {key: self.config[key] for key in ("price_cents", "prizes", "sale_window_ms", "ball_interval_ms")
                      if key in self.config},
            "purchases": [{"seq": r.seq, "time_ms": r.time_ms, "hall": p.hall_id, "terminal": p.terminal_id,
                           **_player(p.hall_id, p.player_ref), "request_id": p.request_id, "first_card": p.first_card,
                           "card_count": p.card_count, "stake_pct": p.stake_pct, "stake_cents": p.stake_cents,
                           "amount_cents": p.amount_cents} for r, p in self.purchases],
            "refused": [{"seq": r.seq, "time_ms": r.time_ms, "hall": p.hall_id, "terminal": p.terminal_id,
                         "request_id": p.request_id, "card_count": p.card_count, "code": p.refusal_code,
                         "reason": p.refusal_text} for r, p in self.refused],
            "stakes_returned": [{"seq": r.seq, "hall": s.hall_id, "terminal": s.terminal_id,
                                 **_player(s.hall_id, s.player_ref),
                                 "cards": list(s.card_numbers), "amount_cents": s.amount_cents, "cause": s.cause}
                                for r, s in self.returned],
            "terminals_failed": [{"seq": r.seq, "hall": f.hall_id, "terminal": f.terminal_id, "reason": f.reason,
                                  "declared_by": f.declared_by, "refunded_cards": f.refunded_cards,
                                  "refunded_cents": f.refunded_cents} for r, f in self.failed],
            "collection_cents": self.sale.sales_cents if self.sale is not None else None,
            "balls_drawn": self.balls,
            "prizes": [{"pattern": p.pattern, "ball_count": p.ball_count, "amount_cents": p.amount_cents,
                        "winner_count": p.winner_count, "paid_cents": p.paid_cents, "carry_cents": p.carry_cents}
                       for p in self.prizes],
            "winners": [{"seq": r.seq, "pattern": w.pattern, "card": f"{w.hall_id}/{series}-{w.card_number}",
                         "ball_count": w.ball_count, "hall": w.hall_id, "terminal": w.terminal_id,
                         **_player(w.hall_id, w.player_ref), "payment_cents": w.payment_cents}
                        for r, w in self.wins],
            "journal": {"first_seq": self.first_seq, "last_seq": self.last_seq},
        }

    def movements(self) -> Iterable[dict[str, Any]]:
        """Every movement of money of this game: a stake charged is negative, a payment positive."""
        for r, p in self.purchases:
            yield _movement(r, self.game_id, p.hall_id, p.terminal_id, p.player_ref, -p.amount_cents,
                            f"{p.card_count} card(s) bought, from card {p.first_card}",
                            {"kind": "bought", "cards": p.card_count, "first_card": p.first_card})
        for r, s in self.returned:
            yield _movement(r, self.game_id, s.hall_id, s.terminal_id, s.player_ref, s.amount_cents,
                            f"stake of {len(s.card_numbers)} card(s) returned: {s.cause}",
                            {"kind": "returned", "cards": len(s.card_numbers), "cause": s.cause})
        for r, w in self.wins:
            yield _movement(r, self.game_id, w.hall_id, w.terminal_id, w.player_ref, w.payment_cents,
                            f"{w.pattern} won with card {w.card_number} on ball {w.ball_count}",
                            {"kind": "won", "pattern": w.pattern, "card": w.card_number, "ball": w.ball_count})


def _movement(record: Record, game: str, hall: str, terminal: str, player: str, cents: int, what: str,
              said: dict[str, Any]) -> dict[str, Any]:
    """A movement of money: ``what`` in English (the API's words), ``said`` its facts by ``kind``, which the
    page says in its reader's language."""
    return {"seq": record.seq, "time_ms": record.time_ms, "game": game, "hall": hall, "terminal": terminal,
            **_player(hall, player), "change_cents": cents, "what": what, "said": said}


def _player(hall: str, ref: str) -> dict[str, str]:
    """A player as the consultation names them: ``player``, unique across halls (``hall-1/p.7``: each
    hall numbers its own players, so two halls both have a ``p.7``), and ``player_ref``, the
    reference the hall gave, by which an inspector finds the account in that hall's records."""
    return {"player": f"{hall}/{ref}", "player_ref": ref}


def _by_operator(record: Record) -> bool:
    actor = record.payload.get(ACTOR_KEY)
    return isinstance(actor, Mapping) and actor.get("role") == "operator"


class CentralConsultation:
    """Answers the regulator's queries from the committed journal; ``records(after)`` reads it,
    ``run`` runs a query off the reactor (inline in the tests), one at a time."""

    def __init__(self, records: Callable[[int], Iterable[Record]], run: RunBlocking) -> None:
        self.records = records
        self.run = run
        self.games: dict[str, _Game] = {}
        self._last = 0
        self._one_at_a_time = defer.DeferredLock()

    def answer(self, path: str, params: Mapping[str, str]) -> "defer.Deferred[dict[str, Any]]":
        """The answer to ``path`` (without ``/regulator/api/``); fails with :class:`ConsultationError`."""
        answered: defer.Deferred[dict[str, Any]] = self._one_at_a_time.run(self.run, self._answer, path, params)
        return answered

    def _fold(self) -> dict[str, _Game]:
        for stored in self.records(self._last):
            self._last = stored.seq
            if stored.type not in GAME_RECORDS:
                continue
            try:
                event = game_record(stored)
            except RecordError as error:
                raise ConsultationError(500, str(error.at(stored.seq))) from None
            if isinstance(event, CentralGameScheduled):
                self.games[event.game_id] = _Game(event.game_id, dict(event.config), stored.seq)
            game = self.games.get(str(stored.payload.get("game_id")))
            if game is not None:
                game.apply(stored, event)
        return self.games

    def _answer(self, path: str, params: Mapping[str, str]) -> dict[str, Any]:
        parts = [part for part in path.split("/") if part]
        if not parts:
            return {"queries": QUERIES}
        what, rest = parts[0], parts[1:]
        if what == "games" and not rest:
            return {"games": [g.summary() for g in self._fold().values()]}
        if what == "games" and len(rest) == 1:
            if not _ID.fullmatch(rest[0]):
                raise ConsultationError(400, f"a game id is letters, digits and - _ . :, not {rest[0]!r}")
            game = self._fold().get(rest[0])
            if game is None:
                raise ConsultationError(404, f"no network game {rest[0]} in the central server's journal")
            return {"game": game.whole()}
        if what == "halls" and not rest:
            return {"halls": self._halls()}
        if what == "terminals" and not rest:
            return {"terminals": self._terminals()}
        if what == "movements" and not rest:
            return self._movements(params)
        if what == "operator-actions" and not rest:
            return records_page(self.records, params, _by_operator)
        if what == "records" and not rest:
            return records_page(self.records, params)
        raise ConsultationError(404, f"no query {path!r}: the queries are {', '.join(QUERIES)}")

    def _halls(self) -> list[dict[str, Any]]:
        halls: dict[str, dict[str, int]] = {}

        def of(hall: str) -> dict[str, int]:
            return halls.setdefault(hall, {"purchases": 0, "cards": 0, "stakes_cents": 0, "returned_cents": 0,
                                           "prizes_paid_cents": 0, "winning_cards": 0})

        for game in self._fold().values():
            for _, p in game.purchases:
                row = of(p.hall_id)
                row["purchases"] += 1
                row["cards"] += p.card_count
                row["stakes_cents"] += p.amount_cents
            for _, s in game.returned:
                of(s.hall_id)["returned_cents"] += s.amount_cents
            for _, w in game.wins:
                row = of(w.hall_id)
                row["prizes_paid_cents"] += w.payment_cents
                row["winning_cards"] += 1
        return [{"hall": hall, **row} for hall, row in sorted(halls.items())]

    def _terminals(self) -> list[dict[str, Any]]:
        terminals: dict[tuple[str, str], dict[str, int]] = {}

        def of(hall: str, terminal: str) -> dict[str, int]:
            return terminals.setdefault((hall, terminal), {"purchases": 0, "cards": 0, "stakes_cents": 0,
                                                           "prizes_paid_cents": 0, "failures": 0})

        for game in self._fold().values():
            for _, p in game.purchases:
                row = of(p.hall_id, p.terminal_id)
                row["purchases"] += 1
                row["cards"] += p.card_count
                row["stakes_cents"] += p.amount_cents
            for _, w in game.wins:
                of(w.hall_id, w.terminal_id)["prizes_paid_cents"] += w.payment_cents
            for _, f in game.failed:
                of(f.hall_id, f.terminal_id)["failures"] += 1
        return [{"hall": hall, "terminal": terminal, **row} for (hall, terminal), row in sorted(terminals.items())]

    def _movements(self, params: Mapping[str, str]) -> dict[str, Any]:
        unknown = sorted(set(params) - {*_FILTERS, "after", "limit"})
        if unknown:
            raise ConsultationError(400, f"movements are filtered by {', '.join(_FILTERS)} and paged by after and "
                                         f"limit, not by {unknown[0]!r}")
        after = number(params, "after", 0, 0, 10**15)
        limit = number(params, "limit", PAGE, 1, PAGE)
        filters = {name: params[name] for name in _FILTERS if name in params}
        for name, value in filters.items():
            if not _ID.fullmatch(value):
                raise ConsultationError(400, f"{name} is letters, digits and - _ . : /, 1 to 64, not {value!r}")
        games = self._fold()
        if "game" in params and params["game"] not in games:
            raise ConsultationError(404, f"no network game {params['game']} in the central server's journal")
        # A player is asked for as the answers name them (hall/ref), or by the hall's bare
        # reference: then of every hall that gave it, unless a hall is asked for too.
        keys = {name: "player_ref" if name == "player" and "/" not in value else name for name, value in filters.items()}
        chosen = sorted((m for game in games.values() for m in game.movements()
                         if all(m[keys[name]] == value for name, value in filters.items())), key=lambda m: m["seq"])
        page = [m for m in chosen if m["seq"] > after][:limit]
        return {"movements": page, "filters": filters, "after": after,
                "next_after": page[-1]["seq"] if len(page) == limit else None,
                "matching": len(chosen), "total_change_cents": sum(m["change_cents"] for m in chosen)}

