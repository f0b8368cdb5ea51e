"""The hall-annex game over the hall's link to the central server, without a socket of its own.

:class:`AnnexLink` rides on the :class:`~hall_server.network.relay.NetworkRelay`: the
same AMP connection in mutual TLS, the same ``hello``.

* **Posting**: every record of this hall the partner must get (the opening, the main
  hall's balls, this room's sales and verified claims, the close) is sent as
  ``annex_post`` with the request id ``<hall>.<record seq>``, one at a time and in the
  journal's order, until the central server's answer is journaled (``annex_posted``).
  A post lost with the link is sent again when it is back, and the central server
  answers a resend with its first number.
* **Taking**: each ``annex_delivered`` goes to :meth:`AnnexModule.take
  <hall_server.annex.module.AnnexModule.take>`; one that comes before an item it
  follows, and every link that comes up, makes the hall fetch what it lacks
  (``annex_fetch`` after the last item taken, page by page).
* **The link's state** is what the relay tells its listeners: while it is down the
  hall-annex game shows the link as lost (:attr:`AnnexLink.up`), sells and verifies
  claims on, and catches up when it is back.
"""

from __future__ import annotations

from typing import Any

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure

from hall_server.annex.module import AnnexGap, AnnexModule
from hall_server.network.relay import NetworkRelay


class AnnexLink:
    """This hall's end of the hall-annex stream, over the link to the central server."""

    log = Logger()

    def __init__(self, module: AnnexModule, relay: NetworkRelay) -> None:
        self.module = module
        self.relay = relay
        self.up = False
        self._posting: int | None = None  # the record seq of the post in flight
        self._fetching: defer.Deferred[None] | None = None
        module.relay = self.pump
        relay.annex_delivered = self.delivered
        relay.listeners.append(self.link_changed)
        relay.resenders.append(self.pump)

    def link_changed(self, up: bool) -> None:
        self.up = up
        self._posting = None
        self.module.link_changed(up).addErrback(self._logged, "journaling the link's state")
        if up:
            self.fetch().addErrback(self._logged, "catching up on the hall-annex game")
            self.pump()

    # --- Posting what this hall made ------------------------------------------------

    def pump(self) -> None:
        """Post the oldest record the central server does not hold yet, if none is in flight."""
        if not self.relay.up or self._posting is not None:
            return
        pending = self.module.pending()
        if not pending:
            return
        record_seq, item = pending[0]
        request_id = f"{self.module.hall_id}.{record_seq}"
        self._posting = record_seq
        sent = self.relay.call("annex_post", {"request_id": request_id, "hall_id": self.module.hall_id, **item})

        @defer.inlineCallbacks
        def answered(answer: dict[str, Any]) -> Any:
            try:
                yield self.module.posted(record_seq, request_id, answer["seq"])
            finally:
                if self._posting == record_seq:
                    self._posting = None  # a record not journaled is posted again: the answer is the same
            self.pump()

        def failed(failure: Failure) -> None:
            if self._posting == record_seq:
                self._posting = None  # sent again at the next resend or link
            self.log.warn("The hall-annex post {request} was not taken ({why}); it is sent again",
                          request=request_id, why=failure.getErrorMessage())

        sent.addCallbacks(answered, failed).addErrback(self._logged, "journaling post {request}", request_id)

    # --- Taking what the partner made -------------------------------------------------

    @defer.inlineCallbacks
    def delivered(self, item: dict[str, Any]) -> Any:
        """The central server pushed an item of the partner's stream."""
        try:
            yield self.module.take(item)
        except AnnexGap:
            self.fetch().addErrback(self._logged, "fetching the hall-annex items {request}", "after a gap")

    def fetch(self) -> defer.Deferred[None]:
        """Take every item of the partner's stream after the last one taken (one fetch at a time)."""
        if self._fetching is not None:
            return self._fetching

        @defer.inlineCallbacks
        def run() -> Any:
            while self.relay.up:
                after = self.module.state.last_relay_seq
                answer = yield self.relay.call("annex_fetch", {"hall_id": self.module.hall_id, "after": after})
                for item in answer["items"]:
                    yield self.module.take(item)
                if not answer["more"] or not answer["items"]:
                    return

        def done(outcome: Any) -> Any:
            self._fetching = None
            return outcome

        running = run()
        if not running.called:
            self._fetching = running
        return running.addBoth(done)

    def _logged(self, failure: Failure, what: str, request: str = "") -> None:
        self.log.failure(what, failure, request=request)


__all__ = ["AnnexLink"]
