"""The session: the pre-session verification, ball counts, the signed opening and closing (R77.1, R84)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import Json, JournalRecord, optional, record


@record
@dataclass(frozen=True, kw_only=True)
class SystemVerified(JournalRecord):
    """The verification the server ran before a session (R84.1, R92.5e).

    ``results`` maps each check (``journal``, ``database``, ``draw_device``, ``clock``,
    ``software``) to the fault it found, ``null`` when it passed; ``passed`` is true
    when every check passed.  ``date`` is the session's date (YYYY-MM-DD).
    """

    type: ClassVar[str] = "system_verified"
    date: str
    results: Mapping[str, str | None]
    passed: bool
    #: The session under way when it ran (a verification during a session, R92.5e: after a
    #: restart from a crash, or whenever staff want one); absent for a verification before a session.
    session: int | None = optional()
    #: For each fault worded from a catalog template, the template and its parts
    #: (``{"message": ..., "parts": {...}}``), for the console to say it in its reader's
    #: language; absent when no fault was (the fault's English text is in ``results``).
    said: Mapping[str, Json] | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class RestartedAfterCrash(JournalRecord):
    """The hall server started after a run that did not stop cleanly (R92.5e, R95.1).

    ``last_record`` is the journal's last record before the start, written at
    ``stopped_after_ms``; ``game_id`` the game then in progress, suspended by this start
    (R86.1), if one was.  Nothing is sold until a verification passes after this record.
    """

    type: ClassVar[str] = "restarted_after_crash"
    last_record: int
    stopped_after_ms: int
    game_id: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class BallsCounted(JournalRecord):
    """A count of the balls in front of witnesses (R84.2-4) at ``stage`` (opening, extra, closing).

    ``counted`` is how many balls were counted; ``missing`` and ``repeated`` the numbers
    absent or counted twice; ``room_chief`` who made the count.
    """

    type: ClassVar[str] = "balls_counted"
    stage: str
    ball_set: str
    counted: int
    missing: tuple[int, ...]
    repeated: tuple[int, ...]
    witnesses: tuple[str, ...]
    room_chief: str


@record
@dataclass(frozen=True, kw_only=True)
class SessionOpeningSigned(JournalRecord):
    """One of the two signatures of a session's opening (R77.1): ``signer`` in ``role``, with the
    signer's class I ``licence`` number (R79; absent in journals written before it was named)."""

    type: ClassVar[str] = "session_opening_signed"
    session: int
    signer: str
    role: str
    licence: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class SessionOpened(JournalRecord):
    """Session number ``session`` of ``date`` is open: both signed its opening."""

    type: ClassVar[str] = "session_opened"
    session: int
    date: str


@record
@dataclass(frozen=True, kw_only=True)
class SessionClosingSigned(JournalRecord):
    """One of the two signatures of a session's closing (R77.1), with the signer's ``licence`` (R79)."""

    type: ClassVar[str] = "session_closing_signed"
    session: int
    signer: str
    role: str
    licence: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class SessionClosed(JournalRecord):
    """The session is closed after ``games`` games: both signed its closing."""

    type: ClassVar[str] = "session_closed"
    session: int
    games: int


@record
@dataclass(frozen=True, kw_only=True)
class BallSetReplaced(JournalRecord):
    """Ball set ``old`` is replaced by ``new`` after ``games_played`` games, with the reason (R83.1-2)."""

    type: ClassVar[str] = "ball_set_replaced"
    old: str
    new: str
    games_played: int
    reason: str


@record
@dataclass(frozen=True, kw_only=True)
class ExtraCheckRequested(JournalRecord):
    """Ten or more ``players`` ask for an extra check of the balls, with their ``complaint`` (R84.3)."""

    type: ClassVar[str] = "extra_check_requested"
    players: tuple[str, ...]
    complaint: str
