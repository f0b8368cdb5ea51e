"""The audit export of a day (FORMATS.md section 3) in its pure parts, shared by every side.

* :mod:`protocol.audit.check` - what an export holds, the errors of its check, and the
  checks that need only the documents and the records: the scenario and the result are
  what the records say (by a server's rebuild), and the replay of the scenario is the
  result (``bingo audit verify``, and the regulator's receiver);
* :mod:`protocol.audit.hall_day` - a hall's day folded from its journal records into the
  scenario, the result as the hall recorded it, and the day's journal segment;
* :mod:`protocol.audit.hall_rebuild` - a hall's day rebuilt from its segment alone;
* :mod:`protocol.audit.central_rebuild` - a central server's network games rebuilt from
  its segment alone;
* :mod:`protocol.audit.report` - the day's export as a signed report to the regulator.

Reading a database, writing a folder and reading a folder's files stay with the
servers (:mod:`hall_server.audit`, :mod:`central_server.audit`,
:mod:`server_kit.audit_folder`, :mod:`server_kit.audit_verify`).
"""
