"""Tables of the hall's card sets, series and virtual libraries.

Cells are stored as 27 bytes (row-major, 0 for a blank): a million cards fit in
about 40 MB and load back into numpy in one call.
"""

from __future__ import annotations

from sqlalchemy import ForeignKey, Integer, LargeBinary, MetaData, String
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from server_kit.journal.table import NAMING, JournalBase


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class CardSet(Base):
    """A physical card set: the layouts printed in every series of the set (R82.6 ruling)."""

    __tablename__ = "card_set"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    size: Mapped[int] = mapped_column(Integer)
    source: Mapped[str] = mapped_column(String(16))  # "generated" or "imported"
    created_at: Mapped[str] = mapped_column(String(32))


class SetCard(Base):
    __tablename__ = "set_card"
    set_id: Mapped[int] = mapped_column(ForeignKey("card_set.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    strip: Mapped[str] = mapped_column(String(32))
    cells: Mapped[bytes] = mapped_column(LargeBinary(27))


class Series(Base):
    """A numbered print run of a card set, with its face value (R82.1)."""

    __tablename__ = "series"
    id: Mapped[int] = mapped_column(primary_key=True)
    number: Mapped[int] = mapped_column(Integer, unique=True)
    set_id: Mapped[int] = mapped_column(ForeignKey("card_set.id"))
    face_value_cents: Mapped[int] = mapped_column(Integer)
    card_count: Mapped[int] = mapped_column(Integer)
    last_sold: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[str] = mapped_column(String(32))


class Library(Base):
    """A virtual card library with its own series label, independent of paper (R82.9)."""

    __tablename__ = "library"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    series: Mapped[str] = mapped_column(String(32), unique=True)
    size: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[str] = mapped_column(String(32))


class LibraryCard(Base):
    __tablename__ = "library_card"
    library_id: Mapped[int] = mapped_column(ForeignKey("library.id"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    strip: Mapped[int] = mapped_column(Integer)
    cells: Mapped[bytes] = mapped_column(LargeBinary(27))
    code: Mapped[str] = mapped_column(String(32))


#: Every table the hall's migrations create: the hall's own and the kit's journal.
METADATA = [Base.metadata, JournalBase.metadata]
