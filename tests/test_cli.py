"""The ``catalogue`` command: first start, account commands, tokens and clean shutdown."""

import os
import re
import signal
import subprocess
import sys

import httpx

from tests.conftest import Server


def run_cli(*args: str, data_dir, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "CATALOGUE_ADMIN_PASSWORD"}
    return subprocess.run([sys.executable, "-m", "catalogue_app", *args, "--data-dir", str(data_dir)],
                          input=stdin, capture_output=True, text=True, env=env, timeout=60)


def test_first_start_reports_url_and_generated_admin(tmp_path):
    env = {"CATALOGUE_ADMIN_PASSWORD": ""}
    srv = Server(tmp_path / "fresh", env=env)
    try:
        out = srv.output()
        assert f"http://127.0.0.1:{srv.port}/" in out
        match = re.search(r"Admin account created: admin / (\S+)", out)
        assert match, out
        with srv.client(auth=("admin", match.group(1))) as c:
            assert c.get("/api/v2/users/").status_code == 200
        assert (tmp_path / "fresh" / "catalogue.sqlite3").exists()
    finally:
        srv.stop()
    again = Server(tmp_path / "fresh", env=env)  # the second start keeps the account
    try:
        assert "Admin account created" not in again.output()
        with again.client(auth=("admin", match.group(1))) as c:
            assert c.get("/api/v2/users/").status_code == 200
    finally:
        again.stop()


def test_account_commands_and_token(tmp_path):
    data = tmp_path / "cli"
    r = run_cli("createsuperuser", "--username", "root2", "--email", "r@example.org", "--password", "root2-secret",
                data_dir=data)
    assert r.returncode == 0, r.stderr
    assert run_cli("createsuperuser", "--username", "root2", "--password", "root2-secret", data_dir=data).returncode != 0
    assert run_cli("createsuperuser", "--username", "weak", "--password", "123", data_dir=data).returncode != 0
    r = run_cli("changepassword", "root2", data_dir=data, stdin="changed-secret-9\n")
    assert r.returncode == 0, r.stderr
    assert run_cli("changepassword", "ghost", data_dir=data, stdin="changed-secret-9\n").returncode != 0
    r = run_cli("token", "root2", data_dir=data)
    assert r.returncode == 0, r.stderr
    token = r.stdout.strip()
    srv = Server(data)
    try:
        with srv.client(auth=("root2", "changed-secret-9")) as c:
            assert c.get("/api/v2/users/").status_code == 200
        with srv.client(auth=("root2", "root2-secret")) as c:
            assert c.get("/api/v2/users/").status_code == 401
        with srv.client(token=token) as c:
            me = c.get("/api/v2/users/", params={"filter{username}": "root2"}).json()["users"][0]
            assert me["is_superuser"] is True
    finally:
        srv.stop()


def test_clean_shutdown_on_sigterm_and_sigint(tmp_path):
    for sig in (signal.SIGTERM, signal.SIGINT):
        srv = Server(tmp_path / f"stop{int(sig)}")
        srv.proc.send_signal(sig)
        assert srv.proc.wait(timeout=20) == 0, srv.output()
        try:
            httpx.get(f"{srv.url}/api/v2/", timeout=1)
            raise AssertionError("still answering")
        except httpx.HTTPError:
            pass


def test_version_and_help():
    out = subprocess.run([sys.executable, "-m", "catalogue_app", "--version"], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and re.fullmatch(r"catalogue \d+\.\d+\.\d+\s*", out.stdout)


def test_a_taken_port_is_refused_and_the_default_one_moves_on(tmp_path):
    import socket

    from catalogue_app.cli import _free_port

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert _free_port("127.0.0.1", port) != port
        out = run_cli("serve", "--port", str(port), data_dir=tmp_path / "d")
    assert out.returncode != 0 and f"Port {port} on 127.0.0.1 is taken" in out.stderr
