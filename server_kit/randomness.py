"""Uniform whole numbers from the operating system's CSPRNG, read in blocks.

:class:`KernelRandom` is the video bingo machines' source (``randrange(n)``, R92.10): the
same kernel CSPRNG as :class:`secrets.SystemRandom` (``os.urandom``), read
:data:`BLOCK` bytes at a time instead of one system call for every number.  A number
below ``n`` takes one byte (``n`` up to 256) or as many as ``n - 1`` needs, and a draw
that would make some numbers likelier (one at or above the largest multiple of ``n``
the bytes hold) is thrown away and the next taken: every number of ``0..n-1`` is
equally likely.  :meth:`KernelRandom.partial_shuffle` draws a whole sample (a card, a
play's balls) the same way in one call.  The bytes read are used once and never kept
past their number; a process forked from this one drops the block it inherited and
reads its own.
"""

from __future__ import annotations

import os
import weakref

#: Bytes read from the kernel at a time.
BLOCK = 4096

_SOURCES: "weakref.WeakSet[KernelRandom]" = weakref.WeakSet()


def _forget_in_child() -> None:
    """In a forked child: the blocks read by the parent are the parent's; none of their bytes is used here."""
    for source in list(_SOURCES):
        source._block, source._at = b"", 0


os.register_at_fork(after_in_child=_forget_in_child)


class KernelRandom:
    """``randrange(n)``: uniform on ``0..n-1``, from ``os.urandom`` read in blocks (see the module)."""

    def __init__(self) -> None:
        self._block = b""
        self._at = 0
        _SOURCES.add(self)

    def _bytes(self, count: int) -> bytes:
        if self._at + count > len(self._block):
            self._block, self._at = os.urandom(max(BLOCK, count)), 0
        taken = self._block[self._at:self._at + count]
        self._at += count
        return taken

    def randrange(self, stop: int, /) -> int:
        if isinstance(stop, bool) or not isinstance(stop, int) or stop < 1:
            raise ValueError(f"randrange needs a whole number of at least 1, not {stop!r}")
        if stop <= 256:
            limit = 256 - 256 % stop  # bytes at or above it would favour the lowest numbers
            while True:
                if self._at >= len(self._block):
                    self._block, self._at = os.urandom(BLOCK), 0
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

    def partial_shuffle(self, population: int, count: int) -> tuple[int, ...]:
        """``count`` distinct numbers of ``1..population`` in uniformly random order: the partial
        Fisher-Yates shuffle of ``protocol.videobingo.play``, each step's number drawn as
        :meth:`randrange` draws it, in one call."""
        if not 0 <= count <= population:
            raise ValueError(f"a sample of {count} cannot be drawn from {population} numbers")
        numbers = list(range(1, population + 1))
        if population > 256:
            for i in range(count):
                j = i + self.randrange(population - i)
                numbers[i], numbers[j] = numbers[j], numbers[i]
            return tuple(numbers[:count])
        block, at = self._block, self._at
        for i in range(count):
            stop = population - i
            limit = 256 - 256 % stop
            while True:
                if at >= len(block):
                    block, at = os.urandom(BLOCK), 0
                byte = block[at]
                at += 1
                if byte < limit:
                    break
            j = i + byte % stop
            numbers[i], numbers[j] = numbers[j], numbers[i]
        self._block, self._at = block, at
        return tuple(numbers[:count])
