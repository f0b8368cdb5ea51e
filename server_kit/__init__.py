"""What every server of the system is built from: no bingo rules.

The command loop (:mod:`server_kit.core`), the signed journal behind a port
(:mod:`server_kit.journal`), the database and its writer thread
(:mod:`server_kit.db`), the PKI and TLS (:mod:`server_kit.pki`), the key files
(:mod:`server_kit.keys`), report rendering and signing (:mod:`server_kit.reports`),
the self-checks (:mod:`server_kit.verification`), the web command channel and its
bounds (:mod:`server_kit.web`), the AMP helpers (:mod:`server_kit.amp`) and the
audit export's folder (:mod:`server_kit.audit_folder`).  It
imports only :mod:`protocol`; each server gives it its roles, permissions,
migrations and configuration.
"""
