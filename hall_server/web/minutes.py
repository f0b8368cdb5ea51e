"""The minutes book on the console: who may print it, and making a report off the reactor.

The reports are the ones ``bingo minutes`` writes, made by the same code
(:mod:`hall_server.reports.publish`) from the whole journal at the moment they are
asked for.  Reading, verifying and folding the journal and rendering a PDF take far
longer than a ball's turn on the reactor, so :class:`MinutesDesk` runs them on a
thread of its own and only hands the bytes back.

The minutes are read by the administrator and the room chief: they sign the session's
opening and closing (R77.1), so they answer for the book; the other roles see the
game on the console but the book names staff, witnesses and money movements of the
whole hall.
"""

from __future__ import annotations

import re
from datetime import tzinfo

from twisted.internet import defer

from hall_server.hall.roles import Role
from hall_server.reports.publish import SignedFile, publish
from server_kit.core import Actor, RunBlocking
from server_kit.journal.sql import Journal

#: The roles that may read and print the minutes book from the console.
MINUTES_READERS = frozenset({Role.ADMINISTRATOR, Role.ROOM_CHIEF})
#: The reports the console prints: one game, or one session with all its games.
CONSOLE_KINDS = ("game", "session")
_SUBJECT = {"game": re.compile(r"[0-9A-Za-z][0-9A-Za-z-]{0,63}"), "session": re.compile(r"[1-9][0-9]{0,8}")}


def may_read_minutes(actor: Actor) -> bool:
    """Whether ``actor``'s role may read the minutes book (administrator, room chief)."""
    return actor.role in MINUTES_READERS


def well_formed(kind: str, subject: str) -> bool:
    """Whether ``subject`` can name a report of ``kind`` at all (before the journal is read)."""
    pattern = _SUBJECT.get(kind)
    return pattern is not None and pattern.fullmatch(subject) is not None


class MinutesDesk:
    """Makes one signed rendering of a game's or a session's minutes on request."""

    def __init__(self, journal: Journal, hall_name: str, timezone: tzinfo, run: RunBlocking,
                 language: str = "en") -> None:
        self.journal = journal
        self.hall_name = hall_name
        self.timezone = timezone  # the hall's ([hall] timezone): the reports' times are local
        self.run = run  # a thread pool in the server; inline in the tests
        self.language = language  # the hall's ([hall] language): the PDF's words

    def make(self, kind: str, subject: str, file_format: str) -> "defer.Deferred[SignedFile]":
        """The report as PDF or CSV with its signature; fails with ``ReportError`` if unknown."""
        journal = self.journal
        result: defer.Deferred[SignedFile] = self.run(
            publish, journal.engine, journal.key, journal.head, self.hall_name, self.timezone, kind, subject,
            file_format, self.language,
        )
        return result
