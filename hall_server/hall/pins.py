"""Players' PINs on the terminals: one answer for every refusal, and a lockout per account.

A player signs in on a terminal with the account number and the PIN
(``hall_server/terminal_gateway/gateway.py``).  A PIN of four digits falls to a few
thousand tries, so :class:`PinGuard` stands between the terminal and the check:

* **lockout with back-off**: :data:`PIN_TRIES` wrong PINs in a row lock the account's
  PIN for :data:`FIRST_LOCK_S` seconds, twice as long at each further lockout since
  the last good sign-in, at most :data:`LONGEST_LOCK_S`.  While it is locked no PIN is
  checked, the right one neither; tries that are still being checked count, so a burst
  sent at once gets no more tries than one sent one by one.  Time is the core's
  (injected) clock.
* **one answer** (:data:`SIGN_IN_REFUSED`) for an unknown account, a closed one, a
  wrong PIN and a locked account, so a terminal cannot learn which accounts exist;
  the server's check of an unknown account costs the same scrypt as a real one
  (:func:`pin_matches_or_none`).
* **an alert the cashier sees**: each lockout is journaled (``pin_lockout``: account,
  terminal, wrong PINs, lockouts, how long, until when), so it is in the console's
  records; the first good sign-in after a lockout journals ``pin_lockout_cleared``, and
  the cashier may clear a lockout for a player at the desk (``clear_pin_lockout``).
  The lockouts are folded from the journal, so a restart keeps them.  No record and no
  log line holds a PIN, a PIN's hash or a PIN tried.

The wrong PINs counted since the last lockout are kept in memory only: a restart gives
back at most :data:`PIN_TRIES` - 1 tries, which the lockout then stops.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable

from twisted.internet.defer import Deferred, fail, maybeDeferred
from twisted.logger import Logger
from twisted.python.failure import Failure

from hall_server.hall.cashier import CashierModule, hash_pin, normalize_account_number, pin_matches
from hall_server.hall.roles import SYSTEM, Role
from hall_server.statements import format_account_number
from protocol.chain import Record
from protocol.errors import N_, DomainError
from protocol.records import JournalRecord, declared
from protocol.records.cashier import PinLockout, PinLockoutCleared
from server_kit.core import Actor, CommandCore, CommandSpec

log = Logger()
PIN_TRIES = 5
FIRST_LOCK_S = 60
LONGEST_LOCK_S = 24 * 3600
#: What a terminal is told of every refused sign-in, whatever the reason.
SIGN_IN_REFUSED = (
    "the account number or the PIN is wrong, or the account is locked after too many wrong PINs; "
    "try again later or ask the cashier"
)

PERMISSIONS = {
    "record_pin_lockout": {Role.SYSTEM},
    "clear_pin_lockout": {Role.CASHIER, Role.SYSTEM},
}


class SignInRefused(DomainError):
    """A terminal sign-in refused; the message is always :data:`SIGN_IN_REFUSED`."""

    def __init__(self) -> None:
        super().__init__(SIGN_IN_REFUSED)


class PinGuardError(DomainError):
    """A command about PIN lockouts refused; the message says why."""


@functools.cache
def _stand_in_hash() -> str:
    """A PIN hash no account has, checked in place of an unknown account's."""
    return hash_pin("0000", b"no-such-account!")


def pin_matches_or_none(pin: str, stored: str | None) -> bool:
    """Whether ``pin`` matches ``stored``; for no account (None) the same work, and False."""
    if stored is None:
        pin_matches(pin, _stand_in_hash())
        return False
    return pin_matches(pin, stored)


def lock_seconds(lockouts: int) -> int:
    """How long the ``lockouts``-th lockout in a row lasts: 1 min, 2, 4, ... up to a day."""
    return min(FIRST_LOCK_S * 2 ** min(lockouts - 1, 32), LONGEST_LOCK_S)


@dataclass
class _Account:
    wrong: int = 0  # wrong PINs since the last lockout or good sign-in (memory only)
    checking: int = 0  # tries being checked now
    lockouts: int = 0  # lockouts since the last good sign-in (journaled, but for no account)
    locked_until_ms: int = 0


@dataclass
class PinState:
    accounts: dict[str, _Account] = field(default_factory=dict)


#: Runs the PIN check of an account (scrypt, off the reactor thread in the server):
#: ``(account number, PIN) -> Deferred[bool]``, False for an account that does not exist.
CheckPin = Callable[[str, str], "Deferred[bool]"]
#: Accounts tracked at most; past it those with nothing to remember are let go.
MAX_TRACKED = 50_000


class PinGuard:
    """The PIN lockouts of the players' accounts: a module of the hall core."""

    def __init__(self, core: CommandCore, cashier: CashierModule) -> None:
        self.core = core
        self.cashier = cashier
        self.state = PinState()
        core.add_module(self)
        core.allow(PERMISSIONS)
        core.register(CommandSpec(
            "clear_pin_lockout", self.clear, {"account": str},
            N_("let a player who proved who they are at the desk try their PIN again at once"),
        ))

    def locked(self, number: str) -> bool:
        """Whether ``number``'s PIN is locked now."""
        account = self.state.accounts.get(number)
        return account is not None and self.core.now_ms() < account.locked_until_ms

    def sign_in(self, account_text: str, pin: str, terminal: str, check: CheckPin) -> Deferred[str]:
        """Fires with the account number if ``pin`` opens it now, else fails with :class:`SignInRefused`.

        Any other failure of ``check`` (a fault) is passed on and counts as no try.
        """
        try:
            number = normalize_account_number(account_text)
        except DomainError:
            return fail(SignInRefused())
        account = self._of(number)
        if self.locked(number) or account.wrong + account.checking >= PIN_TRIES:
            return fail(SignInRefused())
        account.checking += 1

        def checked(outcome: object) -> str:
            account.checking -= 1
            if isinstance(outcome, Failure):
                if not outcome.check(DomainError):
                    outcome.raiseException()  # a fault, not a wrong PIN
                outcome = False  # the check refused the account itself (unknown, closed)
            if outcome is True:
                self._good(number, account)
                return number
            self._wrong(number, account, terminal)
            raise SignInRefused()

        return maybeDeferred(check, number, pin).addBoth(checked)

    def _of(self, number: str) -> _Account:
        accounts = self.state.accounts
        if number not in accounts and len(accounts) >= MAX_TRACKED:
            now = self.core.now_ms()
            for idle in [k for k, a in accounts.items()
                         if not (a.wrong or a.checking or a.lockouts or a.locked_until_ms > now)]:
                del accounts[idle]
        return accounts.setdefault(number, _Account())

    def _good(self, number: str, account: _Account) -> None:
        account.wrong = 0
        if account.lockouts:
            self._journal(self._clear(SYSTEM, number, "the right PIN was given after the lockout"))

    def _wrong(self, number: str, account: _Account, terminal: str) -> None:
        """A wrong PIN; the :data:`PIN_TRIES`-th in a row locks the PIN."""
        account.wrong += 1
        if account.wrong < PIN_TRIES:
            return
        account.wrong = 0
        account.lockouts += 1
        seconds = lock_seconds(account.lockouts)
        # Locked at once, before the record is committed: tries meanwhile are refused too.
        account.locked_until_ms = self.core.now_ms() + seconds * 1000
        if number not in self.cashier.state.accounts:
            return  # no account to warn about: locked here alike, so the answers do not tell
        lockouts = account.lockouts

        def decide(now: int) -> list[JournalRecord]:
            return [PinLockout(account=number, terminal=terminal[:40], wrong_pins=PIN_TRIES, lockouts=lockouts,
                               locked_for_s=seconds, until_ms=now + seconds * 1000)]

        self._journal(self.core.execute(SYSTEM, "record_pin_lockout", decide))

    @staticmethod
    def _journal(done: Deferred[list[Record]]) -> None:
        done.addErrback(lambda failure: log.failure("journaling a PIN lockout", failure))

    def clear(self, actor: Actor, account: str) -> Deferred[list[Record]]:
        """The cashier's command: a player at the desk may try the PIN again at once."""
        return self._clear(actor, account, "cleared at the cashier's desk")

    def _clear(self, actor: Actor, account: str, why: str) -> Deferred[list[Record]]:
        def decide(now: int) -> list[JournalRecord]:
            number = normalize_account_number(account)
            known = self.state.accounts.get(number)
            if number not in self.cashier.state.accounts or known is None or not known.lockouts:
                raise PinGuardError(N_("the PIN of account {account} is not locked"),
                                    account=format_account_number(number))
            return [PinLockoutCleared(account=number, why=why)]

        return self.core.execute(actor, "clear_pin_lockout", decide)

    # --- Projection -----------------------------------------------------------------

    def reset(self) -> None:
        """Forget what was folded from the journal (the core folds it again)."""
        self.state = PinState()

    def checkpoint(self) -> Any:
        """The journaled lockouts only: wrong PINs and checks under way live in memory and
        are forgotten at a restart, checkpoint or not."""
        return [
            [number, account.lockouts, account.locked_until_ms]
            for number, account in self.state.accounts.items()
            if (account.lockouts or account.locked_until_ms) and number in self.cashier.state.accounts
        ]

    def restore(self, data: Any) -> None:
        accounts = {str(n): _Account(lockouts=int(k), locked_until_ms=int(u)) for n, k, u in data}
        self.state = PinState(accounts)

    def apply(self, record: Record) -> None:
        event = declared(record)
        match event:
            case PinLockout():
                account = self._of(event.account)
                account.lockouts = event.lockouts
                account.locked_until_ms = event.until_ms
            case PinLockoutCleared():
                account = self._of(event.account)
                account.lockouts = 0
                account.locked_until_ms = 0
                account.wrong = 0


__all__ = [
    "FIRST_LOCK_S",
    "LONGEST_LOCK_S",
    "PIN_TRIES",
    "SIGN_IN_REFUSED",
    "CheckPin",
    "PinGuard",
    "PinGuardError",
    "SignInRefused",
    "lock_seconds",
    "pin_matches_or_none",
]
