"""How the text values of requests read: truthiness and dates, the same in query strings and bodies."""

from __future__ import annotations

from datetime import datetime, timezone

from catalogue_app.services.errors import Invalid

FALSE_WORDS = {"0", "false", ""}


def truthy(value: str) -> bool:
    """dynamic-rest truthiness: only "0", "false" and "" are false."""
    return value.strip().lower() not in FALSE_WORDS


def parse_datetime(value: str) -> str:
    """An ISO 8601 date or datetime, rendered the way the store keeps timestamps."""
    text = value.strip().replace(" ", "T")
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise Invalid(
            f"'{value}' has wrong format. Use one of these formats instead: "
            "YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]."
        ) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
