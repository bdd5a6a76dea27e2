"""Field packages: one zip file that carries a chosen set of resources (data, files, metadata,
permissions and versions) from one catalogue to another with no network between them, and the
changes made on the other side back again. The format is written down in docs/package-format.md.

- ``archive.py``: the file itself: writing it member by member with each member's SHA-256,
  reading and checking it (hashes, format version, zip safety, free disk space), signing.
- ``keys.py``: this catalogue's signing key and which signers it trusts.
- ``records.py``: one resource as a record (its rows, other rows named by natural keys).
- ``export.py``: what a search selects, written into a package (whole, clipped, or since a package).
- ``importer.py``: a package read into this catalogue, resource by resource, with a report.
- ``cli.py``: ``catalogue package export|import`` and ``catalogue key``.
"""
