"""The one error hierarchy of the shared domain.

Every error carries a message written for the person who caused it (a cashier, a
caller, an auditor reading a file): it says what is wrong and, where it helps, what
to do.  Edges (CLI, web, AMP) show ``str(error)`` and never a traceback.
"""


class DomainError(Exception):
    """A command or an input that breaks a rule; ``str(error)`` is the user-facing message."""
