"""Timestamps as the API renders them: UTC, ISO 8601, microseconds, a trailing Z."""

from datetime import datetime, timedelta, timezone


def now(offset_seconds: float = 0) -> str:
    moment = datetime.now(timezone.utc) + timedelta(seconds=offset_seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
