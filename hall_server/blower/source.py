"""The blower as the hall game's ball source, behind the same port as the software
generator (``protocol.balls.BallSource``), except that ``draw()`` gives a Deferred.

The games module asks a source for the next ball, then commits its ``ball_drawn``;
only the committed ball is shown.  A source is built from the journal's balls of the
game (``BlowerBallSource(blowers, game_id, drawn)``), and on each draw it first puts
the blower in step with them:

- a blower on another game (a new game, a count since, a restart) is told the game:
  ``start_game`` for a game with no ball yet, else ``resume_game`` and a SYNC;
- a blower one ball ahead of the journal presented a ball the hall never committed
  (the decision was refused, or the server stopped): nobody saw it, and it is the
  ball of this draw - the blower answers draw n with the same ball (idempotent DRAW);
- a blower out of step otherwise, or after a misread ball was corrected (R85.5), is
  forced back to the journal's balls ("draw n, last ball k"): the ball on its rack is the
  corrected number, and the misread number, never drawn, is still in its chamber.

Driver errors reach the game as ``protocol.balls.BallError`` (a ``DomainError``), so
the caller's console shows the blower's message and nothing is recorded.
"""

from __future__ import annotations

import zlib
from typing import Any, Callable, Protocol, Sequence

from twisted.internet.defer import Deferred, inlineCallbacks

from hall_server.blower.errors import BlowerError
from protocol.balls import BallError, check_balls


class BallBlower(Protocol):
    """What the hall needs of one blower: ``BlowerDriver``, or a ``Fake*`` in tests."""

    name: str
    game: int
    drawn: list[int]

    def start_game(self, game: int) -> Deferred[None]: ...

    def resume_game(self, game: int, drawn: list[int]) -> None: ...

    def resynchronise(self, force: bool = False) -> Deferred[None]: ...

    def draw(self) -> Deferred[int]: ...


def game_code(game_id: str) -> int:
    """The blower's number for a hall game: 32 bits, never 0, the same after a restart.

    Only consecutive games need different numbers (a NEW_GAME for the game the blower
    already has, with no ball drawn, is taken as a repeat); a CRC of the game id does
    that and needs nothing stored.
    """
    return zlib.crc32(game_id.encode("utf-8")) or 1


class BlowerBallSource:
    """The balls of one game from the blower in use; see the module docstring."""

    #: A blower's ball is read by its reader and announced: a misreading is corrected (R85.5).
    reads_balls = True

    def __init__(self, blower_in_use: Callable[[], BallBlower], game_id: str,
                 drawn: Sequence[int] = ()) -> None:
        self.blower_in_use = blower_in_use
        self.game_id = game_id
        self.code = game_code(game_id)
        self._drawn = list(check_balls(drawn))
        self._corrected = False

    @property
    def drawn(self) -> tuple[int, ...]:
        return tuple(self._drawn)

    def draw(self) -> Deferred[int]:
        """The next ball, once the blower in use has read it."""
        return self._draw()

    @inlineCallbacks
    def _draw(self) -> Any:
        blower = self.blower_in_use()
        drawn = list(self._drawn)
        try:
            if blower.game != self.code:
                if drawn:
                    blower.resume_game(self.code, drawn)
                    yield blower.resynchronise(force=True)
                else:
                    yield blower.start_game(self.code)
            elif list(blower.drawn) != drawn:
                one_ahead = (len(blower.drawn) == len(drawn) + 1
                             and list(blower.drawn[:-1]) == drawn)
                blower.resume_game(self.code, drawn)
                if self._corrected or not one_ahead:
                    yield blower.resynchronise(force=True)
                # else: the blower answers this draw with the ball the hall did not commit.
            self._corrected = False
            ball = yield blower.draw()
        except BlowerError as error:
            raise BallError(f"{blower.name} blower: {error}") from error
        self._drawn.append(ball)
        return ball

    def correct(self, misread: int, ball: int) -> None:
        """The last ball, read or announced as ``misread``, is ``ball`` (R85.5): before the next
        draw the blower is told the corrected balls, so it counts ``ball`` as drawn and
        ``misread`` as still in its chamber, where it physically is."""
        if not self._drawn or self._drawn[-1] != misread:
            raise BallError(f"only the last ball drawn can be corrected, not {misread}")
        self._drawn[-1] = ball
        self._corrected = True
