"""The journal table: append and read, nothing else.

Records are appended in one transaction with whatever projection rows the caller
writes alongside (``extra``), so a fact and its projections commit together or not at
all.  Nothing here updates or deletes a record.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from typing import Any, Callable, Iterator, cast

from sqlalchemy import BigInteger, Connection, Engine, Integer, MetaData, String, Table, Text, func, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from protocol.chain import Record, StoredRow, stored_payload

#: The constraint names every server's migrations give the journal table.
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class JournalBase(DeclarativeBase):
    """The journal table's metadata: each server's migrations create it as declared here."""

    metadata = MetaData(naming_convention=NAMING)


class JournalRecord(JournalBase):
    """One record of the append-only journal (see ``protocol.chain``); never updated."""

    __tablename__ = "journal"
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    time_ms: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(64), index=True)
    payload: Mapped[str] = mapped_column(Text)  # canonical JSON
    prev: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))  # no index: see journal.migration.drop_hash_uniqueness
    signature: Mapped[str] = mapped_column(String(128))

_TABLE = cast(Table, JournalRecord.__table__)

_COLUMNS = (
    JournalRecord.seq,
    JournalRecord.time_ms,
    JournalRecord.type,
    JournalRecord.payload,
    JournalRecord.prev,
    JournalRecord.hash,
    JournalRecord.signature,
)


#: The columns of a journal row, in the order :func:`append` writes them (those of :data:`_COLUMNS`).
_NAMES = tuple(column.key for column in _COLUMNS)
#: Rows a statement of :func:`append` inserts at most (7 values each), fewer where the database
#: takes fewer values in one statement (SQLite's limit, 32,766 since 3.32; PostgreSQL's 65,535).
ROWS_A_STATEMENT = 1000


def append(
    engine: Engine,
    records: list[Record],
    extra: Callable[[Connection], None] | None = None,
    guard: Callable[[Connection], None] | None = None,
) -> None:
    """Durably append ``records`` (and run ``extra`` in the same transaction), each payload as
    :func:`protocol.chain.stored_payload` gives it (the text the journal noted, else made here).

    ``guard`` runs first in the transaction, before any row is written: raising there
    refuses the commit (the central server's fence, :mod:`central_server.leadership`).

    The rows go in statements of up to :data:`ROWS_A_STATEMENT` rows each, not one
    statement a row (``executemany``): the database driver lets go of the interpreter
    for each statement, and the writer thread waits to have it back for as long as the
    reactor holds it (up to 5 ms while a burst is decided), which made a commit of a
    few thousand purchases take seconds.
    """
    rows = [(r.seq, r.time_ms, r.type, stored_payload(r), r.prev, r.hash, r.signature) for r in records]
    marker = "?" if engine.dialect.paramstyle == "qmark" else "%s"
    with engine.begin() as connection:
        if guard is not None:
            guard(connection)
        size = _rows_a_statement(connection)
        for start in range(0, len(rows), size):
            chunk = rows[start : start + size]
            connection.exec_driver_sql(_insert_sql(len(chunk), marker), tuple(v for row in chunk for v in row))
        if extra is not None:
            extra(connection)


def _rows_a_statement(connection: Connection) -> int:
    if connection.dialect.name != "sqlite":
        return ROWS_A_STATEMENT
    driver: Any = connection.connection.dbapi_connection
    limit = driver.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) if hasattr(driver, "getlimit") else 999
    return max(1, min(ROWS_A_STATEMENT, limit // len(_NAMES)))


@functools.lru_cache(maxsize=8)
def _insert_sql(rows: int, marker: str) -> str:
    """The statement inserting ``rows`` journal rows, each value a driver parameter ``marker``."""
    one = "(" + ", ".join([marker] * len(_NAMES)) + ")"
    return f"INSERT INTO {_TABLE.name} ({', '.join(_NAMES)}) VALUES " + ", ".join([one] * rows)


def _record(row) -> Record:  # type: ignore[no-untyped-def]
    return Record(
        seq=row.seq,
        time_ms=row.time_ms,
        type=row.type,
        payload=json.loads(row.payload),
        prev=row.prev,
        hash=row.hash,
        signature=row.signature,
    )


def read(engine: Engine, after: int = 0, batch: int = 10_000) -> Iterator[Record]:
    """Every record with ``seq > after`` in sequence order, read in batches."""
    last = after
    while True:
        with engine.connect() as connection:
            rows = connection.execute(
                select(*_COLUMNS).where(JournalRecord.seq > last).order_by(JournalRecord.seq).limit(batch)
            ).all()
        if not rows:
            return
        for row in rows:
            yield _record(row)
        last = rows[-1].seq


def stored_rows(engine: Engine, through: int, batch: int = 10_000) -> Iterator[StoredRow]:
    """Records 1 to ``through`` as stored, for the link check (:func:`protocol.chain.verify_links`):
    ``seq``, ``time_ms``, ``type``, the payload's JSON text, ``prev``, ``hash``, in order.

    Read in batches through the driver's own cursor, without building a SQLAlchemy row or
    reading a payload's JSON: a third of the cost of :func:`read` (1,000,000 records in
    about 2.5 s of CPU with their hashes checked, bench/bench_journal.py).
    """
    last = 0
    connection = engine.raw_connection()
    try:
        while last < through:
            query = (select(*_COLUMNS[:6]).where(JournalRecord.seq > last, JournalRecord.seq <= through)
                     .order_by(JournalRecord.seq).limit(batch))
            cursor = connection.cursor()
            try:  # only integers are bound: the statement is written out for any driver's parameter style
                cursor.execute(str(query.compile(dialect=engine.dialect, compile_kwargs={"literal_binds": True})))
                rows = cursor.fetchall()
            finally:
                cursor.close()
            if not rows:
                return
            yield from rows
            last = rows[-1][0]
    finally:
        connection.close()


def record(engine: Engine, seq: int) -> Record | None:
    """The record ``seq``, or ``None``."""
    with engine.connect() as connection:
        row = connection.execute(select(*_COLUMNS).where(JournalRecord.seq == seq)).first()
    return _record(row) if row else None


def last_record(engine: Engine) -> Record | None:
    with engine.connect() as connection:
        row = connection.execute(
            select(*_COLUMNS).order_by(JournalRecord.seq.desc()).limit(1)
        ).first()
    return _record(row) if row else None


def count(engine: Engine) -> int:
    with engine.connect() as connection:
        return connection.scalar(select(func.count()).select_from(JournalRecord)) or 0
