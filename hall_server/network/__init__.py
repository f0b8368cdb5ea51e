"""The hall's side of the network games (R92-R96): the link to the central server.

* :mod:`~hall_server.network.module` - the network games at this hall on the command
  core: holds on players' credit, captures and releases, balls, prizes, winners and
  credits, folded from the journal;
* :mod:`~hall_server.network.relay` - what the link does, without the socket: hello,
  catching up after a reconnect, sending every hold and failure until answered, taking
  the central server's pushes;
* :mod:`~hall_server.network.link` - the AMP connection over mutual TLS, kept up by a
  ``ClientService``.

``docs/network-game.md`` ("How a hall takes part") describes it from the hall's side.
"""
