"""The receiver's page in a real browser: the feeds and their alerts, read-only (R92.7, R95.3).

A hall's certificate feeds the receiver over the real link (AMP over mutual TLS) a batch
that skips a record; the page, over mutual TLS with the receiver's certificate, shows a
regulator's certificate (in Chromium too) the hall's feed and the gap alert, and
``/api/status`` says the same; anything but GET is refused.  The page speaks Catalan (the
regulator is Andorra's), its times 24-hour in Andorra's time, and English when asked."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
import pytest_twisted
from twisted.internet import reactor, threads
from twisted.internet.endpoints import SSL4ClientEndpoint, connectProtocol
from twisted.protocols import amp

from protocol.regulator_feed import Batch, Hello, encode
from server_kit.feed.link import FeedBatch, FeedHello
from server_kit.pki import PkiFolder, client_tls_options, issue_certificate
from tests.regulator.test_feed_link import HALL, commit, journal_at, pem, pki_dir, receiver, stop  # noqa: F401
from tests.web.test_console_browser import CHROMIUM, CHROMIUM_ARGS, shot

pytestmark = [pytest.mark.integration]


READER = "regulator-staff"


def fetch(url: str, ca: Path, method: str = "GET", certificate: tuple[Path, Path] | None = None) -> tuple[int, Any]:
    """``url``'s status and answer (JSON or text), presenting ``certificate`` (its file and key) or
    the regulator's staff certificate of the test's PKI."""
    context = ssl.create_default_context(cafile=str(ca))
    folder = PkiFolder(ca.parent)
    cert, key = certificate or (folder.cert(READER), folder.key(READER))
    context.load_cert_chain(str(cert), str(key))
    request = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(request, context=context, timeout=30) as answer:
            body = answer.read()
            kind = answer.headers.get("Content-Type", "")
            return answer.status, json.loads(body) if "json" in kind else body.decode()
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def in_browser(url: str, pki: Path) -> str:
    """The page's text in Chromium presenting the regulator's staff certificate, after a screenshot."""
    from playwright import sync_api

    folder = PkiFolder(pki)
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            context = browser.new_context(ignore_https_errors=True, viewport={"width": 1280, "height": 720},
                                          client_certificates=[{"origin": url, "certPath": folder.cert(READER),
                                                                "keyPath": folder.key(READER)}])
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector("#alerts tr.alert")
            assert page.evaluate("document.documentElement.lang") == "ca"
            shot(page, "regulator-receiver")
            return str(page.inner_text("body"))
        finally:
            browser.close()


@pytest.mark.req("R95.3", "R92.7")
@pytest_twisted.ensureDeferred
async def test_the_page_shows_each_feed_and_its_alert_and_is_read_only(tmp_path: Path, pki_dir: Path) -> None:
    (tmp_path / "regulator").mkdir()
    issue_certificate(pki_dir, "regulator", READER)
    journal = journal_at(tmp_path)
    commit(journal, 4)
    records = list(journal.records())
    service = await receiver(tmp_path, pki_dir, web_port=0)
    try:
        endpoint = SSL4ClientEndpoint(reactor, "127.0.0.1", service.port.getHost().port,
                                      client_tls_options(pki_dir, HALL, "localhost"))
        connection = await connectProtocol(endpoint, amp.AMP())
        sender = f"hall:{HALL}"
        await connection.callRemote(FeedHello, message=encode(Hello(sender, pem(journal))))
        await connection.callRemote(FeedBatch, message=encode(Batch(sender, (records[0], records[2]))))  # 2 skipped
        connection.transport.loseConnection()
        url = f"https://localhost:{service.web_port.getHost().port}"
        ca = PkiFolder(pki_dir).ca_cert
        status, said = await threads.deferToThread(fetch, f"{url}/api/status", ca)
        assert status == 200
        assert [(s["sender"], s["seq"]) for s in said["senders"]] == [(sender, 1)]
        assert [(a["kind"], a["seq"]) for a in said["alerts"]] == [("gap", 2)]
        status, said = await threads.deferToThread(fetch, f"{url}/api/status", ca, "POST")
        assert status == 405 and said["error"] == "the receiver's page is read-only: GET only"
        # Any record a sender fed, as it signed it (R95.3); a malformed query says why.
        status, said = await threads.deferToThread(fetch, f"{url}/api/records?sender={sender}&limit=5", ca)
        assert status == 200 and [r["seq"] for r in said["records"]] == [1]
        assert said["records"][0]["hash"] == records[0].hash and said["records"][0]["signature"] == records[0].signature
        for query, reason in [("sender=hall:nobody", "sender is one of ['hall:h1'], not 'hall:nobody'"),
                              (f"sender={sender}&limit=9999", "limit is a whole number from 1 to 500, not '9999'"),
                              (f"sender={sender}&type=DROP%20TABLE", "a record type is lower-case letters and _")]:
            status, said = await threads.deferToThread(fetch, f"{url}/api/records?{query}", ca)
            assert status == 400 and reason in said["error"], said
        status, said = await threads.deferToThread(fetch, f"{url}/etc/passwd", ca)
        assert status == 404 and "try /, /api/status or /api/records" in said["error"]
        text = await threads.deferToThread(in_browser, url + "/", pki_dir)
        assert "Receptor del regulador" in text and "1 alerta" in text and sender in text
        assert "registres que falten" in text  # the alert's kind; its detail is the receiver's finding, in English
        assert "record 2 is missing: the feed jumps from 1 to 3" in text
        # The last record's time, 24-hour in Andorra's time (not UTC), its date as Catalan writes it.
        last = datetime.fromtimestamp(records[0].time_ms / 1000, timezone.utc).astimezone(ZoneInfo("Europe/Andorra"))
        assert f"{last.day}/{last.month}/{last:%y} {last:%H:%M:%S}" in text, text
        status, english = await threads.deferToThread(fetch, f"{url}/?lang=en", ca)
        assert status == 200 and '<html lang="en">' in english
        assert "1 alert(s)" in english and "Regulator&#x27;s receiver" in english and "<td>gap</td>" in english
    finally:
        await stop(service)

