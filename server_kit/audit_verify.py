"""``bingo audit verify DIR``: an audit export checked with nothing but its four files.

FORMATS.md section 3 says what an export holds; this module checks that the files
hold together, in this order, and stops at the first fault:

1. **the journal segment**: every record of ``journal.jsonl`` hashes to its ``hash``,
   is signed by ``public-key.pem`` and follows the record before it (``seq`` one more,
   ``prev`` its hash); the first record's ``prev`` is the genesis hash exactly when it
   is the journal's record 1, and a SHA-256 hash otherwise;
2. **``scenario.json`` is what the records say**: the day is rebuilt from the records
   by the server's own rebuild (a :data:`Rebuild`: the hall's fold of its records, the
   central server's of its network game records) and compared field by field;
3. **``result.json`` is what the records say**: the prizes, payments and pot levels of
   the same rebuild, compared field by field;
4. **the replay of ``scenario.json`` equals ``result.json``**: the check ``bingo replay``
   makes, through :func:`protocol.replay.replay`.

A file that cannot be read as its format (missing, not JSON, not a journal record,
not a key, a scenario the replay does not read) raises :class:`ExportUnreadable`; a
fault in what the files say raises :class:`ExportFault`.  Each message is one line
naming the file, and the record (``seq``) or the game and field at fault.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from protocol.chain import GENESIS, ChainError, Record
from protocol.errors import DomainError
from protocol.money import format_cents
from protocol.replay import INPUT_FORMAT, OUTPUT_FORMAT, ReplayError, parse_scenario, replay
from server_kit.audit_folder import FILES, JOURNAL, PUBLIC_KEY, RESULT, SCENARIO, one_line, verify_segment

#: The fields of a ``journal.jsonl`` line and the JSON type each must have.
RECORD_FIELDS: Mapping[str, type] = {
    "seq": int, "time_ms": int, "type": str, "payload": dict, "prev": str, "hash": str, "signature": str,
}  # fmt: skip
_HASH = re.compile(r"[0-9a-f]{64}")
#: How much of a differing value a message shows.
SHOWN = 80


class ExportUnreadable(DomainError):
    """A file of the export that cannot be read as its format; the message names it."""


class ExportFault(DomainError):
    """The first thing the files say that does not hold; the message names the file and where."""


@dataclass(frozen=True)
class ExportFiles:
    """The four files of an export, read."""

    folder: Path
    scenario: dict[str, Any]
    result: dict[str, Any]
    records: tuple[Record, ...]
    public_key: Ed25519PublicKey


@dataclass(frozen=True)
class Rebuilt:
    """The two documents as the journal's records say them."""

    scenario: dict[str, Any]
    result: dict[str, Any]
    #: What else the records were found to hold, for the summary (a central day's chain of carries).
    notes: tuple[str, ...] = ()


#: A server's rebuild of an export's documents from its records (raises :class:`ExportFault`).
Rebuild = Callable[[ExportFiles], Rebuilt]
HALL, CENTRAL = "hall", "central"
#: The exit status of ``bingo audit verify`` for a fault in what the files say, and for a file it cannot read.
FAULT, UNREADABLE = 1, 2


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
    notes: tuple[str, ...] = ()

    def summary(self, folder: Path) -> str:
        days = ", ".join(self.dates)
        return (
            f"{folder}: verified ({self.kind} export of {days}): {self.records} journal records, seq {self.first_seq} "
            f"to {self.last_seq}, signed and chained; {self.games} game(s), {self.prizes} prize(s); sales "
            f"{format_cents(self.sales_cents)}, paid {format_cents(self.paid_cents)}, tax "
            f"{format_cents(self.tax_cents)}; scenario.json and result.json are what the records say, and the "
            "replay of the scenario is the result" + "".join(f"; {note}" for note in self.notes)
        )


# --- Reading the files ----------------------------------------------------------------


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _no_repeated_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {json.dumps(key)} appears twice in one object")
        out[key] = value
    return out


def _json(text: str) -> Any:
    return json.loads(text, parse_constant=_refuse_constant, object_pairs_hook=_no_repeated_keys)


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ExportUnreadable(f"{path} is not UTF-8 text: {error}") from None
    except OSError as error:
        raise ExportUnreadable(f"{path} cannot be read: {error.strerror or error}") from None


def _document(path: Path, format: str) -> dict[str, Any]:
    try:
        data = _json(_text(path))
    except (ValueError, RecursionError) as error:
        raise ExportUnreadable(f"{path} is not valid JSON: {error}") from None
    if not isinstance(data, dict) or data.get("format") != format:
        raise ExportUnreadable(f"{path} is not a {format} document (its \"format\" is not {format!r})")
    return data


def _record(line: str, path: Path, number: int) -> Record:
    where = f"{path} line {number}"
    try:
        data = _json(line)
    except (ValueError, RecursionError) as error:
        raise ExportUnreadable(f"{where} is not valid JSON: {error}") from None
    if not isinstance(data, dict) or set(data) != set(RECORD_FIELDS):
        raise ExportUnreadable(f"{where} is not a journal record (an object of {', '.join(RECORD_FIELDS)})")
    for name, kind in RECORD_FIELDS.items():
        value = data[name]
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ExportUnreadable(f"{where} is not a journal record: its {name} is not a JSON {kind.__name__}")
    return Record(**data)


def _journal(path: Path) -> tuple[Record, ...]:
    lines = _text(path).splitlines()
    records = tuple(_record(line, path, number) for number, line in enumerate(lines, start=1))
    if not records:
        raise ExportUnreadable(f"{path} holds no journal record")
    return records


def _public_key(path: Path) -> Ed25519PublicKey:
    try:
        key = serialization.load_pem_public_key(path.read_bytes())
    except OSError as error:
        raise ExportUnreadable(f"{path} cannot be read: {error.strerror or error}") from None
    except (ValueError, TypeError) as error:
        raise ExportUnreadable(f"{path} is not a PEM public key: {error}") from None
    if not isinstance(key, Ed25519PublicKey):
        raise ExportUnreadable(f"{path} is not an Ed25519 public key (the journal's keys are Ed25519)")
    return key


def read_export(folder: Path) -> ExportFiles:
    """The four files of ``folder``; :class:`ExportUnreadable` names the first that cannot be read."""
    if not folder.is_dir():
        raise ExportUnreadable(f"{folder} is not a folder (an audit export is a folder of {', '.join(FILES)})")
    for name in FILES:
        if not (folder / name).is_file():
            raise ExportUnreadable(f"{folder / name} is missing (an audit export holds {', '.join(FILES)})")
    scenario = _document(folder / SCENARIO, INPUT_FORMAT)
    try:
        parse_scenario(scenario)
    except ReplayError as error:
        raise ExportUnreadable(f"{folder / SCENARIO} is not a scenario the replay reads: {error}") from None
    return ExportFiles(
        folder=folder,
        scenario=scenario,
        result=_document(folder / RESULT, OUTPUT_FORMAT),
        records=_journal(folder / JOURNAL),
        public_key=_public_key(folder / PUBLIC_KEY),
    )


# --- 1. The journal segment -----------------------------------------------------------


def check_segment(files: ExportFiles) -> None:
    """Every record's hash, signature and link, and the segment's first link."""
    first = files.records[0]
    if first.seq < 1:
        raise ExportFault(f"{JOURNAL} record {first.seq}: a journal's records are numbered from 1")
    if first.seq == 1 and first.prev != GENESIS:
        raise ExportFault(f"{JOURNAL} record 1: the journal's first record follows no record, but its prev is not "
                          "the genesis hash (64 zeros)")
    if first.seq > 1 and (first.prev == GENESIS or not _HASH.fullmatch(first.prev)):
        raise ExportFault(f"{JOURNAL} record {first.seq}: its prev is not the SHA-256 hash of a record before it")
    data = first.body
    if hashlib.sha256(data).hexdigest() == first.hash:
        try:
            files.public_key.verify(bytes.fromhex(first.signature), data)
        except (InvalidSignature, ValueError):
            signed = _signed_by_key(files)
            if not signed:
                raise ExportFault(
                    f"{PUBLIC_KEY} verifies none of the {len(files.records)} records of {JOURNAL}: it is not the key "
                    "that signed the journal (replaced), or every record was forged"
                ) from None
    try:
        verify_segment(files.records, files.public_key)
    except ChainError as error:
        raise ExportFault(f"{JOURNAL} {error}") from None


def _signed_by_key(files: ExportFiles) -> bool:
    for record in files.records:
        try:
            files.public_key.verify(bytes.fromhex(record.signature), record.body)
            return True
        except (InvalidSignature, ValueError):
            continue
    return False


# --- Comparing documents --------------------------------------------------------------


def _shown(value: Any) -> str:
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=True)
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "..."


def _step(key: str | int, items: Sequence[Any]) -> str:
    """A list item named by what it is: a game by its number, a card by its id."""
    for item in items:
        if isinstance(item, dict):
            if "game" in item and isinstance(item.get("game"), int):
                return f"game {item['game']}" + (f" of {item['date']}" if "date" in item else "")
            if "date" in item and "games" in item:
                return f"session {item['date']}"
            for name in ("id", "card"):
                if name in item:
                    return f"card {item[name]}"
    return f"[{key}]"


def first_difference(expected: Any, actual: Any, path: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """Where ``actual`` first differs from ``expected``, and how; ``None`` if they are equal.

    The place is a path a person reads (``game 2 of 2026-12-01: prizes.line.paid.card V1-13.cents``);
    dictionaries are walked in ``expected``'s key order, lists item by item.
    """
    where = _path(path)
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in expected:
            if key not in actual:
                return where, f"has no {key}; {{says}} {_shown(expected[key])}"
            found = first_difference(expected[key], actual[key], (*path, key))
            if found:
                return found
        for key in actual:
            if key not in expected:
                return where, f"holds {key} = {_shown(actual[key])}, which is not in {{source}}"
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
            return where, (f"holds {len(actual)} entries; {{says}} {len(expected)}: "
                           f"{_step(len(expected), [extra])} = {_shown(extra)} is not in {{source}}")
        if len(expected) > len(actual):
            missing = expected[len(actual)]
            return where, (f"holds {len(actual)} entries; {{says}} {len(expected)}: "
                           f"{_step(len(actual), [missing])} = {_shown(missing)} is missing")
        return None
    if type(expected) is not type(actual) or expected != actual:
        return where, f"is {_shown(actual)}; {{says}} {_shown(expected)}"
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


def compare(file: str, given: Mapping[str, Any], expected: Mapping[str, Any], source: str, says: str) -> None:
    """Raise :class:`ExportFault` at the first place ``given`` (the file) differs from ``expected``.

    ``source`` names where ``expected`` comes from (``the records``), ``says`` how it
    is quoted (``the records say``).
    """
    found = first_difference(dict(expected), dict(given))
    if found is not None:
        where, how = found
        raise ExportFault(f"{file}: {where} {how.format(source=source, says=says)}")


# --- The whole check ------------------------------------------------------------------


def export_kind(records: Sequence[Record]) -> str:
    """:data:`CENTRAL` for a central server's network games, :data:`HALL` for a hall's day."""
    return CENTRAL if any(r.type.startswith("central_game_") for r in records) else HALL


def verify_export(folder: Path, rebuilds: Mapping[str, Rebuild]) -> Verified:
    """Check ``folder`` in the order of this module's steps; raises at the first fault."""
    files = read_export(folder)
    check_segment(files)
    kind = export_kind(files.records)
    try:
        rebuilt = rebuilds[kind](files)
    except (KeyError, TypeError, ValueError) as error:
        raise ExportFault(f"{JOURNAL}: the records do not hold what a {kind} server writes: {error!r}") from None
    compare(SCENARIO, files.scenario, rebuilt.scenario, "the records", "the records say")
    compare(RESULT, files.result, rebuilt.result, "the records", "the records say")
    try:
        replayed = replay(parse_scenario(files.scenario))
    except ReplayError as error:
        raise ExportUnreadable(f"{folder / SCENARIO}: the replay refuses it: {error}") from None
    compare(RESULT, files.result, replayed, "the replay of scenario.json", "the replay of scenario.json gives")
    games = files.result["games"]
    totals = files.result["totals"]
    return Verified(
        kind=kind,
        records=len(files.records),
        first_seq=files.records[0].seq,
        last_seq=files.records[-1].seq,
        dates=tuple(session["date"] for session in files.scenario["sessions"]),
        games=len(games),
        prizes=sum(len(game["prizes"]) for game in games),
        sales_cents=totals["sales_cents"],
        paid_cents=totals["paid_cents"],
        tax_cents=totals["tax_cents"],
        notes=rebuilt.notes,
    )


def verify_and_tell(folder: Path, rebuilds: Mapping[str, Rebuild], echo: Callable[..., None]) -> int:
    """``bingo audit verify``: the check, its summary or its one-line fault told, the exit status returned.

    0 when everything holds, :data:`FAULT` naming the first fault, :data:`UNREADABLE` when
    a file is missing or cannot be read as its format.
    """
    try:
        verified = verify_export(folder, rebuilds)
    except ExportUnreadable as error:
        echo(one_line(error), err=True)
        return UNREADABLE
    except ExportFault as error:
        echo(one_line(error), err=True)
        return FAULT
    echo(verified.summary(folder))
    return 0


__all__ = [
    "CENTRAL",
    "FAULT",
    "HALL",
    "UNREADABLE",
    "ExportFault",
    "ExportFiles",
    "ExportUnreadable",
    "Rebuild",
    "Rebuilt",
    "Verified",
    "check_segment",
    "compare",
    "export_kind",
    "first_difference",
    "read_export",
    "verify_and_tell",
    "verify_export",
]

