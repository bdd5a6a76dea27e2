"""Why the rules refuse a request, free of HTTP: api/errors.py turns each kind into its status
and GeoNode's error envelope (``reason`` is GeoNode's error code)."""

from __future__ import annotations

from typing import Any


class Refused(Exception):
    """A request the rules refuse; ``extra`` adds keys some GeoNode answers also carry."""

    reason = "invalid"

    def __init__(self, message: str, extra: dict[str, Any] | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.extra = extra or {}
        if code:  # a more precise code than the kind's, where GeoNode sends one
            self.reason = code


class Invalid(Refused):
    """The input is wrong: the message says what to send instead."""

    reason = "invalid"


class Unreadable(Invalid):
    """The input cannot be read at all (broken or too deeply nested JSON)."""

    reason = "parse_error"


class NotSignedIn(Refused):
    reason = "not_authenticated"

    def __init__(self, message: str = "Authentication credentials were not provided."):
        super().__init__(message)


class Forbidden(Refused):
    reason = "permission_denied"

    def __init__(self, message: str = "You do not have permission to perform this action.",
                 extra: dict[str, Any] | None = None):
        super().__init__(message, extra)


class NotFound(Refused):
    """Nothing the caller may see has this id (what is hidden and what does not exist look alike)."""

    reason = "not_found"

    def __init__(self, model: str = "", message: str | None = None, extra: dict[str, Any] | None = None):
        super().__init__(message or (f"No {model} matches the given query." if model else "Not found."), extra)


class Busy(Refused):
    """The thing is being changed by a job that has not finished."""

    reason = "conflict"


class Conflict(Refused):
    """The request was made against a state that has changed since (a stale version)."""

    reason = "conflict"


def refusal_for(caller: Any) -> Refused:
    """NotSignedIn for an anonymous caller, Forbidden for a known one."""
    return NotSignedIn() if caller.is_anonymous else Forbidden()
