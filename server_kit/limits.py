"""The bounds every server's listening ports keep (docs/security.md, "Connections").

Plain values, apart from :mod:`server_kit.connections` that enforces them, so a command
line can show their defaults without loading Twisted.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

from protocol.errors import DomainError


class LimitsError(DomainError):
    """A connection limit that cannot be used: ``key`` names it, the message says why."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}")
        self.key = key
        self.reason = message


@dataclass(frozen=True)
class ConnectionLimits:
    """The bounds of :class:`ConnectionGuard`; every server's configuration has them (docs/security.md)."""

    #: Seconds from accept to a complete TLS handshake.
    handshake_timeout_s: float = 10.0
    #: Seconds a connection without a client certificate may go without a byte either way.
    idle_timeout_s: float = 120.0
    #: Open connections without a certificate (the handshake under way included) from one address.
    per_address: int = 64
    #: Open connections presenting one certificate.
    per_certificate: int = 16
    #: Descriptors kept free of connections (at most half the process's limit).
    reserved_descriptors: int = 256

    def checked(self) -> "ConnectionLimits":
        """These limits, or :class:`LimitsError` naming the one out of its range."""
        for name in ("handshake_timeout_s", "idle_timeout_s"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 < value <= 86_400:
                raise LimitsError(name, f"is a number of seconds above 0, up to a day (86400); not {value!r}")
        for name in ("per_address", "per_certificate", "reserved_descriptors"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1_000_000:
                raise LimitsError(name, f"is a whole number from 1 to 1000000; not {value!r}")
        return self

    @classmethod
    def from_table(cls, table: Mapping[str, Any]) -> "ConnectionLimits":
        """The limits a configuration's ``[connections]`` table sets (the others at their defaults)."""
        known = [f.name for f in fields(cls)]
        unknown = sorted(set(table) - set(known))
        if unknown:
            raise LimitsError(unknown[0], f"is not a setting here (known: {', '.join(known)})")
        return replace(cls(), **table).checked()
