"""The video bingo machines' random source (server_kit/randomness.py, R92.10): the kernel CSPRNG read in
blocks, every number of ``0..n-1`` equally likely, bad bounds refused, and no byte shared with a
forked process."""

from __future__ import annotations

import collections
import json
import os

import pytest

from hall_server.hall.ledger import _text
from protocol.ledger import Posting, Reference
from protocol.videobingo.play import _sample
from server_kit import randomness
from server_kit.randomness import KernelRandom

@pytest.mark.req("R92.10")
@pytest.mark.parametrize("stop", [7, 75, 90, 256, 1000])
def test_every_number_below_the_bound_is_equally_likely(stop: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """Given every value its bytes can hold once, the source gives each number of ``0..stop-1`` exactly as
    often: the values that would favour some are thrown away, none is taken twice."""
    width = 1 if stop <= 256 else 2
    every = b"".join(value.to_bytes(width, "big") for value in range(256 ** width))
    monkeypatch.setattr(randomness, "BLOCK", len(every))
    monkeypatch.setattr(randomness.os, "urandom", lambda count: every if count <= len(every) else every * 2)
    source = KernelRandom()
    limit = 256 ** width - 256 ** width % stop
    counts = collections.Counter(source.randrange(stop) for _ in range(limit))
    assert counts == {n: limit // stop for n in range(stop)}
    assert source._at == limit * width  # the values thrown away come after, at the end of the block


@pytest.mark.req("R92.10")
def test_the_numbers_come_from_the_kernel() -> None:
    """Real draws: in range, and not all the same."""
    draws = [KernelRandom().randrange(75) for _ in range(200)]
    assert all(0 <= n < 75 for n in draws) and len(set(draws)) > 20


@pytest.mark.parametrize("stop", [0, -3, 2.5, True, "9"])
def test_a_bound_that_is_not_a_whole_number_of_at_least_one_is_refused(stop: object) -> None:
    with pytest.raises(ValueError, match="randrange needs a whole number of at least 1"):
        KernelRandom().randrange(stop)  # type: ignore[arg-type]


def test_the_bytes_come_from_the_kernel_in_blocks_and_a_forked_process_reads_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reads: list[int] = []

    def urandom(count: int) -> bytes:
        reads.append(count)
        return bytes([len(reads)]) * count

    monkeypatch.setattr(randomness.os, "urandom", urandom)
    source = KernelRandom()
    assert [source.randrange(90) for _ in range(3)] == [1, 1, 1] and reads == [randomness.BLOCK]
    reader, writer = os.pipe()
    child = os.fork()
    if child == 0:  # the child: its first number comes from a block of its own
        try:
            os.write(writer, bytes([source.randrange(90), len(reads)]))
        finally:
            os._exit(0)
    os.close(writer)
    with os.fdopen(reader, "rb") as answer:
        assert answer.read() == bytes([2, 2])
    os.waitpid(child, 0)
    assert source.randrange(90) == 1 and reads == [randomness.BLOCK]  # the parent goes on with its own


@pytest.mark.req("R92.10")
@pytest.mark.parametrize("population, count", [(75, 15), (90, 30), (60, 60), (300, 20)])
def test_a_whole_sample_is_the_shuffle_one_number_at_a_time_gives(
    population: int, count: int, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Given the same bytes, ``partial_shuffle`` draws exactly what the game's Fisher-Yates shuffle
    draws with ``randrange``: the same numbers in the same order."""
    stream = bytes(range(256)) * 64
    monkeypatch.setattr(randomness.os, "urandom", lambda count: stream[:max(count, 1)] if count <= len(stream) else stream)
    whole = KernelRandom().partial_shuffle(population, count)
    one_at_a_time = _sample(population, count, _OneAtATime(KernelRandom()))
    assert whole == one_at_a_time and len(set(whole)) == count and set(whole) <= set(range(1, population + 1))


class _OneAtATime:
    """A source with ``randrange`` only: the game draws from it one number at a time."""

    def __init__(self, source: KernelRandom) -> None:
        self.randrange = source.randrange


def test_a_kept_posting_is_the_json_of_its_journal_form() -> None:
    """The ledger keeps each posting as text written directly: the same string ``json.dumps`` gives."""
    postings = [
        Posting.transfer(120, debit="player:123", credit="house", reason='a "quoted" reason, «é»\n',
                         reference=Reference(game_id="g-1", card="V1-7", event_seq=5)),
        Posting.transfer(1, debit="cash:desk1", credit="player:9", reason="credit"),
    ]
    for posting in postings:
        assert _text(posting) == json.dumps(posting.to_dict(), separators=(",", ":"))
        assert Posting.from_dict(json.loads(_text(posting))) == posting
