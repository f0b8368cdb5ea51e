"""The central server's relay between the halls of a hall-annex pair (R3.5.b), without I/O.

Two halls play one traditional game: the main hall's draw emits, the annex shows it,
each reports its sales and its verified claims to the other (``docs/network-game.md``,
"The hall-annex game").  The central server does not play that game: it keeps what each
hall of a configured pair posts for its partner, numbered per receiving hall, so the
partner gets every item once and in order, pushed when it is connected and fetched
(``annex_fetch``) when it comes back.

* A hall that is not configured in a pair is refused (``not_annex_pair``), and so is a
  post naming another hall than the certificate's (``hall_mismatch``).
* Only the declared kinds are relayed, each as declared
  (:data:`protocol.central_messages.ANNEX_KIND_RULES`): from the hall that says it (the
  main hall opens, draws and closes; either reports sales, claims and its cards) and with
  exactly its fields; anything else is refused (``bad_argument``) and relayed to nobody.
* Every post carries the hall's request id: a post sent again is answered with the
  first item's number and changes nothing; the same id with other fields is refused
  (``request_id_reused``).
* The fold: :meth:`AnnexRelay.apply` takes each ``central_annex_relayed`` record, so a
  restarted server holds every stream as its journal left it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from central_server.domain.errors import CentralError, HallMismatch, RequestIdReused
from protocol import central_messages as m
from protocol.central_messages import CentralMessageError
from protocol.records.central import CentralAnnexRelayed

_ITEM_KEYS = tuple(f.name for f in m.ANNEX_FIELDS)


class NotAnnexPair(CentralError):
    """A hall-annex message from a hall that is in no configured pair."""

    code = "not_annex_pair"


class BadAnnexArgument(CentralError):
    code = "bad_argument"


@dataclass(frozen=True)
class AnnexPair:
    """A main hall and its annex: the main hall's draw emits (R3.5.b)."""

    main: str
    annex: str

    def partner(self, hall_id: str) -> str:
        return self.annex if hall_id == self.main else self.main


@dataclass
class AnnexRelay:
    """Every pair's streams: what each hall was sent, and each sender's request ids."""

    pairs: tuple[AnnexPair, ...] = ()
    streams: dict[str, list[CentralAnnexRelayed]] = field(default_factory=dict)  # by receiving hall
    requests: dict[tuple[str, str], CentralAnnexRelayed] = field(default_factory=dict)  # (sender, request id)

    def pair_of(self, hall_id: str) -> AnnexPair:
        for pair in self.pairs:
            if hall_id in (pair.main, pair.annex):
                return pair
        raise NotAnnexPair(f"hall {hall_id} is in no hall-annex pair of this central server ([[annex]])")

    def reset(self) -> None:
        self.streams, self.requests = {}, {}

    def apply(self, record: CentralAnnexRelayed) -> None:
        """Fold one relayed item (a record already taken is not taken twice)."""
        key = (record.from_hall, record.request_id)
        if key in self.requests:
            return
        self.requests[key] = record
        self.streams.setdefault(record.to_hall, []).append(record)

    def post(self, from_hall: str, arguments: Mapping[str, Any]) -> tuple[CentralAnnexRelayed | None, dict[str, Any]]:
        """Decide ``annex_post`` of ``from_hall``: the record to journal (None: a resend) and the answer.

        The record is folded at once, so a second post decided before the first commits
        gets the next number.
        """
        args = self._checked(m.ANNEX_POST, arguments)
        if args["hall_id"] != from_hall:
            raise HallMismatch(f"hall {from_hall} posted as hall {args['hall_id']}")
        pair = self.pair_of(from_hall)
        item = {key: args[key] for key in _ITEM_KEYS if key in args}
        _check_kind(item, "main" if from_hall == pair.main else "annex", from_hall)
        known = self.requests.get((from_hall, args["request_id"]))
        if known is not None:
            if known.item != item:
                raise RequestIdReused(f"request id {args['request_id']} was used for another post; the first stands")
            return None, {"request_id": known.request_id, "seq": known.seq}
        to_hall = pair.partner(from_hall)
        relayed = CentralAnnexRelayed(from_hall=from_hall, to_hall=to_hall, request_id=args["request_id"],
                                      seq=len(self.streams.get(to_hall, ())) + 1, item=item)
        self.apply(relayed)
        return relayed, {"request_id": relayed.request_id, "seq": relayed.seq}

    def fetch(self, hall_id: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Answer ``annex_fetch``: the items sent to ``hall_id`` after ``after``, a page at a time."""
        args = self._checked(m.ANNEX_FETCH, arguments)
        if args["hall_id"] != hall_id:
            raise HallMismatch(f"hall {hall_id} fetched as hall {args['hall_id']}")
        self.pair_of(hall_id)
        stream = self.streams.get(hall_id, [])
        page = stream[args["after"] : args["after"] + m.ANNEX_PAGE_ITEMS]
        return {"items": [delivered(r) for r in page], "more": args["after"] + len(page) < len(stream),
                "last_seq": len(stream)}

    @staticmethod
    def _checked(message: m.Message, arguments: Mapping[str, Any]) -> dict[str, Any]:
        try:
            return m.check_arguments(message, arguments)
        except CentralMessageError as error:
            raise BadAnnexArgument(str(error)) from None


def _check_kind(item: Mapping[str, Any], role: str, from_hall: str) -> None:
    """Refuse an item that is not one of the declared kinds as its declaration says it."""
    kind = item.get("kind")
    rule = m.ANNEX_KIND_RULES.get(str(kind))
    if rule is None:
        raise BadAnnexArgument(f"annex_post: there is no hall-annex item of kind {kind!r}")
    if rule.sender not in ("either", role):
        raise BadAnnexArgument(f"annex_post: hall {from_hall} is the pair's {role}; an item {kind!r} comes from the "
                               f"{rule.sender} hall only")
    fields = set(item) - {"game_id", "kind"}
    missing = [name for name in rule.required if name not in fields]
    if missing:
        raise BadAnnexArgument(f"annex_post: an item {kind!r} carries {', '.join(rule.required)}; "
                               f"{', '.join(missing)} missing")
    extra = sorted(fields - set(rule.required) - set(rule.optional))
    if extra:
        raise BadAnnexArgument(f"annex_post: an item {kind!r} carries no {', '.join(extra)}")


def delivered(record: CentralAnnexRelayed) -> dict[str, Any]:
    """The item as the receiving hall gets it (``annex_delivered``, an ``annex_fetch`` item)."""
    return {"seq": record.seq, "from_hall": record.from_hall, **dict(record.item)}


__all__ = ["AnnexPair", "AnnexRelay", "NotAnnexPair", "delivered"]
