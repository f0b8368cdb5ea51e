"""Checkpoints: a signed snapshot of every module's projection at a journal record.

A start that replays the whole journal costs every record's signature and every
record folded into every module; with a checkpoint it costs the records after it.  A
checkpoint holds the command core's state (:meth:`server_kit.core.CommandCore.checkpoint`)
as of record ``seq``, and is bound to the chain by that record's ``hash``.

**Stored** as files in a folder of the server's (``<home>/checkpoints/``, mode 0700,
files 0600), one per checkpoint, named by its sequence number, written atomically (a
temporary file of the folder, fsync, rename, fsync of the folder; a write that fails
removes its temporary file, and one a crash left is removed at the next start,
:meth:`CheckpointStore.remove_partials`); the newest :data:`KEPT` are kept.  A file is
one line of JSON, the *header*, then the state as zlib-compressed JSON::

    {"format": "bingo-checkpoint/1", "seq": 1042, "hash": "9f2c...", "time_ms": ...,
     "release": "<the release's fingerprint>", "state_sha256": "...", "signature": "..."}

The signature is the journal key's Ed25519 signature of the canonical JSON of the
header without ``signature`` (keys sorted, no spaces): it covers the state through its
SHA-256, the record it stands at, and the release that wrote it.

**Trusted** only when all of this holds (:meth:`CheckpointStore.newest_valid`): the
header is a checkpoint's, signed by the journal key; the state's hash matches; it was
written by this release (another release's state may not mean the same); the
journal's record at ``seq`` has ``hash``; and the state says it was built from the
journal (its ``folded``, the records its modules hold counted from the first, is
``seq``).  A checkpoint that fails is logged and passed over for the one before it, or
for a full replay: it is never trusted.  One whose ``seq`` lies past the journal's end
refuses the start (:class:`ChainError`), as a head past the end does: records were
cut.  The start then checks the records up to ``seq`` by their hashes and links
(:meth:`server_kit.journal.sql.Journal.verify_links`), and those after it in full.

**Written** by :class:`CheckpointService` every ``every_records`` records or
``every_seconds`` seconds on the server's clock, whichever comes first, and at a clean
stop: the projection is copied into JSON-able data on the reactor thread between two
commands (the state must be that of one record), then compressed, signed and written
on a thread pool of its own, so a commit never waits for it.  Only of a state built
from the journal: none while records decided wait for their commit, while the core's
``storage_fault`` is set, when its ``folded`` is not its ``seq`` (the core refuses), or
once the server stops on a fault (:meth:`CheckpointService.forbid`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Protocol

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.application.service import Service
from twisted.internet import defer, task
from twisted.logger import Logger
from twisted.python.threadpool import ThreadPool

from protocol.chain import ChainError, canonical_json
from protocol.errors import N_, DomainError
from server_kit.journal.port import JournalPort
from server_kit.journal.projection import gc_paused

FORMAT = "bingo-checkpoint/1"
#: How many checkpoints are kept: the newest, and older ones to fall back on.
KEPT = 3
_NAME = re.compile(r"^checkpoint-(\d{12})\.ckpt$")
#: How a checkpoint being written ends its name until it is whole and renamed.
PARTIAL = ".partial"

log = Logger()


def _sync_folder(folder: Path) -> None:
    """Flush ``folder``'s entries to the disk: a rename or a removal in it then survives a power cut."""
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


class CheckpointError(DomainError):
    """A checkpoint that is not trusted; the message says why (it is passed over, not fatal)."""


@dataclass(frozen=True)
class Checkpoint:
    """A verified checkpoint: the state as of record ``seq``, whose hash is ``hash``."""

    seq: int
    hash: str
    time_ms: int
    release: str
    state: Mapping[str, Any]
    path: Path | None = None


def _signed_part(header: Mapping[str, Any]) -> bytes:
    return canonical_json({k: v for k, v in header.items() if k != "signature"})


class CheckpointStore:
    """The checkpoint files in ``folder``, signed and checked with the journal key."""

    def __init__(self, folder: Path, key: Ed25519PrivateKey, release: str) -> None:
        self.folder = folder
        self.key = key
        self.release = release

    def paths(self) -> list[Path]:
        """The checkpoint files, newest first."""
        try:
            names = [p for p in self.folder.iterdir() if _NAME.match(p.name)]
        except FileNotFoundError:
            return []
        return sorted(names, key=lambda p: p.name, reverse=True)

    def write(self, seq: int, hash: str, time_ms: int, state: Mapping[str, Any]) -> Path:
        """Write the checkpoint of ``state`` at record ``seq`` (blocking: off the reactor thread).

        Into a temporary file of the folder, flushed to the disk, renamed into place, and
        the folder flushed too (the rename is then durable); a write that fails (a full
        disk) removes its temporary file and raises: no partial file is left.
        """
        with gc_paused():
            data = zlib.compress(json.dumps(state, separators=(",", ":")).encode(), 1)
        header: dict[str, Any] = {
            "format": FORMAT, "seq": seq, "hash": hash, "time_ms": time_ms, "release": self.release,
            "state_sha256": hashlib.sha256(data).hexdigest(),
        }
        header["signature"] = self.key.sign(_signed_part(header)).hex()
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.folder / f"checkpoint-{seq:012d}.ckpt"
        descriptor, partial = tempfile.mkstemp(prefix=f"{path.name}.", suffix=PARTIAL, dir=self.folder)  # 0600
        try:
            with os.fdopen(descriptor, "wb") as stream:
                stream.write(json.dumps(header, sort_keys=True).encode() + b"\n")
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(partial, path)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise
        for old in self.paths()[KEPT:]:
            old.unlink(missing_ok=True)
        _sync_folder(self.folder)
        return path

    def remove_partials(self) -> None:
        """Remove what a write cut short by a crash left (a write that fails removes its own)."""
        try:
            leftovers = [p for p in self.folder.iterdir() if p.name.endswith(PARTIAL)]
        except FileNotFoundError:
            return
        for leftover in leftovers:
            log.info("Removing {path}, a checkpoint whose writing was cut short", path=str(leftover))
            leftover.unlink(missing_ok=True)

    def read(self, path: Path) -> Checkpoint:
        """The checkpoint in ``path`` if it is signed by the key and whole; else :class:`CheckpointError`.

        Whether it is this release's and stands on the journal is :meth:`newest_valid`'s to check.
        """
        try:
            content = path.read_bytes()
        except OSError as error:
            raise CheckpointError(f"{path} cannot be read: {error.strerror or error}") from None
        first, _, data = content.partition(b"\n")
        try:
            header = json.loads(first)
        except ValueError:
            raise CheckpointError(f"{path} is not a checkpoint (its header is unreadable)") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise CheckpointError(f"{path} is not a {FORMAT} checkpoint")
        seq, hash, time_ms = header.get("seq"), header.get("hash"), header.get("time_ms")
        if (
            type(seq) is not int or seq < 1 or type(time_ms) is not int
            or not isinstance(hash, str) or not isinstance(header.get("signature"), str)
        ):
            raise CheckpointError(f"{path} is not a signed checkpoint (its header is incomplete)")
        try:
            self.key.public_key().verify(bytes.fromhex(header["signature"]), _signed_part(header))
        except (InvalidSignature, ValueError):
            raise CheckpointError(f"{path} (record {seq}) is not signed by the journal's key (altered or forged)") from None
        if hashlib.sha256(data).hexdigest() != header.get("state_sha256"):
            raise CheckpointError(f"{path} (record {seq}): its state does not match its signed hash (altered)")
        if not isinstance(header.get("release"), str):
            raise CheckpointError(f"{path} (record {seq}) does not say which release wrote it")
        try:
            with gc_paused():
                state = json.loads(zlib.decompress(data))
        except (zlib.error, ValueError):
            raise CheckpointError(f"{path} (record {seq}): its state cannot be read") from None
        return Checkpoint(seq, hash, time_ms, header["release"], state, path)

    def newest_valid(self, journal: JournalPort) -> Checkpoint | None:
        """The newest checkpoint that is trusted against ``journal``, or ``None`` (full replay).

        Raises :class:`ChainError` when a checkpoint signed by the key stands past the
        journal's last record: the journal was cut after it.
        """
        last = journal.last
        for path in self.paths():
            try:
                checkpoint = self.read(path)
            except CheckpointError as error:
                log.warn("Checkpoint passed over: {reason}", reason=str(error))
                continue
            end = last.seq if last is not None else 0
            if checkpoint.seq > end:  # whichever release wrote it: signed, it says records were cut
                raise ChainError(end + 1, N_("is missing: the journal ends at {last} but its checkpoint {path} stands "
                                             "at record {record}"), last=end, path=path, record=checkpoint.seq)
            if checkpoint.release != self.release:
                log.warn("Checkpoint passed over: {path} (record {seq}) was written by another release of the "
                         "software", path=str(path), seq=checkpoint.seq)
                continue
            record = journal.record(checkpoint.seq)
            if record is None or record.hash != checkpoint.hash:
                log.warn(
                    "Checkpoint passed over: {path} (record {seq}) does not match the journal's record {seq}",
                    path=str(path), seq=checkpoint.seq,
                )
                continue
            folded = checkpoint.state.get("folded")
            if folded != checkpoint.seq:
                log.warn(
                    "Checkpoint passed over: {path} (record {seq}) holds a state built from {folded} of the {seq} "
                    "records it stands for: it was not built from the journal",
                    path=str(path), seq=checkpoint.seq, folded=folded if type(folded) is int else "an unknown number",
                )
                continue
            return checkpoint
        return None


class Checkpointed(Protocol):
    """What :class:`CheckpointService` needs of the command core."""

    seq: int
    last_hash: str | None
    observers: list[Callable[[Any], None]]

    def checkpoint(self) -> Mapping[str, Any]:
        """The state, with ``folded``: how many records it holds, from the first (``seq`` when built
        from the journal); :class:`DomainError` when it cannot be kept."""
        ...

    def settled(self) -> bool:
        """No decided record waits for its commit (a checkpoint holds committed state only)."""
        ...


class CheckpointService(Service):
    """Writes the core's checkpoints now and then and at a clean stop (see the module docstring).

    ``run_blocking(function, *args)`` runs the compression, signing and writing off the
    reactor thread (``deferToThreadPool`` on a pool of the service's own in the server).
    """

    def __init__(
        self,
        core: Checkpointed,
        store: CheckpointStore,
        clock: Any,
        run_blocking: Callable[..., "defer.Deferred[Any]"],
        *,
        pool: ThreadPool | None = None,
        written_seq: int = 0,
        written_ms: int | None = None,
        every_records: int = 50_000,
        every_seconds: float = 600.0,
    ) -> None:
        self.core = core
        self.store = store
        self.clock = clock
        self.run_blocking = run_blocking
        self.pool = pool
        self.every_records = every_records
        self.every_seconds = every_seconds
        #: The record of the newest checkpoint (the one the start came from, or 0).
        self.written_seq = written_seq
        #: When the newest checkpoint was written (its records' time, ms; None: none yet).
        self.written_ms = written_ms
        self._writing: defer.Deferred[Any] | None = None
        self._timer: task.LoopingCall | None = None
        #: Why no checkpoint may be written any more (None: they may): see :meth:`forbid`.
        self.forbidden: str | None = None
        #: A checkpoint came due while a batch waited for its commit: the next commit writes it.
        self._due = False

    def forbid(self, reason: str) -> None:
        """Write no checkpoint from now on, not even at the stop: the server stops on a fault
        (its journal is not the one it reported) and its state is not to be kept."""
        self.forbidden = reason

    def startService(self) -> None:
        super().startService()
        if self.pool is not None:
            self.pool.start()
        self.core.observers.append(self._record_committed)
        self._timer = task.LoopingCall(self.write)
        self._timer.clock = self.clock
        self._timer.start(self.every_seconds, now=False)

    def stopService(self) -> defer.Deferred[Any]:
        super().stopService()
        if self._record_committed in self.core.observers:
            self.core.observers.remove(self._record_committed)
        if self._timer is not None and self._timer.running:
            self._timer.stop()
        waiting = self._writing if self._writing is not None else defer.succeed(None)
        last = waiting.addCallback(lambda _: self.write())
        pool = self.pool
        if pool is not None:

            def stop_pool(outcome: Any) -> Any:
                pool.stop()  # once the last checkpoint is written (stop() joins its thread)
                return outcome

            last.addBoth(stop_pool)
        return last

    def _record_committed(self, record: Any) -> None:
        if self._due or self.core.seq - self.written_seq >= self.every_records:
            self.write()

    def write(self) -> defer.Deferred[Any]:
        """Write a checkpoint at the core's last record, unless one is being written or nothing is new."""
        if self._writing is not None or self.core.seq <= self.written_seq or self.core.last_hash is None:
            return defer.succeed(None)
        if self.forbidden is not None:
            return defer.succeed(None)
        if not self.core.settled():  # a batch decided but not committed: the next commit tries again
            self._due = True
            return defer.succeed(None)
        fault = getattr(self.core, "storage_fault", None)
        if fault:  # the state may not be the journal's while its storage fails: the next commit tries again
            log.warn("No checkpoint at record {seq} while the storage fails ({fault})", seq=self.core.seq, fault=fault)
            self._due = True
            return defer.succeed(None)
        self._due = False
        seq, hash = self.core.seq, self.core.last_hash
        try:
            state = self.core.checkpoint()
        except DomainError as error:  # a module that cannot be kept: the next start replays it
            log.warn("No checkpoint at record {seq}: {reason}", seq=seq, reason=str(error))
            self.written_seq = seq
            return defer.succeed(None)
        time_ms = int(self.clock.seconds() * 1000)
        writing = self.run_blocking(self.store.write, seq, hash, time_ms, state)
        self._writing = writing

        def written(path: Path) -> None:
            if seq >= self.written_seq:
                self.written_seq, self.written_ms = seq, time_ms
            log.info("Checkpoint written at record {seq}: {path}", seq=seq, path=str(path))

        def failed(failure: Any) -> None:
            if failure.check(OSError):  # a full disk, a folder made read-only: said in one line, nothing left behind
                log.critical("The checkpoint at record {seq} could not be written in {folder}: {reason}; no file of it "
                             "is left, and a start uses the checkpoint before it or replays the journal", seq=seq,
                             folder=str(self.store.folder), reason=failure.value.strerror or str(failure.value))
            else:
                log.failure("The checkpoint at record {seq} could not be written", failure, seq=seq)

        def done(_: Any) -> None:
            self._writing = None

        return writing.addCallbacks(written, failed).addBoth(done)
