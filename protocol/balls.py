"""Where balls come from: one small port, the software generator and a fake (R92.10).

:class:`BallSource` is the port the game layers draw through.  Two sources implement
it here:

* :class:`RandomBallGenerator` - the random ball generator of the game system (R92.10).
  It draws without replacement from the operating system's CSPRNG through
  :func:`secrets.randbelow`, which is unbiased (it rejects out-of-range bits rather
  than reducing them modulo the pool size).  It has no seed and keeps no random state
  of its own, so nothing stored can predict it.  It does know the balls already drawn:
  after a restart it is built from the journal's drawn list and carries on with the
  balls left in the chamber.
* :class:`FakeBallSource` - scripted balls for tests of the layers above.

The blower is not a source of this kind: its balls arrive from the board and are fed
to the game as ``ball_drawn`` inputs by the hall server.

A drawn ball never returns to the draw (R85.5).  A ball read by a machine or a person
may be misread: the two chiefs then correct the announced number to the ball physically
drawn, and the source learns it with :meth:`BallSource.correct` - the misread number
was never drawn and stays in the chamber.  Only a source whose balls are read
(``reads_balls``, the blower) takes a correction: the software generator's ball is what
it is.  (:func:`check_recall` reads the ball recalls of journals written before.)
"""

from __future__ import annotations

import secrets
from typing import Iterable, Protocol, Sequence, runtime_checkable

from protocol.cards import BALLS
from protocol.errors import DomainError


class BallError(DomainError):
    """A ball that cannot be drawn, recalled or put back; the message says why."""


#: The staff roles (R80) who voided a ball in journals written before the ruling of R85.5.
RECALL_ROLES = frozenset({"room_chief", "table_chief"})


@runtime_checkable
class BallSource(Protocol):
    """Anything that hands out the balls of one game, each at most once."""

    #: Whether its balls are read (a machine's reader, a caller) and may be misread (R85.5).
    reads_balls: bool

    @property
    def drawn(self) -> tuple[int, ...]:
        """The balls handed out so far, in order, as corrected."""
        ...

    def draw(self) -> int:
        """The next ball; :class:`BallError` when none is left."""
        ...

    def correct(self, misread: int, ball: int) -> None:
        """The last ball handed out, given as ``misread``, is ``ball`` (R85.5); ``misread`` was never drawn."""
        ...


def check_balls(balls: Iterable[int]) -> tuple[int, ...]:
    """``balls`` as a tuple, or :class:`BallError` naming the first one out of range or repeated."""
    seen: set[int] = set()
    result = []
    for position, ball in enumerate(balls, start=1):
        if isinstance(ball, bool) or not isinstance(ball, int) or not 1 <= ball <= BALLS:
            raise BallError(f"ball {position} is {ball!r}, not a number from 1 to {BALLS}")
        if ball in seen:
            raise BallError(f"ball {position} is {ball}, which was already drawn")
        seen.add(ball)
        result.append(ball)
    return tuple(result)


def check_recall(drawn: Sequence[int], ball: int, role: str, reason: str) -> None:
    """Raise :class:`BallError` unless ``role`` could void ``ball`` for ``reason`` (an older journal's recall).

    Only the last ball drawn can be voided: every later ball's count, and every claim
    checked against it, would otherwise change under the players' feet.
    """
    if role not in RECALL_ROLES:
        allowed = " or ".join(sorted(r.replace("_", " ") for r in RECALL_ROLES))
        raise BallError(f"only the {allowed} may void a ball, not the {role.replace('_', ' ')}")
    if not reason.strip():
        raise BallError("say why the ball is voided; the reason goes into the record")
    if not drawn:
        raise BallError("no ball has been drawn; there is nothing to void")
    if ball != drawn[-1]:
        if ball in drawn:
            raise BallError(f"only the last ball ({drawn[-1]}) can be voided, not {ball}")
        raise BallError(f"{ball} has not been drawn in this game")


class RandomBallGenerator:
    """The software random ball generator (R92.10); implements :class:`BallSource`.

    ``drawn`` is the journal's list of balls already drawn in this game (empty for a
    new game).  Each draw picks uniformly among the balls left.  Its ball is what it
    is: nobody reads it, so nothing is corrected (R85.5).
    """

    reads_balls = False

    def __init__(self, drawn: Iterable[int] = ()) -> None:
        self._drawn = list(check_balls(drawn))
        taken = set(self._drawn)
        self._pool = [ball for ball in range(1, BALLS + 1) if ball not in taken]

    @property
    def drawn(self) -> tuple[int, ...]:
        return tuple(self._drawn)

    @property
    def remaining(self) -> tuple[int, ...]:
        """The balls still in the chamber, ascending."""
        return tuple(sorted(self._pool))

    def draw(self) -> int:
        if not self._pool:
            raise BallError(f"all {BALLS} balls have been drawn")
        # randbelow(n) is exactly uniform on 0..n-1: no modulo bias.
        ball = self._pool.pop(secrets.randbelow(len(self._pool)))
        self._drawn.append(ball)
        return ball

    def correct(self, misread: int, ball: int) -> None:
        raise BallError("the software generator's ball is what it is: no ball it draws is corrected (R85.5)")


def _corrected(drawn: list[int], misread: int, ball: int) -> None:
    """Replace the last of ``drawn``, ``misread``, by ``ball``."""
    if not drawn or drawn[-1] != misread:
        raise BallError(f"only the last ball drawn can be corrected, not {misread}")
    if ball in drawn or not 1 <= ball <= BALLS:
        raise BallError(f"{ball} cannot replace {misread}: it is drawn already or not a ball")
    drawn[-1] = ball


class FakeBallSource:
    """Scripted balls for tests; implements :class:`BallSource`.

    Draws ``script`` in order, skipping a ball already drawn (a correction may have
    drawn it).  With ``reads_balls`` it stands for a machine whose balls are read, and
    takes corrections.
    """

    def __init__(self, script: Iterable[int], reads_balls: bool = False) -> None:
        self.reads_balls = reads_balls
        self._script = list(script)
        for ball in self._script:
            if isinstance(ball, bool) or not isinstance(ball, int) or not 1 <= ball <= BALLS:
                raise BallError(f"scripted ball {ball!r} is not a number from 1 to {BALLS}")
        self._next = 0
        self._drawn: list[int] = []

    @property
    def drawn(self) -> tuple[int, ...]:
        return tuple(self._drawn)

    def draw(self) -> int:
        while self._next < len(self._script) and self._script[self._next] in self._drawn:
            self._next += 1
        if self._next == len(self._script):
            raise BallError("the scripted balls are used up")
        ball = self._script[self._next]
        self._next += 1
        self._drawn.append(ball)
        return ball

    def correct(self, misread: int, ball: int) -> None:
        if not self.reads_balls:
            raise BallError("these balls are not read: none is corrected")
        _corrected(self._drawn, misread, ball)
