"""What a game leaves unpaid and where it goes (R88.5, R89).

* The cents a line or bingo split leaves go to the same prize of the next game
  (R88.5): :func:`carry_forward`.
* The superbingo fund goes to the bingo of the session's last game (R89): whatever
  stands in it when that game did not pay it out by its own superbingo, whether the
  session's superbingo games were not won or none was played - the fund never outlives
  the session (:func:`superbingo_fund_to_last_game`).  Under the first ruling
  (``bingo-replay/1`` files) it went there only when the session's latest superbingo
  game was not won (:func:`superbingo_goes_to_last_game`).
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


def superbingo_fund_to_last_game(last_game: bool, superbingo_won_here: bool | None, fund: int) -> bool:
    """Whether the bingo of this game takes the superbingo ``fund`` as ``superbingo_last_game`` (R89).

    The session's last game takes whatever the fund holds, unless its own superbingo was
    won (``superbingo_won_here``: None when none was in play): the cents that split left
    stay in the fund, as every split's remainder does (R88.4-5).
    """
    return last_game and superbingo_won_here is not True and fund > 0


def superbingo_goes_to_last_game(last_game: bool, last_superbingo_won: bool | None) -> bool:
    """Whether the bingo of this game takes the superbingo fund under the first ruling (``bingo-replay/1``).

    ``last_superbingo_won`` is the outcome of the session's latest superbingo game up
    to and including this one (None: no superbingo was in play in the session).
    """
    return last_game and last_superbingo_won is False
