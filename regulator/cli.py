"""``bingo regulator``: the regulator's reference receiver (docs/regulator-feed.md).

Found by the ``bingo`` command through the ``bingo.commands`` entry point group
(``regulator = "regulator.cli:register"`` in ``pyproject.toml``).

* ``serve`` runs the receiver until interrupted;
* ``register-sender`` registers a hall or the central server with the receiver: the journal
  key its records are checked against, the certificates that sign its reports;
* ``demo`` runs one for the demo hall on this machine, its certificate issued by the hall's
  local authority and the hall registered;
* ``status`` prints, from the receiver's store, each sender's position and every alert;
* ``backup`` writes an archive of the running receiver (``bingo restore`` puts it back, docs/backup.md);
* ``export-records`` writes a sender's records after a given one, for a server restored from a backup.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click

from protocol.errors import DomainError
from server_kit.limits import ConnectionLimits

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
@click.option("--monitor-port", type=click.IntRange(0, 65535), default=None,
              help="Serve /health, /ready and /metrics over HTTP on this loopback port (0: any free one).")
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
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="How the log is written to standard output: lines for a person, or JSON lines for a collector.")
def serve(home: Path, database_url: str | None, pki_dir: Path, certificate: str, port: int | None,
          interface: str, web_port: int | None, web_interface: str, no_page: bool, handshake_timeout: float,
          idle_timeout: float, per_address: int, per_certificate: int, reserved_descriptors: int,
          log_format: str, monitor_port: int | None) -> None:
    """Receive feeds over mutual TLS until interrupted (Ctrl-C); the page shows the feeds and alerts."""
    from server_kit.clock import install_unless_installed

    install_unless_installed()  # timers on the monotonic clock (server_kit/clock.py), before the reactor is imported
    from twisted.internet import reactor as global_reactor

    from regulator.service import DEFAULT_PORT, DEFAULT_WEB_PORT, ReceiverService, ReceiverSettings
    from server_kit.logs import begin_logging

    from server_kit.boot import prepare_process

    reactor: Any = global_reactor
    # The monotonic reactor, a fatal signal's traceback in the log, and whatever the receiver writes
    # (its database, reports, journal head) its user's alone: as every server's process.
    prepare_process(reactor, "`bingo regulator serve`")
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    limits = ConnectionLimits(handshake_timeout, idle_timeout, per_address, per_certificate, reserved_descriptors)
    settings = ReceiverSettings(home, pki_dir, certificate, DEFAULT_PORT if port is None else port, interface,
                                database_url, None if no_page else (DEFAULT_WEB_PORT if web_port is None else web_port),
                                web_interface, limits=limits, monitor_port=monitor_port)
    begin_logging(log_format)
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


@regulator.command("register-sender")
@HOME
@click.argument("sender")
@click.option("--journal-key", "journal_key", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              required=True, help="The sender's journal public key, PEM (bingo journal public-key --out FILE).")
@click.option("--report-signer", "report_signers", multiple=True, metavar="NAME",
              help="A report-signing certificate that signs the sender's reports (repeat for several; "
                   "default: HALL-ID-reports, or central-reports).")
def register_sender(home: Path, sender: str, journal_key: Path, report_signers: tuple[str, ...]) -> None:
    """Register SENDER (hall:HALL-ID, or central) with the receiver in --dir: its records are checked
    against this journal key, and nothing is taken from a sender that is not registered. A running
    receiver takes it at the sender's next hello."""
    from regulator.senders import RegistryError, SenderRegistry, read_key_file

    os.umask(0o077)
    try:
        registered = SenderRegistry(home).register(sender, read_key_file(journal_key), report_signers)
    except RegistryError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f"{registered.sender} registered in {home / 'senders.toml'}: its records are checked against the "
               f"journal key of {journal_key}; its reports signed by {', '.join(registered.report_signers)}")


@regulator.command()
@click.option("--hall", "hall_home", type=click.Path(file_okay=False, path_type=Path), default=Path("var"),
              show_default=True, help="The demo hall's folder: its local authority (operator-ca/) issues the receiver's certificate.")
@click.option("--port", type=click.IntRange(1, 65535), default=8700, show_default=True)
@click.option("--web-port", type=click.IntRange(1, 65535), default=8701, show_default=True)
@click.pass_context
def demo(ctx: click.Context, hall_home: Path, port: int, web_port: int) -> None:
    """A receiver for the demo hall on this machine: its certificate issued once by the hall's
    local authority, the hall registered with its journal key, its store in HALL/regulator;
    then as ``serve``. Start the hall with ``./run.sh --demo --regulator localhost:8700`` and
    open https://localhost:8701/ with the page's certificate it prints."""
    import datetime

    from regulator.senders import RegistryError, SenderRegistry
    from server_kit.keys import KeyFileError, journal_key_path, load_journal_key
    from server_kit.pki import PkiError, PkiFolder, Role, export_bundle, issue_certificate, list_certificates

    authority = PkiFolder(hall_home / "operator-ca")
    if not authority.ca_cert.exists():
        raise click.ClickException(f"no local authority in {authority.root}: start the demo hall once first "
                                   "(./run.sh --demo), it makes one")
    os.umask(0o077)
    home = hall_home / "regulator"
    bundle = home / "pki"
    reader = home / "page-certificate"
    now = datetime.datetime.now(datetime.timezone.utc)
    try:
        halls = [c.name for c in list_certificates(authority.root)
                 if c.role is Role.server and c.status(now) == "valid"]
        if len(halls) != 1:
            raise click.ClickException(f"the local authority {authority.root} has {len(halls)} valid hall server "
                                       "certificates, not one: this is not the demo hall's folder")
        hall_key = load_journal_key(journal_key_path(hall_home)).public_key()
        for name, kind in (("regulator", "regulator"), ("regulator-staff", "regulator")):
            if not authority.cert(name).exists():
                issue_certificate(authority.root, kind, name)
        if not PkiFolder(bundle).cert("regulator").exists():
            export_bundle(authority.root, "regulator", bundle)
        if not PkiFolder(reader).cert("regulator-staff").exists():
            export_bundle(authority.root, "regulator-staff", reader)
        sender = f"hall:{halls[0]}"
        SenderRegistry(home).register(sender, hall_key)
    except (PkiError, KeyFileError, RegistryError) as error:
        raise click.ClickException(f"the demo receiver cannot be set up: {error}") from None
    staff = PkiFolder(reader)
    click.echo(f"The receiver's certificate: {bundle}; {sender} registered with the hall's journal key; "
               f"feed it with: ./run.sh --demo --regulator localhost:{port}")
    click.echo(f"Its page: https://localhost:{web_port}/ (trust {authority.ca_cert}) with the certificate "
               f"{staff.cert('regulator-staff')} and key {staff.key('regulator-staff')}; for a browser: "
               f"openssl pkcs12 -export -in {staff.cert('regulator-staff')} -inkey {staff.key('regulator-staff')} "
               "-out regulator-staff.p12 (docs/pki.md section 7)")
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
    from regulator.web import checked, read_held, status as status_of, when

    url = ReceiverSettings(home, home, database_url=database_url).url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        raise click.ClickException(f"no receiver's store at {url.removeprefix('sqlite:///')}: the receiver never ran there")
    engine = open_database(url, create_folder=False)
    try:
        store = Store(engine)
        senders = store.senders()
        alerts = store.alerts()
        reader = Receiver(store, lambda: 0, read_only=True)
        plain = status_of(read_held(store, reader), checked(reader, fold=True))  # replayed, nothing written
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
        more = (f" (and {alert.repeats} more of its kind within a minute, the last at record {alert.last_seq})"
                if alert.repeats else "")
        click.echo(f"ALERT {alert.kind} {alert.sender} record {alert.seq} at {when(alert.time_ms)}: {alert.detail}{more}")
    click.echo(f"{len(alerts) + sum(a.repeats for a in alerts)} alert(s)")


@regulator.command()
@HOME
@DB
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The archive to write (a new file; .tar.gz).")
@click.option("--pki", "pki_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The receiver's PKI folder (--pki of serve): named in the archive when it is outside --dir.")
@click.option("--passphrase-file", "passphrase_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="Encrypt the receiver's keys into the archive with the passphrase in this file; "
                                 "without it they are left out, to be kept apart.")
def backup(home: Path, database_url: str | None, out: Path, pki_dir: Path | None, passphrase_file: Path | None) -> None:
    """Back the receiver up while it runs: its folder, its database in one snapshot, its journal's head taken
    before it (`bingo restore` puts it back; docs/backup.md)."""
    from regulator.backup import receiver_folder
    from server_kit.backup import backup as take, backup_lines, read_passphrase

    passphrase = read_passphrase(passphrase_file) if passphrase_file is not None else None
    made = take(receiver_folder(home, database_url, pki_dir), out, passphrase=passphrase)
    for line in backup_lines(made):
        click.echo(line)


@regulator.command("export-records")
@HOME
@DB
@click.argument("sender")
@click.option("--after", type=click.IntRange(min=0), required=True,
              help="The last record of SENDER's journal that is not wanted (a restored server's last record).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The file to write (a new one): one record a line, as an audit export's journal.jsonl.")
def export_records(home: Path, database_url: str | None, sender: str, after: int, out: Path) -> None:
    """Write SENDER's records held after record --after, as the sender signed them: what a server restored
    from a backup takes back (`bingo restore --records`, docs/backup.md)."""
    from regulator.service import ReceiverSettings
    from regulator.store import Store, open_database
    from server_kit.audit_folder import journal_line

    url = ReceiverSettings(home, home, database_url=database_url).url
    if url.startswith("sqlite:///") and not Path(url.removeprefix("sqlite:///")).exists():
        raise click.ClickException(f"no receiver's store at {url.removeprefix('sqlite:///')}: the receiver never ran there")
    engine = open_database(url, create_folder=False)
    try:
        store = Store(engine)
        try:
            # The records name players and staff: the file is the user's alone, as the receiver's folder is.
            stream = os.fdopen(os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8")
        except FileExistsError:
            raise click.ClickException(f"{out} exists; name a new file") from None
        first = last = None
        count = 0
        with stream:
            while page := store.page(sender, last if last is not None else after, 10_000):
                for record in page:
                    stream.write(journal_line(record) + "\n")
                first = first if first is not None else page[0].seq
                last, count = page[-1].seq, count + len(page)
    finally:
        engine.dispose()
    if not count:
        click.echo(f"{out}: the receiver holds no record of {sender} after {after}")
    else:
        click.echo(f"{out}: {count} records of {sender}, {first} to {last}, as {sender} signed them")


def register(main: click.Group) -> None:
    """Add ``bingo regulator`` to the ``bingo`` command (the ``bingo.commands`` entry point)."""
    main.add_command(regulator)
