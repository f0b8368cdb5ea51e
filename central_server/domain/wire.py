"""What the central server answers halls and announces to them, as plain message dicts.

The AMP edge stays thin: for a hall's command it checks the arguments against
:mod:`protocol.central_messages`, calls :func:`respond`, journals the events it returns,
and only then sends the answer (checked with :func:`~protocol.central_messages.check_answer`);
after every commit it sends what :func:`announcements` lists, to the halls it names.
Both are pure functions of the game's state; every dict they make is checked against
the message's declaration here, so a schema change cannot go unnoticed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping

from central_server.domain.errors import (
    BadArgument,
    CentralError,
    ClockOff,
    HallMismatch,
    UnknownHall,
    VersionUnsupported,
)
from central_server.domain.game import CentralGame, Outcome, PurchaseRequest, TerminalFailure
from protocol import central_messages as m
from protocol.central_messages import CentralMessageError, Message
from protocol.records.central import (
    CentralBallDrawn,
    CentralCardWon,
    CentralGameClosed,
    CentralGameNotPlayed,
    CentralPrizeWon,
    CentralPurchaseConfirmed,
    CentralPurchaseRefused,
    CentralRecord,
    CentralSaleClosed,
    CentralSaleOpened,
    CentralStakeReturned,
    CentralTerminalFailed,
)


class UnknownGame(CentralError):
    """A game id the central server does not know."""

    code = "unknown_game"


@dataclass(frozen=True)
class Announcement:
    """One message to send to one hall once the events that caused it are committed."""

    hall_id: str
    message: Message
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Response:
    """A hall command's answer and the events to journal before it is sent."""

    events: tuple[CentralRecord, ...]
    answer: dict[str, Any]


def _checked(message: Message, arguments: dict[str, Any]) -> dict[str, Any]:
    m.check_arguments(message, arguments)
    return arguments


def _answer(message: Message, answer: dict[str, Any]) -> dict[str, Any]:
    m.check_answer(message, answer)
    return {k: v for k, v in answer.items() if v is not None}


# --- Items of the paged lists -----------------------------------------------------


def winner_item(game: CentralGame, won: CentralCardWon) -> dict[str, Any]:
    """A winning card as boards show it: card, hall and terminal where it was bought (R92.11)."""
    return {
        "seq": won.winner_seq,
        "pattern": won.pattern,
        "ball_count": won.ball_count,
        "series": game.config.series_label,
        "card_number": won.card_number,
        "hall_id": won.hall_id,
        "terminal_id": won.terminal_id,
        "payment_cents": won.payment_cents,
    }


def credit_item(credit: CentralCardWon | CentralStakeReturned) -> dict[str, Any]:
    """Money the hall passes to one of its players: a prize (R85.9) or a stake returned."""
    if isinstance(credit, CentralCardWon):
        return {
            "seq": credit.credit_seq,
            "kind": "prize",
            "player_ref": credit.player_ref,
            "terminal_id": credit.terminal_id,
            "amount_cents": credit.payment_cents,
            "pattern": credit.pattern,
            "card_number": credit.card_number,
        }
    return {
        "seq": credit.credit_seq,
        "kind": "refund",
        "player_ref": credit.player_ref,
        "terminal_id": credit.terminal_id,
        "amount_cents": credit.amount_cents,
        "card_count": len(credit.card_numbers),
        "purchase_request_id": credit.purchase_request_id,
        "paid_by": credit.paid_by,
    }


# --- Answers ------------------------------------------------------------------------


def answer_hello(arguments: Mapping[str, Any], *, from_hall: str, members: Iterable[str], central_id: str,
                 identity: Mapping[str, Any] | None = None, hall_journal: tuple[int, str] | None = None,
                 now_ms: int | None = None) -> dict[str, Any]:
    """The answer to ``hello``: the version agreed, or the error that closes the connection.

    ``identity``: a replicated central server's ``node`` and ``epoch``, which the hall shows.
    ``hall_journal``: the furthest record (seq, hash) of its journal the hall said before,
    which the hall checks its journal against (a hall rolled back is behind it).
    ``now_ms``: the central clock; in version 3 a hall whose ``clock_ms`` is more than
    :data:`~protocol.central_messages.CLOCK_BOUND_MS` ahead of it is refused (``clock_off``; a
    clock behind cannot be told from the link's delay, and the hall measures that itself), and
    the answer says it (``central_ms``).
    """
    try:
        args = m.check_arguments(m.HELLO, arguments)
    except CentralMessageError as error:
        raise BadArgument(str(error)) from None
    if ("journal_seq" in args) != ("journal_hash" in args):
        raise BadArgument("hello: journal_seq and journal_hash are said together, or neither")
    if from_hall not in set(members):
        raise UnknownHall(f"hall {from_hall} is not a member of the network")
    if args["hall_id"] != from_hall:
        raise HallMismatch(f"this connection is hall {from_hall}'s; it cannot say hello as {args['hall_id']}")
    try:
        version = m.negotiate(args["versions"])
    except CentralMessageError as error:
        raise VersionUnsupported(str(error)) from None
    held = {} if hall_journal is None else {"hall_journal_seq": hall_journal[0], "hall_journal_hash": hall_journal[1]}
    clock = {}
    if version >= 3 and now_ms is not None:
        said = args.get("clock_ms")
        if said is not None and said - now_ms > m.CLOCK_BOUND_MS:  # behind may be the link's delay; ahead cannot
            raise ClockOff(f"hall {from_hall}'s clock is {said - now_ms} ms ahead of the central server's (at most "
                           f"{m.CLOCK_BOUND_MS}): set its clock right (NTP); it links again then")
        clock = {"central_ms": now_ms}
    return _answer(m.HELLO, {"version": version, "central_id": central_id, **(identity or {}), **held, **clock})


def buy_cards_answer(outcome: Outcome, game: CentralGame) -> dict[str, Any]:
    """The answer to ``buy_cards``, first or repeated: a confirmation carries the cards' numbers."""
    d = outcome.decision
    if isinstance(d, CentralPurchaseConfirmed):
        answer = {
            "request_id": d.request_id, "status": "confirmed", "decision": d.decision,
            "series": game.config.series_label,
            "first_card": d.first_card, "card_count": d.card_count, "stake_cents": d.stake_cents,
            "amount_cents": d.amount_cents, "cells": game.card_cells(d.first_card, d.card_count),
        }  # fmt: skip
    elif isinstance(d, CentralPurchaseRefused):
        answer = {
            "request_id": d.request_id, "status": "refused", "decision": d.decision,
            "refusal_code": d.refusal_code, "refusal": d.refusal_text,
        }  # fmt: skip
    else:
        raise TypeError(f"a purchase is not answered with {d.type}")
    return answer


def _game_answer(game: CentralGame, hall: str, now_ms: int) -> dict[str, Any]:
    sale = game.sale
    return {
        "phase": str(game.phase),
        "series": game.config.series_label,
        "price_cents": game.config.price_cents,
        "closes_at_ms": game.closes_at_ms,
        "remaining_ms": game.remaining_ms(now_ms),
        "ball_count": len(game.balls),
        "cards_sold": sale.cards_in_play if sale else 0,
        "sales_cents": sale.sales_cents if sale else 0,
        "winner_count": len(game.winners),
        "last_credit_seq": game.credit_count(hall),
    }


def respond(
    game_of: Callable[[str], CentralGame | None],
    name: str,
    arguments: Mapping[str, Any],
    *,
    from_hall: str,
    now_ms: int,
    gate_open: bool = False,
) -> Response:
    """Answer a hall's command ``name`` (a negotiated connection's; not ``hello``).

    ``game_of`` finds a game by id; ``from_hall`` is the hall of the connection's
    certificate.  Raises a :class:`CentralError` (its ``code`` is the wire code) for
    anything that is not a decision; nothing has changed then.
    """
    message = m.MESSAGES.get(name)
    if message is None or message.sender != "hall" or message is m.HELLO:
        raise BadArgument(f"there is no hall command {name!r}")
    try:
        args = m.check_arguments(message, arguments)
    except CentralMessageError as error:
        raise BadArgument(str(error)) from None
    game = game_of(args["game_id"])
    if game is None:
        raise UnknownGame(f"there is no network game {args['game_id']}")
    hall = args["hall_id"]
    game.check_speaker(from_hall, hall)
    events: tuple[CentralRecord, ...] = ()
    if message is m.BUY_CARDS:
        request = PurchaseRequest(
            args["request_id"], hall, args["terminal_id"], args["player_ref"], args["card_count"], args["stake_pct"]
        )
        outcome = game.request_purchase(request, from_hall=from_hall, now_ms=now_ms, gate_open=gate_open)
        events, answer = outcome.events, buy_cards_answer(outcome, game)
    elif message is m.TERMINAL_FAILED:
        failure = TerminalFailure(args["request_id"], hall, args["terminal_id"], args["reason"], args["declared_by"])
        outcome = game.declare_terminal_failed(failure, from_hall=from_hall, now_ms=now_ms)
        assert isinstance(outcome.decision, CentralTerminalFailed)
        d = outcome.decision
        events = outcome.events
        answer = {
            "request_id": d.request_id, "refunded_cards": d.refunded_cards,
            "refunded_cents": d.refunded_cents, "paid_by": d.paid_by,
            "last_credit_seq": game.credit_count(hall),
        }  # fmt: skip
    elif message is m.GET_GAME:
        answer = _game_answer(game, hall, now_ms)
    elif message is m.GET_BALLS:
        answer = {"balls": game.balls[args["after_count"] :], "ball_count": len(game.balls)}
    elif message is m.GET_CREDITS:
        page = game.credits(hall, args["after"])
        items = [credit_item(c) for c in page.items]  # type: ignore[arg-type]
        answer = {"credits": items, "more": page.more, "last_seq": game.credit_count(hall)}
    else:
        assert message is m.GET_WINNERS
        page = game.winners_page(args["after"])
        answer = {
            "winners": [winner_item(game, w) for w in page.items],  # type: ignore[arg-type]
            "more": page.more,
            "winner_count": len(game.winners),
        }
    return Response(events, _answer(message, answer))


# --- Announcements ------------------------------------------------------------------


def games_at_hello(games: Iterable[CentralGame], hall_id: str, version: int, *, now_ms: int) -> list[Announcement]:
    """What a hall that just said hello (in ``version``) is told of its games: the sale of each
    game on sale (``sale_opened`` again: a hall away when it opened would never hear of it), and
    from version 2 each game whose sale has closed and that is not over (``game_under_way``)."""
    out: list[Announcement] = []
    for game in games:
        if hall_id not in game.config.halls:
            continue
        if game.phase == "selling":
            opened = [e for e in game.events if isinstance(e, CentralSaleOpened)][-1:]
            out += [a for a in announcements(game, opened, now_ms=now_ms) if a.hall_id == hall_id]
        elif game.phase in ("sale_closed", "drawing", "last_prize_won") and version >= m.GAME_UNDER_WAY.since:
            assert game.sale is not None and game.closes_at_ms is not None
            arguments = {
                "game_id": game.game_id, "phase": str(game.phase), "series": game.config.series_label,
                "first_card": game.config.first_card, "price_cents": game.config.price_cents,
                "closes_at_ms": game.closes_at_ms, "ball_interval_ms": game.config.ball_interval_ms,
                "prizes": [
                    {"pattern": p.name, "basis_points": p.basis_points, "carry_in_cents": p.carry_in_cents}
                    for p in game.config.prizes
                ],
                "cards_sold": game.sale.cards_in_play, "sales_cents": game.sale.sales_cents,
                "prize_amounts": [{"pattern": k, "amount_cents": v} for k, v in game.sale.prize_amounts.items()],
                "ball_count": len(game.balls),
            }  # fmt: skip
            out.append(Announcement(hall_id, m.GAME_UNDER_WAY, _checked(m.GAME_UNDER_WAY, arguments)))
    return out


def announcements(game: CentralGame, events: Iterable[CentralRecord], *, now_ms: int) -> list[Announcement]:
    """What to send which hall once ``events`` (just applied to ``game``) are committed.

    Every hall of the game hears the sale, the balls, the prizes and the end; a hall
    whose players have new credits hears ``credits_available`` once per batch.
    """
    halls = game.config.halls
    out: list[Announcement] = []
    credited: dict[str, None] = {}

    def to_all(message: Message, arguments: dict[str, Any]) -> None:
        _checked(message, arguments)
        out.extend(Announcement(hall, message, arguments) for hall in halls)

    for event in events:
        if isinstance(event, CentralSaleOpened):
            to_all(m.SALE_OPENED, {
                "game_id": game.game_id, "series": game.config.series_label,
                "first_card": game.config.first_card, "price_cents": game.config.price_cents,
                "closes_at_ms": event.closes_at_ms,
                "remaining_ms": max(0, event.closes_at_ms - now_ms),
                "ball_interval_ms": game.config.ball_interval_ms,
                "prizes": [
                    {"pattern": p.name, "basis_points": p.basis_points, "carry_in_cents": p.carry_in_cents}
                    for p in game.config.prizes
                ],
            })  # fmt: skip
        elif isinstance(event, CentralSaleClosed):
            by_hall = game.sales_by_hall()
            prizes = [{"pattern": k, "amount_cents": v} for k, v in event.prize_amounts.items()]
            for hall in halls:
                cards, cents = by_hall[hall]
                arguments = {
                    "game_id": game.game_id, "cards_sold": event.cards_in_play,
                    "sales_cents": event.sales_cents, "prizes": prizes,
                    "hall_cards_sold": cards, "hall_sales_cents": cents,
                }  # fmt: skip
                out.append(Announcement(hall, m.SALE_CLOSED, _checked(m.SALE_CLOSED, arguments)))
        elif isinstance(event, CentralBallDrawn):
            to_all(m.BALL_DRAWN, {"game_id": game.game_id, "ball": event.ball, "ball_count": event.ball_count})
        elif isinstance(event, CentralPrizeWon):
            page = game.winners_page(pattern=event.pattern)
            to_all(m.PRIZE_WON, {
                "game_id": game.game_id, "pattern": event.pattern, "ball_count": event.ball_count,
                "amount_cents": event.amount_cents, "winner_count": event.winner_count,
                "final": event.final, "winners": [winner_item(game, w) for w in page.items],  # type: ignore[arg-type]
                "more": page.more,
            })  # fmt: skip
        elif isinstance(event, (CentralCardWon, CentralStakeReturned)):
            credited[event.hall_id] = None
        elif isinstance(event, CentralGameClosed):
            to_all(m.GAME_CLOSED, {
                "game_id": game.game_id, "ball_count": len(game.balls),
                "carries": [{"pattern": k, "carry_cents": v} for k, v in event.carries.items()],
            })  # fmt: skip
        elif isinstance(event, CentralGameNotPlayed):
            for hall in halls:
                arguments = {
                    "game_id": game.game_id, "reason": event.reason,
                    "last_credit_seq": game.credit_count(hall),
                }  # fmt: skip
                out.append(Announcement(hall, m.GAME_NOT_PLAYED, _checked(m.GAME_NOT_PLAYED, arguments)))
    for hall in (h for h in halls if h in credited):
        arguments = {"game_id": game.game_id, "last_seq": game.credit_count(hall)}
        out.append(Announcement(hall, m.CREDITS_AVAILABLE, _checked(m.CREDITS_AVAILABLE, arguments)))
    return out


__all__ = [
    "Announcement",
    "Response",
    "UnknownGame",
    "announcements",
    "answer_hello",
    "buy_cards_answer",
    "games_at_hello",
    "credit_item",
    "respond",
    "winner_item",
]
