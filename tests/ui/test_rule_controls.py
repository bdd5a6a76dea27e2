"""The web UI offers a control exactly when the API allows what it does: for every row of the rule
table (tests/rules/table.py) and every resource type, the resource's page and its edit page are
read once, in one browser context per row, and each control they show (or not) is one cell.

The API side is the table itself: tests/rules/test_rule_table.py proves that the API does what
the table says. Cells where today's UI (or today's API, which the UI follows through `perms`)
differs from the table are in KNOWN, each marked xfail(strict) with the reason.
"""

from __future__ import annotations

import json

import pytest

from tests.rules import table
from tests.rules.world import World, build
from tests.ui.conftest import Browsing

# control -> (the page, the table's actions; shown when any of them is allowed, types it is on)
CONTROLS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "favorite": ("detail", ("fav",), table.TYPES),
    "compose": ("detail", ("layers",), ("map",)),
    "edit link": ("detail", ("meta", "thumb", "sldup", "pread", "del"), table.TYPES),
    "download": ("detail", ("dl",), ("dataset", "document")),
    "feature table": ("detail", ("wfs",), ("dataset",)),
    "feature editing": ("detail", ("data",), ("dataset",)),
    "metadata form": ("edit", ("meta",), table.TYPES),
    "thumbnail form": ("edit", ("thumb",), table.TYPES),
    "style form": ("edit", ("sldup",), ("dataset",)),
    "sharing": ("edit", ("pread",), table.TYPES),
    "delete": ("edit", ("del",), table.TYPES),
}

# What each page shows, read in the browser once the page has settled.
READ_DETAIL = """() => {
  const main = document.getElementById('main');
  return {
    'favorite': Boolean(main.querySelector('.detail-head .actions button[aria-pressed]')),
    'compose': Boolean(main.querySelector('.detail-head a.compose')),
    'edit link': Boolean(main.querySelector('.detail-head a[href$="/edit"]')),
    'download': Boolean(main.querySelector('.downloads a.button')),
    'feature table': Boolean(main.querySelector('.attributes table')),
    'feature editing': Boolean(main.querySelector('.attributes button.cell-value')),
  };
}"""
READ_EDIT = """() => {
  const main = document.getElementById('main');
  return {
    'metadata form': Boolean(main.querySelector("form[aria-label='Metadata']")),
    'thumbnail form': Boolean(main.querySelector("form[aria-label='Thumbnail']")),
    'style form': Boolean(main.querySelector("form[aria-label='Style']")),
    'sharing': Boolean(main.querySelector('#sharing form')),
    'delete': Boolean(main.querySelector('.danger-zone button')),
  };
}"""
# settled: the page of this resource (or its refusal) is shown, and what it loads after it
# (features, sharing) is in
SETTLED = """([kind, pk, edit]) => {
  const main = document.getElementById('main');
  const titles = [...main.querySelectorAll('h1')].map((h) => h.textContent);
  const shown = edit
    ? main.querySelector(`section.page.edit a[href="#/${kind}/${pk}"]`) || titles.includes('Cannot edit')
    : main.querySelector(`article.detail[data-pk="${pk}"]`) || titles.includes('Not found') || titles.includes('Cannot open this resource');
  if (!shown) return false;
  return ![...main.querySelectorAll('.attributes, #sharing')].some((s) => /Loading/.test(s.textContent));
}"""

# (row, type, control) -> why today's page differs from the table
KNOWN: dict[tuple[str, str, str], str] = {}


def known(reason: str, kinds: tuple[str, ...], rows: tuple[str, ...], controls: tuple[str, ...]) -> None:
    for kind in kinds:
        for row in rows:
            for control in controls:
                if kind in CONTROLS[control][2] and row in table.rows_of(kind):
                    KNOWN[(row, kind, control)] = reason


known("the features are edited in the attribute table, shown to those who may read them (download); this row may "
      "change the data without reading them, which the web UI does not offer", ("dataset",), ("view+data",),
      ("feature editing",))




def controls_of(row: str, kind: str) -> list[str]:
    """The controls read for the row on the type (signed-out visitors get no edit page)."""
    return [name for name, (page, _, kinds) in CONTROLS.items()
            if kind in kinds and not (row == "anonymous" and page == "edit")]


def cases() -> list:
    out = []
    for row in table.ROWS:
        for kind in table.TYPES:
            if row not in table.rows_of(kind):
                continue
            for control in controls_of(row, kind):
                reason = KNOWN.get((row, kind, control))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                out.append(pytest.param(row, kind, control, id=f"{row}-{kind}-{control}".replace(" ", "_"),
                                        marks=marks))
    return out


@pytest.fixture(scope="module")
def world(ui_server) -> World:
    w = build(ui_server.url, str(ui_server.data_dir / "catalogue.sqlite3"))
    yield w
    w.close()
    w.admin.close()


class Pages:
    """One browser context per row, opened when the row's first cell comes (the cells go row by
    row) and closed when the next row starts; each page read once."""

    def __init__(self, browser, server, world: World):
        self.browser, self.server, self.world = browser, server, world
        self.row: str | None = None
        self.context = None
        self.tab: Browsing | None = None
        self.readings: dict[tuple[str, str], dict[str, bool] | Exception] = {}

    def reading(self, row: str, kind: str) -> dict[str, bool]:
        """What the row's pages of the type show (a page that failed fails its other cells at once)."""
        if (row, kind) not in self.readings:
            try:
                self.open(row)
                self.readings[(row, kind)] = self.read(row, kind)
            except Exception as exc:
                self.readings[(row, kind)] = exc
                self.close()
        found = self.readings[(row, kind)]
        if isinstance(found, Exception):
            raise AssertionError(f"the pages of the {kind} could not be read as {row}: {found}")
        return found

    def open(self, row: str) -> None:
        if self.row == row:
            return
        self.close()
        self.context = self.browser.new_context(viewport={"width": 1280, "height": 800})
        page = self.context.new_page()
        page.set_default_timeout(15_000)
        self.tab, self.row = Browsing(page, self.server, f"rules-{row.replace(' ', '_').replace('+', '_')}"), row
        if row != "anonymous":  # signed in as the page signs in (its session cookie), without the form
            user = self.world.users[row]
            r = self.context.request.post(f"{self.server.url}/account/login/",
                                          data={"username": user["username"], "password": user["password"]})
            assert r.ok, r.text()

    def show(self, kind: str, pk: int, edit: bool) -> None:
        self.tab.page.evaluate("document.getElementById('main')?.replaceChildren()")
        self.tab.go(f"/{kind}/{pk}{'/edit' if edit else ''}")
        self.tab.until(f"({SETTLED})({json.dumps([kind, pk, edit])})")

    def read(self, row: str, kind: str) -> dict[str, bool]:
        pk = int(self.world.resources[kind]["pk"])
        path = self.world.resources[kind]["resource_type"]  # a geoapp's page is under its own type
        if not table.TABLES[kind][(row, "view")]:  # the page asks for it and is told it is not there
            self.tab.allow(rf"status of (401|403|404) .*/api/v2/\w+/{pk}\b")
        self.show(path, pk, edit=False)
        found = self.tab.page.evaluate(READ_DETAIL)
        if kind == "dataset":  # the richest page, looked at for each row (a screenshot takes time)
            self.tab.shot(kind)
        if row != "anonymous":
            self.show(path, pk, edit=True)
            found.update(self.tab.page.evaluate(READ_EDIT))
            if kind == "dataset":
                self.tab.shot(f"{kind}-edit")
        errors = self.tab.unexpected_errors()
        assert not errors, f"errors in the browser console: {errors}"
        return found

    def close(self) -> None:
        if self.context is not None:
            self.context.close()
            self.context = self.tab = self.row = None


@pytest.fixture(scope="module")
def pages(browser, ui_server, world):
    p = Pages(browser, ui_server, world)
    yield p
    p.close()


@pytest.mark.parametrize("row,kind,control", cases())
def test_control_shown_exactly_when_allowed(pages, row, kind, control):
    shown = pages.reading(row, kind)[control]
    actions = [a for a in CONTROLS[control][1] if table.TABLES[kind][(row, a)] is not None]
    allowed = [table.RESOURCE_ACTIONS[a] for a in actions if table.TABLES[kind][(row, a)]]
    assert shown == bool(allowed), (
        f"{row} on the {kind}: {control} is {'shown' if shown else 'not shown'}, while the API "
        + (f"allows {' and '.join(allowed)}" if allowed else
           f"refuses {' and '.join(table.RESOURCE_ACTIONS[a] for a in actions)}"))
