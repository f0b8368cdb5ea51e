"""Who gives a command to a server's command loop (:mod:`server_kit.core`).

Apart from the loop, which brings the reactor: what names a server's roles and its own
actor (``hall_server/hall/roles.py``) is imported by the ``bingo`` command's declarations
(``bingo hall add-staff NAME ROLE``), whose ``--help`` loads no framework.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Actor:
    """Who gives a command; ``request`` is the id of the request it came with, if any."""

    name: str
    role: str
    request: str | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, str]:
        stamp = {"name": self.name, "role": str(self.role)}
        if self.request is not None:
            stamp["request"] = self.request
        return stamp
