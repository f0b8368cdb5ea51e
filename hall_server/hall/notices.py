"""The hall's opening hours: reported to the regulator, in force, enforced (R74.1, R74.2).

``[hall] opening_hours`` in ``hall.toml`` says when the hall is open, in the words
:mod:`hall_server.hall.hours` reads (``"every day 16:00-02:00"``).  At each start, when
it differs from the hours last reported, the hall journals ``opening_hours_notified``:
the change is *requested*, and the regulator reads it through the feed and the
consultation.  The first report is in force at once (the licence's hours).  A change
applies:

* when the regulator approves it: the administrator records the approval when it
  arrives (``record_hours_decision``, ``opening_hours_decided`` with the regulator's
  reference), and the new hours are in force from that moment; or
* the day after three whole working days have passed since the notice without an
  objection (working days: Monday to Friday less Andorra's holidays,
  :func:`hall_server.hall.hours.change_applies_from`).

An objection, recorded the same way when it arrives, withdraws the change: the previous
hours stay in force (and come back, if the objection arrives after the delay ran out).
A new change noticed while one is pending replaces it.

The hours in force are enforced (R74.1): a session opens only inside them
(:meth:`OpeningHoursModule.opening_refusal`, asked by the session module when the
opening's second signature would open it) and a video bingo machine plays only inside
them (:meth:`OpeningHoursModule.play_refusal`).  A hall that reported no hours is not
held to any, and says so in its log at each start.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import date, datetime, tzinfo
from typing import Any

from twisted.internet.defer import Deferred

from hall_server.hall.admission import clean_text, local_date
from hall_server.hall.hours import HoursError, Schedule, change_applies_from, parse_schedule
from hall_server.hall.roles import SYSTEM, Role
from protocol.chain import Record
from protocol.errors import N_, DomainError
from protocol.records import JournalRecord, declared
from protocol.records.notices import OpeningHoursDecided, OpeningHoursNotified
from server_kit.core import Actor, CommandCore, CommandSpec

PERMISSIONS = {
    "notify_opening_hours": {Role.SYSTEM},
    # The regulator's answer reaches the operator's administrator, who records it.
    "record_hours_decision": {Role.ADMINISTRATOR},
}
DECISIONS = ("approved", "objected")
MAX_REFERENCE = 120


class HoursRefused(DomainError):
    """Outside the opening hours in force, or a decision that cannot be recorded; the message says why."""


@dataclass
class OpeningHours:
    """The hours last reported (``hours``), the change's day and the hours it replaces, and the
    regulator's decision on it (None until one is recorded)."""

    hours: str | None = None
    applies_from: str | None = None
    previous: str | None = None
    noticed_seq: int | None = None
    decision: str | None = None
    decision_reference: str | None = None

    @property
    def pending(self) -> bool:
        """Whether the last report is a change the regulator has not yet answered."""
        return self.previous is not None and self.decision is None

    def in_force(self, today: date) -> str | None:
        """The hours in force on ``today``: the previous ones until the change applies, or for good
        once the regulator objected to it."""
        if self.previous is None or self.decision == "approved":
            return self.hours
        if self.decision == "objected":
            return self.previous
        if self.applies_from is not None and today.isoformat() < self.applies_from:
            return self.previous
        return self.hours


def _schedule(text: str | None) -> Schedule | None:
    if text is None:
        return None
    try:
        return parse_schedule(text)
    except HoursError:
        return None  # hours reported in words before they were read (an older journal): nothing to hold to


class OpeningHoursModule:
    """A module of the hall core: the hours reported and in force, folded from the journal."""

    def __init__(self, core: CommandCore, timezone: tzinfo) -> None:
        self.core = core
        self.timezone = timezone
        self.state = OpeningHours()
        core.add_module(self)
        core.allow(PERMISSIONS)
        core.register(CommandSpec(
            "record_hours_decision", self.record_decision, {"decision": str, "reference": str},
            N_("record the regulator's answer to the pending change of the opening hours: approved or objected (R74.2)")))

    # --- The projection -------------------------------------------------------------------

    def apply(self, record: Record) -> None:
        event = declared(record)
        match event:
            case OpeningHoursNotified():
                self.state = OpeningHours(event.hours, event.applies_from, event.previous, record.seq)
            case OpeningHoursDecided():
                self.state.decision = event.decision
                self.state.decision_reference = event.reference

    def reset(self) -> None:
        self.state = OpeningHours()

    def checkpoint(self) -> Any:
        return asdict(self.state)

    def restore(self, data: Any) -> None:
        if not isinstance(data, dict) or sorted(data) != sorted(asdict(OpeningHours())):
            raise TypeError("the opening hours' checkpoint holds other fields")
        self.state = OpeningHours(**data)

    # --- Queries ----------------------------------------------------------------------------

    def local_now(self, now_ms: int) -> datetime:
        """The hall's civil date-time at ``now_ms``, naive (the hours are written in it)."""
        return datetime.fromtimestamp(now_ms / 1000, self.timezone).replace(tzinfo=None)

    def hours_in_force(self, now_ms: int) -> str | None:
        return self.state.in_force(local_date(now_ms, self.timezone))

    def schedule_in_force(self, now_ms: int) -> Schedule | None:
        return _schedule(self.hours_in_force(now_ms))

    def closed_refusal(self, now_ms: int, what: str) -> str | None:
        """Why ``what`` is refused at ``now_ms``, the hall being closed by the hours in force; None when open."""
        schedule = self.schedule_in_force(now_ms)
        if schedule is None:
            return None
        moment = self.local_now(now_ms)
        if schedule.is_open(moment):
            return None
        upcoming = schedule.next_opening(moment)
        when = f"; it opens next at {upcoming.strftime('%Y-%m-%d %H:%M')}" if upcoming is not None else ""
        return (f"{what} refused: the hall is closed at {moment.strftime('%H:%M')} by the opening hours in force, "
                f"{schedule.text!r} (R74.1){when}")

    def opening_refusal(self, now_ms: int) -> str | None:
        """Why a session may not open at ``now_ms`` (R74.1), or None."""
        return self.closed_refusal(now_ms, "opening the session")

    def play_refusal(self, now_ms: int) -> str | None:
        """Why a video bingo machine may not play at ``now_ms`` (R74.1), or None."""
        return self.closed_refusal(now_ms, "playing")

    def counted_since_ms(self, now_ms: int) -> int:
        """When the hall last closed by the hours in force (its people counted out), in ms; with no hours,
        the start of the hall's day (docs/cashier-admission.md, "People present")."""
        moment = self.local_now(now_ms)
        schedule = self.schedule_in_force(now_ms)
        closed = schedule.last_closing(moment) if schedule is not None else None
        start = closed if closed is not None else datetime.combine(moment.date(), datetime.min.time())
        return int(start.replace(tzinfo=self.timezone).timestamp() * 1000)

    def picture(self, now_ms: int) -> dict[str, Any] | None:
        """What the consoles show: the hours reported, in force now, and a pending change."""
        state = self.state
        if state.hours is None:
            return None
        return {"hours": state.hours, "applies_from": state.applies_from, "previous": state.previous,
                "in_force": self.hours_in_force(now_ms), "pending": state.pending, "decision": state.decision,
                "reference": state.decision_reference,
                "open_now": self.closed_refusal(now_ms, "") is None}

    def enforce(self, session: Any | None, videobingo: Any = None) -> None:
        """Hold ``session`` (a :class:`~hall_server.hall.session.SessionModule`) and ``videobingo`` (a
        :class:`~hall_server.hall.videobingo.VideoBingoModule`, if the hall has machines) to the hours in
        force (R74.1)."""
        if session is not None:
            session.opening_checks.append(self.opening_refusal)
        if videobingo is not None:
            videobingo.play_checks.append(self.play_refusal)

    # --- Commands ----------------------------------------------------------------------------

    def notify(self, configured: str | None) -> Deferred[list[Record]] | None:
        """Report ``configured`` when it is not what was reported last; None when nothing changed."""
        if configured is None or configured == self.state.hours:
            return None
        previous = self.state.in_force(local_date(self.core.now_ms(), self.timezone))

        def decide(now: int) -> list[JournalRecord]:
            today = local_date(now, self.timezone)
            applies = today if previous is None else change_applies_from(today)
            return [OpeningHoursNotified(hours=configured, applies_from=applies.isoformat(), previous=previous)]

        return self.core.execute(SYSTEM, "notify_opening_hours", decide)

    def record_decision(self, actor: Actor, decision: str, reference: str) -> Deferred[list[Record]]:
        """Record the regulator's approval of or objection to the change last noticed (R74.2)."""

        def decide(now: int) -> list[JournalRecord]:
            state = self.state
            if decision not in DECISIONS:
                # The answers (DECISIONS) are words of the sentence: the console offers them in its language.
                raise HoursRefused(N_("the regulator's answer is approved or objected, not {decision!r}"),
                                   decision=decision)
            said = clean_text(reference, "reference of the regulator's letter", MAX_REFERENCE)
            if state.hours is None or state.previous is None:
                raise HoursRefused(N_("no change of the opening hours awaits the regulator's answer: the hours "
                                      "first reported are in force at once"))
            if state.decision is not None:
                recorded = {  # the recorded answer is a word of the sentence, said in the reader's language
                    "approved": N_("the regulator's answer to the change to {hours!r} is recorded already: "
                                   "approved ({reference})"),
                    "objected": N_("the regulator's answer to the change to {hours!r} is recorded already: "
                                   "objected ({reference})"),
                }
                raise HoursRefused(recorded[state.decision], hours=state.hours, reference=state.decision_reference)
            assert state.noticed_seq is not None  # folded with the hours it noticed
            return [OpeningHoursDecided(hours=state.hours, notice=state.noticed_seq, decision=decision, reference=said)]

        return self.core.execute(actor, "record_hours_decision", decide)
