"""A report before any rendering: titled tables of typed cells, and the journal range.

A :class:`Report` is what the PDF and the CSV of one report both print, table by
table and column by column, so the two cannot disagree on a field.  Money stays
integer cents (:class:`Cents`) until a rendering formats it; a column holding cents has
a key ending in ``_cents``.  Every report names the journal records it was made from
(:class:`JournalRange`), so an inspector ties it to the journal (R77.3).

A report is laid out in a :class:`Wording`: the words, money, dates and times of its
reader.  The data's wording (:data:`DATA`: the English texts, amounts as cents, ISO dates)
makes the CSV and the JSON, which programs read; a server that prints for people passes
its own (the hall: its language's catalog and CLDR formats) to make the PDF.  Nothing here
knows a language: the texts are English message ids, and the wording decides the words.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any, Callable, Mapping

from protocol.errors import DomainError
from protocol.money import format_cents


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


def english(msgid: str, **params: Any) -> str:
    """A message id as it is written (English), its ``{placeholders}`` filled."""
    return msgid.format(**params) if params else msgid


def iso_moment(time_ms: int, timezone: tzinfo) -> str:
    return datetime.datetime.fromtimestamp(time_ms / 1000, timezone).strftime("%Y-%m-%d %H:%M:%S")


def iso_clock(time_ms: int, timezone: tzinfo) -> str:
    return datetime.datetime.fromtimestamp(time_ms / 1000, timezone).strftime("%H:%M:%S")


def iso_day(day: str) -> str:
    return day


@dataclass(frozen=True)
class Wording:
    """How a report speaks to its reader.

    ``t(msgid, **params)`` gives a text in the reader's words (the msgid is the English
    text, with named ``{placeholders}``); ``money`` writes integer cents; ``moment`` a
    time (milliseconds) with its date, ``clock`` without, both in the given zone;
    ``day`` an ISO date (``YYYY-MM-DD``).
    """

    t: Callable[..., str] = english
    money: Callable[[int], str] = format_cents
    moment: Callable[[int, tzinfo], str] = iso_moment
    clock: Callable[[int, tzinfo], str] = iso_clock
    day: Callable[[str], str] = iso_day

    def said(self, phrase: Mapping[str, Any] | None, english: str) -> str:
        """A text composed in English said in the reader's words: ``phrase`` is its catalog message and
        parts (:meth:`protocol.errors.Phrase.said`), each part through ``t`` too (a name reads as written),
        a part that is such a phrase itself said the same way; ``english`` when there is no phrase."""
        if not phrase:
            return english
        parts = {name: self.said(value, "") if isinstance(value, Mapping) else self.t(str(value))
                 for name, value in phrase["parts"].items()}
        return self.t(phrase["message"], **parts)


#: The data's wording: English words, ``12.34 EUR``, ISO dates and times (the CSV, the JSON).
DATA = Wording()
