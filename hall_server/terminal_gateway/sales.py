"""A terminal's ``buy``, sold in the kind of game it names: one sale channel per kind.

The gateway does what every purchase shares once: the player signed in, the answer's
request id and credit, the refusal, the storage's fault, its own fault.  A
:class:`SaleChannel` passes the checked purchase to the module that sells its kind of game
and turns the outcome into the answer (:class:`Sale`) or a refusal (a failed Deferred with
a :class:`~protocol.errors.DomainError`, journaled):

* ``hall`` (:class:`HallSales`): the hall's own game on sale, decided by
  :class:`~hall_server.hall.virtual.VirtualModule`; answered ``bought``.
* ``network`` (:class:`NetworkSales`): a network game of the central server.  The
  :class:`~hall_server.network.module.NetworkModule` holds the credit and relays the
  purchase; the answer, ``net_bought``, waits for the central server's decision (R93.6).
* ``joint`` (:class:`JointSales`): the hall-annex game, sold by this room's
  :class:`~hall_server.annex.terminals.JointTerminalSales` (R3.5.b); answered ``joint_bought``.

The answers keep their own types since their cards differ (a network card has no code, its
number is the central server's).  Refusals are journaled as before (``terminal_request_refused``,
``what``: ``buy``, ``net_buy``, ``joint_buy``): the hall and joint modules journal their own;
the network module leaves the hall's refusals to its caller, so :class:`NetworkSales` journals
them; the central server's refusal is in the release of the hold, which the module journals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

from hall_server.annex.terminals import JointCard, JointTerminalSales
from hall_server.hall.virtual import PurchaseRequest, VirtualCard, VirtualModule
from hall_server.network.module import Hold, NetworkModule, NetworkPurchase
from hall_server.terminal_gateway.cards import card_json, joint_card_json, network_cards_json
from protocol.errors import DomainError, ReasonedRefusal
from protocol.terminal_messages import HALL, JOINT, NETWORK
from server_kit.db.faults import StorageUnavailable

log = Logger()

#: ``terminal_request_refused.what`` of a network purchase the hall refused (journals already hold it).
NET_BUY = "net_buy"

#: What a purchase in a kind of game this hall does not play is refused with.
NOT_PLAYED = {
    NETWORK: "this hall takes part in no network game",
    JOINT: "this hall plays no hall-annex game",
}


@dataclass(frozen=True)
class Sale:
    """A purchase decided: the answer's type and its own fields (the cards, the game of a
    network or joint game); the gateway adds ``in_reply_to``, ``request`` and the credit left."""

    answer: str
    fields: dict[str, Any]


class CentralServerRefused(ReasonedRefusal):
    """The central server refused a network purchase: its reason (``protocol.central_messages.REFUSALS``)
    for the kiosk to say.  The release of the hold, journaled by the network module, records it."""


class SaleChannel(Protocol):
    """One kind of game a terminal buys cards of."""

    def sell(self, request: PurchaseRequest, game_id: str) -> defer.Deferred[Sale]:
        """Decide ``request`` in game ``game_id`` ("" for the hall's own); fires with the answer, or
        fails with a :class:`~protocol.errors.DomainError`, journaled, that says why."""
        ...


class HallSales:
    """The hall's own game on sale (R93): the protocol sends no ``game_id`` for it."""

    def __init__(self, virtual: VirtualModule) -> None:
        self.virtual = virtual

    def sell(self, request: PurchaseRequest, game_id: str) -> defer.Deferred[Sale]:
        def bought(cards: list[VirtualCard]) -> Sale:
            return Sale("bought", {"cards": [card_json(card) for card in cards]})

        return self.virtual.request_purchase(request).addCallback(bought)


class NetworkSales:
    """A network game (R92-R93): the hall holds the credit and relays it, and the answer comes
    once the central server has decided; the same ``request`` again gets the first outcome."""

    def __init__(self, network: NetworkModule, virtual: VirtualModule) -> None:
        self.network = network
        self.virtual = virtual  # journals the hall's refusals

    def sell(self, request: PurchaseRequest, game_id: str) -> defer.Deferred[Sale]:
        quantity, stake_pct = request.quantity, request.stake_pct
        assert isinstance(quantity, int) and isinstance(stake_pct, int), "the protocol checked them"
        purchase = NetworkPurchase(request.terminal_id, request.signed_in, request.account, game_id, quantity,
                                   stake_pct, request.request)

        def held(hold: Hold) -> defer.Deferred[Hold]:
            return self.network.settled(hold.request_id)

        def refused_here(failure: Failure) -> Failure:
            if failure.check(DomainError) and not failure.check(StorageUnavailable):
                self.virtual.record_refusal(purchase.terminal, NET_BUY, str(failure.value), purchase.request) \
                    .addErrback(lambda f: log.failure("journaling a terminal's refused request", f))
            return failure

        def decided(hold: Hold) -> Sale:
            game = self.network.game(hold.game_id)
            if hold.status != "bought" or game is None:
                raise CentralServerRefused(hold.refusal or "the purchase was refused", hold.refusal_code or "")
            return Sale("net_bought", {"game_id": hold.game_id, "cards": network_cards_json(game, hold)})

        return self.network.hold(purchase).addCallback(held).addErrback(refused_here).addCallback(decided)


class JointSales:
    """The hall-annex game (R3.5.b): virtual cards of the joint game, decided by this room (R93.6)."""

    def __init__(self, joint: JointTerminalSales) -> None:
        self.joint = joint

    def sell(self, request: PurchaseRequest, game_id: str) -> defer.Deferred[Sale]:
        def bought(cards: list[JointCard]) -> Sale:
            return Sale("joint_bought", {"game_id": game_id, "cards": [joint_card_json(card) for card in cards]})

        return self.joint.request_purchase(request, game_id).addCallback(bought)


def sale_channels(virtual: VirtualModule, network: NetworkModule | None,
                  joint: JointTerminalSales | None) -> dict[str, SaleChannel]:
    """The kinds of game this hall sells to its terminals, by the word a ``buy`` names them with."""
    channels: dict[str, SaleChannel] = {HALL: HallSales(virtual)}
    if network is not None:
        channels[NETWORK] = NetworkSales(network, virtual)
    if joint is not None:
        channels[JOINT] = JointSales(joint)
    return channels
