"""What the console's forms are made of beyond a command's declared arguments.

**Documents.** A command named ``print_...`` (the player's ticket, the account's
statement) answers with a PDF instead of records: the console offers it as a download
(``POST /api/document``), and the file is named after the command and its arguments
(:func:`document_name`).  Printing journals nothing, as before: a copy is no fact.

**Choices.** A command declares its arguments by name and JSON type only; the console turns the
arguments whose value is one of a few words into a choice (a select), so that nobody
types ``cheque`` or ``closing`` by hand.  The words are the modules' own lists, so a
choice never offers what the module would refuse.  Choices that come from the hall's
state (the cash desks, the series, the terminals, today's visitors) are in the console's
picture (:class:`~hall_server.web.view.HallView`) and filled in by the page.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from hall_server.hall.admission import DOCUMENT_TYPES
from hall_server.hall.cashier import MEDIA, PAYMENT_METHODS
from hall_server.hall.notices import DECISIONS
from hall_server.hall.session import COUNT_STAGES
from protocol.settlement.pots import OPERATOR_POTS

#: Argument name -> the words it takes, in the order the console offers them.
CHOICES: dict[str, list[str]] = {
    "medium": list(MEDIA),
    "method": list(PAYMENT_METHODS),
    "stage": list(COUNT_STAGES),
    "pot": list(OPERATOR_POTS),
    "decision": list(DECISIONS),
    "document_type": list(DOCUMENT_TYPES),
}

#: A command whose name starts so makes a file (a PDF) and commits nothing.
DOCUMENT_PREFIX = "print_"


def is_document(command: str) -> bool:
    """Whether ``command`` makes a file to download rather than records."""
    return command.startswith(DOCUMENT_PREFIX)


def document_name(command: str, args: Mapping[str, Any]) -> str:
    """The file name of ``command``'s PDF: ``player-ticket-607201020601.pdf``."""
    parts = [command.removeprefix(DOCUMENT_PREFIX).replace("_", "-")]
    parts += [cleaned for value in args.values() if (cleaned := re.sub(r"[^0-9A-Za-z]+", "", str(value))[:40])]
    return "-".join(parts) + ".pdf"
