"""The regulator's reference receiver of the real-time feed (R92.7, R95; docs/regulator-feed.md).

Built only from ``server_kit/`` and ``protocol/``: it never imports a server.
"""
