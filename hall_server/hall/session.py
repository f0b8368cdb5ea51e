"""The hall session: verification, ball counts, signed opening and closing (R84, R77.1).

A session is one day's opening of the hall.  Its rules, as this module enforces them:

* Before a session the whole system is verified (R84.1, R92.5e): the journal chain,
  the database, the draw device's self-test, the clock, the installed software's
  hash against the release manifest, the terminals and the links.  The result is
  recorded whatever it is; a session opens only after a verification that passed.
  Only the server's own checks record a verification (``run_verification``): no
  command takes a verification's results from outside, so nobody can record a pass
  the checks did not find.  The same verification runs during an open session too,
  for the session's date.
* After a start that follows a crash (R92.5e, R95.1; ``restarted_after_crash``, written
  by the composition root), nothing is sold - paper or virtual cards, network cards,
  credit into a video bingo machine - and no suspended game resumes until a
  verification has passed after it (:meth:`SessionModule.restart_refusal`).
* The 90 balls are counted at opening and at closing in the presence of at least one
  member of the public and the room chief (R84.2); the witnesses are named in the
  record.  A count that misses or repeats a ball is recorded as such and blocks the
  opening until a count comes out whole (after the set is repaired or replaced).
* Opening and closing are signed by the administrator and by the room chief (R77.1):
  each signs in person; the session is open (or closed) once both have signed.
* The ball set in use counts its games: a warning from 1,900 games, and no game starts
  at 2,000 until the set is replaced; the replacement is recorded (R83.1-2).
* Ten or more players may ask for an extra check of the balls with a reasoned, signed
  complaint (R84.3): the request names them and their complaint, and is followed by a
  count of the balls.
* The reserve machine's balls are counted before and after it is used (R84.4).

The module holds the state (rebuilt from the journal by :meth:`apply`) and turns staff
commands into journal entries through :class:`CommandCore`.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from twisted.internet.defer import Deferred, fail

from hall_server.hall.admission import DEFAULT_TIMEZONE, local_date
from hall_server.hall.roles import Role
from protocol.chain import Record
from protocol.errors import N_, DomainError, Phrase
from protocol.records import JournalRecord, declared
from protocol.records.game import GameClosed, GameFinished, GameRefunded
from protocol.records.session import (
    BallsCounted,
    BallSetReplaced,
    ExtraCheckRequested,
    RestartedAfterCrash,
    SessionClosed,
    SessionClosingSigned,
    SessionOpened,
    SessionOpeningSigned,
    SystemVerified,
)
from server_kit.core import Actor, CommandCore, CommandSpec, RunBlocking
from server_kit.journal.projection import ProjectedState


BALL_SET_LIMIT = 2_000
BALL_SET_WARNING = 1_900
EXTRA_CHECK_PLAYERS = 10
COUNT_STAGES = ("opening", "closing", "extra", "reserve_before", "reserve_after")
CHECKS = ("journal", "database", "draw_device", "clock", "software", "terminals", "links")

PERMISSIONS = {
    "run_verification": {Role.ADMINISTRATOR, Role.ROOM_CHIEF},
    "count_balls": {Role.ROOM_CHIEF},
    "sign_session_opening": {Role.ADMINISTRATOR, Role.ROOM_CHIEF},
    "sign_session_closing": {Role.ADMINISTRATOR, Role.ROOM_CHIEF},
    "replace_ball_set": {Role.ROOM_CHIEF, Role.ADMINISTRATOR},
    "request_extra_check": {Role.ROOM_CHIEF, Role.TABLE_CHIEF},
}


class SessionError(DomainError):
    """A session command refused; the message says why."""


@dataclass
class BallCount:
    stage: str
    missing: tuple[int, ...]
    repeated: tuple[int, ...]
    witnesses: tuple[str, ...]
    seq: int

    @property
    def whole(self) -> bool:
        return not self.missing and not self.repeated


@dataclass
class Session:
    number: int
    date: str
    verification_seq: int
    opening_signatures: dict[str, str] = field(default_factory=dict)  # role -> name
    closing_signatures: dict[str, str] = field(default_factory=dict)
    counts: list[BallCount] = field(default_factory=list)
    open: bool = False
    closed: bool = False
    games: int = 0


@dataclass
class SessionState:
    sessions: list[Session] = field(default_factory=list)
    last_verification: dict[str, Any] | None = None
    ball_set: str = "set-1"
    ball_set_games: int = 0
    ball_set_history: list[dict[str, Any]] = field(default_factory=list)
    extra_checks: list[dict[str, Any]] = field(default_factory=list)
    #: The seq of the ``restarted_after_crash`` record no verification has passed after yet (R92.5e).
    restart: int | None = None

    @property
    def current(self) -> Session | None:
        if self.sessions and not self.sessions[-1].closed:
            return self.sessions[-1]
        return None


def count_faults(balls_present: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The numbers missing from and repeated in a count of the 90 balls."""
    seen: dict[int, int] = {}
    for ball in balls_present:
        if isinstance(ball, bool) or not isinstance(ball, int) or not 1 <= ball <= 90:
            raise SessionError(N_("a ball is numbered 1-90, not {ball!r}"), ball=ball)
        seen[ball] = seen.get(ball, 0) + 1
    missing = tuple(n for n in range(1, 91) if n not in seen)
    repeated = tuple(sorted(n for n, times in seen.items() if times > 1))
    return missing, repeated


def _names(values: Sequence[str], what: str) -> tuple[str, ...]:
    names = tuple(v.strip() for v in values if isinstance(v, str) and v.strip())
    if len(names) != len(values):
        named = {"witness": N_("every witness is named"), "player": N_("every player is named")}
        raise SessionError(named[what] if what in named else f"every {what} is named")
    return names


def _signature_entries(
    actor: Actor,
    session: Session,
    what: str,
    signatures: Mapping[str, str],
    signed: type[SessionOpeningSigned | SessionClosingSigned],
    licence: str | None,
    completed: JournalRecord,
) -> list[JournalRecord]:
    """One signature of the opening or closing, naming the signer's ``licence`` when one is known (R79);
    the second of the two completes it."""
    role = str(actor.role)
    if role in signatures:
        raise SessionError(f"the {role.replace('_', ' ')} has already signed the {what}")
    entries: list[JournalRecord] = [signed(session=session.number, signer=actor.name, role=role, licence=licence)]
    if len(signatures) == 1:
        entries.append(completed)
    return entries


#: Runs the pre-session checks at ``now_ms`` (blocking); see :mod:`hall_server.verification`.
Verifier = Callable[[int], Mapping[str, str | None]]


_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def _session_date(text: object, today: datetime.date) -> str:
    """The session's date: ``text`` as YYYY-MM-DD, or ``today`` (the hall's) when it is empty."""
    if text == "":
        return today.isoformat()
    try:
        if isinstance(text, str) and _ISO_DATE.fullmatch(text):
            return datetime.date.fromisoformat(text).isoformat()
    except ValueError:
        pass
    raise SessionError(N_("a session's date is YYYY-MM-DD (or empty for today in the hall), not {text!r}"), text=text)


class SessionModule(ProjectedState):
    """The session's state and commands.

    ``run_checks`` runs the verifier off the reactor thread: in the server a pool of its
    own, never the database's single writer, which the checks would hold for as long as
    they hash the whole journal (every commit would wait).  Unit tests run it inline
    (the core's runner, the default).
    """

    def __init__(
        self,
        core: CommandCore,
        verifier: Verifier | None = None,
        *,
        run_checks: RunBlocking | None = None,
        timezone: datetime.tzinfo = DEFAULT_TIMEZONE,
    ) -> None:
        self.core = core
        self.verifier = verifier
        self.run_checks = run_checks or core.run_blocking
        #: The hall's time zone ([hall] timezone): what "today" is for the session's date
        #: and for the pot rules that count days (the games ask :meth:`local_date`).
        self.timezone = timezone
        self.state = SessionState()
        #: What must hold before the closing is signed, told by the modules that know
        #: (the games): each returns why the session cannot close yet, or None.
        self.closing_checks: list[Callable[[], str | None]] = []
        #: The journal's last record when this process found that the run before it crashed
        #: (:meth:`crashed_after`): sales wait for a verification from the start, before the
        #: ``restarted_after_crash`` record is even committed.  Not part of the folded state.
        self.crash_after_seq: int | None = None
        self._install_opening_checks()
        core.add_module(self)
        core.allow(PERMISSIONS)
        for name, handler, params, summary in (
            ("run_verification", self.run_verification, {"date": str},
             N_("verify the whole system before the session dated YYYY-MM-DD (empty: today in the hall), "
             "or during the session under way (after a restart from a crash: before anything is sold again)")),
            ("count_balls", self.count_balls, {"stage": str, "balls_present": list[int], "witnesses": list[str]},
             N_("record a count of the 90 balls with its witnesses")),
            ("sign_session_opening", self.sign_opening, {}, N_("sign the session's opening")),
            ("sign_session_closing", self.sign_closing, {}, N_("sign the session's closing")),
            ("replace_ball_set", self.replace_ball_set, {"new_set": str, "reason": str},
             N_("put a new ball set in use")),
            ("request_extra_check", self.request_extra_check, {"players": list[str], "complaint": str},
             N_("record ten or more players' request for an extra ball check")),
        ):
            core.register(CommandSpec(name, handler, params, summary))

    # --- Queries ------------------------------------------------------------------

    @property
    def is_open(self) -> bool:
        session = self.state.current
        return bool(session and session.open)

    def local_date(self, now_ms: int) -> datetime.date:
        """The hall's calendar day at ``now_ms``, in its configured time zone."""
        return local_date(now_ms, self.timezone)

    def require_open(self) -> Session:
        session = self.state.current
        if session is None or not session.open:
            raise SessionError(N_("the session is not open: verify, count the balls and sign the opening first"))
        return session

    def crashed_after(self, seq: int) -> None:
        """This process found that the run before it did not stop cleanly; its journal ended at ``seq``."""
        self.crash_after_seq = seq

    def restart_refusal(self) -> str | None:
        """Why nothing may be sold now (R92.5e, R95.1), or None.

        After a start that follows a crash, until a verification passes (the journal, the
        draw device, the terminals, the links...), run by the room chief or the administrator.
        """
        restart = self.state.restart
        if restart is None and self.crash_after_seq is None:
            return None
        return ("the hall server restarted after a crash: nothing is sold and no game resumes until the room chief "
                "runs the verification (run_verification) and it passes (R92.5e)")

    def require_open_for_sale(self) -> Session:
        """An open session in which cards may be sold: no restart from a crash awaits its verification."""
        session = self.require_open()
        refusal = self.restart_refusal()
        if refusal is not None:
            raise SessionError(refusal)
        return session

    def require_ball_set_usable(self) -> None:
        if self.state.ball_set_games >= BALL_SET_LIMIT:
            raise SessionError(
                N_("ball set {ball_set} has played {games} games; it must be replaced after {limit} (R83.2) "
                   "before another game"),
                ball_set=self.state.ball_set, games=self.state.ball_set_games, limit=BALL_SET_LIMIT)

    # --- Commands -----------------------------------------------------------------

    def run_verification(self, actor: Actor, date: str) -> Deferred[list[Record]]:
        """Run every check now and record the outcome (R84.1, R92.5e).

        ``date`` is the session's (YYYY-MM-DD); empty, it is today in the hall's time
        zone, or the date of the session under way.  The checks run off the reactor
        thread; whatever they find is recorded.  Before a session, only a verification
        that passed lets the session open; during one, a verification that passed lets
        sales go on after a restart from a crash (R95.1).
        """
        try:
            self.core.check_permission(actor, "run_verification")
            if self.verifier is None:
                raise SessionError(N_("this hall has no verification configured"))
            current = self.state.current
            if current is not None:
                date = self._date_of(current, date)
            else:
                date = _session_date(date, self.local_date(self.core.now_ms()))
                self.check_after_the_last(date)
        except DomainError:
            return fail()
        running = self.run_checks(self.verifier, self.core.now_ms())
        return running.addCallback(lambda results: self._record_verification(actor, date, results))

    @staticmethod
    def _date_of(current: Session, date: object) -> str:
        """A verification during session ``current`` is of its date."""
        if date not in ("", current.date):
            raise SessionError(N_("session {session} of {date} is under way: a verification now is of "
                                  "its date (leave the date empty), not of {given!r}"),
                               session=current.number, date=current.date, given=date)
        return current.date

    def check_after_the_last(self, date: str) -> None:
        """A session's date names it in the minutes and the audit export: not before the last one's."""
        if self.state.sessions and date < self.state.sessions[-1].date:
            raise SessionError(N_("the session date {date} is before the last session's ({last})"),
                               date=date, last=self.state.sessions[-1].date)

    def _record_verification(
        self, actor: Actor, date: str, results: Mapping[str, str | None]
    ) -> Deferred[list[Record]]:
        """Record what the checks found: each check's fault, or None when it passed."""

        def decide(now: int) -> list[JournalRecord]:
            current = self.state.current
            during: int | None = None
            if current is not None:
                if current.date != date:
                    raise SessionError(N_("a session opened or closed while the checks ran; run the verification again"))
                during = current.number
            else:
                self.check_after_the_last(date)
            unknown = sorted(set(results) - set(CHECKS))
            missing = sorted(set(CHECKS) - set(results))
            if unknown or missing:
                raise SessionError(
                    f"a verification reports exactly {', '.join(CHECKS)}"
                    + (f"; missing {', '.join(missing)}" if missing else "")
                    + (f"; unknown {', '.join(unknown)}" if unknown else "")
                )
            faults = {name: fault for name, fault in results.items() if fault}
            # A fault worded from the catalog keeps its template: the console says it in its reader's language.
            said = {name: fault.said() for name, fault in faults.items() if isinstance(fault, Phrase)}
            return [SystemVerified(date=date, results={name: None if fault is None else str(fault)
                                                       for name, fault in results.items()},
                                   passed=not faults, session=during, said=said or None)]

        return self.core.execute(actor, "run_verification", decide)

    def count_balls(
        self, actor: Actor, stage: str, balls_present: Sequence[int], witnesses: Sequence[str]
    ) -> Deferred[list[Record]]:
        """Record a count of the balls with its witnesses (R84.2-4)."""

        def decide(now: int) -> list[JournalRecord]:
            if stage not in COUNT_STAGES:
                raise SessionError(f"a count is made at {', '.join(COUNT_STAGES)}, not {stage!r}")
            names = _names(list(witnesses), "witness")
            if not names:
                raise SessionError(N_("a ball count needs at least one member of the public as witness (R84.2)"))
            session = self.state.current
            if stage == "opening":
                verification = self.state.last_verification
                if session is None and (verification is None or not verification["passed"]):
                    raise SessionError(N_("the system has not passed its verification for this session (R84.1)"))
                if session is not None and session.open:
                    raise SessionError(N_("the session is already open"))
            elif session is None or not session.open:
                raise SessionError(f"a {stage.replace('_', ' ')} count is made during an open session")
            missing, repeated = count_faults(list(balls_present))
            return [
                BallsCounted(
                    stage=stage,
                    ball_set=self.state.ball_set,
                    counted=len(balls_present),
                    missing=missing,
                    repeated=repeated,
                    witnesses=names,
                    room_chief=actor.name,
                )
            ]

        return self.core.execute(actor, "count_balls", decide)

    def sign_opening(self, actor: Actor) -> Deferred[list[Record]]:
        """The administrator and the room chief each sign the session's opening (R77.1)."""

        def decide(now: int) -> list[JournalRecord]:
            session = self.state.current
            if session is None:
                raise SessionError(N_("count the balls at opening before signing (R84.2)"))
            if session.open:
                raise SessionError(N_("the session is already open"))
            opening = [c for c in session.counts if c.stage == "opening"]
            if not opening or not opening[-1].whole:
                raise SessionError(N_("the last opening count did not find the 90 balls once each; count again"))
            self.refuse_opening(actor, now, opens=len(session.opening_signatures) == 1)
            return _signature_entries(
                actor, session, "opening", session.opening_signatures, SessionOpeningSigned, self.licence_of(actor.name),
                SessionOpened(session=session.number, date=session.date),
            )

        return self.core.execute(actor, "sign_session_opening", decide)

    def sign_closing(self, actor: Actor) -> Deferred[list[Record]]:
        """Both sign the closing, after the closing count (R77.1, R84.2)."""

        def decide(now: int) -> list[JournalRecord]:
            session = self.require_open()
            closing = [c for c in session.counts if c.stage == "closing"]
            if not closing:
                raise SessionError(N_("count the balls at closing before signing (R84.2)"))
            for check in self.closing_checks:
                if (why := check()) is not None:
                    raise SessionError(why)
            return _signature_entries(
                actor, session, "closing", session.closing_signatures, SessionClosingSigned, self.licence_of(actor.name),
                SessionClosed(session=session.number, games=session.games),
            )

        return self.core.execute(actor, "sign_session_closing", decide)

    # --- Who may open a session, and when (R74.1, R79) ---------------------------------

    def _install_opening_checks(self) -> None:
        #: Asked of each signer of the opening: why ``actor`` may not sign it at ``now_ms`` (a
        #: licence expired or suspended, R79), or None.
        self.signer_checks: list[Callable[[Actor, int], str | None]] = []
        #: Asked when a signature would open the session: why it may not open at ``now_ms``
        #: (outside the opening hours in force, R74.1), or None.
        self.opening_checks: list[Callable[[int], str | None]] = []
        #: The class I licence number of a signer (R79), named in the signature's record; None: none known.
        self.licence_of: Callable[[str], str | None] = lambda name: None

    def refuse_opening(self, actor: Actor, now_ms: int, *, opens: bool) -> None:
        """Raise :class:`SessionError` when ``actor`` may not sign the opening now, or, when the
        signature ``opens`` the session, when it may not open now."""
        refusals = [check(actor, now_ms) for check in self.signer_checks]
        if opens:
            refusals += [check(now_ms) for check in self.opening_checks]
        for why in refusals:
            if why is not None:
                raise SessionError(why)

    def replace_ball_set(self, actor: Actor, new_set: str, reason: str) -> Deferred[list[Record]]:
        """Put a new ball set in use; recorded with the reason (R83.1-2)."""

        def decide(now: int) -> list[JournalRecord]:
            if not new_set.strip() or new_set == self.state.ball_set:
                raise SessionError(N_("name the new ball set; it must differ from the one in use"))
            if not reason.strip():
                raise SessionError(N_("say why the ball set is replaced"))
            return [
                BallSetReplaced(old=self.state.ball_set, new=new_set.strip(), games_played=self.state.ball_set_games,
                                reason=reason.strip())
            ]

        return self.core.execute(actor, "replace_ball_set", decide)

    def request_extra_check(
        self, actor: Actor, players: Sequence[str], complaint: str
    ) -> Deferred[list[Record]]:
        """Ten or more players ask for an extra check of the balls (R84.3)."""

        def decide(now: int) -> list[JournalRecord]:
            self.require_open()
            names = _names(list(players), "player")
            if len(set(names)) < EXTRA_CHECK_PLAYERS:
                raise SessionError(N_("an extra check needs at least {least} different players; {signed} signed"),
                                   least=EXTRA_CHECK_PLAYERS, signed=len(set(names)))
            if not complaint.strip():
                raise SessionError(N_("the players' complaint must give its reasons (R84.3)"))
            return [ExtraCheckRequested(players=names, complaint=complaint.strip())]

        return self.core.execute(actor, "request_extra_check", decide)

    # --- Projection -----------------------------------------------------------------

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.state = SessionState()

    def apply(self, record: Record) -> None:
        event = declared(record)
        state = self.state
        match event:
            case SystemVerified():
                if event.session is None:  # a verification before a session: the next one opens on it
                    state.last_verification = {**record.payload, "seq": record.seq}
                if event.passed:  # every check passed: sales may go on after a restart from a crash (R95.1)
                    state.restart = None
                    if self.crash_after_seq is not None and record.seq > self.crash_after_seq:
                        self.crash_after_seq = None
            case RestartedAfterCrash():
                state.restart = record.seq
            case BallsCounted():
                count = BallCount(event.stage, event.missing, event.repeated, event.witnesses, record.seq)
                if event.stage == "opening" and state.current is None:
                    assert state.last_verification is not None
                    state.sessions.append(
                        Session(
                            number=len(state.sessions) + 1,
                            date=state.last_verification["date"],
                            verification_seq=state.last_verification["seq"],
                        )
                    )
                session = state.current
                assert session is not None
                session.counts.append(count)
            case SessionOpeningSigned():
                assert state.current is not None
                state.current.opening_signatures[event.role] = event.signer
            case SessionOpened():
                assert state.current is not None
                state.current.open = True
                state.last_verification = None  # the next session needs its own
            case SessionClosingSigned():
                assert state.current is not None
                state.current.closing_signatures[event.role] = event.signer
            case SessionClosed():
                assert state.current is not None
                state.current.closed = True
            case BallSetReplaced():
                state.ball_set_history.append({**record.payload, "seq": record.seq})
                state.ball_set = event.new
                state.ball_set_games = 0
            case ExtraCheckRequested():
                state.extra_checks.append({**record.payload, "seq": record.seq})
            case GameClosed() | GameFinished() | GameRefunded():
                # Every game played wears the balls, whatever its end.
                state.ball_set_games += 1
                if state.current is not None:
                    state.current.games += 1

    def ball_set_warning(self) -> str | None:
        games = self.state.ball_set_games
        if games >= BALL_SET_LIMIT:
            return f"ball set {self.state.ball_set} has reached {BALL_SET_LIMIT} games: replace it (R83.2)"
        if games >= BALL_SET_WARNING:
            return (
                f"ball set {self.state.ball_set} has played {games} games; it must be replaced at "
                f"{BALL_SET_LIMIT} (R83.2)"
            )
        return None
