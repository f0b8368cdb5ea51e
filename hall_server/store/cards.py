"""Repository of card sets, series and virtual libraries.

Each function runs one transaction and returns plain dataclasses or numpy arrays,
never live rows, so servers can call them from a database thread pool.  Registering
a set or a library checks, inside the same transaction, that none of its cards repeats
a registered card: the virtual cards are disjoint from every physical set and from each
other (R82.9-12).  A failed registration leaves the database as it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np
from sqlalchemy import Connection, Engine, func, insert, select

from hall_server.store.bulk import bulk_insert
from hall_server.store.models import CardSet, Library, LibraryCard, Series, SetCard
from protocol.cards import CELLS, duplicate_pairs, fingerprints
from protocol.errors import N_, DomainError


#: The series number the hall's virtual library is played under: no paper series may take it.
VIRTUAL_SERIES_NUMBER = 9001


class CardStoreError(DomainError):
    """A card set, series or library command that cannot be carried out."""


@dataclass(frozen=True)
class SeriesInfo:
    number: int
    card_set: str
    face_value_cents: int
    card_count: int
    last_sold: int


@dataclass(frozen=True)
class SetInfo:
    name: str
    size: int
    source: str
    series: tuple[SeriesInfo, ...]


@dataclass(frozen=True)
class LibraryInfo:
    name: str
    series: str
    size: int


@dataclass(frozen=True)
class LibraryCards:
    library: LibraryInfo
    ids: list[str]
    strips: list[str]
    cells: np.ndarray
    codes: list[str]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _cells(blobs: list[bytes]) -> np.ndarray:
    if not blobs:
        return np.empty((0, CELLS), dtype=np.uint8)
    return np.frombuffer(b"".join(blobs), dtype=np.uint8).reshape(-1, CELLS)


def library_card_id(series: str, number: int) -> str:
    """The identifier a virtual card shows and its code covers: ``SERIES-NUMBER``."""
    return f"{series}-{number}"


def library_strip_label(series: str, card_number: int) -> str:
    """The ``strip`` value of a library card in a card file: ``SERIES-S<strip>``."""
    return f"{series}-S{(card_number - 1) // 6 + 1}"


#: What a card is, for the refusal of a card that repeats another: its kind (``set``: a card of a
#: registered set, ``virtual``: a registered library's card, ``new``: a card of the set being
#: registered, ``library``: a card of the library being registered), its number or identifier, and
#: its set's name (a registered set's card only).
Label = tuple[str, int | str, str | None]

#: The refusal of a new card that repeats another, one sentence for each (new card's kind, other's kind).
_REPEATED = {
    ("new", "set"): N_("card {card} of the new set has the same numbers as card {other} of set {other_set!r}; "
                       "no card may repeat a registered card"),
    ("new", "virtual"): N_("card {card} of the new set has the same numbers as virtual card {other}; "
                           "no card may repeat a registered card"),
    ("new", "new"): N_("card {card} of the new set has the same numbers as card {other} of the new set; "
                       "no card may repeat a registered card"),
    ("library", "set"): N_("{card} has the same numbers as card {other} of set {other_set!r}; "
                           "no card may repeat a registered card"),
    ("library", "virtual"): N_("{card} has the same numbers as virtual card {other}; "
                               "no card may repeat a registered card"),
    ("library", "library"): N_("{card} has the same numbers as {other}; no card may repeat a registered card"),
}


def _registered_cells(connection: Connection) -> tuple[np.ndarray, list[Label]]:
    """Every registered card (sets and libraries) and what each is, for messages."""
    blobs: list[bytes] = []
    labels: list[Label] = []
    for name, number, cells in connection.execute(
        select(CardSet.name, SetCard.number, SetCard.cells).join(CardSet, CardSet.id == SetCard.set_id)
    ):
        blobs.append(cells)
        labels.append(("set", number, name))
    for series, number, cells in connection.execute(
        select(Library.series, LibraryCard.number, LibraryCard.cells).join(
            Library, Library.id == LibraryCard.library_id
        )
    ):
        blobs.append(cells)
        labels.append(("virtual", library_card_id(series, number), None))
    return _cells(blobs), labels


def _check_new_cards(connection: Connection, cells: np.ndarray, new_labels: list[Label]) -> None:
    known, labels = _registered_cells(connection)
    both = np.concatenate([known, cells]) if len(known) else cells
    pairs = duplicate_pairs(fingerprints(both))
    if pairs:
        first, later = pairs[0]
        everything = labels + new_labels
        (kind, card, _), (other_kind, other, other_set) = everything[later], everything[first]
        raise CardStoreError(_REPEATED[kind, other_kind], card=card, other=other, other_set=other_set)


def registered_prints(engine: Engine) -> np.ndarray:
    """Fingerprints of every registered card, physical and virtual."""
    with engine.connect() as connection:
        return fingerprints(_registered_cells(connection)[0])


def add_card_set(
    engine: Engine, name: str, cells: np.ndarray, strips: list[str], source: str
) -> SetInfo:
    """Register a physical card set whose card k is ``cells[k-1]``."""
    with engine.begin() as connection:
        if connection.scalar(select(CardSet.id).where(CardSet.name == name)) is not None:
            raise CardStoreError(N_("a card set named {name!r} already exists"), name=name)
        _check_new_cards(connection, cells, [("new", k, None) for k in range(1, len(cells) + 1)])
        set_id = connection.scalar(
            insert(CardSet)
            .values(name=name, size=len(cells), source=source, created_at=_now())
            .returning(CardSet.id)
        )
        bulk_insert(
            connection,
            SetCard.__table__,  # type: ignore[arg-type]
            ("set_id", "number", "strip", "cells"),
            (
                (set_id, k, strip, row.tobytes())
                for k, (strip, row) in enumerate(zip(strips, cells), start=1)
            ),
        )
    return SetInfo(name, len(cells), source, ())


def add_library(
    engine: Engine, name: str, series: str, cells: np.ndarray, codes: list[str]
) -> LibraryInfo:
    """Register a virtual library of whole strips; card k is ``cells[k-1]``."""
    with engine.begin() as connection:
        if connection.scalar(select(Library.id).where(Library.name == name)) is not None:
            raise CardStoreError(N_("a library named {name!r} already exists"), name=name)
        if connection.scalar(select(Library.id).where(Library.series == series)) is not None:
            raise CardStoreError(N_("virtual series {series!r} is already used by another library"), series=series)
        _check_new_cards(
            connection, cells, [("library", library_card_id(series, k), None) for k in range(1, len(cells) + 1)]
        )
        library_id = connection.scalar(
            insert(Library)
            .values(name=name, series=series, size=len(cells), created_at=_now())
            .returning(Library.id)
        )
        bulk_insert(
            connection,
            LibraryCard.__table__,  # type: ignore[arg-type]
            ("library_id", "number", "strip", "cells", "code"),
            (
                (library_id, k, (k - 1) // 6 + 1, row.tobytes(), code)
                for k, (row, code) in enumerate(zip(cells, codes), start=1)
            ),
        )
    return LibraryInfo(name, series, len(cells))


def add_series(
    engine: Engine, set_name: str, number: int, face_value_cents: int, card_count: int | None
) -> SeriesInfo:
    """Register series ``number`` of a card set, printing cards 1..card_count."""
    if number < 1:
        raise CardStoreError(N_("a series number is a positive whole number, not {number}"), number=number)
    if number == VIRTUAL_SERIES_NUMBER:
        raise CardStoreError(
            N_("series {number} is the number the terminals' virtual cards are played under; "
               "give the paper series another number"), number=number,
        )
    if face_value_cents < 1:
        raise CardStoreError(N_("a face value is at least 1 cent, not {cents}"), cents=face_value_cents)
    with engine.begin() as connection:
        row = connection.execute(
            select(CardSet.id, CardSet.size).where(CardSet.name == set_name)
        ).first()
        if row is None:
            raise CardStoreError(N_("there is no card set named {name!r}"), name=set_name)
        count = row.size if card_count is None else card_count
        if not 1 <= count <= row.size:
            raise CardStoreError(
                N_("series {number} can print 1 to {size} cards of set {name!r}, not {count}"),
                number=number, size=row.size, name=set_name, count=count,
            )
        if connection.scalar(select(Series.id).where(Series.number == number)) is not None:
            raise CardStoreError(N_("series {number} already exists"), number=number)
        connection.execute(
            insert(Series).values(
                number=number,
                set_id=row.id,
                face_value_cents=face_value_cents,
                card_count=count,
                last_sold=0,
                created_at=_now(),
            )
        )
    return SeriesInfo(number, set_name, face_value_cents, count, 0)


def list_sets(engine: Engine) -> list[SetInfo]:
    with engine.connect() as connection:
        series: dict[int, list[SeriesInfo]] = {}
        for row in connection.execute(
            select(
                Series.number,
                Series.set_id,
                CardSet.name,
                Series.face_value_cents,
                Series.card_count,
                Series.last_sold,
            )
            .join(CardSet, CardSet.id == Series.set_id)
            .order_by(Series.number)
        ):
            series.setdefault(row.set_id, []).append(
                SeriesInfo(row.number, row.name, row.face_value_cents, row.card_count, row.last_sold)
            )
        return [
            SetInfo(c.name, c.size, c.source, tuple(series.get(c.id, ())))
            for c in connection.execute(
                select(CardSet.id, CardSet.name, CardSet.size, CardSet.source).order_by(CardSet.name)
            )
        ]


def list_libraries(engine: Engine) -> list[LibraryInfo]:
    with engine.connect() as connection:
        return [
            LibraryInfo(lib.name, lib.series, lib.size)
            for lib in connection.execute(
                select(Library.name, Library.series, Library.size).order_by(Library.name)
            )
        ]


def find_series(engine: Engine, number: int) -> SeriesInfo:
    for card_set in list_sets(engine):
        for series in card_set.series:
            if series.number == number:
                return series
    raise CardStoreError(N_("there is no series {number}"), number=number)


def set_cards(engine: Engine, name: str) -> tuple[list[str], np.ndarray]:
    """The strips and cells of a card set, card 1 first."""
    with engine.connect() as connection:
        set_id = connection.scalar(select(CardSet.id).where(CardSet.name == name))
        if set_id is None:
            raise CardStoreError(N_("there is no card set named {name!r}"), name=name)
        rows = connection.execute(
            select(SetCard.strip, SetCard.cells).where(SetCard.set_id == set_id).order_by(SetCard.number)
        ).all()
    return [r.strip for r in rows], _cells([r.cells for r in rows])


def library_cards(engine: Engine, name: str) -> LibraryCards:
    with engine.connect() as connection:
        library = connection.execute(
            select(Library.id, Library.name, Library.series, Library.size).where(Library.name == name)
        ).first()
        if library is None:
            raise CardStoreError(N_("there is no library named {name!r}"), name=name)
        info = LibraryInfo(library.name, library.series, library.size)
        rows = connection.execute(
            select(LibraryCard.number, LibraryCard.strip, LibraryCard.cells, LibraryCard.code)
            .where(LibraryCard.library_id == library.id)
            .order_by(LibraryCard.number)
        ).all()
    return LibraryCards(
        info,
        [library_card_id(info.series, r.number) for r in rows],
        [library_strip_label(info.series, r.number) for r in rows],
        _cells([r.cells for r in rows]),
        [r.code for r in rows],
    )


def count_cards(engine: Engine) -> dict[str, int]:
    with engine.connect() as connection:
        return {
            "sets": connection.scalar(select(func.count()).select_from(CardSet)) or 0,
            "set_cards": connection.scalar(select(func.count()).select_from(SetCard)) or 0,
            "series": connection.scalar(select(func.count()).select_from(Series)) or 0,
            "libraries": connection.scalar(select(func.count()).select_from(Library)) or 0,
            "library_cards": connection.scalar(select(func.count()).select_from(LibraryCard)) or 0,
        }
