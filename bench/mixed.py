"""Reads and writes together: 32 clients for 60 seconds (``--seconds``) on one server, each
doing, in a loop, a page of ten, a detail, and one write in four: a title edit, a permission
change or a favorite set and removed. Prints the latency of each kind, the non-2xx answers and
how often the server log says "database is locked" (it must never)."""

from __future__ import annotations

import asyncio
import base64
import random
import tempfile
import time
from pathlib import Path

import httpx

CLIENTS = 32


def mixed_benchmarks(args) -> list[tuple[str, int, dict[str, float]]]:
    from bench.__main__ import PASSWORD, seed_resources, seed_users, start_server

    seconds = max(args.seconds, 5)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        seed_users(data, 100)
        seed_resources(data, args.resources)
        log = Path(tmp) / "server.log"
        proc, url = start_server(data, args.resource_workers, log)
        try:
            header = {"Authorization": "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()}
            times, errors = asyncio.run(_run(url, header, seconds))
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        locked = log.read_text().count("database is locked") if log.exists() else 0
    rows = []
    for kind, values in sorted(times.items()):
        values.sort()
        rows.append((f"mixed, {kind} [{args.resources:,}]", args.resource_workers,
                     {"rps": len(values) / seconds, "p50": values[len(values) // 2],
                      "p99": values[min(len(values) - 1, int(len(values) * 0.99))], "errors": errors.get(kind, 0)}))
    print(f"\n{'benchmark':<58} {'workers':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for name, workers, r in rows:
        print(f"{name:<58} {workers:>7} {r['rps']:>9.0f} {r['p50']:>8.2f} {r['p99']:>8.2f} {r['errors']:>8.0f}")
    print(f'"database is locked" in the server log: {locked}')
    return rows


async def _run(url: str, header: dict[str, str], seconds: float):
    times: dict[str, list[float]] = {}
    errors: dict[str, int] = {}
    async with httpx.AsyncClient(base_url=url, headers=header, timeout=60,
                                 limits=httpx.Limits(max_connections=CLIENTS)) as c:
        ids = [r["pk"] for r in (await c.get("/api/v2/resources/", params={
            "page_size": 500, "exclude[]": "*", "include[]": "pk", "filter{owner.username}": "admin"})).json()["resources"]]
        users = [u["pk"] for u in (await c.get("/api/v2/users/", params={"page_size": 50})).json()["users"]]
        deadline = time.monotonic() + seconds

        async def timed(kind: str, call) -> None:
            started = time.perf_counter()
            r = await call
            times.setdefault(kind, []).append((time.perf_counter() - started) * 1000)
            if r.status_code >= 300:
                errors[kind] = errors.get(kind, 0) + 1

        async def client(n: int) -> None:
            rng = random.Random(n)
            while time.monotonic() < deadline:
                pk = rng.choice(ids)
                await timed("read: page of 10", c.get("/api/v2/resources/", params={"page_size": 10,
                                                                                   "page": rng.randrange(1, 50)}))
                await timed("read: detail", c.get(f"/api/v2/resources/{pk}"))
                choice = rng.randrange(12)
                if choice == 0:
                    await timed("write: edit a title", c.patch(f"/api/v2/resources/{pk}",
                                                               json={"title": f"Edited {rng.random():.6f}"}))
                elif choice == 1:
                    await timed("write: permission change", c.put(f"/api/v2/resources/{pk}/permissions", json={
                        "users": [{"id": rng.choice(users), "permissions": rng.choice(["view", "edit", "none"])}]}))
                elif choice == 2:
                    await timed("write: favorite", c.post(f"/api/v2/resources/{pk}/favorite"))
                    await timed("write: favorite", c.delete(f"/api/v2/resources/{pk}/favorite"))

        await asyncio.gather(*(client(n) for n in range(CLIENTS)))
    return times, errors
