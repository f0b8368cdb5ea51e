"""Money is integer cents, everywhere; this module only turns cents into text."""

from __future__ import annotations


def format_cents(cents: int, currency: str = "EUR") -> str:
    """``1234`` -> ``12.34 EUR``; negative amounts keep their sign."""
    if isinstance(cents, bool) or not isinstance(cents, int):
        raise TypeError(f"amounts are whole cents, not {cents!r}")
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}{whole}.{part:02d} {currency}"
