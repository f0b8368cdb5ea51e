"""What a supervisor, a load balancer and Prometheus read of a running server.

Every server puts the same three resources on its web site (:meth:`Monitor.put_on`), or,
when it has no web site of its own, serves them alone on a loopback port
(:func:`monitor_site`):

``GET /health``
    200 ``{"alive": true}`` while the process answers at all (its reactor runs).
``GET /ready``
    200 ``{"ready": true}`` once every readiness check of the server passes; 503
    ``{"ready": false, "why": {"check": "sentence", ...}}`` before (the journal not yet
    verified, the port not yet serving) and whenever one fails again (the storage
    unavailable, a standby that does not act).  The sentences name the check's cause, never
    a path or a person.
``GET /metrics``
    the server's metrics in Prometheus's text format (``prometheus_client``): the
    commands carried out and refused by command, each commit's latency, the journal's last
    record, the open connections, the storage alarm, the checkpoint's age, readiness, the
    release, and the process's own (CPU, memory, descriptors, garbage collector).  They
    hold no personal data and no money; still, they are answered to loopback clients
    only (:data:`LOOPBACK_ONLY`): a scraper reads them on the server's machine (or
    through an agent or tunnel there), never a player on the hall's network.

The metrics are counted on the reactor's thread by the parts the composition root gives
the monitor (:meth:`Monitor.watch_core` and the others) and read when scraped, on the
reactor's thread (:class:`MetricsResource`); the registry is the monitor's
own, so two servers in one process (tests) never mix their counts.  Nothing here knows
any bingo rule.
"""

from __future__ import annotations

import ipaddress
import time
from typing import Any, Callable

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    Info,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.exposition import choose_encoder
from twisted.internet.endpoints import TCP4ServerEndpoint
from twisted.web.resource import Resource
from twisted.web.server import Request

from server_kit.core import CommandCore
from server_kit.db.faults import StorageUnavailable
from server_kit.release import release_version
from server_kit.services import WebService
from server_kit.web.http import error_body, json_response, secure, secure_site

#: The commit latencies' buckets, in seconds: SQLite with full fsync commits in a few ms,
#: PostgreSQL's synchronous replication in tens; past a second a sale's close feels it.
COMMIT_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: A command's outcome as the metrics count it.
CARRIED_OUT, REFUSED, STORAGE_UNAVAILABLE = "carried_out", "refused", "storage_unavailable"
#: The label of a command name the server does not know (a client's typo must not make a series).
UNKNOWN_COMMAND = "unknown"
#: Whether /metrics answers loopback clients only (the documented default, docs/deploy.md).
LOOPBACK_ONLY = True
#: The largest request the monitoring port reads: it reads none (GETs only).
MONITOR_BODY_BYTES = 1024

#: A readiness check: None when it passes, else why not in one sentence.
Check = Callable[[], "str | None"]


class Monitor:
    """One server's readiness checks and metrics; ``server`` names it (``hall``, ``central``, ``regulator``)."""

    def __init__(self, server: str, *, timer: Callable[[], float] = time.monotonic) -> None:
        self.server = server
        self.timer = timer
        self.registry = CollectorRegistry()
        ProcessCollector(registry=self.registry)
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        Info("bingo_release", "The release this process runs.", registry=self.registry).info(
            {"version": release_version(), "server": server})
        self.checks: list[tuple[str, Check]] = []
        Gauge("bingo_ready", "1 when /ready answers 200, else 0.", registry=self.registry).set_function(
            lambda: 0.0 if self.not_ready() else 1.0)

    # --- Readiness ---------------------------------------------------------------------------

    def require(self, name: str, check: Check) -> None:
        """``check`` must pass (return None) for the server to be ready; ``name`` keys its reason."""
        self.checks.append((name, check))

    def not_ready(self) -> dict[str, str]:
        """Why the server is not ready, by check; empty when it is."""
        reasons = {}
        for name, check in self.checks:
            try:
                why = check()
            except Exception as error:  # a check that fails is a server that is not ready
                why = f"the check failed: {type(error).__name__}"
            if why is not None:
                reasons[name] = why
        return reasons

    def require_flag(self, name: str, why: str) -> Callable[..., Any]:
        """A check that fails with ``why`` until the returned function is called (once the
        journal is verified, once the port listens); called as a Deferred's callback, it
        passes the result on."""
        done = [False]
        self.require(name, lambda: None if done[0] else why)

        def passed(result: Any = None) -> Any:
            done[0] = True
            return result

        return passed

    # --- What is counted ---------------------------------------------------------------------

    def watch_core(self, core: CommandCore) -> None:
        """The core's commands by outcome, its commits' latency, its journal's last record and
        its storage alarm; and the storage as a readiness check."""
        commands = Counter("bingo_commands", "Commands answered, by command and outcome.",
                           ["command", "outcome"], registry=self.registry)
        latency = Histogram("bingo_commit_seconds", "Time from a batch of commands sent to the database's writer "
                            "to its commit (or failure).", buckets=COMMIT_BUCKETS, registry=self.registry)
        Gauge("bingo_journal_last_record", "The journal's last record decided (its seq).",
              registry=self.registry).set_function(lambda: core.seq)
        Gauge("bingo_commits", "Transactions committed since the start.",
              registry=self.registry).set_function(lambda: core.commits)
        Gauge("bingo_storage_unavailable", "1 while the storage refuses commits (every command is refused).",
              registry=self.registry).set_function(lambda: 0.0 if core.storage_fault is None else 1.0)

        counted: dict[tuple[str, str], Any] = {}  # each command's and outcome's counter, looked up once

        def answered(command: str, refusal: BaseException | None) -> None:
            name = command if command in core.permissions or command in core.commands else UNKNOWN_COMMAND
            outcome = (CARRIED_OUT if refusal is None else
                       STORAGE_UNAVAILABLE if isinstance(refusal, StorageUnavailable) else REFUSED)
            counter = counted.get((name, outcome))
            if counter is None:
                counter = counted[name, outcome] = commands.labels(command=name, outcome=outcome)
            counter.inc()

        core.answered.append(answered)
        core.commit_timed.append(latency.observe)
        self.require("storage", lambda: None if core.storage_fault is None else
                     f"the storage is unavailable ({core.storage_fault.kind}): commands are refused")

    def watch_connections(self, guard: Any) -> None:
        """The connections open through a :class:`~server_kit.connections.ConnectionGuard`."""
        Gauge("bingo_connections_open", "Connections open on the server's ports.",
              registry=self.registry).set_function(lambda: len(guard.open))
        Gauge("bingo_connections_budget", "Connections the file descriptors allow.",
              registry=self.registry).set_function(lambda: guard.budget)

    def watch_checkpoints(self, checkpoints: Any, core: CommandCore, clock: Any) -> None:
        """How old the newest checkpoint is, and how many records a start would replay after it."""
        def age_s() -> float:
            written = checkpoints.written_ms
            return float("nan") if written is None else max(0.0, clock.seconds() - written / 1000)

        Gauge("bingo_checkpoint_age_seconds", "Seconds since the newest checkpoint was written (NaN: none yet).",
              registry=self.registry).set_function(age_s)
        Gauge("bingo_checkpoint_records_behind", "Records after the newest checkpoint (a start replays them).",
              registry=self.registry).set_function(lambda: max(0, core.seq - checkpoints.written_seq))

    def gauge(self, name: str, description: str, read: Callable[[], float]) -> None:
        """A server's own figure (a receiver's journal, feeds connected), read when scraped."""
        Gauge(name, description, registry=self.registry).set_function(read)

    # --- The resources -----------------------------------------------------------------------

    def resources(self) -> dict[bytes, Resource]:
        metrics = MetricsResource(self.registry)
        return {b"health": HealthResource(), b"ready": ReadyResource(self),
                b"metrics": LocalOnly(metrics) if LOOPBACK_ONLY else metrics}

    def put_on(self, root: Resource) -> None:
        """``/health``, ``/ready`` and ``/metrics`` on a server's site."""
        for name, resource in self.resources().items():
            root.putChild(name, resource)


class HealthResource(Resource):
    isLeaf = True

    def render_GET(self, request: Request) -> bytes:
        return json_response(request, 200, {"alive": True})


class ReadyResource(Resource):
    isLeaf = True

    def __init__(self, monitor: Monitor) -> None:
        super().__init__()
        self.monitor = monitor

    def render_GET(self, request: Request) -> bytes:
        why = self.monitor.not_ready()
        if why:
            return json_response(request, 503, {"ready": False, "why": why})
        return json_response(request, 200, {"ready": True})


def is_loopback(request: Request) -> bool:
    """Whether the request's peer is this machine (127.0.0.0/8, ::1 or an IPv4-mapped loopback)."""
    host = getattr(request.getClientAddress(), "host", None)
    if not host:
        return False
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


class MetricsResource(Resource):
    """The registry in the format the scraper asks for (Prometheus's text, or OpenMetrics).

    Rendered on the reactor's thread, where every figure it reads is kept: a few dozen
    values, read in well under a millisecond.  (``prometheus_client.twisted``'s resource
    runs the rendering on the reactor's thread pool and imports the global reactor when it is
    imported, before a server has installed its own.)
    """

    isLeaf = True

    def __init__(self, registry: CollectorRegistry) -> None:
        super().__init__()
        self.registry = registry

    def render_GET(self, request: Request) -> bytes:
        accept = request.getHeader(b"accept")
        encoder, content_type = choose_encoder(accept.decode("latin-1") if accept is not None else "")
        request.setHeader(b"content-type", content_type.encode("ascii"))
        return encoder(self.registry)


class LocalOnly(Resource):
    """``resource`` for loopback clients; 403 in JSON for anyone else."""

    isLeaf = True

    def __init__(self, resource: Resource) -> None:
        super().__init__()
        self.resource = resource

    def render(self, request: Request) -> Any:
        if not is_loopback(request):
            return error_body(request, 403, "forbidden", "the metrics are read on the server's own machine only")
        if request.method not in (b"GET", b"HEAD"):
            return error_body(request, 405, "method_not_allowed", "the metrics are read with GET")
        secure(request)
        request.setHeader(b"cache-control", b"no-store")
        return self.resource.render(request)


class _Root(Resource):
    def getChild(self, path: bytes, request: Request) -> Resource:
        return _NotServed()


class _NotServed(Resource):
    isLeaf = True

    def render(self, request: Request) -> bytes:
        return error_body(request, 404, "not_found", "this port serves /health, /ready and /metrics only")


def monitor_site(monitor: Monitor, reactor: Any, port: int, interface: str = "127.0.0.1") -> WebService:
    """The three resources alone, over plain HTTP on ``interface:port`` (loopback by default),
    for a server whose own ports are not HTTP (the central server's, the receiver's feeds)."""
    root = _Root()
    monitor.put_on(root)
    endpoint = TCP4ServerEndpoint(reactor, port, interface=interface)
    return WebService(endpoint, secure_site(root, max_body_bytes=MONITOR_BODY_BYTES))
