"""The hall server's ball blower driver: one blower as a ball source, and the
main/reserve pair.  See ``driver.BlowerDriver`` and ``docs/blower.md``."""

from hall_server.blower.approval import ApprovedFirmware, approved_from_tree
from hall_server.blower.driver import (
    BlowerDriver, CountReport, IBlowerObserver, RecordingObserver, SelfTestReport,
)
from hall_server.blower.errors import (
    BlowerBusy, BlowerError, BlowerFault, BlowerRefused, BlowerTimeout, DrawConflict,
    FirmwareNotApproved, ReserveSetIncomplete,
)
from hall_server.blower.pair import BlowerPair
from hall_server.blower.serial import BlowerService, SerialPortEndpoint, blower_service

__all__ = [
    "ApprovedFirmware", "BlowerBusy", "BlowerService", "BlowerDriver", "BlowerError", "BlowerFault",
    "BlowerPair", "BlowerRefused", "BlowerTimeout", "CountReport", "DrawConflict",
    "FirmwareNotApproved", "IBlowerObserver", "RecordingObserver",
    "ReserveSetIncomplete", "SelfTestReport", "SerialPortEndpoint", "approved_from_tree",
    "blower_service",
]
