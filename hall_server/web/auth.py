"""Staff sign-in for the console: passwords checked against the configured hashes, and
server-side sign-in sessions.

A sign-in hands the browser a random session id (a cookie); the server keeps the
actor behind it.  Nothing about the actor travels in the cookie, so there is nothing
to forge, and signing out or restarting the server ends every session.  A session
lapses after :data:`IDLE_LIMIT_S` without a request, measured on the injected clock.

A refused sign-in says only that the name or the password is not recognised, whether
the name exists or not, and the password of an unknown name is still hashed, so the
answer's timing does not tell either.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Iterable, Protocol

from hall_server.config import StaffMember, check_password, hash_password
from hall_server.hall.core import Actor
from hall_server.web.channel import SeenRequests
from protocol.errors import DomainError

IDLE_LIMIT_S = 12 * 3600  # one working day without a request
SESSION_COOKIE = b"bingo_session"
_DUMMY_HASH = hash_password("no such staff member", salt=b"\0" * 16)


class Clock(Protocol):
    """What sign-ins need of the reactor (``IReactorTime.seconds``): the time now."""

    def seconds(self) -> float: ...


class SignInRefused(DomainError):
    """The name or the password is not recognised."""


@dataclass
class SignIn:
    session_id: str
    actor: Actor
    last_seen: float
    seen: SeenRequests = field(default_factory=SeenRequests)


class StaffDirectory:
    """The configured staff: who may sign in, with which role (R80)."""

    def __init__(self, staff: Iterable[StaffMember]) -> None:
        self.staff = {member.name: member for member in staff}

    def authenticate(self, name: str, password: str) -> Actor:
        member = self.staff.get(name)
        matches = check_password(password, member.password_hash if member else _DUMMY_HASH)
        if member is None or not matches:
            raise SignInRefused("name or password not recognised")
        return Actor(member.name, member.role)


class SignIns:
    """The open sign-in sessions, by session id."""

    def __init__(self, directory: StaffDirectory, clock: Clock, idle_limit_s: float = IDLE_LIMIT_S) -> None:
        self.directory = directory
        self.clock = clock
        self.idle_limit_s = idle_limit_s
        self.sessions: dict[str, SignIn] = {}

    def sign_in(self, name: str, password: str) -> SignIn:
        return self.open(self.directory.authenticate(name, password))

    def open(self, actor: Actor) -> SignIn:
        """A new session for an authenticated ``actor``."""
        self._forget_lapsed()
        session = SignIn(secrets.token_urlsafe(32), actor, self.clock.seconds())
        self.sessions[session.session_id] = session
        return session

    def find(self, session_id: str | None) -> SignIn | None:
        """The live session behind ``session_id``, touched; ``None`` if none or lapsed."""
        if not session_id:
            return None
        session = self.sessions.get(session_id)
        if session is None:
            return None
        now = self.clock.seconds()
        if now - session.last_seen > self.idle_limit_s:
            del self.sessions[session_id]
            return None
        session.last_seen = now
        return session

    def sign_out(self, session_id: str | None) -> None:
        if session_id:
            self.sessions.pop(session_id, None)

    def _forget_lapsed(self) -> None:
        now = self.clock.seconds()
        for session_id in [k for k, s in self.sessions.items() if now - s.last_seen > self.idle_limit_s]:
            del self.sessions[session_id]
