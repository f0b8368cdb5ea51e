"""A hall's database read for one day's export: the journal, verified, and the card store.

The journal names cards by series and number; their layouts are in the card store
(:mod:`hall_server.store.cards`): a paper card's in its card set (every series of a set
prints the same cards), a virtual card's in the library of its series label.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator, Sequence

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from sqlalchemy import Engine

from hall_server.store import cards as card_store
from protocol.audit.hall_day import AuditError, DayExport, DayFold
from protocol.audit.report import AuditReport
from protocol.chain import Record, verify_chain
from protocol.settlement import PrizeRules
from server_kit.journal import table as table
from server_kit.journal.sql import read_head


class StoreCardLayouts:
    """:class:`~protocol.audit.hall_day.CardLayouts` over the card store, each set read once."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._sets: dict[str, np.ndarray] = {}
        self._libraries: dict[str, np.ndarray] = {}

    def paper(self, card_set: str, number: int) -> Sequence[int]:
        if card_set not in self._sets:
            self._sets[card_set] = card_store.set_cards(self.engine, card_set)[1]
        return _card(self._sets[card_set], number, f"card set {card_set!r}")

    def virtual(self, series: str, number: int) -> Sequence[int]:
        if series not in self._libraries:
            names = [library.name for library in card_store.list_libraries(self.engine) if library.series == series]
            if not names:
                raise AuditError(f"no virtual library of series {series} is in the card store")
            self._libraries[series] = card_store.library_cards(self.engine, names[0]).cells
        return _card(self._libraries[series], number, f"the library of series {series}")


def _card(cells: np.ndarray, number: int, where: str) -> Sequence[int]:
    if not 1 <= number <= len(cells):
        raise AuditError(f"{where} holds {len(cells)} cards; the journal names card {number}")
    return [int(n) for n in cells[number - 1]]


def read_day(
    engine: Engine, public_key: Ed25519PublicKey, head: Path, day: str, rules: PrizeRules
) -> DayExport:
    """The export of ``day`` from the whole journal, which must verify (chain, signatures, head).

    An export vouches for the facts it carries, so it is made only from a journal
    that checks; the check and the day's fold share one pass over the records.
    """
    fold = DayFold(day)
    # The head is read first: records committed while the journal is read only lengthen it.
    known_head = read_head(head)

    def folded(records: Iterator[Record]) -> Iterator[Record]:
        # A record is folded once the check has passed it: when the next one is asked for.
        checked: Record | None = None
        for record in records:
            if checked is not None:
                fold.feed(checked)
            yield record
            checked = record
        if checked is not None:
            fold.feed(checked)

    verify_chain(folded(table.read(engine)), public_key, head=known_head)
    return fold.export(rules, StoreCardLayouts(engine))


def audit_report(records: Iterable[Record], day: str, rules: PrizeRules, engine: Engine) -> AuditReport:
    """``day``'s audit export for the regulator from ``records`` (the whole journal, verified), or its refusal.

    A day the export refuses (:class:`AuditError`, a game the replay format cannot
    express) is a report all the same: it says why, and names the day's segment.
    """
    fold = DayFold(day)
    try:
        made = fold.feed_all(records).export(rules, StoreCardLayouts(engine))
    except AuditError as error:
        return AuditReport.refused(day, str(error), fold.segment)
    return AuditReport.of_export(day, made.scenario, made.result, made.records)
