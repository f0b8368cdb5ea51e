"""The one error hierarchy of the shared domain.

Every error carries a message written for the person who caused it (a cashier, a
caller, an auditor reading a file): it says what is wrong and, where it helps, what
to do.  Edges (CLI, web, AMP) show ``str(error)`` and never a traceback.
"""


class DomainError(Exception):
    """A command or an input that breaks a rule; ``str(error)`` is the user-facing message."""


class Refusal(str):
    """Why something is refused, as a check answers it: the sentence (English, journaled as it
    is) with a stable ``reason`` and its figures (``params``, amounts as ``..._cents``), so that
    a screen says it in the reader's language (``docs/languages.md``)."""

    reason: str
    params: dict[str, int | str]

    def __new__(cls, text: str, reason: str, **params: int | str) -> "Refusal":
        refusal = super().__new__(cls, text)
        refusal.reason = reason
        refusal.params = params
        return refusal
