"""No route that writes a resource's fields can forget its version: every call of a function that
writes fields, outside the store, is made inside ``history.recorded`` (services/history.py), or is
named here with the reason it is not a change of an existing resource's fields. A new route that
writes fields fails this test until it records its versions (or says here why it does not)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent.parent / "catalogue_app"

# The store's writers of a resource's fields (and the services that call them for a whole body).
WRITERS = {
    "resource_writes": {"apply_changes", "update", "set_keywords", "set_tkeywords", "set_contacts", "set_regions",
                        "set_regions_from_extent"},
    "store_writes": {"apply_changes", "update", "set_keywords", "set_tkeywords", "set_contacts", "set_regions",
                     "set_regions_from_extent"},
    "resource_changes": {"apply"},
    "metadata": {"apply_iso"},
    "users": {"transfer_resources", "delete"},
    "groups": {"delete"},
    "remote_layers": {"update"},
    "geoapps": {"save_name"},
    "datasets": {"change_attributes", "replace_data", "replace_attributes", "update_attribute"},
    "field_history": {"restore"},
}

# Functions that call a writer outside ``history.recorded``, and why that is right.
NOT_A_CHANGE = {
    "services/resource_changes.py:apply": "writes a checked body: its callers record",
    "services/resources.py:create": "a new resource (its creation is not a version)",
    "services/documents.py:create": "a new document",
    "services/datasets.py:change_attributes": "called by services/resources.py inside history.recorded",
    "services/history.py:revert_metadata": "records its own revert version",
    "jobs/resources.py:create_resource": "a new resource",
    "jobs/ingest.py:commit": "a new document",
    "jobs/imports.py:_create": "a new dataset",
    "jobs/imports.py:_replace": "called by ImportDataset.commit inside history.recorded",
    "harvesting/storing.py:_document": "a new harvested document",
    "harvesting/storing.py:_remote_layer": "a new remote layer (an update of one is recorded)",
}


def _name(node: ast.AST) -> tuple[str, str] | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        return node.func.value.id, node.func.attr
    return None


def _recording(node: ast.With) -> bool:
    return any("recorded(" in ast.unparse(item.context_expr) for item in node.items)


def unrecorded_writes() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("store/"):
            continue
        tree = ast.parse(path.read_text())

        def visit(node: ast.AST, function: str, recorded: bool) -> None:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                function = node.name
            if isinstance(node, ast.With) and _recording(node):
                recorded = True
            named = _name(node)
            if named and named[1] in WRITERS.get(named[0], ()) and not recorded \
                    and f"{rel}:{function}" not in NOT_A_CHANGE:
                found.append(f"{rel}:{function} calls {named[0]}.{named[1]}")
            for child in ast.iter_child_nodes(node):
                visit(child, function, recorded)

        visit(tree, "", False)
    return found


def test_every_write_of_fields_records_its_version():
    assert unrecorded_writes() == []


def test_the_reasons_name_functions_that_exist():
    for key in NOT_A_CHANGE:
        rel, function = key.split(":")
        assert f"def {function}(" in (PACKAGE / rel).read_text(), key
