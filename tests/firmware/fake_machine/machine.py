"""FakeMachine: the few ``machine`` classes the board layer uses, for the unix port,
which has no ``machine.Pin``/``UART``.  Pins remember their value; inputs can be set."""


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1

    def __init__(self, number, mode=-1, pull=-1, value=None):
        self.number = number
        self._value = 1 if pull == Pin.PULL_UP else 0
        if value is not None:
            self._value = value

    def value(self, new=None):
        if new is None:
            return self._value
        self._value = new


class UART:
    def __init__(self, number, baudrate=9600, tx=None, rx=None, timeout=0, rxbuf=64):
        self.number = number
        self.written = b""
        self.answers = []

    def write(self, data):
        self.written += data

    def read(self, n=-1):
        return None

    def readline(self):
        return self.answers.pop(0) if self.answers else None


class Timer:
    ONE_SHOT = 0
    PERIODIC = 1
    fired = []

    def __init__(self, id=-1, mode=1, period=0, callback=None):
        # Fires at once: the tests check the pulse's end, not its length.
        Timer.fired.append(period)
        if callback is not None:
            callback(self)


class WDT:
    def __init__(self, timeout=5000):
        self.timeout = timeout
        self.fed = 0

    def feed(self):
        self.fed += 1
