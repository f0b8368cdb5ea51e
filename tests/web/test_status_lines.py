"""The console's status lines in its reader's language (docs/languages.md, "The staff console"): the
regulator's feed, the central server's link and the storage's alarm each give their English ``line`` as
before and, beside it, the catalog's message with its parts (``said``), which the console says through
``I18n.said``; here the Catalan the console shows is the message translated and filled as the page fills it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
from twisted.internet import task

from hall_server import i18n
from hall_server.network import link
from hall_server.network.link import Endpoint, EndpointRing
from server_kit.core import CommandCore, run_inline
from server_kit.feed.cursor import FeedCursor
from server_kit.feed.link import FeedLinkService, ReceiverAddress
from server_kit.storage import StorageWatch
from tests.kit.test_core import CLERK, DOWN, Added, Tally, UnreadableJournal, add, outcome
from tests.network.test_central_endpoints import FakeEndpoint, FakeRelay
from tests.regulator.test_feed_link import commit, journal_at, pem, pki_dir  # noqa: F401 (a fixture)
from tests.support.records import declared


def catalan(status: dict[str, Any]) -> str:
    """What a Catalan console shows: the message in the console's catalog, filled with its parts."""
    said = status["said"]
    assert i18n.translate("en", said["message"], **said["parts"]) == status["line"]  # the English is the line
    return i18n.translate("ca", said["message"], **said["parts"])


@pytest.fixture
def added() -> Iterator[None]:
    with declared(Added):
        yield


def test_the_feed_line_says_where_it_stands_in_catalan(tmp_path: Path, pki_dir: Path) -> None:
    (tmp_path / "regulator").mkdir()
    journal = journal_at(tmp_path)
    commit(journal, 4)
    feed = FeedLinkService(task.Clock(), FeedCursor(journal, "hall:h1", pem(journal)),
                           ReceiverAddress("127.0.0.1", 7654, pki_dir, "h1", "localhost"))
    status = feed.console_status()
    assert status["line"] == "Regulator's feed (127.0.0.1:7654): not connected yet, 5 records to send"
    assert catalan(status) == "Flux al regulador (127.0.0.1:7654): encara sense connexió, 5 registres per enviar"


def test_the_central_link_line_says_the_link_in_catalan() -> None:
    ring = EndpointRing([(Endpoint("a", 1, "a"), FakeEndpoint("a", [])), (Endpoint("b", 2, "b"), FakeEndpoint("b", []))])
    service = link.CentralLinkService(FakeRelay(), ring, None, clock=task.Clock())  # type: ignore[arg-type]
    assert catalan(service.console_status()) == "Servidor central (a:1, b:2): encara sense enllaç"
    service.linked(Endpoint("b", 2, "b"), {"version": 1, "central_id": "central-a", "node": "node1", "epoch": 4})
    assert catalan(service.console_status()) == ("Servidor central central-a: enllaçat a b:2, el procés al costat de "
                                                 "node1, època 4")
    service.link_changed(False)
    assert catalan(service.console_status()) == ("Servidor central central-a: enllaç perdut (l'últim a b:2, el procés "
                                                 "al costat de node1, època 4); es torna a provar")


def test_the_storage_alarm_says_its_kind_in_catalan(added: None) -> None:
    clock = task.Clock()
    journal = UnreadableJournal()
    core = CommandCore(journal, clock, run_inline, {"add": frozenset({"clerk"})})
    core.add_module(Tally())
    watch = StorageWatch(core, clock, run_inline, journal.probe)
    journal.fail_next, journal.unreadable = DOWN, True
    outcome(add(core, CLERK, 1))
    status = watch.status()
    assert status is not None
    assert status["line"] == f"STORAGE UNAVAILABLE (unreachable): {DOWN.detail}; commands are refused"
    assert catalan(status) == f"EMMAGATZEMATGE NO DISPONIBLE (unreachable): {DOWN.detail}; es refusen les ordres"
