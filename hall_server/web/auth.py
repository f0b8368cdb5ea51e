"""Staff sign-in for the console: passwords checked against the configured hashes, and
server-side sign-in sessions.

A sign-in hands the browser a random session id (a cookie); the server keeps the
actor behind it.  Nothing about the actor travels in the cookie, so there is nothing
to forge, and signing out or restarting the server ends every session.  A session
lapses after :data:`IDLE_LIMIT_S` without a request, measured on the injected clock.
Whoever needs to know when a session ends (the live hub closes its WebSockets)
subscribes to :attr:`SignIns.ended`; a lapse is noticed on the clock, not only at the
next request.

A refused sign-in says only that the name or the password is not recognised, whether
the name exists or not, and the password of an unknown name is still hashed, so the
answer's timing does not tell either.  Failed sign-ins back off per name and per
address (:mod:`server_kit.web.throttle`).

Every staff login carries its holder's class I licence (R79).  Once the password is
right, a licence that is expired, not yet valid or suspended refuses the sign-in with
a message that says so (the password was right: nothing is given away); a sign-in
whose licence lapses while it is open (at midnight, the last day of its validity) ends
at its next request.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import date, datetime, tzinfo
from typing import Any, Callable, Iterable, Protocol

from twisted.logger import Logger

from hall_server.config import (
    DEFAULT_TIMEZONE,
    ConfigError,
    StaffMember,
    check_password,
    check_password_policy,
    hash_password,
    weak_hash,
)
from protocol.errors import DomainError
from server_kit.core import Actor
from server_kit.web.channel import SeenRequests

IDLE_LIMIT_S = 12 * 3600  # one working day without a request
SESSION_COOKIE = b"bingo_session"
_DUMMY_HASH = hash_password("no such staff member", salt=b"\0" * 16)

log = Logger()


class Clock(Protocol):
    """What sign-ins need of the reactor (``IReactorTime``): the time now, and a timer."""

    def seconds(self) -> float: ...

    def callLater(self, delay: float, callable: Callable[..., Any], *args: Any, **kw: Any) -> Any: ...


class SignInRefused(DomainError):
    """The name or the password is not recognised, or the member's licence does not allow work today."""


@dataclass
class SignIn:
    session_id: str
    actor: Actor
    last_seen: float
    seen: SeenRequests = field(default_factory=SeenRequests)
    expiry: Any = field(default=None, repr=False)  # the IDelayedCall that ends it when idle


class StaffDirectory:
    """The configured staff: who may sign in, with which role (R80).

    A configuration written before today's hashing cost still loads; the members whose
    hashes are weaker are named in the log once, when the directory is made, and a
    member who signs in with a password the policy would refuse today is named once.
    """

    def __init__(self, staff: Iterable[StaffMember], *, today: Callable[[], date] | None = None,
                 timezone: tzinfo = DEFAULT_TIMEZONE) -> None:
        self.staff = {member.name: member for member in staff}
        #: The hall's calendar day now, against which licences are read (R79).
        self.today = today or (lambda: datetime.now(timezone).date())
        self._weak_password_told: set[str] = set()
        weak = {name: reason for name, member in self.staff.items() if (reason := weak_hash(member.password_hash))}
        if weak:
            log.warn(
                "Staff password hashes weaker than today's: {members}; give them new passwords "
                "(bingo hall hash-password)",
                members="; ".join(f"{name} ({reason})" for name, reason in sorted(weak.items())),
            )

    def authenticate(self, name: str, password: str) -> Actor:
        member = self.staff.get(name)
        matches = check_password(password, member.password_hash if member else _DUMMY_HASH)
        if member is None or not matches:
            raise SignInRefused("name or password not recognised")
        if (lapsed := self.licence_refusal(member.name)) is not None:
            log.warn("Sign-in of {name} refused: {why}", name=member.name, why=lapsed)
            raise SignInRefused(f"{lapsed}: a member of staff works only under a valid class I licence; "
                                "the administrator records its renewal in hall.toml")
        self._tell_weak_password(member.name, password)
        return Actor(member.name, member.role)

    def licence_refusal(self, name: str, day: date | None = None) -> str | None:
        """Why the configured member ``name`` may not work on ``day`` (today) under their licence (R79);
        None when they may, or when ``name`` is no configured login."""
        member = self.staff.get(name)
        if member is None:
            return None
        return member.licence_refusal(day or self.today())

    def sign_sessions(self, session: Any, timezone: tzinfo) -> None:
        """Each signer of ``session``'s opening (a :class:`~hall_server.hall.session.SessionModule`) works
        under a valid licence, which the signature's record names (R79)."""
        session.signer_checks.append(
            lambda actor, now_ms: self.licence_refusal(actor.name, datetime.fromtimestamp(now_ms / 1000, timezone).date()))
        session.licence_of = self.licence_number

    def licence_number(self, name: str) -> str | None:
        member = self.staff.get(name)
        return member.licence.number if member is not None and member.licence is not None else None

    def _tell_weak_password(self, name: str, password: str) -> None:
        if name in self._weak_password_told:
            return
        try:
            check_password_policy(password)
        except ConfigError as error:
            self._weak_password_told.add(name)
            log.warn("The password of {name} does not follow the password policy ({why}); give them a new one",
                     name=name, why=str(error))


class SignIns:
    """The open sign-in sessions, by session id."""

    def __init__(self, directory: StaffDirectory, clock: Clock, idle_limit_s: float = IDLE_LIMIT_S) -> None:
        self.directory = directory
        self.clock = clock
        self.idle_limit_s = idle_limit_s
        self.sessions: dict[str, SignIn] = {}
        #: Called with each session that ends (signed out or lapsed), once.
        self.ended: list[Callable[[SignIn], None]] = []

    def sign_in(self, name: str, password: str) -> SignIn:
        return self.open(self.directory.authenticate(name, password))

    def open(self, actor: Actor) -> SignIn:
        """A new session for an authenticated ``actor``."""
        self._forget_lapsed()
        session = SignIn(secrets.token_urlsafe(32), actor, self.clock.seconds())
        self.sessions[session.session_id] = session
        session.expiry = self.clock.callLater(self.idle_limit_s + 1, self._check_lapse, session)
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
            self._end(session)
            return None
        if self.directory.licence_refusal(session.actor.name) is not None:
            self._end(session)  # the licence lapsed (or was suspended) while signed in (R79)
            return None
        session.last_seen = now
        return session

    def sign_out(self, session_id: str | None) -> None:
        session = self.sessions.get(session_id) if session_id else None
        if session is not None:
            self._end(session)

    def _check_lapse(self, session: SignIn) -> None:
        session.expiry = None
        if self.sessions.get(session.session_id) is not session:
            return
        left = session.last_seen + self.idle_limit_s - self.clock.seconds()
        if left < 0:
            self._end(session)
        else:
            # Touched meanwhile: look again once it could have lapsed.
            session.expiry = self.clock.callLater(left + 1, self._check_lapse, session)

    def _end(self, session: SignIn) -> None:
        if self.sessions.pop(session.session_id, None) is None:
            return
        if session.expiry is not None and session.expiry.active():
            session.expiry.cancel()
        session.expiry = None
        for ended in list(self.ended):
            try:
                ended(session)
            except Exception:
                log.failure("telling that the sign-in of {name} ended", name=session.actor.name)

    def _forget_lapsed(self) -> None:
        now = self.clock.seconds()
        for session in [s for s in self.sessions.values() if now - s.last_seen > self.idle_limit_s]:
            self._end(session)
