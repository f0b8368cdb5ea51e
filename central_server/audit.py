"""``bingo central audit-export``: the central server's network games of a day, for the inspector.

FORMATS.md section 3 on the central server: from a journal that verifies (every hash,
link and signature, and the signed head), every network game that ended on the day
is rebuilt from its records, and :mod:`central_server.domain.export` writes its raw
facts (``scenario.json``, card ids ``HALL/V1-13``) and what its own prize and payment
records say (``result.json``); :mod:`server_kit.audit_folder` writes them with the
day's journal segment and the journal's public key.

The day of a game is the date, in the central server's time zone (``central.timezone``),
of the record that ended it (``central_game_closed`` or ``central_game_not_played``).
A game declared not played (R96.2: every stake returned) or whose sale closed with no card
in play has nothing for the replay to recompute: it is left out, and named.  A game whose
cards a failed terminal's refund took out after the close is in, with those cards as
``refunded_after_close`` (R96.3: the house paid them back, the prizes stood), even when
no card was left to play.  A game the
replay format cannot express is refused, naming it.

The games of the programme's chain (R88.5) must chain: each takes exactly the carries of
the game of the chain before it (:func:`~central_server.domain.programme.check_links`);
a day whose carries do not chain is refused, naming the link.
"""

from __future__ import annotations

import datetime
import zoneinfo
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from central_server import store
from central_server.config import CentralConfig
from central_server.domain.export import result, scenario
from central_server.domain.game import CentralGame, Phase
from central_server.domain.programme import ChainBroken, check_links
from central_server.module import game_record
from protocol.audit.report import AuditReport
from protocol.chain import ChainError, Record
from protocol.errors import DomainError
from protocol.records import RecordError
from protocol.records.central import GAME_RECORDS, CentralGameScheduled
from server_kit import audit_folder
from server_kit.db.database import create
from server_kit.journal.sql import Journal
from server_kit.keys import load_journal_key, public_pem

_ENDS = frozenset({"central_game_closed", "central_game_not_played"})


class CentralAuditError(DomainError):
    """An export refused; the one-line message names the day or the game and why.

    ``segment``: the day's journal segment, when the refusal came once it was known.
    """

    def __init__(self, message: str, segment: Sequence[Record] = ()) -> None:
        super().__init__(message)
        self.segment = tuple(segment)


class NoGameEnded(CentralAuditError):
    """No network game ended on the day: there is nothing to export."""


@dataclass(frozen=True)
class CentralDay:
    """What was exported: the games, those left out and why, the journal segment, the two documents."""

    day: str
    games: tuple[str, ...]
    left_out: tuple[tuple[str, str], ...]
    records: tuple[Record, ...]
    scenario: dict[str, Any]
    result: dict[str, Any]
    #: The games of the day's chain, in order, each taking the carries of the one before (R88.5).
    chain: tuple[str, ...] = ()


def checked_day(day: str) -> str:
    """``day`` if it is a date ``YYYY-MM-DD``."""
    if audit_folder.is_day(day):
        return day
    raise CentralAuditError(f"--day is a date, YYYY-MM-DD, not {day!r}")


def export_day(config: CentralConfig, day: str, out: Path) -> CentralDay:
    """Write the network games of ``day`` into ``out`` (new or empty): all four files, or nothing."""
    audit_folder.check_out_folder(out)
    day = checked_day(day)
    records, key, library = verified_journal(config)
    made = build_day(records, library, config.timezone, day)
    audit_folder.write_export(made.scenario, made.result, made.records, public_pem(key), out)
    return made


def build_day(records: Sequence[Record], library: Mapping[str, np.ndarray], timezone: str, day: str) -> CentralDay:
    """The export of the network games that ended on ``day`` (in ``timezone``), from the whole journal
    ``records`` (verified); :class:`CentralAuditError` when it is refused."""
    zone = zoneinfo.ZoneInfo(timezone)
    games, spans, scheduled = rebuilt_games(records, library)
    ended = [game_id for game_id in games if game_id in spans and day_of(spans[game_id][1], zone) == day]
    if not ended:
        raise NoGameEnded(f"no network game of this central server ended on {day} ({timezone})")
    first = min(spans[g][0].seq for g in ended)
    last = max(spans[g][1].seq for g in ended)
    segment = tuple(r for r in records if first <= r.seq <= last)
    try:
        chain = check_links([(scheduled[g], games[g].carries or {}) for g in ended])
    except ChainBroken as error:
        raise CentralAuditError(f"the carries of {day} do not chain: {error}", segment) from None
    played, left_out = [], []
    for game_id in ended:
        game = games[game_id]
        if game.phase is Phase.NOT_PLAYED:
            left_out.append((game_id, "declared not played (R96.2), every stake returned"))
        elif game.sale is None or game.sale.cards_in_play == 0:
            left_out.append((game_id, "no card was in play"))
        else:
            played.append(game)
    if not played:
        named = ", ".join(f"{g} ({why})" for g, why in left_out)
        raise CentralAuditError(f"no network game was played to its end on {day}; left out: {named}", segment)
    try:
        documents = scenario(day, played, library), result(day, played)
    except DomainError as error:  # a game the replay format cannot express
        raise CentralAuditError(str(error), segment) from None
    return CentralDay(day, tuple(g.game_id for g in played), tuple(left_out), segment, *documents, chain)


def audit_report(records: Sequence[Record], library: Mapping[str, np.ndarray], timezone: str,
                 day: str) -> AuditReport | None:
    """``day``'s audit export for the regulator, or its refusal; None when no network game ended that day."""
    try:
        made = build_day(records, library, timezone, day)
    except NoGameEnded:
        return None
    except CentralAuditError as error:
        return AuditReport.refused(day, str(error), error.segment)
    return AuditReport.of_export(day, made.scenario, made.result, made.records)


def verified_journal(config: CentralConfig) -> tuple[list[Record], Ed25519PrivateKey, dict[str, np.ndarray]]:
    """The central server's whole journal once it verifies (every hash, link and signature, the signed head),
    its key, and the series of its library."""
    url = config.database_url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        raise CentralAuditError(f"no central database at {url.removeprefix('sqlite:///')}: this central server has never run")
    engine = create(url, create_folder=False)
    try:
        key = load_journal_key(config.journal_key)
        journal = Journal(engine, key, head=config.journal_head)
        if journal.is_new:
            raise CentralAuditError("the central server's journal is empty: it has never run")
        try:
            journal.verify()
        except ChainError as error:
            raise CentralAuditError(f"the journal does not verify: {error}") from None
        return list(journal.records()), key, store.load_series(engine)
    finally:
        engine.dispose()


def rebuilt_games(
    records: Sequence[Record], library: Mapping[str, np.ndarray]
) -> tuple[dict[str, CentralGame], dict[str, tuple[Record, Record]], dict[str, CentralGameScheduled]]:
    """Every network game rebuilt from the journal, the first and the ending record of each ended game,
    and each game's scheduling record (which says where it stands in the chain)."""
    games: dict[str, CentralGame] = {}
    first: dict[str, Record] = {}
    spans: dict[str, tuple[Record, Record]] = {}
    scheduled: dict[str, CentralGameScheduled] = {}
    for stored in records:
        if stored.type not in GAME_RECORDS:
            continue
        try:
            event = game_record(stored)
            if isinstance(event, CentralGameScheduled):
                label = event.config.get("series_label")
                if label not in library:
                    raise CentralAuditError(f"record {stored.seq}: game {event.game_id} sells series {label}, "
                                            "which the central library does not hold")
                games[event.game_id] = CentralGame(event, library[label])
                first[event.game_id] = stored
                scheduled[event.game_id] = event
            else:
                game_id = str(stored.payload.get("game_id"))
                if game_id not in games:
                    raise CentralAuditError(f"record {stored.seq}: {stored.type} of game {game_id}, never scheduled")
                games[game_id].apply(event)
                if stored.type in _ENDS:
                    spans[game_id] = (first[game_id], stored)
        except RecordError as error:
            raise CentralAuditError(str(error.at(stored.seq))) from None
        except CentralAuditError:
            raise
        except DomainError as error:
            raise CentralAuditError(f"record {stored.seq}: {error}") from None
    return games, spans, scheduled


def day_of(record: Record, zone: zoneinfo.ZoneInfo) -> str:
    """The date (``YYYY-MM-DD``) in ``zone`` on which ``record`` was written."""
    return datetime.datetime.fromtimestamp(record.time_ms / 1000, zone).date().isoformat()


__all__ = ["CentralAuditError", "CentralDay", "NoGameEnded", "audit_report", "build_day", "checked_day", "export_day",
           "rebuilt_games", "verified_journal"]
