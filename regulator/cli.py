"""``bingo regulator``: the regulator's reference receiver (docs/regulator-feed.md).

Found by the ``bingo`` command through the ``bingo.commands`` entry point group
(``regulator = regulator.cli:register`` in ``setup.cfg``).

* ``serve`` runs the receiver until interrupted;
* ``demo`` runs one for the demo hall on this machine, its certificate issued by the hall's
  local authority;
* ``status`` prints, from the receiver's store, each sender's position and every alert.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, cast

import click

from protocol.errors import DomainError
from server_kit.connections import ConnectionLimits

#: The connection limits' defaults (docs/security.md, "Connections").
_LIMITS = ConnectionLimits()

HOME = click.option("--dir", "home", type=click.Path(file_okay=False, path_type=Path), default=Path("var/regulator"),
                    show_default=True, help="The receiver's folder (its database).")
DB = click.option("--db", "database_url", default=None, metavar="URL",
                  help="The receiver's database (default: SQLite in --dir).")


@click.group()
def regulator() -> None:
    """The regulator's reference receiver of the real-time feed (R92.7)."""


@regulator.command()
@HOME
@DB
@click.option("--pki", "pki_dir", type=click.Path(file_okay=False, exists=True, path_type=Path), required=True,
              help="The folder with the regulator's certificate and key and the operator's ca.pem and crl.pem.")
@click.option("--certificate", default="regulator", show_default=True,
              help="The name of the regulator's certificate in --pki (issued with --host for this address).")
@click.option("--port", type=click.IntRange(0, 65535), default=None, help="The port (default 8700; 0: any free).")
@click.option("--interface", default="", help="The address to listen on (default: all).")
@click.option("--web-port", type=click.IntRange(0, 65535), default=None,
              help="The page's port (default 8701; 0: any free).")
@click.option("--web-interface", default="127.0.0.1", show_default=True,
              help="The address the page listens on: the loopback interface, for the staff at the receiver.")
@click.option("--no-page", is_flag=True, help="Serve the feeds only, no page.")
@click.option("--handshake-timeout", type=click.FloatRange(min=0.1, max=86_400), default=_LIMITS.handshake_timeout_s,
              show_default=True, help="Seconds a connection has to complete its TLS handshake.")
@click.option("--idle-timeout", type=click.FloatRange(min=0.1, max=86_400), default=_LIMITS.idle_timeout_s,
              show_default=True, help="Seconds a connection without a client certificate may be silent both ways.")
@click.option("--per-address", type=click.IntRange(1, 1_000_000), default=_LIMITS.per_address, show_default=True,
              help="Open connections without a certificate from one address.")
@click.option("--per-certificate", type=click.IntRange(1, 1_000_000), default=_LIMITS.per_certificate,
              show_default=True, help="Open connections presenting one certificate.")
@click.option("--reserved-descriptors", type=click.IntRange(1, 1_000_000), default=_LIMITS.reserved_descriptors,
              show_default=True, help="File descriptors kept free of connections, for the store and the logs.")
def serve(home: Path, database_url: str | None, pki_dir: Path, certificate: str, port: int | None,
          interface: str, web_port: int | None, web_interface: str, no_page: bool, handshake_timeout: float,
          idle_timeout: float, per_address: int, per_certificate: int, reserved_descriptors: int) -> None:
    """Receive feeds over mutual TLS until interrupted (Ctrl-C); the page shows the feeds and alerts."""
    from twisted.internet import reactor as global_reactor
    from twisted.logger import globalLogBeginner, textFileLogObserver

    from regulator.service import DEFAULT_PORT, DEFAULT_WEB_PORT, ReceiverService, ReceiverSettings

    reactor: Any = global_reactor
    home.mkdir(parents=True, exist_ok=True)
    limits = ConnectionLimits(handshake_timeout, idle_timeout, per_address, per_certificate, reserved_descriptors)
    settings = ReceiverSettings(home, pki_dir, certificate, DEFAULT_PORT if port is None else port, interface,
                                database_url, None if no_page else (DEFAULT_WEB_PORT if web_port is None else web_port),
                                web_interface, limits=limits)
    globalLogBeginner.beginLoggingTo([cast(Any, textFileLogObserver(sys.stdout))], redirectStandardIO=False)
    try:
        service = ReceiverService(reactor, settings)
    except DomainError as error:
        raise click.ClickException(f"the receiver cannot start: {error}") from None
    failed: list[str] = []

    def cannot_listen(failure: Any) -> None:
        failed.append(failure.getErrorMessage())
        reactor.stop()

    service.listening.addErrback(cannot_listen)
    reactor.callWhenRunning(service.startService)
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)
    reactor.run()
    if failed:
        raise click.ClickException(f"the receiver could not listen: {failed[0]}")


@regulator.command()
@click.option("--hall", "hall_home", type=click.Path(file_okay=False, path_type=Path), default=Path("var"),
              show_default=True, help="The demo hall's folder: its local authority (operator-ca/) issues the receiver's certificate.")
@click.option("--port", type=click.IntRange(1, 65535), default=8700, show_default=True)
@click.option("--web-port", type=click.IntRange(1, 65535), default=8701, show_default=True)
@click.pass_context
def demo(ctx: click.Context, hall_home: Path, port: int, web_port: int) -> None:
    """A receiver for the demo hall on this machine: its certificate issued once by the hall's
    local authority, its store in HALL/regulator; then as ``serve``. Start the hall with
    ``./run.sh --demo --regulator localhost:8700`` and open https://localhost:8701/."""
    from server_kit.pki import PkiError, PkiFolder, export_bundle, issue_certificate

    authority = PkiFolder(hall_home / "operator-ca")
    if not authority.ca_cert.exists():
        raise click.ClickException(f"no local authority in {authority.root}: start the demo hall once first "
                                   "(./run.sh --demo), it makes one")
    home = hall_home / "regulator"
    bundle = home / "pki"
    try:
        if not authority.cert("regulator").exists():
            issue_certificate(authority.root, "regulator", "regulator")
        if not PkiFolder(bundle).cert("regulator").exists():
            export_bundle(authority.root, "regulator", bundle)
    except PkiError as error:
        raise click.ClickException(f"the receiver's certificate cannot be issued: {error}") from None
    click.echo(f"The receiver's certificate: {bundle}; its page: https://localhost:{web_port}/ "
               f"(trust {authority.ca_cert}); feed it with: ./run.sh --demo --regulator localhost:{port}")
    ctx.invoke(serve, home=home, database_url=None, pki_dir=bundle, certificate="regulator", port=port,
               interface="127.0.0.1", web_port=web_port, web_interface="127.0.0.1", no_page=False)


@regulator.command()
@HOME
@DB
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object instead of lines.")
def status(home: Path, database_url: str | None, as_json: bool) -> None:
    """Each sender's position, each hall's last games, each day replayed card by card, and every alert,
    from the receiver's store."""
    from regulator.service import ReceiverSettings
    from regulator.store import Store, open_database
    from regulator.receiver import Receiver
    from regulator.web import status as status_of, when

    url = ReceiverSettings(home, home, database_url=database_url).url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        raise click.ClickException(f"no receiver's store at {url.removeprefix('sqlite:///')}: the receiver never ran there")
    engine = open_database(url, create_folder=False)
    try:
        store = Store(engine)
        senders = store.senders()
        alerts = store.alerts()
        reader = Receiver(store, lambda: 0, read_only=True)
        plain = status_of(store, reader)  # replayed, nothing written
        days = list(reversed(reader.days.verdicts()))
    finally:
        engine.dispose()
    if as_json:
        click.echo(json.dumps(plain, sort_keys=True))
        return
    for sender in senders:
        click.echo(f"{sender.sender}: {sender.seq} records held, the last at {when(sender.time_ms)}")
    if not senders:
        click.echo("no sender has fed this receiver yet")
    for sender, games in plain["games"].items():
        for game in games:
            verdict = "verified" if game["verified"] else "DIFFERS: " + "; ".join(game["faults"])
            if game["verified"] and game["replayed_card_by_card"]:
                verdict += f", and replayed card by card ({game['replayed_card_by_card']})"
            click.echo(f"{sender} game {game['game_id']}: {game['balls']} balls, {game['cards_sold']} cards; {verdict}")
    for day in days:
        click.echo(day.line())
    for alert in alerts:
        click.echo(f"ALERT {alert.kind} {alert.sender} record {alert.seq} at {when(alert.time_ms)}: {alert.detail}")
    click.echo(f"{len(alerts)} alert(s)")


def register(main: click.Group) -> None:
    """Add ``bingo regulator`` to the ``bingo`` command (the ``bingo.commands`` entry point)."""
    main.add_command(regulator)
