"""Server-Sent Events framing (the WHATWG event-stream format) for the realtime stream.

Every frame is built once, as bytes: a data frame is serialized when the broker reads its outbox
row and the same bytes go to every subscriber (docs/realtime.md, "Fan-out").

- data: ``id: <event id>`` / ``event: svc`` / ``data: {"v":1,"id":…,"seq":…,…}``
- reset: ``event: svc-reset`` / ``data: {"v":1,"type":"replay-reset","topic",…}``
- error: ``event: svc-error`` / ``data: {"code","topic"}``
- heartbeat: a comment line ``: heartbeat``
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Final

from sqlalchemy import RowMapping

from predmarket.kit.schemas import format_utc

#: Protocol version carried in every frame's ``v``.
PROTOCOL_VERSION: Final = 1
HEARTBEAT: Final = b": heartbeat\n\n"
DATA_EVENT: Final = "svc"
RESET_EVENT: Final = "svc-reset"
ERROR_EVENT: Final = "svc-error"
HEADERS: Final = (
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
)


def _json(value: object) -> str:
    # One line (SSE data lines end at a newline; json.dumps escapes every newline inside strings).
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


#: ISO 8601 UTC with milliseconds and ``Z`` (the project's time format, as in API responses).
iso_ms = format_utc


@dataclass(frozen=True, slots=True)
class Frame:
    """One encoded data frame: its event id, topic and wire bytes."""

    id: int
    topic: str
    data: bytes


def event_frame(row: RowMapping) -> Frame:
    """The ``svc`` frame of an outbox row (``id, topic, operation, entity, key, payload,
    source, created_at``)."""
    event_id = row["id"]
    assert isinstance(event_id, int)
    topic = str(row["topic"])
    created = row["created_at"]
    body = {
        "v": PROTOCOL_VERSION,
        "id": str(event_id),
        "seq": str(event_id),
        "topic": topic,
        "operation": row["operation"],
        "entity": row["entity"],
        "key": row["key"] if row["key"] is not None else {},
        "payload": row["payload"] if row["payload"] is not None else {},
        "timestamp": iso_ms(created) if isinstance(created, datetime) else str(created),
        "source": row["source"],
    }
    data = f"id: {event_id}\nevent: {DATA_EVENT}\ndata: {_json(body)}\n\n".encode()
    return Frame(event_id, topic, data)


def reset_frame(topic: str, after_event_id: int, *, resume_id: int, reason: str) -> bytes:
    """``svc-reset`` for one topic. Its ``id:`` line moves the client's cursor to ``resume_id``
    (everything after it follows live), so a reconnect does not ask for the lost range again."""
    body = {
        "v": PROTOCOL_VERSION,
        "type": "replay-reset",
        "topic": topic,
        "afterEventId": str(after_event_id),
        "reason": reason,
    }
    return f"id: {resume_id}\nevent: {RESET_EVENT}\ndata: {_json(body)}\n\n".encode()


def error_frame(code: str, topic: str) -> bytes:
    """``svc-error``; the stream closes after it."""
    return f"event: {ERROR_EVENT}\ndata: {_json({'code': code, 'topic': topic})}\n\n".encode()


def retry_hint(retry_ms: int) -> bytes:
    """The reconnect delay hint sent first on every connection."""
    return f"retry: {retry_ms}\n\n".encode()
