"""The demo's player terminals: their certificates, the headless players, the newcomer's kiosk.

With ``bingo hall serve --demo`` the scripted session (:mod:`hall_server.web.demo_session`)
enrols the terminals named here and opens a player account for each.  This module:

* issues each demo terminal its certificate from the local authority a first start made
  (``operator-ca/``), once, and bundles it under ``terminal-certs/NAME/`` (a video bingo
  station a ``machine`` certificate, named ``<machine>.<station>``); without that
  authority's key (moved to the operator's machine, as it should be) no certificate can be
  issued and the demo plays with paper cards alone, saying so;
* starts the headless players (``python -m terminals.demo_players``, a process of its
  own: the hall server imports nothing of the terminals) and hands them the terminals'
  tokens, accounts and PINs on their standard input, never on a command line;
* writes for the newcomer the kiosk's address with its token, the account and PIN to
  sign in with, and the terminal certificate as a PKCS#12 file to import into the
  browser (``demo-kiosk.txt`` in the hall's folder, and the log); the same for the demo's
  video bingo machine's screen, when the hall has one.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Sequence

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography import x509
from cryptography.x509.oid import NameOID
from twisted.application.service import Service
from twisted.internet import defer, protocol
from twisted.logger import Logger
from twisted.python.failure import Failure

from hall_server.statements import format_account_number
from hall_server.web.demo_session import DemoPlayer, DemoSession
from server_kit.pki import PkiError, PkiFolder, export_bundle, issue_certificate, revoke_certificate

log = Logger()

#: The terminals the headless demo players play on.
HEADLESS = ("demo-1", "demo-2", "demo-3")
#: The password of the kiosk's PKCS#12 file: it only guards the demo's own terminal key.
KIOSK_P12_PASSWORD = "demo"
KIOSK_NOTE = "demo-kiosk.txt"
#: Seconds the players' process has to stop once told, before it is killed.
STOP_GRACE_S = 5.0


def provision(authority: Path, bundles: Path, names: Sequence[str], role: str = "terminal") -> list[str]:
    """The terminals (``role="machine"``: video bingo stations) of ``names`` that have a
    certificate bundle in ``bundles``, issuing from ``authority`` (once) those that have none
    when its key is here.  A bundle of another role (a station's from before stations held
    ``machine`` certificates) is superseded: revoked and issued again for ``role``."""
    ready = []
    folder = PkiFolder(authority)
    for name in names:
        bundle = PkiFolder(bundles / name)
        if bundle.cert(name).exists() and _role_of(bundle.cert(name)) != role:
            if not folder.ca_key.exists():
                log.warn("Demo: {name} holds a certificate of another role than {role} and there is no authority "
                         "key in {dir} to issue one; the demo plays without it", name=name, role=role,
                         dir=str(authority))
                continue
            try:
                if folder.cert(name).exists():
                    revoke_certificate(authority, name, reason="superseded")
            except PkiError as error:
                log.warn("Demo: the certificate of {name} cannot be superseded: {error}", name=name, error=str(error))
                continue
            shutil.rmtree(bundle.root)
            log.info("Demo: {name}'s certificate superseded by a {role} certificate", name=name, role=role)
        if not bundle.cert(name).exists():
            if not folder.ca_key.exists():
                log.warn("Demo: no certificate for {role} {name} and no authority key in {dir} to issue one; "
                         "the demo plays without it", role=role, name=name, dir=str(authority))
                continue
            try:
                if not folder.cert(name).exists():
                    issue_certificate(authority, role, name)
                export_bundle(authority, name, bundle.root)
            except PkiError as error:
                log.warn("Demo: no certificate for {role} {name}: {error}", role=role, name=name, error=str(error))
                continue
        ready.append(name)
    return ready


def _role_of(path: Path) -> str | None:
    """The role (organizational unit) a certificate file names, or None if it cannot be read."""
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None
    units = cert.subject.get_attributes_for_oid(NameOID.ORGANIZATIONAL_UNIT_NAME)
    return str(units[0].value) if len(units) == 1 else None


def kiosk_p12(bundle: Path, name: str) -> Path:
    """The terminal's certificate and key as a PKCS#12 file for a browser (written once)."""
    path = bundle / f"{name}.p12"
    if not path.exists():
        folder = PkiFolder(bundle)
        key = serialization.load_pem_private_key(folder.key(name).read_bytes(), password=None)
        cert = x509.load_pem_x509_certificate(folder.cert(name).read_bytes())
        authority = x509.load_pem_x509_certificate(folder.ca_cert.read_bytes())
        data = pkcs12.serialize_key_and_certificates(
            name.encode(), key, cert, [authority],  # type: ignore[arg-type]
            serialization.BestAvailableEncryption(KIOSK_P12_PASSWORD.encode()),
        )
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as stream:
            stream.write(data)
    return path


class _Players(protocol.ProcessProtocol):
    """The headless players' process: what it says goes to the log, a line at a time."""

    def __init__(self) -> None:
        self.buffer = b""
        self.ended: defer.Deferred[None] = defer.Deferred()

    def outReceived(self, data: bytes) -> None:
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            log.info("Demo terminals: {line}", line=line.decode("utf-8", "replace"))

    errReceived = outReceived

    def processEnded(self, reason: Failure) -> None:
        log.info("Demo terminals: the players' process ended ({reason})", reason=reason.getErrorMessage())
        self.ended.callback(None)


class DemoTerminals(Service):
    """Once the demo enrolled its terminals and the site listens: the players and the kiosk's note."""

    def __init__(
        self, reactor: Any, demo: DemoSession, listening: "defer.Deferred[Any]", *, host: str, tls: bool,
        bundles: Path, kiosk: str | None, note: Path,
    ) -> None:
        self.reactor = reactor
        self.demo = demo
        self.listening = listening
        self.host = host
        self.tls = tls
        self.bundles = bundles
        self.kiosk = kiosk
        self.note = note
        self.process: Any = None
        self.players: _Players | None = None

    def startService(self) -> None:
        super().startService()
        port: defer.Deferred[Any] = defer.Deferred()

        def listening(listened: Any) -> Any:
            if hasattr(listened, "getHost"):  # not when the port could not be had
                port.callback(listened.getHost().port)
            return listened

        self.listening.addCallback(listening)
        both = defer.gatherResults([self.demo.players, port], consumeErrors=True)
        both.addCallback(lambda results: self.start(*results))
        both.addErrback(lambda failure: None if failure.check(defer.CancelledError, defer.FirstError)
                        else log.failure("starting the demo's terminals", failure))

    def start(self, players: list[DemoPlayer], port: int) -> None:
        if not self.running:
            return
        kiosk = next((p for p in players if p.terminal == self.kiosk), None)
        if kiosk is not None:
            self.tell_newcomer(kiosk, port)
        headless = [p for p in players if p.terminal != self.kiosk]
        if not headless:
            return
        scheme = "wss" if self.tls else "ws"
        order = {
            "url": f"{scheme}://{self.host}:{port}/kiosk/ws",
            "players": [
                {"terminal": p.terminal, "token": p.token, "account": p.account, "pin": p.pin,
                 "bundle": str(self.bundles / p.terminal) if self.tls else None}
                for p in headless
            ],
        }
        self.players = _Players()
        self.process = self.reactor.spawnProcess(
            self.players, sys.executable, [sys.executable, "-m", "terminals.demo_players"],
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        self.process.write(json.dumps(order).encode() + b"\n")  # secrets on stdin, not on a command line
        log.info("Demo: {n} headless players on terminals {names} buy virtual cards in every game",
                 n=len(headless), names=", ".join(p.terminal for p in headless))

    def tell_newcomer(self, kiosk: DemoPlayer, port: int) -> None:
        scheme = "https" if self.tls else "http"
        lines = [f"The demo's kiosk is player terminal {kiosk.terminal}."]
        if self.tls:
            p12 = kiosk_p12(self.bundles / kiosk.terminal, kiosk.terminal)
            lines.append(f"1. Import its certificate {p12} (password: {KIOSK_P12_PASSWORD}) into the browser "
                         f"(docs/pki.md, section 7).")
        lines += [
            f"{'2' if self.tls else '1'}. Open {scheme}://{self.host}:{port}/kiosk#terminal={kiosk.terminal}"
            f"&token={kiosk.token}",
            f"{'3' if self.tls else '2'}. Sign in with account {format_account_number(kiosk.account)} and PIN "
            f"{kiosk.pin}, and buy cards while the terminals' sale of a game is open.",
        ]
        for station in self.demo.stations_enrolled:
            name = f"{station.machine}.{station.station}"
            lines.append(f"The demo's video bingo machine {station.machine} has station {station.station}.")
            if self.tls:
                p12 = kiosk_p12(self.bundles / name, name)
                lines.append(f"4. Import its certificate {p12} (password: {KIOSK_P12_PASSWORD}) into the browser.")
            lines += [
                f"{'5' if self.tls else '3'}. Open {scheme}://{self.host}:{port}/vb/#machine={station.machine}"
                f"&station={station.station}&token={station.token}",
                f"{'6' if self.tls else '4'}. Sign in with the same account and PIN, take credit from the account, "
                f"choose the cards and play.",
                f"{'7' if self.tls else '5'}. Cash into the machine comes only from its bill validator, which signs "
                f"each bill with a key the screen does not hold; the demo's is simulated by bingo vb cash-device: "
                f"'bingo vb cash-device new DIR --machine {station.machine}', enrol the key it prints on the room "
                f"chief's console (Video bingo machines: Enrol the cash device), then 'bingo vb cash-device insert DIR "
                f"--machine {station.machine} --station {station.station} --amount-cents 1000 --url "
                f"{'wss' if self.tls else 'ws'}://{self.host}:{port}/vb/ws --token {station.token}"
                + (f" --bundle {self.bundles / name}'" if self.tls else "'") + ".",
            ]
        text = "\n".join(lines) + "\n"
        descriptor = os.open(self.note, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as stream:
            stream.write(text)
        for line in lines:
            log.info("Demo: {line}", line=line)
        log.info("Demo: the kiosk's address and account are in {note}", note=str(self.note))

    def stopService(self) -> Any:
        super().stopService()
        if self.process is None or self.players is None or self.players.ended.called:
            return None
        self.process.closeStdin()  # the players stop when their standard input closes
        late = self.reactor.callLater(STOP_GRACE_S, self.process.signalProcess, "KILL")
        return self.players.ended.addBoth(lambda _: late.cancel() if late.active() else None)
