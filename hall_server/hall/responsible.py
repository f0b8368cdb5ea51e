"""Responsible play (R97.2 and its ruling): a daily spending limit and self-exclusion.

A player may set a **daily spending limit** on the account, at a terminal or at the
cashier's desk.  Lowering it (or setting a first one) takes effect at once; raising it
or removing it takes effect the next day in the hall's calendar, so a limit reached in
the heat of a game cannot be lifted in the same day.  The day's spending is what the
account paid for virtual cards that day (refunds do not give spending back: the limit
is on what the player chose to stake).  A purchase that would pass the limit is
refused whole and the refusal is journaled as every refused terminal request is.

A player may also **exclude themselves** for a number of days, at a terminal or at the
admission or cashier desk.  The exclusion belongs to the person (their identity
document), not to one account: while it lasts the admission desk refuses entry (the
refusal is journaled as ``entry_refused``), the cashier opens no account for them, and
every terminal refuses the sign-in of any of their accounts and their purchases.  Each
refusal at the door and each exclusion is an incident of the day, in the minutes (R75.4).  An
exclusion can be lengthened but never shortened or lifted early: that is its point.

Records: ``spending_limit_set`` (``account``, ``limit_cents`` or ``None`` for no limit,
``effective`` - the day it applies from), ``self_excluded`` (``document``, ``until`` - the
first day the person may play again, ``days``, ``account`` when set from a terminal),
``entry_refused`` (``document``, ``name``, ``reason``, ``ground`` ``self_excluded``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Any

from twisted.internet.defer import Deferred

from hall_server.hall.admission import (
    DOCUMENT_TYPES, MAX_NAME, SELF_EXCLUDED, AdmissionModule, clean_text, normalize_document, person_key,
    read_birth_date,
)
from hall_server.hall.cashier import CashierModule
from hall_server.hall.roles import SYSTEM, Role
from hall_server.hall.virtual import VirtualModule
from protocol.chain import Record
from protocol.errors import N_, DomainError, Refusal, Template
from protocol.money import format_cents
from protocol.records import JournalRecord, declared
from protocol.records.network import NetworkCardsBought
from protocol.records.responsible import SelfExcluded, SpendingLimitSet
from protocol.records.terminals import VirtualCardsBought
from protocol.records.videobingo import VbCreditIn
from server_kit.core import Actor, CommandCore, CommandSpec
from server_kit.journal.projection import ProjectedState

#: The most a daily limit may be, and the longest a self-exclusion may run.
MAX_LIMIT_CENTS = 100_000_00
MAX_EXCLUSION_DAYS = 3650

# The server itself (SYSTEM) records what a signed-in player asks for at a terminal.
PERMISSIONS = {
    # The table chief's only while standing in for the cashier (R80.4, CashierModule.standing_in).
    "set_spending_limit": {Role.CASHIER, Role.TABLE_CHIEF, Role.SYSTEM},
    "record_self_exclusion": {Role.ADMISSION, Role.CASHIER, Role.SYSTEM},
}


class ResponsiblePlayError(DomainError):
    """A limit or exclusion that cannot be set; the message says why.

    ``reason`` and :meth:`figures`: for a refusal a player meets at a kiosk, a stable code and
    its figures, which the kiosk says in the player's language (docs/languages.md)."""

    reason = ""

    def figures(self) -> dict[str, int | str]:
        return {}


class NoVisitorRecord(ResponsiblePlayError):
    """A player's self-exclusion asked at a terminal, for an account with no visitor record."""

    reason = "no_visitor_record"


@dataclass
class Limits:
    """One account's limit decisions, oldest first: ``(effective day, limit or None)``."""

    changes: list[tuple[date, int | None]] = field(default_factory=list)

    def on(self, day: date) -> int | None:
        """The limit that applies on ``day``: the latest decision already in effect."""
        applying = [limit for effective, limit in self.changes if effective <= day]
        return applying[-1] if applying else None

    def next_change(self, day: date) -> tuple[date, int | None] | None:
        """A decision taken but not yet in effect on ``day`` (a raise waiting for tomorrow)."""
        later = [(effective, limit) for effective, limit in self.changes if effective > day]
        return later[-1] if later else None


@dataclass
class ResponsibleState:
    limits: dict[str, Limits] = field(default_factory=dict)  # account number -> its limits
    excluded: dict[str, date] = field(default_factory=dict)  # document -> first day allowed again
    #: (name, birth date) as :func:`person_key` writes them -> first day allowed again: an exclusion
    #: recorded at a desk, which names the person as well as the document.
    excluded_people: dict[tuple[str, str], date] = field(default_factory=dict)
    spent: dict[tuple[str, date], int] = field(default_factory=dict)  # (account, day) -> cents paid


def _whole(value: object, refused: Template, low: int, high: int) -> int:
    """``value`` if it is a whole number from ``low`` to ``high``, else :class:`ResponsiblePlayError` ``refused``
    (a template of ``{low}``, ``{high}`` and ``{value!r}``)."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ResponsiblePlayError(refused, low=low, high=high, value=value)
    return value


class ResponsiblePlayModule(ProjectedState):
    """Limits and exclusions, folded from the journal, and the checks the desks and terminals run."""

    def __init__(
        self, core: CommandCore, cashier: CashierModule, admission: AdmissionModule, virtual: VirtualModule | None
    ) -> None:
        self.core = core
        self.cashier = cashier
        self.admission = admission
        self.state = ResponsibleState()
        self._pruned: date | None = None
        core.add_module(self)
        core.allow(PERMISSIONS)
        admission.door_checks.append((SELF_EXCLUDED, self.exclusion_refusal))
        admission.person_checks.append((SELF_EXCLUDED, self.person_exclusion_refusal))
        if virtual is not None:
            virtual.purchase_checks.append(self.purchase_refusal)
        for name, handler, params, summary in (
            ("set_spending_limit", self.set_limit, {"account": str, "limit_cents": int},
             N_("set a player's daily spending limit (0: no limit); a lower one applies at once, a higher one tomorrow")),
            ("record_self_exclusion", self.exclude_document,
             {"name": str, "document_type": str, "document": str, "birth_date": str, "days": int},
             N_("a player excludes themselves from play for a number of days (R97.2); it cannot be shortened")),
        ):
            core.register(CommandSpec(name, handler, params, summary))

    # --- What the desks and terminals ask ---------------------------------------------

    def today(self, now_ms: int) -> date:
        return self.admission.today(now_ms)

    def document_of(self, account: str) -> str | None:
        known = self.cashier.state.accounts.get(account)
        if known is None:
            return None
        try:
            return self.admission.visitor(known.visitor).document
        except DomainError:
            return None

    def excluded_until(self, document: str, on: date) -> date | None:
        """The first day ``document``'s holder may play again, while an exclusion lasts."""
        until = self.state.excluded.get(normalize_document(document))
        return until if until is not None and on < until else None

    def exclusion_refusal(self, document: str, on: date, where: str) -> str | None:
        """Why ``where`` is refused to ``document`` on ``on`` (a self-exclusion), or None."""
        until = self.excluded_until(document, on)
        if until is None:
            return None
        return (f"{where} refused: this person excluded themselves from play until {until.isoformat()} "
                "(R97.2); it cannot be lifted early")

    def person_exclusion_refusal(self, name: str, born: date, on: date, where: str) -> str | None:
        """Why ``where`` is refused on ``on`` to the person named ``name``, born on ``born``, whatever
        document they show now: one of that name and birth date excluded themselves at a desk (R97.2)."""
        until = self.state.excluded_people.get(person_key(name, born))
        if until is None or not on < until:
            return None
        # The words say neither the birth date nor the other document: the door keeps neither (R75.1-3).
        return (f"{where} refused: a person of this name and birth date excluded themselves from play until "
                f"{until.isoformat()} (R97.2), with another document; it cannot be lifted early")

    def account_refusal(self, account: str, now_ms: int) -> Refusal | None:
        """Why the holder of ``account`` may not play at a terminal now, or None."""
        document = self.document_of(account)
        if document is None:
            return None
        until = self.excluded_until(document, self.today(now_ms))
        if until is None:
            return None
        return Refusal(f"you excluded yourself from play until {until.isoformat()} (R97.2)", "self_excluded",
                       until=until.isoformat())

    def purchase_refusal(self, ledger_account: str, amount_cents: int, now_ms: int) -> Refusal | None:
        """Why a purchase bringing the day's spending ``amount_cents`` beyond the journal's is refused, or None."""
        account = ledger_account.removeprefix("player:")
        excluded = self.account_refusal(account, now_ms)
        if excluded is not None:
            return excluded
        day = self.today(now_ms)
        limits = self.state.limits.get(account)
        limit = limits.on(day) if limits is not None else None
        if limit is None:
            return None
        spent = self.state.spent.get((account, day), 0)
        if spent + amount_cents > limit:
            left = max(0, limit - spent)
            return Refusal(f"your daily limit is {format_cents(limit)}; you have spent {format_cents(spent)} today, "
                           f"so you may spend {format_cents(left)} more (R97.2)", "daily_limit",
                           limit_cents=limit, spent_cents=spent, left_cents=left)
        return None

    def picture(self, account: str, now_ms: int) -> dict[str, Any]:
        """What a terminal shows the signed-in player about their limit."""
        day = self.today(now_ms)
        limits = self.state.limits.get(account, Limits())
        waiting = limits.next_change(day)
        return {
            "daily_limit_cents": limits.on(day),
            "spent_today_cents": self.state.spent.get((account, day), 0),
            "next_limit": None if waiting is None else {"from": waiting[0].isoformat(), "limit_cents": waiting[1]},
        }

    # --- Commands -----------------------------------------------------------------------

    def _limit_set(self, account: str, limit_cents: int, now: int, terminal: str | None = None) -> SpendingLimitSet:
        limit = _whole(limit_cents, N_("the daily limit in cents is a whole number from {low} to {high}, not {value!r}"),
                       0, MAX_LIMIT_CENTS) or None
        day = self.today(now)
        current = self.state.limits.get(account, Limits()).on(day)
        lowering = limit is not None and (current is None or limit <= current)
        effective = day if lowering else day + timedelta(days=1)
        return SpendingLimitSet(account=account, limit_cents=limit, effective=effective.isoformat(), terminal=terminal)

    def set_limit(self, actor: Actor, account: str, limit_cents: int) -> Deferred[list[Record]]:
        """The cashier sets a player's daily limit at the player's request (0: no limit)."""

        def decide(now: int) -> list[JournalRecord]:
            self.cashier.standing_in(actor)
            player = self.cashier.usable_account(account)
            return [self._limit_set(player.number, limit_cents, now)]

        return self.core.execute(actor, "set_spending_limit", decide)

    def set_limit_from_terminal(self, terminal: str, account: str, limit_cents: int) -> Deferred[list[Record]]:
        """The signed-in player sets their own limit at ``terminal``."""

        def decide(now: int) -> list[JournalRecord]:
            return [self._limit_set(account, limit_cents, now, terminal)]

        return self.core.execute(SYSTEM, "set_spending_limit", decide)

    def _exclusion(self, document: str, days: int, now: int, *, name: str, document_type: str | None = None,
                   birth_date: str | None = None, account: str | None = None,
                   terminal: str | None = None) -> SelfExcluded:
        normal = normalize_document(clean_text(document, "identity document", 40))
        length = _whole(days, N_("the number of days is a whole number from {low} to {high}, not {value!r}"),
                        1, MAX_EXCLUSION_DAYS)
        until = self.today(now) + timedelta(days=length)
        current = self.state.excluded.get(normal)
        if current is not None and current >= until:
            raise ResponsiblePlayError(
                N_("this person is already excluded until {until}; an exclusion is never shortened"),
                until=current.isoformat())
        return SelfExcluded(document=normal, days=length, until=until.isoformat(), account=account, terminal=terminal,
                            name=name, document_type=document_type, birth_date=birth_date)

    def exclude_document(
        self, actor: Actor, name: str, document_type: str, document: str, birth_date: str, days: int
    ) -> Deferred[list[Record]]:
        """Admission or the cashier records a player's self-exclusion from the identity document
        shown: the name, the document's kind and number, and the birth date on it, as the
        admission desk identifies a person (R75.1-3); the exclusion keeps them (R97.2)."""

        def decide(now: int) -> list[JournalRecord]:
            person = clean_text(name, "person's name (as on the document)", MAX_NAME)
            if document_type not in DOCUMENT_TYPES:
                # The kinds (DOCUMENT_TYPES) are words of the sentence: the console offers them in its language.
                raise ResponsiblePlayError(
                    N_("the document's kind is one of identity card, passport, residence permit, not {kind!r}"),
                    kind=document_type)
            today = self.today(now)
            born = read_birth_date(birth_date, today)
            return [self._exclusion(document, days, now, name=person, document_type=document_type,
                                    birth_date=born.isoformat())]

        return self.core.execute(actor, "record_self_exclusion", decide)

    def exclude_from_terminal(self, terminal: str, account: str, days: int) -> Deferred[list[Record]]:
        """The signed-in player excludes themselves at ``terminal``."""

        def decide(now: int) -> list[JournalRecord]:
            document = self.document_of(account)
            if document is None:
                raise NoVisitorRecord(N_("this account has no visitor record; ask at the cashier's desk"))
            known = self.cashier.state.accounts[account]  # an account with a document has its visitor
            name = self.admission.visitor(known.visitor).name
            return [self._exclusion(document, days, now, account=account, terminal=terminal, name=name)]

        return self.core.execute(SYSTEM, "record_self_exclusion", decide)

    # --- The projection -----------------------------------------------------------------

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.state, self._pruned = ResponsibleState(), None

    def apply(self, record: Record) -> None:
        event = declared(record)
        match event:
            case SpendingLimitSet():
                changes = self.state.limits.setdefault(event.account, Limits()).changes
                changes.append((date.fromisoformat(event.effective), event.limit_cents))
            case SelfExcluded():
                until = date.fromisoformat(event.until)
                self.state.excluded[event.document] = until
                if event.name and event.birth_date:  # recorded at a desk, from the document shown
                    key = person_key(event.name, date.fromisoformat(event.birth_date))
                    self.state.excluded_people[key] = max(self.state.excluded_people.get(key, until), until)
            case VirtualCardsBought() | NetworkCardsBought():
                # A network purchase counts once captured (its hold, while pending, is counted by the network module).
                self._spend(event.account, record.time_ms, event.amount_cents)
            case VbCreditIn(source="account", account=str(account)):
                # Credit a player takes from the account onto a video bingo machine counts when it is taken.
                self._spend(account, record.time_ms, event.amount)

    def _spend(self, ledger_account: str, time_ms: int, amount_cents: int) -> None:
        """Add a purchase paid from ``ledger_account`` (``player:<number>`` or the number) to its day's spending."""
        account = ledger_account.removeprefix("player:")
        day = self.today(time_ms)
        self.state.spent[(account, day)] = self.state.spent.get((account, day), 0) + amount_cents
        if self._pruned != day:  # only today's totals matter to a daily limit: once a day, drop the rest
            self._pruned = day
            for stale in [key for key in self.state.spent if key[1] < day]:
                del self.state.spent[stale]
