"""The tokens' migration on a catalogue made before it: the tokens there keep working, short-lived
ones are taken for /o/token/ logins and long-lived ones for the command line's (which logins
never push out), and the step runs again cleanly on a folder set back to the schema before it."""

from __future__ import annotations

import sqlite3

from catalogue_app.store import db, migrations, tokens

BEFORE = migrations.MIGRATIONS.index(migrations.token_details)


def test_tokens_made_before_get_a_kind_and_keep_working(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    db.migrate(path, upto=BEFORE)
    conn = sqlite3.connect(path, isolation_level=None)
    owner = conn.execute("INSERT INTO users (username, email, password, date_joined)"
                         " VALUES ('keeper', 'k@example.org', 'x', '2026-01-01T00:00:00Z')").lastrowid
    for token, created, expires in (("from-login", "2998-12-31T12:00:00.000000Z", "2999-01-01T12:00:00.000000Z"),
                                    ("from-cli", "2998-12-31T12:00:00.000000Z", "2999-12-31T12:00:00.000000Z")):
        conn.execute("INSERT INTO tokens (digest, user_id, created, expires) VALUES (?, ?, ?, ?)",
                     (tokens.digest(token), owner, created, expires))
    conn.close()
    for _ in range(2):
        assert db.migrate(path) == len(migrations.MIGRATIONS)
        conn = db.connect(path)
        kinds = {r["digest"]: (r["kind"], r["label"], r["client"], r["last_used"])
                 for r in conn.execute("SELECT * FROM tokens")}
        assert kinds == {tokens.digest("from-login"): ("login", "", "", None),
                         tokens.digest("from-cli"): ("cli", "", "", None)}
        assert tokens.user_for(conn, "from-cli")["username"] == "keeper"
        conn.execute(f"PRAGMA user_version = {BEFORE}")  # set back: the step runs again
        conn.close()
