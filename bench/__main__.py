"""Run the benchmarks against a real server process and print a table.

The load generator is wrk on 127.0.0.1 (installed by `make bench`). Figures depend on the
machine and on whatever else it runs: compare runs on the same machine.
"""

from __future__ import annotations

import argparse
import base64
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from catalogue_app.bootstrap import prepare
from catalogue_app.config import load_settings
from catalogue_app.passwords import hash_password
from catalogue_app.store import db, tokens, users

PASSWORD = "bench-password-1"


def seed_users(data_dir: Path, count: int) -> str:
    """count users (the admin included) and a token for the admin; returns the token."""
    settings = load_settings(environ={}, data_dir=data_dir)
    os.environ["CATALOGUE_ADMIN_PASSWORD"] = PASSWORD
    prepare(settings)
    hashed = hash_password(PASSWORD)
    with db.transaction(settings.database_path) as conn:
        for i in range(count - 1):
            users.create(conn, {"username": f"bench{i:05d}", "email": f"bench{i:05d}@example.org",
                                "first_name": "Bench", "last_name": f"User {i}", "password": hashed})
        return tokens.issue(conn, users.by_username(conn, "admin")["id"], 86400)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data_dir: Path, workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "catalogue_app", "serve", "--data-dir", str(data_dir),
                             "--port", str(port), "--workers", str(workers)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            if httpx.get(f"{url}/api/v2/", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the server did not start")


def to_ms(text: str) -> float:
    number, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[unit]


def wrk(url: str, header: str, connections: int, seconds: int) -> dict[str, float]:
    base = ["wrk", "-t1", f"-c{connections}", "--latency", "-H", header]
    subprocess.run(base + ["-d2s", url], capture_output=True, check=True)  # warm-up
    out = subprocess.run(base + [f"-d{seconds}s", url], capture_output=True, text=True, check=True).stdout
    result = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))}
    for pct in ("50", "99"):
        result[f"p{pct}"] = to_ms(re.search(rf"\s{pct}(?:\.000)?%\s+(\S+)", out).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    result["errors"] = float(errors.group(1)) if errors else 0.0
    return result


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--users", type=int, default=1000)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("wrk is needed: apt-get install wrk (make bench does it)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        token = seed_users(data, args.users)
        basic = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
        for workers in args.workers:
            proc, url = start_server(data, workers)
            try:
                target = f"{url}/api/v2/users/?page_size=10"
                for name, header in (("Basic", basic), ("Bearer", f"Bearer {token}")):
                    r = wrk(target, f"Authorization: {header}", args.connections, args.seconds)
                    rows.append((f"GET /api/v2/users/ (10 of {args.users}) {name}", workers, r))
            finally:
                proc.terminate()
                proc.wait(timeout=20)
    print(f"\n{'benchmark':<48} {'workers':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for name, workers, r in rows:
        print(f"{name:<48} {workers:>7} {r['rps']:>9.0f} {r['p50']:>8.2f} {r['p99']:>8.2f} {r['errors']:>8.0f}")
    for workers in args.workers:
        pair = [r["rps"] for _, w, r in rows if w == workers]
        print(f"Basic / Bearer with {workers} worker(s): {pair[0] / pair[1]:.0%}")


if __name__ == "__main__":
    main()
