"""An AMP connection that refuses a box too big before it is put together.

AMP itself gathers every key and value of a box before it looks at any (a value is at
most 64 KB, but a box may hold any number of them).  :class:`BoundedBoxes` counts a
box's keys and bytes while they arrive: past :attr:`~BoundedBoxes.max_box_keys` keys or
:attr:`~BoundedBoxes.max_box_bytes` bytes it drops what it read, calls
:meth:`~BoundedBoxes.box_too_big` (which logs and cuts the connection) and reads on,
so a peer cannot make the server hold more than one box of the size it allows.
"""

from __future__ import annotations

from typing import Any

from twisted.protocols import amp


class BoundedBoxes(amp.AMP):
    #: The most keys of one box (a chunked value counts one key per piece).
    max_box_keys = 64
    #: The most bytes of one box, keys and values.
    max_box_bytes = 4 * amp.MAX_VALUE_LENGTH

    _box_keys = 0
    _box_bytes = 0

    def box_too_big(self) -> None:
        """A box broke the bounds: the connection is cut (a subclass also says so in its log)."""
        if self.transport is not None:
            self.transport.abortConnection()  # type: ignore[attr-defined]

    def proto_key(self, string: bytes) -> Any:
        if not string:
            self._box_keys = self._box_bytes = 0  # the box is complete
        return super().proto_key(string)

    def proto_value(self, string: bytes) -> Any:
        self._box_keys += 1
        self._box_bytes += len(string) + len(self._currentKey or b"")
        if self._box_keys > self.max_box_keys or self._box_bytes > self.max_box_bytes:
            self.box_too_big()
            self._currentBox = amp.AmpBox()  # what was read of it is dropped
            return "key"
        return super().proto_value(string)
