"""Run the simulated blower and the driver by hand (see ``docs/blower.md``).

    python -m hall_server.blower sim [--faults no_ball:3] [--noise 0.01]
    python -m hall_server.blower draw --port /dev/pts/N --game 1 [--balls 90]
    python -m hall_server.blower count --port /dev/pts/N
    python -m hall_server.blower self-test --port /dev/pts/N
    python -m hall_server.blower relay --noise 0.01 --report relay.json
    python -m hall_server.blower approve

``draw``, ``count`` and ``self-test`` drive a blower without the hall server and print
what it reports; ``approve`` prints this tree's firmware release as the hall's
``[draw] approved_firmware`` takes it.  To draw with the hall server, see
``docs/blower.md``.
"""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import tempfile
from typing import Any

from twisted.internet.defer import inlineCallbacks
from twisted.internet.task import react
from zope.interface import implementer

from ball_blower_fw.version import FIRMWARE_VERSION
from hall_server.blower.approval import approved_from_tree, image_hash_of_tree
from hall_server.blower.driver import BlowerDriver, IBlowerObserver
from hall_server.blower.errors import BlowerError, BlowerFault
from hall_server.blower.serial import blower_service
from hall_server.blower.simulator import REPO_ROOT, run_relay, spawn_firmware
from protocol import blower_messages as bm


@implementer(IBlowerObserver)
class ConsoleObserver:
    """Prints what the blower reports, as the caller console will show it."""

    def blower_fault(self, name: str, fault: BlowerFault) -> None:
        print("FAULT on %s blower: %s (draw %d) - game suspended" % (
            name, fault.detail, fault.draw_no), flush=True)

    def blower_notice(self, name: str, reason: int, count: int) -> None:
        print("notice from %s blower: %d %s" % (
            name, count, bm.NOTICE_NAMES.get(reason, "?")), flush=True)

    def blower_link(self, name: str, up: bool, detail: str) -> None:
        print("%s blower link %s: %s" % (name, "up" if up else "down", detail), flush=True)


def _simulate(args: argparse.Namespace) -> None:
    report = tempfile.NamedTemporaryFile(suffix=".json", delete=False).name
    relay = subprocess.Popen(
        [sys.executable, "-m", "hall_server.blower", "relay", "--noise", str(args.noise),
         "--report", report], stdout=subprocess.PIPE, cwd=str(REPO_ROOT))
    assert relay.stdout is not None
    blower_side, driver_side = relay.stdout.readline().decode().split()
    firmware = spawn_firmware(blower_side, faults=args.faults, fast=not args.slow)
    print("simulated blower running; connect the driver to %s" % driver_side, flush=True)
    print("stop with Ctrl-C", flush=True)
    # A terminal's Ctrl-C and a supervisor's SIGTERM both stop the pair cleanly.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        signal.pause()
    except KeyboardInterrupt:
        pass
    finally:
        firmware.terminate()
        relay.terminate()
        firmware.wait()
        relay.wait()


@inlineCallbacks
def _drive(reactor: Any, args: argparse.Namespace) -> Any:
    driver = BlowerDriver(reactor, approved_from_tree(REPO_ROOT), observer=ConsoleObserver())
    service = blower_service(reactor, driver, args.port)
    service.startService()
    try:
        yield driver.when_ready()
        if args.command == "draw":
            yield driver.start_game(args.game)
            for n in range(1, args.balls + 1):
                while True:
                    try:
                        ball = yield driver.draw()
                        break
                    except BlowerFault:
                        print("clearing the fault and drawing again", flush=True)
                        yield driver.clear_fault()
                print("draw %2d: ball %2d" % (n, ball), flush=True)
        elif args.command == "count":
            report = yield driver.count_set()
            print("counted %d balls; missing %s; repeated %s; unreadable %d; %s" % (
                report.counted, list(report.missing), list(report.repeated),
                report.unreadable, "complete" if report.complete else "NOT complete"))
        else:
            result = yield driver.self_test()
            print("self-test passed" if result.passed else
                  "self-test failed: " + ", ".join(result.failed_parts))
    except BlowerError as error:
        print(error, flush=True)
    finally:
        yield service.stopService()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m hall_server.blower")
    commands = parser.add_subparsers(dest="command", required=True)
    sim = commands.add_parser("sim", help="run the firmware with a simulated chamber")
    sim.add_argument("--faults", default="", help="e.g. no_ball:3,jam:5")
    sim.add_argument("--noise", type=float, default=0.0, help="byte error rate on the line")
    sim.add_argument("--slow", action="store_true", help="real-machine mixing times")
    for name in ("draw", "count", "self-test"):
        command = commands.add_parser(name)
        command.add_argument("--port", required=True)
        if name == "draw":
            command.add_argument("--game", type=int, default=1)
            command.add_argument("--balls", type=int, default=90)
    commands.add_parser("approve", help="print this firmware release for approved_firmware")
    relay = commands.add_parser("relay", help="the line between firmware and driver")
    relay.add_argument("--noise", type=float, default=0.0)
    relay.add_argument("--seed", type=int, default=1)
    relay.add_argument("--baud", type=int, default=115200)
    relay.add_argument("--report", default="relay-report.json")
    args = parser.parse_args(argv)
    if args.command == "sim":
        _simulate(args)
    elif args.command == "approve":
        print("%d.%d.%d:%s" % (FIRMWARE_VERSION + (image_hash_of_tree(REPO_ROOT).hex(),)))
    elif args.command == "relay":
        run_relay(args.noise, args.seed, args.baud, args.report)
    else:
        react(_drive, [args])


if __name__ == "__main__":
    main()
