"""Reads and writes together for 60 seconds (``--seconds``) on one server: three wrk load
generators at once (C, so that the client does not take the CPU the server needs): 16
connections asking pages of ten, 8 asking details, and 8 writing: 3 editing titles, 3 changing
permissions, 2 setting and removing favorites (a Lua script; each writing connection has its own
share of the resources). Prints each one's rate and
latency, the non-2xx answers, and how often the server log says "database is locked" (it must
never)."""

from __future__ import annotations

import base64
import re
import subprocess
import tempfile
from pathlib import Path

import httpx

WRITES = """
local ids = {%(ids)s}
local users = {%(users)s}
local auth = "%(auth)s"
local only = "%(kind)s"
local threads = %(threads)s
local made = 0
function setup(thread)
  made = made + 1
  thread:set("slot", made)
end
-- each connection has a thread of its own and walks its own share of the ids, so that two
-- connections never change the same resource at once (a favorite set twice, a permission change
-- while the previous one is still being applied: refusals that the server rightly gives)
local n = 0
local at = 0
local favorite = false
local function next_id()
  at = at + 1
  local i = (slot - 1) + threads * (at - 1)
  if i >= #ids then
    at = 1
    i = slot - 1
  end
  return ids[i + 1]
end
local pk = nil
request = function()
  n = n + 1
  local headers = {["Authorization"] = auth, ["Content-Type"] = "application/json"}
  if only == "edit" then
    return wrk.format("PATCH", "/api/v2/resources/" .. next_id(), headers, '{"title": "Edited ' .. n .. '"}')
  elseif only == "permissions" then
    local user = users[math.random(#users)]
    return wrk.format("PUT", "/api/v2/resources/" .. next_id() .. "/permissions", headers,
      '{"users": [{"id": ' .. user .. ', "permissions": "view"}]}')
  end
  pk = pk or next_id()
  return wrk.format(favorite and "DELETE" or "POST", "/api/v2/resources/" .. pk .. "/favorite", headers)
end
-- a favorite is set, then removed, then the next resource's is set: the state moves on an
-- answer, not on a request (wrk may build a request again that it has not sent)
if only == "favorite" then
  response = function(status, headers, body)
    if favorite then
      pk = nil
    end
    favorite = not favorite
  end
end
"""


def mixed_benchmarks(args) -> list[tuple[str, int, dict[str, float]]]:
    from bench.__main__ import PASSWORD, seed_resources, seed_users, start_server, to_ms

    seconds = max(args.seconds, 5)
    auth = "Basic " + base64.b64encode(f"admin:{PASSWORD}".encode()).decode()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        seed_users(data, 100)
        seed_resources(data, args.resources)
        log = Path(tmp) / "server.log"
        proc, url = start_server(data, args.resource_workers, log)
        try:
            with httpx.Client(base_url=url, headers={"Authorization": auth}, timeout=60) as c:
                ids = [r["pk"] for r in c.get("/api/v2/resources/", params={
                    "page_size": 1000, "exclude[]": "*", "include[]": "pk",
                    "filter{owner.username}": "admin"}).json()["resources"]]
                users = [str(u["pk"]) for u in c.get("/api/v2/users/", params={"page_size": 50}).json()["users"]]
                detail = ids[len(ids) // 2]
            header = f"Authorization: {auth}"
            runs = {
                "read: page of 10 (16 connections)": ["-c16", "-H", header, f"{url}/api/v2/resources/?page_size=10"],
                "read: detail (8 connections)": ["-c8", "-H", header, f"{url}/api/v2/resources/{detail}"],
            }
            for kind, connections in (("edit", 3), ("permissions", 3), ("favorite", 2)):
                script = Path(tmp) / f"{kind}.lua"
                script.write_text(WRITES % {"ids": ",".join(ids), "users": ",".join(users), "auth": auth, "kind": kind,
                                            "threads": connections})
                runs[f"write: {kind} ({connections} connections)"] = [f"-t{connections}", f"-c{connections}", "-s",
                                                                      str(script), url]
            started = {name: subprocess.Popen(["wrk", *([] if argv[0].startswith("-t") else ["-t1"]), "--latency",
                                               f"-d{seconds}s", *argv],
                                              stdout=subprocess.PIPE, text=True) for name, argv in runs.items()}
            outputs = {name: p.communicate()[0] for name, p in started.items()}
        finally:
            proc.terminate()
            proc.wait(timeout=20)
        locked = log.read_text(errors="replace").count("database is locked")
    rows = []
    for name, out in outputs.items():
        errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
        rows.append((f"mixed, {name} [{args.resources:,}]", args.resource_workers, {
            "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
            "p50": to_ms(re.search(r"\s50(?:\.000)?%\s+(\S+)", out).group(1)),
            "p99": to_ms(re.search(r"\s99(?:\.000)?%\s+(\S+)", out).group(1)),
            "errors": float(errors.group(1)) if errors else 0.0}))
    print(f"\n{'benchmark':<70} {'workers':>7} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'non-2xx':>8}")
    for name, workers, r in rows:
        print(f"{name:<70} {workers:>7} {r['rps']:>9.0f} {r['p50']:>8.2f} {r['p99']:>8.2f} {r['errors']:>8.0f}")
    print(f'"database is locked" in the server log: {locked}')
    return rows
