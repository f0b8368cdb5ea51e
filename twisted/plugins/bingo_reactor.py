"""The ``bingo`` reactor: ``twist --reactor=bingo ...`` runs on the epoll reactor whose timers count
monotonic time, not the wall clock (:mod:`server_kit.clock`).  ``twist bingo-hall`` and
``twist bingo-central`` install it themselves when no ``--reactor`` is given."""

from twisted.application.reactors import Reactor

bingo = Reactor("bingo", "server_kit.clock", "The epoll reactor with its timers on the monotonic clock.")
