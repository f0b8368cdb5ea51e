"""A hall day's export rebuilt from its journal segment alone, for ``bingo audit verify``.

The export's own fold (:class:`~hall_server.audit.export.DayFold`) reads the segment
of ``journal.jsonl`` and writes the day's scenario and result again; the check in
:mod:`server_kit.audit_verify` compares them with the files.  Three things the export
took from outside the segment are taken from ``scenario.json`` instead, as facts the
segment cannot vouch for on its own (``docs/audit.md``, "Verifying an export"):

* the levels the day opened with (the records before the day's verification);
* the date of a megabingo announced before the day;
* the numbers on each card (the card store's); they are checked to agree with
  each other (a card of a set prints alike in every series and every game) and, by
  the replay, with the winners the records name.

The prize rules are the scenario's, held to every ``sale_closed`` record as the
export holds the configuration's to them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

from hall_server.audit.export import AuditError, DayFold
from protocol.cards import Card
from protocol.replay import parse_scenario
from server_kit.audit_folder import JOURNAL, SCENARIO
from server_kit.audit_verify import ExportFault, ExportFiles, Rebuilt

SCENARIO_RULES = "scenario.json's rules"


class ScenarioLayouts:
    """The card layouts of :class:`~hall_server.audit.export.CardLayouts`, from the scenario's cards."""

    def __init__(self, scenario: Mapping[str, Any], card_sets: Mapping[int, str]) -> None:
        self._cards: dict[tuple[str, int], tuple[str, tuple[int, ...]]] = {}  # (set or label, number) -> id, cells
        for session in scenario["sessions"]:
            for game in session["games"]:
                for card in game["cards"]:
                    self._take(card, card_sets)

    def _take(self, card: Mapping[str, Any], card_sets: Mapping[int, str]) -> None:
        card_id = str(card["id"])
        series, _, number = card_id.rpartition("-")
        if not number.isdigit():
            return  # no card the records name: the comparison names it
        where = card_sets.get(int(series), series) if series.isdigit() else series
        cells = Card.from_rows(card["rows"]).cells
        key = (where, int(number))
        known = self._cards.setdefault(key, (card_id, cells))
        if known[1] != cells:
            kind = f"card set {where}" if series.isdigit() else f"library {where}"
            raise ExportFault(
                f"{SCENARIO}: cards {known[0]} and {card_id} hold different numbers, though both are card {number} "
                f"of the {kind} (every series of a set prints the same cards)"
            )

    def _cells(self, where: str, number: int, what: str) -> Sequence[int]:
        found = self._cards.get((where, number))
        if found is None:
            raise ExportFault(f"{SCENARIO}: card {number} of {what} is in play in the records, but in no game of the file")
        return found[1]

    def paper(self, card_set: str, number: int) -> Sequence[int]:
        return self._cells(card_set, number, f"card set {card_set}")

    def virtual(self, series: str, number: int) -> Sequence[int]:
        return self._cells(series, number, f"the library of series {series}")


def _megabingo_announced(scenario: Mapping[str, Any]) -> str | None:
    for session in scenario["sessions"]:
        for game in session["games"]:
            if game.get("megabingo_announced") is not None:
                return str(game["megabingo_announced"])
    return None


def rebuild(files: ExportFiles) -> Rebuilt:
    """The day's scenario and result as the segment's records say them."""
    facts = parse_scenario(files.scenario)
    if len(facts.sessions) != 1:
        raise ExportFault(f"{SCENARIO}: holds {len(facts.sessions)} sessions; a hall's export holds one, its day's")
    day = files.scenario["sessions"][0]["date"]
    fold = DayFold(day, opening=dataclasses.asdict(facts.opening),
                   megabingo_announced=_megabingo_announced(files.scenario))
    try:
        for record in files.records:
            fold.feed(record)
        made = fold.export(facts.rules, ScenarioLayouts(files.scenario, fold.card_sets), rules_from=SCENARIO_RULES)
    except AuditError as error:
        raise ExportFault(f"{JOURNAL}: the records do not make the day of {SCENARIO} ({day}): {error}") from None
    segment = {r.seq for r in made.records}
    for record in files.records:
        if record.seq not in segment:
            raise ExportFault(
                f"{JOURNAL} record {record.seq}: is not in the day's segment (from the verification of {day} "
                "to its session's close)"
            )
    return Rebuilt(made.scenario, made.result)


__all__ = ["ScenarioLayouts", "rebuild"]
