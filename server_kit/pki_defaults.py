"""What the operator's certificate authority (:mod:`server_kit.pki`) issues when not told
otherwise, and the reasons a certificate is revoked for.

Apart from the authority, which brings :mod:`cryptography`: the ``bingo pki`` command shows
these in its options' help, which loads no cryptography.
"""

from __future__ import annotations

#: Days the operator's authority is valid.
CA_DAYS = 3650

# A year and a month: browsers refuse server certificates valid for more than 398 days,
# and one renewal date a year is easy for an operator to keep.
LEAF_DAYS = 397

#: Why a certificate is revoked, as the revocation list records it: X.509's reason flags
#: of the same names (``key-compromise`` is ``keyCompromise``).
REVOCATION_REASONS = ("unspecified", "key-compromise", "superseded", "cessation-of-operation")
