"""Developer webhooks (spec 6.2): management routes, the outbox dispatcher and the signed,
retried, at-least-once delivery worker. See docs/webhooks.md."""
