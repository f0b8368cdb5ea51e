"""Every journal record type, declared once (DESIGN.md "The journal is the truth").

Each type is a frozen dataclass (:mod:`protocol.records.base` says how one is
declared) in the module of its concern:

- :mod:`~protocol.records.journal` - the journal's own opening;
- :mod:`~protocol.records.clock` - the server's wall clock that stepped;
- :mod:`~protocol.records.session` - verification, ball counts, opening and closing;
- :mod:`~protocol.records.sale` - a game's sale: cards, series, the close;
- :mod:`~protocol.records.game` - the draw, suspensions and the game's end;
- :mod:`~protocol.records.prizes` - claims, prizes, payments and the pots;
- :mod:`~protocol.records.cashier` - the ledger's postings, player accounts, cash desks, PINs;
- :mod:`~protocol.records.admission` - visitors, refused entries, the banned list, complaints, incidents;
- :mod:`~protocol.records.responsible` - spending limits and self-exclusion (R97.2);
- :mod:`~protocol.records.terminals` - player terminals and their purchases;
- :mod:`~protocol.records.videobingo` - video bingo machines: stations, credit, plays, meters, jackpots;
- :mod:`~protocol.records.blower` - the ball blower's faults, link and switch-over;
- :mod:`~protocol.records.central` - the central server's network games and refused hall commands;
- :mod:`~protocol.records.leadership` - the central server's leadership epoch (R92.6);
- :mod:`~protocol.records.network` - the hall's side of the network games: holds, balls, prizes, credits;
- :mod:`~protocol.records.annex` - the hall-annex game: the main hall's balls, both halls' sales and claims, the joint pool;
- :mod:`~protocol.records.consultation` - the regulator's reads of the records (R95.3);
- :mod:`~protocol.records.feed` - the regulator's receiver: the alerts it raises on the feeds (R92.7);
- :mod:`~protocol.records.notices` - notices to the regulator: the hall's opening hours (R74.2).

:func:`build` turns a ``(type, payload)`` into its record or raises :class:`RecordError`
naming the type and the field; :func:`parse` does the same for a stored record and
names its ``seq``; :meth:`JournalRecord.to_payload` is what the journal stores.  The
journal refuses to seal an entry that does not build, and the server refuses to start
on a stored record that does not parse.  ``docs/journal.md`` lists every type.
"""

from protocol.records import (  # noqa: F401 (each module registers its types)
    admission,
    annex,
    blower,
    cashier,
    central,
    clock,
    consultation,
    feed,
    game,
    journal,
    leadership,
    network,
    notices,
    prizes,
    responsible,
    sale,
    session,
    terminals,
    videobingo,
)
from protocol.records.base import (
    ACTOR_KEY,
    EPOCH_KEY,
    REGISTRY,
    VERSION_KEY,
    ActorStamp,
    Json,
    JournalRecord,
    RecordError,
    Shape,
    build,
    declared,
    entry_record,
    forget_declared,
    keep_declared,
    parse,
    payload_keys,
)
from protocol.records.events import EventRecord
from protocol.records.sealing import seal_entries

#: The modules of the record types, in the order docs/journal.md lists them.
GROUPS = (journal, clock, session, sale, game, prizes, cashier, admission, responsible, terminals, videobingo, blower, central,
          leadership, network, annex, consultation, feed, notices)

__all__ = [
    "ACTOR_KEY",
    "EPOCH_KEY",
    "GROUPS",
    "REGISTRY",
    "VERSION_KEY",
    "ActorStamp",
    "EventRecord",
    "Json",
    "JournalRecord",
    "RecordError",
    "Shape",
    "build",
    "declared",
    "entry_record",
    "forget_declared",
    "keep_declared",
    "parse",
    "payload_keys",
    "seal_entries",
]
