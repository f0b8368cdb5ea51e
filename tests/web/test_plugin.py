"""The process entry: ``twist bingo-hall`` finds the plugin, and its options reach makeService."""

from twisted.application.service import IServiceMaker
from twisted.plugin import getPlugins

import twisted.plugins


def test_the_bingo_hall_plugin_is_found_with_its_options() -> None:
    makers = {maker.tapname: maker for maker in getPlugins(IServiceMaker, twisted.plugins)}
    maker = makers["bingo-hall"]
    options = maker.options()
    options.parseOptions(["--config", "hall.toml", "--demo", "--demo_pace", "1"])
    assert options["config"] == "hall.toml" and options["demo"] and options["demo_pace"] == "1"
