"""The network simulation: one real central server, real hall servers and headless terminals on loopback.

:mod:`simulation.network` starts and stops the processes and sums up what their
journals say (``bingo central simulate``); :mod:`simulation.terminal_worker` is the
process that runs many headless terminals (:mod:`terminals.client`) at once.  The
package starts hall servers by their command line and never imports ``hall_server``.
"""
