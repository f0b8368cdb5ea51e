"""The senders a receiver takes feeds from, registered by the regulator (docs/regulator-feed.md "Registered senders").

A sender's certificate says who it is; its journal key is what its records are checked
against, and the regulator decides that key, not the sender: ``bingo regulator
register-sender`` writes it into ``senders.toml`` of the receiver's folder (mode 0600),
with the names of the report-signing certificates that may sign the sender's reports::

    [senders."hall:hall-1"]
    journal_key = "-----BEGIN PUBLIC KEY-----\\nMCowBQYDK2VwAyEA...\\n-----END PUBLIC KEY-----\\n"
    report_signers = ["hall-1-reports"]

A running receiver reads the file again when it changes, at the sender's next ``hello``:
a sender registered, or given a new key, is taken without a restart.  A sender that is
not registered is refused at its ``hello``, whatever certificate it holds; a ``hello``
that says another key than the registered one is refused too.  The default report
signer is the one the servers are issued: ``<hall id>-reports`` for ``hall:<hall id>``,
``central-reports`` for the central server (docs/pki.md section 8).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from protocol.errors import DomainError
from protocol.regulator_feed import CENTRAL, is_sender
from server_kit.settings import ANY_NAME, ConfigFile, Schema, UnknownSetting, check_known, fields_of, load_toml

FILE = "senders.toml"
_SIGNER = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,62}")


class RegistryError(DomainError):
    """A registration that cannot be made or a ``senders.toml`` that cannot be read; the message says why."""


@dataclass(frozen=True)
class RegisteredSender:
    sender: str
    journal_key: str  # PEM, SubjectPublicKeyInfo
    report_signers: tuple[str, ...]

    @property
    def key(self) -> Ed25519PublicKey:
        return public_key(self.journal_key, self.sender)


#: Every key of ``senders.toml``: any other is refused (:func:`server_kit.settings.check_known`).
SETTINGS: Schema = {"senders": {ANY_NAME: fields_of(RegisteredSender, but=("sender",))}}


def public_key(pem: str, what: str) -> Ed25519PublicKey:
    """The Ed25519 public key of ``pem``; :class:`RegistryError` naming ``what`` otherwise."""
    try:
        key = serialization.load_pem_public_key(pem.encode())
    except ValueError:
        raise RegistryError(f"{what}: not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise RegistryError(f"{what}: not an Ed25519 key (a journal key is Ed25519)")
    return key


def key_pem(key: Ed25519PublicKey) -> str:
    return key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def same_key(pem: str, key: Ed25519PublicKey) -> bool:
    """Whether ``pem`` is the PEM of ``key`` (whatever its line breaks); False for a PEM that is no key."""
    try:
        return public_key(pem, "the key").public_bytes_raw() == key.public_bytes_raw()
    except RegistryError:
        return False


def read_key_file(path: Path) -> Ed25519PublicKey:
    """A journal key from ``path``: the public key (``bingo journal public-key``) or, on the
    server's own machine, its private key file, of which only the public half is kept."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise RegistryError(f"cannot read {path}: {error.strerror}") from None
    if b"PRIVATE KEY" in data:
        try:
            private = serialization.load_pem_private_key(data, password=None)
        except (ValueError, TypeError):
            raise RegistryError(f"{path}: not a PEM private key without a password") from None
        if not isinstance(private, Ed25519PrivateKey):
            raise RegistryError(f"{path}: not an Ed25519 key (a journal key is Ed25519)")
        return private.public_key()
    return public_key(data.decode("ascii", "replace"), str(path))


def default_signers(sender: str) -> tuple[str, ...]:
    """The report-signing certificate a sender is issued by default (docs/pki.md section 8)."""
    return ("central-reports",) if sender == CENTRAL else (f"{sender.removeprefix('hall:')}-reports",)


def check_sender(sender: str) -> None:
    if not is_sender(sender):
        raise RegistryError(f"a sender is hall:<hall id> (the name of the hall's server certificate) or central, "
                            f"not {sender!r}")


class SenderRegistry:
    """``senders.toml`` of the receiver's folder ``home``, read again whenever the file changes."""

    def __init__(self, home: Path) -> None:
        self.path = home / FILE
        self._stamp: tuple[int, int, int] | None = None
        self._senders: dict[str, RegisteredSender] = {}

    def get(self, sender: str) -> RegisteredSender | None:
        """The registration of ``sender`` as the file says now; None when it is not registered."""
        return self.senders().get(sender)

    def senders(self) -> dict[str, RegisteredSender]:
        stamp = _stamp(self.path)
        if stamp != self._stamp:
            self._senders = _read(self.path) if stamp is not None else {}
            self._stamp = stamp
        return dict(self._senders)

    def register(self, sender: str, key: Ed25519PublicKey, report_signers: tuple[str, ...] = ()) -> RegisteredSender:
        """Register ``sender`` with ``key`` (replacing its registration, if any); written at once, 0600."""
        check_sender(sender)
        signers = tuple(report_signers) or default_signers(sender)
        for name in signers:
            if not _SIGNER.fullmatch(name):
                raise RegistryError(f"a report signer is a certificate's name (letters, digits, ., _, -), not {name!r}")
        senders = self.senders()
        registered = RegisteredSender(sender, key_pem(key), signers)
        senders[sender] = registered
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        partial = self.path.with_name(self.path.name + ".partial")
        descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(_toml(senders))
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(partial, self.path)
        return registered


def _stamp(path: Path) -> tuple[int, int, int] | None:
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return (status.st_ino, status.st_mtime_ns, status.st_size)


def _describe(path: Path) -> str:
    """``senders.toml`` at ``path`` read as the receiver reads it, in one line (``bingo config check``)."""
    if not path.is_file():
        raise RegistryError(f"{path}: no such file")
    senders = _read(path)
    return f"the regulator's receiver's senders: {len(senders)} registered ({', '.join(sorted(senders)) or 'none'})"


#: The receiver's register of senders for ``bingo config check`` (the ``bingo.config`` entry point ``regulator``).
CONFIG_CHECK = ConfigFile("regulator", FILE, _describe)


def _read(path: Path) -> dict[str, RegisteredSender]:
    try:
        data = load_toml(path)
    except OSError as error:
        raise RegistryError(f"cannot read {path}: {error.strerror}") from None
    except ValueError as error:  # not TOML, not UTF-8, nested too deeply
        raise RegistryError(f"{path} is not TOML: {error}") from None
    try:
        check_known(data, SETTINGS)
    except UnknownSetting as error:
        raise RegistryError(f"{path}: {error}") from None
    table: Any = data.get("senders", {})
    if not isinstance(table, dict):
        raise RegistryError(f"{path}: senders is a table of senders")
    senders = {}
    for sender, entry in table.items():
        where = f"{path}: senders.{json.dumps(sender)}"
        try:
            check_sender(sender)
        except RegistryError as error:
            raise RegistryError(f"{where}: {error}") from None
        if not isinstance(entry, dict) or "journal_key" not in entry:
            raise RegistryError(f"{where}: is a table of a journal_key and, optionally, report_signers")
        key, signers = entry["journal_key"], entry.get("report_signers", list(default_signers(sender)))
        if not isinstance(key, str):
            raise RegistryError(f"{where}.journal_key: a PEM public key")
        public_key(key, f"{where}.journal_key")
        if not isinstance(signers, list) or not all(isinstance(s, str) and _SIGNER.fullmatch(s) for s in signers):
            raise RegistryError(f"{where}.report_signers: a list of certificate names")
        senders[sender] = RegisteredSender(sender, key, tuple(signers))
    return senders


def _toml(senders: dict[str, RegisteredSender]) -> str:
    lines = ["# The senders this receiver takes feeds from: bingo regulator register-sender (docs/regulator-feed.md).", ""]
    for sender in sorted(senders):
        entry = senders[sender]
        lines += [f"[senders.{json.dumps(sender)}]",
                  f"journal_key = {json.dumps(entry.journal_key)}",  # a JSON string is a TOML basic string
                  f"report_signers = [{', '.join(json.dumps(s) for s in entry.report_signers)}]", ""]
    return "\n".join(lines)


__all__ = ["FILE", "RegisteredSender", "RegistryError", "SenderRegistry", "default_signers", "key_pem",
           "public_key", "read_key_file", "same_key"]
