"""The hall's virtual library: read from the card store, made on a first start if missing.

A hall's virtual cards come from one library (``bingo cards`` registers libraries;
``hall_server/store/cards.py``).  The hall game names its cards by an integer series,
so the library is put in play under :data:`VIRTUAL_SERIES_NUMBER`, a number no paper
series of the hall may take (``bingo cards add-series`` refuses it, and
:meth:`GamesModule.add_virtual_series` refuses a clash at start).  The number never
changes: the journal's records name cards by it.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine
from twisted.logger import Logger

from hall_server.hall.virtual import VirtualLibrary
from hall_server.store import cards as card_store
from protocol.cardfile import card_codes
from protocol.library import build_distinct_strips
from server_kit.keys import load_card_key

log = Logger()
VIRTUAL_SERIES_NUMBER = card_store.VIRTUAL_SERIES_NUMBER
DEFAULT_LIBRARY = "terminals"
DEFAULT_SERIES_LABEL = "V1"
DEFAULT_STRIPS = 500  # 3,000 cards: 96 cards for each of ~30 players, or 3 each for a thousand


def load_virtual_library(
    engine: Engine, key_path: Path, *, name: str = DEFAULT_LIBRARY, strips: int = DEFAULT_STRIPS
) -> VirtualLibrary:
    """The library ``name``; if it is missing, generate it with cards no set or library holds (R82.9-12)."""
    known = {library.name for library in card_store.list_libraries(engine)}
    if name not in known:
        log.info("Generating virtual library {name}: {n} strips", name=name, n=strips)
        cells = build_distinct_strips(strips, card_store.registered_prints(engine))
        ids = [card_store.library_card_id(DEFAULT_SERIES_LABEL, k) for k in range(1, len(cells) + 1)]
        codes = card_codes(load_card_key(key_path, create=True), ids, cells)
        card_store.add_library(engine, name, DEFAULT_SERIES_LABEL, cells, codes)
    cards = card_store.library_cards(engine, name)
    return VirtualLibrary(cards.library.series, VIRTUAL_SERIES_NUMBER, cards.cells, cards.codes)
