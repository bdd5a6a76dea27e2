"""Every line of SQL: one module per aggregate, db.py owning the connections.

``Connection`` and ``Row`` are what the store hands to the layers above, named here so that they
need not import sqlite3 themselves."""

from sqlite3 import Connection, Row

__all__ = ["Connection", "Row"]
