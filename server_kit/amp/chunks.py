"""A value larger than AMP's cap on one value, carried as numbered pieces.

AMP limits every value to 65,535 bytes (``amp.MAX_VALUE_LENGTH``).  A
:class:`Chunked` argument writes its bytes as ``NAME`` = the number of pieces and
``NAME.0`` ... ``NAME.N-1`` = the pieces, each at most :data:`PIECE_BYTES`; the
receiver reads them back in order.  ``max_bytes`` bounds what the receiver accepts: a
count that could exceed it, a piece missing, a piece too long or a count that is not a
number is refused with :class:`ChunkError` before anything is put together, so a peer
cannot make the receiver hold more than the command allows; AMP answers such a
command with an unknown error and drops the connection (a peer that breaks the
protocol is not trusted further).
"""

from __future__ import annotations

from typing import Any

from twisted.protocols import amp

from protocol.errors import DomainError

#: The most bytes of one piece: AMP's cap on one value.
PIECE_BYTES = amp.MAX_VALUE_LENGTH


class ChunkError(DomainError):
    """A chunked value that breaks its bounds or misses a piece; nothing was taken."""


class Chunked(amp.Argument):
    """Bytes (or text, with ``text=True``: UTF-8) of at most ``max_bytes``, in pieces."""

    def __init__(self, max_bytes: int, *, text: bool = False, optional: bool = False) -> None:
        super().__init__(optional=optional)
        if max_bytes < 0:
            raise ValueError("max_bytes is a number of bytes, 0 or more")
        self.max_bytes = max_bytes
        self.text = text

    def _pieces_at_most(self) -> int:
        return max(1, -(-self.max_bytes // PIECE_BYTES))

    def toBox(self, name: bytes, strings: Any, objects: Any, proto: Any) -> None:
        value = objects.get(amp._wireNameToPythonIdentifier(name))
        if value is None:
            if self.optional:
                return
            raise ChunkError(f"{name.decode()} is missing")
        data = value.encode("utf-8") if self.text else bytes(value)
        if len(data) > self.max_bytes:
            raise ChunkError(f"{name.decode()} is {len(data)} bytes; at most {self.max_bytes} may be sent")
        pieces = [data[at:at + PIECE_BYTES] for at in range(0, len(data), PIECE_BYTES)] or [b""]
        strings[name] = str(len(pieces)).encode()
        for index, piece in enumerate(pieces):
            strings[name + b"." + str(index).encode()] = piece

    def fromBox(self, name: bytes, strings: Any, objects: Any, proto: Any) -> None:
        key = amp._wireNameToPythonIdentifier(name)
        count_text = strings.get(name)
        if count_text is None:
            if self.optional:
                objects[key] = None
                return
            raise ChunkError(f"{name.decode()} is missing")
        if not count_text.isdigit() or len(count_text) > 6:
            raise ChunkError(f"{name.decode()}: the number of pieces is not a number")
        count = int(count_text)
        if not 1 <= count <= self._pieces_at_most():
            raise ChunkError(
                f"{name.decode()} comes in {count} pieces; at most {self._pieces_at_most()} "
                f"({self.max_bytes} bytes) are taken"
            )
        pieces = []
        for index in range(count):
            piece = strings.get(name + b"." + str(index).encode())
            if piece is None:
                raise ChunkError(f"{name.decode()}: piece {index} of {count} is missing")
            pieces.append(piece)
        data = b"".join(pieces)
        if len(data) > self.max_bytes:
            raise ChunkError(f"{name.decode()} is {len(data)} bytes; at most {self.max_bytes} are taken")
        if self.text:
            try:
                objects[key] = data.decode("utf-8")
            except UnicodeDecodeError:
                raise ChunkError(f"{name.decode()} is not UTF-8 text") from None
        else:
            objects[key] = data
