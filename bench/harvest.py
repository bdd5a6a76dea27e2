"""The harvesting benchmark: one catalogue harvests another over HTTP with the GeoNode harvester.

The remote holds ``--harvest-records`` made-up resources (``catalogue seed``: datasets, documents,
maps and apps; the harvester takes the datasets and documents, anonymously). The local catalogue,
a second server process, makes the list of what the remote offers (a refresh), harvests every
record (datasets shown through the remote's WMS, documents pointing at the remote's files), then
harvests again with nothing changed on the remote (each record is listed again and left as it
is). Each step is timed from the API request that asks for it to the harvester's return to
'ready'; the rate is the records of the step per second.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.__main__ import PASSWORD, start_server

GEONODE = "geonode.harvesting.harvesters.geonodeharvester.GeonodeUnifiedHarvesterWorker"


def _ask(client: httpx.Client, hid: int, status: str) -> float:
    started = time.perf_counter()
    r = client.patch(f"/api/v2/harvesters/{hid}/", json={"status": status})
    r.raise_for_status()
    while client.get(f"/api/v2/harvesters/{hid}/").json()["harvester"]["status"] != "ready":
        time.sleep(0.05)
    return time.perf_counter() - started


def _newest_session(client: httpx.Client) -> dict:
    return client.get("/api/v2/harvesting-sessions/", params={"page_size": 1}).json()[
        "asynchronous_harvesting_sessions"][0]


def harvest_benchmarks(args) -> None:
    env = {**os.environ, "CATALOGUE_ADMIN_PASSWORD": PASSWORD, "CATALOGUE_HARVEST_TICK": "0.2"}
    os.environ.update({k: env[k] for k in ("CATALOGUE_ADMIN_PASSWORD", "CATALOGUE_HARVEST_TICK")})
    with tempfile.TemporaryDirectory() as tmp:
        remote_dir, local_dir = Path(tmp) / "remote", Path(tmp) / "local"
        subprocess.run([sys.executable, "-m", "catalogue_app", "seed", "--data-dir", str(remote_dir),
                        "--resources", str(args.harvest_records)], check=True, capture_output=True, env=env)
        remote, remote_url = start_server(remote_dir, 1)
        local, local_url = start_server(local_dir, 1)
        rows = []
        try:
            with httpx.Client(base_url=local_url, auth=("admin", PASSWORD), timeout=60) as client:
                r = client.post("/api/v2/harvesters/", json={
                    "name": "bench", "remote_url": remote_url, "harvester_type": GEONODE,
                    "scheduling_enabled": False, "harvest_new_resources_by_default": True})
                r.raise_for_status()
                hid = r.json()["harvester"]["id"]
                took = _ask(client, hid, "updating-harvestable-resources")
                offered = _newest_session(client)["total_records_to_process"]
                rows.append(("refresh: list what the remote offers", offered, took, 0))
                for name in ("harvest: every record made here", "harvest again, nothing changed remotely"):
                    took = _ask(client, hid, "harvesting-resources")
                    session = _newest_session(client)
                    rows.append((name, session["records_done"], took, session["records_failed"]))
        finally:
            for proc in (local, remote):
                proc.terminate()
                proc.wait(timeout=30)
    print(f"\n{'harvesting (GeoNode API v2, two processes)':<48} {'records':>8} {'seconds':>8} {'records/s':>10} "
          f"{'failed':>7}")
    for name, records, seconds, failed in rows:
        print(f"{name:<48} {records:>8} {seconds:>8.2f} {records / max(seconds, 1e-9):>10.1f} {failed:>7}")
