"""The hall's verification of the whole system, before every session and after a crash (R84.1, R92.5e, R95.1).

Seven checks, each giving ``None`` (passed) or the fault in words: the server kit's
``journal``, ``database``, ``clock`` and ``software`` (:mod:`server_kit.verification`),
and the hall's own:

* ``draw_device`` - the draw device's self-test: the software generator must draw a
  permutation of 1..90 from the operating system's CSPRNG (the blower, when it is the
  hall's draw device, answers with its own self-test over its serial link);
* ``terminals`` - the virtual card library the terminals sell from holds, card by card,
  the security code the hall's card key gives it (R92.9: a card altered in the store is
  named), and every terminal connected to the gateway is one enrolled and in service;
* ``links`` - with ``[central]``, the link to the central server is up, its protocol
  agreed (the network games and the hall-annex game go over it).

The result is recorded by the session module as one ``system_verified`` record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping, Sequence

from sqlalchemy import Engine

import numpy as np

from hall_server.hall.virtual import Terminal, VirtualLibrary
from hall_server.store import cards as card_store
from hall_server.store.cards import library_card_id
from hall_server.store.database import MIGRATIONS
from hall_server.terminal_gateway.library import DEFAULT_LIBRARY
from protocol.cardfile import card_codes
from protocol.errors import N_, DomainError, Phrase
from server_kit.keys import load_card_key
from protocol.balls import RandomBallGenerator
from server_kit.journal.port import JournalPort
from server_kit.verification import check_clock, check_database, check_journal, check_software


def check_random_generator() -> str | None:
    source = RandomBallGenerator()
    balls = [source.draw() for _ in range(90)]
    if sorted(balls) != list(range(1, 91)):
        return Phrase(N_("the random ball generator did not draw each of the 90 balls once"))
    return None


def check_library(engine: Engine, key_path: Path, in_use: VirtualLibrary, name: str = DEFAULT_LIBRARY) -> str | None:
    """The virtual library as the card store holds it: every card holds the security code the card key
    gives it (R92.9), and they are the cards the terminals are selling (read at start)."""
    try:
        stored = card_store.library_cards(engine, name)
        key = load_card_key(key_path)
    except DomainError as error:
        return Phrase(N_("the virtual library cannot be read: {error}"), error=error)
    ids = [library_card_id(stored.library.series, number) for number in range(1, len(stored.cells) + 1)]
    expected = card_codes(key, ids, stored.cells)
    altered = [card_id for card_id, code, wanted in zip(ids, stored.codes, expected) if code != wanted]
    if altered:
        shown = ", ".join(altered[:5]) + (f" and {len(altered) - 5} more" if len(altered) > 5 else "")
        return Phrase(N_("the virtual library's card(s) {cards} do not hold the security code the card key gives "
                         "them: the library was altered; restore it from the backup before anything is sold"),
                      cards=shown)
    if stored.library.series != in_use.label or not np.array_equal(stored.cells, in_use.cells):
        return Phrase(N_("the virtual library in the card store is not the one the terminals sell from since the "
                         "start; start the hall server again"))
    return None


def check_terminals(connected: Sequence[str], terminals: Mapping[str, Terminal]) -> str | None:
    """Every terminal connected to the gateway is enrolled and in service (R96.3: a failed one stays off)."""
    unknown, out = [], []
    for name in sorted(connected):
        known = terminals.get(name)
        if known is None or known.revoked:
            unknown.append(name)
        elif known.out_of_service is not None:
            out.append(name)
    if unknown and out:
        return Phrase(N_("connected but not enrolled: {unknown}; connected while out of service: {out}"),
                      unknown=", ".join(unknown), out=", ".join(out))
    if unknown:
        return Phrase(N_("connected but not enrolled: {unknown}"), unknown=", ".join(unknown))
    if out:
        return Phrase(N_("connected while out of service: {out}"), out=", ".join(out))
    return None


def verify_system(
    journal: JournalPort,
    engine: Engine,
    wall_ms: Callable[[], int],
    manifest: Path,
    draw_device: Callable[[], str | None] = check_random_generator,
    terminals: Callable[[], str | None] = lambda: None,
    links: Callable[[], str | None] = lambda: None,
) -> Mapping[str, str | None]:
    """Run every check (blocking: call it off the reactor thread)."""
    return {
        "journal": check_journal(journal),
        "database": check_database(engine, MIGRATIONS),
        "draw_device": draw_device(),
        "clock": check_clock(wall_ms, journal),
        "software": check_software(manifest),
        "terminals": terminals(),
        "links": links(),
    }
