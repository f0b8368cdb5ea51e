"""The central leadership: which central server process may write the central journal (R92.6).

One row of the central database, ``central_leadership`` (``epoch``, ``holder``,
``since_ms``), says which process holds the leadership and under which epoch.  A
process takes it at start (:func:`take`: the epoch plus one, in one transaction, the
row locked on PostgreSQL by ``SELECT ... FOR UPDATE``), journals
``central_leadership_taken`` and from then on

- stamps its epoch on every record it commits (``CommandCore.epoch``);
- commits only through its :class:`Fence`, the journal's commit guard
  (:attr:`server_kit.journal.sql.Journal.guard`): in the commit's own transaction,
  before any record is inserted, the fence reads the row (locked on PostgreSQL) and
  refuses the commit with :class:`Fenced` when another process has taken a later
  epoch.  The transaction rolls back whole (records and projection rows), the command
  core rebuilds its modules from the journal, and the process stops: once fenced it
  never writes again.

So two processes on one database never both write: the one that took the leadership
last is the only one whose commits land.  On PostgreSQL the row lock orders a take and
a commit: a commit in flight when another process takes the leadership either lands
before the take, or waits for it and is refused.  On SQLite (a single-node demo) the
database's one writer does the same, and a commit that meets a take at the same moment
fails with the database's "busy" error instead, writing nothing; the next one is
refused.  A single central server takes the leadership when it starts; of the two
processes of a replicated central server, only the one beside Patroni's leader takes it,
and its fence also refuses every commit once its lease on its node's leadership lapsed
(:mod:`central_server.replica`).  A fenced process stops (:func:`stop_fenced`); the active
one renews its sign of life in the row (:func:`renew_leadership`).
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING, Any, Callable

from sqlalchemy import BigInteger, Column, Connection, Engine, Integer, MetaData, Table, Text, select, update
from twisted.internet import defer
from twisted.logger import Logger

from protocol.chain import ChainError
from protocol.errors import DomainError
from protocol.records import ActorStamp
from protocol.records.leadership import CentralLeadershipTaken
from server_kit.core import Actor
from server_kit.journal.sql import Journal
from server_kit.journal.table import NAMING

if TYPE_CHECKING:
    from central_server.server import CentralServer

log = Logger()

#: The leadership's table (central migration 0002 makes it, with its one row at epoch 0).
METADATA = MetaData(naming_convention=NAMING)
LEADERSHIP = Table(
    "central_leadership",
    METADATA,
    Column("epoch", Integer, nullable=False),
    Column("holder", Text, nullable=True),
    Column("since_ms", BigInteger, nullable=True),
    # The holder's last sign of life (migration 0003): a replicated central server's active
    # process renews it every few seconds; the next one reads how long no server led (R92.5e).
    Column("alive_ms", BigInteger, nullable=True),
)


class LeadershipError(DomainError):
    """The leadership cannot be taken in the state the database is in; the message says why."""


class Fenced(DomainError):
    """A commit of a process whose epoch is no longer the leadership's: nothing of it was written."""

    def __init__(self, holder: str | None, epoch: int, own_epoch: int, why: str | None = None) -> None:
        self.holder, self.epoch, self.own_epoch, self.why = holder, epoch, own_epoch, why
        reason = why or f"central server {holder or '(none)'} holds epoch {epoch}"
        super().__init__(f"{reason}; this process's epoch {own_epoch} is fenced: nothing was written")


#: Why a replicated central server's process is fenced without asking the database.
LEASE_LAPSED = "its lease on its node's leadership lapsed (docs/replica.md)"


def holder_name(central_id: str) -> str:
    """Who takes the leadership: the central server's id, its host and process id (two processes differ)."""
    return f"{central_id} on {socket.gethostname()} pid {os.getpid()}"


def _held(connection: Connection, lock: bool = True) -> tuple[int, str | None]:
    """The epoch and holder of the leadership's one row, locked until the transaction ends (PostgreSQL;
    SQLite ignores the lock) unless ``lock`` is false (a read-only standby cannot lock)."""
    query = select(LEADERSHIP.c.epoch, LEADERSHIP.c.holder)
    rows = connection.execute(query.with_for_update() if lock else query).all()
    if len(rows) != 1:
        raise LeadershipError(
            f"the table central_leadership holds {len(rows)} rows, not one: the central database was altered"
        )
    return int(rows[0].epoch), rows[0].holder


def held(engine: Engine) -> tuple[int, str | None]:
    """The leadership's epoch and holder, as the database at ``engine`` has them now (a replica too)."""
    with engine.connect() as connection:
        return _held(connection, lock=False)


def take(engine: Engine, holder: str, now_ms: int) -> int:
    """Take the leadership for ``holder`` at ``now_ms``: the epoch after the last one, which is returned.

    From its commit on, the fence of every process holding an older epoch refuses its
    commits.
    """
    with engine.begin() as connection:
        epoch = _held(connection)[0] + 1
        connection.execute(update(LEADERSHIP).values(epoch=epoch, holder=holder, since_ms=now_ms, alive_ms=now_ms))
    return epoch


def last_alive(engine: Engine) -> int | None:
    """When the holder of the leadership was last known to hold it: its renewal, or its take (None: never taken)."""
    with engine.connect() as connection:
        row = connection.execute(select(LEADERSHIP.c.since_ms, LEADERSHIP.c.alive_ms)).first()
    if row is None:
        return None
    known = [int(value) for value in (row.since_ms, row.alive_ms) if value is not None]
    return max(known) if known else None


def renew(engine: Engine, epoch: int, now_ms: int) -> bool:
    """The holder of ``epoch`` still leads at ``now_ms``: its sign of life; False when another epoch holds it."""
    with engine.begin() as connection:
        done = connection.execute(update(LEADERSHIP).where(LEADERSHIP.c.epoch == epoch).values(alive_ms=now_ms))
    return bool(done.rowcount)


class Fence:
    """The journal's commit guard of the process holding ``epoch``: raises :class:`Fenced` once it is not.

    Called with the commit's connection, on the thread the commit runs on; the first
    time it refuses it calls ``on_fenced`` there with the error (the server stops), and
    from then on it refuses every commit without asking the database: an epoch is
    never given back.
    """

    def __init__(self, epoch: int, on_fenced: Callable[[Fenced], None] | None = None,
                 acting: Callable[[], bool] | None = None) -> None:
        self.epoch = epoch
        self.on_fenced = on_fenced
        #: A replicated process's lease (:meth:`central_server.replica.ReplicaRole.may_commit`): once
        #: it says no, every commit is refused before the database is asked.
        self.acting = acting
        self.fenced: Fenced | None = None

    def __call__(self, connection: Connection) -> None:
        if self.fenced is None:
            if self.acting is not None and not self.acting():
                self.fenced = Fenced(None, self.epoch, self.epoch, LEASE_LAPSED)
            else:
                epoch, holder = _held(connection)
                if epoch == self.epoch:
                    return
                self.fenced = Fenced(holder, epoch, self.epoch)
            if self.on_fenced is not None:
                self.on_fenced(self.fenced)
        raise Fenced(self.fenced.holder, self.fenced.epoch, self.epoch, self.fenced.why)


def lead(
    journal: Journal, holder: str, now_ms: int, actor: Actor, *, cause: str = "start",
    on_fenced: Callable[[Fenced], None] | None = None, acting: Callable[[], bool] | None = None,
) -> Fence:
    """Take the leadership of ``journal`` (verified) for ``holder`` and journal it; its fence, installed.

    What a previous holder committed after ``journal`` was verified and before the take
    is verified too and followed (:meth:`Journal.follow`), so ``central_leadership_taken``
    comes after it; that record is committed through the new fence, and carries the
    epoch like every record after it.
    """
    epoch = take(journal.engine, holder, now_ms)
    fence = Fence(epoch, on_fenced, acting)
    journal.guard = fence
    try:
        journal.follow()
    except ChainError as error:
        raise LeadershipError(f"the records written before the leadership was taken do not verify: {error}") from None
    taken = CentralLeadershipTaken(holder=holder, previous_epoch=epoch - 1, cause=cause,
                                   actor=ActorStamp(**actor.to_dict()), epoch=epoch)
    journal.append(now_ms, [taken])
    return fence


def stop_fenced(reactor: Any, error: Fenced) -> None:
    """Stop a fenced central server (on the reactor's thread): another process holds the leadership."""
    log.critical("{error}; another central server process took the leadership, so this one stops "
                 "(docs/replica.md, \"Leadership epoch and fencing\")", error=str(error))
    if reactor.running:
        reactor.stop()


def renew_leadership(central: CentralServer, clock: Any) -> defer.Deferred[Any] | None:
    """The active process of a replicated central server still leads: its sign of life in the leadership row
    (every :data:`~central_server.domain.stops.RENEW_S` seconds)."""
    fence = central.fence
    if fence is None or fence.fenced is not None or (central.role is not None and not central.role.may_commit()):
        return None
    renewing = central.core.run_blocking(renew, central.engine, fence.epoch, clock.now_ms())
    return renewing.addErrback(lambda failure: log.warn("The leadership's sign of life was not renewed: {why}",
                                                          why=failure.getErrorMessage()))
