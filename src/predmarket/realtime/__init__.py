"""The realtime stream (spec 6.1): ``GET /v1/realtime/stream`` over the outbox, the
per-process broker, the platform banner and ``health:indexer`` events (docs/realtime.md)."""
