"""The receiver's store: each sender's key and position, its records, and the alerts.

``feed_sender`` holds a sender's journal key (the one registered for it that its
records are checked against) and where its feed stands (the last stored ``seq``, its
hash and time); ``feed_record`` every record stored, once, in its sealed form, as the
sender signed it; ``feed_alert`` every alert raised, once per (sender, kind, seq), with
how many more of its kind were counted on it (``repeats``, the last at ``last_seq``).
A sender's records and its position commit in one transaction.

Every read is bounded: a page of a sender's records is one query with a limit, by
``seq`` (:meth:`Store.page`); the alerts are read newest first, a number at a time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator

from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from protocol.chain import GENESIS, Record, canonical_json
from server_kit.db import database as kit
from server_kit.journal.table import NAMING

MIGRATIONS = "regulator:migrations"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class FeedSender(Base):
    __tablename__ = "feed_sender"
    sender: Mapped[str] = mapped_column(String(80), primary_key=True)
    public_key: Mapped[str] = mapped_column(Text)
    last_seq: Mapped[int] = mapped_column(Integer)
    last_hash: Mapped[str] = mapped_column(String(64))
    last_time_ms: Mapped[int] = mapped_column(BigInteger)


class FeedRecord(Base):
    __tablename__ = "feed_record"
    sender: Mapped[str] = mapped_column(String(80), primary_key=True)
    seq: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    time_ms: Mapped[int] = mapped_column(BigInteger)
    type: Mapped[str] = mapped_column(String(64))
    payload: Mapped[str] = mapped_column(Text)  # canonical JSON
    prev: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
    signature: Mapped[str] = mapped_column(String(128))


class FeedAlert(Base):
    __tablename__ = "feed_alert"
    __table_args__ = (UniqueConstraint("sender", "kind", "seq", name="uq_feed_alert_once"),)
    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    sender: Mapped[str] = mapped_column(String(80))
    kind: Mapped[str] = mapped_column(String(32))
    seq: Mapped[int] = mapped_column(Integer)  # 0 when the alert is about no record
    detail: Mapped[str] = mapped_column(Text)
    time_ms: Mapped[int] = mapped_column(BigInteger)
    #: More alerts of this kind from this sender counted on this one (within a minute of it), the last of them.
    repeats: Mapped[int] = mapped_column(Integer, server_default="0")
    last_seq: Mapped[int] = mapped_column(Integer, server_default="0")
    last_time_ms: Mapped[int] = mapped_column(BigInteger, server_default="0")


METADATA = Base.metadata


def open_database(url: str, create_folder: bool = True) -> Engine:
    """The receiver's database at ``url``, migrated."""
    return kit.open_database(url, MIGRATIONS, create_folder)


@dataclass(frozen=True)
class Position:
    public_key: str
    seq: int
    hash: str
    time_ms: int


@dataclass(frozen=True)
class SenderPosition:
    sender: str
    seq: int
    time_ms: int


@dataclass(frozen=True)
class Alert:
    sender: str
    kind: str
    seq: int
    detail: str
    time_ms: int
    #: More of its kind from its sender counted on it, and the record and time of the last of them.
    repeats: int = 0
    last_seq: int = 0
    last_time_ms: int = 0


def _alert(row: Any) -> Alert:
    return Alert(row["sender"], row["kind"], row["seq"], row["detail"], row["time_ms"], row["repeats"],
                 row["last_seq"], row["last_time_ms"])


def _record(row: Any) -> Record:
    """A stored record as the sender signed it."""
    return Record(row["seq"], row["time_ms"], row["type"], json.loads(row["payload"]), row["prev"], row["hash"],
                  row["signature"])


class Store:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def position(self, sender: str) -> Position | None:
        with self.engine.connect() as db:
            row = db.execute(select(FeedSender).where(FeedSender.sender == sender)).mappings().first()
        if row is None:
            return None
        return Position(row["public_key"], row["last_seq"], row["last_hash"], row["last_time_ms"])

    def senders(self) -> list[SenderPosition]:
        """Every sender known, with the last record held."""
        with self.engine.connect() as db:
            rows = db.execute(select(FeedSender).order_by(FeedSender.sender)).mappings().all()
        return [SenderPosition(r["sender"], r["last_seq"], r["last_time_ms"]) for r in rows]

    def take_key(self, db: Connection | None, sender: str, public_key: str) -> None:
        """``sender``'s records are checked against ``public_key`` from now on (its position is created, at
        nothing stored, if new); in the transaction ``db`` (the one that journals it), or one of its own."""
        if db is None:
            with self.engine.begin() as own:
                self.take_key(own, sender, public_key)
            return
        moved = db.execute(update(FeedSender).where(FeedSender.sender == sender).values(public_key=public_key))
        if moved.rowcount == 0:
            db.execute(insert(FeedSender).values(
                sender=sender, public_key=public_key, last_seq=0, last_hash=GENESIS, last_time_ms=0
            ))

    def store(self, sender: str, records: list[Record]) -> None:
        """Append ``records`` (checked, following the sender's position) and move the position."""
        if not records:
            return
        with self.engine.begin() as db:
            db.execute(insert(FeedRecord), [
                {"sender": sender, "seq": r.seq, "time_ms": r.time_ms, "type": r.type,
                 "payload": canonical_json(r.payload).decode(), "prev": r.prev, "hash": r.hash,
                 "signature": r.signature}
                for r in records
            ])  # fmt: skip
            last = records[-1]
            moved = db.execute(
                update(FeedSender)
                .where(FeedSender.sender == sender, FeedSender.last_seq == records[0].seq - 1)
                .values(last_seq=last.seq, last_hash=last.hash, last_time_ms=last.time_ms)
            )
            if moved.rowcount != 1:
                raise RuntimeError(f"the position of {sender} moved while its records were stored")

    def page(self, sender: str, after: int, limit: int, type: str | None = None) -> list[Record]:
        """At most ``limit`` of ``sender``'s records after ``after`` (of ``type``, when given), in order: one
        bounded query, whatever the sender holds."""
        query = select(FeedRecord).where(FeedRecord.sender == sender, FeedRecord.seq > after)
        if type is not None:
            query = query.where(FeedRecord.type == type)
        with self.engine.connect() as db:
            rows = db.execute(query.order_by(FeedRecord.seq).limit(limit)).mappings().all()
        return [_record(row) for row in rows]

    def records(self, sender: str, after: int = 0, through: int | None = None) -> Iterator[Record]:
        """``sender``'s records held after ``after`` (up to ``through``, when given), in order."""
        query = select(FeedRecord).where(FeedRecord.sender == sender, FeedRecord.seq > after)
        if through is not None:
            query = query.where(FeedRecord.seq <= through)
        with self.engine.connect() as db:
            rows = db.execute(query.order_by(FeedRecord.seq)).mappings().all()
        for row in rows:
            yield _record(row)

    def of_types(self, types: tuple[str, ...], limit: int = 50) -> list[tuple[str, Record]]:
        """The last ``limit`` records of ``types`` of every sender, newest first, each with its sender."""
        with self.engine.connect() as db:
            rows = db.execute(
                select(FeedRecord).where(FeedRecord.type.in_(types)).order_by(FeedRecord.time_ms.desc()).limit(limit)
            ).mappings().all()
        return [(row["sender"], _record(row)) for row in rows]

    def record(self, sender: str, seq: int) -> Record | None:
        with self.engine.connect() as db:
            row = db.execute(
                select(FeedRecord).where(FeedRecord.sender == sender, FeedRecord.seq == seq)
            ).mappings().first()
        return None if row is None else _record(row)

    def has_alert(self, alert: Alert) -> bool:
        """Whether the same (sender, kind, seq) was raised already."""
        with self.engine.connect() as db:
            return db.execute(select(FeedAlert.id).where(
                FeedAlert.sender == alert.sender, FeedAlert.kind == alert.kind, FeedAlert.seq == alert.seq
            )).first() is not None

    @staticmethod
    def insert_alert(db: Connection, alert: Alert) -> None:
        """Store ``alert`` in the transaction ``db`` (the one that journals it)."""
        db.execute(insert(FeedAlert).values(
            sender=alert.sender, kind=alert.kind, seq=alert.seq, detail=alert.detail, time_ms=alert.time_ms
        ))

    def raise_alert(self, alert: Alert) -> bool:
        """Store ``alert`` unless the same (sender, kind, seq) is already; whether it is new."""
        try:
            with self.engine.begin() as db:
                db.execute(insert(FeedAlert).values(
                    sender=alert.sender, kind=alert.kind, seq=alert.seq, detail=alert.detail, time_ms=alert.time_ms
                ))
        except IntegrityError:
            return False  # raised already
        return True

    def repeat_alert(self, alert: Alert, seq: int, time_ms: int) -> None:
        """One more alert of ``alert``'s kind from its sender, at record ``seq``: counted on ``alert``."""
        with self.engine.begin() as db:
            db.execute(update(FeedAlert).where(
                FeedAlert.sender == alert.sender, FeedAlert.kind == alert.kind, FeedAlert.seq == alert.seq
            ).values(repeats=FeedAlert.repeats + 1, last_seq=seq, last_time_ms=time_ms))

    def alerts(self, sender: str | None = None, last: int | None = None) -> list[Alert]:
        """The alerts raised (of ``sender``), in the order raised; with ``last``, only the last so many."""
        query = select(FeedAlert)
        if sender is not None:
            query = query.where(FeedAlert.sender == sender)
        if last is not None:
            query = query.order_by(FeedAlert.id.desc()).limit(last)
        else:
            query = query.order_by(FeedAlert.id)
        with self.engine.connect() as db:
            rows = db.execute(query).mappings().all()
        found = [_alert(r) for r in rows]
        return list(reversed(found)) if last is not None else found

    def alert_counts(self) -> dict[str, int]:
        """How many alerts each sender has raised (each counting its repeats)."""
        with self.engine.connect() as db:
            rows = db.execute(select(FeedAlert.sender, func.count(), func.sum(FeedAlert.repeats))
                              .group_by(FeedAlert.sender)).all()
        return {sender: int(count) + int(repeats or 0) for sender, count, repeats in rows}
