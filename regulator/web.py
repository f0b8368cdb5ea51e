"""The receiver's page: who feeds it, how far each feed stands, each hall's last games as
replayed, each day replayed card by card from its audit export, and every alert (read-only).

``GET /`` is one HTML page written on the server (no script), refreshed by the browser
every few seconds; ``GET /api/status`` is the same as JSON (what ``bingo regulator
status --json`` prints); ``GET /api/records?sender=S&after=N&limit=L&type=T`` is any
record a sender fed, as it signed it (the regulator consults the central server's and
each hall's records here, R95.3).  Every other method is refused.  The page listens over TLS with
the receiver's certificate, on the loopback interface unless told otherwise: it is for
the regulator's own staff at the receiver.
"""

from __future__ import annotations

import datetime
import html
import json
from typing import Any

from twisted.web import resource
from twisted.web.server import Request

from protocol.chain import Record
from protocol.regulator_feed import record_to_dict
from regulator.days import verdict_dict
from regulator.games import KEPT, CheckedGame
from regulator.receiver import ALERT_KINDS, Receiver
from regulator.reports import ReportInbox
from regulator.store import Store

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


def status(store: Store, receiver: Receiver | None = None, inbox: ReportInbox | None = None) -> dict[str, Any]:
    """Each sender's position, every alert and (with ``receiver``) each hall's last games checked, as plain data."""
    plain: dict[str, Any] = {"senders": [s.__dict__ for s in store.senders()],
                             "alerts": [a.__dict__ for a in store.alerts()]}
    if receiver is not None:
        replayed = receiver.days.replayed()
        plain["games"] = {sender: [{**game.__dict__, "prizes": [list(p) for p in game.prizes],
                                    "faults": list(game.faults), "verified": game.verified,
                                    "replayed_card_by_card": replayed.get((sender, game.game_id))}
                                   for game in checked] for sender, checked in last_games(store, receiver).items()}
        plain["days"] = [verdict_dict(verdict) for verdict in receiver.days.verdicts()]
        plain["days_awaiting_records"] = [awaited.__dict__ for awaited in receiver.days.awaited()]
    if inbox is not None:
        plain["reports"] = [r.__dict__ for r in inbox.received()]
    plain["notices"] = [{"sender": sender, "seq": record.seq, "type": record.type, "time_ms": record.time_ms,
                         "notice": notice_text(record)} for sender, record in store.of_types(NOTICES)]
    return plain


def last_games(store: Store, receiver: Receiver) -> dict[str, list[CheckedGame]]:
    """Each hall's last games the receiver checked, newest first."""
    shown: dict[str, list[CheckedGame]] = {}
    for sender in store.senders():
        games = receiver.games_of(sender.sender)
        if games is not None:
            shown[sender.sender] = list(reversed(games.checked))
    return shown


def _euros(cents: int) -> str:
    return f"{cents // 100:,}.{cents % 100:02d} \u20ac"


def page(store: Store, now_ms: int, receiver: Receiver | None = None, inbox: ReportInbox | None = None) -> str:
    senders, alerts = store.senders(), store.alerts()
    e = html.escape
    rows = "".join(
        f"<tr><td>{e(s.sender)}</td><td class=n>{s.seq:,}</td><td>{when(s.time_ms)}</td>"
        f"<td class=n>{sum(1 for a in alerts if a.sender == s.sender)}</td></tr>"
        for s in senders
    ) or '<tr><td colspan=4 class=none>No hall or central server has fed this receiver yet.</td></tr>'
    alert_rows = "".join(
        f"<tr class=alert><td>{when(a.time_ms)}</td><td>{e(a.sender)}</td><td>{e(a.kind.replace('_', ' '))}</td>"
        f"<td class=n>{a.seq or '-'}</td><td>{e(a.detail)}</td></tr>"
        for a in reversed(alerts)
    ) or '<tr><td colspan=5 class=none>No alert: every record received verified and followed the one before.</td></tr>'
    replayed = receiver.days.replayed() if receiver is not None else {}
    held = {s.sender: s.seq for s in senders}

    def verdict(sender: str, g: CheckedGame) -> str:
        if not g.verified:
            return f"<td class=alert>{e('; '.join(g.faults))}</td>"
        day = replayed.get((sender, g.game_id))
        return ("<td class=ok>verified" + (f"; replayed card by card ({e(day)})" if day else "") + "</td>")

    game_rows = "".join(
        f"<tr><td>{e(sender)}</td><td>{e(g.game_id)}</td><td>{when(g.closed_ms)}</td><td class=n>{g.balls}</td>"
        f"<td class=n>{g.cards_sold}</td><td>{e(', '.join(f'{p} {_euros(c)} ({n} card(s))' for p, c, n in g.prizes))}</td>"
        + verdict(sender, g) + "</tr>"
        for sender, games in (last_games(store, receiver).items() if receiver is not None else ())
        for g in games
    ) or '<tr><td colspan=7 class=none>No game of a hall has been played to its end in the feeds yet.</td></tr>'
    day_rows = "".join(
        f"<tr><td>{when(d.time_ms)}</td><td>{e(d.sender)}</td><td>{e(d.day)}</td>"
        f"<td>{f'{d.first_seq} to {d.last_seq}' if d.last_seq else '-'}</td><td>{e(', '.join(d.games)) or '-'}</td>"
        + (f"<td class=ok>replayed card by card: {len(d.games)} game(s) verified</td>" if d.verified
           else f"<td class=none>not replayed card by card: {e(d.detail)}</td>" if d.verdict == "refused"
           else f"<td class=alert>{e(d.detail)}</td>")
        + "</tr>"
        for d in (receiver.days.verdicts()[:20] if receiver is not None else ())
    ) + "".join(
        f"<tr><td>-</td><td>{e(a.sender)}</td><td>{e(a.day)}</td><td>up to {a.last_seq}</td><td>-</td>"
        f"<td class=none>waiting for its records (held up to {held.get(a.sender, 0)})</td></tr>"
        for a in (receiver.days.awaited() if receiver is not None else ())
    ) or '<tr><td colspan=6 class=none>No audit export of a day received yet.</td></tr>'
    notice_rows = "".join(
        f"<tr><td>{when(record.time_ms)}</td><td>{e(sender)}</td><td class=n>{record.seq}</td>"
        f"<td>{e(notice_text(record))}</td></tr>"
        for sender, record in store.of_types(NOTICES)
    ) or '<tr><td colspan=4 class=none>No notice received yet.</td></tr>'
    report_rows = "".join(
        f"<tr><td>{when(r.time_ms)}</td><td>{e(r.sender)}</td><td>{e(r.name)}</td>"
        + ("<td class=ok>every signature verified</td>" if r.verified else f"<td class=alert>{e(r.detail)}</td>")
        + "</tr>"
        for r in (inbox.received()[:20] if inbox is not None else ())
    ) or '<tr><td colspan=4 class=none>No signed report received yet.</td></tr>'
    state = (f'<span class="state alert">{len(alerts)} alert(s)</span>' if alerts
             else '<span class="state ok">no alert</span>')
    kinds = ", ".join(k.replace("_", " ") for k in ALERT_KINDS)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Regulator's receiver</title>
<meta http-equiv="refresh" content="{REFRESH_S}">
<meta name="viewport" content="width=device-width, initial-scale=1"><style>{STYLE}</style></head>
<body><header><h1>Regulator's receiver</h1>{state}<span class=none>as of {when(now_ms)}</span></header>
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
<p class=none>Raised on: {e(kinds)}. Each is journaled once in the receiver's signed journal.</p>
<table id=alerts><thead><tr><th>Raised</th><th>Sender</th><th>Kind</th><th>Record</th><th>What</th></tr></thead>
<tbody>{alert_rows}</tbody></table>
</main></body></html>
"""


class ReceiverPage(resource.Resource):
    """``/`` and ``/api/status``."""

    isLeaf = True

    def __init__(self, store: Store, clock: Any, receiver: Receiver | None = None,
                 inbox: ReportInbox | None = None) -> None:
        super().__init__()
        self.store = store
        self.clock = clock
        self.receiver = receiver
        self.inbox = inbox

    def render(self, request: Request) -> bytes:
        request.setHeader(b"Cache-Control", b"no-store")
        request.setHeader(b"X-Content-Type-Options", b"nosniff")
        request.setHeader(b"Content-Security-Policy", b"default-src 'none'; style-src 'unsafe-inline'")
        if request.method not in (b"GET", b"HEAD"):
            request.setResponseCode(405)
            request.setHeader(b"Allow", b"GET, HEAD")
            return self._json(request, {"error": "the receiver's page is read-only: GET only"})
        path = request.path.rstrip(b"/") or b"/"
        if path == b"/api/status":
            return self._json(request, status(self.store, self.receiver, self.inbox))
        if path == b"/api/records":
            return self._records(request)
        if path != b"/":
            request.setResponseCode(404)
            return self._json(request, {"error": f"no page {path.decode('utf-8', 'replace')[:100]!r}: try /, /api/status or /api/records"})
        request.setHeader(b"Content-Type", b"text/html; charset=utf-8")
        return page(self.store, int(self.clock.seconds() * 1000), self.receiver, self.inbox).encode("utf-8")

    def _records(self, request: Request) -> bytes:
        """``/api/records?sender=S&after=N&limit=L&type=T``: a sender's records as it signed them, in order."""
        def one(name: str) -> str | None:
            values = request.args.get(name.encode())
            return values[0].decode("utf-8", "replace") if values else None

        sender, after, limit, kind = one("sender"), one("after") or "0", one("limit") or "100", one("type")
        known = {s.sender for s in self.store.senders()}
        problem = None
        if sender not in known:
            problem = f"sender is one of {sorted(known)}, not {sender!r}" if known else "no sender has fed this receiver"
        elif not after.isdigit() or len(after) > 15:
            problem = f"after is a whole number, not {after[:20]!r}"
        elif not limit.isdigit() or not 1 <= int(limit) <= 500:
            problem = f"limit is a whole number from 1 to 500, not {limit[:20]!r}"
        elif kind is not None and not (kind.replace("_", "").isalpha() and kind.islower() and len(kind) <= 64):
            problem = f"a record type is lower-case letters and _, not {kind[:40]!r}"
        if problem is not None:
            request.setResponseCode(400)
            return self._json(request, {"error": problem})
        assert sender is not None
        records = []
        for record in self.store.records(sender, int(after)):
            if kind is None or record.type == kind:
                records.append(record_to_dict(record))
                if len(records) == int(limit):
                    break
        return self._json(request, {"sender": sender, "records": records})

    @staticmethod
    def _json(request: Request, value: Any) -> bytes:
        request.setHeader(b"Content-Type", b"application/json")
        return json.dumps(value, sort_keys=True).encode("utf-8")
