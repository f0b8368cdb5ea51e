"""The one small interface between the blower logic and a hardware layer.

``board.py`` implements it with ``machine.Pin``/``UART`` on an RP2040; ``host.py``
implements it with a simulated chamber for the MicroPython unix port and CPython tests.
Every method returns at once: the logic polls from its tick, nothing here blocks.
"""


class Hardware:
    """Pump, gate, tube sensor, ball reader, rack and return flaps, status LED."""

    def pump(self, on: bool) -> None:
        """Switch the air pump that mixes the balls."""
        raise NotImplementedError

    def pump_running(self) -> bool:
        """True while the airflow switch sees the pump blowing."""
        raise NotImplementedError

    def release(self) -> None:
        """Pulse the gate so that one ball can leave the chamber for the tube."""
        raise NotImplementedError

    def ball_in_tube(self) -> bool:
        """True while the presence sensor sees a ball in the tube."""
        raise NotImplementedError

    def read_ball(self) -> int:
        """The number printed on the ball in the tube, 1..90, or 0 when unreadable."""
        raise NotImplementedError

    def reader_ok(self) -> bool:
        """True when the ball reader answers its self-test."""
        raise NotImplementedError

    def rack(self) -> None:
        """Move the ball in the tube to the rack of drawn balls."""
        raise NotImplementedError

    def return_tube(self) -> None:
        """Send the ball in the tube back into the chamber."""
        raise NotImplementedError

    def return_all(self) -> None:
        """Send every racked ball back into the chamber (a new game, a count)."""
        raise NotImplementedError

    def led(self, state: int) -> None:
        """Show the blower state (``protocol.blower_messages`` state code)."""
        raise NotImplementedError
