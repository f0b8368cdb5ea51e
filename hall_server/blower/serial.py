"""The blower's serial port as a Twisted client endpoint, kept open by a ClientService.

Twisted has no serial endpoint string, so ``SerialPortEndpoint`` wraps
``twisted.internet.serialport.SerialPort`` (pyserial underneath, read by the reactor,
no threads).  ``blower_service`` puts it under ``ClientService``, which reopens the port
with backoff when it closes or cannot be opened (a USB adapter pulled and put back).
"""

from __future__ import annotations

from typing import Any

from twisted.application.internet import ClientService
from twisted.internet.defer import Deferred, fail, succeed
from twisted.internet.interfaces import IProtocol, IProtocolFactory, IStreamClientEndpoint
from twisted.internet.serialport import SerialPort
from zope.interface import implementer

from hall_server.blower.driver import BlowerDriver

BAUD_RATE = 115200


@implementer(IStreamClientEndpoint)
class SerialPortEndpoint:
    """Opens ``device`` at ``baudrate`` each time ``connect`` is called."""

    def __init__(self, reactor: Any, device: str, baudrate: int = BAUD_RATE) -> None:
        self.reactor = reactor
        self.device = device
        self.baudrate = baudrate

    def connect(self, protocolFactory: IProtocolFactory) -> Deferred[IProtocol]:
        protocol = protocolFactory.buildProtocol(None)  # type: ignore[arg-type]
        if protocol is None:
            return fail(ConnectionRefusedError("the factory refused a protocol"))
        try:
            SerialPort(protocol, self.device, self.reactor, baudrate=self.baudrate)
        except OSError as error:
            # pyserial's SerialException is an OSError: the device is not there (yet).
            return fail(error)
        return succeed(protocol)


class BlowerService(ClientService):
    """Keeps the driver connected; on stop, also stops the driver so that no command
    waits and no timer is left behind once the port is closed."""

    def __init__(self, reactor: Any, driver: BlowerDriver, device: str, baudrate: int) -> None:
        super().__init__(SerialPortEndpoint(reactor, device, baudrate), driver.factory(),
                         retryPolicy=lambda attempt: min(0.2 * 2 ** attempt, 5.0),
                         clock=reactor)
        self.driver = driver

    def stopService(self) -> Deferred[None]:
        stopped = super().stopService()

        def port_closed(result: object) -> object:
            self.driver.stop()
            return result
        return stopped.addBoth(port_closed)


def blower_service(reactor: Any, driver: BlowerDriver, device: str,
                   baudrate: int = BAUD_RATE) -> BlowerService:
    """A service that keeps ``driver`` connected to the blower on ``device``."""
    return BlowerService(reactor, driver, device, baudrate)
