"""The central server's configuration: one TOML file, read and checked at start.

Every value is checked when the file is read, and a value that breaks a rule stops the
start with one line naming the file and the key (``central.toml: games[0].price_cents:
201 cents is above the maximum price the regulator approved, 200 cents (R93.5)``).
A key or table not listed in :data:`SETTINGS` stops the start in the same way,
naming the key that was meant when one is close.  Relative paths are under the file's
folder.  ``docs/central-server.md`` lists every key.

The network games are checked with the domain's own rules
(:class:`~central_server.domain.config.NetworkGameConfig`); the series' size and the
digest of its layouts come from the central library (``[[series]]``, generated once
and kept in the database), so the file does not repeat them.
"""

from __future__ import annotations

import zoneinfo
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from central_server.domain.annex import AnnexPair
from central_server.domain.config import NetworkGameConfig, PrizeShare
from central_server.domain.errors import ConfigError as DomainConfigError
from central_server.domain.programme import Hours, ProgrammeConfig
from central_server.domain.stops import HOLD_MS
from protocol import central_messages as wire
from protocol.central_messages import CentralMessageError
from protocol.cards import CARDS_PER_STRIP
from protocol.errors import DomainError
from server_kit.db.database import sqlite_files
from server_kit.i18n import DEFAULT_LANGUAGE, LANGUAGES
from server_kit.limits import ConnectionLimits, LimitsError
from server_kit.settings import VALUE, Schema, UnknownSetting, check_known, fields_of, load_toml, table

DEFAULT_PORT = 7310
DEFAULT_TIMEZONE = "UTC"
#: The digest a game is checked with before the library exists (replaced at start).
_PLACEHOLDER_DIGEST = "0" * 64
#: The largest series the central library generates (8-digit card numbers, R82.9).
MAX_SERIES_CARDS = 6_000_000

#: The hold time's bounds (``[replica] hold_ms``): a second to an hour.
HOLD_MIN_MS, HOLD_MAX_MS = 1_000, 3_600_000


class ConfigError(DomainError):
    """The configuration file cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class SeriesConfig:
    """A series of virtual cards of the central library: its label and its size."""

    label: str
    cards: int


@dataclass(frozen=True)
class GamePlan:
    """A network game to schedule: its settings (without the library's digest) and when its sale opens.

    ``opens_after_ms``: the sale opens that long after the game is scheduled (the
    scheduling record's time, so a restart keeps the moment); ``None``: only the
    operator opens it.
    """

    settings: Mapping[str, Any]
    opens_after_ms: int | None

    @property
    def game_id(self) -> str:
        return str(self.settings["game_id"])

    def config(self, digest: str) -> NetworkGameConfig:
        """The game's configuration over the series whose layouts have ``digest``."""
        return NetworkGameConfig.from_dict({**self.settings, "library_digest": digest})


@dataclass(frozen=True)
class RegulatorFeedConfig:
    """The regulator's feed receiver (``[regulator]``): the central server feeds it as ``central``."""

    host: str
    port: int
    server_name: str  # the name the receiver's certificate must carry
    pki_dir: Path


@dataclass(frozen=True)
class ConsultationConfig:
    """The regulator's consultation (``[consultation]``, R95.3): HTTPS, regulator certificates only."""

    interface: str
    port: int


@dataclass(frozen=True)
class ReplicaConfig:
    """A replicated central server (``[replica]``, R92.6): the process beside one node of the database pair.

    ``node`` is that node's name in Patroni (``node0``), ``patroni`` its Patroni's REST API:
    the process is active only while Patroni says its node leads (docs/replica.md).
    ``drill``: the failover drill may stop this process right after a commit, before the
    halls are told (:class:`central_server.replica.DrillPoint`); never in production.
    ``hold_ms``: the hold time (R92.5e ruling): a takeover within it of the last moment the
    previous process was known to lead bridges the failover; past it, play was interrupted.
    """

    node: str
    patroni: str
    drill: bool = False
    hold_ms: int = HOLD_MS


@dataclass(frozen=True)
class CentralConfig:
    """Everything the composition root needs, checked."""

    central_id: str
    home: Path
    interface: str
    port: int
    database_url: str
    pki_dir: Path
    journal_key: Path
    halls: tuple[str, ...]
    series: tuple[SeriesConfig, ...]
    games: tuple[GamePlan, ...]
    source: Path | None = None
    #: The central server's time zone: the day a network game belongs to (the audit export).
    timezone: str = DEFAULT_TIMEZONE
    #: The hall-annex pairs whose joint games the central server relays (R3.5.b).
    annex_pairs: tuple[AnnexPair, ...] = ()
    #: The regulator's real-time feed (R92.7); None: the central server feeds none.
    regulator: RegulatorFeedConfig | None = None
    #: The regulator's read-only consultation (R95.3); None: not served.
    consultation: ConsultationConfig | None = None
    #: The programme of network games the central server plays one after another (None: none).
    programme: ProgrammeConfig | None = None
    #: One of two processes of a replicated central server (R92.6); None: a single process.
    replica: ReplicaConfig | None = None
    #: What the endpoint's and the consultation's ports admit (``[connections]``, docs/security.md).
    connections: ConnectionLimits = ConnectionLimits()
    #: The central server's language (``[central] language``): its consultation page's until the reader
    #: picks another, and its printed reports' (docs/languages.md).
    language: str = DEFAULT_LANGUAGE

    @property
    def journal_head(self) -> Path:
        return self.home / "journal.head"

    def private_paths(self) -> list[Path]:
        """What only the server's user may read (folders 0700, files 0600): its folder (its database
        on SQLite, its reports, keys, checkpoints and journal head), its configuration (a replicated
        one holds the database owner's password), its PKI bundles and its journal key."""
        owned = [self.home, self.pki_dir, self.journal_key, self.journal_head, *sqlite_files(self.database_url)]
        if self.source is not None:
            owned.append(self.source)
        if self.regulator is not None:
            owned.append(self.regulator.pki_dir)
        return owned

    def series_of(self, label: str) -> SeriesConfig:
        for series in self.series:
            if series.label == label:
                return series
        raise KeyError(label)


#: A network game's settings as written (``[[games]]``, ``[programme.game]``): its
#: series' size and digest are known keys the reader refuses with their own reason.
_GAME = fields_of(NetworkGameConfig, prizes=[fields_of(PrizeShare)], opens_after_ms=VALUE)

#: Every table and key of ``central.toml``: any other stops the start (:func:`server_kit.settings.check_known`).
SETTINGS: Schema = {
    "central": table("id", "home", "pki_dir", "journal_key", "timezone", "language"),
    "listen": table("interface", "port"),
    "database": table("url"),
    "network": table("halls"),
    "series": [fields_of(SeriesConfig)],
    "games": [_GAME],
    "annex": [fields_of(AnnexPair)],
    "regulator": fields_of(RegulatorFeedConfig),
    "consultation": fields_of(ConsultationConfig),
    "programme": {**table("id_prefix", "opens_after_ms", "hours", "games"), "game": _GAME},
    "replica": fields_of(ReplicaConfig),
    "connections": fields_of(ConnectionLimits),
}


def load_config(path: Path) -> CentralConfig:
    """Read and check the configuration file at ``path``."""
    try:
        data = load_toml(path)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such configuration file (docs/central-server.md shows one)") from None
    except ValueError as error:  # not TOML, not UTF-8, nested too deeply
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return parse_config(data, base=path.parent, source=path)


def parse_config(data: Mapping[str, Any], *, base: Path = Path("."), source: Path | None = None) -> CentralConfig:
    """The configuration a parsed TOML document describes; relative paths are under ``base``."""
    reader = _Reader(data, source)
    try:
        check_known(data, SETTINGS)
    except UnknownSetting as error:
        raise reader.error(error.key, error.reason) from None
    central = reader.table(data, "central")
    central_id = reader.text(central.get("id"), "central.id", wire.HALL_ID)
    home = base / reader.get(central, "central.home", str, ".")
    pki_dir = home / reader.get(central, "central.pki_dir", str, "pki")
    journal_key = home / reader.get(central, "central.journal_key", str, "keys/journal-signing.pem")
    timezone = reader.get(central, "central.timezone", str, DEFAULT_TIMEZONE)
    try:
        zoneinfo.ZoneInfo(timezone)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise reader.error("central.timezone", f"is a time zone name such as Europe/Madrid or UTC, not {timezone!r}") from None
    language = reader.get(central, "central.language", str, DEFAULT_LANGUAGE)
    if language not in LANGUAGES:
        raise reader.error("central.language", f"the central server speaks {', '.join(map(repr, LANGUAGES))} "
                                               f"(Catalan, Castilian, French, English), not {language!r}")
    listen = reader.table(data, "listen")
    interface = reader.get(listen, "listen.interface", str, "127.0.0.1")
    port = reader.get(listen, "listen.port", int, DEFAULT_PORT)
    if not 0 <= port <= 65535:
        raise reader.error("listen.port", f"is a TCP port, 0-65535, not {port}")
    database = reader.table(data, "database")
    url = reader.get(database, "database.url", str, f"sqlite:///{home / 'central.sqlite3'}")
    network = reader.table(data, "network")
    halls = network.get("halls")
    if not isinstance(halls, list) or not halls:
        raise reader.error("network.halls", "is the list of member hall ids, e.g. [\"hall-1\", \"hall-2\"]")
    for index, hall in enumerate(halls):
        reader.text(hall, f"network.halls[{index}]", wire.HALL_ID)
    if len(set(halls)) != len(halls):
        raise reader.error("network.halls", "names a hall twice")
    series = tuple(_series(reader, index, entry) for index, entry in enumerate(reader.array(data, "series")))
    labels = [s.label for s in series]
    if len(set(labels)) != len(labels):
        raise reader.error("series", "names a series label twice")
    games = tuple(
        _game(reader, index, entry, tuple(halls), series) for index, entry in enumerate(reader.array(data, "games"))
    )
    ids = [g.game_id for g in games]
    if len(set(ids)) != len(ids):
        raise reader.error("games", "names a game_id twice")
    pairs = tuple(_annex_pair(reader, index, entry, tuple(halls)) for index, entry in enumerate(reader.array(data, "annex")))
    paired = [hall for pair in pairs for hall in (pair.main, pair.annex)]
    if len(set(paired)) != len(paired):
        raise reader.error("annex", "names a hall in two pairs; a hall has at most one partner")
    return CentralConfig(
        central_id, home, interface, port, url, pki_dir, journal_key, tuple(halls), series, games, source, timezone,
        pairs, _regulator(reader, data, home, pki_dir), _consultation(reader, data),
        _programme(reader, data, tuple(halls), series), _replica(reader, data, url), _connections(reader, data),
        language,
    )


def _connections(reader: "_Reader", data: Mapping[str, Any]) -> ConnectionLimits:
    """``[connections]``: handshake and idle deadlines, per-address and per-certificate bounds, descriptors kept."""
    try:
        return ConnectionLimits.from_table(reader.table(data, "connections"))
    except LimitsError as error:
        raise reader.error(f"connections.{error.key}", error.reason) from None


def _programme(
    reader: "_Reader", data: Mapping[str, Any], halls: tuple[str, ...], series: tuple[SeriesConfig, ...]
) -> ProgrammeConfig | None:
    """``[programme]``: the games the central server schedules itself, one after another."""
    if "programme" not in data:
        return None
    table = reader.table(data, "programme")
    if not isinstance(table.get("game"), dict):
        raise reader.error("programme.game", "is the template of the programme's games ([programme.game] and its "
                                             "[[programme.game.prizes]])")
    template = _game_settings(reader, "programme.game", table["game"], halls, series)
    for computed in ("game_id", "opens_after_ms"):
        if computed in template:
            where = "programme.opens_after_ms" if computed == "opens_after_ms" else "the id scheme (programme.id_prefix)"
            raise reader.error(f"programme.game.{computed}", f"is not a setting of the template; {where} says it")
    hours = table.get("hours")
    try:
        return ProgrammeConfig(
            template, id_prefix=reader.get(table, "programme.id_prefix", str, "net"),
            opens_after_ms=reader.get(table, "programme.opens_after_ms", int, 60_000),
            games=None if "games" not in table else reader.get(table, "programme.games", int, None),
            hours=None if hours is None else Hours.parse(hours),
        )  # fmt: skip
    except DomainConfigError as error:
        raise reader.error(f"programme.{error.field}", str(error).removeprefix(f"{error.field}: ")) from None


def _regulator(reader: "_Reader", data: Mapping[str, Any], home: Path, pki_dir: Path) -> RegulatorFeedConfig | None:
    if "regulator" not in data:
        return None
    table = reader.table(data, "regulator")
    host = reader.get(table, "regulator.host", str, None).strip()
    if not host:
        raise reader.error("regulator.host", "names the regulator's feed receiver's host")
    port = reader.get(table, "regulator.port", int, None)
    if not 1 <= port <= 65535:
        raise reader.error("regulator.port", f"is a TCP port, 1-65535, not {port}")
    server_name = reader.get(table, "regulator.server_name", str, host).strip() or host
    folder = reader.get(table, "regulator.pki_dir", str, "")
    return RegulatorFeedConfig(host, port, server_name, home / folder if folder else pki_dir)


def _consultation(reader: "_Reader", data: Mapping[str, Any]) -> ConsultationConfig | None:
    if "consultation" not in data:
        return None
    table = reader.table(data, "consultation")
    interface = reader.get(table, "consultation.interface", str, "127.0.0.1")
    port = reader.get(table, "consultation.port", int, None)
    if not 0 <= port <= 65535:
        raise reader.error("consultation.port", f"is a TCP port, 0-65535, not {port}")
    return ConsultationConfig(interface, port)


def _replica(reader: "_Reader", data: Mapping[str, Any], database_url: str) -> ReplicaConfig | None:
    if "replica" not in data:
        return None
    table = reader.table(data, "replica")
    node = reader.text(table.get("node"), "replica.node", wire.HALL_ID)
    patroni = reader.get(table, "replica.patroni", str, None).strip().rstrip("/")
    if not patroni.startswith(("http://", "https://")) or len(patroni) < 10:
        raise reader.error("replica.patroni", f"is the URL of the local node's Patroni REST API, such as "
                                              f"http://127.0.0.1:8008, not {patroni!r}")
    if not database_url.startswith(("postgresql", "postgres:")):
        raise reader.error("replica", "needs a PostgreSQL [database] url (the local node of the pair); "
                                      "a replicated central server does not run on SQLite")
    drill = table.get("drill", False)
    if not isinstance(drill, bool):
        raise reader.error("replica.drill", f"is true or false, not {drill!r}")
    hold = table.get("hold_ms", HOLD_MS)
    if isinstance(hold, bool) or not isinstance(hold, int) or not HOLD_MIN_MS <= hold <= HOLD_MAX_MS:
        raise reader.error("replica.hold_ms", f"is the hold time in milliseconds, {HOLD_MIN_MS} to {HOLD_MAX_MS} "
                                              f"(R92.5e; default {HOLD_MS}), not {hold!r}")
    return ReplicaConfig(node, patroni, drill, hold)


def _annex_pair(reader: "_Reader", index: int, entry: Mapping[str, Any], halls: tuple[str, ...]) -> AnnexPair:
    where = f"annex[{index}]"
    main = reader.text(entry.get("main"), f"{where}.main", wire.HALL_ID)
    annex = reader.text(entry.get("annex"), f"{where}.annex", wire.HALL_ID)
    for key, hall in (("main", main), ("annex", annex)):
        if hall not in halls:
            raise reader.error(f"{where}.{key}", f"{hall} is not a member hall (network.halls)")
    if main == annex:
        raise reader.error(f"{where}.annex", "is another hall than the main hall")
    return AnnexPair(main, annex)


def _series(reader: "_Reader", index: int, entry: Mapping[str, Any]) -> SeriesConfig:
    where = f"series[{index}]"
    label = reader.text(entry.get("label"), f"{where}.label", wire.SERIES_LABEL)
    cards = reader.get(entry, f"{where}.cards", int, None)
    if not CARDS_PER_STRIP <= cards <= MAX_SERIES_CARDS or cards % CARDS_PER_STRIP:
        raise reader.error(
            f"{where}.cards",
            f"is the series' size in cards, whole strips of {CARDS_PER_STRIP}, up to {MAX_SERIES_CARDS}; not {cards}",
        )
    return SeriesConfig(label, cards)


def _game(
    reader: "_Reader", index: int, entry: Mapping[str, Any], halls: tuple[str, ...], series: tuple[SeriesConfig, ...]
) -> GamePlan:
    where = f"games[{index}]"
    settings = _game_settings(reader, where, entry, halls, series)
    opens_after = settings.pop("opens_after_ms", None)
    if opens_after is not None and (not isinstance(opens_after, int) or isinstance(opens_after, bool) or opens_after < 0):
        raise reader.error(f"{where}.opens_after_ms", f"is a whole number of milliseconds, 0 or more, not {opens_after!r}")
    plan = GamePlan(settings, opens_after)
    try:
        plan.config(_PLACEHOLDER_DIGEST)
    except DomainConfigError as error:
        raise reader.error(f"{where}.{error.field}", str(error).removeprefix(f"{error.field}: ")) from None
    return plan


def _game_settings(
    reader: "_Reader", where: str, entry: Mapping[str, Any], halls: tuple[str, ...], series: tuple[SeriesConfig, ...]
) -> dict[str, Any]:
    """A game's settings as written, with its halls (default: every member) and its series' size."""
    settings = dict(entry)
    for computed in ("series_cards", "library_digest"):
        if computed in settings:
            raise reader.error(f"{where}.{computed}", "comes from the central library ([[series]]); leave it out")
    settings.setdefault("halls", list(halls))
    label = settings.get("series_label")
    known = {s.label: s for s in series}
    if label not in known:
        raise reader.error(
            f"{where}.series_label", f"names no series of the central library ([[series]] labels: {sorted(known)})"
        )
    strangers = sorted(set(settings["halls"]) - set(halls)) if isinstance(settings["halls"], list) else []
    if strangers:
        raise reader.error(f"{where}.halls", f"{', '.join(strangers)} is not a member hall (network.halls)")
    settings["series_cards"] = known[label].cards
    return settings


class _Reader:
    """Typed access to the TOML tables, with errors that name the file and the key."""

    def __init__(self, data: Mapping[str, Any], source: Path | None) -> None:
        self.data = data
        self.source = source

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source or 'configuration'}: {key}: {message}")

    def table(self, data: Mapping[str, Any], name: str) -> Mapping[str, Any]:
        value = data.get(name, {})
        if not isinstance(value, dict):
            raise self.error(name, f"is a table ([{name}])")
        return value

    def array(self, data: Mapping[str, Any], name: str) -> list[Mapping[str, Any]]:
        value = data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.error(name, f"is an array of tables ([[{name}]])")
        return value

    def get(self, table: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
        value = table.get(key.rsplit(".", 1)[-1], default)
        if value is None:
            raise self.error(key, "is required")
        # bool is an int in Python; a port of ``true`` is still a mistake.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.error(key, f"is {'a whole number' if kind is int else 'text'}, not {value!r}")
        return value

    def text(self, value: Any, key: str, kind: wire.Text) -> str:
        """``value`` (required) checked as the protocol's text ``kind``: what crosses the wire."""
        if value is None:
            raise self.error(key, "is required")
        try:
            return str(kind.check("it", value))
        except CentralMessageError as error:
            raise self.error(key, str(error).removeprefix("it ")) from None
