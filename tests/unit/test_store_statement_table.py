"""Every statement in the statement table: SQL text lives in store/statements.py's table as each
engine fills it (sqlite_sql.py, pg_sql.py, glance_sql.py: with the engine's own statements,
its transactions, settings and checks) and in the engines' migrations (schema.py, pg_schema.py);
the store's code sends them by name, so an engine's statements are read in one place."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server" / "stet"
SQL = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|DROP|ALTER|BEGIN|COMMIT|ROLLBACK|PRAGMA|VACUUM|LISTEN|NOTIFY|SET LOCAL|WITH)\b"
)


def _table(path: Path) -> bool:
    return path.name == "statements.py" or path.name.endswith(("_sql.py", "schema.py"))


def sql_texts(source: str) -> list[int]:
    """The lines of `source` holding SQL text (a string that starts as a statement does; a
    docstring aside)."""
    tree = ast.parse(source)
    docs = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
    return sorted(
        n.lineno
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs and SQL.match(n.value)
    )


def test_no_sql_text_outside_the_statement_tables():
    found = [
        f"{path.relative_to(SERVER)}:{line}"
        for path in sorted(SERVER.rglob("*.py"))
        if not _table(path)
        for line in sql_texts(path.read_text())
    ]
    assert found == [], "name it in the engine's *_sql.py and send it by name: " + ", ".join(found)


def test_a_statement_written_in_place_is_seen():
    assert sql_texts('conn.execute("PRAGMA user_version")\n') == [1]
    assert sql_texts('x = f"SELECT {cols} FROM hunks"\n') == [1]
    assert sql_texts('"""BEGIN IMMEDIATE for a write."""\nprint("Select one")\n') == []
