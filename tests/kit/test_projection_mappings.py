"""A checkpoint keeps a record's frozen object (a dict of the records' own class) whole."""

from __future__ import annotations

from protocol.records import build
from protocol.records.central import CentralSaleClosed
from server_kit.journal.projection import decode, encode


def test_a_records_frozen_object_comes_back_from_a_checkpoint_with_its_items_and_class() -> None:
    """A record's ``Mapping`` field is a frozen dict subclass: its items were lost in a checkpoint,
    so a network game restored from one had no prize amounts."""
    closed = build(CentralSaleClosed.type, {
        "type": CentralSaleClosed.type, "game_id": "net-1", "closed_at_ms": 5, "cards_in_play": 40, "sales_cents": 4000, "house_share_cents": 1200,
        "prize_amounts": {"line": 800, "bingo": 2000}, "sharing": "by_stake",
    })
    assert isinstance(closed, CentralSaleClosed)
    restored = decode(encode([closed, closed.prize_amounts]))
    assert restored[0] == closed and restored[0].prize_amounts == {"line": 800, "bingo": 2000}
    assert type(restored[0].prize_amounts) is type(closed.prize_amounts)
    assert restored[1] is restored[0].prize_amounts  # shared once, as it was
