"""Responsible play (R97.2): daily spending limits and self-exclusion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol.records.base import JournalRecord, optional, personal, record


@record
@dataclass(frozen=True, kw_only=True)
class SpendingLimitSet(JournalRecord):
    """Account ``account``'s daily spending limit is ``limit_cents`` (``null``: no limit) from the day ``effective``.

    A lower (or first) limit applies at once; a higher one, or none, from the next day.
    ``terminal`` is where the player set it, absent when it was set at the cashier's desk.
    """

    type: ClassVar[str] = "spending_limit_set"
    account: str
    limit_cents: int | None
    effective: str
    terminal: str | None = optional()


@record
@dataclass(frozen=True, kw_only=True)
class SelfExcluded(JournalRecord):
    """The person with identity ``document`` excludes themselves for ``days`` days: they may play
    again from ``until``.  ``account`` and ``terminal`` say where, when it was set at a terminal.
    ``name``, ``document_type`` and ``birth_date`` (YYYY-MM-DD) identify the person as the desk
    read them on the document (at a terminal: the name of the account's visitor); absent in
    journals written before the desk asked for them."""

    type: ClassVar[str] = "self_excluded"
    document: str = personal()
    days: int
    until: str
    account: str | None = optional()
    terminal: str | None = optional()
    name: str | None = personal(None)
    document_type: str | None = optional()
    birth_date: str | None = personal(None)
