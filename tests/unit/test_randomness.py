"""The video bingo machines' random source (server_kit/randomness.py, R92.10): the kernel CSPRNG read in
blocks, every number of ``0..n-1`` equally likely, bad bounds refused, and no byte shared with a
forked process."""

from __future__ import annotations

import collections
import json

import pytest

from hall_server.hall.ledger import _text
from protocol.ledger import Posting, Reference
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
    pid = [100]

    def urandom(count: int) -> bytes:
        reads.append(count)
        return bytes([len(reads)]) * count

    monkeypatch.setattr(randomness.os, "urandom", urandom)
    monkeypatch.setattr(randomness.os, "getpid", lambda: pid[0])
    source = KernelRandom()
    assert [source.randrange(90) for _ in range(3)] == [1, 1, 1] and reads == [randomness.BLOCK]
    pid[0] = 101  # the process forked: the block read before is its parent's
    assert source.randrange(90) == 2 and reads == [randomness.BLOCK] * 2


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
