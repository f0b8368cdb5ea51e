"""The hall's web edge: caller console, information board, command channel, WebSockets.

Thin by design: resources and sockets parse a request, call one method of the
command channel, the sign-ins or the read model, and write JSON.  The rules live in
the hall core and its modules (:mod:`hall_server.hall`).
"""
