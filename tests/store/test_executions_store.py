"""Execution requests in the store: what the job runner asks after every job stays cheap."""

from __future__ import annotations

import sqlite3

from catalogue_app.store import db, executions


def test_the_waiting_requests_of_a_user_come_from_their_own_index(tmp_path):
    path = tmp_path / "catalogue.sqlite3"
    db.migrate(path)
    with db.transaction(path) as conn:
        for i in range(300):
            executions.create(conn, user_id=None, func_name="x", action="x", input_params={})
        ready = conn.execute("SELECT exec_id FROM execution_requests ORDER BY id").fetchall()
        for (exec_id,) in ready[:-2]:
            executions.finish(conn, exec_id, {})
    conn = sqlite3.connect(path)
    assert executions.waiting(conn, None) == [r[0] for r in ready[-2:]]
    plan = " ".join(r[-1] for r in conn.execute(
        "EXPLAIN QUERY PLAN SELECT exec_id FROM execution_requests WHERE status = 'ready' AND user_id IS ? ORDER BY id",
        (None,)))
    assert "execution_requests_ready" in plan
    conn.close()
