"""Verifying a player's claim on a paper card (R85.6, R85.11, R87).

When a player calls "Line!" or "Bingo!" the staff read out the card's series and
number; :func:`check_claim` looks the card up among those sold in this game (passed in
as data: the layouts live with the card set), replays the balls drawn so far, and says
which patterns the card wins and on which ball it completed each, or why it wins
nothing.

The winning ball of a pattern is fixed by the first card found winning it: a card wins
a pattern not yet won on the ball it completed it, and a pattern already won only if
it completed it on that same ball and the prize is still open (the caller asks "another
card?", R85.6), which is how cards of one ball share (R87 and its ruling).  A card
claimed once the prize is closed does not share, nor does one that completed it on an
earlier ball but was not claimed before that prize, nor one that completed it on a
later ball, nor a card the table chief refused as invalid (R82.8).

Single cards are checked in plain Python; the vectorised detection over all cards in
play is :mod:`protocol.wins`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from protocol.cards import Card
from protocol.patterns import TRADITIONAL_PATTERNS, GamePatterns, completion_ball


@dataclass(frozen=True, order=True)
class CardRef:
    """A card of a game: its series and its number in the series."""

    series: int
    number: int

    @property
    def label(self) -> str:
        """How staff read it out, and how ledger references name it: ``series-number``."""
        return f"{self.series}-{self.number}"

    def __str__(self) -> str:
        return self.label


@dataclass(frozen=True)
class WonPattern:
    """A pattern already won in the game: its winning ball and the cards sharing it.

    ``closed``: the prize is closed (R85.6) and no other card may share it.
    """

    ball_count: int
    cards: frozenset[CardRef]
    closed: bool = False


@dataclass(frozen=True)
class Win:
    """A pattern a card wins, and the 1-based ball count on which it completed it."""

    pattern: str
    ball_count: int


@dataclass(frozen=True)
class ClaimVerdict:
    """The answer to a claim: the patterns won, or the reason it wins nothing.

    ``checked_at`` is how many balls had been drawn when the card was checked: a
    verdict is only good until the next ball.
    """

    card: CardRef
    checked_at: int
    wins: tuple[Win, ...]
    reason: str | None = None

    @property
    def valid(self) -> bool:
        return bool(self.wins)


def check_claim(
    card: CardRef,
    sold: Mapping[CardRef, Card],
    drawn: Sequence[int],
    won: Mapping[str, WonPattern],
    patterns: GamePatterns = TRADITIONAL_PATTERNS,
    refused: Mapping[CardRef, str] | None = None,
) -> ClaimVerdict:
    """Verify the claim on ``card`` against the balls ``drawn`` so far.

    ``sold`` maps every card in play in this game to its layout; ``won`` holds the
    patterns already won; ``refused`` the cards refused as invalid, with the reason
    (R82.8).  Every pattern of ``patterns`` is checked, so a card that completes the
    line and the bingo on one ball wins both.
    """
    layout = sold.get(card)
    if layout is None:
        return ClaimVerdict(card, len(drawn), (), f"card {card} was not sold in this game")
    if refused and card in refused:
        return ClaimVerdict(card, len(drawn), (), f"card {card} was refused as invalid: {refused[card]}")
    wins: list[Win] = []
    reasons: list[str] = []  # for completed but losing patterns, in pattern order
    for pattern in patterns.patterns:
        completed = completion_ball(pattern, layout, drawn)
        if completed is None:
            continue
        name = pattern.name.replace("_", " ")
        earlier = won.get(pattern.name)
        if earlier is None:
            wins.append(Win(pattern.name, completed))
        elif card in earlier.cards:
            reasons.append(f"card {card} has already won the {name}")
        elif completed == earlier.ball_count and earlier.closed:
            reasons.append(
                f"the {name} of ball {earlier.ball_count} is closed; card {card} was not claimed before it closed"
            )
        elif completed == earlier.ball_count:
            wins.append(Win(pattern.name, completed))
        elif completed > earlier.ball_count:
            reasons.append(
                f"the {name} was won on ball {earlier.ball_count}; card {card} completed it "
                f"only on ball {completed}"
            )
        else:
            reasons.append(
                f"card {card} completed the {name} on ball {completed} but was not claimed "
                f"before the {name} was won on ball {earlier.ball_count}"
            )
    if wins:
        return ClaimVerdict(card, len(drawn), tuple(wins))
    if reasons:
        # The furthest pattern the card reached is what the player was claiming.
        return ClaimVerdict(card, len(drawn), (), reasons[-1])
    first = patterns.patterns[0].name.replace("_", " ")
    return ClaimVerdict(card, len(drawn), (), f"card {card} has not completed a {first}")
