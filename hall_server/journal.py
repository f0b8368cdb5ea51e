"""The hall's journal: every fact, sealed, appended, and its head kept outside the DB.

``Journal.append`` is synchronous and meant to run on the database's single writer
thread (the server wraps it with ``deferToThreadPool``): it seals the entries after the
last record, appends them in one transaction together with the caller's projection
rows, and only then moves its idea of the last record and rewrites the head file.
Whoever announces a fact does so after ``append`` returned: a crash can lose only
what nobody has seen.

The head file (``var/journal.head``) holds the last record's sequence number and hash,
written atomically after each commit.  ``bingo journal verify`` compares it with the
table, so a journal cut short at its end is caught as well as one altered inside.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import Connection, Engine

from hall_server.store import journal as table
from protocol.chain import ChainError, Record, seal, verify_chain

Entry = tuple[str, Mapping[str, Any]]


def head_path() -> Path:
    return Path(os.environ.get("BINGO_HOME", "var")) / "journal.head"


def read_head(path: Path) -> tuple[int, str] | None:
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
        return int(data["seq"]), str(data["hash"])
    except (ValueError, KeyError, TypeError):
        raise ChainError(None, f"the journal head file {path} is unreadable") from None


def _write_head(path: Path, record: Record) -> None:
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w") as stream:
        json.dump({"seq": record.seq, "hash": record.hash}, stream)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(partial, path)


class Journal:
    def __init__(self, engine: Engine, key: Ed25519PrivateKey, head: Path | None = None) -> None:
        self.engine = engine
        self.key = key
        self.head = head or head_path()
        self.last: Record | None = table.last_record(engine)

    def verify(self) -> int:
        """Verify the whole journal against the key and the head file; the record count."""
        return verify_chain(table.read(self.engine), self.key.public_key(), head=read_head(self.head))

    def records(self, after: int = 0) -> Iterator[Record]:
        return table.read(self.engine, after)

    def append(
        self,
        time_ms: int,
        entries: Sequence[Entry],
        extra: Callable[[Connection], None] | None = None,
    ) -> list[Record]:
        """Seal and durably append ``entries``; returns the records once committed."""
        sealed: list[Record] = []
        previous = self.last
        for type, payload in entries:
            previous = seal(self.key, previous, time_ms, type, payload)
            sealed.append(previous)
        if not sealed:
            return []
        table.append(self.engine, sealed, extra)
        self.last = sealed[-1]
        self.head.parent.mkdir(parents=True, exist_ok=True)
        _write_head(self.head, self.last)
        return sealed
