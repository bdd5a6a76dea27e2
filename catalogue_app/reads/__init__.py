"""The read model: finished records, as handlers encode them, from one place below the handlers.

Each function here takes a reader connection first and is called through the database owner's
one way to read (``await db.read(fn, ...)``, or ``db.read_sync`` on a thread of its own): it
reads the rows, everything they refer to, and what the caller may do with them, and returns the
shapes of the API (msgspec Structs, or bytes already encoded). What does not depend on who asks
is kept by the owner (store/db.py ``kept``) until the data change. The API layer parses the
request, makes one such read, and encodes what it gets.
"""
