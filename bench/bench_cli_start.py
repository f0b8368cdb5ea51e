"""How long ``bingo --help`` and each subcommand's ``--help`` take, from a fresh process.

Run: ``.venv/bin/python bench/bench_cli_start.py``

Prints, for ``bingo --help`` and ``bingo X --help`` of every subcommand (the hall's and the
ones the ``bingo.commands`` entry points add: ``central``, ``regulator``), the wall time of
the whole process (interpreter start, imports, the help printed), median of 3 runs.  A help
imports click and the modules that declare the commands, nothing heavy
(``tests/cli/test_start_fast.py``); to see where the time of one goes:
``python -X importtime -c "import sys; sys.argv=['bingo','hall','--help']; from hall_server.cli import main; main()"``.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import click  # noqa: E402

from hall_server.cli import main as bingo  # noqa: E402

RUNS = 3
#: The ``bingo`` command of this tree, as the tests run it (the tree's code first on the path).
BINGO = (sys.executable, "-c", "from hall_server.cli import main; main()")


def help_seconds(*words: str) -> float:
    """The median wall time of ``bingo WORDS --help`` in a fresh process."""
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run([*BINGO, *words, "--help"], cwd=ROOT, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    print(f"bingo --help, median of {RUNS} fresh processes")
    print(f"  {'(bingo)':<10} {help_seconds():.2f} s")
    for name in bingo.list_commands(click.Context(bingo)):
        print(f"  {name:<10} {help_seconds(name):.2f} s")


if __name__ == "__main__":
    main()
