"""The draw and the game's course: balls, suspensions, the end (R85, R86, R93.15)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from protocol import events
from protocol.records.base import JournalRecord, record
from protocol.records.events import EventRecord


@record
@dataclass(frozen=True, kw_only=True)
class LastGameAnnounced(JournalRecord):
    """Game ``game_id`` is announced as the last of ``session`` (R93.15)."""

    type: ClassVar[str] = "last_game_announced"
    game_id: str
    session: int


@record
@dataclass(frozen=True, kw_only=True)
class BallDrawn(EventRecord, events.BallDrawn):
    """A ball drawn or entered by hand (:class:`protocol.events.BallDrawn`, R85.5).

    ``completed_line`` and ``completed_bingo`` are the cards (``series-number``) this
    ball completed a row or the whole card of, for the boards and consoles (R92.11); a
    card refused as invalid (R82.8) or refunded with a failed terminal (R96.3) is not named.
    """

    completed_line: tuple[str, ...] = ()
    completed_bingo: tuple[str, ...] = ()


@record
@dataclass(frozen=True, kw_only=True)
class BallVoided(EventRecord, events.BallVoided):
    """The last ball was voided, with the reason (:class:`protocol.events.BallVoided`): journals written
    before a drawn ball stopped going back to the draw (R85.5) hold it; nothing writes it any more."""


@record
@dataclass(frozen=True, kw_only=True)
class BallCorrectionSigned(JournalRecord):
    """The room chief or the table chief (``role``) signs the correction of the last ball (R85.5).

    Ball ``ball_count`` was announced as ``misread``; the ball physically drawn reads
    ``corrected``.  The other chief's signature of the same correction completes it
    (``ball_corrected``); until then nothing is drawn.
    """

    type: ClassVar[str] = "ball_correction_signed"
    game_id: str
    ball_count: int
    misread: int
    corrected: int
    reason: str
    signer: str
    role: str


@record
@dataclass(frozen=True, kw_only=True)
class BallCorrectionCancelled(JournalRecord):
    """A correction signed by one chief only is withdrawn by ``by`` (``role``): the announced ball stands."""

    type: ClassVar[str] = "ball_correction_cancelled"
    game_id: str
    ball_count: int
    misread: int
    corrected: int
    by: str
    role: str


@record
@dataclass(frozen=True, kw_only=True)
class BallCorrected(EventRecord, events.BallCorrected):
    """A misread ball corrected by both chiefs (:class:`protocol.events.BallCorrected`, R85.5).

    ``completed_line`` and ``completed_bingo`` are the cards the corrected ball completes,
    as a ``ball_drawn`` record names them.
    """

    completed_line: tuple[str, ...] = ()
    completed_bingo: tuple[str, ...] = ()


@record
@dataclass(frozen=True, kw_only=True)
class GameSuspended(EventRecord, events.GameSuspended):
    """The game is suspended on a failure (:class:`protocol.events.GameSuspended`, R86.1)."""


@record
@dataclass(frozen=True, kw_only=True)
class GameResumed(EventRecord, events.GameResumed):
    """The suspended game goes on (:class:`protocol.events.GameResumed`)."""


@record
@dataclass(frozen=True, kw_only=True)
class GameSuspendedForGood(EventRecord, events.GameSuspendedForGood):
    """The failure was not resolved in time (:class:`protocol.events.GameSuspendedForGood`, R86.2)."""


@record
@dataclass(frozen=True, kw_only=True)
class GameRefunded(EventRecord, events.GameRefunded):
    """No prize was won before the game was given up: every stake is returned (R86.1)."""


@record
@dataclass(frozen=True, kw_only=True)
class ManualFinishStarted(EventRecord, events.ManualFinishStarted):
    """A prize was already won: the game is finished by hand (:class:`protocol.events.ManualFinishStarted`, R86.2)."""


@record
@dataclass(frozen=True, kw_only=True)
class GameClosed(EventRecord, events.GameClosed):
    """The game ended normally (:class:`protocol.events.GameClosed`).

    ``house_cents`` is the house's share and ``tax_cents`` the tax on ``tax_base_cents``
    of sales (R98), both posted with it.
    """

    house_cents: int
    tax_cents: int
    tax_base_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class GameFinished(EventRecord, events.GameFinished):
    """A game finished by hand ended (:class:`protocol.events.GameFinished`); the settlement as for ``game_closed``."""

    house_cents: int
    tax_cents: int
    tax_base_cents: int


@record
@dataclass(frozen=True, kw_only=True)
class CardsCollected(JournalRecord):
    """The game's ``cards`` paper cards are collected: the next sale may open (R82.4)."""

    type: ClassVar[str] = "cards_collected"
    game_id: str
    cards: int
