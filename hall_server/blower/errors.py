"""Errors of the blower driver: one hierarchy, each with a message for the caller's desk."""

from protocol import blower_messages as bm


class BlowerError(Exception):
    """Base of every blower driver error; ``message`` is shown to staff."""

    message = "the ball blower reported a problem"

    def __init__(self, detail: str = "") -> None:
        super().__init__(detail or self.message)
        self.detail = detail

    def __str__(self) -> str:
        return self.message + (": " + self.detail if self.detail else "")


class BlowerFault(BlowerError):
    """The blower stopped in a fault; the game is suspended until staff clear it."""

    message = "the ball blower is in fault"

    def __init__(self, code: int, game: int = 0, draw_no: int = 0, detail: int = 0) -> None:
        super().__init__(bm.FAULT_NAMES.get(code, "fault code %d" % code))
        self.code = code
        self.game = game
        self.draw_no = draw_no
        self.ball = detail


class BlowerRefused(BlowerError):
    """The blower refused a command and said why."""

    message = "the ball blower refused the command"

    def __init__(self, kind: int, reason: int, draws: int = 0, last_ball: int = 0) -> None:
        super().__init__(bm.REFUSAL_NAMES.get(reason, "reason %d" % reason))
        self.kind = kind
        self.reason = reason
        self.draws = draws
        self.last_ball = last_ball


class FirmwareNotApproved(BlowerError):
    """The blower runs a firmware image that is not on the approved list."""

    message = "the ball blower's firmware is not approved; do not use this blower"


class DrawConflict(BlowerError):
    """The blower and the hall disagree about the game's balls beyond repair."""

    message = "the ball blower's draws do not match the game; check the balls by hand"


class BlowerTimeout(BlowerError):
    """A command got no answer in time."""

    message = "the ball blower did not answer in time"


class BlowerBusy(BlowerError):
    """A command was asked while the driver cannot take it."""

    message = "the ball blower driver cannot take this command now"


class ReserveSetIncomplete(BlowerError):
    """The reserve blower's count did not find the 90 balls (R84.4)."""

    message = "the reserve blower's ball set is not complete; it cannot be put to use"
