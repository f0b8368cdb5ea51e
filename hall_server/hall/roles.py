"""The hall's staff roles (R80) and the hall server's own actor.

The command loop (:mod:`server_kit.core`) knows roles only as strings; these are the
hall's, with the permission table each module gives the core.
"""

from __future__ import annotations

from enum import StrEnum

from server_kit.actors import Actor


class Role(StrEnum):
    """Staff roles of R80, plus the administrator who signs sessions (R77.1)."""

    ADMISSION = "admission"
    SELLER_CALLER = "seller_caller"
    CASHIER = "cashier"
    TABLE_CHIEF = "table_chief"
    ROOM_CHIEF = "room_chief"
    ADMINISTRATOR = "administrator"
    SYSTEM = "system"  # the server itself: ball source faults, timers


#: The roles a staff member may hold (``[[staff]] role``, ``bingo hall add-staff``).
STAFF_ROLES = tuple(role for role in Role if role is not Role.SYSTEM)

SYSTEM = Actor("hall-server", Role.SYSTEM)
