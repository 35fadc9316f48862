"""SIGKILL inside the migration that makes a schema-8 store's paths relative (store/relocation.py,
fault point relocate:after-column, once per column of stored paths): the store is left exactly as
that version wrote it, and the next open migrates it whole. On both engines."""

from __future__ import annotations

import sqlite3

from stet.store.schema import SCHEMA_VERSION
from stet.store.statements import PATHS
from support import clitools
from support.clitools import stet, stet_json
from support.engines import Databases, cluster
from support.v8store import PG_ARCHIVE, load_dump, made_here, schema_version, stored_absolute

# The first column, one in the middle, the last: killed before the commit each time.
KILLS = [1, len(PATHS) // 2, len(PATHS)]


def _contents(db: str) -> dict[str, list[tuple]]:
    """Every row of every table, as stored."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as conn:
            tables = [
                r[0]
                for r in conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                    "AND table_type = 'BASE TABLE'"
                )
            ]
            return {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"').fetchall())) for t in tables}
    conn = sqlite3.connect(db)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return {t: sorted(map(repr, conn.execute(f'SELECT * FROM "{t}"').fetchall())) for t in tables}
    finally:
        conn.close()


def _killed_then_migrated(root, db: str) -> None:
    before = _contents(db)
    assert schema_version(db) == 8
    assert stored_absolute(db) or db.startswith("postgresql://")  # (PostgreSQL's first root: relative already)
    for n in KILLS:
        killed = stet("status", "--all", "--json", cwd=root, env={"STET_FAULT": f"relocate:after-column@{n}"})
        assert killed.returncode == -9, (n, killed.stdout, killed.stderr)
        assert schema_version(db) == 8 and _contents(db) == before, n  # as that version left it
    status = stet_json("status", "--all", cwd=root)
    assert schema_version(db) == SCHEMA_VERSION and stored_absolute(db) == []
    assert {h["uri"] for h in status["hunks"]} >= {(root / "a.py").as_uri(), (root / "links.txt").as_uri()}
    (links,) = [h for h in status["hunks"] if h["proposalId"] == "p-links"]
    assert links["oldText"] == (root / "a.py").as_uri() + "\n"  # a text, as it was written


def test_a_kill_inside_the_sqlite_migration_leaves_the_old_store_whole():
    with made_here() as (root, _):
        _killed_then_migrated(root, str(root / ".stet" / "stet.db"))


def test_a_kill_inside_the_postgresql_migration_leaves_the_old_store_whole():
    databases = Databases(cluster())
    try:
        url = databases.new()
        with made_here(PG_ARCHIVE) as (root, _):
            load_dump(root.parent, url)
            clitools.ENGINE_ENV["STET_DB"] = url
            try:
                _killed_then_migrated(root, url)
            finally:
                clitools.ENGINE_ENV.clear()
    finally:
        databases.drop()
