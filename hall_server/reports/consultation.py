"""What the regulator may consult of the hall's records (R95.3): read-only answers from the journal.

:class:`Consultation` answers a query path (``games``, ``games/<id>``, ``accounts/<number>``,
``terminals``, ``staff-actions``, ``records``) with plain data in integer cents, read from
the committed journal off the reactor.  It keeps a minutes book (the same fold as the
minutes, the daily report and the recall) and folds only the records committed since the
last query.  Nothing here changes anything: the web resource journals each query
(``regulator_consulted``) before it sends the answer (``docs/regulator.md``).

Secrets are left out as on every screen (:func:`hall_server.web.redaction.redacted`): a
PIN's or a token's hash is not the regulator's to read, and nothing in the rules needs it.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable, Mapping

from twisted.internet import defer

from hall_server.reports.minutes import GameMinutes, MinutesBook
from hall_server.reports.printed import said
from hall_server.reports.recall import game_recall
from hall_server.web.redaction import redacted
from protocol.chain import Record
from protocol.records import declared
from protocol.records.cashier import PlayerAccountOpened, Posting
from protocol.records.terminals import (
    TerminalEnrolled,
    TerminalOutOfService,
    TerminalReturnedToService,
    TerminalRevoked,
)
from server_kit.core import RunBlocking
from server_kit.web.consultation import PAGE, ConsultationError, by_staff, records_page
from server_kit.web.consultation import record_json as kit_record_json

#: The queries, as the API's index lists them.
QUERIES = {
    "games": "every game in the journal: session, state, cards sold, collection, prizes paid",
    "games/<game_id>": "one game: its series and cards, every virtual card and its terminal, the balls, the prizes",
    "accounts/<number>": "a player account: its opening, and every movement of its money",
    "terminals": "every terminal enrolled, revoked, out of service or back, with the record of each",
    "staff-actions?after=SEQ&limit=N": f"the records made by staff (not by the server itself), {PAGE} at most",
    "records?after=SEQ&limit=N&type=T": f"any record of the journal, {PAGE} at most, optionally of one type",
}
_TERMINAL_RECORDS = (TerminalEnrolled, TerminalRevoked, TerminalOutOfService, TerminalReturnedToService)
_ACCOUNT = re.compile(r"[0-9]{6,20}")
_GAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")


def record_json(record: Record) -> dict[str, Any]:
    """A record as the regulator reads it: its place in the chain and its redacted payload."""
    return kit_record_json(record, redacted)


def _game_summary(game: GameMinutes) -> dict[str, Any]:
    return {"game_id": game.game_id, "session": game.session, "number": game.number, "state": game.state,
            "opened_ms": game.opened_ms, "price_cents": game.price_cents, "cards_sold": game.cards_sold,
            "collection_cents": game.stakes_cents, "prizes_paid_cents": game.prizes_paid_cents,
            "balls": len(game.drawn)}


def _game(game: GameMinutes) -> dict[str, Any]:
    whole = game_recall(game)
    whole["paper_sales"] = [{"series": s.series, "first": s.first, "last": s.last, "amount_cents": s.amount_cents,
                             "seller": s.seller} for s in game.paper_sales]
    whole["virtual"] = [{"card": c.label, "terminal": c.terminal_id, "account": c.account,
                         "price_cents": c.price_cents, "stake_cents": c.stake_cents,
                         "refunded": c.label in game.refunded_virtual} for c in game.virtual_cards]
    whole["prizes_paid_cents"] = game.prizes_paid_cents
    return whole


def _account(records: Iterable[Record], number: str) -> dict[str, Any]:
    name = f"player:{number}"
    opened: dict[str, Any] | None = None
    movements: list[dict[str, Any]] = []
    balance = 0
    for record in records:
        event = declared(record)
        if isinstance(event, PlayerAccountOpened) and event.account == number:
            opened = record_json(record)
        elif isinstance(event, Posting) and any(a == name for a, _ in (*event.debits, *event.credits)):
            change = sum(c for a, c in event.credits if a == name) - sum(c for a, c in event.debits if a == name)
            balance += change
            movements.append({"seq": record.seq, "time_ms": record.time_ms, "change_cents": change,
                              "balance_cents": balance, "reason": event.reason, "said": said(event.reason),
                              "reference": redacted(event.reference.to_json())})
    if opened is None:
        raise ConsultationError(404, f"no player account {number} was ever opened in this hall")
    return {"account": number, "opened": opened, "movements": movements, "balance_cents": balance}


class Consultation:
    """Answers the regulator's queries from the committed journal; ``records(after)`` reads it,
    ``run`` runs a query off the reactor (inline in the tests), one at a time."""

    def __init__(self, records: Callable[[int], Iterable[Record]], run: RunBlocking) -> None:
        self.records = records
        self.run = run
        self._book = MinutesBook()
        self._one_at_a_time = defer.DeferredLock()

    def answer(self, path: str, params: Mapping[str, str]) -> "defer.Deferred[dict[str, Any]]":
        """The answer to ``path`` (without ``/regulator/api/``); fails with :class:`ConsultationError`."""
        answered: defer.Deferred[dict[str, Any]] = self._one_at_a_time.run(self.run, self._answer, path, params)
        return answered

    def _book_now(self) -> MinutesBook:
        book = self._book
        for record in self.records(book.last.seq if book.last is not None else 0):
            book.apply(record)
        return book

    def _answer(self, path: str, params: Mapping[str, str]) -> dict[str, Any]:
        parts = [part for part in path.split("/") if part]
        if not parts:
            return {"queries": QUERIES}
        what, rest = parts[0], parts[1:]
        if what == "games" and not rest:
            return {"games": [_game_summary(g) for g in self._book_now().games.values()]}
        if what == "games" and len(rest) == 1:
            if not _GAME.fullmatch(rest[0]):
                raise ConsultationError(400, f"a game id is letters, digits and - _ . :, not {rest[0]!r}")
            game = self._book_now().games.get(rest[0])
            if game is None:
                raise ConsultationError(404, f"no game {rest[0]} in this hall's journal")
            return {"game": _game(game)}
        if what == "accounts" and len(rest) == 1:
            if not _ACCOUNT.fullmatch(rest[0]):
                raise ConsultationError(400, f"an account number is 6 to 20 digits, not {rest[0]!r}")
            return _account(self.records(0), rest[0])
        if what == "terminals" and not rest:
            kept = [r for r in self.records(0) if isinstance(declared(r), _TERMINAL_RECORDS)]
            return {"terminals": [record_json(r) for r in kept]}
        if what in ("staff-actions", "records") and not rest:
            return records_page(self.records, params, by_staff if what == "staff-actions" else lambda r: True, redacted)
        raise ConsultationError(404, f"no query {path!r}: the queries are {', '.join(QUERIES)}")

