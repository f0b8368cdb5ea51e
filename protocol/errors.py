"""The one error hierarchy of the shared domain.

Every error carries a message written for the person who caused it (a cashier, a
caller, an auditor reading a file): it says what is wrong and, where it helps, what
to do.  Edges (CLI, web, AMP) show ``str(error)`` and never a traceback.

A message a person meets often is made from a template of the catalogs
(``docs/languages.md``, "The server's refusals"): ``DomainError(N_("there is no cash
desk {desk!r}"), desk=name)``.  ``str(error)`` is the English text, journaled and
logged as it is; an edge that knows its reader's language says the same template in
that language with the same params (:func:`fill`).
"""

from __future__ import annotations

import string
from typing import Any, Callable, Mapping, Sequence

from protocol.money import format_cents


class Template(str):
    """An English text of the catalogs, with named ``{placeholders}``: what :func:`N_` marks."""


def N_(text: str) -> Template:
    """Mark ``text`` for extraction into a catalog (``pybabel extract -k N_``); it reads as written."""
    return Template(text)


class Cents(int):
    """An amount in a template's params: integer cents, written ``12.34 EUR`` in the English
    text and by the reader's locale in another language."""

    def __format__(self, spec: str) -> str:
        return format(format_cents(int(self)), spec)

    def __str__(self) -> str:
        return format(self, "")


class _ParamsOnly(string.Formatter):
    """Fills a template's ``{name}``, ``{name!r}`` and ``{name:spec}`` from its params and nothing
    else: no attribute, no index, no positional field.  A param's value is data, never read as a
    template itself."""

    def get_field(self, field_name: str, args: Any, kwargs: Any) -> tuple[Any, str]:
        if not field_name.isidentifier() or field_name not in kwargs:
            raise KeyError(field_name)
        return kwargs[field_name], field_name


_FORMATTER = _ParamsOnly()


def fill(template: str, params: Mapping[str, Any], *, money: Callable[[int], str] | None = None,
         words: Callable[[str], str] | None = None) -> str:
    """``template`` with its placeholders filled from ``params``; ``money`` writes a
    :class:`Cents` param (else it reads ``12.34 EUR``), ``words`` says a param that is itself a
    :class:`Template` (a phrase the code chose from the catalogs, ``while the sale is open``; never
    what a person typed), else it reads as written.  ``KeyError`` or ``ValueError`` on a
    placeholder the params do not give."""
    if money is not None or words is not None:
        params = {name: _said(value, money, words) for name, value in params.items()}
    return _FORMATTER.vformat(template, (), dict(params))


def _said(value: Any, money: Callable[[int], str] | None, words: Callable[[str], str] | None) -> Any:
    if money is not None and isinstance(value, Cents):
        return money(int(value))
    if words is not None and isinstance(value, Template):
        return words(value)
    return value


def worded(template: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """A status line for a page: ``line``, ``template`` filled in English, and ``said``, the catalog's
    message and its parts, which a page says in its reader's language (``I18n.said``)."""
    return {"line": fill(template, params), "said": {"message": template, "parts": dict(params)}}


class Phrase(str):
    """A sentence the server writes in English (a check's fault, journaled as it is) that keeps the
    catalog's template it was filled from and its params, for a page to say it in its reader's
    language (``I18n.said``): ``Phrase(N_("the server clock is {behind} s behind ..."), behind=12)``."""

    template: Template
    params: dict[str, Any]

    def __new__(cls, template: Template, **params: Any) -> "Phrase":
        phrase = super().__new__(cls, fill(template, params))
        phrase.template = template
        phrase.params = params
        return phrase

    @classmethod
    def from_said(cls, said: Mapping[str, Any]) -> "Phrase":
        """The phrase :meth:`said` gave (as a record keeps it): the same English text, template and parts."""
        parts = {name: cls.from_said(value) if isinstance(value, Mapping) else value
                 for name, value in said["parts"].items()}
        return cls(Template(said["message"]), **parts)

    def said(self) -> dict[str, Any]:
        """The template and its parts as a page says them (``{"message": ..., "parts": {...}}``); a part
        that is a phrase itself is given the same way, for the page to say it in its reader's language too."""
        return {"message": str(self.template),
                "parts": {name: value.said() if isinstance(value, Phrase) else str(value)
                          for name, value in self.params.items()}}


class DomainError(Exception):
    """A command or an input that breaks a rule; ``str(error)`` is the user-facing message.

    Given a :class:`Template` (``N_("...")``) and its ``params``, the message is the template
    filled in English, and the error keeps both (``template``, ``template_params``) for an edge
    that says it in another language.
    """

    template: Template | None = None
    template_params: Mapping[str, Any] = {}

    def __init__(self, *args: Any, **params: Any) -> None:
        if args and isinstance(args[0], Template):
            self.template, self.template_params = args[0], params
            super().__init__(fill(args[0], params), *args[1:])
        elif params:
            raise TypeError("a DomainError's params fill an N_() template")
        else:
            super().__init__(*args)


class ReasonedRefusal(DomainError):
    """A refusal a player meets at a screen: the English message (journaled as it is) with a stable
    ``reason`` and its figures (``params``, amounts as ``..._cents``), which the screen says in the
    player's language (``docs/languages.md``)."""

    def __init__(self, message: str, reason: str = "", **params: int | str) -> None:
        super().__init__(message)
        self.reason = reason
        self.params = params


def one_or_joined(faults: Sequence[str]) -> str | None:
    """Several faults in one line, one fault as it is, None for none; a :class:`Phrase` keeps its
    template for a page in another language, and so do several (one phrase holding them in turn)."""
    if not faults:
        return None
    joined = faults[-1]
    for fault in reversed(faults[:-1]):
        joined = Phrase(N_("{fault}; {more}"), fault=fault, more=joined)
    return joined


class Refusal(str):
    """Why something is refused, as a check answers it: the sentence (English, journaled as it
    is) with a stable ``reason`` and its figures (``params``, amounts as ``..._cents``), so that
    a screen says it in the reader's language (``docs/languages.md``)."""

    reason: str
    params: dict[str, int | str]

    def __new__(cls, text: str, reason: str, **params: int | str) -> "Refusal":
        refusal = super().__new__(cls, text)
        refusal.params = params
        refusal.reason = reason
        return refusal
