"""``bingo central``: the central server's commands, added to the ``bingo`` command.

The ``bingo`` command (``hall_server/cli``) does not import the central server: it
finds this module through the ``bingo.commands`` entry point group, which
``pyproject.toml`` declares (``central = central_server.cli:register``), and calls
:func:`register` with its group.

* ``serve`` runs the server;
* ``games``, ``open-sale`` and ``not-played``, and the programme's ``programme``,
  ``schedule-game``, ``pause`` and ``resume``, are the operator's commands to a running
  server (:mod:`central_server.operator`), sent with the operator's certificate;
  a refusal is one line on stderr with its code, and exit status 2;
* ``audit-export`` writes a day's network games for the inspector (FORMATS.md 3);
* ``daily-report`` writes the day's signed report to the regulator (R95.4, docs/reports.md);
* ``yearly-report`` writes the tax year's base and tax of the network games (R98.2, docs/reports.md);
* ``backup`` writes an archive of the running server (``bingo restore`` puts it back, docs/backup.md).
"""

from __future__ import annotations

import datetime
import json
import secrets
import sys
from pathlib import Path
from typing import Any, Callable, Mapping

import click

from protocol.errors import DomainError
from protocol.money import format_cents

#: The exit status of a command the central server (or the export) refused.
REFUSED = 2


@click.group()
def central() -> None:
    """The central server of interconnected bingo: network games across halls."""


@central.command()
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Configuration file (default: $BINGO_HOME/central.toml, or var/central.toml).")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="How the log is written to standard output: lines for a person, or JSON lines for a collector.")
@click.option("--monitor-port", type=click.IntRange(0, 65535), default=None,
              help="Serve /health, /ready and /metrics over HTTP on this loopback port (0: any free one).")
def serve(config_path: Path | None, log_format: str, monitor_port: int | None) -> None:
    """Run the central server until interrupted (Ctrl-C); the same as ``twist bingo-central``."""
    from server_kit.clock import install_unless_installed

    install_unless_installed()  # timers on the monotonic clock (server_kit/clock.py), before the reactor is imported
    from twisted.internet import reactor as global_reactor
    from central_server.tap import default_config_path, makeService
    from server_kit.logs import begin_logging

    path = config_path or default_config_path()
    if not path.exists():
        raise click.ClickException(f"no configuration at {path}; docs/central-server.md shows one")
    reactor: Any = global_reactor  # the CLI runs the process's one reactor
    begin_logging(log_format)
    try:
        service = makeService({"config": str(path), "monitor-port": monitor_port})
    except DomainError as error:
        raise click.ClickException(f"the central server cannot start: {error}") from None
    reactor.callWhenRunning(service.startService)
    reactor.addSystemEventTrigger("before", "shutdown", service.stopService)
    reactor.run()
    if service.central.listener.failure is not None:
        raise click.ClickException(f"the central server could not serve: {service.central.listener.failure.getErrorMessage()}")
    role = service.central.role
    if role is not None and role.stopped is not None:
        raise click.ClickException(f"the central server stopped acting: {role.stopped}; started again, it waits as "
                                   "the standby")


# --- The operator's commands -----------------------------------------------------------


def _address(server: str | None, config_path: Path | None) -> Any:
    """Where to send the command: ``--server``, else the ``[listen]`` of the central server's configuration."""
    from central_server.operator import CentralAddress
    from central_server.tap import configuration, default_config_path

    if server:
        return CentralAddress.parse(server)
    path = config_path or default_config_path()
    if not path.exists():
        raise click.ClickException(f"say where the central server listens: --server HOST:PORT (no configuration at {path})")
    config = configuration(path)
    if config.port == 0:
        raise click.ClickException(f"{path} listens on any free port (port 0); say which with --server HOST:PORT")
    host = "127.0.0.1" if config.interface in ("0.0.0.0", "") else ("::1" if config.interface == "::" else config.interface)
    return CentralAddress(host, config.port)


#: Refusals after which the command may have been carried out all the same (a commit whose
#: answer was lost to the storage's fault, a switch of the active process).
_MAYBE_DONE = frozenset({"storage_unavailable", "standby", "internal_error"})


def _send(command: str, arguments: Mapping[str, Any], show: Callable[[dict[str, Any]], str], *,
          server: str | None, config_path: Path | None, pki_dir: Path, name: str | None, as_json: bool,
          request_id: str | None = None) -> None:
    """Send one operator command to the running central server and print its answer, or its refusal.

    A command sent with ``request_id`` that may have been carried out without its answer
    reaching us (no answer, a storage fault) says how to send it again safely.
    """
    from twisted.internet import reactor as global_reactor

    from central_server.operator import OperatorNoAnswer, OperatorRefused, operator_name, send

    try:
        address = _address(server, config_path)
        who = name or operator_name(pki_dir)
    except DomainError as error:
        raise click.ClickException(str(error)) from None
    outcome: dict[str, Any] = {}

    async def ask(reactor: Any) -> None:
        try:
            outcome["answer"] = await send(reactor, address, pki_dir, who, command, arguments)
        except Exception as failure:
            outcome["failure"] = failure

    _run_once(global_reactor, ask)
    failure = outcome.get("failure")
    again = (f"; it may have been carried out: send it again with --request-id {request_id}, which does it at "
             "most once" if request_id is not None else "")
    if isinstance(failure, OperatorRefused):
        click.echo(f"refused ({failure.code}): {failure}{again if failure.code in _MAYBE_DONE else ''}", err=True)
        sys.exit(REFUSED)
    if isinstance(failure, DomainError):
        raise click.ClickException(f"{failure}{again if isinstance(failure, OperatorNoAnswer) else ''}")
    if failure is not None:
        raise failure
    answer = outcome["answer"]
    click.echo(json.dumps(answer, indent=2, sort_keys=True) if as_json else show(answer))


def _run_once(reactor: Any, ask: Callable[[Any], Any]) -> None:
    """Run the reactor until ``ask(reactor)`` is done."""
    from twisted.internet import defer

    def start() -> None:
        defer.ensureDeferred(ask(reactor)).addBoth(lambda _: reactor.stop())

    reactor.callWhenRunning(start)
    reactor.run(installSignalHandlers=False)


def _when(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _alarm(answer: dict[str, Any]) -> list[str]:
    """The storage's alarm first, when the central server raises it."""
    return [f"ALARM: {answer['storage_alarm']}"] if "storage_alarm" in answer else []


def _show_games(answer: dict[str, Any]) -> str:
    if not answer["games"]:
        return "\n".join([*_alarm(answer), "no network game is scheduled"])
    lines = _alarm(answer)
    for g in answer["games"]:
        when = ""
        if "closes_at_ms" in g and g["phase"] == "selling":
            when = f", the sale closes {_when(g['closes_at_ms'])}"
        elif "opens_at_ms" in g:
            when = f", the sale opens {_when(g['opens_at_ms'])}"
        elif g["phase"] == "scheduled":
            when = ", the sale opens when the operator opens it"
        lines.append(
            f"{g['game_id']}: {g['phase'].replace('_', ' ')}{when}; series {g['series']} at "
            f"{format_cents(g['price_cents'])}, {g['hall_count']} hall(s); {g['cards_in_play']} card(s) in play, "
            f"{format_cents(g['sales_cents'])}; {g['ball_count']} ball(s), {g['winner_count']} winner(s)"
        )
    if answer["more"]:
        lines.append(f"... {answer['game_count'] - len(answer['games'])} more: --after {len(answer['games'])}")
    return "\n".join(lines)


def _show_opened(answer: dict[str, Any]) -> str:
    return (f"{answer['game_id']}: the sale is open until {_when(answer['closes_at_ms'])} "
            f"({round(answer['remaining_ms'] / 1000)} s); the halls are told")


def _show_not_played(answer: dict[str, Any]) -> str:
    return (f"{answer['game_id']} is declared not played (R96.2): {answer['refunded_cards']} card(s), "
            f"{format_cents(answer['refunded_cents'])} returned to the players of {answer['hall_count']} hall(s)")


def _operator_options(command: Callable[..., None]) -> Callable[..., None]:
    options = [
        click.option("--server", metavar="HOST:PORT",
                     help="The central server's endpoint (default: the [listen] of --config)."),
        click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="The central server's configuration, for its address (default: $BINGO_HOME/central.toml)."),
        click.option("--pki-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
                     help="The operator's bundle: ca.pem, crl.pem, certs/NAME.pem, keys/NAME.key."),
        click.option("--name", default=None,
                     help="The operator's certificate name (default: the bundle's one certificate)."),
        click.option("--json", "as_json", is_flag=True, help="Print the server's answer as JSON."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@central.command("games")
@click.option("--after", type=click.IntRange(min=0), default=0, help="Skip this many games (the next page).")
@_operator_options
def games(after: int, **common: Any) -> None:
    """List the running central server's network games and where each stands."""
    _send("operator_games", {"after": after}, _show_games, **common)


@central.command("open-sale")
@click.argument("game_id", metavar="GAME")
@_operator_options
def open_sale(game_id: str, **common: Any) -> None:
    """Open GAME's sale now, for its configured window (R93.1)."""
    _send("operator_open_sale", {"game_id": game_id}, _show_opened, **common)


@central.command("not-played")
@click.argument("game_id", metavar="GAME")
@click.option("--reason", required=True, help="Why the game cannot run; it goes into the record.")
@_operator_options
def not_played(game_id: str, reason: str, **common: Any) -> None:
    """Force majeure (R96.2): declare GAME not played; every stake goes back to its player."""
    _send("operator_not_played", {"game_id": game_id, "reason": reason}, _show_not_played, **common)


# --- The programme (docs/central-server.md, "The programme") ----------------------------


def _carries(carries: list[dict[str, Any]]) -> str:
    return ", ".join(f"{c['pattern']} {format_cents(c['carry_cents'])}" for c in carries) or "nothing"


def _show_programme(answer: dict[str, Any]) -> str:
    if not answer["configured"]:
        head = "no programme is configured ([programme] in central.toml)"
    else:
        limit = f" of {answer['games_limit']}" if "games_limit" in answer else ""
        state = f"paused ({answer['reason']})" if answer["state"] == "paused" else "running"
        head = f"the programme is {state}; {answer['games_played']}{limit} game(s) of it scheduled"
    lines = [*_alarm(answer), head]
    if "last_game" in answer:
        phase = answer.get("last_phase", "?").replace("_", " ")
        carried = f", carried out {_carries(answer['carries'])}" if "carries" in answer else ""
        lines.append(f"the chain's last game: {answer['last_game']} ({phase}{carried})")
    if "queued_game" in answer:
        lines.append(f"one-off game {answer['queued_game']} waits for it")
    if "waiting_for" in answer:
        lines.append(f"no game is scheduled now: {answer['waiting_for']}")
    return "\n".join(lines)


def _show_scheduled(answer: dict[str, Any]) -> str:
    before = "this request was carried out before, and nothing more is scheduled: " if answer.get("repeated") else ""
    after = f" after {answer['after_game']}" if "after_game" in answer else " (the chain's first game)"
    if answer.get("repeated") and answer["status"] == "scheduled" and "opens_at_ms" not in answer:
        return f"{before}{answer['game_id']} is scheduled{after}; `bingo central games` shows where it stands"
    if answer["status"] == "queued":
        return (f"{before}{answer['game_id']} is queued: it is scheduled once {answer['after_game']} is over, with "
                "what that game carries out (R88.5)")
    opens = f"its sale opens {_when(answer['opens_at_ms'])}" if "opens_at_ms" in answer else "the operator opens its sale"
    return (f"{before}{answer['game_id']} is scheduled{after}; {opens}; it carries in "
            f"{_carries(answer.get('carries', []))} (R88.5)")


def _show_paused(answer: dict[str, Any]) -> str:
    last = f"; the chain's last game, {answer['last_game']}, plays on" if "last_game" in answer else ""
    return f"the programme is paused: it schedules no game until it is resumed{last}"


def _show_resumed(answer: dict[str, Any]) -> str:
    if "next_game" in answer:
        return f"the programme is running; {answer['next_game']} is scheduled"
    return f"the programme is running; no game is scheduled yet: {answer.get('waiting_for', 'nothing is due')}"


@central.command("programme")
@_operator_options
def programme(**common: Any) -> None:
    """Where the programme stands: running or paused, the chain's last game and its carries, what it waits for."""
    _send("operator_programme", {}, _show_programme, **common)


@central.command("schedule-game")
@click.option("--game-id", default=None, help="The game's id (default: the programme's id scheme).")
@click.option("--price-cents", type=int, default=None, help="The card's price (default: the template's).")
@click.option("--sale-window-ms", type=int, default=None, help="The sale's length (default: the template's).")
@click.option("--ball-interval-ms", type=int, default=None, help="The time between balls (default: the template's).")
@click.option("--opens-after-ms", type=int, default=None,
              help="Its sale opens this long after it is scheduled (default: the programme's).")
@click.option("--request-id", default=None,
              help="The request's id, to send again a request whose answer was lost: the same id schedules "
                   "nothing more (default: a new one, printed with the answer or the failure).")
@_operator_options
def schedule_game(game_id: str | None, price_cents: int | None, sale_window_ms: int | None,
                  ball_interval_ms: int | None, opens_after_ms: int | None, request_id: str | None,
                  **common: Any) -> None:
    """Add a one-off game of the programme's template to the chain, with the chain's carries (R88.5):
    scheduled now if the chain's last game is over, else queued to follow it."""
    request_id = request_id or f"schedule-{secrets.token_hex(8)}"
    chosen = {"game_id": game_id, "price_cents": price_cents, "sale_window_ms": sale_window_ms,
              "ball_interval_ms": ball_interval_ms, "opens_after_ms": opens_after_ms, "request_id": request_id}
    _send("operator_schedule_game", {k: v for k, v in chosen.items() if v is not None},
          lambda answer: f"{_show_scheduled(answer)} [request {request_id}]", request_id=request_id, **common)


@central.command("pause")
@click.option("--reason", required=True, help="Why the programme is paused; it goes into the record.")
@_operator_options
def pause(reason: str, **common: Any) -> None:
    """Pause the programme: no game of it is scheduled until it is resumed; the games under way play on."""
    _send("operator_pause_programme", {"reason": reason}, _show_paused, **common)


@central.command("resume")
@_operator_options
def resume(**common: Any) -> None:
    """Resume the programme: its next game is scheduled at once if the chain's last game is over."""
    _send("operator_resume_programme", {}, _show_resumed, **common)


def _show_verified(answer: dict[str, Any]) -> str:
    lines = [f"verification {'passed' if answer['passed'] else 'FAILED'} (R92.5e, R95.1)"]
    for check in answer["checks"]:
        lines.append(f"  {check['check']}: {check.get('fault') or 'passed'}")
    for hall in answer["linked"]:
        lines.append(f"  the link of {hall['hall']}: passed")
    for fault in answer["link_faults"]:
        lines.append(f"  the link of {fault['hall']}: {fault['fault']}")
    if answer.get("link_faults_more"):
        lines.append(f"  and {answer['link_faults_more']} more links failed (the journal's record names each)")
    if answer["not_linked"]:
        lines.append("  not linked, not checked: " + ", ".join(h["hall"] for h in answer["not_linked"]))
    lines.append("play is open: network games open as scheduled" if answer["play"] == "open"
                 else f"play is stopped: {answer.get('stopped', '')}")
    return "\n".join(lines)


@central.command("verify")
@_operator_options
def verify(**common: Any) -> None:
    """Verify the central server (journal, database, library, clock) and every linked hall's link, and journal it:
    after a stop that interrupted play, no network game opens until a verification passed (R92.5e, R95.1)."""
    _send("operator_verify", {}, _show_verified, **common)


# --- The audit export ------------------------------------------------------------------


@central.command("audit-export")
@click.option("--day", required=True, metavar="YYYY-MM-DD", help="The day whose network games to export.")
@click.option("--out", type=click.Path(path_type=Path), required=True, help="A new or empty folder for the four files.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The central server's configuration (default: $BINGO_HOME/central.toml).")
def audit_export(day: str, out: Path, config_path: Path | None) -> None:
    """Write the network games that ended on DAY for the inspector (FORMATS.md 3): scenario.json,
    result.json, journal.jsonl and public-key.pem; `bingo replay OUT/scenario.json` recomputes result.json."""
    from central_server.audit import export_day
    from central_server.tap import configuration

    try:
        made = export_day(configuration(config_path), day, out)
    except (DomainError, OSError) as error:
        from server_kit.audit_folder import one_line

        click.echo(one_line(error), err=True)
        sys.exit(REFUSED)
    first, last = made.records[0], made.records[-1]
    click.echo(f"{out}: {made.day}, {len(made.games)} network game(s), journal records {first.seq} to {last.seq} "
               f"(last hash {last.hash})")
    if made.chain:
        click.echo(f"chain: {' -> '.join(made.chain)}: each game takes the carries of the one before it (R88.5)")
    if made.left_out:
        click.echo("left out: " + "; ".join(f"{game} ({why})" for game, why in made.left_out))



@central.command("backup")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The archive to write (a new file; .tar.gz).")
@click.option("--passphrase-file", "passphrase_file", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="Encrypt the server's keys into the archive with the passphrase in this file; "
                                 "without it they are left out, to be kept apart.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The central server's configuration (default: $BINGO_HOME/central.toml).")
def backup_command(out: Path, passphrase_file: Path | None, config_path: Path | None) -> None:
    """Back the central server up while it runs: its folder and its database in one snapshot (pg_dump of
    the database pair's leader, or SQLite's online backup), its journal's head taken before it
    (`bingo restore` puts it back; docs/backup.md)."""
    from central_server.backup import central_folder
    from central_server.tap import configuration
    from server_kit.backup import backup, backup_lines, read_passphrase

    passphrase = read_passphrase(passphrase_file) if passphrase_file is not None else None
    made = backup(central_folder(configuration(config_path)), out, passphrase=passphrase)
    for line in backup_lines(made):
        click.echo(line)


@central.command("audit-verify")
@click.argument("folder", type=click.Path(path_type=Path), metavar="DIR")
def audit_verify(folder: Path) -> None:
    """Check a central server's audit export with nothing but its files (`bingo audit verify DIR`)."""
    from protocol.audit.central_rebuild import rebuild
    from protocol.audit.check import CENTRAL
    from server_kit.audit_verify import verify_and_tell

    sys.exit(verify_and_tell(folder, {CENTRAL: rebuild}, click.echo))


@central.command("daily-report")
@click.option("--day", required=True, metavar="YYYY-MM-DD", help="The day to report (today or before).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder to write report.json, report.csv, report.pdf and their .p7s signatures into.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The central server's configuration (default: $BINGO_HOME/central.toml).")
def daily_report_command(day: str, out: Path, config_path: Path | None) -> None:
    """Write the day's report of the interconnected games (R95.4 a-f, R83.5) as JSON, CSV and PDF (in
    the central server's language), each with a detached CMS signature (.p7s) by keys/report-signing.pem; `bingo report daily` on this folder."""
    import zoneinfo

    from central_server.daily import central_daily_files, read_day
    from central_server.tap import configuration
    from server_kit.reports.cms import ReportSigner, write_signed
    from server_kit.reports.daily import checked_day, written_lines

    try:
        config = configuration(config_path)
        today = datetime.datetime.now(zoneinfo.ZoneInfo(config.timezone)).date()
        day = checked_day(day, today)
        signer = ReportSigner.of_server(config.home)
        made = read_day(config, day)
        data, pdf = central_daily_files(made, config.language)
        written = write_signed(data, out, signer, pdf)
    except (DomainError, OSError) as error:
        from server_kit.audit_folder import one_line

        click.echo(one_line(error), err=True)
        sys.exit(REFUSED)
    for line in written_lines(made, written):
        click.echo(line)


@central.command("yearly-report")
@click.option("--year", required=True, metavar="YYYY", help="The fiscal year (this year: to date).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The folder to write tax-year.json, .csv, .pdf and their .p7s signatures into.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The central server's configuration (default: $BINGO_HOME/central.toml).")
def yearly_report_command(year: str, out: Path, config_path: Path | None) -> None:
    """Write the tax year's base and tax of the interconnected games (R98.2) as JSON, CSV and PDF (in
    the central server's language), each with a detached CMS signature (.p7s) by keys/report-signing.pem; `bingo report yearly` on this folder."""
    import zoneinfo

    from central_server.daily import read_year
    from central_server.tap import configuration
    from server_kit.reports.cms import ReportSigner, write_signed
    from server_kit.reports.yearly import checked_year, written_lines

    try:
        config = configuration(config_path)
        number, through = checked_year(year, datetime.datetime.now(zoneinfo.ZoneInfo(config.timezone)).date())
        signer = ReportSigner.of_server(config.home)
        made, laid_out, pdf = read_year(config, number, through)
        written = write_signed(laid_out, out, signer, pdf)
    except (DomainError, OSError) as error:
        from server_kit.audit_folder import one_line

        click.echo(one_line(error), err=True)
        sys.exit(REFUSED)
    for line in written_lines(made, laid_out, written):
        click.echo(line)


@central.command()
@click.option("--halls", type=click.IntRange(2, 200), default=2, show_default=True, help="Hall server processes.")
@click.option("--terminals", type=click.IntRange(1, 1000), default=5, show_default=True, help="Terminals per hall.")
@click.option("--games", type=click.IntRange(1, 50), default=1, show_default=True, help="Network games to play.")
@click.option("--home", "home", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="A new folder for every server's home (DIR/central, DIR/hall-1, ...).")
@click.option("--seed", type=int, default=1, show_default=True, help="The terminals' random choices.")
@click.option("--burst", is_flag=True, help="Every terminal buys in the last 5 s of each sale.")
def simulate(halls: int, terminals: int, games: int, home: Path, seed: int, burst: bool) -> None:
    """Play network games on loopback: this central server, hall servers and headless terminals.

    Prints a JSON summary (purchases, cards, balls, winners and money per hall, CPU
    seconds); exit status 1 if the terminals, the halls and the central server disagree.
    """
    from simulation.network import Plan, SimulationError, simulate as run  # starts halls by their command line

    plan = Plan(home=home, halls=halls, terminals=terminals, games=games, seed=seed,
                mode="burst" if burst else "random")
    try:
        summary = run(plan, progress=lambda line: click.echo(f"simulate: {line}", err=True))
    except SimulationError as error:
        raise click.ClickException(str(error)) from None
    click.echo(json.dumps(summary, indent=2))
    if not summary["ok"]:
        raise click.ClickException("the simulation's checks failed: " + "; ".join(summary["problems"][:3]))


def _utc_ms(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _listening(host: str, port: int) -> bool:
    import socket

    try:
        with socket.create_connection((host, port), timeout=1):
            return True
    except OSError:
        return False


def _status_lines(found: dict[str, Any]) -> list[str]:
    lines = []
    held = found["leadership"]
    if held is None:
        lines.append(f"leadership: unknown, no database answered ({found.get('database_error', 'none configured')})")
    else:
        since = next((t for t in found["takeovers"] if t["epoch"] == held["epoch"]), None)
        when = f", since {_utc_ms(since['time_ms'])} ({since['cause']})" if since else ""
        lines.append(f"active: {held['holder'] or 'nobody yet'}, epoch {held['epoch']}{when}")
    if found["leader"] is not None or found["members"]:
        lines.append(f"database leader: {found['leader'] or '-'}")
    for process in found["processes"]:
        where = f" beside {process['node']}" if process["node"] else ""
        node = ""
        if process["node"]:
            lag = f", lag {process['lag']} bytes" if process["lag"] is not None else ""
            node = (f"; {process['node']}: {process['node_role'] or 'not answering'} {process['node_state'] or ''}"
                    f"{lag}, timeline {process['timeline'] if process['timeline'] is not None else '-'}")
        lines.append(f"process{where} ({process['endpoint']}): {process['role']}, "
                     f"{'listening' if process['listening'] else 'not listening'}{node}")
    failover = found["last_failover"]
    if failover is not None:
        lines.append(f"last failover: {_utc_ms(failover['time_ms'])}, epoch {failover['epoch']} taken by "
                     f"{failover['holder']} after epoch {failover['previous_epoch']}")
    else:
        lines.append("last failover: none")
    causes: dict[str, int] = {}
    for taken in found["takeovers"]:
        causes[taken["cause"]] = causes.get(taken["cause"], 0) + 1
    if causes:
        lines.append("leadership taken (latest 50): " + ", ".join(f"{n} {cause}" for cause, n in sorted(causes.items())))
    return lines


@central.command("status")
@click.option("--config", "config_paths", type=click.Path(dir_okay=False, path_type=Path), multiple=True,
              help="A central server process's configuration; give both of a replicated central server "
                   "(default: $BINGO_HOME/central.toml).")
@click.option("--json", "as_json", is_flag=True, help="Print everything found as JSON.")
def status_command(config_paths: tuple[Path, ...], as_json: bool) -> None:
    """Which node and process of the central server is active, the replication lag, the epoch, the last failover."""
    from central_server.replica import status
    from central_server.tap import configuration

    try:
        configs = [configuration(path) for path in config_paths] or [configuration()]
        found = status(configs, _listening)
    except DomainError as error:
        raise click.ClickException(str(error)) from None
    click.echo(json.dumps(found, indent=2, default=str) if as_json else "\n".join(_status_lines(found)))
    if found["leadership"] is None:
        sys.exit(1)


@central.command("failover-drill")
@click.option("--runs", type=click.IntRange(1, 200), default=20, show_default=True,
              help="Runs that kill the active node (its PostgreSQL, Patroni and central process).")
@click.option("--pauses", type=click.IntRange(0, 50), default=2, show_default=True,
              help="Runs that pause the active node instead (SIGSTOP), waking it after the takeover.")
@click.option("--central-kills", type=click.IntRange(0, 50), default=3, show_default=True,
              help="Runs that kill the active central process alone (its database stays up).")
@click.option("--home", "home", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="A new folder for the database pair, both central processes, the halls and terminals.")
@click.option("--seed", type=int, default=7, show_default=True, help="The terminals' and the moments' random choices.")
def failover_drill(runs: int, pauses: int, central_kills: int, home: Path, seed: int) -> None:
    """Fail the replicated central server again and again while network games are played (R92.6).

    On loopback: etcd x3, Patroni and PostgreSQL 15 x2, the two central server
    processes, two halls with headless terminals. Each run kills (or pauses) the active
    side during a sale's burst, after a ball's commit or after a prize's, waits for the
    takeover and for the failed node to rejoin as the standby, and checks that nothing
    was lost, doubled or changed. Prints a JSON summary; exit status 1 if a check failed.
    """
    from simulation.network import SimulationError
    from simulation.replica import campaign, drill

    home = home.resolve()
    try:
        summary = drill(home, campaign(runs, pauses, central_kills), seed,
                        progress=lambda line: click.echo(f"failover-drill: {line}", err=True))
    except SimulationError as error:
        raise click.ClickException(str(error)) from None
    click.echo(json.dumps(summary, indent=2))
    if not summary["ok"]:
        raise click.ClickException("the drill's checks failed: " + "; ".join(summary["problems"][:3]))


def register(main: click.Group) -> None:
    """Add ``bingo central`` to the ``bingo`` command (the ``bingo.commands`` entry point)."""
    main.add_command(central)


# --- The database pair (docs/replica.md) ------------------------------------------------


@central.group()
def cluster() -> None:
    """The central server's database pair on this machine: etcd x3, Patroni + PostgreSQL 15 x2 (R92.6)."""


_CLUSTER_DIR = click.option("--dir", "folder", type=click.Path(file_okay=False, path_type=Path),
                            default=Path("var/central-cluster"), show_default=True,
                            help="Folder holding the set's data, logs and cluster.json.")


def _print_status(found: dict[str, Any]) -> None:
    click.echo(f"leader: {found['leader'] or '-'}")
    click.echo(f"sync standby: {found['sync_standby'] or '-'}")
    for name, lag in sorted(found["lag"].items()):
        click.echo(f"lag {name}: {lag if lag is not None else '-'} bytes")
    for member in found["members"]:
        click.echo(f"member {member['name']}: {member['role']} {member['state']} 127.0.0.1:{member['port']}"
                   f" timeline {member['timeline']}")
    for name, alive in sorted(found["processes"].items()):
        click.echo(f"process {name}: {'running' if alive else 'stopped'}")


@cluster.command("start")
@_CLUSTER_DIR
@click.option("--pki", "authority", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The operator's PKI folder (with ca.key): it issues the set's certificates.")
@click.option("--name", default="central-db", show_default=True,
              help="The set's name: its certificates are NAME-etcd0 ... NAME-node1, NAME-admin.")
@click.option("--patroni-venv", "venv", type=click.Path(file_okay=False, path_type=Path),
              default=Path("/opt/bingo/patroni"), show_default=True,
              help="The virtual environment scripts/patroni-venv.sh made.")
def cluster_start(folder: Path, authority: Path, name: str, venv: Path) -> None:
    """Start the set, every member authenticated and encrypted, and wait for a leader and a synchronous standby."""
    from central_server import cluster as pair

    try:
        _print_status(pair.start(folder, authority, venv=venv, name=name))
    except pair.ClusterError as error:
        raise click.ClickException(str(error)) from None


@cluster.command("stop")
@_CLUSTER_DIR
def cluster_stop(folder: Path) -> None:
    """Stop every process of the set (Patroni and its PostgreSQL, then etcd)."""
    from central_server import cluster as pair

    try:
        taken = pair.stop(folder)
    except pair.ClusterError as error:
        raise click.ClickException(str(error)) from None
    if taken:
        raise click.ClickException(f"stopped, but ports still taken: {taken}")
    click.echo("stopped")


@cluster.command("status")
@_CLUSTER_DIR
def cluster_status(folder: Path) -> None:
    """Print the leader, the synchronous standby and the replication lag."""
    from central_server import cluster as pair

    try:
        _print_status(pair.status(folder))
    except pair.ClusterError as error:
        raise click.ClickException(str(error)) from None


@cluster.command("node-config")
@_CLUSTER_DIR
@click.option("--node", "index", type=click.IntRange(0, 1), required=True, help="The node the process runs beside.")
@click.option("--ca", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The operator's ca.pem as the central process reads it (its pki/ca.pem); "
                   "default: the set's copy.")
def cluster_node_config(folder: Path, index: int, ca: Path | None) -> None:
    """Print the [database] and [replica] sections of central.toml for the central process beside a node."""
    from central_server import cluster as pair

    try:
        url, rest = pair.database_url(folder, index, ca), pair.rest_url(folder, index)
    except pair.ClusterError as error:
        raise click.ClickException(str(error)) from None
    click.echo(f'[database]\nurl = "{url}"\n\n[replica]\nnode = "node{index}"\npatroni = "{rest}"')
