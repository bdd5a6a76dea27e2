"""Resource lists against a plain reading of the same rows: every plan the store may choose
(candidates counted in one pass, a walk in the default order, candidates sorted by the narrow
index, the anonymous keyword table, the word or the trigram text index) must give the same
total and the same page.

A real SQLite file, seeded by ``catalogue seed``'s code and then edited through the store, so
that the triggers keeping the indexes in step are exercised too.
"""

from __future__ import annotations

import random
import sqlite3

import pytest

from catalogue_app.api.resources.params import resource_query
from catalogue_app.passwords import hash_password
from catalogue_app.store import db, migrations, resource_writes, resources, users
from catalogue_app.seeding.resources import seed_resources
from tests.store.test_listed_extents import assert_in_step, listed_entries

EDITED = ["Riverside walk 2019", "KIWI orchards of Ålesund", "Land-use change, river2 gauge", "ØRSTED wind farm",
          "Kiwi river survey"]


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    path = tmp_path_factory.mktemp("lists") / "catalogue.sqlite3"
    db.migrate(path)
    with db.transaction(path) as conn:
        for i in range(6):
            users.create(conn, {"username": f"u{i}", "email": f"u{i}@example.org", "password": hash_password("pw-123456")})
        seed_resources(conn, 3000, seed=3, public_share=0.6)
        rng = random.Random(5)
        ids = [r[0] for r in conn.execute("SELECT id FROM resources")]
        for rid in rng.sample(ids, 200):  # public becomes private and the reverse
            if rng.random() < 0.5:
                resources.revoke(conn, rid, group_id=resources.ANONYMOUS_GROUP_ID)
            else:
                resources.grant(conn, rid, ["view_resourcebase"], group_id=resources.ANONYMOUS_GROUP_ID)
        for rid in rng.sample(ids, 60):
            resource_writes.update(conn, rid, {"advertised": 0})
        for rid in rng.sample(ids, 40):
            conn.execute("UPDATE resources SET dirty = 1 WHERE id = ?", (rid,))
        for rid in rng.sample(ids, 30):
            conn.execute("UPDATE resources SET dirty = 0 WHERE id = ?", (rid,))
        for rid in rng.sample(ids, 150):
            resource_writes.set_keywords(conn, rid, rng.sample(["Écologie", "ÉCOLE", "Hydrology", "Zürich area", "x"], 2))
        for rid in rng.sample(ids, 50):
            resource_writes.delete(conn, rid)
        kept = [r[0] for r in conn.execute("SELECT id FROM resources")]
        for rid in rng.sample(kept, 60):  # new words in edited titles and abstracts
            resource_writes.update(conn, rid, {"title": rng.choice(EDITED), "abstract": rng.choice(EDITED + [""])})
        # many made in one hour, and dates that do not start as the store writes them (the
        # listed extents order what they cannot read last: see resources._listed_in_extents)
        for rid in rng.sample(kept, 80):
            conn.execute("UPDATE resources SET created = ? WHERE id = ?",
                         (f"2024-06-01T10:{rng.randrange(60):02d}:00.000000Z", rid))
        for rid, created in zip(rng.sample(kept, 6), ("2024-06-01T10:30:00Z", "2024-06-01", "2099-13-01T00:00:00.000000Z",
                                                      "later", "2024-06-01T24:00:00.000000Z", "0000-01-01T00:00:00.000000Z")):
            conn.execute("UPDATE resources SET created = ? WHERE id = ?", (created, rid))
        owner = conn.execute("SELECT id FROM users WHERE username = 'u1'").fetchone()[0]
        for x0, x1 in ((170.0, -170.0), (175.0, -179.0)):  # boxes across the antimeridian
            rid = resource_writes.create(conn, "document", owner, {"title": "Across river", "ll_x0": x0, "ll_y0": -10.0,
                                                                  "ll_x1": x1, "ll_y1": 10.0})
            resource_writes.set_keywords(conn, rid, ["Hydrology"])
    conn = db.connect(path, readonly=True)
    yield conn
    conn.close()


def viewers(conn):
    user = conn.execute("SELECT id FROM users WHERE username = 'u1'").fetchone()[0]
    return {"anonymous": resources.viewer_of(conn, None), "user": resources.viewer_of(conn, user),
            "superuser": resources.viewer_of(conn, user, is_superuser=True)}


def _meets(row, box) -> bool:
    qx0, qy0, qx1, qy1 = box
    x0, y0, x1, y1 = (row["ll_x0"], row["ll_y0"], row["ll_x1"], row["ll_y1"])
    if x0 is None:
        x0, y0, x1, y1 = -180, -90, 180, 90
    parts = [(x0, 180), (-180, x1)] if x0 > x1 else [(x0, x1)]
    return any(a <= qx1 and b >= qx0 for a, b in parts) and y0 <= qy1 and y1 >= qy0


def expected(conn, viewer, params) -> list[int]:
    """The ids the query selects, read row by row in Python."""
    cond, args = resources.visibility(viewer)
    adv, adv_args = resources._advertised(viewer, resources.ResourceQuery())
    rows = conn.execute(f"SELECT r.id, r.created, r.title, r.abstract, r.ll_x0, r.ll_y0, r.ll_x1, r.ll_y1"
                        f" FROM resources r WHERE {cond}{adv}", args + adv_args).fetchall()
    names: dict[int, list[str]] = {}
    for rid, name in conn.execute("SELECT rk.resource_id, k.name FROM resource_keywords rk JOIN keywords k"
                                  " ON k.id = rk.keyword_id"):
        names.setdefault(rid, []).append(name)
    fields = [v for k, v in params if k == "search_fields"]
    out = []
    for row in rows:
        ok = True
        for key, value in params:
            if key == "filter{keywords.name.icontains}":
                ok &= any(value.casefold() in n.casefold() for n in names.get(row["id"], []))
            elif key == "filter{-keywords.name.icontains}":
                ok &= not any(value.casefold() in n.casefold() for n in names.get(row["id"], []))
            elif key == "search":
                ok &= all(any(t.casefold() in (row[f] or "").casefold() for f in fields)
                          for t in value.replace(",", " ").split())
        boxes = [[float(v) for v in value.split(",")] for key, value in params if key == "extent"]
        if boxes:  # any of them
            ok &= any(_meets(row, box) if box[0] <= box[2] else
                      (_meets(row, [box[0], box[1], 180, box[3]]) or _meets(row, [-180, box[1], box[2], box[3]]))
                      for box in boxes)
        if ok:
            out.append((row["created"], row["id"]))
    return [rid for _, rid in sorted(out, reverse=True)]


SEARCH = [("search_fields", "title"), ("search_fields", "abstract")]
QUERIES = [
    [("filter{keywords.name.icontains}", "olog")],      # several keywords
    [("filter{keywords.name.icontains}", "hydr")],      # one keyword, dense
    [("filter{keywords.name.icontains}", "ÉCOL")],      # accents, both cases
    [("filter{keywords.name.icontains}", "écol")],
    [("filter{keywords.name.icontains}", "ra")],        # two letters
    [("filter{keywords.name.icontains}", "x")],         # one letter
    [("filter{keywords.name.icontains}", "zzz")],       # nothing
    [("filter{-keywords.name.icontains}", "olog")],
    [("search", "river"), *SEARCH],
    [("search", "river zürich"), *SEARCH],
    [("search", "RIVER map"), *SEARCH],
    [("search", "river ab"), *SEARCH],                  # a term the trigram index cannot serve
    [("search", "ri"), *SEARCH],
    [("search", "tromsø"), *SEARCH],
    [("extent", "5.96,45.82,10.49,47.81")],
    [("extent", "-180,-90,180,90")],
    [("extent", "160,-20,-160,20")],                    # across the antimeridian
    [("extent", "-179.5,-5,-178,5")],
    [("extent", "-20,-30,40,30"), ("extent", "100,0,120,20")],  # two boxes
    [("filter{keywords.name.icontains}", "olog"), ("search", "river"), *SEARCH],
    [("filter{keywords.name.icontains}", "hydr"), ("extent", "-30,-40,60,40")],
    [("search", "map"), *SEARCH, ("extent", "-30,-40,60,40")],
    [("search", "rivers"), *SEARCH],                    # inside a longer word
    [("search", "kiwi ålesund"), *SEARCH],
    [("search", "ÅLESUND"), *SEARCH],
    [("search", "Ørsted"), *SEARCH],
    [("search", "river2"), *SEARCH],
    [("search", "iver"), ("search_fields", "title")],   # one column of the index
    [("search", "river"), ("search_fields", "abstract")],
    [("search", "land-use"), *SEARCH],                  # not one word: the trigram index
    [("search", "2019"), *SEARCH],                      # digits alone: the trigram index
    [("search", "qqqzz"), *SEARCH],                     # in no word
    [("search", "river qz"), *SEARCH],                  # a short term in no word
    [("search", "ØR"), *SEARCH],                        # short, not ASCII: tested row by row
    [("search", "ki river"), ("search_fields", "title")],
    [("search", "r"), *SEARCH],                         # in more than WORDS_MAX words
]


EXPECTED: dict[tuple, list[int]] = {}  # (viewer, query) -> expected()


@pytest.mark.parametrize("few", [resources.FEW, 0], ids=["few-counted-in-one-pass", "count-then-page"])
@pytest.mark.parametrize("who", ["anonymous", "user", "superuser"])
@pytest.mark.parametrize("params", QUERIES, ids=lambda p: "&".join(f"{k}={v}" for k, v in p))
@pytest.mark.parametrize("words", [resources.WORDS_MAX, 1], ids=["word-index", "trigram-beyond-one-word"])
def test_totals_and_pages_agree_with_the_rows(database, who, params, few, words, monkeypatch):
    # a small catalogue: the one-pass plan serves every text search unless its limit is lowered;
    # a term that stands for more than WORDS_MAX words goes to the trigram index
    monkeypatch.setattr(resources, "FEW", few)
    monkeypatch.setattr(resources, "WORDS_MAX", words)
    viewer = viewers(database)[who]
    # the rows read in Python once per viewer and query (the database does not change here; the
    # four plans of each are checked against the same list)
    key = (who, tuple(params))
    if key not in EXPECTED:
        EXPECTED[key] = expected(database, viewer, params)
    want = EXPECTED[key]
    query, _, _ = resource_query(params, viewer.id, ())
    for offset, limit in ((0, 10), (10, 10), (40, 20), (len(want) - 3, 10), (len(want) + 5, 10)):
        if offset < 0:
            continue
        total, rows = resources.page(database, viewer, query, limit, offset)
        assert total == len(want)
        assert [r["id"] for r in rows] == want[offset:offset + limit]
    assert sorted(resources.ids_matching(database, viewer, query)) == sorted(want)


def test_the_anonymous_keyword_table_follows_every_change(database):
    kept = set(database.execute("SELECT keyword_id, resource_id FROM listed_keywords").fetchall())
    meant = set(database.execute(
        "SELECT rk.keyword_id, rk.resource_id FROM resource_keywords rk JOIN resources r ON r.id = rk.resource_id"
        " WHERE r.public_view = 1 AND r.dirty = 0 AND r.advertised = 1").fetchall())
    assert kept == meant and len(kept) > 1000


def test_the_anonymous_condition_is_the_one_the_keyword_table_stands_for():
    anonymous = resources.Viewer(None, False, (resources.ANONYMOUS_GROUP_ID,))
    cond, params = resources.visibility(anonymous)
    adv, adv_params = resources._advertised(anonymous, resources.ResourceQuery())
    assert (cond + adv, params + adv_params) == (resources.ANONYMOUS_LISTING, [])


@pytest.mark.parametrize(("text", "index"), [("river", "resource_words"), ("Ålesund map", "resource_words"),
                                             ("land-use", "resource_text"), ("2019", "resource_text"),
                                             ("r\u0301iver", "resource_text"), ("ri", "resource_words"),
                                             ("river ab", "resource_words"), ("river é", "resource_words")])
def test_terms_of_one_word_go_to_the_word_index(database, text, index):
    query, _, _ = resource_query([("search", text), *SEARCH], None, ())
    found, _ = resources._candidates(database, query)
    assert index in found[0].sql


def test_an_anonymous_search_of_several_words_lists_its_matches_once(database):
    """Rows that hold two words or more are few: an anonymous caller's count and page come from
    one search of the word index (their agreement with the rows is checked above, at every
    offset); a single word may match most of the catalogue, and is counted apart."""
    for text, once in (("river zürich", True), ("kiwi ålesund", True), ("river", False)):
        query, _, _ = resource_query([("search", text), *SEARCH], None, ())
        found, _ = resources._candidates(database, query)
        assert (found[0].anonymous_ids is not None) is once


def test_the_word_index_follows_every_change(database):
    """The word index holds what indexing the rows as they are now would give (the words of the
    rows anonymous callers do not list in columns of their own, and 'h' in hidden), and the
    vocabulary every word of theirs but numbers."""
    path = database.execute("PRAGMA database_list").fetchone()[2]
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)  # the store's reader writes nothing, not even temp
    conn.execute(f"CREATE VIRTUAL TABLE temp.want USING fts5({migrations.WORD_COLUMNS}, content='', detail=column,"
                 " tokenize='unicode61 remove_diacritics 0')")
    conn.execute("CREATE VIRTUAL TABLE temp.want_terms USING fts5vocab(temp, want, 'instance')")
    conn.execute("CREATE VIRTUAL TABLE temp.kept_terms USING fts5vocab(main, resource_words, 'instance')")
    try:
        listed = resources.ANONYMOUS_LISTING.replace("r.", "")
        conn.execute(f"INSERT INTO temp.want (rowid, {migrations.WORD_COLUMNS}) SELECT id,"
                     f" iif({listed}, title, NULL), iif({listed}, abstract, NULL), iif({listed}, NULL, 'h'),"
                     f" iif({listed}, NULL, title), iif({listed}, NULL, abstract) FROM resources")
        want = set(conn.execute("SELECT term, doc, col FROM temp.want_terms").fetchall())
        assert set(conn.execute("SELECT term, doc, col FROM temp.kept_terms").fetchall()) == want
        words = {term for term, _, col in want if col != "hidden" and not term.isdigit()}
        assert words <= {r[0] for r in conn.execute("SELECT word FROM resource_vocab")}
        assert {"riverside", "ålesund", "ørsted", "river2", "kiwi"} <= words
    finally:
        conn.close()


UNFILTERED = [[], [("advertised", "false")], [("advertised", "true")], [("advertised", "all")]]


@pytest.mark.parametrize("who", ["anonymous", "user", "superuser"])
@pytest.mark.parametrize("params", UNFILTERED, ids=lambda p: "&".join(f"{k}={v}" for k, v in p) or "nothing")
@pytest.mark.parametrize("types", [(), ("dataset",), ("geostory", "dashboard")], ids=lambda t: "+".join(t) or "all")
def test_unfiltered_totals_agree_with_the_rows(database, who, params, types):
    # anonymous callers' and superusers' totals come from the tally that triggers keep, other
    # users' from it and the rows they see beyond it
    viewer = viewers(database)[who]
    query, _, _ = resource_query(params, viewer.id, types)
    cond, args, _, _ = resources._conditions(database, viewer, query)
    counted = database.execute(f"SELECT count(*) FROM resources r WHERE {cond}", args).fetchone()[0]
    found = resources._unfiltered_total(database, viewer, query, cond)
    assert isinstance(found, int) if who == "user" else "resource_tally" in found[0]
    total, rows = resources.page(database, viewer, query, 10, 0)
    assert total == counted
    assert len(rows) == min(counted, 10)


@pytest.mark.parametrize("who", ["anonymous", "user", "superuser"])
def test_counts_by_type_agree_with_the_rows(database, who):
    viewer = viewers(database)[who]
    cond, args = resources.visibility(viewer)
    adv, adv_args = resources._advertised(viewer, resources.ResourceQuery())
    counted = dict(database.execute(f"SELECT r.resource_type, count(*) FROM resources r WHERE {cond}{adv}"
                                    " GROUP BY r.resource_type", args + adv_args).fetchall())
    assert resources.type_counts(database, viewer) == counted


def test_the_tally_follows_every_change(database):
    kept = {tuple(r[:4]): r[4] for r in database.execute("SELECT * FROM resource_tally WHERE n <> 0")}
    meant = {tuple(r[:4]): r[4] for r in database.execute(
        "SELECT resource_type, public_view, advertised, dirty, count(*) FROM resources GROUP BY 1, 2, 3, 4")}
    assert kept == meant
    assert {k[3] for k in kept} == {0, 1} and {k[1] for k in kept} == {0, 1} and {k[2] for k in kept} == {0, 1}


def test_the_listed_extents_follow_every_change(database):
    """The R*Tree of listed extents holds an entry for each part of the box of every resource
    anonymous callers list, its id made of the hour it was created (0 when unknown), the id and
    the part."""
    assert_in_step(database)
    hours = {e >> migrations.LISTED_EXTENT_SHIFT for e in listed_entries(database)}
    assert 0 in hours and ((2024 * 12 + 5) * 31) * 24 + 10 in hours  # unknown; 2024-06-01 10 h
