"""Registering a sender with a receiver in a test, as ``bingo regulator register-sender`` does.

A receiver built in the test (:class:`regulator.receiver.Receiver`, a
:class:`regulator.reports.ReportInbox`) is handed who is registered as a lookup;
:func:`register` adds one sender to it.  A whole receiver (``ReceiverService``,
``bingo regulator serve``) reads ``senders.toml`` of its folder: :func:`register_in`
writes it there, with the code the command runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from regulator.senders import RegisteredSender, SenderRegistry, default_signers, key_pem


def _public(key: Ed25519PrivateKey | Ed25519PublicKey) -> Ed25519PublicKey:
    return key.public_key() if isinstance(key, Ed25519PrivateKey) else key


def register(taker: Any, sender: str, key: Ed25519PrivateKey | Ed25519PublicKey, *signers: str) -> None:
    """``sender`` registered with ``key`` for ``taker`` (a Receiver or a ReportInbox: its ``registered`` lookup)."""
    entry = RegisteredSender(sender, key_pem(_public(key)), signers or default_signers(sender))
    before = taker.registered
    taker.registered = lambda asked: entry if asked == sender else before(asked)


def register_in(home: Path, sender: str, key: Ed25519PrivateKey | Ed25519PublicKey, *signers: str) -> None:
    """``sender`` registered in the receiver's folder ``home`` (``senders.toml``)."""
    SenderRegistry(home).register(sender, _public(key), tuple(signers))
