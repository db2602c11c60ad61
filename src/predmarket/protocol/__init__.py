"""``GET /v1/protocol/config``: the canonical network, contracts, limits, fees and realtime
capabilities a client checks before each session (spec 1.6)."""
