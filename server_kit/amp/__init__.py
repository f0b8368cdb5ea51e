"""AMP helpers for the links between servers (hall <-> central, central -> regulator).

* :mod:`~server_kit.amp.commands` turns the plain-data message declarations of
  :mod:`protocol.central_messages` into ``twisted.protocols.amp`` commands, each
  error code into an exception class that travels as that code;
* :mod:`~server_kit.amp.chunks` carries one value larger than AMP's 64 KB cap as
  numbered pieces, bounded so a peer cannot make the receiver hold more than it allows.
"""
