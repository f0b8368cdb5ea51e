"""The audit export of a hall day (FORMATS.md section 3, ``bingo audit export``).

* :mod:`protocol.audit.hall_day` - the pure part, shared with the regulator's receiver:
  journal records in, the day's ``bingo-replay/2`` scenario (``/3`` for a date of several
  sessions or with refunds after a close), its result as the hall recorded it, and the day's journal
  segment out; and :mod:`protocol.audit.hall_rebuild`, the day rebuilt from an
  export's own files, for ``bingo audit verify`` (:mod:`server_kit.audit_verify`);
* :mod:`hall_server.audit.folder` - the four files written all at once into a folder,
  and the check of a ``journal.jsonl`` against the journal's public key;
* :mod:`hall_server.audit.source` - the journal and the card store of a hall's
  database, read for one day.

``docs/audit.md`` says what "the day" is and how an inspector checks the files.
"""

