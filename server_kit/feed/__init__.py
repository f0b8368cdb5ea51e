"""The sender's side of the regulator's real-time feed (R92.7; docs/regulator-feed.md)."""
