"""Board layer: the blower controller on a Raspberry Pi Pico (RP2040).

Pins (see ``docs/blower.md`` for the wiring):

=====  ===========================================================
GP0    UART0 TX -> host link (RS-232 transceiver), 115200 8N1
GP1    UART0 RX <- host link
GP2    pump relay (high = on)
GP3    airflow switch (to GND when air flows; pull-up)
GP4    UART1 TX -> ball reader module, 9600 8N1
GP5    UART1 RX <- ball reader module
GP6    gate solenoid driver (80 ms pulse releases one ball)
GP7    tube presence IR break-beam (low = ball in tube; pull-up)
GP8    rack flap solenoid (80 ms pulse: tube -> rack)
GP9    return flap solenoid (80 ms pulse: tube -> chamber)
GP10   rack release solenoid (300 ms pulse: rack -> chamber)
GP25   status LED (on board)
=====  ===========================================================

The ball reader answers ``R\\n`` with the number in ASCII and ``\\n`` (``00`` when it
cannot read) and ``T\\n`` with ``OK\\n``.
"""

import machine
from machine import UART, Pin, Timer

from ball_blower_fw.hardware import Hardware

LINK_BAUD = 115200
READER_BAUD = 9600
PULSE_MS = 80
RACK_RELEASE_MS = 300
WATCHDOG_MS = 2000


class Board(Hardware):
    """The ``Hardware`` port on the RP2040's pins."""

    def __init__(self) -> None:
        self.link = UART(0, baudrate=LINK_BAUD, tx=Pin(0), rx=Pin(1), timeout=0,
                         rxbuf=512)
        self.reader = UART(1, baudrate=READER_BAUD, tx=Pin(4), rx=Pin(5), timeout=60)
        self.pump_pin = Pin(2, Pin.OUT, value=0)
        self.airflow = Pin(3, Pin.IN, Pin.PULL_UP)
        self.gate = Pin(6, Pin.OUT, value=0)
        self.presence = Pin(7, Pin.IN, Pin.PULL_UP)
        self.rack_flap = Pin(8, Pin.OUT, value=0)
        self.return_flap = Pin(9, Pin.OUT, value=0)
        self.rack_release = Pin(10, Pin.OUT, value=0)
        self.status_led = Pin(25, Pin.OUT, value=0)
        self.watchdog = None

    def start_watchdog(self) -> None:
        """Arm the watchdog; from here on the shell must feed it."""
        self.watchdog = machine.WDT(timeout=WATCHDOG_MS)

    def feed_watchdog(self) -> None:
        if self.watchdog is not None:
            self.watchdog.feed()

    def _pulse(self, pin: Pin, ms: int) -> None:
        # A one-shot timer ends the pulse so the event loop never sleeps on a solenoid.
        pin.value(1)
        Timer(-1, mode=Timer.ONE_SHOT, period=ms, callback=lambda t: pin.value(0))

    def pump(self, on: bool) -> None:
        self.pump_pin.value(1 if on else 0)

    def pump_running(self) -> bool:
        return self.airflow.value() == 0

    def release(self) -> None:
        self._pulse(self.gate, PULSE_MS)

    def ball_in_tube(self) -> bool:
        return self.presence.value() == 0

    def _ask_reader(self, request: bytes) -> bytes:
        self.reader.read()  # drop stale bytes from an earlier, late answer
        self.reader.write(request)
        return self.reader.readline() or b""

    def read_ball(self) -> int:
        answer = self._ask_reader(b"R\n").strip()
        if len(answer) != 2 or not answer.isdigit():
            return 0
        number = int(answer)
        return number if 1 <= number <= 90 else 0

    def reader_ok(self) -> bool:
        return self._ask_reader(b"T\n").strip() == b"OK"

    def rack(self) -> None:
        self._pulse(self.rack_flap, PULSE_MS)

    def return_tube(self) -> None:
        self._pulse(self.return_flap, PULSE_MS)

    def return_all(self) -> None:
        self._pulse(self.rack_release, RACK_RELEASE_MS)

    def led(self, state: int) -> None:
        # Steady in a fault so staff see it from the caller's desk; off otherwise, and
        # the shell blinks it while the link is alive.
        self.status_led.value(1 if state == 6 else 0)
