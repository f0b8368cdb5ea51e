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

Ball recall: a ball entered by mistake can be voided by an authorised person with a
reason (:func:`check_recall` decides; the game machine emits ``BallVoided``); the
source then takes it back with :meth:`BallSource.put_back`, so the generator may draw
it again.
"""

from __future__ import annotations

import secrets
from typing import Iterable, Protocol, Sequence, runtime_checkable

from protocol.cards import BALLS
from protocol.errors import DomainError


class BallError(DomainError):
    """A ball that cannot be drawn, recalled or put back; the message says why."""


#: The staff roles (R80) who may void a wrongly entered ball.
RECALL_ROLES = frozenset({"room_chief", "table_chief"})


@runtime_checkable
class BallSource(Protocol):
    """Anything that hands out the balls of one game, each at most once."""

    @property
    def drawn(self) -> tuple[int, ...]:
        """The balls handed out so far, in order, without the ones put back."""
        ...

    def draw(self) -> int:
        """The next ball; :class:`BallError` when none is left."""
        ...

    def put_back(self, ball: int) -> None:
        """Take back the last ball handed out, voided by a ball recall."""
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
    """Raise :class:`BallError` unless ``role`` may void ``ball`` for ``reason`` now.

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
    new game).  Each draw picks uniformly among the balls left.
    """

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

    def put_back(self, ball: int) -> None:
        if not self._drawn or self._drawn[-1] != ball:
            raise BallError(f"only the last ball drawn can be put back, not {ball}")
        self._pool.append(self._drawn.pop())


class FakeBallSource:
    """Scripted balls for tests; implements :class:`BallSource`.

    Draws ``script`` in order.  A ball put back leaves the drawn list and the script
    goes on, so a test scripts the corrected ball next; the voided ball may come again
    later in the script, as it may from the chamber.
    """

    def __init__(self, script: Iterable[int]) -> None:
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
        if self._next == len(self._script):
            raise BallError("the scripted balls are used up")
        ball = self._script[self._next]
        if ball in self._drawn:
            raise BallError(f"scripted ball {ball} is already drawn")
        self._next += 1
        self._drawn.append(ball)
        return ball

    def put_back(self, ball: int) -> None:
        if not self._drawn or self._drawn[-1] != ball:
            raise BallError(f"only the last ball drawn can be put back, not {ball}")
        self._drawn.pop()
