"""The board's speech clips: made by espeak-ng as WAV files, once, and kept in the hall's folder.

A clip is made the first time a board asks for it, on the thread pool the server gives
(espeak-ng takes some tens of milliseconds: never on the reactor thread), written whole
under a temporary name and renamed into place, so a board never reads half a file and
two hall processes never clash.  The file's name carries a digest of its voice and text:
a text changed in :mod:`hall_server.voice.catalog` makes a new clip; the old one is
never read again.  Asked twice while it is being made, a clip is made once.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any, Callable

from twisted.internet import defer
from twisted.logger import Logger

from hall_server.voice.catalog import CATALOGS

log = Logger()

#: Runs a blocking function off the reactor thread (the server's general pool).
Run = Callable[..., "defer.Deferred[Any]"]
#: A clip is a few seconds of speech; espeak-ng that takes longer than this is stuck.
SPEAK_TIMEOUT_S = 30


class VoiceUnavailable(Exception):
    """The clip cannot be made (no espeak-ng, or it failed); the message says what to do."""


def espeak_program() -> str | None:
    """The espeak-ng program on the PATH, or None."""
    return shutil.which("espeak-ng")


def clip_file(folder: Path, language: str, text: str) -> Path:
    """Where the clip of ``text`` in ``language`` is kept under ``folder``."""
    voice = CATALOGS[language].voice
    digest = hashlib.sha256(f"{voice}\n{text}".encode()).hexdigest()[:20]
    return folder / language / f"{digest}.wav"


def make_clip(program: str, voice: str, text: str, path: Path) -> bytes:
    """Speak ``text`` with the espeak-ng ``voice`` into the WAV file ``path`` unless it is there; its bytes.

    Blocking: run it on a thread pool.
    """
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(suffix=".wav.part", dir=path.parent)
        os.close(handle)
        try:
            done = subprocess.run(
                [program, "-v", voice, "-b", "1", "--stdin", "-w", temporary],
                input=text.encode("utf-8"), capture_output=True, timeout=SPEAK_TIMEOUT_S, check=False,
            )
            if done.returncode != 0 or os.path.getsize(temporary) == 0:
                said = done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
                raise VoiceUnavailable(f"espeak-ng could not speak {text!r} with the voice {voice}: {said}")
            os.replace(temporary, path)
        except subprocess.TimeoutExpired:
            raise VoiceUnavailable(f"espeak-ng took over {SPEAK_TIMEOUT_S} s to speak {text!r}") from None
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    return path.read_bytes()


class VoiceClips:
    """The clips of one hall, kept under ``folder`` (``<folder>/<language>/<digest>.wav``)."""

    def __init__(self, folder: Path, run: Run, program: str | None = None) -> None:
        self.folder = folder
        self.run = run
        self.program = program if program is not None else espeak_program()
        self._making: dict[Path, list[defer.Deferred[bytes]]] = {}

    def available(self) -> bool:
        return self.program is not None

    def clip(self, language: str, text: str) -> defer.Deferred[bytes]:
        """The WAV bytes of ``text`` spoken in ``language`` (a language of the catalog), made if need be."""
        if self.program is None:
            return defer.fail(VoiceUnavailable(
                "espeak-ng is not installed: the board speaks nothing (apt-get install espeak-ng)"))
        path = clip_file(self.folder, language, text)
        waiting: defer.Deferred[bytes] = defer.Deferred()
        if path in self._making:
            self._making[path].append(waiting)
            return waiting
        self._making[path] = [waiting]

        def done(made: bytes) -> None:
            for one in self._making.pop(path):
                one.callback(made)

        def failed(failure: Any) -> None:
            for one in self._making.pop(path):
                one.errback(failure)

        self.run(make_clip, self.program, CATALOGS[language].voice, text, path).addCallbacks(done, failed)
        return waiting
