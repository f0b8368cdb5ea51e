"""The board's speech clips, made by the real espeak-ng: every ball, every announcement, in every language.

Each clip is checked as speech, read with :mod:`wave`: sound well above silence, and a
ball between 0.3 and 3 seconds long (R92.11-12).
"""

from __future__ import annotations

import array
import math
import wave
from io import BytesIO
from pathlib import Path
from typing import Any, Callable

import pytest
from twisted.internet import defer
from twisted.python.failure import Failure

from hall_server.voice.catalog import CATALOGS, ClipUnknown, clip_text, megabingo_terms
from hall_server.voice.clips import VoiceClips, VoiceUnavailable, clip_file, espeak_program

pytestmark = pytest.mark.skipif(espeak_program() is None, reason="espeak-ng is not installed (scripts/system-deps.sh)")

MEGABINGO = {"date": "2026-06-07", "time": "21:00", "minimum_cents": 150_000, "announced_on": "2026-05-20"}
#: Full-scale 16-bit samples; espeak-ng speaks at several thousand RMS, silence is a few units.
SPEECH_RMS = 500


def inline(function: Callable[..., Any], *args: Any) -> defer.Deferred[Any]:
    return defer.maybeDeferred(function, *args)


def outcome(deferred: defer.Deferred[Any]) -> Any:
    got: list[Any] = []
    deferred.addBoth(lambda result: got.append(result) or result)
    assert got, "the clip's Deferred did not fire"
    return got[0]


def measure(wav: bytes) -> tuple[float, float]:
    """A WAV file's length in seconds and its RMS amplitude (16-bit mono)."""
    with wave.open(BytesIO(wav)) as clip:
        assert (clip.getnchannels(), clip.getsampwidth()) == (1, 2), "espeak-ng writes 16-bit mono"
        seconds = clip.getnframes() / clip.getframerate()
        samples = array.array("h", clip.readframes(clip.getnframes()))
    rms = math.sqrt(sum(s * s for s in samples) / len(samples)) if samples else 0.0
    return seconds, rms


@pytest.fixture(scope="module")
def clips(tmp_path_factory: pytest.TempPathFactory) -> VoiceClips:
    return VoiceClips(tmp_path_factory.mktemp("voice"), inline)


@pytest.mark.req("R92.11-12")
@pytest.mark.parametrize("language", sorted(CATALOGS))
def test_every_ball_is_spoken_in_a_clip_of_speech(clips: VoiceClips, language: str) -> None:
    """Balls 1 to 90: each clip holds speech (not silence) and lasts 0.3 to 3 s."""
    wrong = []
    for n in range(1, 91):
        wav = outcome(clips.clip(language, clip_text(language, f"ball-{n}")))
        assert isinstance(wav, bytes), f"ball {n} in {language}: {wav}"
        seconds, rms = measure(wav)
        if not (0.3 <= seconds <= 3.0 and rms >= SPEECH_RMS):
            wrong.append(f"ball {n}: {seconds:.2f} s, RMS {rms:.0f}")
    assert not wrong, f"clips that are not a ball spoken in {language}: {wrong}"


@pytest.mark.req("R93.15")
@pytest.mark.req("R90.2")
@pytest.mark.parametrize("language", sorted(CATALOGS))
def test_the_prizes_the_last_game_and_the_megabingo_are_spoken(clips: VoiceClips, language: str) -> None:
    """Line, bingo, the session's last game and the announced megabingo: speech, each its own clip."""
    lengths = {}
    for name in ("line", "bingo", "last-game", "megabingo"):
        text = clip_text(language, name, MEGABINGO, megabingo_terms(MEGABINGO))
        seconds, rms = measure(outcome(clips.clip(language, text)))
        assert rms >= SPEECH_RMS, f"{name} in {language} is silent (RMS {rms:.0f})"
        lengths[name] = seconds
    assert 0.3 <= lengths["line"] <= 3 and 0.3 <= lengths["bingo"] <= 3, lengths
    # The announcements say more than a word: the megabingo its date, time and amount.
    assert lengths["megabingo"] > lengths["last-game"] > lengths["bingo"], lengths


def test_the_texts_say_the_date_time_and_amount_in_the_language() -> None:
    terms = megabingo_terms(MEGABINGO)
    assert clip_text("ca", "ball-42") == "el 42"
    assert clip_text("ca", "line") == "Línia!"
    assert clip_text("ca", "megabingo", MEGABINGO, terms) == (
        "Atenció: megabingo el 7 de juny, a les 21 hores. Es paga tot el fons, com a mínim 1500 euros.")
    october = {**MEGABINGO, "date": "2026-10-01", "time": "21h30", "minimum_cents": 1_234_56}
    assert clip_text("ca", "megabingo", october, megabingo_terms(october)) == (
        "Atenció: megabingo el 1 d'octubre, a les 21 hores i 30 minuts. Es paga tot el fons, "
        "com a mínim 1234 euros i 56 cèntims.")
    assert "le 7 juin, à 21 heures" in clip_text("fr", "megabingo", MEGABINGO, terms)
    assert "el 7 de junio, a las 21 horas" in clip_text("es", "megabingo", MEGABINGO, terms)


@pytest.mark.parametrize("language, name, megabingo, terms, why", [
    ("de", "ball-1", None, None, "not 'de'"),
    ("ca", "ball-0", None, None, "no clip is named 'ball-0'"),
    ("ca", "ball-91", None, None, "no clip is named 'ball-91'"),
    ("ca", "../hall", None, None, "no clip is named"),
    ("ca", "megabingo", None, megabingo_terms(MEGABINGO), "no megabingo is announced"),
    ("ca", "megabingo", MEGABINGO, {**megabingo_terms(MEGABINGO), "minimum_cents": "1"}, "no megabingo is announced"),
])
def test_a_clip_the_hall_does_not_speak_is_refused_saying_why(language: str, name: str, megabingo: Any,
                                                              terms: Any, why: str) -> None:
    with pytest.raises(ClipUnknown, match=why):
        clip_text(language, name, megabingo, terms)


def test_a_clip_is_made_once_and_kept_on_disk(tmp_path: Path) -> None:
    """Asked twice while it is made, then again: espeak-ng runs once; the file is in <folder>/<language>/."""
    pending: list[tuple[Callable[..., Any], tuple[Any, ...], defer.Deferred[Any]]] = []

    def later(function: Callable[..., Any], *args: Any) -> defer.Deferred[Any]:
        pending.append((function, args, defer.Deferred()))
        return pending[-1][2]

    clips = VoiceClips(tmp_path, later)
    first, second = clips.clip("ca", "el 7"), clips.clip("ca", "el 7")
    assert len(pending) == 1
    function, args, deferred = pending.pop()
    deferred.callback(function(*args))
    assert outcome(first) == outcome(second) == clip_file(tmp_path, "ca", "el 7").read_bytes()
    assert clip_file(tmp_path, "ca", "el 7").parent == tmp_path / "ca"
    assert [p.name for p in (tmp_path / "ca").iterdir()] == [clip_file(tmp_path, "ca", "el 7").name]
    written = clip_file(tmp_path, "ca", "el 7").stat().st_mtime_ns
    again = clips.clip("ca", "el 7")
    function, args, deferred = pending.pop()
    deferred.callback(function(*args))  # reads the file espeak-ng wrote: no new one
    assert outcome(again) == outcome(first)
    assert clip_file(tmp_path, "ca", "el 7").stat().st_mtime_ns == written
    assert len(list((tmp_path / "ca").iterdir())) == 1


def test_without_espeak_ng_a_clip_fails_saying_what_to_install(tmp_path: Path) -> None:
    clips = VoiceClips(tmp_path, inline, program=None)
    clips.program = None
    failure = outcome(clips.clip("ca", "el 7"))
    assert isinstance(failure, Failure) and failure.check(VoiceUnavailable)
    assert "apt-get install espeak-ng" in str(failure.value)
    failure.trap(VoiceUnavailable)
