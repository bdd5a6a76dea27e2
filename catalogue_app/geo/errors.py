"""The one exception of the geo layer."""

from __future__ import annotations


class GeoError(ValueError):
    """A file set that cannot be read as a dataset.

    ``message`` is written for the person who uploaded the files: it says what is wrong and, where
    it can, what to send instead. The API answers it as a 400.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
