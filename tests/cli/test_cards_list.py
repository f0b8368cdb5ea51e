"""``bingo cards list`` shows the last card sold of each series, as the journal records the sales (R82.5)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from hall_server.cli import main
from hall_server.store.cards import add_card_set, add_series
from hall_server.store.database import open_database
from protocol.strips import sample_strips
from server_kit.journal.sql import Journal


@pytest.mark.req("R82.5")
def test_the_listing_shows_the_last_card_sold_from_the_journal(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'hall.sqlite3'}"
    engine = open_database(url)
    cells = sample_strips(2, random.Random(5).randbytes).reshape(-1, 27)
    add_card_set(engine, "classic", cells, [str(k // 6 + 1) for k in range(len(cells))], "generated")
    add_series(engine, "classic", 1001, 100, 12)
    add_series(engine, "classic", 1002, 100, 12)
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=tmp_path / "journal.head")
    sale = {"game_id": "g1", "series": 1001, "seller": "ana", "account": "cash:ana"}
    journal.append(1, [("paper_cards_sold", {**sale, "first": 1, "last": 5, "count": 5, "amount_cents": 500})])
    journal.append(2, [("paper_cards_sold", {**sale, "first": 6, "last": 9, "count": 4, "amount_cents": 400})])
    listing = CliRunner().invoke(main, ["--db", url, "cards", "list"])
    assert listing.exit_code == 0, listing.output
    assert "series 1001: 12 cards at 1.00 EUR, last sold 9" in listing.output
    assert "series 1002: 12 cards at 1.00 EUR, last sold -" in listing.output
