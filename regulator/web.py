"""The receiver's page: who feeds it, how far each feed stands, each hall's last games as
replayed, each day replayed card by card from its audit export, and the alerts (read-only).

``GET /`` is one HTML page written on the server (no script), refreshed by the browser
every few seconds; ``GET /api/status`` is the same as JSON (what ``bingo regulator
status --json`` prints); ``GET /api/records?sender=S&after=N&limit=L&type=T`` is a page
of the records a sender fed, as it signed them (the regulator consults the central
server's and each hall's records here, R95.3), at most :data:`MAX_PAGE` a page, with
``next_after`` for the next.  Every other method is refused.

Who reads it is the client certificate's to say: the page listens over mutual TLS with
the receiver's certificate (a connection without a certificate of the operator's
authority has no handshake), and answers only a ``regulator`` or an ``inspector``
certificate; any other role gets 403 before anything is read.  An inspector reads the
records without the personal fields their types declare (a visitor's name and document
number).  Every read of the store and of the receiver's journal runs in a thread pool,
never on the reactor that takes the feeds; each is bounded (a page of records is one
query with a limit).
"""

from __future__ import annotations

import datetime
import html
import json
from dataclasses import dataclass
from typing import Any

from twisted.internet import defer
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web import resource
from twisted.web.server import NOT_DONE_YET, Request

from protocol.chain import Record
from protocol.records import REGISTRY
from protocol.records.base import personal_keys
from protocol.regulator_feed import record_to_dict
from regulator.days import Awaited, DayVerdict, replayed_games, verdict_dict
from regulator.games import KEPT, CheckedGame
from regulator.receiver import ALERT_KINDS, Receiver
from regulator.reports import ReceivedReport, ReportInbox
from regulator.store import Alert, SenderPosition, Store
from server_kit.core import RunBlocking, run_inline
from server_kit.pki import PkiError, Role, presented_identity

log = Logger()
#: The certificates that may read the page: the regulator's, and an inspector's (without personal data).
READERS = frozenset({Role.regulator, Role.inspector})
#: Records a page of ``/api/records`` holds by default, and at most.
PAGE, MAX_PAGE = 100, 500

#: Seconds between the page's own refreshes.
REFRESH_S = 5
#: The records that are notices to the regulator, shown as such (R74.2).
NOTICES = ("opening_hours_notified", "prize_terms_notified")


def notice_text(record: Record) -> str:
    p = record.payload
    if record.type == "opening_hours_notified":
        change = f", replacing {p['previous']}" if p.get("previous") else " (first report)"
        return f"opening hours: {p['hours']}{change}; applies from {p['applies_from']}"
    if record.type == "prize_terms_notified":
        terms = ", ".join(f"{t['pattern']['name']} {t['basis_points'] / 100:g}%" for t in p["prizes"])
        what = ("a change of percentages" if p["percentages_changed"] else
                "a change of winning combinations" if p["combinations_changed"] else "the first terms")
        return f"prize terms ({what}, game {p['game_id']}): {terms}; apply from {when(p['applies_from_ms'])}"
    return record.type

STYLE = """
body { font: 16px/1.4 system-ui, sans-serif; margin: 0; background: #10141a; color: #e8ecf1; }
header { padding: 14px 24px; background: #1b2230; display: flex; gap: 24px; align-items: baseline; }
h1 { font-size: 22px; margin: 0; } h2 { font-size: 18px; margin: 24px 0 8px; }
main { padding: 0 24px 24px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid #2a3345; vertical-align: top; }
th { color: #9aa7bb; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.ok { color: #7fd69b; } .alert { color: #ffd0d0; background: #3a1616; }
.state { padding: 3px 10px; border-radius: 6px; }
.none { color: #9aa7bb; }
"""


def when(ms: int) -> str:
    if not ms:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


#: The alerts the page and ``/api/status`` list, newest first (``alerts_total`` counts them all).
SHOWN_ALERTS = 200


@dataclass(frozen=True)
class Held:
    """What the page shows from the store and the receiver's own journal: read off the reactor."""

    senders: list[SenderPosition]
    alerts: list[Alert]  # the last SHOWN_ALERTS, in the order raised
    alert_counts: dict[str, int]  # each sender's alerts, repeats counted
    verdicts: list[DayVerdict]  # newest first
    reports: list[ReceivedReport]  # newest first
    notices: list[tuple[str, Record]]


@dataclass(frozen=True)
class Checked:
    """What the page shows from the receiver's memory: read on the reactor, where the feeds change it."""

    games: dict[str, list[CheckedGame]]  # each hall's last games, newest first
    awaited: list[Awaited]


def read_held(store: Store, receiver: Receiver | None = None, inbox: ReportInbox | None = None) -> Held:
    """Every database read the page needs, each bounded; blocking (the page runs it in a thread pool)."""
    return Held(store.senders(), store.alerts(last=SHOWN_ALERTS), store.alert_counts(),
                receiver.days.verdicts() if receiver is not None else [],
                inbox.received() if inbox is not None else [], store.of_types(NOTICES))


def checked(receiver: Receiver | None, fold: bool = False) -> Checked:
    """Each hall's last games and the days awaiting their records, as the receiver holds them.

    Only the halls already folded (every sender is, at the serving receiver's start and at
    its hello); with ``fold`` (``bingo regulator status``), the others are folded now."""
    if receiver is None:
        return Checked({}, [])
    if fold:
        for sender in receiver.store.senders():
            receiver.games_of(sender.sender)
    games = {sender: list(reversed(list(hall.checked))) for sender, hall in sorted(receiver.games.items())}
    return Checked(games, receiver.days.awaited())


def status(held: Held, shown: Checked) -> dict[str, Any]:
    """Each sender's position, the last alerts, each hall's last games checked, the days, as plain data."""
    replayed = replayed_games(held.verdicts)
    return {
        "senders": [s.__dict__ for s in held.senders],
        "alerts": [a.__dict__ for a in held.alerts],
        "alerts_total": sum(held.alert_counts.values()),
        "games": {sender: [{**game.__dict__, "prizes": [list(p) for p in game.prizes], "faults": list(game.faults),
                            "verified": game.verified, "replayed_card_by_card": replayed.get((sender, game.game_id))}
                           for game in games] for sender, games in shown.games.items()},
        "days": [verdict_dict(verdict) for verdict in held.verdicts],
        "days_awaiting_records": [awaited.__dict__ for awaited in shown.awaited],
        "reports": [r.__dict__ for r in held.reports],
        "notices": [{"sender": sender, "seq": record.seq, "type": record.type, "time_ms": record.time_ms,
                     "notice": notice_text(record)} for sender, record in held.notices],
    }


def _euros(cents: int) -> str:
    return f"{cents // 100:,}.{cents % 100:02d} \u20ac"


def page(held: Held, shown: Checked, now_ms: int, reader: str = "") -> str:
    senders, alerts = held.senders, held.alerts
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(s.sender)}</td><td class=n>{s.seq:,}</td><td>{when(s.time_ms)}</td>"
        f"<td class=n>{held.alert_counts.get(s.sender, 0)}</td></tr>"
        for s in senders
    ) or '<tr><td colspan=4 class=none>No hall or central server has fed this receiver yet.</td></tr>'

    def repeated(a: Alert) -> str:
        if not a.repeats:
            return ""
        return (f" <span class=none>(and {a.repeats} more of its kind within a minute of it, counted, not raised "
                f"one by one; the last at record {a.last_seq}, {when(a.last_time_ms)})</span>")

    alert_rows = "".join(
        f"<tr class=alert><td>{when(a.time_ms)}</td><td>{e(a.sender)}</td><td>{e(a.kind.replace('_', ' '))}</td>"
        f"<td class=n>{a.seq or '-'}</td><td>{e(a.detail)}{repeated(a)}</td></tr>"
        for a in reversed(alerts)
    ) or '<tr><td colspan=5 class=none>No alert: every record received verified and followed the one before.</td></tr>'
    replayed = replayed_games(held.verdicts)
    held_up_to = {s.sender: s.seq for s in senders}

    def verdict(sender: str, g: CheckedGame) -> str:
        if not g.verified:
            return f"<td class=alert>{e('; '.join(g.faults))}</td>"
        day = replayed.get((sender, g.game_id))
        return ("<td class=ok>verified" + (f"; replayed card by card ({e(day)})" if day else "") + "</td>")

    game_rows = "".join(
        f"<tr><td>{e(sender)}</td><td>{e(g.game_id)}</td><td>{when(g.closed_ms)}</td><td class=n>{g.balls}</td>"
        f"<td class=n>{g.cards_sold}</td><td>{e(', '.join(f'{p} {_euros(c)} ({n} card(s))' for p, c, n in g.prizes))}</td>"
        + verdict(sender, g) + "</tr>"
        for sender, games in shown.games.items()
        for g in games
    ) or '<tr><td colspan=7 class=none>No game of a hall has been played to its end in the feeds yet.</td></tr>'
    day_rows = "".join(
        f"<tr><td>{when(d.time_ms)}</td><td>{e(d.sender)}</td><td>{e(d.day)}</td>"
        f"<td>{f'{d.first_seq} to {d.last_seq}' if d.last_seq else '-'}</td><td>{e(', '.join(d.games)) or '-'}</td>"
        + (f"<td class=ok>replayed card by card: {len(d.games)} game(s) verified</td>" if d.verified
           else f"<td class=none>not replayed card by card: {e(d.detail)}</td>" if d.verdict == "refused"
           else f"<td class=alert>{e(d.detail)}</td>")
        + "</tr>"
        for d in held.verdicts[:20]
    ) + "".join(
        f"<tr><td>-</td><td>{e(a.sender)}</td><td>{e(a.day)}</td><td>up to {a.last_seq}</td><td>-</td>"
        f"<td class=none>waiting for its records (held up to {held_up_to.get(a.sender, 0)})</td></tr>"
        for a in shown.awaited
    ) or '<tr><td colspan=6 class=none>No audit export of a day received yet.</td></tr>'
    notice_rows = "".join(
        f"<tr><td>{when(record.time_ms)}</td><td>{e(sender)}</td><td class=n>{record.seq}</td>"
        f"<td>{e(notice_text(record))}</td></tr>"
        for sender, record in held.notices
    ) or '<tr><td colspan=4 class=none>No notice received yet.</td></tr>'
    report_rows = "".join(
        f"<tr><td>{when(r.time_ms)}</td><td>{e(r.sender)}</td><td>{e(r.name)}</td>"
        + ("<td class=ok>every signature verified</td>" if r.verified else f"<td class=alert>{e(r.detail)}</td>")
        + "</tr>"
        for r in held.reports[:20]
    ) or '<tr><td colspan=4 class=none>No signed report received yet.</td></tr>'
    total = sum(held.alert_counts.values())
    state = (f'<span class="state alert">{total} alert(s)</span>' if total
             else '<span class="state ok">no alert</span>')
    kinds = ", ".join(k.replace("_", " ") for k in ALERT_KINDS)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Regulator's receiver</title>
<meta http-equiv="refresh" content="{REFRESH_S}">
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style></head>
<body><header><h1>Regulator's receiver</h1>{state}<span class=none>as of {when(now_ms)}</span>
<span class=none>{e(reader)}</span></header>
<main>
<h2>Feeds</h2>
<table id=senders><thead><tr><th>Sender</th><th>Records held</th><th>Last record</th><th>Alerts</th></tr></thead>
<tbody>{rows}</tbody></table>
<h2>Last games</h2>
<p class=none>Each hall's last {KEPT} games played to their end, replayed from their records: the balls, the winners
and the split of each prize by stake.</p>
<table id=games><thead><tr><th>Hall</th><th>Game</th><th>Closed</th><th>Balls</th><th>Cards</th><th>Prizes</th>
<th>Replay</th></tr></thead><tbody>{game_rows}</tbody></table>
<h2>Days replayed card by card</h2>
<p class=none>Each day's audit export, signed by its sender, checked on the records held: the scenario and the result
are what the records say, and the replay of the scenario is the result (every winning card holds its pattern, every
prize follows from the sales).</p>
<table id=days><thead><tr><th>Checked</th><th>Sender</th><th>Day</th><th>Records</th><th>Games</th><th>Replay</th></tr>
</thead><tbody>{day_rows}</tbody></table>
<h2>Notices</h2>
<table id=notices><thead><tr><th>Notified</th><th>Sender</th><th>Record</th><th>Notice</th></tr></thead>
<tbody>{notice_rows}</tbody></table>
<h2>Signed reports</h2>
<table id=reports><thead><tr><th>Received</th><th>Sender</th><th>Report</th><th>Signatures (openssl cms)</th></tr>
</thead><tbody>{report_rows}</tbody></table>
<h2>Alerts</h2>
<p class=none>Raised on: {e(kinds)}. Each is journaled once in the receiver's signed journal; more of a kind from a
sender within a minute are counted on the one raised. The last {SHOWN_ALERTS} are listed.</p>
<table id=alerts><thead><tr><th>Raised</th><th>Sender</th><th>Kind</th><th>Record</th><th>What</th></tr></thead>
<tbody>{alert_rows}</tbody></table>
</main></body></html>
"""


def reader_of(request: Request) -> tuple[str, Role] | str:
    """The name and role of the certificate on ``request``'s connection when it may read the page;
    otherwise why not, for the 403 answer."""
    try:
        identity = presented_identity(request.transport)
    except PkiError as error:
        return f"the certificate presented names no role of the operator's PKI: {error}"
    if identity is None:
        return "no certificate was presented"
    if identity.role not in READERS:
        article = "an" if str(identity.role)[0] in "aeiou" else "a"
        return f"{article} {identity.role} certificate ({identity.common_name}) may not read it"
    return identity.common_name, identity.role


def shown_record(record: Record, role: Role) -> dict[str, Any]:
    """A record as ``/api/records`` answers it: as its sender signed it (its sealed form) for the
    regulator; for an inspector, without the personal fields its type declares (named in ``withheld``)."""
    plain = record_to_dict(record)
    declared = REGISTRY.get(record.type)
    personal = [key for key in personal_keys(declared) if key in plain["payload"]] if declared is not None else []
    if role is Role.inspector and personal:
        plain["payload"] = {key: value for key, value in plain["payload"].items() if key not in personal}
        plain["withheld"] = personal
    return plain


class ReceiverPage(resource.Resource):
    """``/``, ``/api/status`` and ``/api/records``, for a regulator's or an inspector's certificate only.

    ``run`` runs a blocking function off the reactor (a thread pool): every read of the store
    and of the receiver's journal goes through it.
    """

    isLeaf = True

    def __init__(self, store: Store, clock: Any, receiver: Receiver | None = None,
                 inbox: ReportInbox | None = None, run: RunBlocking = run_inline) -> None:
        super().__init__()
        self.store = store
        self.clock = clock
        self.receiver = receiver
        self.inbox = inbox
        self.run = run

    def render(self, request: Request) -> bytes | int:
        request.setHeader(b"Cache-Control", b"no-store")
        request.setHeader(b"X-Content-Type-Options", b"nosniff")
        request.setHeader(b"X-Frame-Options", b"DENY")
        request.setHeader(b"Referrer-Policy", b"no-referrer")
        request.setHeader(b"Content-Security-Policy", b"default-src 'none'; style-src 'unsafe-inline'; "
                                                      b"frame-ancestors 'none'")
        reader = reader_of(request)
        if isinstance(reader, str):  # nothing is read before the reader is known
            request.setResponseCode(403)
            return self._json(request, {"error": "the receiver's page is the regulator's: it answers a regulator's "
                                                 f"or an inspector's certificate of the operator's authority; {reader}"})
        if request.method not in (b"GET", b"HEAD"):
            request.setResponseCode(405)
            request.setHeader(b"Allow", b"GET, HEAD")
            return self._json(request, {"error": "the receiver's page is read-only: GET only"})
        path = request.path.rstrip(b"/") or b"/"
        if path == b"/api/records":
            return self._answer(request, self.run(self._records, request.args, reader[1]))
        if path not in (b"/", b"/api/status"):
            request.setResponseCode(404)
            return self._json(request, {"error": f"no page {path.decode('utf-8', 'replace')[:100]!r}: try /, "
                                                 "/api/status or /api/records"})
        reading = self.run(read_held, self.store, self.receiver, self.inbox)

        def shown(held: Held) -> tuple[int, Any]:  # back on the reactor: the receiver's memory is read here
            now = checked(self.receiver)
            if path == b"/api/status":
                return 200, status(held, now)
            text = page(held, now, int(self.clock.seconds() * 1000), f"read by {reader[0]} ({reader[1]})")
            return 200, text.encode("utf-8")

        return self._answer(request, reading.addCallback(shown))

    def _answer(self, request: Request, answer: "defer.Deferred[tuple[int, Any]]") -> int:
        """Write ``answer`` (a status and JSON-able data, or HTML bytes) when it comes, unless the client left."""
        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def send(result: tuple[int, Any]) -> None:
            if gone:
                return
            code, body = result
            request.setResponseCode(code)
            if isinstance(body, bytes):
                request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
                request.write(body)
            else:
                request.write(self._json(request, body))
            request.finish()

        def failed(failure: Failure) -> None:
            log.failure("The receiver's page failed on {path}", failure, path=request.path)
            send((500, {"error": "the receiver failed on this request; its log says why"}))

        answer.addCallback(send).addErrback(failed)
        return NOT_DONE_YET

    def _records(self, args: dict[bytes, list[bytes]], role: Role) -> tuple[int, Any]:
        """``/api/records?sender=S&after=N&limit=L&type=T``: a page of a sender's records as it signed them,
        in order (one bounded query, off the reactor); ``next_after`` is the ``after`` of the next page."""
        def one(name: str) -> str | None:
            values = args.get(name.encode())
            return values[0].decode("utf-8", "replace") if values else None

        sender, after, limit, kind = one("sender"), one("after") or "0", one("limit") or str(PAGE), one("type")
        problem = None
        known = {s.sender for s in self.store.senders()}
        if sender not in known:
            problem = f"sender is one of {sorted(known)}, not {sender!r}" if known else "no sender has fed this receiver"
        elif not after.isdigit() or len(after) > 15:
            problem = f"after is a whole number, not {after[:20]!r}"
        elif not limit.isdigit() or not 1 <= int(limit) <= MAX_PAGE:
            problem = f"limit is a whole number from 1 to {MAX_PAGE}, not {limit[:20]!r}"
        elif kind is not None and not (kind.replace("_", "").isalpha() and kind.islower() and len(kind) <= 64):
            problem = f"a record type is lower-case letters and _, not {kind[:40]!r}"
        if problem is not None:
            return 400, {"error": problem}
        assert sender is not None
        found = self.store.page(sender, int(after), int(limit), kind)
        return 200, {"sender": sender, "after": int(after), "records": [shown_record(r, role) for r in found],
                     "next_after": found[-1].seq if len(found) == int(limit) else None}

    @staticmethod
    def _json(request: Request, value: Any) -> bytes:
        request.setHeader(b"Content-Type", b"application/json")
        return json.dumps(value, sort_keys=True).encode("utf-8")
