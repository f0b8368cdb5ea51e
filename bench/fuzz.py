"""Fuzz every parser and endpoint at length: inputs per second and what was found.

    python bench/fuzz.py                       # every target, 10^6 inputs each
    python bench/fuzz.py kiosk http -n 200000  # some targets, another count
    python bench/fuzz.py --clean --seed 7      # without the input classes still crashing

The inputs and properties are those of the test suite's fuzz campaigns
(``tests/fuzz/targets.py``): structure-aware inputs (valid requests, frames, files
and scenarios with fields mutated, deep nesting, huge numbers, lone surrogates),
and per input: no exception but the declared error, no HTTP 500 or ``internal``
answer, no journal or balance change from a rejected input.  The run goes on past a
finding; each distinct finding (its kind and the file:line it was raised at) is
printed once, with the first input that caused it and how many inputs did.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fuzz.generators import CLEAN, FULL, Profile  # noqa: E402
from tests.fuzz.targets import TARGETS, Finding, findings, scratch_folder  # noqa: E402


def run(name: str, count: int, seed: int, profile: Profile) -> int:
    """Fuzz one target; the number of distinct findings."""
    with scratch_folder(f"fuzz-{name}-") as folder:
        harness = TARGETS[name](Path(folder), profile)
        rng = random.Random(f"{seed}:{name}")
        outcomes: Counter[str] = Counter()
        seen: dict[str, tuple[Finding, int]] = {}
        start = time.perf_counter()
        for index, finding, outcome in findings(harness, rng, count):
            outcomes[outcome] += 1
            if finding is not None:
                first, times = seen.get(finding.key, (finding, 0))
                seen[finding.key] = (first, times + 1)
            if (index + 1) % 100_000 == 0:
                print(f"  {name}: {index + 1:,} inputs, {(index + 1) / (time.perf_counter() - start):,.0f}/s",
                      flush=True)
        elapsed = time.perf_counter() - start
    print(f"{name}: {count:,} inputs in {elapsed:.1f} s = {count / elapsed:,.0f} inputs/s; "
          f"accepted {outcomes['accepted']:,}, rejected {outcomes['rejected']:,}, "
          f"findings {outcomes['finding']:,} ({len(seen)} distinct)", flush=True)
    for first, times in seen.values():
        print(f"  FINDING x{times:,}: {first}", flush=True)
    return len(seen)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", choices=[*TARGETS, []], metavar="TARGET",
                        help=f"targets to fuzz (default all): {', '.join(TARGETS)}")
    parser.add_argument("-n", "--inputs", type=int, default=1_000_000, help="inputs per target (default 10^6)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the input generator (default 1)")
    parser.add_argument("--clean", action="store_true",
                        help="leave out the input classes that still crash code under test (the suite's "
                             "enabled campaigns); by default every class is made")
    parser.add_argument("--list", action="store_true", help="list the targets and stop")
    arguments = parser.parse_args()
    if arguments.list:
        print("\n".join(TARGETS))
        return 0
    if arguments.inputs < 1:
        parser.error("--inputs must be at least 1")
    profile = CLEAN if arguments.clean else FULL
    distinct = sum(run(name, arguments.inputs, arguments.seed, profile) for name in arguments.targets or TARGETS)
    print(f"fuzz: {distinct} distinct finding(s)")
    return 1 if distinct else 0


if __name__ == "__main__":
    sys.exit(main())
