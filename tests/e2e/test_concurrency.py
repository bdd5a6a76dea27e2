"""32 parallel clients create and read users for 10 s against two worker processes."""

import threading
import time

import httpx

from tests.conftest import ADMIN_PASSWORD, Server

CLIENTS = 32
SECONDS = 10


def test_parallel_writers_and_readers(tmp_path):
    srv = Server(tmp_path / "busy", workers=2)
    created, failures, requests = [], [], [0]
    lock = threading.Lock()
    deadline = time.monotonic() + SECONDS

    def client(n: int) -> None:
        i = 0
        with httpx.Client(base_url=srv.url, auth=("admin", ADMIN_PASSWORD), timeout=60) as c:
            while time.monotonic() < deadline:
                i += 1
                name = f"c{n}x{i}"
                calls = [("POST", "/api/v2/users/", {"username": name, "email": f"{name}@example.org"}),
                         ("GET", "/api/v2/users/", None)]
                for method, url, body in calls:
                    try:
                        r = c.request(method, url, json=body)
                    except httpx.HTTPError as exc:
                        r = exc
                    with lock:
                        requests[0] += 1
                        if not isinstance(r, httpx.Response) or r.status_code != 200:
                            failures.append((method, url, getattr(r, "text", repr(r))))
                        elif method == "POST":
                            created.append(r.json()["user"]["pk"])
                detail = c.get(f"/api/v2/users/{created[-1]}/") if created else None
                if detail is not None and detail.status_code != 200:
                    with lock:
                        failures.append(("GET", "detail", detail.text))

    try:
        threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not failures, failures[:5]
        assert len(created) == len(set(created)) > CLIENTS
        with httpx.Client(base_url=srv.url, auth=("admin", ADMIN_PASSWORD)) as c:
            total = c.get("/api/v2/users/", params={"page_size": 1}).json()["total"]
        assert total == len(created) + 1  # every created user is stored, plus the admin
        assert "database is locked" not in srv.output()
        assert "Traceback" not in srv.output()
    finally:
        srv.stop()
