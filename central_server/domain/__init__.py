"""The central server's pure domain: the network game across halls (R92-R96).

Plain Python and numpy, no framework, no database, no clock, no randomness: times come
in as integer milliseconds, balls as numbers or from an injected ball source.

* :mod:`~central_server.domain.config` - a network game's configuration, checked
  against the regulation (R93.5, R93.11, R94.1, R94.2);
* :mod:`~central_server.domain.game` - the game as a state machine with a transition
  table; commands return events, and the state is the fold of its events;
* its events are the journal records of :mod:`protocol.records.central`, declared there
  once, versioned, with their payload form;
* :mod:`~central_server.domain.detection` - vectorised per-ball winners for every
  pattern over all the game's cards;
* :mod:`~central_server.domain.money` - per hall and per player totals and the
  conservation of a game's money;
* :mod:`~central_server.domain.wire` - what the central server sends halls and
  answers them, as dicts of :mod:`protocol.central_messages`;
* :mod:`~central_server.domain.export` - a game as audit replay facts (FORMATS.md 2-3);
* :mod:`~central_server.domain.programme` - the programme: the chain of games, each taking
  the carries of the one before it (R88.5), and when the next one is due.
"""
