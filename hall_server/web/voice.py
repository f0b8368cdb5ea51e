"""``/voice/<language>/<clip>.wav``: the board's speech clips, public like the board.

``<clip>`` is ``ball-1`` to ``ball-90``, ``line``, ``bingo``, ``last-game``, or
``megabingo`` with the announced megabingo's ``date``, ``time`` and ``minimum_cents`` in
the query (a megabingo other than the one announced is not spoken: 404).  The clip is
made on the thread pool the first time it is asked for (:mod:`hall_server.voice.clips`).
A clip that cannot be made answers 503 with what to do; the board skips it.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web.resource import Resource
from twisted.web.server import NOT_DONE_YET, Request

from hall_server.voice.catalog import CATALOGS, ClipUnknown, clip_text
from hall_server.voice.clips import VoiceClips, VoiceUnavailable
from server_kit.web.http import SECURITY_HEADERS, NotFound, error_body

log = Logger()

#: The megabingo announced now (the board picture's ``megabingo``), or None.
Megabingo = Callable[[], "Mapping[str, Any] | None"]


class VoiceResource(Resource):
    """``/voice``: a folder per language of the catalog."""

    def __init__(self, clips: VoiceClips, megabingo: Megabingo) -> None:
        super().__init__()
        self.clips = clips
        self.megabingo = megabingo

    def getChild(self, path: bytes, request: Request) -> Resource:
        language = path.decode("ascii", "replace")
        if language not in CATALOGS:
            return NotFound()
        return _Clips(self.clips, self.megabingo, language)


class _Clips(Resource):
    isLeaf = True

    def __init__(self, clips: VoiceClips, megabingo: Megabingo, language: str) -> None:
        super().__init__()
        self.clips = clips
        self.megabingo = megabingo
        self.language = language

    def render_GET(self, request: Request) -> bytes | int:
        postpath = request.postpath or []
        file = postpath[0].decode("ascii", "replace") if len(postpath) == 1 else ""
        if not file.endswith(".wav"):
            return error_body(request, 404, "not_found", "a clip is /voice/<language>/<clip>.wav")
        args = request.args or {}
        terms = {key.decode("ascii", "replace"): values[0].decode("utf-8", "replace")
                 for key, values in args.items() if values}
        try:
            text = clip_text(self.language, file[:-len(".wav")], self.megabingo(), terms)
        except ClipUnknown as error:
            return error_body(request, 404, "not_found", str(error))
        gone: list[bool] = []
        request.notifyFinish().addErrback(lambda _: gone.append(True))

        def made(wav: bytes) -> None:
            if gone:
                return
            for name in (b"x-content-type-options", b"referrer-policy"):
                request.setHeader(name, SECURITY_HEADERS[name])
            request.setHeader(b"content-type", b"audio/wav")
            request.setHeader(b"cache-control", b"no-cache")
            request.write(wav)
            request.finish()

        def failed(failure: Failure) -> None:
            if failure.check(VoiceUnavailable):
                message = str(failure.value)
                log.warn("The board's clip {text!r} is not spoken: {why}", text=text, why=message)
            else:
                log.failure("making the board's clip {text!r}", failure, text=text)
                message = "the clip could not be made; the hall server's log says why"
            if not gone:
                request.write(error_body(request, 503, "voice_unavailable", message))
                request.finish()

        self.clips.clip(self.language, text).addCallbacks(made, failed)
        return NOT_DONE_YET
