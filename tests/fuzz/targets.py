"""The fuzz targets: every parser and endpoint, each with its input generator and its property.

A :class:`Harness` makes inputs (:meth:`Harness.generate`) and feeds one to its target
(:meth:`Harness.check`), which answers ``"accepted"`` or ``"rejected"`` or raises
:class:`Finding` when the property breaks:

* no exception but the target's declared error type (a parser's one error class; an
  endpoint never raises at all);
* no answer that says the server failed (HTTP 500, the ``internal`` error code);
* no state change from a rejected input: the journal's length (only the refusal
  records an endpoint journals by design may be added) and every ledger balance.

The same harnesses serve the hypothesis tests in this folder and ``bench/fuzz.py``.
"""

from __future__ import annotations

import abc
import inspect
import io
import json
import random
import tempfile
import traceback
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from twisted.internet import defer
from twisted.internet.address import IPv4Address
from twisted.internet.task import Clock
from twisted.internet.testing import MemoryReactorClock, StringTransport
from twisted.logger import globalLogPublisher

from protocol import blower_frames as bf
from protocol import blower_messages as bm
from protocol.blower_link import BAD, MESSAGE, Link
from protocol.cardfile import CardFileError, card_codes, read_card_file, write_card_file
from protocol.replay import ReplayError, replay_json
from protocol.strips import sample_strips
from protocol.terminal_messages import GAMES, HALL, TERMINAL_MESSAGES, MessageError, OneOf, Text, Whole, decode
from tests.fuzz.generators import (
    FULL,
    Profile,
    awkward_integer,
    awkward_scalar,
    awkward_text,
    json_text,
    mutate_bytes,
    replacement,
)

ROOT = Path(__file__).resolve().parents[2]


class Finding(AssertionError):
    """A broken property: what was fed, and what happened."""

    def __init__(self, target: str, data: Any, what: str, where: str = "", kind: str = "") -> None:
        self.target, self.data, self.what, self.where = target, data, what, where
        self.kind = kind or what.split(":")[0][:60]
        shown = repr(data)
        if len(shown) > 300:
            shown = shown[:300] + f"... ({len(shown)} characters)"
        super().__init__(f"{target}: {what}{' at ' + where if where else ''}\n  input: {shown}")

    @property
    def key(self) -> str:
        """What makes two findings the same: the kind of failure and where it was raised."""
        return f"{self.kind} @ {self.where}"


def _where(error: BaseException) -> str:
    """The innermost frame of the project's own code in ``error``'s traceback: file:line."""
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if str(ROOT) in f.filename and "/tests/" not in f.filename]
    frame = (own or frames)[-1]
    return f"{Path(frame.filename).resolve().relative_to(ROOT) if str(ROOT) in frame.filename else frame.filename}" \
           f":{frame.lineno}"


def unexpected(target: str, data: Any, error: BaseException) -> Finding:
    return Finding(target, data, f"{type(error).__name__}: {str(error)[:200]}", _where(error), type(error).__name__)


_logged_failures: list[Any] = []


def _watch_log(event: dict[str, Any]) -> None:
    if "log_failure" in event:
        _logged_failures.append(event["log_failure"])


globalLogPublisher.addObserver(_watch_log)  # type: ignore[arg-type]  # any callable observes


def _failure_where(failure: Any) -> str:
    own = [f for f in failure.frames if str(ROOT) in f[1] and "/tests/" not in f[1]]
    if not own:
        return "?"
    _, filename, line = own[-1][:3]
    return f"{Path(filename).resolve().relative_to(ROOT)}:{line}"


def internal(target: str, data: Any, message: str, context: str) -> Finding:
    """An ``internal`` answer, located by the fault the server logged for it."""
    if _logged_failures:
        failure = _logged_failures[0]
        return Finding(target, data, f"internal error ({context}): {failure.type.__name__}: "
                                     f"{str(failure.value)[:160]}", _failure_where(failure),
                       f"internal {failure.type.__name__}")
    return Finding(target, data, f"internal error: {message}", context, "internal")


class Harness(abc.ABC):
    """One target: inputs in, a property checked on each."""

    name = ""
    #: How many inputs one hypothesis example feeds: enough that hypothesis's own cost per
    #: example is small beside the target's.
    batch = 250

    def __init__(self, profile: Profile = FULL) -> None:
        self.profile = profile

    @abc.abstractmethod
    def generate(self, rng: random.Random, splice: Any = None) -> Any:
        """A batch of inputs for this target."""

    @abc.abstractmethod
    def check(self, data: Any) -> str:
        """The property checked on each input: an empty string, or what went wrong."""

    def feed(self, data: Any) -> str:
        """:meth:`check`, and a fault the server logged while handling ``data`` is a finding too."""
        del _logged_failures[:]
        outcome = self.check(data)
        if _logged_failures:
            failure = _logged_failures[0]
            raise Finding(self.name, data, f"logged fault {failure.type.__name__}: {str(failure.value)[:200]}",
                          _failure_where(failure), f"logged {failure.type.__name__}")
        return outcome

    def run(self, rng: random.Random, count: int, splice: Any = None) -> dict[str, int]:
        """Feed ``count`` generated inputs; the first may carry ``splice``.  Raises the first finding."""
        tally = {"accepted": 0, "rejected": 0}
        for index in range(count):
            data = self.generate(rng, splice if index == 0 else None)
            tally[self.feed(data)] += 1
        return tally


# --- Card files ------------------------------------------------------------------------------


class CardFileHarness(Harness):
    """``read_card_file`` as ``bingo cards`` calls it: the file's bytes read as UTF-8 CSV."""

    name = "cardfile"
    KEY = b"k" * 32

    def __init__(self, profile: Profile = FULL) -> None:
        super().__init__(profile)
        cells = sample_strips(2, random.Random(7).randbytes).reshape(-1, 27)
        ids = [f"S1-{k}" for k in range(1, len(cells) + 1)]
        strips = [f"P{1 + k // 6}" for k in range(len(cells))]
        plain, coded = io.StringIO(), io.StringIO()
        write_card_file(plain, ids, strips, cells)
        write_card_file(coded, ids, strips, cells, card_codes(self.KEY, ids, cells))
        self.files = [plain.getvalue(), coded.getvalue()]

    def generate(self, rng: random.Random, splice: Any = None) -> bytes:
        lines = rng.choice(self.files).splitlines(keepends=True)
        pick = rng.random()
        if pick < 0.05:
            return "".join(lines).encode()
        if pick < 0.5:  # one field of one line replaced
            at = rng.randrange(len(lines))
            fields = lines[at].rstrip("\n").split(",")
            field = rng.randrange(len(fields))
            value = splice if splice is not None else rng.choice((
                awkward_text(rng, self.profile), str(awkward_integer(rng, self.profile)), '"a,b"', '"',
                "0" * rng.randint(1, 6), str(rng.randint(0, 95))))
            fields[field] = str(value)
            lines[at] = ",".join(fields) + rng.choice(("\n", "\r\n", ""))
        elif pick < 0.7:  # lines dropped, repeated or swapped
            at, other = rng.randrange(len(lines)), rng.randrange(len(lines))
            choice = rng.random()
            if choice < 0.4:
                del lines[at]
            elif choice < 0.7:
                lines.insert(at, lines[other])
            else:
                lines[at], lines[other] = lines[other], lines[at]
        elif pick < 0.8:  # a cell swapped with another's: cards that break the rules of a strip
            at = rng.randrange(1, len(lines))
            fields = lines[at].rstrip("\n").split(",")
            a, b = rng.randrange(2, 29), rng.randrange(2, 29)
            fields[a], fields[b] = fields[b], fields[a]
            lines[at] = ",".join(fields) + "\n"
        data = "".join(lines).encode("utf-8", "surrogatepass" if self.profile.surrogates else "replace")
        return mutate_bytes(rng, data, self.profile) if pick >= 0.8 else data

    def check(self, data: bytes) -> str:
        stream = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", newline="")
        try:
            read_card_file(stream, code_key=self.KEY)
        except CardFileError:
            return "rejected"
        except Exception as error:
            raise unexpected(self.name, data, error) from error
        return "accepted"


# --- Replay input ------------------------------------------------------------------------------


class ReplayHarness(Harness):
    """``replay_json``: the audit replay's input, from the documented examples mutated."""

    name = "replay"
    batch = 100

    def __init__(self, profile: Profile = FULL) -> None:
        super().__init__(profile)
        examples = [p for p in sorted((ROOT / "docs" / "examples").glob("replay-*.json"))
                    if not p.name.endswith(".out.json")]
        self.documents = [json.loads(p.read_text()) for p in examples]
        # The first example is the cheap one to run whole; the others are picked less often.
        self.documents.sort(key=lambda d: len(json.dumps(d)))

    def generate(self, rng: random.Random, splice: Any = None) -> bytes:
        document = self.documents[0] if rng.random() < 0.95 else rng.choice(self.documents)
        return json_text(rng, lambda r: document, profile=self.profile, splice=splice, deep=3000)

    def check(self, data: bytes) -> str:
        try:
            replay_json(data)
        except ReplayError:
            return "rejected"
        except Exception as error:
            raise unexpected(self.name, data, error) from error
        return "accepted"


# --- Blower frames -----------------------------------------------------------------------------

UNPACKERS: dict[int, Callable[[bytes], Any]] = {
    bf.HELLO_REQ: bm.unpack_hello_req, bf.HELLO: bm.unpack_hello, bf.SYNC: bm.unpack_sync, bf.DRAW: bm.unpack_draw,
    bf.CONFIRM: bm.unpack_confirm, bf.BALL: bm.unpack_ball, bf.NEW_GAME: bm.unpack_new_game,
    bf.STATUS: bm.unpack_status, bf.FAULT: bm.unpack_fault, bf.COUNT_RESULT: bm.unpack_count_result,
    bf.REFUSED: bm.unpack_refused, bf.NOTICE: bm.unpack_notice,
}


def _valid_payload(rng: random.Random, kind: int) -> bytes:
    game, draws = rng.randint(1, 2**32 - 1), rng.randint(0, 90)
    ball = rng.randint(1, 90)
    drawn = rng.sample(range(1, 91), draws)
    builders: dict[int, Callable[[], bytes]] = {
        bf.HELLO_REQ: lambda: bm.pack_hello_req(rng.getrandbits(32)),
        bf.HELLO: lambda: bm.pack_hello((1, 2, 3), rng.randbytes(32), rng.getrandbits(32), rng.randint(0, 7), game,
                                        draws, ball, rng.randint(0, 90), rng.randint(0, 5)),
        bf.SYNC: lambda: bm.pack_sync(game, drawn, drawn[-1] if drawn else 0),
        bf.DRAW: lambda: bm.pack_draw(game, draws),
        bf.CONFIRM: lambda: bm.pack_confirm(game, draws, ball),
        bf.BALL: lambda: bm.pack_ball(game, draws, ball),
        bf.NEW_GAME: lambda: bm.pack_new_game(game),
        bf.STATUS: lambda: bm.pack_status(rng.randint(0, 7), game, draws, ball, rng.randint(0, 5)),
        bf.FAULT: lambda: bm.pack_fault(rng.randint(1, 5), game, draws, ball),
        bf.COUNT_RESULT: lambda: bm.pack_count_result(draws, rng.randint(0, 3), drawn[:3], drawn[3:5]),
        bf.REFUSED: lambda: bm.pack_refused(rng.choice(bf.HOST_KINDS), rng.randint(1, 8), draws, ball),
        bf.NOTICE: lambda: bm.pack_notice(rng.randint(1, 5), rng.randint(0, 70000)),
    }
    build = builders.get(kind)
    return build() if build is not None else rng.randbytes(rng.randint(0, 8))


class BlowerHarness(Harness):
    """The blower link, bottom to top: COBS/CRC/HMAC frames, the link's sequencing, the payloads.

    Input: ``(key, chunks)``, bytes as they come off the serial line in arbitrary pieces.
    """

    name = "blower"
    KEYS = (b"", b"link-key-0123456789abcdef")

    def _frame(self, rng: random.Random, key: bytes, link_id: int) -> bytes:
        kind = rng.choice((*UNPACKERS, bf.ACK, rng.randrange(256)))
        payload = _valid_payload(rng, kind)
        pick = rng.random()
        if pick < 0.3:  # a payload that lies about itself, with a correct CRC and tag
            payload = mutate_bytes(rng, payload, self.profile)[: bf.MAX_PAYLOAD]
        seq = rng.choice((0, 1, 2, rng.randrange(65536)))
        frame = bf.Frame(kind & 0xFF, link_id if rng.random() < 0.8 else rng.getrandbits(32), seq, payload)
        encoded = bf.encode_frame(frame, key if rng.random() < 0.9 else rng.choice(self.KEYS))
        if pick > 0.75:  # damaged on the line
            encoded = mutate_bytes(rng, encoded, self.profile)
        return encoded

    def generate(self, rng: random.Random, splice: Any = None) -> tuple[bytes, list[bytes]]:
        key = rng.choice(self.KEYS)
        link_id = rng.getrandbits(32)
        parts = [self._frame(rng, key, link_id) for _ in range(rng.randint(1, 4))]
        if rng.random() < 0.1:
            parts.append(rng.randbytes(rng.randint(1, 2 * bf.MAX_ENCODED)))  # noise, or a frame too long
        if isinstance(splice, bytes):
            parts.insert(rng.randrange(len(parts) + 1), splice)
        stream = b"".join(parts)
        cuts = sorted(rng.sample(range(len(stream) + 1), min(len(stream) + 1, rng.randint(0, 4))))
        chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)])]
        return key, chunks

    def check(self, data: tuple[bytes, list[bytes]]) -> str:
        key, chunks = data
        stream = b"".join(chunks)
        delivered = 0
        try:
            for piece in stream.split(b"\x00"):
                if not piece:
                    continue
                try:
                    frame = bf.decode_frame(piece, key)
                except bf.FrameError:
                    continue
                unpack = UNPACKERS.get(frame.kind)
                if unpack is not None:
                    try:
                        unpack(frame.payload)
                    except bf.FrameError:
                        pass
            decoder = bf.FrameDecoder(key)
            for chunk in chunks:
                for item in decoder.feed(chunk):
                    if not isinstance(item, (bf.Frame, bf.FrameError)):
                        raise Finding(self.name, data, f"the decoder gave {item!r}")
                if decoder.buffered > bf.MAX_ENCODED:
                    raise Finding(self.name, data, f"the decoder holds {decoder.buffered} bytes")
            link = Link(key=key, rate_per_s=50, notice_ms=100)
            link.reset(0)
            before = (link.link_id, link._rx_last, link._outstanding)
            for now, chunk in enumerate(chunks):
                events = link.feed(chunk, now * 10)
                link.poll(now * 10)
                link.take_output()
                delivered += sum(1 for event, _ in events if event == MESSAGE)
                if any(event == BAD and not isinstance(item, bf.FrameError) for event, item in events):
                    raise Finding(self.name, data, "a BAD event without its error")
            if not delivered and (link.link_id, link._rx_last, link._outstanding) != before:
                raise Finding(self.name, data, "frames the link refused changed its state")
        except Finding:
            raise
        except Exception as error:
            raise unexpected(self.name, data, error) from error
        return "accepted" if delivered else "rejected"


# --- Terminal messages -------------------------------------------------------------------------


def terminal_message(rng: random.Random, seq: int = 1, values: dict[str, Any] | None = None) -> dict[str, Any]:
    """A valid terminal message of any type (fields from ``values`` where given)."""
    kind = rng.choice(list(TERMINAL_MESSAGES))
    own = values or {}
    fields = {
        "terminal": own.get("terminal", "T1"), "token": own.get("token", "token-0"),
        "account": own.get("account", "1234 5678 9012"), "pin": own.get("pin", "4821"),
        "quantity": rng.randint(1, 6), "stake_pct": rng.choice((100, 50, 1)),
    }
    fields["game"] = rng.choice(GAMES)
    fields["game_id"] = "" if fields["game"] == HALL else own.get("game_id", "g-1")
    schema = TERMINAL_MESSAGES[kind]
    return {"v": 1, "seq": seq, "type": kind,
            **{name: fields[name] if name in fields else _schema_value(rng, field) for name, field in schema.items()}}


def _schema_value(rng: random.Random, field: Any) -> Any:
    """A valid value of a field the protocol declares and this module does not know by name."""
    if isinstance(field, Whole):
        return rng.randint(field.low, min(field.high, field.low + 1000))
    if isinstance(field, Text):
        return f"f{rng.getrandbits(32)}"[: field.max_length].ljust(field.min_length, "x")
    if isinstance(field, OneOf):
        return rng.choice(field.words)
    return None


def as_frame(rng: random.Random, data: bytes, profile: Profile) -> str | bytes:
    """``data`` as a WebSocket gives it: mostly a text frame (str), sometimes a binary one."""
    if rng.random() < 0.8:
        return data.decode("utf-8", "surrogateescape" if profile.surrogates else "replace")
    return data


class TerminalMessagesHarness(Harness):
    """``protocol.terminal_messages.decode``: one text frame from a terminal."""

    name = "terminal_messages"

    def generate(self, rng: random.Random, splice: Any = None) -> bytes | str:
        data = json_text(rng, lambda r: terminal_message(r, r.choice((1, 2, 2**53, 7))), profile=self.profile,
                         splice=splice, deep=2100)
        return as_frame(rng, data, self.profile)

    def check(self, data: bytes | str) -> str:
        try:
            decode(data)
        except MessageError:
            return "rejected"
        except Exception as error:
            raise unexpected(self.name, data, error) from error
        return "accepted"


# --- A whole hall, for the endpoints -------------------------------------------------------------


@dataclass
class HallUnderTest:
    """The hall of the terminal tests (every module, an open session, a virtual sale) with its web edge."""

    hall: Any
    gateway: Any
    site: Any
    sign_ins: Any
    channel: Any
    actors: list[Any]
    accounts: list[str]
    tokens: dict[str, str]
    committed: list[tuple[int, str]]  # (seq, type) of every record committed, as the observers hear it

    def state(self) -> tuple[int, dict[str, int]]:
        """What a rejected input must leave as it was: the journal's length and every balance."""
        return self.hall.core.seq, self.hall.ledger.ledger.balances()

    def types_since(self, seq: int) -> set[str]:
        """The types of the records committed after record ``seq``."""
        return {kind for number, kind in reversed(self.committed[-64:]) if number > seq}


def build_hall_under_test(folder: Path) -> HallUnderTest:
    from hall_server.hall.roles import Role
    from hall_server.store.database import open_database
    from hall_server.terminal_gateway.gateway import TerminalGateway
    from hall_server.web.auth import SignInRefused, SignIns, StaffDirectory
    from hall_server.web.live import LiveHub
    from hall_server.web.site import build_site
    from hall_server.web.view import HallView
    from server_kit.core import Actor
    from server_kit.journal.sql import Journal
    from server_kit.web.channel import CommandChannel
    from tests.hall.conftest import result
    from tests.terminals.conftest import SELLER, build_hall, prepare

    clock = Clock()
    clock.advance(1_780_000_000)
    engine = open_database(f"sqlite:///{folder / 'hall.sqlite3'}")
    journal = Journal(engine, Ed25519PrivateKey.generate(), head=folder / "journal.head")
    hall = build_hall(journal, clock)
    prepare(hall)
    view = HallView("Fuzz hall")
    hall.core.add_view(view)
    result(hall.games.announce_sale(SELLER, 7))
    result(hall.virtual.open_sale(SELLER, 3600))
    accounts = [hall.player(f"1000000{k}A", 1_000_000, "4821") for k in range(3)]
    tokens = {f"T{k}": hall.terminal(f"T{k}") for k in range(1, 4)}
    actors = [Actor(f"staff-{role.value}", role) for role in Role]

    def check_pin(number: str, pin: str) -> defer.Deferred[bool]:
        # The gateway's port for the PIN check; scrypt itself is not what is fuzzed here.
        return defer.succeed(pin == "4821" and number in accounts)

    # The gateway takes the hall's PIN guard where the hall has one.
    guard = {"pins": hall.pins} if hasattr(hall, "pins") else {}
    gateway = TerminalGateway(hall.core, hall.games, hall.virtual, hall.cashier, clock, check_pin, "Fuzz hall",
                              **guard)
    sign_ins = SignIns(StaffDirectory(()), clock)
    by_name = {actor.name: actor for actor in actors}

    def authenticate(name: str, password: str) -> defer.Deferred[Any]:
        # The site's port for the password check, with the directory's answers and none of its cost.
        if name in by_name and password == "correct horse":
            return defer.succeed(by_name[name])
        return defer.fail(SignInRefused("name or password not recognised"))

    committed: list[tuple[int, str]] = []
    hall.core.observers.append(lambda record: committed.append((record.seq, record.type)))
    channel = CommandChannel(hall.core)
    hub = LiveHub(view, channel, sign_ins)
    hall.core.observers.append(hub.record_committed)
    site = build_site(hub=hub, sign_ins=sign_ins, channel=channel, authenticate=authenticate, secure_cookie=False)
    site.reactor = MemoryReactorClock()
    return HallUnderTest(hall, gateway, site, sign_ins, channel, actors, accounts, tokens, committed)


def _argument(rng: random.Random, kind: Any, hut: HallUnderTest, profile: Profile) -> Any:
    """A plausible value of a command argument's declared type (often valid, sometimes not)."""
    if rng.random() < 0.15:
        return replacement(rng, profile)
    if kind is int:
        return rng.choice((0, 1, 2, 7, 60, 100, 1000, -1, rng.randint(0, 10_000), awkward_integer(rng, profile)))
    if kind is bool:
        return rng.random() < 0.5
    if kind is str:
        return rng.choice(("opening", "closing", "desk1", "2026-12-01", "row A", "T1", "reason", "cash",
                           rng.choice(hut.accounts), "V1-1", "7-1", awkward_text(rng, profile)))
    if kind is dict:
        return {"a": awkward_scalar(rng, profile)} if rng.random() < 0.5 else {}
    if getattr(kind, "__args__", None):
        item = kind.__args__[0]
        return [_argument(rng, item, hut, profile) for _ in range(rng.choice((0, 1, 3, 90)))]
    return awkward_scalar(rng, profile)


def command_request(rng: random.Random, hut: HallUnderTest, profile: Profile = FULL) -> dict[str, Any]:
    """A well-formed request for one of the hall's registered commands."""
    name = rng.choice(sorted(hut.hall.core.commands))
    spec = hut.hall.core.commands[name]
    return {"id": f"r{rng.getrandbits(40)}", "command": name,
            "args": {param: _argument(rng, kind, hut, profile) for param, kind in spec.params.items()}}


# --- The console's command channel ---------------------------------------------------------------


class ChannelHarness(Harness):
    """``parse_request`` then ``CommandChannel.submit`` as each role, in-process on a whole hall."""

    name = "channel"
    batch = 125
    #: Commands whose acceptance ends what the other inputs need (the session, the sale).
    SPARED = frozenset({"sign_session_closing", "close_session", "declare_terminal_failed", "revoke_terminal",
                        "close_sale", "suspend_game", "suspend_game_for_good"})

    def __init__(self, folder: Path, profile: Profile = FULL) -> None:
        from server_kit.web.channel import ChannelError, SeenRequests, parse_request

        super().__init__(profile)
        self.hut = build_hall_under_test(folder)
        self.seen = SeenRequests()
        self.parse, self.ChannelError = parse_request, ChannelError

    def generate(self, rng: random.Random, splice: Any = None) -> tuple[int, bytes]:
        actor = rng.randrange(len(self.hut.actors))

        def valid(r: random.Random) -> dict[str, Any]:
            request = command_request(r, self.hut, self.profile)
            while request["command"] in self.SPARED:
                request = command_request(r, self.hut, self.profile)
            return request

        return actor, json_text(rng, valid, profile=self.profile, splice=splice, deep=5000)

    def check(self, data: tuple[int, bytes]) -> str:
        from tests.hall.conftest import result

        actor, text = data
        try:
            request = self.parse(text)
        except self.ChannelError:
            return "rejected"
        except Exception as error:
            raise unexpected(self.name, data, error) from error
        if request.command in self.SPARED:
            return "rejected"
        before = self.hut.state()
        try:
            answer = result(self.hut.channel.submit(self.hut.actors[actor], request, self.seen))
        except Exception as error:
            raise unexpected(self.name, data, error) from error
        if answer["ok"]:
            return "accepted"
        if answer["error"]["code"] == "internal":
            raise internal(self.name, data, answer["error"]["message"], request.command)
        if self.hut.state() != before:
            raise Finding(self.name, data, f"a refused request ({answer['error']['code']}) changed the hall",
                          request.command)
        return "rejected"


# --- The console's HTTP endpoints ------------------------------------------------------------------


def _raised_by_twisted_http(error: BaseException) -> bool:
    """Whether ``error`` came out of Twisted's HTTP parsing, with none of our code past it."""
    frames = traceback.extract_tb(error.__traceback__)
    inside = [i for i, frame in enumerate(frames) if frame.filename.endswith("twisted/web/http.py")]
    if not inside:
        return False
    ours = ("/hall_server/", "/protocol/", "/terminals/", "/central_server/")
    return not any(part in frame.filename for frame in frames[inside[0]:] for part in ours)


class HttpHarness(Harness):
    """The console's Site over an in-memory transport: ``/login``, ``/api/command``, ``/api/state``..."""

    name = "http"
    batch = 125
    PATHS = ("/login", "/api/command", "/api/state", "/api/board", "/console", "/board", "/", "/static/console.js",
             "/api/minutes/game/x.pdf", "/api/command/extra", "/%00", "/api/../api/state", "/" + "a" * 300)

    def __init__(self, folder: Path, profile: Profile = FULL) -> None:
        super().__init__(profile)
        self.hut = build_hall_under_test(folder)
        self.cookies = [self.hut.sign_ins.open(actor).session_id for actor in self.hut.actors]

    def generate(self, rng: random.Random, splice: Any = None) -> bytes:
        pick = rng.random()
        if pick < 0.35:
            method, path = "POST", "/api/command"
            body = json_text(rng, lambda r: command_request(r, self.hut, self.profile), profile=self.profile,
                             splice=splice, deep=5000)
        elif pick < 0.6:
            method, path = "POST", "/login"
            body = json_text(rng, lambda r: {"name": r.choice([a.name for a in self.hut.actors] + ["x"]),
                                             "password": r.choice(("correct horse", "wrong", ""))},
                             profile=self.profile, splice=splice, deep=5000)
        elif pick < 0.8:
            method, path, body = "GET", "/api/state", b""
        else:
            methods = ("GET", "POST", "PUT", "DELETE", "OPTIONS", "G\x00T", "TRACE") + (("HEAD",) * self.profile.head)
            method, path = rng.choice(methods), rng.choice(self.PATHS)
            body = json_text(rng, lambda r: command_request(r, self.hut, self.profile), profile=self.profile, deep=100)
        headers = [("Host", rng.choice(("localhost", "localhost:8080", "", "evil.example")))]
        content_type = rng.choice(("application/json", "application/json; charset=utf-8", "text/plain",
                                   "APPLICATION/JSON", "", "application/json\x00"))
        if content_type:
            headers.append(("Content-Type", content_type))
        cookie = rng.random()
        if cookie < 0.7:
            headers.append(("Cookie", f"bingo_session={rng.choice(self.cookies)}"))
        elif cookie < 0.85:
            headers.append(("Cookie", f"bingo_session={awkward_text(rng, self.profile)[:100]}"))
        if rng.random() < 0.1:
            headers.append(("Origin", rng.choice(("http://localhost", "http://evil.example", "null", ""))))
        length = len(body) if rng.random() < 0.95 else rng.choice((0, len(body) // 2, 10**12, -1))
        if method != "GET" or rng.random() < 0.1:
            headers.append(("Content-Length", str(length)))
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + "\r\n"
        request = head.encode("utf-8", "surrogatepass") + body
        if rng.random() < 0.05:
            # A damaged head can put a control character in a header that Twisted's own parser
            # trips over; the FULL profile damages it, CLEAN damages the body only.
            if self.profile.surrogates:
                return mutate_bytes(rng, request, self.profile)
            return head.encode() + mutate_bytes(rng, body, self.profile)
        return request

    def check(self, data: bytes) -> str:
        before = self.hut.state()
        protocol = self.hut.site.buildProtocol(IPv4Address("TCP", "127.0.0.1", 40000))
        transport = StringTransport()
        protocol.makeConnection(transport)
        try:
            protocol.dataReceived(data)
            while transport.producer is not None and not transport.streaming:
                transport.producer.resumeProducing()
            answer = transport.value()
        except ValueError as error:
            if not _raised_by_twisted_http(error):
                raise unexpected(self.name, data, error) from error
            # Twisted's own HTTP parser refuses a header holding control characters by
            # raising: the server drops that connection unanswered (docs/security.md).
            answer = b""
        except Exception as error:
            raise unexpected(self.name, data, error) from error
        finally:
            protocol.connectionLost(None)  # type: ignore[arg-type]
        if not answer:
            if self.hut.state() != before:
                raise Finding(self.name, data, "a request left unanswered changed the hall")
            return "rejected"  # an incomplete request (a body still to come): no answer yet
        status_line = answer.split(b"\r\n", 1)[0]
        try:
            status = int(status_line.split()[1])
        except (IndexError, ValueError):
            raise Finding(self.name, data, f"no HTTP status line: {answer[:80]!r}") from None
        if status >= 500 and status != 501:  # 501: a method the site does not implement, said so
            body = answer.split(b"\r\n\r\n", 1)[-1][:200]
            raise Finding(self.name, data, f"HTTP {status}: {body!r}", data.split(b" ", 2)[1][:40].decode("latin-1"))
        if status >= 400 and self.hut.state() != before:
            raise Finding(self.name, data, f"a refused request (HTTP {status}) changed the hall")
        return "accepted" if status < 400 else "rejected"


# --- The kiosk WebSocket message path ---------------------------------------------------------------

#: What a terminal's refused message may add to the journal, by design: its refusal record,
#: and for a wrong PIN the lockout alert to the cashier.
REFUSAL_RECORDS = frozenset({"terminal_request_refused", "pin_lockout"})


class KioskHarness(Harness):
    """``TerminalSession.message_received``, message after message, on a whole hall with a sale open."""

    name = "kiosk"
    batch = 125

    def __init__(self, folder: Path, profile: Profile = FULL) -> None:
        super().__init__(profile)
        from hall_server.terminal_gateway.gateway import TerminalSession

        self.hut = build_hall_under_test(folder)
        self.session: Any = None
        self.sent: list[str] = []
        self.connections = 0
        self._addressed = "address" in inspect.signature(TerminalSession).parameters

    def _connect(self, rng: random.Random) -> None:
        """A new connection: most say hello and sign in, some do not."""
        terminal = rng.choice(sorted(self.hut.tokens)) if rng.random() < 0.9 else None
        self.connect(terminal, rng.choice(self.hut.accounts) if terminal and rng.random() < 0.8 else None)

    def connect(self, terminal: str | None, account: str | None) -> None:
        """A new connection (the last one ends); hello as ``terminal``, sign in as ``account`` where given."""
        from hall_server.terminal_gateway.gateway import TerminalSession

        if self.session is not None:
            self.session.connection_lost()
        self.sent = []
        self.connections += 1
        # Each connection from its own address, where sessions know theirs: the errors of one
        # before hello must not shut the others out.
        where = {"address": f"fuzz-{self.connections}"} if self._addressed else {}
        self.session = TerminalSession(self.hut.gateway, self.sent.append, lambda: None, **where)
        if terminal is not None:
            self._say({"v": 1, "seq": 1, "type": "hello", "terminal": terminal, "token": self.hut.tokens[terminal]})
            if account is not None:
                self._say({"v": 1, "seq": 2, "type": "sign_in", "account": account, "pin": "4821"})

    def _say(self, message: dict[str, Any]) -> None:
        self.session.message_received(json.dumps(message))

    def generate(self, rng: random.Random, splice: Any = None) -> str | bytes:
        if self.session is None or self.session.closed or rng.random() < 0.02:
            self._connect(rng)
        values = {"account": rng.choice(self.hut.accounts), "terminal": self.session.terminal_id or "T1",
                  "token": self.hut.tokens.get(self.session.terminal_id or "T1", "x")}
        seq = self.session.inbound.last + 1
        data = json_text(rng, lambda r: terminal_message(r, seq, values), profile=self.profile, splice=splice,
                         deep=2100)
        return as_frame(rng, data, self.profile)

    def check(self, data: str | bytes) -> str:
        before = self.hut.state()
        start = len(self.sent)
        try:
            self.session.message_received(data)
        except Exception as error:
            raise unexpected(self.name, data, error) from error
        replies = [json.loads(text) for text in self.sent[start:]]
        errors = [r for r in replies if r.get("type") == "error"]
        for reply in errors:
            if reply["code"] == "internal":
                raise internal(self.name, data, reply["message"], "")
        if not errors:
            return "accepted"
        seq, balances = self.hut.state()
        added = self.hut.types_since(before[0])
        if balances != before[1] or not added <= REFUSAL_RECORDS:
            raise Finding(self.name, data, f"a refused message ({errors[0]['code']}) changed the hall: "
                                           f"{sorted(added - REFUSAL_RECORDS)}")
        return "rejected"


#: Every target by name, with how it is built (the endpoints need a folder for their database).
TARGETS: dict[str, Callable[[Path, Profile], Harness]] = {
    "cardfile": lambda folder, profile: CardFileHarness(profile),
    "replay": lambda folder, profile: ReplayHarness(profile),
    "blower": lambda folder, profile: BlowerHarness(profile),
    "terminal_messages": lambda folder, profile: TerminalMessagesHarness(profile),
    "channel": ChannelHarness,
    "http": HttpHarness,
    "kiosk": KioskHarness,
}


def scratch_folder(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A folder for an endpoint's database and journal head, in memory where the system has
    one: every refusal the kiosk journals is a commit and an fsync, and on a disk those,
    not the code under test, would set the pace."""
    memory = Path("/dev/shm")
    return tempfile.TemporaryDirectory(prefix=prefix, dir=memory if memory.is_dir() else None)


def findings(harness: Harness, rng: random.Random, count: int) -> Iterable[tuple[int, Finding | None, str]]:
    """Feed ``count`` inputs, going on after a finding: (index, finding or None, outcome)."""
    for index in range(count):
        data = harness.generate(rng)
        try:
            yield index, None, harness.feed(data)
        except Finding as finding:
            yield index, finding, "finding"


