"""The player terminals' edge of the hall server: WebSocket sessions, fan-out, the kiosk app."""
