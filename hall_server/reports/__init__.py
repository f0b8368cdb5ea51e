"""The minutes book and the reports: projections of the journal, never writers of facts.

* :mod:`hall_server.reports.minutes` folds journal records into per-game and
  per-session minutes and the monthly count of cards sold (R77, R83.3-5).  Pure: no
  I/O, no clock, no framework.
* :mod:`hall_server.reports.layout` turns those minutes into a :class:`Report`: titled
  tables of typed cells, the one shape both renderings read, so the PDF and the CSV
  hold the same fields.
* the server kit's :mod:`server_kit.reports.render` writes a report as PDF (reportlab)
  and as CSV, and :mod:`server_kit.reports.signing` signs and verifies a report file's
  bytes with the hall's Ed25519 journal key (a detached, raw 64-byte signature that
  stock openssl checks).
"""
