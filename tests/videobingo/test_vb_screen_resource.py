"""The machine's screen as the hall serves it (R3.5.d): ``/vb/`` and its files with the
kiosk's security headers, by name only, and ``/vb/ws`` for this hall's own pages only."""

from __future__ import annotations

import pytest
from twisted.internet import defer
from twisted.internet.task import Clock
from twisted.web.resource import Resource
from twisted.web.test.requesthelper import DummyRequest

from hall_server.hall.pins import PinGuard
from hall_server.terminal_gateway.machines import MachineGateway, MachineScreenResource, MachineSocketResource
from hall_server.terminal_gateway.resource import SECURITY_HEADERS
from tests.terminals.test_pentest import ws_request
from tests.videobingo.halls import Hall


@pytest.fixture
def screen(hall: Hall) -> MachineScreenResource:
    pins = PinGuard(hall.core, hall.cashier)
    gateway = MachineGateway(hall.vb, pins, lambda number, pin: defer.succeed(False), Clock())
    return MachineScreenResource(gateway, require_certificate=False)


def child(resource: Resource, *path: bytes) -> tuple[Resource, DummyRequest]:
    request = DummyRequest(list(path))
    for segment in path:
        resource = resource.getChildWithDefault(segment, request)
    return resource, request


@pytest.mark.req("R3.5.d")
@pytest.mark.parametrize("path, kind", [((b"",), b"text/html"), ((b"static", b"vb.js"), b"text/javascript"),
                                        ((b"static", b"vb.css"), b"text/css")])
def test_the_screen_and_its_files_carry_the_kiosks_security_headers(screen: MachineScreenResource,
                                                                     path: tuple[bytes, ...], kind: bytes) -> None:
    resource, request = child(screen, *path)
    body = resource.render(request)
    assert isinstance(body, bytes) and body
    assert request.responseHeaders.getRawHeaders(b"content-type")[0].startswith(kind)
    for name, value in SECURITY_HEADERS.items():
        assert request.responseHeaders.getRawHeaders(name) == [value]


@pytest.mark.parametrize("name", [b"kiosk.js", b"kiosk.html", b"..", b"vb.html", b"nothing.js"])
def test_only_the_screens_own_files_are_served_by_name(screen: MachineScreenResource, name: bytes) -> None:
    resource, request = child(screen, b"static", name)
    resource.render(request)
    assert request.responseCode == 404


@pytest.mark.parametrize("origin, allowed", [
    (None, True),  # no browser page: the token at hello decides
    ("https://hall.test:8443", True),
    ("https://evil.example", False),
    ("http://hall.test:8443", False),
    ("https://hall.test:8444", False),
])
def test_the_stations_socket_takes_only_this_halls_pages(screen: MachineScreenResource, origin: str | None,
                                                         allowed: bool) -> None:
    request = ws_request(origin=origin)
    resource = screen.getChildWithDefault(b"ws", request)
    assert isinstance(resource, MachineSocketResource) is allowed
    if not allowed:
        resource.render(request)
        assert request.responseCode == 403
