"""A hall day's export rebuilt from its journal segment alone, for ``bingo audit verify`` and the
regulator's receiver.

The export's own fold (:class:`~protocol.audit.hall_day.DayFold`) reads the segment
of ``journal.jsonl`` (or the records the receiver holds) and writes the day's scenario
and result again; :func:`protocol.audit.check.check_documents` compares them with the
documents.  Three things the export took from outside the segment are taken from
``scenario.json`` instead, as facts the segment cannot vouch for on its own
(``docs/audit.md``, "Verifying an export"):

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
import hashlib
from typing import Any, Mapping, Sequence

import numpy as np

from protocol.audit.check import JOURNAL, SCENARIO, ExportFault, ExportFiles, Rebuilt
from protocol.audit.hall_day import AuditError, DayFold
from protocol.cards import CELLS, card_from_rows, fingerprints
from protocol.library import build_distinct_strips
from protocol.replay import parse_scenario
from protocol.strips import RandomBytes

SCENARIO_RULES = "scenario.json's rules"


class ScenarioLayouts:
    """The card layouts of :class:`~protocol.audit.hall_day.CardLayouts`, from the scenario's cards."""

    def __init__(self, scenario: Mapping[str, Any], card_sets: Mapping[int, str]) -> None:
        self._cards: dict[tuple[str, int], tuple[str, tuple[int, ...]]] = {}  # (set or label, number) -> id, cells
        self._stand_ins: list[tuple[int, ...]] = []
        self._issued: list[tuple[int, ...]] = []
        for session in scenario["sessions"]:
            for game in (*session["games"], *session.get("joint_games", ())):
                for card in game["cards"]:  # a joint game's partner_winners carry their numbers in the records
                    self._take(card, card_sets)

    def _take(self, card: Mapping[str, Any], card_sets: Mapping[int, str]) -> None:
        card_id = str(card["id"])
        series, _, number = card_id.rpartition("-")
        if not number.isdigit():
            return  # no card the records name: the comparison names it
        where = card_sets.get(int(series), series) if series.isdigit() else series
        cells = card_from_rows(card["rows"]).cells
        key = (where, int(number))
        known = self._cards.setdefault(key, (card_id, cells))
        if known[1] != cells:
            kind = f"card set {where}" if series.isdigit() else f"library {where}"
            raise ExportFault(
                f"{SCENARIO}: cards {known[0]} and {card_id} hold different numbers, though both are card {number} "
                f"of the {kind} (every series of a set prints the same cards)"
            )

    def _cells(self, where: str, number: int) -> Sequence[int]:
        found = self._cards.get((where, number))
        if found is not None:
            return found[1]
        # A card the records put in play and the file does not hold: numbers held by no card of
        # the file stand in for it, so that the comparison names the game and the card.
        if not self._stand_ins:
            used = [cells for _, cells in self._cards.values()] + self._issued
            self._stand_ins = [tuple(int(n) for n in row) for row in build_distinct_strips(
                1, fingerprints(np.array(used, dtype=np.uint8).reshape(-1, CELLS)),
                random_bytes=seeded_bytes(len(self._issued)))]
        self._issued.append(self._stand_ins.pop())
        return self._issued[-1]

    def paper(self, card_set: str, number: int) -> Sequence[int]:
        return self._cells(card_set, number)

    def virtual(self, series: str, number: int) -> Sequence[int]:
        return self._cells(series, number)


def seeded_bytes(seed: int) -> RandomBytes:
    """Bytes that depend on ``seed`` alone (SHA-256 in counter mode): the stand-in cards, and so
    the messages that show them, come out alike at every run."""
    blocks = 0

    def random_bytes(count: int) -> bytes:
        nonlocal blocks
        out = bytearray()
        while len(out) < count:
            out += hashlib.sha256(f"{seed}:{blocks}".encode()).digest()
            blocks += 1
        return bytes(out[:count])

    return random_bytes


def _megabingo_announced(scenario: Mapping[str, Any]) -> str | None:
    for session in scenario["sessions"]:
        for game in session["games"]:
            if game.get("megabingo_announced") is not None:
                return str(game["megabingo_announced"])
    return None


def _check_opening_carries(files: ExportFiles, opening: Mapping[str, int]) -> None:
    """The carries the day opened with are those its first sale closed with (R88.5), less what
    the joint games this hall drew for and settled before it carried in (R3.5.b)."""
    joint: dict[str, int] = {"line": 0, "bingo": 0}
    drawn_here: set[str] = set()  # the joint games this hall opened: it is their main hall and carries their rest
    closed = None
    for record in files.records:
        if record.type == "annex_game_opened" and record.payload.get("relay_seq") is None:
            drawn_here.add(record.payload["game_id"])
        elif record.type == "annex_prizes_paid" and record.payload["game_id"] in drawn_here:
            for prize in record.payload["prizes"]:
                joint[prize["pattern"]] += prize["carry_cents"]
        elif record.type == "sale_closed":
            closed = record
            break
    if closed is None:
        return
    for name, key in (("carry_line", "carry_line_cents"), ("carry_bingo", "carry_bingo_cents")):
        recorded = closed.payload.get(key)
        carried = joint[name.removeprefix("carry_")]
        if recorded != opening[name] + carried:
            raise ExportFault(
                f"{SCENARIO}: opening.{name} is {opening[name]}"
                + (f" and the day's joint games carried {carried} into it" if carried else "")
                + f"; the records say {recorded} (record {closed.seq}, the day's first sale_closed)"
            )


def rebuild(files: ExportFiles) -> Rebuilt:
    """The day's scenario and result as the segment's records say them."""
    facts = parse_scenario(files.scenario)
    dates = sorted({session.date for session in facts.sessions})
    if len(dates) != 1:
        raise ExportFault(f"{SCENARIO}: holds sessions of {len(dates)} dates; a hall's export holds its day's")
    day = dates[0].isoformat()
    fold = DayFold(day, opening=dataclasses.asdict(facts.opening),
                   megabingo_announced=_megabingo_announced(files.scenario))
    try:
        for record in files.records:
            fold.feed(record)
        # An export of either version is rebuilt in its own: one made before version 2 checks as it was made.
        made = fold.export(facts.rules, ScenarioLayouts(files.scenario, fold.card_sets), rules_from=SCENARIO_RULES,
                           format=facts.format)
    except AuditError as error:
        raise ExportFault(f"the records of {JOURNAL} do not make the day of {SCENARIO} ({day}): {error}") from None
    _check_opening_carries(files, dataclasses.asdict(facts.opening))
    segment = {r.seq for r in made.records}
    for record in files.records:
        if record.seq not in segment:
            raise ExportFault(
                f"{JOURNAL} record {record.seq}: is not in the day's segment (from the verification of {day} "
                "to its session's close)"
            )
    return Rebuilt(made.scenario, made.result, made.games + made.joint_games)


__all__ = ["ScenarioLayouts", "rebuild"]
