"""Refunds of stakes as ledger postings (R86.2, R92.5e, R95.1, R96.3).

Two cases, both worked out from the ``CardSold`` events recorded for the game:

* :func:`refund_game` - a game suspended for good before any prize was won (R86.2), or
  stopped by a server failure (R92.5e, R95.1): every stake of the game not yet refunded
  goes back.
* :func:`refund_terminal` - a failed terminal (R96.3): the cards bought on it for this
  game go back to their players; the game goes on elsewhere.

Each card's stake is paid back from the game's collection (``stakes:<game>``) to the
account it came from (``player:<id>`` or the seller's ``cash:<desk>``), in one posting
per card whose reference names the game, the card and the journal record of the
refund.  All of a refund's postings are recorded together or not at all.  The
``plan_*`` functions only work out and check the postings, for a server that journals
them before its ledger projection records them; ``refund_*`` also record them.

The ledger is the memory of what was refunded: a card with a refund posting is never
refunded again, and a game refunded as a whole refuses a second game refund.

Two more postings belong to refunds: a game refunded after its sale closed first
takes back what the close put into the pots (:func:`contributions_returned`), and a
failed terminal's cards refunded after the close are paid back by the house, since the
prizes announced on the whole collection stand (:func:`terminal_refund_postings`).
"""

from __future__ import annotations

from typing import Iterable, Mapping

from protocol.claims import CardRef
from protocol.errors import DomainError
from protocol.events import CardSold
from protocol.ledger import Ledger, Leg, Overdraft, Posting, Reference

#: Posting reasons: the refund of a whole game, and of one failed terminal's cards.
GAME_REFUND = "refund:game"
TERMINAL_REFUND = "refund:terminal"


class RefundError(DomainError):
    """A refund that cannot be made; the message says why."""


def stakes_account(game_id: str) -> str:
    """The ledger account holding a game's collection."""
    return f"stakes:{game_id}"


def refunded_cards(ledger: Ledger, game_id: str) -> frozenset[str]:
    """Labels (``series-number``) of the cards of ``game_id`` refunded so far."""
    return frozenset(
        p.reference.card
        for p in ledger.postings_for(game_id)
        if p.reason in (GAME_REFUND, TERMINAL_REFUND) and p.reference.card is not None
    )


def _postings(
    sales: Iterable[CardSold], game_id: str, reason: str, event_seq: int, source: str | None = None
) -> list[Posting]:
    return [
        Posting.transfer(
            sale.stake_cents,
            debit=source or stakes_account(game_id),
            credit=sale.account,
            reason=reason,
            reference=Reference(game_id, CardRef(sale.series, sale.card_number).label, event_seq),
        )
        for sale in sales
        if sale.stake_cents > 0
    ]


def _checked(ledger: Ledger, postings: list[Posting], what: str) -> tuple[Posting, ...]:
    try:
        ledger.check(postings)
    except Overdraft as error:
        raise RefundError(f"{what} cannot be refunded: {error}") from error
    return tuple(postings)


def plan_game_refund(
    ledger: Ledger, sales: Iterable[CardSold], game_id: str, event_seq: int
) -> tuple[Posting, ...]:
    """The postings that pay back every stake of ``game_id`` not refunded yet, checked, not recorded.

    ``sales`` may hold other games' sales too; only ``game_id``'s count.  ``event_seq``
    is the journal sequence number of the ``GameRefunded`` event.
    """
    if ledger.postings_for(game_id, GAME_REFUND):
        raise RefundError(f"game {game_id} has already been refunded")
    done = refunded_cards(ledger, game_id)
    due = [
        s
        for s in sales
        if s.game_id == game_id and CardRef(s.series, s.card_number).label not in done
    ]
    return _checked(ledger, _postings(due, game_id, GAME_REFUND, event_seq), f"game {game_id}")


def plan_terminal_refund(
    ledger: Ledger,
    sales: Iterable[CardSold],
    game_id: str,
    terminal_id: str,
    event_seq: int,
) -> tuple[Posting, ...]:
    """The postings that pay back the cards bought on ``terminal_id`` for ``game_id`` (R96.3).

    Checked against the ledger, not recorded.  ``event_seq`` is the journal sequence
    number of the ``TerminalFailed`` event.
    """
    done = refunded_cards(ledger, game_id)
    bought = [s for s in sales if s.game_id == game_id and s.terminal_id == terminal_id]
    if any(CardRef(s.series, s.card_number).label in done for s in bought):
        raise RefundError(
            f"the cards of terminal {terminal_id} in game {game_id} have already been refunded"
        )
    return _checked(
        ledger,
        _postings(bought, game_id, TERMINAL_REFUND, event_seq),
        f"terminal {terminal_id}'s cards in game {game_id}",
    )


def refund_game(
    ledger: Ledger, sales: Iterable[CardSold], game_id: str, event_seq: int
) -> tuple[Posting, ...]:
    """:func:`plan_game_refund`, recorded in ``ledger``."""
    return ledger.post_all(plan_game_refund(ledger, sales, game_id, event_seq))


def refund_terminal(
    ledger: Ledger,
    sales: Iterable[CardSold],
    game_id: str,
    terminal_id: str,
    event_seq: int,
) -> tuple[Posting, ...]:
    """:func:`plan_terminal_refund`, recorded in ``ledger``."""
    return ledger.post_all(plan_terminal_refund(ledger, sales, game_id, terminal_id, event_seq))


def contributions_returned(game_id: str, contributions: Mapping[str, int], event_seq: int) -> tuple[Posting, ...]:
    """The posting that gives back to ``game_id``'s collection what its close put into the pots.

    ``contributions`` maps each pot's ledger account to the cents the close credited it
    (the ``sale_closed`` record's ``contributions``); nothing to give back, no posting.
    """
    amounts = {pot: cents for pot, cents in contributions.items() if cents}
    if not amounts:
        return ()
    return (
        Posting(
            tuple(Leg(pot, cents) for pot, cents in amounts.items()),
            (Leg(stakes_account(game_id), sum(amounts.values())),),
            "pots:contribution returned",
            Reference(game_id, None, event_seq),
        ),
    )


def terminal_refund_postings(
    sales: Iterable[CardSold], game_id: str, event_seq: int, sale_closed: bool
) -> tuple[Posting, ...]:
    """The postings refunding ``sales`` (cards of a failed terminal, R96.3), one per card.

    Before the sale's close the stakes are still in the game's collection.  After it the
    prizes were announced on the whole collection and stand, so the house pays the
    refund (its share was counted on these stakes too).
    """
    source = "house" if sale_closed else stakes_account(game_id)
    return tuple(_postings(sales, game_id, TERMINAL_REFUND, event_seq, source))
