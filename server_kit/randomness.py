"""Uniform whole numbers from the operating system's CSPRNG, read in blocks.

:class:`KernelRandom` is the video bingo machines' source (``randrange(n)``, R92.10): the
same kernel CSPRNG as :class:`secrets.SystemRandom` (``os.urandom``), read
:data:`BLOCK` bytes at a time instead of one system call for every number.  A number
below ``n`` takes one byte (``n`` up to 256) or as many as ``n - 1`` needs, and a draw
that would make some numbers likelier (one at or above the largest multiple of ``n``
the bytes hold) is thrown away and the next taken: every number of ``0..n-1`` is
equally likely.  The bytes read are used once and never kept past their number; a
process forked from this one reads its own (the block is dropped when the process id
changes).
"""

from __future__ import annotations

import os

#: Bytes read from the kernel at a time.
BLOCK = 4096


class KernelRandom:
    """``randrange(n)``: uniform on ``0..n-1``, from ``os.urandom`` read in blocks (see the module)."""

    def __init__(self) -> None:
        self._block = b""
        self._at = 0
        self._pid = os.getpid()

    def _bytes(self, count: int) -> bytes:
        if self._at + count > len(self._block) or self._pid != os.getpid():
            self._block, self._at, self._pid = os.urandom(max(BLOCK, count)), 0, os.getpid()
        taken = self._block[self._at:self._at + count]
        self._at += count
        return taken

    def randrange(self, stop: int, /) -> int:
        if isinstance(stop, bool) or not isinstance(stop, int) or stop < 1:
            raise ValueError(f"randrange needs a whole number of at least 1, not {stop!r}")
        if stop <= 256:
            limit = 256 - 256 % stop  # bytes at or above it would favour the lowest numbers
            while True:
                if self._at >= len(self._block) or self._pid != os.getpid():
                    self._block, self._at, self._pid = os.urandom(BLOCK), 0, os.getpid()
                byte = self._block[self._at]
                self._at += 1
                if byte < limit:
                    return byte % stop
        width = (stop - 1).bit_length() + 7 >> 3
        span = 1 << 8 * width
        limit = span - span % stop
        while True:
            value = int.from_bytes(self._bytes(width), "big")
            if value < limit:
                return value % stop
