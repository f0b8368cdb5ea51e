"""The one error hierarchy of the video bingo game."""

from protocol.errors import DomainError


class VideoBingoError(DomainError):
    """A paytable or a play that breaks the rules; ``str(error)`` says what and where."""


class PaytableError(VideoBingoError):
    """An invalid paytable: the message starts with the field at fault (``patterns[1].pays``)."""


class PlayError(VideoBingoError):
    """A play that cannot be made or settled (too many cards, a card with a repeated number)."""
