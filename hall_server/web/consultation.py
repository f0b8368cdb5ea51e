"""``/regulator/``: the regulator's read-only consultation of the hall (R95.3), its page and its API.

The resource is the server kit's (:mod:`server_kit.web.consultation`: a regulator
certificate only, GET only, every query journaled as ``regulator_consulted`` before it
is answered); the hall's queries are :mod:`hall_server.reports.consultation`'s.
"""

from __future__ import annotations

from twisted.web.resource import Resource

from hall_server.reports.consultation import Consultation
from hall_server.web.site import static_dir
from server_kit.core import CommandCore
from server_kit.web.consultation import consultation_resource as kit_resource


def consultation_resource(core: CommandCore, consultation: Consultation) -> Resource:
    """``/regulator``: the page at ``/regulator/`` and the queries under ``/regulator/api/``."""
    return kit_resource(core, consultation.answer, static_dir() / "regulator.html", "the hall")
