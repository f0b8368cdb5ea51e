"""The signed reports the receiver is sent (R95.4, R83.5, R77.4): kept, checked with stock ``openssl``, journaled.

:class:`ReportInbox` takes a ``report`` message: it writes the files under
``reports/<sender>/<name>/`` of the receiver's folder (a report sent again replaces
them, whole), checks each ``.p7s`` against the file it signs with ``openssl cms
-verify`` and the operator's authority (``ca.pem``), journals ``feed_report_received``
(the files' digest, whether every signature verified) and answers the ``report_ack``;
the same files sent again (their ack was lost) are acknowledged and nothing more.
A signature verifies only when it is also the sender's own: its signer is a
``report-signing`` certificate whose name is one the regulator registered for the sender
(:mod:`regulator.senders`; ``<hall id>-reports`` by default), so a kiosk's key, another
hall's report-signing key or any other certificate of the operator's authority signs
nothing for this sender.  A report whose signatures do not all verify is kept all the
same (it is evidence) and raises a ``report_unverified`` alert naming the file.  A
sender the regulator has not registered is refused.  A day's audit export whose
signatures verify is handed to :class:`~regulator.days.AuditDays`, which replays it card
by card on the records held.

A report larger than one message comes in parts (``report_part``): each is written to
``reports/<sender>/.incoming/<name>.<digest>/`` as it arrives (0600, renamed into place
once whole, so a part cut off by a crash is not taken as held) and answered with the
first part still lacking; the last one makes the report, taken as above.  A sender has
one report coming at a time: a part of another report discards what it had sent of the
others (at most :data:`~protocol.regulator_feed.MAX_PARTS` parts of a sender on disk).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from cryptography import x509

from protocol.regulator_feed import (
    FeedFormatError,
    Report,
    ReportAck,
    ReportPart,
    ReportPartAck,
    files_of_blob,
    report_digest,
)
from regulator.days import AuditDays, kept_folder
from regulator.receiver import REPORT_UNVERIFIED, FeedRefused, Registered
from server_kit.journal.port import JournalPort
from server_kit.pki import PkiError, Role, identity_of


@dataclass(frozen=True)
class ReceivedReport:
    sender: str
    name: str
    digest: str
    verified: bool
    detail: str
    time_ms: int


def check_signature(ca: Path, content: Path, signature: Path, signers: tuple[str, ...] = ()) -> str | None:
    """None when ``signature`` (DER CMS, detached) signs ``content`` under ``ca`` by a ``report-signing``
    certificate named one of ``signers``; else why not."""
    openssl = shutil.which("openssl")
    if openssl is None:
        return "openssl is not installed here, so the signature was not checked"
    signed_by = signature.with_name(signature.name + ".signer")
    try:
        done = subprocess.run(
            [openssl, "cms", "-verify", "-binary", "-inform", "DER", "-in", str(signature), "-content", str(content),
             "-CAfile", str(ca), "-purpose", "any", "-signer", str(signed_by), "-out", os.devnull],
            capture_output=True, text=True, timeout=60,
        )
        if done.returncode != 0:
            return (done.stderr.strip().splitlines() or ["openssl cms -verify failed"])[0][:200]
        certificates = x509.load_pem_x509_certificates(signed_by.read_bytes())
    finally:
        signed_by.unlink(missing_ok=True)
    for certificate in certificates:
        try:
            name, role = identity_of(certificate)
        except PkiError as error:
            return f"signed by a certificate that names no role of the operator's PKI: {error}"[:200]
        if role is not Role.report_signing or name not in signers:
            return (f"signed by the {role} certificate {name}, not by a report-signing certificate of this sender "
                    f"({', '.join(signers) or 'none registered'})")[:300]
    return None


def write_private(path: Path, data: bytes) -> None:
    """Write a new file the receiver's user alone may read (0600), whatever the process's umask."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as stream:
        stream.write(data)


class ReportInbox:
    def __init__(self, home: Path, ca: Path, journal: JournalPort | None, clock: Callable[[], int],
                 alert: Callable[[str, str, int, str], None], days: AuditDays | None = None,
                 registered: Registered = lambda sender: None) -> None:
        self.home = home
        self.registered = registered
        self.ca = ca
        self.journal = journal
        self.clock = clock
        self.alert = alert
        self.days = days
        self._digests: dict[tuple[str, str], str] | None = None

    def folder(self, sender: str, name: str) -> Path:
        return kept_folder(self.home, sender, name)

    def take(self, report: Report, certified: str) -> ReportAck:
        if report.sender != certified:
            raise FeedRefused(f"the certificate is {certified}'s: it may not send {report.sender}'s reports")
        registered = self.registered(report.sender)
        if registered is None:
            raise FeedRefused(f"{report.sender} is not registered with this receiver: its reports are not taken")
        digest = report_digest(report.files)
        if self._latest().get((report.sender, report.name)) == digest:
            return ReportAck(report.sender, report.name, digest)  # sent again, its ack lost: held already
        folder = self.folder(report.sender, report.name)
        for private in (self.home / "reports", folder.parent):  # the receiver's user's alone
            private.mkdir(mode=0o700, parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{report.name}-", dir=folder.parent))
        for name, data in report.files.items():
            write_private(staging / name, data)
        faults = []
        for name in sorted(report.files):
            if name.endswith(".p7s"):
                content = staging / name.removesuffix(".p7s")
                if not content.exists():
                    faults.append(f"{name} signs {content.name}, which is not in the report")
                    continue
                why = check_signature(self.ca, content, staging / name, registered.report_signers)
                if why is not None:
                    faults.append(f"{name}: {why}")
            elif f"{name}.p7s" not in report.files:
                faults.append(f"{name} has no signature ({name}.p7s)")
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(staging, folder)
        detail = "; ".join(faults)
        now = self.clock()
        noted = 0  # the receiver's own record of it: what the alert names (one alert per report received)
        if self.journal is not None:
            (kept,) = self.journal.append(now, [("feed_report_received", {
                "sender": report.sender, "name": report.name, "digest": digest, "files": sorted(report.files),
                "verified": not faults, "detail": detail,
            })])
            noted = kept.seq
        self._latest()[(report.sender, report.name)] = digest
        if faults:
            self.alert(report.sender, REPORT_UNVERIFIED, noted,
                       f"report {report.name} (receiver's record {noted}): {detail}"[:1000])
        elif self.days is not None:
            self.days.take(report.sender, report.name, digest, report.files)  # an audit export: replayed
        return ReportAck(report.sender, report.name, digest)

    def take_part(self, part: ReportPart, certified: str) -> ReportAck | ReportPartAck:
        """Keep ``part`` of a report sent in parts; the report taken (:meth:`take`) once every part is held."""
        if part.sender != certified:
            raise FeedRefused(f"the certificate is {certified}'s: it may not send {part.sender}'s reports")
        if self.registered(part.sender) is None:
            raise FeedRefused(f"{part.sender} is not registered with this receiver: its reports are not taken")
        if self._latest().get((part.sender, part.name)) == part.digest:
            return ReportAck(part.sender, part.name, part.digest)  # the whole was taken, its ack lost
        incoming = self.folder(part.sender, part.name).parent / ".incoming"
        incoming.mkdir(mode=0o700, parents=True, exist_ok=True)
        staging = incoming / f"{part.name}.{part.digest}"
        for other in incoming.iterdir():  # one report coming at a time a sender
            if other != staging:
                shutil.rmtree(other, ignore_errors=True)
        staging.mkdir(mode=0o700, exist_ok=True)
        kept = staging / str(part.index)
        if not kept.exists():
            partial = staging / f".{part.index}"
            partial.unlink(missing_ok=True)
            write_private(partial, part.data)
            os.replace(partial, kept)
        lacking = next((i for i in range(part.count) if not (staging / str(i)).exists()), None)
        if lacking is not None:
            return ReportPartAck(part.sender, part.name, part.digest, lacking)
        blob = b"".join((staging / str(i)).read_bytes() for i in range(part.count))
        shutil.rmtree(staging, ignore_errors=True)
        if len(blob) != part.size or hashlib.sha256(blob).hexdigest() != part.digest:
            raise FeedRefused(f"the {part.count} parts of report {part.name} do not make the report of digest "
                              f"{part.digest[:12]}...: they are discarded; send the report again")
        try:
            files = files_of_blob(blob)
        except FeedFormatError as error:
            raise FeedRefused(f"report {part.name}: {error}") from None
        return self.take(Report(part.sender, part.name, files), certified)

    def _latest(self) -> dict[tuple[str, str], str]:
        """The digest of the last files received of each (sender, report), from the journal once."""
        if self._digests is None:
            self._digests = {(r.sender, r.name): r.digest for r in reversed(self.received())}
        return self._digests

    def received(self) -> list[ReceivedReport]:
        """Every report received, as journaled, newest first."""
        if self.journal is None:
            return []
        kept = [ReceivedReport(r.payload["sender"], r.payload["name"], r.payload["digest"], r.payload["verified"],
                               r.payload["detail"], r.time_ms)
                for r in self.journal.records() if r.type == "feed_report_received"]
        return list(reversed(kept))
