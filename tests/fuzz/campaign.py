"""Running a fuzz target as a hypothesis campaign of at least :data:`INPUTS` inputs.

Each hypothesis example draws a seed and a value of a hypothesis strategy; the target's
fast generator (``generators.py``), seeded with it, makes a batch of inputs near valid
ones, the first with the drawn value spliced in where a field's value was.  Hypothesis
brings its own structured values and the reproducible seed of any failure (the
failing input itself is in the finding's message); the generator brings the speed that
10^5 inputs a target need.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.fuzz.targets import Harness

INPUTS = 100_000

#: JSON values as hypothesis makes them: the splice of the JSON targets (no lone surrogates:
#: hypothesis's text leaves them out, as the CLEAN profile does).
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=6,
)


def campaign(harness: Harness, splices: st.SearchStrategy[Any], inputs: int = INPUTS) -> int:
    """Feed ``harness`` at least ``inputs`` inputs through hypothesis; the number fed."""
    fed = [0]

    @settings(max_examples=-(-inputs // harness.batch), deadline=None, database=None, derandomize=False,
              phases=(Phase.generate,), suppress_health_check=list(HealthCheck))
    @given(seed=st.integers(0, 2**64 - 1), splice=splices)
    def fuzz(seed: int, splice: Any) -> None:
        harness.run(random.Random(seed), harness.batch, splice)
        fed[0] += harness.batch

    fuzz()
    assert fed[0] >= inputs, f"only {fed[0]} inputs were fed"
    return fed[0]
