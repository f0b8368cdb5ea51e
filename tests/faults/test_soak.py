"""Ten minutes of a real hall at the demo's fastest pace, the regulator's receiver attached,
a checkpoint every minute: the hall's memory does not grow in steps at its checkpoints,
its files and threads stay flat, and the receiver keeps up (``bench/bench_soak.py`` is the
hour-long run; docs/journal.md, "Checkpoints").

Memory is a count here, not a timing: a loaded machine plays fewer games in the ten
minutes, and each checkpoint then holds less, so the bounds below only loosen with load.
Before a checkpoint read its objects field by field, collected games let go of their
cards and the ledger kept its postings as strings, each checkpoint of this run added
6-11 MB that stayed (45 MB over the seven minutes measured, at load 14 on two cores);
now the seven minutes add a few MB.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Iterator

import pytest

from bench.bench_soak import CHECKPOINT_LINE, Sample, Soak, collect, last_seq
from tests.support.waiting import WAIT, wait_until

MINUTES = 10
#: The processes' start (a card set generated, certificates issued) and stop on a loaded machine.
SLACK = 600
pytestmark = [pytest.mark.integration, pytest.mark.timeout(MINUTES * 60 + SLACK)]
INTERVAL = 15.0
CHECKPOINT_SECONDS = 60
#: The first minutes, left out: the start's own allocations settle then (the card set read,
#: the terminals connected, the first games' objects made).
WARM_UP = 180.0
#: Growth allowed over the seven minutes after the warm-up, median to median (MB).
GROWTH_BOUND_MB = 30.0
#: What a checkpoint may add, the median over the run's checkpoints (MB).
STEP_BOUND_MB = 3.0


@pytest.fixture(scope="module")
def soaked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Soak, list[Sample]]]:
    soak = Soak(tmp_path_factory.mktemp("soak"), checkpoint_seconds=CHECKPOINT_SECONDS).start()
    shown: list[str] = []
    try:
        samples = collect(soak, MINUTES, INTERVAL, shown.append)
        print("\n".join(shown))  # the figures, in the test's output when it fails
        yield soak, samples
    finally:
        soak.stop()


def _after_warm_up(samples: list[Sample]) -> list[Sample]:
    kept = [s for s in samples if s.at >= WARM_UP]
    assert len(kept) >= 20, f"{len(kept)} samples after the warm-up"
    return kept


def test_the_halls_memory_does_not_grow_in_steps_at_its_checkpoints(soaked: tuple[Soak, list[Sample]]) -> None:
    soak, samples = soaked
    kept = _after_warm_up(samples)
    checkpoints = kept[-1].checkpoints - kept[0].checkpoints
    assert checkpoints >= 4, f"only {checkpoints} checkpoints after the warm-up (one due every {CHECKPOINT_SECONDS} s)"
    # Medians of four samples: one taken while a checkpoint's copy is being written does not count.
    start = statistics.median(s.hall.rss_mb for s in kept[:4])
    end = statistics.median(s.hall.rss_mb for s in kept[-4:])
    assert end - start < GROWTH_BOUND_MB, (
        f"the hall grew from {start:.1f} to {end:.1f} MB over {checkpoints} checkpoints after the warm-up")
    across = [now.hall.rss_mb - before.hall.rss_mb for before, now in zip(kept, kept[1:])
              if now.checkpoints > before.checkpoints]
    assert statistics.median(across) < STEP_BOUND_MB, (
        f"the hall's memory rose at its checkpoints by {', '.join(f'{c:+.1f}' for c in across)} MB")


def test_the_halls_files_and_threads_stay_flat_and_the_receiver_keeps_up(soaked: tuple[Soak, list[Sample]]) -> None:
    soak, samples = soaked
    kept = _after_warm_up(samples)
    # Loose bounds: a pool's threads start on demand (the reactor's up to 10), and the demo's
    # terminals come and go; a thread or a file left behind by every game is not.
    for of in ("hall", "receiver"):
        files = [getattr(s, of).files for s in kept]
        threads = [getattr(s, of).threads for s in kept]
        assert max(files) <= min(files) + 32, f"the {of}'s open files went from {min(files)} to {max(files)}"
        assert max(threads) <= min(threads) + 12, f"the {of}'s threads went from {min(threads)} to {max(threads)}"
    assert soak.hall is not None and soak.hall.count(CHECKPOINT_LINE) >= kept[-1].checkpoints
    folder: Path = soak.folder
    last = last_seq(folder / "hall.sqlite3", "SELECT max(seq) FROM journal")
    wait_until(
        lambda: last_seq(folder / "regulator" / "regulator.sqlite3", "SELECT max(seq) FROM feed_record") >= last,
        WAIT, f"the receiver to hold the hall's record {last}",
        seen=lambda: last_seq(folder / "regulator" / "regulator.sqlite3", "SELECT max(seq) FROM feed_record"),
    )
