"""The central domain's one error hierarchy.

Each error has a ``code`` from the protocol's :data:`protocol.central_messages.ERRORS`,
so the AMP edge maps it to a wire code without a table of its own, and a message for
the person who caused it (``str(error)``).  An error changes nothing: it is raised
before any event is applied.  A refused purchase is not an error but a decision
(:class:`~protocol.records.central.CentralPurchaseRefused`), journaled and answered.
"""

from __future__ import annotations

from typing import ClassVar

from protocol.errors import DomainError


class CentralError(DomainError):
    """A command the central server refuses; ``code`` is its wire code."""

    code: ClassVar[str] = "internal_error"


class BadArgument(CentralError):
    """A value missing, of the wrong type or out of range."""

    code = "bad_argument"


class ConfigError(CentralError):
    """A network game configuration that breaks a rule; the message names the field."""

    code = "bad_config"

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field


class VersionUnsupported(CentralError):
    """A hall that speaks no protocol version the central server speaks."""

    code = "version_unsupported"


class ClockOff(CentralError):
    """A hall whose clock is too far from the central server's to keep the sale's deadline (version 3)."""

    code = "clock_off"


class UnknownHall(CentralError):
    """A hall that is not a member of the network game."""

    code = "unknown_hall"


class HallMismatch(CentralError):
    """A hall speaking for another hall or for another hall's terminal."""

    code = "hall_mismatch"


class RequestIdReused(CentralError):
    """A request id already used for a request with other arguments."""

    code = "request_id_reused"


class TerminalAlreadyFailed(CentralError):
    """A terminal declared failed a second time in one game (R96.3: refunded once)."""

    code = "terminal_already_failed"


class NotNow(CentralError):
    """A command the game's phase does not accept ("cannot draw a ball while the sale is open")."""

    code = "not_now"


class DrawStarted(NotNow):
    """A terminal's failure declared once a ball of the game was known: nothing is refunded (R96.3 ruling)."""


class EventError(CentralError):
    """A journal record that does not fit the network game it names (its order, its game, its series)."""

    code = "internal_error"


__all__ = [
    "BadArgument",
    "CentralError",
    "ConfigError",
    "DrawStarted",
    "EventError",
    "HallMismatch",
    "NotNow",
    "RequestIdReused",
    "TerminalAlreadyFailed",
    "UnknownHall",
    "VersionUnsupported",
]
