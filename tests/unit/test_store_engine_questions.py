"""Only store/ knows how a `--db` value names its engine: every other room asks
`store.engines.engine_of(db)` (shared? reconnects? where does this checkout's review live? how is
it shown?) and never reads a url's scheme itself, so a third engine is added in store/ alone."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from stet.store.engines import POSTGRESQL, SQLITE, engine_of

SERVER = Path(__file__).resolve().parents[2] / "server" / "stet"
URL_WORDS = ("is_url", "SCHEMES")


def _literal(node: ast.AST) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _url_test(node: ast.AST) -> bool:
    """A comparison or a prefix test against a scheme ("://", "postgres..."), or a name that is one."""
    if isinstance(node, ast.Name | ast.Attribute):
        return (node.id if isinstance(node, ast.Name) else node.attr) in URL_WORDS
    if isinstance(node, ast.alias):
        return node.name.rsplit(".", 1)[-1] in URL_WORDS
    if isinstance(node, ast.Constant):
        text = _literal(node)
        return text is not None and text.startswith("postgres")
    if isinstance(node, ast.Compare):
        return any("://" in (_literal(n) or "") for n in [node.left, *node.comparators])
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("startswith", "endswith")
    ):
        parts = [e for a in node.args for e in (a.elts if isinstance(a, ast.Tuple) else [a])]
        return any("://" in (_literal(p) or "") for p in parts)
    return False


def url_tests(source: str) -> list[int]:
    """The lines of `source` that test what kind of store a value names."""
    return sorted({n.lineno for n in ast.walk(ast.parse(source)) if _url_test(n)})  # type: ignore[attr-defined]


def test_nothing_outside_the_store_tests_a_url():
    found = [
        f"{path.relative_to(SERVER)}:{line}"
        for path in sorted(SERVER.rglob("*.py"))
        if "store" not in path.relative_to(SERVER).parts[:1]
        for line in url_tests(path.read_text())
    ]
    assert found == [], "ask store.engines.engine_of(db) instead of reading the url: " + ", ".join(found)


@pytest.mark.parametrize(
    "code",
    [
        'db.startswith(("postgresql://", "postgres://"))',
        'x = "a" if "://" in db else db',
        "from ..store import is_url",
        "ok = store.is_url(db)",
        'kind = "postgresql"',
    ],
)
def test_the_scan_sees_each_way_of_testing_a_url(code: str):
    assert url_tests(code) == [1]


def test_an_http_address_and_a_file_uri_are_not_store_tests():
    assert url_tests('print(f"serving http://{host}:{port}/mcp")\nname = uri.removeprefix("file://")') == []


def test_the_engine_answers_the_questions_asked_of_it():
    url = "postgresql://stet:secret@db.example/review"
    assert engine_of(url) is POSTGRESQL and engine_of("postgres://h/d") is POSTGRESQL
    assert engine_of("/w/.stet/stet.db") is SQLITE and engine_of(None) is SQLITE
    assert (POSTGRESQL.shared, POSTGRESQL.reconnects, SQLITE.shared, SQLITE.reconnects) == (True, True, False, False)
    assert "secret" not in POSTGRESQL.named(url) and SQLITE.named("/w/.stet/stet.db") == "/w/.stet/stet.db"
    assert (
        POSTGRESQL.local_file(url, "/w/.stet") == "/w/.stet/stet.db" and SQLITE.local_file("/s/r.db", "/w") == "/s/r.db"
    )
    assert SQLITE.home("/w/.stet/stet.db", "/elsewhere") == "/w/.stet"
    assert SQLITE.home("/w/reviews/r.db", "/w") is None  # a store kept elsewhere has no resident
    assert POSTGRESQL.home(url, "/") == "/.stet"  # the checkout's own .stet/
    assert POSTGRESQL.absolute(url) == url and SQLITE.absolute("/w/./r.db") == "/w/r.db"
