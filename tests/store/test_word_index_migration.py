"""The word index's migration on a catalogue made before it: the index and its vocabulary are
filled from the rows already there, searches find them, and the step runs again cleanly on a
folder set back to the schema before it."""

from __future__ import annotations

import sqlite3

from catalogue_app.api.resources.params import resource_query
from catalogue_app.store import db, migrations, resource_writes, resources

SEARCH = [("search_fields", "title"), ("search_fields", "abstract")]
BEFORE = migrations.MIGRATIONS.index(migrations.word_index)  # the schema version before the word index


def _before_word_index(path) -> list[int]:
    """A database at schema BEFORE with three resources, one of them private."""
    db.migrate(path, upto=BEFORE)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    owner = conn.execute("INSERT INTO users (username, email, password, date_joined)"
                         " VALUES ('keeper', 'k@example.org', 'x', '2026-01-01T00:00:00Z')").lastrowid
    ids = [resource_writes.create(conn, "document", owner, {"title": title, "abstract": abstract})
           for title, abstract in (("Glacier lakes of Norway", "Meltwater"), ("Rivers of Chile", "Riverside towns"),
                                   ("Private rivers", "Kept hidden"))]
    resources.revoke(conn, ids[2], group_id=resources.ANONYMOUS_GROUP_ID)
    conn.execute("COMMIT")
    conn.close()
    return ids


def _search(path, text: str, viewer_id: int | None = None) -> tuple[int, list[int]]:
    conn = db.connect(path, readonly=True)
    try:
        viewer = resources.viewer_of(conn, viewer_id, is_superuser=viewer_id is not None)
        query, _, _ = resource_query([("search", text), *SEARCH], viewer.id, ())
        assert "resource_words" in resources._candidates(conn, query)[0][0].sql
        total, rows = resources.page(conn, viewer, query, 10, 0)
        return total, sorted(r["id"] for r in rows)
    finally:
        conn.close()


def test_the_word_index_is_filled_from_the_rows_there_and_made_again(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    glacier, chile, private = _before_word_index(path)
    for _ in range(2):
        assert db.migrate(path) == len(migrations.MIGRATIONS)
        assert _search(path, "river") == (1, [chile])            # anonymous: the private one is not listed
        assert _search(path, "RIVER", 1) == (2, [chile, private])
        assert _search(path, "lake") == (1, [glacier])
        assert _search(path, "ersid") == (1, [chile])
        conn = sqlite3.connect(path)
        assert {"glacier", "riverside", "meltwater"} <= {r[0] for r in conn.execute("SELECT word FROM resource_vocab")}
        # migration 22 tallies the rows already there
        assert conn.execute("SELECT resource_type, public_view, advertised, dirty, n FROM resource_tally"
                            " ORDER BY 1, 2, 3, 4").fetchall() == conn.execute(
            "SELECT resource_type, public_view, advertised, dirty, count(*) FROM resources GROUP BY 1, 2, 3, 4").fetchall()
        assert conn.execute("SELECT sum(n) FROM resource_tally").fetchone()[0] == 3
        conn.execute(f"PRAGMA user_version = {BEFORE}")  # set back: the step runs again
        conn.close()


OLD_WORDS = ("CREATE VIRTUAL TABLE resource_words USING fts5(title, abstract, hidden, content='', detail=column,"
             " columnsize=0, tokenize='unicode61 remove_diacritics 0')")


def test_the_word_index_of_an_older_version_is_split_by_who_lists_the_rows(tmp_path):
    """Before migration 29 every row's words were in title and abstract, the rows anonymous
    callers do not list marked 'h' in hidden: the migration makes the index anew in the new layout."""
    path = tmp_path / "catalogue.sqlite3"
    glacier, chile, private = _before_word_index(path)
    step = migrations.MIGRATIONS.index(migrations.unlisted_words)
    db.migrate(path, upto=step)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TABLE resource_words")  # as an older version left it (its triggers are made anew too)
    conn.execute(OLD_WORDS)
    conn.execute("INSERT INTO resource_words (rowid, title, abstract, hidden) SELECT id, title, abstract,"
                 f" {migrations.HIDDEN.format('resources')} FROM resources")
    conn.close()
    assert db.migrate(path) == len(migrations.MIGRATIONS)
    conn = sqlite3.connect(path)
    columns = {row[1] for row in conn.execute("SELECT * FROM pragma_table_info('resource_words')")}
    assert columns == {"title", "abstract", "hidden", "title_unlisted", "abstract_unlisted"}
    conn.close()
    assert _search(path, "river") == (1, [chile])
    assert _search(path, "rivers", 1) == (2, [chile, private])
    assert _search(path, "hidden", 1) == (1, [private])
    assert _search(path, "hidden") == (0, [])
