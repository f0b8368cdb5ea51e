"""An audit export's documents checked against its journal records (FORMATS.md section 3).

What an export holds (:class:`ExportFiles`: ``scenario.json``, ``result.json``, the
journal segment and its key), the errors of its check, and the checks that need
nothing but the documents and the records, so that ``bingo audit verify`` (on the
files, :mod:`server_kit.audit_verify`) and the regulator's receiver (on the records it
holds, :mod:`regulator.days`) make the same ones, in this order:

2. **``scenario.json`` is what the records say**: the day is rebuilt from the records
   by the server's own rebuild (a :data:`Rebuild`: the hall's fold of its records,
   :mod:`protocol.audit.hall_rebuild`; the central server's of its network game records,
   :mod:`protocol.audit.central_rebuild`) and compared field by field;
3. **``result.json`` is what the records say**: the prizes, payments and pot levels of
   the same rebuild, compared field by field;
4. **the replay of ``scenario.json`` equals ``result.json``**: the check ``bingo replay``
   makes, through :func:`protocol.replay.replay`.

(Step 1, every record's hash, signature and link, is made where the records are
read: on the files by :func:`server_kit.audit_verify.check_segment`, at the receiver
as each record arrives.)  A document that cannot be read as its format raises
:class:`ExportUnreadable`; a fault in what the documents say raises
:class:`ExportFault`.  Each message is one line naming the file, and the record
(``seq``) or the game and field at fault.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Callable, Mapping, Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from protocol.chain import Record
from protocol.errors import DomainError
from protocol.money import format_cents
from protocol.replay import ReplayError, parse_scenario, replay

#: The four files of an export.
SCENARIO = "scenario.json"
RESULT = "result.json"
JOURNAL = "journal.jsonl"
PUBLIC_KEY = "public-key.pem"
FILES = (SCENARIO, RESULT, JOURNAL, PUBLIC_KEY)
#: How much of a differing value a message shows.
SHOWN = 80
HALL, CENTRAL = "hall", "central"


class ExportUnreadable(DomainError):
    """A file of the export that cannot be read as its format; the message names it."""


class ExportFault(DomainError):
    """The first thing the files say that does not hold; the message names the file and where."""


@dataclass(frozen=True)
class ExportFiles:
    """The four files of an export, read (``folder``: where they are, for the messages)."""

    folder: PurePath
    scenario: dict[str, Any]
    result: dict[str, Any]
    records: tuple[Record, ...]
    public_key: Ed25519PublicKey


@dataclass(frozen=True)
class Rebuilt:
    """The two documents as the journal's records say them, and the ids of the games they hold, in order."""

    scenario: dict[str, Any]
    result: dict[str, Any]
    games: tuple[str, ...] = field(default=())
    #: What else the records were found to hold, for the summary (a central day's chain of carries).
    notes: tuple[str, ...] = ()


#: A server's rebuild of an export's documents from its records (raises :class:`ExportFault`).
Rebuild = Callable[[ExportFiles], Rebuilt]


@dataclass(frozen=True)
class Verified:
    """What a verified export holds, for the one-line summary."""

    kind: str
    records: int
    first_seq: int
    last_seq: int
    dates: tuple[str, ...]
    games: int
    prizes: int
    sales_cents: int
    paid_cents: int
    tax_cents: int
    #: The ids of the games replayed (the hall's ``2026-12-01-s1-g2``, the central server's own).
    game_ids: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def summary(self, folder: PurePath) -> str:
        days = ", ".join(self.dates)
        return (
            f"{folder}: verified ({self.kind} export of {days}): {self.records} journal records, seq {self.first_seq} "
            f"to {self.last_seq}, signed and chained; {self.games} game(s), {self.prizes} prize(s); sales "
            f"{format_cents(self.sales_cents)}, paid {format_cents(self.paid_cents)}, tax "
            f"{format_cents(self.tax_cents)}; scenario.json and result.json are what the records say, and the "
            "replay of the scenario is the result" + "".join(f"; {note}" for note in self.notes)
        )


# --- Reading a document -----------------------------------------------------------------


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {json.dumps(key)} appears twice in one object")
        out[key] = value
    return out


def strict_json(text: str) -> Any:
    """``text`` as JSON, refusing NaN and Infinity and a key repeated in one object (:class:`ValueError`)."""
    return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_no_repeated_keys)


def document(text: str, where: str, format: str | tuple[str, ...]) -> dict[str, Any]:
    """The JSON document ``text`` (named ``where``) of ``format`` (or of one of them); :class:`ExportUnreadable`
    otherwise."""
    formats = (format,) if isinstance(format, str) else format
    try:
        data = strict_json(text)
    except (ValueError, RecursionError) as error:
        raise ExportUnreadable(f"{where} is not valid JSON: {error}") from None
    if not isinstance(data, dict) or data.get("format") not in formats:
        named = " or ".join(formats)
        raise ExportUnreadable(f"{where} is not a {named} document (its \"format\" is not {' or '.join(map(repr, formats))})")
    return data


# --- Comparing documents --------------------------------------------------------------


def _shown(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _step(key: str | int, items: Sequence[Any]) -> str:
    """A list item named by what it is: a game by its number, a card by its id."""
    for item in items:
        if isinstance(item, dict):
            # A session is its date, and its number when the date holds several (bingo-replay/3): 2026-12-01-s2.
            session = f"{item['date']}" + (f"-s{item['session']}" if "session" in item else "") if "date" in item else ""
            if isinstance(item.get("game_id"), str):  # a joint game (R3.5.b)
                return f"game {item['game_id']}" + (f" of {session}" if session else "")
            if "game" in item and isinstance(item.get("game"), int):
                return f"game {item['game']}" + (f" of {session}" if session else "")
            if "date" in item and "games" in item:
                return f"session {session}"
            for name in ("id", "card"):
                if name in item:
                    return f"card {item[name]}"
    return f"[{key}]"


def first_difference(expected: Any, actual: Any, path: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """Where ``actual`` first differs from ``expected``, and how; ``None`` if they are equal.

    The place is a path a person reads (``game 2 of 2026-12-01: prizes.line.paid.card V1-13.cents``);
    dictionaries are walked in ``expected``'s key order, lists item by item.
    """
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            if key not in actual:
                return _path(path), f"has no {key}; {{says}} {_shown(expected[key])}"
            found = first_difference(expected[key], actual[key], (*path, key))
            if found:
                return found
        for key in actual:
            if key not in expected:
                return _path(path), f"holds {key} = {_shown(actual[key])}, which is not in {{source}}"
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for index, (want, have) in enumerate(zip(expected, actual)):
            moved = _moved(want, have)
            if moved:
                return _path((*path, f"[{index}]")), moved
            found = first_difference(want, have, (*path, _step(index, [want, have])))
            if found:
                return found
        if len(actual) > len(expected):
            extra = actual[len(expected)]
            return _path(path), (f"holds {len(actual)} entries; {{says}} {len(expected)}: "
                           f"{_step(len(expected), [extra])} = {_shown(extra)} is not in {{source}}")
        if len(expected) > len(actual):
            missing = expected[len(actual)]
            return _path(path), (f"holds {len(actual)} entries; {{says}} {len(expected)}: "
                           f"{_step(len(actual), [missing])} = {_shown(missing)} is missing")
        return None
    if type(expected) is not type(actual) or expected != actual:
        return _path(path), f"is {_shown(actual)}; {{says}} {_shown(expected)}"
    return None


def _moved(want: Any, have: Any) -> str | None:
    """How a card stands where the other should (removed, added or moved), if it does."""
    if isinstance(want, dict) and isinstance(have, dict):
        for name in ("id", "card"):
            if name in want and name in have and want[name] != have[name]:
                return (f"is card {have[name]}; {{says}} card {want[name]} (a card removed, added or moved)")
    return None


def _path(path: tuple[str, ...]) -> str:
    games = [step for step in path if step.startswith("game ")]
    sessions = [step.removeprefix("session ") for step in path if step.startswith("session ")]
    rest = [step for step in path if not step.startswith(("game ", "session ")) and step not in ("sessions", "games")]
    named = games[-1] if games else (f"session {sessions[-1]}" if sessions else "")
    if games and sessions and " of " not in named:
        named = f"{named} of {sessions[-1]}"
    field = "".join(step if step.startswith("[") or not index else f".{step}" for index, step in enumerate(rest))
    if named and field:
        return f"{named}: {field}"
    return named or field or "the document"


def _canonical(document: Mapping[str, Any]) -> str:
    """``document`` as JSON text that two equal documents share: sorted keys, ``true`` apart from ``1``."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"))


def compare(file: str, given: Mapping[str, Any], expected: Mapping[str, Any], source: str, says: str) -> None:
    """Raise :class:`ExportFault` at the first place ``given`` (the file) differs from ``expected``.

    ``source`` names where ``expected`` comes from (``the records``), ``says`` how it
    is quoted (``the records say``).
    """
    if _canonical(expected) == _canonical(given):
        return  # the same JSON: nothing to walk (a busy day's scenario holds every card of the day)
    found = first_difference(dict(expected), dict(given))
    if found is not None:
        where, how = found
        # Not str.format: the values shown are JSON, whose braces are not placeholders.
        raise ExportFault(f"{file}: {where} {how.replace('{source}', source).replace('{says}', says)}")


# --- The checks -----------------------------------------------------------------------


def export_kind(records: Sequence[Record]) -> str:
    """:data:`CENTRAL` for a central server's network games, :data:`HALL` for a hall's day."""
    return CENTRAL if any(r.type.startswith("central_game_") for r in records) else HALL


def check_documents(files: ExportFiles, kind: str, rebuild: Rebuild) -> Verified:
    """Steps 2 to 4: the documents are what the records say (by ``rebuild``, a ``kind`` server's),
    and the replay of the scenario is the result; raises at the first fault."""
    try:
        rebuilt = rebuild(files)
    except (KeyError, TypeError, ValueError) as error:
        raise ExportFault(f"{JOURNAL}: the records do not hold what a {kind} server writes: {error!r}") from None
    compare(SCENARIO, files.scenario, rebuilt.scenario, "the records", "the records say")
    compare(RESULT, files.result, rebuilt.result, "the records", "the records say")
    try:
        replayed = replay(parse_scenario(files.scenario))
    except ReplayError as error:
        raise ExportUnreadable(f"{files.folder / SCENARIO}: the replay refuses it: {error}") from None
    compare(RESULT, files.result, replayed, "the replay of scenario.json", "the replay of scenario.json gives")
    games = [*files.result["games"], *files.result.get("joint_games", ())]
    totals = files.result["totals"]
    return Verified(
        kind=kind,
        records=len(files.records),
        first_seq=files.records[0].seq,
        last_seq=files.records[-1].seq,
        dates=tuple(dict.fromkeys(session["date"] for session in files.scenario["sessions"])),
        games=len(games),
        prizes=sum(len(game["prizes"]) for game in games),
        sales_cents=totals["sales_cents"],
        paid_cents=totals["paid_cents"],
        tax_cents=totals["tax_cents"],
        game_ids=rebuilt.games,
        notes=rebuilt.notes,
    )


__all__ = [
    "CENTRAL",
    "FILES",
    "HALL",
    "JOURNAL",
    "PUBLIC_KEY",
    "RESULT",
    "SCENARIO",
    "ExportFault",
    "ExportFiles",
    "ExportUnreadable",
    "Rebuild",
    "Rebuilt",
    "Verified",
    "check_documents",
    "compare",
    "document",
    "export_kind",
    "first_difference",
    "strict_json",
]
