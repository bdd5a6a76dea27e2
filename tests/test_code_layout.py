"""The layering rules of docs/ARCHITECTURE.md, checked on the source: the API layer holds no SQL and
imports no sqlite3, jobs ask services or the store, only config.py reads the environment, no
``type: ignore``, and no two modules import each other (directly or round a longer circle)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "catalogue_app"
SQL = re.compile(r"\b(SELECT\s+[\w*(]|INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX))")


def modules(folder: str = "") -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def name_of(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def strings(tree: ast.AST) -> list[str]:
    return [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants (they may talk about SQL)."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def sql_in(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    skip = docstrings(tree)
    return [n.value[:60] for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and id(n) not in skip and SQL.search(n.value)]


@pytest.mark.parametrize("path", modules("api"), ids=lambda p: name_of(p))
def test_api_holds_no_sql(path):
    assert not sql_in(path)
    assert "import sqlite3" not in path.read_text()


@pytest.mark.parametrize("path", modules("jobs") + modules("services"), ids=lambda p: name_of(p))
def test_jobs_and_services_hold_no_sql(path):
    assert not sql_in(path)


def test_only_config_reads_the_environment():
    readers = []
    for path in modules():
        if path.name == "config.py":
            continue
        text = path.read_text()
        if re.search(r"environ\.get\(|getenv\(|environ\[[^]]+\](?!\s*=)", text):
            readers.append(name_of(path))
    assert readers == []


def test_no_type_ignore():
    assert [name_of(p) for p in modules() if "type: ignore" in p.read_text()] == []


def top_level_imports(path: Path) -> set[str]:
    """The catalogue_app modules ``path`` imports when it is loaded (not inside functions)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.dump(node.test):
            continue
        for sub in ast.walk(node) if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else []:
            if isinstance(sub, ast.Import):
                found |= {a.name for a in sub.names if a.name.startswith("catalogue_app")}
            elif isinstance(sub, ast.ImportFrom) and sub.module and sub.module.startswith("catalogue_app"):
                found.add(sub.module)
                found |= {f"{sub.module}.{a.name}" for a in sub.names}
    return found


def test_no_import_cycles():
    names = {name_of(p): p for p in modules()}
    graph = {name: {m for m in top_level_imports(path) if m in names and m != name} for name, path in names.items()}
    # a package's __init__ is loaded with each of its modules: leave those edges out
    graph = {n: {m for m in deps if not n.startswith(m + ".")} for n, deps in graph.items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(trail[trail.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_resources_are_read_whole_below_the_handlers():
    """A page of resources and what completes it (related rows, held permissions, favorites,
    links, remote layers, origins) is read in reads/, never in api/: handlers get finished
    records (catalogue_app/reads/__init__.py)."""
    completing = ("resources.page(", "resources.related(", "held_on_page(", "favorites_on_page(", "rows_by_ids(",
                  "links_of(", "of_page(")
    assert [name_of(p) for p in modules("api") if any(c in p.read_text() for c in completing)] == []


# What api/ may take from the store: the database owner, the shapes of rows and query trees, and
# the definitions of the query language (the fields a list filters on), never a read or a write.
STORE_FOR_THE_API = {"catalogue_app.store": {"Row", "Connection", "csw_search"}, "catalogue_app.store.db": {"Database", "WriteConflict"},
                     "catalogue_app.store.filters": None, "catalogue_app.store.csw_search": None,
                     "catalogue_app.store.resources": {"ResourceQuery", "GEOAPP_TYPES"}}
QUERY_LANGUAGE = {"catalogue_app.api.resources.params": {"origins", "resources"}}  # the list fields and their SQL names


def test_handlers_read_and_write_through_reads_and_services():
    """Every read a handler makes is a function of reads/ (finished records) and every write a
    function of services/ (checks, then the store): api/ imports from the store only what
    STORE_FOR_THE_API names."""
    found = []
    for path in modules("api"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found += [(name_of(path), a.name) for a in node.names if a.name.startswith("catalogue_app.store")]
            if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("catalogue_app.store")):
                continue
            allowed = STORE_FOR_THE_API.get(node.module, set())
            if node.module == "catalogue_app.store":
                allowed = allowed | QUERY_LANGUAGE.get(name_of(path), set())
            if allowed is not None:
                found += [(name_of(path), f"{node.module}.{a.name}") for a in node.names if a.name not in allowed]
    assert found == []


def test_one_way_to_read():
    """From async code a read is ``await db.read(fn, ...)``, and from code on a thread of its own
    ``db.read_sync(fn, ...)`` (store/db.py): the database owner offers no other way, and no
    module reads through a helper of its own or a bare reader connection."""
    from catalogue_app.store.db import Database

    assert [n for n in ("execute", "offload", "reader") if hasattr(Database, n)] == []
    other = re.compile(r"\breading\(|\.db\.execute\(|\.offload\(|\.reader\(\)")
    assert [name_of(p) for p in modules() if other.search(p.read_text())] == []


def test_no_property_of_a_context_reads():
    """A Context's attributes do no I/O: the viewer is read before the handler runs."""
    tree = ast.parse((PACKAGE / "api" / "context.py").read_text())
    context = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Context")
    for node in ast.walk(context):
        if isinstance(node, ast.Attribute) and node.attr in ("read", "read_sync", "write", "write_sync"):
            raise AssertionError(f"Context reads or writes in {ast.unparse(node)}")
