"""The hall server's configuration: one TOML file, read once by the composition root.

A hall is configured by a file like ``docs/examples/hall.toml``::

    [hall]      name, home (the folder of keys, PKI, journal head; default var/),
                timezone (IANA name, e.g. "Europe/Madrid"; default Europe/Andorra): the
                hall's civil time, which says what "today" is (R81 bans, visitor
                records, cash desks, session dates, the minutes, the audit day),
                language (ca, es, fr or en; default ca): what the hall's screens speak
                until a player picks another (docs/languages.md),
                opening_hours (e.g. "mon-thu 16:00-02:00; fri, sat 16:00-04:00": reported to the
                regulator at a change, R74.2; no session opens and no machine plays outside
                the hours in force, R74.1), capacity (the authorised capacity: admission
                refuses a visitor while the people present reach it, R73.5)
    [database]  url (default: SQLite under the home folder)
    [listen]    interface, port
    [tls]       enabled, pki_dir, server_name, require_client_certificate
    [connections] handshake_timeout_s, idle_timeout_s, per_address, per_certificate,
                reserved_descriptors: what the port admits (docs/security.md)
    [prizes]    line_bp, bingo_bp, superbingo_bp, megabingo, jackpot, line_minimum_cents,
                bingo_minimum_cents (R88.3, R89-R91)
    [cards]     card_set (its name), generate_strips (make it on first start if missing)
    [[series]]  number, face_value_cents, card_count: the series in use (R82.1)
    [cashier]   desks: the cash desks (drawers) by name
    [draw]      source ("rng", the software generator, or "blower"); with the blower:
                main and reserve (serial devices), baud, approved_firmware
                ("major.minor.patch:sha256"), key_file (the link's HMAC key, hex);
                claim_wait_s: the wait with no new claim after which a line or bingo
                found closes by itself (R85.6; default 10)
    [[staff]]   name, role (R80), password_hash (``bingo hall hash-password``),
                document (identity document, so staff cannot hold a playing account, R81.b),
                licence, licence_valid_until, licence_valid_from, licence_suspended: the class I
                licence the login carries (R79; an expired or suspended one cannot sign in)
    [central]   host, port, hall_id (the name of the hall's ``server`` certificate, its
                id in the network), server_name (the central server's certificate name;
                default: host), pki_dir (default: the TLS one): the network games
                (absent: the hall plays none); a replicated central server's two
                processes as endpoints = ["HOST:PORT", "HOST:PORT"] instead of host, port
    [regulator] host, port (the regulator's feed receiver), hall_id (the name of the
                hall's ``server`` certificate; default: central.hall_id), server_name (the
                receiver's certificate name; default: host), pki_dir (default: the TLS
                one): the real-time feed of the hall's journal (R92.7; absent: no feed)
    [videobingo] seats (of traditional bingo: one machine per five), room_zone (the bingo
                room's zone; machines stand apart, R73.7), one_station_per_player,
                min_rtp_bp (default 8000), cash_box_counters (1 or 2: the people who count a
                machine's cash box; default 1), [videobingo.superjackpot] share_bp, pattern,
                balls; [[videobingo.machine]] id, model, paytable (file), credit_cents,
                stations, zone, linked (feeds the superjackpot), jackpot_share_bp,
                jackpot_pattern, jackpot_balls (docs/video-bingo.md)
    [annex]     role ("main": this hall's draw emits, or "annex"), partner (the other
                hall's id): the hall-annex game (R3.5.b), over the [central] link

Every value is checked here, so a mistake is one clear line at start, never a
failure in the middle of a session.  A key or table not listed in :data:`SETTINGS` stops
the start too, naming the key that was meant (``tls.require_client_certficate: is not a
setting here; did you mean require_client_certificate?``): a misspelt setting would
otherwise leave its default in force without a word.

Passwords are stored only as scrypt hashes with a random salt
(``scrypt$<n>$<r>$<p>$<salt>$<hash>``, base64), checked in constant time.  A new password follows the policy (:func:`check_password_policy`: at least
:data:`MIN_PASSWORD_LENGTH` characters, not all digits); a configuration whose hashes
are cheaper than today's cost still loads, and :func:`weak_hash` says why it is weak.

With no file at all, :func:`ensure_config` writes the embedded default under the home
folder with one login per role and random passwords, and hands them back once so the
command can show them; only their hashes are kept.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass, field, replace
from datetime import date, datetime, tzinfo
from pathlib import Path
from typing import Any, Mapping
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from hall_server.hall.admission import DEFAULT_TIMEZONE
from hall_server.hall.hours import HoursError, parse_schedule
from hall_server.hall.roles import STAFF_ROLES, Role
from hall_server.hall.videobingo import DEFAULT_MIN_RTP_BP, MACHINE_ID_CHARS, JackpotRule, MachineConfig, VideoBingoConfig
from hall_server.i18n import DEFAULT_LANGUAGE, LANGUAGES
from protocol.errors import DomainError
from protocol.settlement import PrizeError, PrizeRules
from server_kit.limits import ConnectionLimits, LimitsError
from server_kit.settings import VALUE, Schema, UnknownSetting, check_known, fields_of, load_toml, table, toml_string

#: scrypt cost: 2**14 x 8 x 1 takes ~16 MiB and a few tens of ms, enough for a staff
#: password typed at a console, cheap enough that signing in stays instant.
SCRYPT_N = 2**14
SCRYPT_R = 8
SCRYPT_P = 1
SALT_BYTES = 16
HASH_BYTES = 32
#: The password policy for every new staff password.
MIN_PASSWORD_LENGTH = 12
MAX_PASSWORD_LENGTH = 1000
DEFAULT_PORT = 8443
#: The longest hall name: it heads the board, every page, ticket and document.
HALL_NAME_MAX = 80
#: Seconds between two checkpoints while records come, unless ``[journal]`` says otherwise.
DEFAULT_CHECKPOINT_EVERY_SECONDS = 600


def N_(text: str) -> str:
    """A text of the public screens' catalog (``hall.po``, extracted from this module), translated
    into the hall's language where it is used."""
    return text


#: What terminals and boards say between games until the operator words it (R97.2): catalog
#: texts, which each screen says in its reader's language while ``[responsible_play]`` leaves
#: them unset; the operator's own words are shown as written (docs/languages.md).
DEFAULT_WARNINGS = (
    N_("Play for fun, not to win money back: set yourself a limit and keep to it."),
    N_("Gambling can be addictive. Take a break, and never play with money you need."),
    N_("Under 18s may not play."),
)
DEFAULT_HELP = N_(
    "Set a daily spending limit on your account at a player terminal or at the cashier's desk: a "
    "lower limit applies at once, a higher one from tomorrow. You can also exclude yourself from "
    "play for as many days as you choose; it cannot be lifted early. If gambling is a problem for "
    "you or someone close to you, ask any member of staff for the helpline's number."
)


class ConfigError(DomainError):
    """A configuration file that cannot be used; the message names the key."""


# --- Passwords ----------------------------------------------------------------------


def check_password_policy(password: str) -> None:
    """Raise :class:`ConfigError` unless ``password`` may be a staff member's new password."""
    if len(password) < MIN_PASSWORD_LENGTH:
        raise ConfigError(f"a staff password has at least {MIN_PASSWORD_LENGTH} characters "
                          "(a few words make one easy to remember)")
    if len(password) > MAX_PASSWORD_LENGTH:
        raise ConfigError(f"a staff password has at most {MAX_PASSWORD_LENGTH} characters")
    if password.isdigit():
        raise ConfigError("a staff password is not all digits; use letters or words as well")
    try:
        password.encode()
    except UnicodeEncodeError:
        raise ConfigError("a staff password is text (it holds a character that is not)") from None


def generate_password() -> str:
    """A random password that follows the policy (16 characters, about 96 bits)."""
    while True:
        password = secrets.token_urlsafe(12)
        if not password.isdigit():  # all digits happens about once in 10^14; the policy still holds
            return password


def hash_password(password: str, *, salt: bytes | None = None) -> str:
    """The scrypt hash of the new ``password`` with a fresh random salt, as one string.

    The password must follow the policy (:func:`check_password_policy`).
    """
    check_password_policy(password)
    salt = salt if salt is not None else secrets.token_bytes(SALT_BYTES)
    digest = hashlib.scrypt(
        password.encode(), salt=salt, n=SCRYPT_N, r=SCRYPT_R, p=SCRYPT_P, dklen=HASH_BYTES
    )
    return "$".join(
        ["scrypt", str(SCRYPT_N), str(SCRYPT_R), str(SCRYPT_P), _b64(salt), _b64(digest)]
    )


def check_password(password: str, password_hash: str) -> bool:
    """Whether ``password`` matches ``password_hash`` (constant-time comparison)."""
    n, r, p, salt, expected = _parse_hash(password_hash)
    try:
        secret = password.encode()
    except UnicodeEncodeError:  # a lone surrogate is no password anybody can type
        secret = b""
    digest = hashlib.scrypt(secret, salt=salt, n=n, r=r, p=p, dklen=len(expected))
    return hmac.compare_digest(digest, expected)


def weak_hash(password_hash: str) -> str | None:
    """Why a well-formed ``password_hash`` is cheaper than today's (``None`` if it is not)."""
    n, r, p, salt, digest = _parse_hash(password_hash)
    if n < SCRYPT_N or r < SCRYPT_R:
        return f"scrypt cost n={n}, r={r} is below n={SCRYPT_N}, r={SCRYPT_R}"
    if len(salt) < SALT_BYTES:
        return f"its salt is {len(salt)} bytes, not {SALT_BYTES}"
    if len(digest) < HASH_BYTES:
        return f"its hash is {len(digest)} bytes, not {HASH_BYTES}"
    return None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _parse_hash(text: str) -> tuple[int, int, int, bytes, bytes]:
    parts = text.split("$")
    if len(parts) != 6 or parts[0] != "scrypt":
        raise ConfigError("a password hash reads scrypt$n$r$p$salt$hash (bingo hall hash-password)")
    try:
        n, r, p = int(parts[1]), int(parts[2]), int(parts[3])
        salt, digest = base64.b64decode(parts[4], validate=True), base64.b64decode(parts[5], validate=True)
    except ValueError:
        raise ConfigError("a password hash holds numbers and base64 text only") from None
    if n < 2**10 or n & (n - 1) or not 1 <= r <= 64 or not 1 <= p <= 16 or len(digest) < 16:
        raise ConfigError("a password hash has scrypt parameters out of range")
    return n, r, p, salt, digest


# --- The configuration --------------------------------------------------------------


@dataclass(frozen=True)
class StaffLicence:
    """A member of staff's class I licence (R79): its number, its validity, and whether the
    regulator suspended it."""

    number: str
    valid_until: date
    valid_from: date | None = None
    suspended: bool = False

    def refusal(self, name: str, day: date) -> str | None:
        """Why ``name`` may not work under this licence on ``day`` (R79), or None."""
        if self.suspended:
            return f"the class I licence {self.number} of {name} is suspended (R79)"
        if day > self.valid_until:
            return f"the class I licence {self.number} of {name} expired on {self.valid_until.isoformat()} (R79)"
        if self.valid_from is not None and day < self.valid_from:
            return f"the class I licence {self.number} of {name} is valid from {self.valid_from.isoformat()} (R79)"
        return None


@dataclass(frozen=True)
class StaffMember:
    name: str
    role: Role
    password_hash: str
    document: str | None = None  # identity document: staff may not play (R81.b)
    #: The class I licence the login carries (R79).  The configuration's reader requires one of
    #: every [[staff]] entry, so a running hall has none without; None is a member made in code.
    licence: StaffLicence | None = None

    def licence_refusal(self, day: date) -> str | None:
        """Why this member may not sign in or sign a session's opening on ``day`` (R79), or None."""
        return self.licence.refusal(self.name, day) if self.licence is not None else None


@dataclass(frozen=True)
class TlsConfig:
    enabled: bool
    pki_dir: Path
    server_name: str
    require_client_certificate: bool = False


@dataclass(frozen=True)
class SeriesConfig:
    number: int
    face_value_cents: int
    card_count: int


@dataclass(frozen=True)
class DrawConfig:
    """Where the balls come from (R83.6, R92.10): the software generator, or the
    blower on a serial device with its reserve."""

    source: str = "rng"
    main: str = ""
    reserve: str = ""
    baud: int = 115200
    #: Accepted firmware releases: ``((major, minor, patch), sha256 hex)``.
    approved_firmware: tuple[tuple[tuple[int, int, int], str], ...] = ()
    key_file: Path | None = None
    #: The wait, in seconds, with no new claim after which a prize found closes by itself (R85.6).
    claim_wait_s: int = 10

    @property
    def blower(self) -> bool:
        return self.source == "blower"


DRAW_SOURCES = ("rng", "blower")
#: The claim wait's bounds (R85.6): long enough to call, short enough not to hold the hall.
CLAIM_WAIT_S = (3, 120)


@dataclass(frozen=True)
class CentralConfig:
    """The central server of the network games (``[central]``): where, and who this hall is to it.

    ``endpoints``: a replicated central server's processes, ``(host, port)`` each, tried in
    turn (the first is also ``host``, ``port``); empty: the one at ``host``, ``port``.
    """

    host: str
    port: int
    hall_id: str  # the hall's server certificate's name, and its id in the network
    server_name: str  # the name the central server's certificate must carry (default: each host)
    pki_dir: Path
    endpoints: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True)
class RegulatorFeedConfig:
    """The regulator's feed receiver (``[regulator]``): where, and who this hall is to it."""

    host: str
    port: int
    hall_id: str  # the hall's server certificate's name: it feeds as ``hall:<hall_id>``
    server_name: str  # the name the receiver's certificate must carry
    pki_dir: Path


@dataclass(frozen=True)
class AnnexConfig:
    """The hall-annex game (``[annex]``, R3.5.b): this hall's role and its partner hall."""

    role: str  # "main" (its draw emits) or "annex"
    partner: str


#: Characters of a hall id (it appears in card ids, ``HALL/V1-13``).
HALL_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


@dataclass(frozen=True)
class ResponsiblePlayConfig:
    """The operator's responsible-play messages (R97.2): shown on the terminals and the board."""

    warnings: tuple[str, ...] = DEFAULT_WARNINGS
    help: str = DEFAULT_HELP


@dataclass(frozen=True)
class HallConfig:
    name: str
    home: Path
    database_url: str
    interface: str
    port: int
    tls: TlsConfig
    prize_rules: PrizeRules
    card_set: str
    generate_strips: int
    series: tuple[SeriesConfig, ...]
    staff: tuple[StaffMember, ...] = field(default=())
    desks: tuple[str, ...] = ("desk-1",)
    source: Path | None = None
    draw: DrawConfig = DrawConfig()
    responsible: ResponsiblePlayConfig = ResponsiblePlayConfig()
    #: The hall's civil time zone (``[hall] timezone``), handed to every module that
    #: turns a time into a local date or time.
    timezone: tzinfo = DEFAULT_TIMEZONE
    #: The hall's language (``[hall] language``): its screens' until a player picks another.
    language: str = DEFAULT_LANGUAGE
    #: The hall's opening hours (``[hall] opening_hours``, R74.1-2), as written; None: not said.
    opening_hours: str | None = None
    #: The hall's authorised capacity in people (``[hall] capacity``, R73.5); None: not said.
    capacity: int | None = None
    #: The central server of the network games; None: this hall plays none.
    central: CentralConfig | None = None
    #: The regulator's real-time feed; None: the hall feeds none.
    regulator: RegulatorFeedConfig | None = None
    #: The video bingo machines (``[videobingo]``); None: the hall has none.
    videobingo: VideoBingoConfig | None = None
    #: The hall-annex game with a partner hall; None: this hall plays none.
    annex: AnnexConfig | None = None
    #: What the port admits (``[connections]``: deadlines, per-address and per-certificate bounds).
    connections: ConnectionLimits = ConnectionLimits()
    #: Seconds between two checkpoints of the hall's state while records come
    #: (``[journal] checkpoint_every_seconds``; docs/journal.md, "Checkpoints").
    checkpoint_every_seconds: int = DEFAULT_CHECKPOINT_EVERY_SECONDS

    def staff_member(self, name: str) -> StaffMember | None:
        for member in self.staff:
            if member.name == name:
                return member
        return None

    @property
    def scheme(self) -> str:
        return "https" if self.tls.enabled else "http"


_MACHINE = table("id", "model", "paytable", "credit_cents", "stations", "zone", "linked", "jackpot_share_bp",
                 "jackpot_pattern", "jackpot_balls")

#: Every table and key of ``hall.toml``: any other stops the start (:func:`server_kit.settings.check_known`).
SETTINGS: Schema = {
    "hall": table("name", "home", "timezone", "language", "opening_hours", "capacity"),
    "database": table("url"),
    "listen": table("interface", "port"),
    "tls": fields_of(TlsConfig),
    "connections": fields_of(ConnectionLimits),
    "prizes": fields_of(PrizeRules),
    "cards": table("card_set", "generate_strips"),
    "series": [fields_of(SeriesConfig)],
    "cashier": table("desks"),
    "journal": table("checkpoint_every_seconds"),
    "draw": fields_of(DrawConfig),
    # A member's licence is written flat: licence (its number), licence_valid_until, ...
    "staff": [{**fields_of(StaffMember),
               **{f"licence_{key}": VALUE for key in fields_of(StaffLicence, but=("number",))}}],
    "responsible_play": fields_of(ResponsiblePlayConfig),
    "central": fields_of(CentralConfig),
    "regulator": fields_of(RegulatorFeedConfig),
    "videobingo": {
        **table("seats", "room_zone", "one_station_per_player", "min_rtp_bp", "cash_box_counters"),
        "superjackpot": fields_of(JackpotRule),
        "machine": [_MACHINE],
    },
    "annex": fields_of(AnnexConfig),
}


def load_config(path: Path) -> HallConfig:
    """Read and check the configuration file at ``path``."""
    try:
        data = load_toml(path)
    except ValueError as error:  # not TOML, not UTF-8, nested too deeply
        raise ConfigError(f"{path}: not valid TOML: {error}") from None
    return parse_config(data, base=path.parent, source=path)


def parse_config(data: Mapping[str, Any], *, base: Path = Path("."), source: Path | None = None) -> HallConfig:
    """The configuration a parsed TOML document describes; relative paths are under ``base``."""
    reader = _Reader(data, source)
    try:
        check_known(data, SETTINGS)
    except UnknownSetting as error:
        raise reader.error(error.key, error.reason) from None
    hall = reader.table("hall")
    home = base / reader.get(hall, "hall.home", str, "var")
    database = reader.table("database")
    listen = reader.table("listen")
    tls = reader.table("tls")
    prizes = reader.table("prizes")
    cards = reader.table("cards")
    name = reader.get(hall, "hall.name", str, None)
    timezone = _timezone(reader, hall)
    language = _language(reader, hall)
    reader.get(tls, "tls.pki_dir", str, "pki")
    if not name.strip():
        raise reader.error("hall.name", "name the hall")
    if not name.isprintable() or len(name) > HALL_NAME_MAX:  # on the board's head line, every page and document
        raise reader.error("hall.name", f"is printable text of at most {HALL_NAME_MAX} characters, without line breaks "
                                        f"or tabs ({len(name)} characters given)")
    port = reader.get(listen, "listen.port", int, DEFAULT_PORT)
    if not 0 <= port <= 65535:
        raise reader.error("listen.port", f"a port is 0-65535, not {port}")
    rules = PrizeRules(
        line_bp=reader.get(prizes, "prizes.line_bp", int, 1500),
        bingo_bp=reader.get(prizes, "prizes.bingo_bp", int, 5500),
        superbingo_bp=reader.get(prizes, "prizes.superbingo_bp", int, 0),
        line_minimum_cents=reader.get(prizes, "prizes.line_minimum_cents", int, 0),
        bingo_minimum_cents=reader.get(prizes, "prizes.bingo_minimum_cents", int, 0),
        megabingo=reader.get(prizes, "prizes.megabingo", bool, False),
        jackpot=reader.get(prizes, "prizes.jackpot", bool, False),
    )
    try:
        rules.check()
    except PrizeError as error:
        raise reader.error("prizes", str(error)) from None
    series = tuple(_series(reader, i, entry) for i, entry in enumerate(reader.array("series")))
    numbers = [s.number for s in series]
    if len(set(numbers)) != len(numbers):
        raise reader.error("series", "a series number appears twice")
    staff = tuple(_staff(reader, i, entry) for i, entry in enumerate(reader.array("staff")))
    names = [s.name for s in staff]
    if len(set(names)) != len(names):
        raise reader.error("staff", "two staff members have the same name")
    desks = reader.get(reader.table("cashier"), "cashier.desks", list, ["desk-1"])
    if not desks or not all(isinstance(d, str) and d.strip() for d in desks) or len(set(desks)) != len(desks):
        raise reader.error("cashier.desks", "lists the cash desks by distinct names")
    strips = reader.get(cards, "cards.generate_strips", int, 100)
    every = reader.get(reader.table("journal"), "journal.checkpoint_every_seconds", int, DEFAULT_CHECKPOINT_EVERY_SECONDS)
    if not 10 <= every <= 86_400:
        raise reader.error("journal.checkpoint_every_seconds", f"is 10 to 86400 seconds, not {every}")
    pki_dir = base / tls["pki_dir"] if "pki_dir" in tls else home / "pki"
    if not 0 <= strips <= 10_000:
        raise reader.error("cards.generate_strips", "between 0 (never generate) and 10000 strips")
    return HallConfig(
        name=name.strip(),
        home=home,
        database_url=reader.get(database, "database.url", str, f"sqlite:///{home / 'hall.sqlite3'}"),
        interface=reader.get(listen, "listen.interface", str, "127.0.0.1"),
        port=port,
        tls=TlsConfig(
            enabled=reader.get(tls, "tls.enabled", bool, True),
            pki_dir=pki_dir,
            server_name=reader.get(tls, "tls.server_name", str, "hall-server"),
            require_client_certificate=reader.get(tls, "tls.require_client_certificate", bool, False),
        ),
        prize_rules=rules,
        card_set=reader.get(cards, "cards.card_set", str, "hall"),
        generate_strips=strips,
        series=series,
        staff=staff,
        desks=tuple(desks),
        source=source,
        draw=_draw(reader, base),
        responsible=_responsible(reader),
        timezone=timezone,
        language=language,
        opening_hours=_opening_hours(reader, hall),
        capacity=_capacity(reader, hall),
        central=_central(reader, base, pki_dir),
        regulator=_regulator(reader, base, pki_dir),
        videobingo=_videobingo(reader, base),
        annex=_annex(reader),
        connections=_connections(reader),
        checkpoint_every_seconds=every,
    )


def _connections(reader: "_Reader") -> ConnectionLimits:
    """``[connections]``: handshake and idle deadlines, per-address and per-certificate bounds, descriptors kept."""
    try:
        return ConnectionLimits.from_table(reader.table("connections"))
    except LimitsError as error:
        raise reader.error(f"connections.{error.key}", error.reason) from None


def _videobingo(reader: "_Reader", base: Path) -> VideoBingoConfig | None:
    if "videobingo" not in reader.data:
        return None
    table = reader.table("videobingo")
    seats = reader.get(table, "videobingo.seats", int, None)
    if seats < 0:
        raise reader.error("videobingo.seats", f"counts the seats of traditional bingo, not {seats}")
    min_rtp = reader.get(table, "videobingo.min_rtp_bp", int, DEFAULT_MIN_RTP_BP)
    if not DEFAULT_MIN_RTP_BP <= min_rtp <= 10000:
        raise reader.error("videobingo.min_rtp_bp", f"is {DEFAULT_MIN_RTP_BP} (80%) to 10000, not {min_rtp}")
    counters = reader.get(table, "videobingo.cash_box_counters", int, 1)
    if counters not in (1, 2):
        raise reader.error("videobingo.cash_box_counters", f"is 1 or 2 people counting a cash box, not {counters}")
    superjackpot = None
    if "superjackpot" in table:
        sub = table["superjackpot"]
        if not isinstance(sub, dict):
            raise reader.error("videobingo.superjackpot", "is a table ([videobingo.superjackpot])")
        superjackpot = _jackpot(reader, "videobingo.superjackpot", sub.get("share_bp"), sub.get("pattern"),
                                sub.get("balls"))
    entries = table.get("machine", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise reader.error("videobingo.machine", "is an array of tables ([[videobingo.machine]])")
    machines = []
    for index, entry in enumerate(entries):
        where = f"videobingo.machine[{index}]"
        machine_id = reader.get(entry, f"{where}.id", str, None)
        if not 1 <= len(machine_id) <= 32 or not set(machine_id) <= MACHINE_ID_CHARS:
            raise reader.error(f"{where}.id", f"is 1-32 letters, digits, '-' or '_', not {machine_id!r}")
        credit = reader.get(entry, f"{where}.credit_cents", int, None)
        if not 1 <= credit <= 10_000:
            raise reader.error(f"{where}.credit_cents", f"a credit is worth 1 to 10000 cents, not {credit}")
        stations = reader.get(entry, f"{where}.stations", int, 1)
        if stations < 1:
            raise reader.error(f"{where}.stations", f"a machine has at least one station, not {stations}")
        jackpot = None
        if "jackpot_share_bp" in entry:
            jackpot = _jackpot(reader, where + ".jackpot", entry.get("jackpot_share_bp"), entry.get("jackpot_pattern"),
                               entry.get("jackpot_balls"))
        machines.append(MachineConfig(
            machine_id=machine_id,
            model=reader.get(entry, f"{where}.model", str, None),
            paytable=base / reader.get(entry, f"{where}.paytable", str, None),
            credit_cents=credit,
            stations=stations,
            zone=reader.get(entry, f"{where}.zone", str, ""),
            jackpot=jackpot,
            linked=reader.get(entry, f"{where}.linked", bool, False),
        ))
    ids = [m.machine_id for m in machines]
    if len(set(ids)) != len(ids):
        raise reader.error("videobingo.machine", "two machines have the same id")
    return VideoBingoConfig(
        seats=seats,
        room_zone=reader.get(table, "videobingo.room_zone", str, "bingo room"),
        machines=tuple(machines),
        one_station_per_player=reader.get(table, "videobingo.one_station_per_player", bool, True),
        min_rtp_bp=min_rtp,
        superjackpot=superjackpot,
        cash_box_counters=counters,
    )


def _jackpot(reader: "_Reader", where: str, share_bp: object, pattern: object, balls: object) -> JackpotRule:
    if isinstance(share_bp, bool) or not isinstance(share_bp, int) or not 1 <= share_bp <= 2000:
        raise reader.error(f"{where}.share_bp", f"is the share of the stakes in basis points, 1 to 2000, not {share_bp!r}")
    if not isinstance(pattern, str) or not pattern:
        raise reader.error(f"{where}.pattern", "names the paytable's pattern that wins it")
    if isinstance(balls, bool) or not isinstance(balls, int) or balls < 1:
        raise reader.error(f"{where}.balls", f"is the number of balls it is won within, not {balls!r}")
    return JackpotRule(share_bp, pattern, balls)


def _annex(reader: "_Reader") -> AnnexConfig | None:
    if "annex" not in reader.data:
        return None
    if "central" not in reader.data:
        raise reader.error("annex", "needs [central]: the two halls of a hall-annex game are linked through the "
                                    "central server")
    table = reader.table("annex")
    role = reader.get(table, "annex.role", str, None)
    if role not in ("main", "annex"):
        raise reader.error("annex.role", f"is \"main\" (this hall's draw emits) or \"annex\", not {role!r}")
    partner = reader.get(table, "annex.partner", str, None)
    if not 1 <= len(partner) <= 32 or not set(partner) <= HALL_ID_CHARS:
        raise reader.error("annex.partner", f"is the partner hall's id, 1-32 letters, digits, '-' or '_', not {partner!r}")
    if partner == reader.data["central"].get("hall_id"):
        raise reader.error("annex.partner", "is another hall than this one (central.hall_id)")
    return AnnexConfig(role, partner)


#: The most endpoints ``[central]`` lists (a replicated central server has two).
MAX_CENTRAL_ENDPOINTS = 8


def _central(reader: "_Reader", base: Path, pki_dir: Path) -> CentralConfig | None:
    if "central" not in reader.data:
        return None
    table = reader.table("central")
    if "endpoints" not in table:
        return CentralConfig(*_link(reader, "central", "the central server's host", base, pki_dir, None))
    replaced = sorted(set(table) & {"host", "port"})
    if replaced:
        raise reader.error(f"central.{replaced[0]}", "is not a setting with endpoints (endpoints replace host and "
                                                     "port)")
    listed = table["endpoints"]
    if not isinstance(listed, list) or not 1 <= len(listed) <= MAX_CENTRAL_ENDPOINTS:
        raise reader.error("central.endpoints", f"lists the central server's processes as \"HOST:PORT\", 1 to "
                                                f"{MAX_CENTRAL_ENDPOINTS} of them, not {listed!r}")
    endpoints = []
    for index, entry in enumerate(listed):
        host, _, port = entry.rpartition(":") if isinstance(entry, str) else ("", "", "")
        if not host.strip("[] ") or not port.isdigit() or not 1 <= int(port) <= 65535:
            raise reader.error(f"central.endpoints[{index}]", f"is \"HOST:PORT\" with a port 1-65535, not {entry!r}")
        endpoints.append((host.strip("[] "), int(port)))
    if len(set(endpoints)) != len(endpoints):
        raise reader.error("central.endpoints", "names an endpoint twice")
    first_host, first_port, hall_id, server_name, folder = _link(
        reader, "central", "the central server's host", base, pki_dir, None,
        {**{k: v for k, v in table.items() if k != "endpoints"}, "host": endpoints[0][0], "port": endpoints[0][1]})
    named = server_name if "server_name" in table else ""
    return CentralConfig(first_host, first_port, hall_id, named, folder, tuple(endpoints))


def _regulator(reader: "_Reader", base: Path, pki_dir: Path) -> RegulatorFeedConfig | None:
    if "regulator" not in reader.data:
        return None
    central = reader.data.get("central")
    default_id = central.get("hall_id") if isinstance(central, dict) else None
    return RegulatorFeedConfig(*_link(reader, "regulator", "the regulator's feed receiver's host", base, pki_dir,
                                      default_id))


def _link(reader: "_Reader", section: str, host_is: str, base: Path, pki_dir: Path,
          default_id: str | None, table: Mapping[str, Any] | None = None) -> tuple[str, int, str, str, Path]:
    """A link's ``[section]`` (or ``table``, read as that section): host, port, hall_id (the hall's
    server certificate), server_name, pki_dir."""
    table = reader.table(section) if table is None else table
    host = reader.get(table, f"{section}.host", str, None).strip()
    if not host:
        raise reader.error(f"{section}.host", f"names {host_is}")
    port = reader.get(table, f"{section}.port", int, None)
    if not 1 <= port <= 65535:
        raise reader.error(f"{section}.port", f"a port is 1-65535, not {port}")
    hall_id = reader.get(table, f"{section}.hall_id", str, default_id)
    if not 1 <= len(hall_id) <= 32 or not set(hall_id) <= HALL_ID_CHARS:
        raise reader.error(f"{section}.hall_id", f"is 1-32 letters, digits, '-' or '_' (the name of the hall's server "
                                                 f"certificate), not {hall_id!r}")
    server_name = reader.get(table, f"{section}.server_name", str, host).strip()
    folder = reader.get(table, f"{section}.pki_dir", str, "")
    return host, port, hall_id, server_name or host, base / folder if folder else pki_dir


def _responsible(reader: "_Reader") -> ResponsiblePlayConfig:
    """The operator's messages, or the default ones (catalog texts each screen translates)."""
    table = reader.table("responsible_play")
    # The defaults stay the catalog's English texts: each screen says them in its reader's language
    # (the board in the hall's, a kiosk in its player's); an operator's own words read as written.
    warnings = reader.get(table, "responsible_play.warnings", list, list(DEFAULT_WARNINGS))
    if not warnings or not all(isinstance(w, str) and 0 < len(w.strip()) <= 200 for w in warnings):
        raise reader.error("responsible_play.warnings", "lists the warnings shown to players, each 1-200 characters")
    text = reader.get(table, "responsible_play.help", str, DEFAULT_HELP)
    if not 0 < len(text.strip()) <= 4000:
        raise reader.error("responsible_play.help", "is the help page's text, 1-4000 characters")
    return ResponsiblePlayConfig(tuple(w.strip() for w in warnings), text.strip())


def _opening_hours(reader: "_Reader", hall: Mapping[str, Any]) -> str | None:
    if "opening_hours" not in hall:
        return None
    try:
        return parse_schedule(reader.get(hall, "hall.opening_hours", str, None)).text
    except HoursError as error:
        raise reader.error("hall.opening_hours", str(error)) from None


#: The most people a hall may be authorised to hold (a bound on a typing mistake).
MAX_CAPACITY = 100_000


def _capacity(reader: "_Reader", hall: Mapping[str, Any]) -> int | None:
    if "capacity" not in hall:
        return None
    capacity = reader.get(hall, "hall.capacity", int, None)
    if not 1 <= capacity <= MAX_CAPACITY:
        raise reader.error("hall.capacity", f"is the hall's authorised capacity in people, 1 to {MAX_CAPACITY}, "
                                            f"not {capacity}")
    return capacity


def _timezone(reader: "_Reader", hall: Mapping[str, Any]) -> tzinfo:
    name = reader.get(hall, "hall.timezone", str, str(DEFAULT_TIMEZONE))
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        # ValueError: not even a zone's name (a path, an empty string).
        raise reader.error(
            "hall.timezone", f"{name!r} is not a time zone; give its IANA name, such as \"Europe/Madrid\""
        ) from None


def _language(reader: "_Reader", hall: Mapping[str, Any]) -> str:
    language = reader.get(hall, "hall.language", str, DEFAULT_LANGUAGE)
    if language not in LANGUAGES:
        raise reader.error("hall.language", f"the hall speaks {', '.join(map(repr, LANGUAGES))} (Catalan, Castilian, "
                                            f"French, English), not {language!r}")
    return language


def _draw(reader: "_Reader", base: Path) -> DrawConfig:
    table = reader.table("draw")
    source = reader.get(table, "draw.source", str, "rng")
    if source not in DRAW_SOURCES:
        raise reader.error("draw.source", f"is one of {', '.join(DRAW_SOURCES)}, not {source!r}")
    claim_wait_s = reader.get(table, "draw.claim_wait_s", int, DrawConfig.claim_wait_s)
    if not CLAIM_WAIT_S[0] <= claim_wait_s <= CLAIM_WAIT_S[1]:
        raise reader.error("draw.claim_wait_s", f"is {CLAIM_WAIT_S[0]} to {CLAIM_WAIT_S[1]} seconds with no new "
                                                f"claim before a prize found closes by itself (R85.6), not {claim_wait_s}")
    if source == "rng":
        return DrawConfig(claim_wait_s=claim_wait_s)
    main = reader.get(table, "draw.main", str, None).strip()
    if not main:
        raise reader.error("draw.main", "names the main blower's serial device, e.g. /dev/ttyUSB0")
    reserve = reader.get(table, "draw.reserve", str, "").strip()
    if reserve == main:
        raise reader.error("draw.reserve", "is another device than the main blower's")
    baud = reader.get(table, "draw.baud", int, 115200)
    if baud not in (9600, 19200, 38400, 57600, 115200, 230400):
        raise reader.error("draw.baud", f"is a standard serial speed (115200), not {baud}")
    approved = []
    for text in reader.get(table, "draw.approved_firmware", list, []):
        version, _, digest = str(text).partition(":")
        parts = version.split(".")
        if (len(parts) != 3 or not all(p.isdigit() for p in parts) or len(digest) != 64
                or any(c not in "0123456789abcdef" for c in digest)):
            raise reader.error("draw.approved_firmware",
                               f"lists \"major.minor.patch:sha256 in hex\", not {text!r}")
        approved.append(((int(parts[0]), int(parts[1]), int(parts[2])), digest))
    if not approved:
        raise reader.error("draw.approved_firmware",
                           "lists the blower firmware releases the hall accepts "
                           "(python -m hall_server.blower approve prints this one's)")
    key_file = reader.get(table, "draw.key_file", str, "")
    return DrawConfig("blower", main, reserve, baud, tuple(approved),
                      base / key_file if key_file else None, claim_wait_s)


def _series(reader: "_Reader", index: int, entry: Mapping[str, Any]) -> SeriesConfig:
    where = f"series[{index}]"
    number = reader.get(entry, f"{where}.number", int, None)
    value = reader.get(entry, f"{where}.face_value_cents", int, None)
    count = reader.get(entry, f"{where}.card_count", int, None)
    if number <= 0 or value <= 0 or count <= 0:
        raise reader.error(where, "number, face_value_cents and card_count are positive")
    return SeriesConfig(number, value, count)


def _staff(reader: "_Reader", index: int, entry: Mapping[str, Any]) -> StaffMember:
    where = f"staff[{index}]"
    name = reader.get(entry, f"{where}.name", str, None).strip()
    role_name = reader.get(entry, f"{where}.role", str, None)
    if not name:
        raise reader.error(f"{where}.name", "name the staff member")
    if not name.isprintable():  # a name is typed at the sign-in and shown on every page and record
        raise reader.error(f"{where}.name", f"is printable text, without line breaks or tabs, not {name!r}")
    try:
        role = Role(role_name)
    except ValueError:
        role = Role.SYSTEM  # refused just below, with the list of roles
    if role is Role.SYSTEM:
        raise reader.error(
            f"{where}.role", f"{role_name!r} is not a staff role; one of {', '.join(STAFF_ROLES)} (R80)"
        )
    password_hash = reader.get(entry, f"{where}.password_hash", str, None)
    try:
        _parse_hash(password_hash)
    except ConfigError as error:
        raise reader.error(f"{where}.password_hash", str(error)) from None
    document = entry.get("document")
    if document is not None and (not isinstance(document, str) or not document.strip()):
        raise reader.error(f"{where}.document", "is the identity document's number, as text")
    return StaffMember(name, role, password_hash, document, _licence(reader, where, entry))


def _licence(reader: "_Reader", where: str, entry: Mapping[str, Any]) -> StaffLicence:
    """A staff entry's class I licence (R79): every login carries one."""
    number = entry.get("licence")
    if not isinstance(number, str) or not number.strip() or len(number.strip()) > 40:
        raise reader.error(f"{where}.licence", "is the member's class I licence number, as text of 1-40 "
                                               "characters (R79: every staff login carries one)")
    until = _day(reader, f"{where}.licence_valid_until", entry.get("licence_valid_until"), required=True)
    since = _day(reader, f"{where}.licence_valid_from", entry.get("licence_valid_from"), required=False)
    assert until is not None
    if since is not None and since > until:
        raise reader.error(f"{where}.licence_valid_from", "is on or before licence_valid_until")
    suspended = reader.get(entry, f"{where}.licence_suspended", bool, False)
    return StaffLicence(number.strip(), until, since, suspended)


def _day(reader: "_Reader", key: str, value: object, *, required: bool) -> date | None:
    """A TOML date (2027-12-31) or the same as text."""
    if value is None and not required:
        return None
    if isinstance(value, date) and not isinstance(value, datetime):
        return value
    if isinstance(value, str):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass
    raise reader.error(key, f"is a date YYYY-MM-DD{'' if required else ' (or left out)'}, not {value!r}")


class _Reader:
    """Typed access to the TOML tables, with errors that name the file and the key."""

    def __init__(self, data: Mapping[str, Any], source: Path | None) -> None:
        self.data = data
        self.source = source

    def error(self, key: str, message: str) -> ConfigError:
        return ConfigError(f"{self.source or 'configuration'}: {key}: {message}")

    def table(self, name: str) -> Mapping[str, Any]:
        value = self.data.get(name, {})
        if not isinstance(value, dict):
            raise self.error(name, "is a table ([" + name + "])")
        return value

    def array(self, name: str) -> list[Mapping[str, Any]]:
        value = self.data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            raise self.error(name, "is an array of tables ([[" + name + "]])")
        return value

    def get(self, table: Mapping[str, Any], key: str, kind: type, default: Any) -> Any:
        value = table.get(key.rsplit(".", 1)[-1], default)
        if value is None:
            raise self.error(key, "is required")
        # bool is an int in Python; a port of ``true`` is still a mistake.
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.error(key, f"is {kind.__name__}, not {value!r}")
        return value


# --- The embedded default -------------------------------------------------------------

DEFAULT_STAFF = (
    ("admin", Role.ADMINISTRATOR),
    ("rosa", Role.ROOM_CHIEF),
    ("tomas", Role.TABLE_CHIEF),
    ("sam", Role.SELLER_CALLER),
    ("carla", Role.CASHIER),
    ("adam", Role.ADMISSION),
)


#: The pots of ``[prizes]`` as the generated file offers them: commented out (a hall starts
#: without pots; line + bingo meet the 70% floor alone), each with its meaning and bounds.
POTS_TEMPLATE = (
    "# The pots (R89-R91), off until their line is uncommented. Each takes its share of every",
    "# game's sales on top of the line and the bingo, and counts towards the 70% (line + bingo",
    "# + pots: 7000 to 10000 basis points), so a hall with pots may lower bingo_bp. The room",
    "# chief puts them in play game by game (announce_pots, announce_megabingo; docs/hall-game.md).",
    "# Superbingo (R89): 200 to 500 basis points (2%-5%) of sales, 0 for none; paid on top of",
    "# the bingo won within the game's ball limit (42-90); unwon, the session's last game takes it.",
    "# superbingo_bp = 200",
    "# Megabingo (R90): 1% of sales into its fund, paid whole to the bingo of the game",
    "# announced at least 10 days ahead.",
    "# megabingo = true",
    "# Jackpot (R91): 10% of sales (70% to the jackpot, at most 15,000 EUR, 30% to its reserve),",
    "# won by a bingo within the game's 40, 41 or 42 balls; deposited daily in its bank account.",
    "# jackpot = true",
)


def default_config_text(hall_name: str, staff: list[tuple[str, Role, str]], port: int = DEFAULT_PORT,
                        licences_until: date | None = None) -> str:
    """A complete configuration file: the embedded default with the given staff hashes.

    Each generated login carries a placeholder class I licence (R79) valid to ``licences_until``
    (default: the end of next year), to be replaced by its holder's.
    """
    until = licences_until or date(date.today().year + 1, 12, 31)
    lines = [
        "# Hall server configuration (bingo hall serve --config FILE).",
        "# Paths are relative to this file's folder.",
        "",
        "[hall]",
        "# The hall's name, on the board, every page and document (printable, at most 80 characters).",
        f"name = {toml_string(hall_name)}",
        'home = "."',
        "# The hall's civil time (IANA name): what \"today\" is for bans, cash desks, sessions, minutes.",
        f"timezone = {toml_string(str(DEFAULT_TIMEZONE))}",
        "# The language of the hall's screens until a player picks another: \"ca\" (Catalan), \"es\"",
        "# (Castilian), \"fr\" (French) or \"en\" (English).",
        f"language = {toml_string(DEFAULT_LANGUAGE)}",
        "# The opening hours (R74): days, then windows HH:MM-HH:MM (past midnight when the end is",
        "# earlier), rules separated by \";\". Reported to the regulator at the first start and at each",
        "# change; a change applies once the regulator approves it (recorded on the administrator's",
        "# desk) or the day after three whole working days without objection (Andorra's holidays",
        "# left out). No session opens and no video bingo machine plays outside the hours in force.",
        "# Without it the hall is held to no hours.",
        '# opening_hours = "mon-thu 16:00-02:00; fri, sat 16:00-04:00; sun 12:00-00:00"',
        "# The hall's authorised capacity in people (R73.5): the admission desk refuses a visitor",
        "# while the people present (admitted, not yet recorded as leaving) reach it.",
        "# capacity = 250",
        "",
        "[listen]",
        'interface = "127.0.0.1"',
        f"port = {port}",
        "",
        "[tls]",
        "enabled = true",
        'pki_dir = "pki"',
        'server_name = "hall-server"  # certificate name in the PKI folder',
        "# Client certificates are always asked for and checked; terminals must present one.",
        "# true: every client must (staff PCs and board screens too), or the handshake fails.",
        "require_client_certificate = false",
        "",
        "[connections]  # what the port admits; docs/security.md, \"Connections\"",
        "# Seconds from accept to a complete TLS handshake; a slower one is cut.",
        "handshake_timeout_s = 10",
        "# Seconds a connection without a client certificate may be silent both ways (pages are pinged).",
        "idle_timeout_s = 120",
        "# Open connections from one address without a certificate, and with one certificate.",
        "per_address = 64",
        "per_certificate = 16",
        "# File descriptors kept for the database, the journal and the logs (at most half the limit).",
        "reserved_descriptors = 256",
        "",
        "[prizes]  # basis points of each game's sales (R88.1: line + bingo + pots >= 7000)",
        "line_bp = 1500",
        "bingo_bp = 5500",
        "# A fixed sum a prize never falls below (R88.3); the house makes up the difference.",
        "line_minimum_cents = 0",
        "bingo_minimum_cents = 0",
        *POTS_TEMPLATE,
        "",
        "[cards]  # generated on first start when the set is missing",
        'card_set = "hall"',
        "generate_strips = 100",
        "",
        "[cashier]",
        'desks = ["desk-1"]',
        "",
        "[[series]]",
        "number = 1001",
        "face_value_cents = 100",
        "card_count = 600",
        "",
        "[[series]]",
        "number = 1002",
        "face_value_cents = 100",
        "card_count = 600",
        "",
        "# Each login carries its holder's class I licence (R79): its number, the last day it is valid",
        "# (licence_valid_from: the first, if later than today), licence_suspended = true while the",
        "# regulator suspends it. An expired or suspended licence cannot sign in nor open a session.",
        "# The generated logins carry placeholders: put each person's own licence here.",
        "# Each login's identity document (document = its number): staff may not play (R81.b), so the",
        "# admission desk refuses it as a visitor's and the cashier opens no account on it. The",
        "# generated ones are placeholders too: put each person's own document number here.",
    ]
    for index, (name, role, password_hash) in enumerate(staff, start=1):
        lines += ["", "[[staff]]", f"name = {toml_string(name)}", f'role = "{role}"',
                  f"password_hash = {toml_string(password_hash)}",
                  f'licence = "PLACEHOLDER-{index:03d}"', f"licence_valid_until = {until.isoformat()}",
                  f"document = {toml_string(placeholder_document(index))}"]
    return "\n".join(lines) + "\n"


def placeholder_document(index: int) -> str:
    """The identity document number a generated login carries until its holder's is put in."""
    return f"STAFF{index:03d}"


def with_options(config: HallConfig, options: Mapping[str, Any]) -> HallConfig:
    """``config`` with what the command line overrides: ``port``, ``interface``, ``database_url`` and
    ``regulator`` (``HOST:PORT`` of the regulator's receiver)."""
    if options.get("port") is not None:
        config = replace(config, port=int(options["port"]))
    if options.get("interface"):
        config = replace(config, interface=str(options["interface"]))
    if options.get("database_url"):
        config = replace(config, database_url=str(options["database_url"]))
    if options.get("regulator"):
        config = replace(config, regulator=feed_at(str(options["regulator"]), config))
    return config


def feed_at(address: str, config: HallConfig) -> RegulatorFeedConfig:
    """``--regulator HOST:PORT``: the feed to that receiver, as the hall's own server certificate."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ConfigError(f"--regulator is HOST:PORT of the regulator's receiver (localhost:8700), not {address!r}")
    hall_id = config.regulator.hall_id if config.regulator is not None else config.tls.server_name
    return RegulatorFeedConfig(host, int(port), hall_id, host, config.tls.pki_dir)


def ensure_config(path: Path, *, hall_name: str = "Demo hall", port: int = DEFAULT_PORT) -> tuple[HallConfig, list[tuple[str, Role, str]]]:
    """The configuration at ``path``; written with fresh staff logins if missing.

    Returns the configuration and, only when the file was just written, the logins
    ``(name, role, password)`` in clear: the one time anybody sees them.
    """
    created: list[tuple[str, Role, str]] = []
    if not path.exists():
        created = [(name, role, generate_password()) for name, role in DEFAULT_STAFF]
        text = default_config_text(
            hall_name, [(name, role, hash_password(password)) for name, role, password in created], port
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x") as stream:  # never overwrite a hall's configuration
            stream.write(text)
    return load_config(path), created
