"""16 clients send 200 permission changes and copies at once to two worker processes: every
request finishes, no change is lost, and SQLite never reports a lock."""

import threading

import httpx

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, Server, make_user, poll

CLIENTS = 16
OPERATIONS = 200
LEVELS = ("view", "download", "edit", "none", "manage")


def test_parallel_permission_changes_and_copies(tmp_path):
    srv = Server(tmp_path / "jobs", workers=2)
    try:
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            people = [make_user(admin) for _ in range(CLIENTS)]
        docs, failures, expected, copies = {}, [], {}, {}
        lock = threading.Lock()

        def client(n: int) -> None:
            me = people[n]
            with httpx.Client(base_url=srv.url, auth=(me["username"], USER_PASSWORD), timeout=60) as c:
                r = c.post("/api/v2/resources/", json={"resource_type": "document", "title": f"Shared {n}"})
                pk = r.json()["resource"]["pk"]
                docs[n] = pk
                for i in range(n, OPERATIONS, CLIENTS):
                    if i % 3 == 2:
                        r = c.put(f"/api/v2/resources/{pk}/copy")
                        kind = "copy"
                    else:
                        level, other = LEVELS[i % len(LEVELS)], people[(n + 1 + i % 5) % CLIENTS]
                        r = c.put(f"/api/v2/resources/{pk}/permissions",
                                  json={"users": [{"id": other["pk"], "permissions": level}]})
                        kind = ("perm", other["pk"], level)
                    if r.status_code != 200:
                        with lock:
                            failures.append((n, i, r.status_code, r.text[:200]))
                        continue
                    status = poll(c, r.json()["status_url"])
                    with lock:
                        if status["status"] != "finished":
                            failures.append((n, i, status))
                        elif kind == "copy":
                            copies[n] = copies.get(n, 0) + 1
                        else:
                            expected.setdefault(n, {})[kind[1]] = kind[2]

        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not failures, failures[:5]
        assert sum(copies.values()) + sum(len(v) for v in expected.values()) <= OPERATIONS
        with srv.client(auth=("admin", ADMIN_PASSWORD)) as admin:
            done = admin.get("/api/v2/executionrequest/", params={"page_size": 1000}).json()
            assert done["total"] == OPERATIONS and {r["status"] for r in done["requests"]} == {"finished"}
            for n, pk in docs.items():
                shown = {u["id"]: u["permissions"] for u in
                         admin.get(f"/api/v2/resources/{pk}/permissions").json()["users"]}
                for user_id, level in expected.get(n, {}).items():
                    assert shown.get(user_id, "none") == level, (n, user_id, level, shown.get(user_id))
                owned = admin.get("/api/v2/resources/", params={"filter{owner}": people[n]["pk"]}).json()["total"]
                assert owned == 1 + copies.get(n, 0)
        assert "database is locked" not in srv.output()
    finally:
        srv.stop()
