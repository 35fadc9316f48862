"""The PostgreSQL store's pure pieces: a checkout's uri translation, passwords masked. (Its
statements: test_store_statements.py.)"""

import json

from hypothesis import given
from hypothesis import strategies as st

from stet.store.checkout import REPO, Checkout
from stet.store.pgconn import mask, shown

DEV = Checkout("laptop:/home/dev/shop", "file:///home/dev/shop")
AGENT = Checkout("sandbox:/work/shop", "file:///work/shop")


def test_uris_are_stored_repository_relative_and_read_at_each_checkouts_paths():
    stored = DEV.to_store("file:///home/dev/shop/src/a.py")
    assert stored == REPO + "src/a.py"
    assert DEV.from_store(stored) == "file:///home/dev/shop/src/a.py"
    assert AGENT.from_store(stored) == "file:///work/shop/src/a.py"
    args = json.dumps({"files": ["file:///home/dev/shop/src/a.py"], "edit": {"file:///home/dev/shop/b.py": []}})
    assert AGENT.from_store(DEV.to_store(args)) == args.replace("/home/dev/shop", "/work/shop")
    # Not a uri of this checkout: left as it is (another root, a sibling folder with the same prefix).
    for other in ("file:///home/dev/other/a.py", "file:///home/dev/shopping/a.py", "line 2\n", 7, None):
        assert DEV.to_store(other) == other and DEV.from_store(other) == other


@given(st.text())
def test_any_text_comes_back_as_it_went_in_the_same_checkout(text):
    for value in (text, "file:///home/dev/shop/" + text, json.dumps([text, "file:///home/dev/shop/" + text])):
        assert DEV.from_store(DEV.to_store(value)) == value or REPO in value


def test_passwords_never_shown():
    url = "postgresql://stet:p%40ss@db.example.com:5432/shop?sslmode=verify-full"
    assert shown(url) == "postgresql://stet:***@db.example.com:5432/shop?sslmode=verify-full"
    assert "p%40ss" not in mask(f"could not connect to {url}", url)
    assert mask("dsn password=hunter2 host=x", None) == "dsn password=*** host=x"
