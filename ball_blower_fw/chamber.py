"""A simulated blower chamber of 90 balls for the unix port and CPython tests.

Mixing is real chance: each release picks a ball uniformly from those in the chamber
with bytes from ``os.urandom`` (passed in), so nothing on the host can steer it.
Faults are injected by name and the release (or rack) count at which they strike,
e.g. ``{"no_ball": 3, "jam": 5}``; see ``FAULTS``.  With a ``state_path`` the
physical state (chamber, tube, rack) is kept in a JSON file, as real balls stay where
they are while the controller restarts.
"""

import json

from ball_blower_fw.hardware import Hardware

FAULTS = {
    "no_ball": "the n-th release lets no ball out",
    "unreadable": "the ball of the n-th release cannot be read",
    "misread": "the reader reads the ball of the n-th release as another ball, one still in the chamber",
    "repeat": "the n-th release brings a copy of the last racked ball",
    "pump": "the pump fails on the n-th time it is switched on",
    "jam": "the ball of the n-th rack stays stuck in the tube",
    "missing": "ball n is missing from the set",
    "duplicate": "the set holds two balls labelled n (ball n+1 is absent)",
}


class SimulatedChamber(Hardware):
    """The ``Hardware`` port over a chamber of numbered balls."""

    def __init__(self, random_bytes, faults=None, state_path: str = "") -> None:
        self.random_bytes = random_bytes
        self.faults = dict(faults or {})
        for name in self.faults:
            if name not in FAULTS:
                raise ValueError("unknown simulated fault %r" % name)
        self.state_path = state_path
        self.chamber = self._full_set()
        self.tube = 0
        self.tube_phantom = False
        self.tube_unreadable = False
        self.tube_misread = 0  # the number the reader reads for the ball in the tube, when not its own
        self.rack_list = []
        self.pump_on = False
        self.pump_broken = False
        self.pump_starts = 0
        self.releases = 0
        self.racks = 0
        self.jammed = False
        self.led_state = 0
        if state_path:
            self._load()

    def _full_set(self) -> list:
        balls = list(range(1, 91))
        missing = self.faults.get("missing")
        if missing:
            balls.remove(missing)
        duplicate = self.faults.get("duplicate")
        if duplicate:
            balls[balls.index(duplicate % 90 + 1)] = duplicate
        return balls

    def _load(self) -> None:
        try:
            with open(self.state_path) as f:
                saved = json.load(f)
        except OSError:
            return  # first start: a full chamber
        self.chamber = saved["chamber"]
        self.tube = saved["tube"]
        self.rack_list = saved["rack"]

    def _save(self) -> None:
        if self.state_path:
            with open(self.state_path, "w") as f:
                json.dump({"chamber": self.chamber, "tube": self.tube,
                           "rack": self.rack_list}, f)

    def _pick(self, n: int) -> int:
        # Rejection sampling over 16 random bits: uniform over 0..n-1.
        limit = 65536 - 65536 % n
        while True:
            raw = self.random_bytes(2)
            value = raw[0] << 8 | raw[1]
            if value < limit:
                return value % n

    def pump(self, on: bool) -> None:
        if on and not self.pump_on:
            self.pump_starts += 1
            self.pump_broken = self.faults.get("pump") == self.pump_starts
        self.pump_on = on

    def pump_running(self) -> bool:
        return self.pump_on and not self.pump_broken

    def release(self) -> None:
        self.releases += 1
        if self.tube or not self.chamber or self.faults.get("no_ball") == self.releases:
            return
        if self.faults.get("repeat") == self.releases and self.rack_list:
            self.tube = self.rack_list[-1]
            self.tube_phantom = True
        else:
            self.tube = self.chamber.pop(self._pick(len(self.chamber)))
        self.tube_unreadable = self.faults.get("unreadable") == self.releases
        if self.faults.get("misread") == self.releases and self.chamber:
            # Staff correct it at the hall (R85.5); the ball read is still in the chamber.
            self.tube_misread = self.chamber[0]
        self._save()

    def ball_in_tube(self) -> bool:
        return self.tube != 0

    def read_ball(self) -> int:
        return 0 if self.tube_unreadable else (self.tube_misread or self.tube)

    def reader_ok(self) -> bool:
        return True

    def rack(self) -> None:
        if not self.tube:
            return
        self.racks += 1
        if self.faults.get("jam") == self.racks and not self.jammed:
            self.jammed = True
            return
        self.jammed = False
        if not self.tube_phantom:
            self.rack_list.append(self.tube)
        self._clear_tube()

    def return_tube(self) -> None:
        if self.tube and not self.tube_phantom:
            # A phantom copy is taken out by the operator; a real ball goes back.
            self.chamber.append(self.tube)
        self.jammed = False
        self._clear_tube()

    def _clear_tube(self) -> None:
        self.tube = 0
        self.tube_phantom = False
        self.tube_unreadable = False
        self.tube_misread = 0
        self._save()

    def return_all(self) -> None:
        self.chamber.extend(self.rack_list)
        self.rack_list = []
        self._save()

    def led(self, state: int) -> None:
        self.led_state = state
