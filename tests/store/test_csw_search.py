"""The CSW search of the store against a plain reading of the same rows: AnyText through the
trigram index or row by row, subjects, boxes, negations and the listing rule, as each kind of
viewer sees them; and a query too large for SQLite is refused as such."""

from __future__ import annotations

import pytest

from catalogue_app.store import csw_search, resources
from catalogue_app.store.csw_search import AllOf, AnyOf, Box, Compare, Negated, RecordQuery
from tests.store import test_list_queries as lists
from tests.store.test_list_queries import _meets, viewers


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    """The seeded and edited database of the list query tests."""
    yield from lists.database.__wrapped__(tmp_path_factory)


def texts(conn, rid: int) -> list[str]:
    """What AnyText reads of a resource."""
    row = conn.execute("SELECT title, abstract, purpose, supplemental_information, category_id FROM resources"
                       " WHERE id = ?", (rid,)).fetchone()
    found = [v or "" for v in row[:4]]
    found += [r[0] for r in conn.execute("SELECT k.name FROM keywords k JOIN resource_keywords rk"
                                         " ON rk.keyword_id = k.id WHERE rk.resource_id = ?", (rid,))]
    found += [r[0] for r in conn.execute("SELECT g.name FROM regions g JOIN resource_regions rr"
                                         " ON rr.region_id = g.id WHERE rr.resource_id = ?", (rid,))]
    found += [r[0] for r in conn.execute("SELECT t.alt_label FROM thesaurus_keywords t JOIN resource_tkeywords rt"
                                         " ON rt.tkeyword_id = t.id WHERE rt.resource_id = ?", (rid,))]
    found += [r[0] for r in conn.execute("SELECT identifier FROM categories WHERE id = ?", (row[4],))]
    return found


def listed(conn, viewer) -> list[int]:
    """What the API lists for the viewer, of the types CSW offers (ids of the whole list)."""



    total, rows = resources.page(conn, viewer, resources.ResourceQuery(resource_types=csw_search.CSW_TYPES),
                                 100000, 0, columns="r.id")
    return sorted(r[0] for r in rows)


@pytest.mark.parametrize("who", ["anonymous", "user", "superuser"])
def test_every_record_is_what_the_api_lists(database, who):
    viewer = viewers(database)[who]
    total, rows = csw_search.search(database, viewer, RecordQuery(limit=100000))
    assert sorted(r["id"] for r in rows) == listed(database, viewer) and total == len(rows)


@pytest.mark.parametrize("term", ["river", "RIVER", "écol", "hydrology", "wa", "kiwi r", "zzzq"])
@pytest.mark.parametrize("who", ["anonymous", "user"])
def test_any_text_contains(database, who, term):
    viewer = viewers(database)[who]
    pool = listed(database, viewer)
    ascii_fold = term.isascii()
    want = {rid for rid in pool if any((term.lower() in t.lower()) if ascii_fold else (term.casefold() in t.casefold())
                                       for t in texts(database, rid))}
    pattern = "%" + term.replace("%", "\\%").replace("_", "\\_") + "%"
    total, rows = csw_search.search(database, viewer, RecordQuery(Compare("anytext", "like", pattern), limit=100000))
    assert {r["id"] for r in rows} == want and total == len(want)
    # the same test written row by row (a pattern that the text index cannot serve)
    wider = "%" + term[:1] + "%" + term[1:] + "%"
    total, rows = csw_search.search(database, viewer, RecordQuery(AllOf((
        Compare("anytext", "like", pattern), Compare("anytext", "like", wider))), limit=100000))
    assert {r["id"] for r in rows} == want
    total, rows = csw_search.search(database, viewer, RecordQuery(Negated(Compare("anytext", "like", pattern)),
                                                                  limit=100000))
    assert {r["id"] for r in rows} == set(pool) - want


def test_boxes_and_subjects(database):
    viewer = viewers(database)["user"]
    pool = listed(database, viewer)
    rows = {r["id"]: r for r in database.execute(
        f"SELECT * FROM resources WHERE id IN ({','.join(map(str, pool))})")}
    for box in ((-10, 40, 30, 60), (170, -5, 180, 5), (-180, -5, -175, 5)):
        want = {rid for rid in pool if _meets(rows[rid], box)}
        _, found = csw_search.search(database, viewer, RecordQuery(Box(*box), limit=100000))
        assert {r["id"] for r in found} == want
    subjects = {rid: [t for t in texts(database, rid)[4:]] for rid in pool}
    hydro = {rid for rid, words in subjects.items() if "hydrology" in [w.lower() for w in words]}
    _, found = csw_search.search(database, viewer, RecordQuery(AnyOf((
        Compare("subject", "eq", "HYDROLOGY", ignore_case=True), Compare("subject", "eq", "nothing"))), limit=100000))
    assert {r["id"] for r in found} == hydro and hydro
    name = next(w for words in subjects.values() for w in words if w.lower() == "hydrology")
    _, found = csw_search.search(database, viewer, RecordQuery(Compare("subject", "eq", name), limit=100000))
    assert {r["id"] for r in found} == {rid for rid, words in subjects.items() if name in words}


def test_a_query_too_large_for_sqlite(database):
    node = Compare("title", "eq", "x")
    for _ in range(700):
        node = Negated(node)
    with pytest.raises(csw_search.TooComplex):
        csw_search.search(database, viewers(database)["anonymous"], RecordQuery(node))

