"""The active and the standby process of a replicated central server (R92.6, docs/replica.md).

A replicated central server is two processes, one beside each PostgreSQL node of the
pair Patroni runs; ``[replica]`` in each one's ``central.toml`` names its local node and
that node's Patroni.  Exactly one process is **active**: the one whose local node is
Patroni's leader (its REST API answers ``200`` to ``GET /primary``: a running primary
holding the leader key) and that holds the central leadership, the epoch row of
:mod:`central_server.leadership` on that database.  The other is the **standby**: it
follows the journal its local replica receives (verifying every record, keeping its own
signed head), keeps the network games folded from it, and refuses every hall and
operator command with the code ``standby``, which tells a hall to try the other endpoint.

:class:`RoleMachine` is the lifecycle, a transition table (:data:`TABLE`) of roles,
inputs and effects; :class:`ReplicaRole` is its shell: it asks the local Patroni every
:data:`POLL_S` seconds, feeds the answer to the machine and carries out the effects
(``take_over``: the composition root's takeover; ``serve``: the active process starts
its timers and services; ``stop``: the process ends, and its supervisor starts it again
as a standby).

**The lease.**  The active process acts (answers halls, fires timers, commits) only
while its node's leadership was confirmed within :data:`LEASE_S` seconds; the fence
(:class:`central_server.leadership.Fence`) refuses any commit once the lease lapsed.
Patroni's leader key lives :data:`central_server.cluster.TTL` seconds (20) after its
last renewal, and another node is promoted only after it expired, so a process whose
node stopped renewing the key (killed, paused, cut off) has stopped acting before the
other process can start: a paused process that wakes up finds its lease lapsed and
stops before anything of it is committed.  The database fences it twice more: its
commits wait for the synchronous standby, which no longer follows it, until Patroni
demotes its node; and the epoch row of the new leader is ahead of its own.
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import urllib.error
import urllib.request
from enum import StrEnum
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from twisted.application.service import Service
from twisted.internet import defer, task
from twisted.internet.interfaces import IReactorTime
from twisted.logger import Logger
from twisted.python.failure import Failure

from protocol.chain import sign_head, verify_chain
from server_kit.journal import table
from server_kit.journal.sql import Journal, read_head
from server_kit.pki import client_ssl_context

#: How often the local Patroni is asked whether its node leads, in seconds.
POLL_S = 0.5
#: The active process acts only while its node's leadership was confirmed this recently.
LEASE_S = 8.0
#: How long one question to Patroni may take before it counts as unanswered.
PROBE_TIMEOUT_S = 2.0
#: How often the standby reads and verifies what its replica received.
FOLLOW_S = 1.0

#: ``central_leadership_taken.cause``: a process took the leadership beside the node it (or the
#: process before it) led from, at its start; or the database's leader moved to its node.
START, FAILOVER = "start", "failover"


class Role(StrEnum):
    """What a process of a replicated central server is doing."""

    STANDBY = "standby"
    TAKING = "taking"
    ACTIVE = "active"
    STOPPED = "stopped"


class Input(StrEnum):
    """What a process learns: from its Patroni, from its takeover, from its fence."""

    LEADER_SEEN = "leader_seen"  # the local node is Patroni's leader (GET /primary: 200)
    LEADER_LOST = "leader_lost"  # it is not (503)
    LEASE_LAPSED = "lease_lapsed"  # nothing confirmed it for LEASE_S seconds
    TAKEN = "taken"  # the takeover committed central_leadership_taken
    TAKE_FAILED = "take_failed"  # it could not (the node not writable yet, say)
    FENCED = "fenced"  # a commit was refused: another process holds a later epoch, or the lease lapsed


class Effect(StrEnum):
    """What the shell does on a transition."""

    TAKE_OVER = "take_over"
    SERVE = "serve"
    STOP = "stop"


R, I, E = Role, Input, Effect
Table = Mapping[tuple[Role, Input], tuple[Role, Effect | None]]

#: The lifecycle of one process.  A pair missing from the table leaves the role as it is.
TABLE: Table = {
    (R.STANDBY, I.LEADER_SEEN): (R.TAKING, E.TAKE_OVER),
    (R.STANDBY, I.FENCED): (R.STOPPED, E.STOP),
    (R.TAKING, I.TAKEN): (R.ACTIVE, E.SERVE),
    (R.TAKING, I.TAKE_FAILED): (R.STANDBY, None),
    (R.TAKING, I.FENCED): (R.STOPPED, E.STOP),
    (R.ACTIVE, I.LEADER_SEEN): (R.ACTIVE, None),
    (R.ACTIVE, I.LEADER_LOST): (R.STOPPED, E.STOP),
    (R.ACTIVE, I.LEASE_LAPSED): (R.STOPPED, E.STOP),
    (R.ACTIVE, I.FENCED): (R.STOPPED, E.STOP),
}


def render_table(table: Table = TABLE) -> str:
    """The table as Markdown, as ``docs/replica.md`` shows it."""
    lines = ["| role | input | new role | effect |", "|---|---|---|---|"]
    for (role, input), (target, effect) in table.items():
        lines.append(f"| {role} | {input} | {target} | {effect or ''} |")
    return "\n".join(lines)


class RoleMachine:
    """The role of one process and its lease on the leadership; the clock comes in with each input."""

    def __init__(self, lease_ms: int = int(LEASE_S * 1000)) -> None:
        self.role = Role.STANDBY
        self.lease_ms = lease_ms
        #: When the local node's leadership was last confirmed (ms), or None.
        self.confirmed_ms: int | None = None

    def handle(self, input: Input, now_ms: int) -> Effect | None:
        """Feed ``input``; the effect to carry out, if any."""
        if input is Input.LEADER_SEEN:
            self.confirmed_ms = now_ms
        elif input is Input.LEADER_LOST:
            self.confirmed_ms = None
        move = TABLE.get((self.role, input))
        if move is None:
            return None
        self.role, effect = move
        return effect

    def lapsed(self, now_ms: int) -> bool:
        """Whether the leadership went unconfirmed for longer than the lease."""
        return self.confirmed_ms is None or now_ms - self.confirmed_ms > self.lease_ms

    def acting(self, now_ms: int) -> bool:
        """Whether this process may act now (answer halls, fire timers): active, its lease not lapsed."""
        return self.role is Role.ACTIVE and not self.lapsed(now_ms)

    def may_commit(self, now_ms: int) -> bool:
        """Whether this process may commit now: taking over or active, its lease not lapsed."""
        return self.role in (Role.TAKING, Role.ACTIVE) and not self.lapsed(now_ms)


# --- Patroni -------------------------------------------------------------------------


def patroni_context(pki_dir: Path, name: str, url: str) -> ssl.SSLContext | None:
    """TLS to the Patroni REST API at ``url`` (``https://``): Patroni's certificate checked against
    the operator's authority, the central server's own certificate ``name`` presented (the set's
    Patroni admits no client without one, docs/replica.md); None for ``http://``."""
    return client_ssl_context(pki_dir, name) if url.startswith("https://") else None


def patroni_leads(url: str, context: ssl.SSLContext | None = None, timeout: float = PROBE_TIMEOUT_S) -> bool | None:
    """Whether the node of the Patroni at ``url`` is the leader (``GET /primary``); None: no answer.

    Blocking: for the composition root before the reactor runs, the CLI and the tests.
    """
    try:
        with urllib.request.urlopen(url + "/primary", timeout=timeout,  # noqa: S310 - the configured API
                                    context=context) as answer:
            return bool(answer.status == 200)
    except urllib.error.HTTPError as error:
        return False if error.code == 503 else None
    except OSError:
        return None


def patroni_cluster(url: str, context: ssl.SSLContext | None = None,
                    timeout: float = PROBE_TIMEOUT_S) -> dict[str, Any] | None:
    """Patroni's ``GET /cluster`` (every member, its role, state, timeline and lag), or None."""
    try:
        with urllib.request.urlopen(url + "/cluster", timeout=timeout,  # noqa: S310 - the configured API
                                    context=context) as answer:
            return dict(json.loads(answer.read()))
    except (OSError, ValueError):
        return None


class PatroniProbe:
    """Asks the local Patroni whether its node leads, off the reactor thread (one question at a time)."""

    def __init__(self, url: str, run: Callable[..., "defer.Deferred[Any]"],
                 context: ssl.SSLContext | None = None) -> None:
        self.url = url
        self.run = run  # runs a blocking function off the reactor (deferToThreadPool)
        self.context = context

    def leader(self) -> "defer.Deferred[bool | None]":
        return self.run(patroni_leads, self.url, self.context)


# --- Following the journal -----------------------------------------------------------


def follow_journal(journal: Journal) -> int:
    """Verify what the active process committed since this standby last looked, and keep a head of it.

    The first time (no head of its own yet, the process's first start beside a node
    that was cloned from the other) the whole replicated journal is checked, hash, link
    and signature, and its last record becomes this process's signed head; from then
    on the records after :attr:`Journal.last` are checked the same way
    (:meth:`Journal.follow`) and the head follows them.  Blocking (the database); the
    number of records followed.  Raises :class:`~protocol.chain.ChainError` when a
    record does not verify: then this process never takes over on that journal.
    """
    if read_head(journal.head) is None:
        last = table.last_record(journal.engine)
        if last is None:
            return 0
        verified = verify_chain(table.read(journal.engine), journal.key.public_key(), head=sign_head(journal.key, last),
                                where="the replicated journal's last record")
        journal.last = table.record(journal.engine, verified)
        journal.write_head()
        return verified
    followed = journal.follow()
    journal.repair_head()
    return followed


def holder_name(central_id: str, node: str, host: str, pid: int) -> str:
    """Who holds the leadership: the central server's id, the node it runs beside, its host and process id."""
    return f"{central_id} beside {node} on {host} pid {pid}"


def cause_of(previous_holder: str | None, node: str) -> str:
    """Why a process beside ``node`` takes the leadership from ``previous_holder``: ``failover`` when
    that one ran beside another node (the database's leader moved), ``start`` otherwise."""
    if previous_holder is not None and " beside " in previous_holder and f" beside {node} " not in previous_holder:
        return FAILOVER
    return START


# --- The failover drill's stop point ---------------------------------------------------


class DrillPoint:
    """Where the failover drill stops the active process: after a commit, before the halls are told.

    Only with ``[replica] drill = true``.  ``SIGUSR1`` arms it for the next ball, ``SIGUSR2``
    for the next prize (a ball that won one); the process then sends itself ``SIGSTOP``
    as that ball's announcements are about to go out, committed on both nodes and
    told to nobody, and the drill kills its node there.  Called by the endpoint with
    every batch of announcements, on the reactor thread.
    """

    log = Logger()

    def __init__(self) -> None:
        self.armed: str | None = None  # "ball" or "prize"

    def install(self) -> None:
        signal.signal(signal.SIGUSR1, lambda *_: self.arm("ball"))
        signal.signal(signal.SIGUSR2, lambda *_: self.arm("prize"))

    def arm(self, moment: str) -> None:
        self.armed = moment

    def __call__(self, messages: Sequence[str]) -> None:
        if self.armed is None or "ball_drawn" not in messages:
            return
        if self.armed == "prize" and "prize_won" not in messages:
            return
        self.log.warn("Failover drill: stopped after the commit of a {moment}, before the halls are told",
                      moment=self.armed)
        self.armed = None
        os.kill(os.getpid(), signal.SIGSTOP)


# --- The shell -----------------------------------------------------------------------


class ReplicaRole(Service):
    """Asks the local Patroni, feeds the :class:`RoleMachine` and carries out its effects.

    ``take_over()`` takes the leadership (fires once ``central_leadership_taken`` is
    committed, fails if it could not be); ``follow()`` folds what the replica received
    (the standby's following); ``serve()`` starts what only the active process runs;
    ``stop(reason)`` ends the process.  :attr:`active` fires once this process is active.
    """

    log = Logger()

    def __init__(self, node: str, probe: PatroniProbe, clock: IReactorTime, *,
                 take_over: Callable[[], "defer.Deferred[Any]"], follow: Callable[[], "defer.Deferred[Any]"],
                 serve: Callable[[], Any], stop: Callable[[str], None], machine: RoleMachine | None = None) -> None:
        self.node = node
        self.probe = probe
        self.clock = clock
        self.machine = machine or RoleMachine()
        self._take_over, self._follow, self._serve, self._stop = take_over, follow, serve, stop
        self.active: defer.Deferred[None] = defer.Deferred()
        self._loop: task.LoopingCall | None = None
        self._asking = False
        self._following: defer.Deferred[Any] | None = None  # the standby's following in flight
        self._followed_at = float("-inf")
        #: Why the process stopped, once it did.
        self.stopped: str | None = None

    @property
    def role(self) -> Role:
        return self.machine.role

    def now_ms(self) -> int:
        return int(self.clock.seconds() * 1000)

    def acting(self) -> bool:
        """Whether this process may act now (for the edge)."""
        return self.machine.acting(self.now_ms())

    def may_commit(self) -> bool:
        """Whether this process may commit now (for the fence, on the writer thread)."""
        return self.machine.may_commit(self.now_ms())

    def startService(self) -> None:
        super().startService()
        self._loop = task.LoopingCall(self.tick)
        self._loop.clock = self.clock
        self._loop.start(POLL_S, now=True).addErrback(lambda f: self.log.failure("the replica's loop failed", f))

    def stopService(self) -> None:
        super().stopService()
        if self._loop is not None and self._loop.running:
            self._loop.stop()

    def tick(self) -> None:
        """One round: the lease, the question to Patroni, the standby's following."""
        if self.machine.role is Role.STOPPED:
            return
        if self.machine.role is Role.ACTIVE and self.machine.lapsed(self.now_ms()):
            self.feed(Input.LEASE_LAPSED, f"its node {self.node}'s leadership was not confirmed for {LEASE_S:.0f} s "
                                          "(Patroni not answering)")
            return
        if not self._asking:
            self._asking = True
            self.probe.leader().addCallbacks(self._answered, self._unanswered).addBoth(self._asked)
        if self.machine.role is Role.STANDBY and self._following is None and \
                self.clock.seconds() - self._followed_at >= FOLLOW_S:
            self._followed_at = self.clock.seconds()
            following = self._following = self._follow()
            following.addErrback(self._follow_failed).addBoth(self._followed)

    def _asked(self, _: Any) -> None:
        self._asking = False

    def _answered(self, leads: bool | None) -> None:
        if leads is True:
            self.feed(Input.LEADER_SEEN, f"{self.node} is Patroni's leader")
        elif leads is False:
            self.feed(Input.LEADER_LOST, f"{self.node} is no longer Patroni's leader")

    def _unanswered(self, failure: Failure) -> None:
        self.log.failure("Asking Patroni whether {node} leads failed", failure, node=self.node)

    def _followed(self, _: Any) -> None:
        self._following = None

    def _follow_failed(self, failure: Failure) -> None:
        self.log.warn("The standby could not follow the replicated journal yet: {why}", why=failure.getErrorMessage())

    def fenced(self, why: str) -> None:
        """The fence refused a commit (called on the reactor thread)."""
        self.feed(Input.FENCED, why)

    def feed(self, input: Input, why: str) -> None:
        before = self.machine.role
        effect = self.machine.handle(input, self.now_ms())
        if self.machine.role is not before:
            self.log.info("Central server beside {node}: {before} -> {after} ({why})", node=self.node,
                          before=str(before), after=str(self.machine.role), why=why)
        if effect is Effect.TAKE_OVER:
            self._taking()
        elif effect is Effect.SERVE:
            self._serve()
            self.active.callback(None)
        elif effect is Effect.STOP:
            self.stopped = why
            self.log.critical("The central server beside {node} stops acting: {why}; it ends, and started again "
                              "it waits as the standby (docs/replica.md)", node=self.node, why=why)
            self._stop(why)

    def _taking(self) -> None:
        """The takeover, once the following in flight (if any) is done: both move the journal's end."""

        def take(_: Any) -> defer.Deferred[Any]:
            return self._take_over()

        def taken(_: Any) -> None:
            self.feed(Input.TAKEN, "took the central leadership")

        def failed(failure: Failure) -> None:
            self.log.warn("Could not take the central leadership yet: {why}; trying again",
                          why=failure.getErrorMessage())
            self.feed(Input.TAKE_FAILED, failure.getErrorMessage())

        following: defer.Deferred[Any] = defer.Deferred()
        if self._following is None:
            following.callback(None)
        else:
            self._following.addBoth(following.callback)
        following.addCallback(take).addCallbacks(taken, failed).addErrback(
            lambda f: self.log.failure("the takeover's end failed", f))


__all__ = [
    "FAILOVER", "LEASE_S", "POLL_S", "START", "TABLE", "DrillPoint", "Effect", "Input", "PatroniProbe", "ReplicaRole",
    "Role",
    "RoleMachine", "cause_of", "follow_journal", "holder_name", "patroni_cluster", "patroni_context", "patroni_leads",
    "render_table",
]


# --- bingo central status --------------------------------------------------------------


def takeovers(engine: Any, limit: int = 50) -> list[dict[str, Any]]:
    """The latest ``central_leadership_taken`` records, newest first: time, epoch, cause, holder."""
    from sqlalchemy import select

    from server_kit.journal.table import JournalRecord

    query = (select(JournalRecord.seq, JournalRecord.time_ms, JournalRecord.payload)
             .where(JournalRecord.type == "central_leadership_taken").order_by(JournalRecord.seq.desc()).limit(limit))
    with engine.connect() as connection:
        rows = connection.execute(query).all()
    found = []
    for seq, time_ms, payload in rows:
        data = json.loads(payload)
        found.append({"seq": seq, "time_ms": time_ms, "epoch": data.get("epoch"), "cause": data.get("cause"),
                      "holder": data.get("holder"), "previous_epoch": data.get("previous_epoch")})
    return found


def status(configs: Sequence[Any], probe_port: Callable[[str, int], bool]) -> dict[str, Any]:
    """Where a (replicated) central server stands, from its processes' configurations: Patroni's view of
    the pair (leader, synchronous standby, lag, timelines), the leadership (epoch, holder, since) and the
    takeovers from the journal, and each process (its node's role, whether it listens)."""
    from sqlalchemy.engine import make_url

    from central_server import leadership
    from server_kit.db.database import create

    view = None
    for config in configs:
        if config.replica is not None:
            context = patroni_context(config.pki_dir, config.central_id, config.replica.patroni)
            view = patroni_cluster(config.replica.patroni, context)
            if view is not None:
                break
    members = {m.get("name"): m for m in (view or {}).get("members", [])}
    leader = next((name for name, m in members.items() if m.get("role") == "leader"), None)
    ordered = sorted(configs, key=lambda c: 0 if c.replica is not None and c.replica.node == leader else 1)
    found: dict[str, Any] = {"leader": leader, "members": list(members.values()), "leadership": None,
                             "takeovers": [], "database": None}
    for config in ordered:
        url = make_url(config.database_url)
        if url.get_backend_name().startswith("postgres"):
            url = url.update_query_dict({"connect_timeout": "3"})
        engine = create(url.render_as_string(hide_password=False), create_folder=False)
        try:
            epoch, holder = leadership.held(engine)
            found["leadership"] = {"epoch": epoch, "holder": holder}
            found["takeovers"] = takeovers(engine)
            found["database"] = config.replica.node if config.replica is not None else "local"
            break
        except Exception as error:
            found["database_error"] = str(error).strip().splitlines()[0]
        finally:
            engine.dispose()
    holder = (found["leadership"] or {}).get("holder") or ""
    found["processes"] = []
    for config in configs:
        node = config.replica.node if config.replica is not None else None
        host = "127.0.0.1" if config.interface in ("0.0.0.0", "") else config.interface
        member = members.get(node, {})
        active = node is None or (node == leader and f" beside {node} " in holder)
        found["processes"].append({
            "config": str(config.source), "node": node, "endpoint": f"{host}:{config.port}",
            "listening": probe_port(host, config.port), "role": "active" if active else "standby",
            "node_role": member.get("role"), "node_state": member.get("state"), "lag": member.get("lag"),
            "timeline": member.get("timeline"),
        })  # fmt: skip
    found["last_failover"] = next((t for t in found["takeovers"] if t["cause"] == FAILOVER), None)
    return found
