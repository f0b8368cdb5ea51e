"""What every server does before it serves: its journal verified (or begun), its modules rebuilt.

A hall server and a central server start the same way (docs/server-kit.md, "Start-up"):

1. :func:`open_journal`: a new journal (no record, no head) is begun with its opening
   record; any other is verified whole against its signed head before anything reads
   it - every record after the newest trusted checkpoint by hash, link and signature,
   those up to it by hash and link - and a head file that lagged the journal (a stop
   between a commit and the head's write) is brought up to it;
2. :func:`recover`: every module rebuilt from that checkpoint and the records after it,
   or from the whole journal; a checkpoint whose state does not fit the modules is
   passed over for the whole journal, verified first.

Anything that stops a start is a :class:`StartRefused` whose message is the one line the
operator reads.
"""

from __future__ import annotations

from typing import Any, Mapping

from twisted.logger import Logger

from protocol.chain import ChainError
from protocol.errors import DomainError
from protocol.records import RecordError
from server_kit.core import CheckpointRefused, CommandCore
from server_kit.journal.checkpoints import Checkpoint, CheckpointStore
from server_kit.journal.projection import ProjectionError
from server_kit.journal.sql import Journal

log = Logger()

#: What a checkpoint's state that does not fit raises when it is restored: it is then
#: passed over for the whole journal.
UNFIT_CHECKPOINT = (CheckpointRefused, ProjectionError, TypeError, ValueError, KeyError, AttributeError, IndexError)


class StartRefused(DomainError):
    """The server will not serve in the state it found; the message says why."""


def journal_refused(error: ChainError, server: str, advice: str = "") -> StartRefused:
    """The refusal of a start on a journal that does not verify (``advice``: what to run or read)."""
    return StartRefused(
        f"the journal does not verify: {error}; the {server} does not serve on a broken journal"
        + (f" ({advice})" if advice else "")
    )


def open_journal(
    journal: Journal, now_ms: int, opening: Mapping[str, Any], server: str, advice: str = "",
    checkpoints: CheckpointStore | None = None,
) -> Checkpoint | None:
    """Verify the journal before anything reads it, or begin it with ``opening`` if it is new; the
    checkpoint to start from (None: the whole journal).

    A new journal is one with no record and no head: only then is it begun.  Anything
    else must verify against its signed head, whole: the records after the newest trusted
    checkpoint of ``checkpoints`` (or every record when there is none) by hash, link and
    signature, and the records up to the checkpoint by hash and link up to the checkpoint's
    own record (:meth:`Journal.verify_links`), so a record altered anywhere stops the
    start.  A signed checkpoint past the journal's end refuses the start, as a head past
    it does.  ``server`` and ``advice`` name the server and what to do in the refusal.
    """
    try:
        if checkpoints is not None:
            checkpoints.remove_partials()
        # Looked for before a new journal is begun: an emptied journal beside its signed
        # checkpoint is refused, never begun afresh.
        checkpoint = checkpoints.newest_valid(journal) if checkpoints is not None else None
        if journal.is_new:
            first = journal.initialise(now_ms, dict(opening))
            log.info("Started a new journal: record {seq} ({type})", seq=first.seq, type=first.type)
        if checkpoint is not None:
            journal.verify_links((checkpoint.seq, checkpoint.hash), f"the checkpoint {checkpoint.path}")
        anchor = (checkpoint.seq, checkpoint.hash) if checkpoint is not None else None
        last = journal.verify(after=anchor)
    except ChainError as error:
        raise journal_refused(error, server, advice) from None
    if journal.repair_head():
        log.warn("The journal head file lagged the journal; it now names record {seq}", seq=last)
    if checkpoint is None:
        log.info("Journal verified: {n} records, each hash, link and signature, and the signed head", n=last)
    else:
        log.info(
            "Journal verified: {n} records, each hash and link; the {after} after its checkpoint at record {seq} "
            "each signature too; and the signed head",
            n=last, after=last - checkpoint.seq, seq=checkpoint.seq,
        )
    return checkpoint


def recover(
    core: CommandCore, journal: Journal, checkpoint: Checkpoint | None, server: str, advice: str = ""
) -> tuple[int, int]:
    """Every module's state from ``checkpoint`` and the records after it, or from the whole
    journal; the checkpoint's record (0 for none) and how many records were folded.

    A checkpoint whose state does not fit the modules is passed over (and logged): the
    whole journal is then verified, as it was not at the start, and replayed.  A record
    that does not parse refuses the start, naming it.
    """
    if checkpoint is not None:
        try:
            core.restore(checkpoint.state, checkpoint.seq, checkpoint.hash)
        except UNFIT_CHECKPOINT as error:
            log.warn("Checkpoint passed over: {path} does not fit this server's modules ({reason}); replaying the "
                     "whole journal", path=str(checkpoint.path), reason=str(error))
            try:
                journal.verify()
            except ChainError as failed:
                raise journal_refused(failed, server, advice) from None
            checkpoint = None
    start = checkpoint.seq if checkpoint is not None else 0
    try:
        return start, core.recover(start)
    except RecordError as error:
        raise StartRefused(
            f"the journal does not parse: {error}; the {server} does not serve on a journal it cannot read "
            "(docs/journal.md)"
        ) from None
