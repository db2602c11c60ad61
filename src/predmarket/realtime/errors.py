"""Errors of the realtime stream and the platform banner (spec 7.3)."""

from __future__ import annotations

from predmarket.kit.errors import AppError, Unauthorized


class InvalidRealtimeCursor(AppError):
    status = 400
    code = "invalid_realtime_cursor"
    message = "lastEventId must be a positive integer"


class RealtimeTopicForbidden(AppError):
    status = 403
    code = "realtime_topic_forbidden"
    message = "topic not allowed"


class RealtimeUnavailable(AppError):
    status = 503
    code = "realtime_unavailable"
    message = "realtime delivery is not available on this deployment"


class OperatorTokenRequired(Unauthorized):
    message = "the operator token is missing or wrong (header x-svc-operator-token)"
