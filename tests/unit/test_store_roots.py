"""Paths at the store's boundary (store/roots.py): stored relative to the workspace's roots, read
at each reader's roots, every other text exactly as written; and PostgreSQL's passwords masked.
(The statements: test_store_statements.py; a real store moved: tests/e2e/test_moved.py.)"""

import json

from hypothesis import given
from hypothesis import strategies as st

from stet.store.pgurl import mask, shown
from stet.store.roots import ESCAPE, FIRST, AsDoc, AsUri, Roots

DEV = Roots(["file:///home/dev/shop"])
AGENT = Roots(["file:///work/shop"])
TWO = Roots(["file:///home/dev/app", "file:///home/dev/lib"])
TWO_MOVED = Roots(["file:///mnt/app", "file:///mnt/lib"])


def test_uris_are_stored_relative_and_read_at_each_readers_root():
    stored = DEV.to_store("file:///home/dev/shop/src/a.py")
    assert stored == FIRST + "src/a.py" == "stet-repo:///src/a.py"
    assert DEV.from_store(stored) == "file:///home/dev/shop/src/a.py"
    assert AGENT.from_store(stored) == "file:///work/shop/src/a.py"
    args = json.dumps({"files": ["file:///home/dev/shop/src/a.py"], "edit": {"file:///home/dev/shop/b.py": []}})
    assert FIRST in DEV.doc_to_store(args) and "/home/dev" not in DEV.doc_to_store(args)
    assert AGENT.doc_from_store(DEV.doc_to_store(args)) == args.replace("/home/dev/shop", "/work/shop")
    # Not inside a root: kept as it is (another folder, a sibling whose name starts the same).
    for other in ("file:///home/dev/other/a.py", "file:///home/dev/shopping/a.py", "line 2\n"):
        assert DEV.to_store(other) == other and DEV.from_store(other) == other


def test_the_other_roots_are_stored_by_their_index():
    assert TWO.to_store("file:///home/dev/lib/x.py") == "stet-root:1/x.py"
    assert TWO.to_store("file:///home/dev/app/x.py") == "stet-repo:///x.py"
    assert TWO_MOVED.from_store("stet-root:1/x.py") == "file:///mnt/lib/x.py"
    # Opened without that root (the command line in the first folder): read where the store last
    # saw it, and written back the same.
    first_only = Roots(["file:///mnt/app"], known={1: "file:///home/dev/lib"})
    assert first_only.from_store("stet-root:1/x.py") == "file:///home/dev/lib/x.py"
    assert first_only.to_store("file:///home/dev/lib/x.py") == "stet-root:1/x.py"
    # Its own roots come first: what the store last saw for an index it has is not used.
    assert Roots(["file:///a", "file:///b"], known={1: "file:///old"}).from_store("stet-root:1/x") == "file:///b/x"
    # A folder added later gets the next index; the ones there keep theirs.
    more = TWO.with_roots(["file:///home/dev/lib", "file:///home/dev/docs"])
    assert more.uris == (*TWO.uris, "file:///home/dev/docs")
    assert more.to_store("file:///home/dev/docs/r.md") == "stet-root:2/r.md"
    # Nested roots: the first one holding the path names it.
    nested = Roots(["file:///p", "file:///p/sub"])
    assert nested.to_store("file:///p/sub/x") == "stet-repo:///sub/x"
    # The file system's root as a root.
    top = Roots(["file:///"])
    assert (
        top.to_store("file:///etc/x") == "stet-repo:///etc/x"
        and top.from_store("stet-repo:///etc/x") == "file:///etc/x"
    )


def test_text_that_looks_like_the_stores_own_is_kept_exactly():
    for text in ("stet-repo:///x", "stet-root:1/y", ESCAPE + "stet-z", "stet-", "stet-esc:"):
        assert DEV.to_store(text).startswith(ESCAPE)
        assert DEV.from_store(DEV.to_store(text)) == text
        assert AGENT.from_store(DEV.to_store(text)) == text
        doc = json.dumps({"before": text, "k": [text + "\n", '"' + text]})
        assert AGENT.doc_from_store(DEV.doc_to_store(doc)) == doc


ROOT = "file:///home/dev/shop/"
pieces = st.sampled_from([*'ab"\\:/-{[ \n', "stet-", "stet-repo:///", "stet-root:1/", ESCAPE, ROOT, '"' + ROOT])
texts = st.lists(pieces, max_size=8).map("".join)


def _moved(value):
    """A decoded JSON value with this root's uris at the other root's."""
    if isinstance(value, str):
        return "file:///work/shop/" + value[len(ROOT) :] if value.startswith(ROOT) else value
    if isinstance(value, list):
        return [_moved(v) for v in value]
    return {_moved(k): _moved(v) for k, v in value.items()}


@given(st.lists(st.one_of(texts, texts.map(lambda t: ROOT + t)), max_size=6))
def test_any_document_comes_back_exactly_and_moves_only_its_paths(strings):
    for text in strings:
        assert DEV.from_store(DEV.to_store(text)) == text
    doc = json.dumps({"list": strings, "map": {s: s for s in strings}, "edit": {"newText": "".join(strings)}})
    stored = DEV.doc_to_store(doc)
    assert DEV.doc_from_store(stored) == doc
    assert json.loads(AGENT.doc_from_store(stored)) == _moved(json.loads(doc))


def test_only_tagged_parameters_and_named_columns_are_translated():
    uri = "file:///home/dev/shop/a.py"
    assert DEV.params((AsUri(uri), uri, AsUri(None), AsDoc(json.dumps([uri])), 3)) == (
        "stet-repo:///a.py",
        uri,  # a hunk's text, say: as it is
        None,
        '["stet-repo:///a.py"]',
        3,
    )
    read = AGENT.reader([("id",), ("uri",), ("old_text",), ("edits",)])
    assert read is not None
    assert read(("h1", "stet-repo:///a.py", "stet-repo:///b.py", '["stet-repo:///c.py"]')) == (
        "h1",
        "file:///work/shop/a.py",
        "stet-repo:///b.py",
        '["file:///work/shop/c.py"]',
    )
    assert AGENT.reader([("id",), ("status",)]) is None


def test_passwords_never_shown():
    url = "postgresql://stet:p%40ss@db.example.com:5432/shop?sslmode=verify-full"
    assert shown(url) == "postgresql://stet:***@db.example.com:5432/shop?sslmode=verify-full"
    assert "p%40ss" not in mask(f"could not connect to {url}", url)
    assert mask("dsn password=hunter2 host=x", None) == "dsn password=*** host=x"
