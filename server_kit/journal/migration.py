"""The journal table in a server's Alembic migrations, written once for every server.

Each server's first migration that holds the journal calls :func:`create_journal_table`
in its ``upgrade`` and :func:`drop_journal_table` in its ``downgrade``; a later one calls
:func:`drop_hash_uniqueness` (and :func:`restore_hash_uniqueness` to go back).  After both
the table is the one :class:`server_kit.journal.table.JournalRecord` declares (the
migration tests compare the two).
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op


def create_journal_table() -> None:
    op.create_table(
        "journal",
        sa.Column("seq", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("time_ms", sa.BigInteger(), nullable=False),
        sa.Column("type", sa.String(length=64), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("prev", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("signature", sa.String(length=128), nullable=False),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_journal")),
        sa.UniqueConstraint("hash", name=op.f("uq_journal_hash")),
    )
    with op.batch_alter_table("journal", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_journal_type"), ["type"], unique=False)


def drop_journal_table() -> None:
    with op.batch_alter_table("journal", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_journal_type"))
    op.drop_table("journal")


def drop_hash_uniqueness() -> None:
    """The journal's ``hash`` column without its unique index.

    Hashes are random, so each record appended wrote a page of that index at a random place: a
    commit of about 130 records made 476 writes to the write-ahead log against 36 without it
    (``strace`` of the machines' benchmark), and read pages back once the index outgrew the
    page cache.  Nothing looks a record up by its hash, and the chain makes a repeated hash
    impossible anyway (each hash covers its own ``seq``, the table's key).  On SQLite the
    table is rebuilt, its rows copied as they are.
    """
    with op.batch_alter_table("journal", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("uq_journal_hash"), type_="unique")


def restore_hash_uniqueness() -> None:
    with op.batch_alter_table("journal", schema=None) as batch_op:
        batch_op.create_unique_constraint(op.f("uq_journal_hash"), ["hash"])
