"""What a game leaves unpaid and where it goes (R88.5, R89).

* The cents a line or bingo split leaves go to the same prize of the next game
  (R88.5): :func:`carry_forward`.
* A superbingo fund that the session's last superbingo game did not win goes to the
  bingo of the session's last game (R89): :func:`superbingo_goes_to_last_game`.
"""

from __future__ import annotations

from protocol.settlement.pots import Pots
from protocol.settlement.split import Split


def carry_forward(pots: Pots, line: Split, bingo: Split) -> Pots:
    """The levels once a game's line and bingo are paid: their splits' carries wait for the next game."""
    return pots.replace(carry_line=line.carry, carry_bingo=bingo.carry)


def superbingo_won(limit: int | None, bingo_ball: int) -> bool | None:
    """Whether a game's superbingo was won: by a bingo within ``limit`` balls; None when not in play (R89)."""
    return None if limit is None else bingo_ball <= limit


def superbingo_goes_to_last_game(last_game: bool, last_superbingo_won: bool | None) -> bool:
    """Whether the bingo of this game takes the superbingo fund as ``superbingo_last_game`` (R89).

    ``last_superbingo_won`` is the outcome of the session's latest superbingo game up
    to and including this one (None: no superbingo was in play in the session).
    """
    return last_game and last_superbingo_won is False
