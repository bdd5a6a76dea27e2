"""Browser tests: Playwright driving the system's Chromium (Debian's package, installed by
`make test` where it is missing) against a real server with its own data folder.

Every page a test opens is screenshotted into test-output/ui/ (not committed), and a test fails
when the browser console shows an error it did not expect."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from tests.conftest import ADMIN_PASSWORD, USER_PASSWORD, Server, make_user

CHROMIUM = os.environ.get("CATALOGUE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
OUTPUT = Path(os.environ.get("CATALOGUE_TEST_OUTPUT", Path(__file__).resolve().parents[2] / "test-output")) / "ui"
DATA = Path(__file__).resolve().parents[1] / "data"
CHECKOUT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def ui_env(tmp_path_factory) -> dict[str, str]:
    """The environment that makes a server serve this checkout's ui/ folder. An editable install
    made from another checkout (a git worktree sharing its virtualenv) maps the catalogue_ui
    package to that checkout's ui/, and the servers would show that one: a folder put first on
    PYTHONPATH, holding catalogue_ui as a link to ours, wins over the install's mapping."""
    import importlib.util

    spec = importlib.util.find_spec("catalogue_ui")
    if spec is not None and spec.origin and Path(spec.origin).resolve().parent == CHECKOUT / "ui":
        return {}
    shim = tmp_path_factory.mktemp("ui-package")
    (shim / "catalogue_ui").symlink_to(CHECKOUT / "ui", target_is_directory=True)
    return {"PYTHONPATH": os.pathsep.join(filter(None, [str(shim), os.environ.get("PYTHONPATH")]))}


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        try:
            chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        except PlaywrightError as exc:  # the tests need the browser: fail, never skip
            pytest.fail(f"Chromium could not start from {CHROMIUM} ({exc}). `make test` installs it "
                        "(apt-get install chromium); elsewhere set CATALOGUE_CHROMIUM to a Chromium binary.")
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory, ui_env):
    srv = Server(tmp_path_factory.mktemp("ui") / "catalogue", env=ui_env)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def ui_admin(ui_server):
    with ui_server.client(auth=("admin", ADMIN_PASSWORD)) as c:
        yield c


# Where the publishing API is not (yet) in this catalogue, a superuser's pages ask for it once and
# get a 404, which the browser logs: expected, and the pages show nothing of publishing then.
PUBLISHING_PROBE = re.compile(r"status of 404 .*/api/v2/remotes/")


def console_text(message) -> str:
    """A console message with the address it is about (a failed request's, for instance)."""
    url = (message.location or {}).get("url") or ""
    return f"{message.text} ({url})" if url else message.text


class Browsing:
    """One browser tab with what a test needs: sign in and out, screenshots, console errors."""

    def __init__(self, page, server: Server, name: str):
        self.page, self.server, self.name = page, server, name
        self.errors: list[str] = []
        self.allowed: list[re.Pattern] = [PUBLISHING_PROBE]
        page.on("console", lambda m: self.errors.append(console_text(m)) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"uncaught: {e}"))

    def go(self, hash_path: str = "/", wait: str | None = None):
        if wait and "data-loaded" in wait and self.page.url.startswith(self.server.url):
            # The marker of the page shown now goes first: a change of the address's fragment
            # alone is handled after goto returns, and the old marker would end the wait at once.
            self.page.evaluate("document.querySelectorAll('[data-loaded]').forEach((e) => delete e.dataset.loaded)")
        self.page.goto(f"{self.server.url}/#{hash_path}")
        if wait:
            self.page.wait_for_selector(wait)
        return self.page

    def until(self, script: str, timeout: float = 15) -> object:
        """Polls a JavaScript expression until it is truthy (the page's CSP forbids the eval
        that Playwright's wait_for_function needs)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.page.evaluate(script)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"still false after {timeout} s: {script}")
            self.page.wait_for_timeout(50)

    def shot(self, label: str) -> Path:
        OUTPUT.mkdir(parents=True, exist_ok=True)
        path = OUTPUT / f"{self.name}-{label}.png"
        self.page.evaluate("window.scrollTo(0, 0)")  # the sticky header then stays at the top
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def allow(self, pattern: str) -> None:
        """An error the test expects (a 404 the page is about)."""
        self.allowed.append(re.compile(pattern))

    def sign_in(self, username: str, password: str) -> None:
        self.go("/login", wait="form[aria-label='Sign in']")
        self.page.fill("input[name=username]", username)
        self.page.fill("input[name=password]", password)
        self.page.click("button[type=submit]")
        self.page.wait_for_selector(f"#nav .who:text-is('{username}')")

    def sign_out(self) -> None:
        self.page.click("#nav button:text('Sign out')")
        self.page.wait_for_selector("#nav a:text('Sign in')")

    def unexpected_errors(self) -> list[str]:
        return [e for e in self.errors if not any(p.search(e) for p in self.allowed)]


@pytest.fixture
def tab(browser, ui_server, request):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(15_000)
    browsing = Browsing(page, ui_server, request.node.name)
    yield browsing
    errors = browsing.unexpected_errors()
    context.close()
    assert not errors, f"errors in the browser console: {errors}"


@pytest.fixture(scope="module")
def alice(ui_admin):
    return make_user(ui_admin, username="alice", first_name="Alice", last_name="Field")



__all__ = ["ADMIN_PASSWORD", "DATA", "USER_PASSWORD"]
