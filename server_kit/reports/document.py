"""A report before any rendering: titled tables of typed cells, and the journal range.

A :class:`Report` is what the PDF and the CSV of one report both print, table by
table and column by column, so the two cannot disagree on a field.  Money stays
integer cents (:class:`Cents`) until a rendering formats it; a column holding cents has
a key ending in ``_cents``.  Every report names the journal records it was made from
(:class:`JournalRange`), so an inspector ties it to the journal (R77.3).
"""

from __future__ import annotations

from dataclasses import dataclass

from protocol.errors import DomainError


class ReportError(DomainError):
    """A report that cannot be made: an unknown subject, or a bad request."""


@dataclass(frozen=True)
class JournalRange:
    """The journal records a report covers; ``last_hash`` ties it to the chain."""

    first_seq: int
    last_seq: int
    last_hash: str


@dataclass(frozen=True)
class Cents:
    """An amount of money in a cell: integer cents, formatted only when displayed."""

    value: int


Cell = str | int | Cents | None


@dataclass(frozen=True)
class Column:
    key: str  # the CSV field name
    title: str  # the PDF column heading


@dataclass(frozen=True)
class Table:
    """One table of a report; ``vertical`` tables have one row, shown as field: value."""

    key: str
    title: str
    columns: tuple[Column, ...]
    rows: tuple[tuple[Cell, ...], ...]
    vertical: bool = False


@dataclass(frozen=True)
class Report:
    kind: str  # game, session, month
    subject: str  # the game id, the session number, the month
    title: str
    journal_range: JournalRange
    tables: tuple[Table, ...]
    #: The file name without extension (``minutes-session-3``); ``KIND-SUBJECT`` if not given.
    stem: str | None = None

    @property
    def file_stem(self) -> str:
        return self.stem or f"{self.kind}-{self.subject}"
