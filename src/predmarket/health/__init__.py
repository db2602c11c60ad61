"""Liveness and readiness: ``GET /v1/health`` and ``GET /v1/health/ready``."""
