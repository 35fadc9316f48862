"""Each engine's statement table (store/sqlite_sql.py, store/pg_sql.py): every statement written
in the engine's own SQL, and in PostgreSQL every statement on what is each checkout's own
(its effects journal, file stamps, hunk_in_file) says which checkout it means."""

import dataclasses
import re

from stet.store import pg_schema, schema
from stet.store.pg_sql import MINE, POSTGRES
from stet.store.roots import DOC_COLUMNS, URI_COLUMNS
from stet.store.sqlite_sql import SQLITE
from stet.store.statements import PATHS, Statements

FIELDS = [f.name for f in dataclasses.fields(Statements) if f.name not in ("mark", "path_columns")]
# A statement on these tables reads or writes one checkout's rows, unless it is listed below.
PER_CHECKOUT = ("effects", "file_stamps", "hunk_in_file", "agent_told")
# Said on purpose for every checkout: a hunk of the file changed, so no checkout's stamp says when
# it was judged (pg_sql.py); the next ids are the largest ever used, by any checkout.
EVERY_CHECKOUT = {"unstamp", "next_ids"}


def _tables(sql: str) -> set[str]:
    return set(re.findall(r"\b(?:FROM|INTO|UPDATE|JOIN)\s+(\w+)", sql))


def test_each_engine_fills_every_statement_in_its_own_parameter_style():
    for name in FIELDS:
        lite, pg = getattr(SQLITE, name), getattr(POSTGRES, name)
        if lite is None:
            assert name == "put_in_file" and pg is not None  # in_file is each checkout's own only there
            continue
        assert "%s" not in lite and "OR IGNORE" in lite or "%s" not in lite, name
        assert "?" not in pg and "INSERT OR " not in pg and "sqlite_" not in pg, name
        assert lite.count("?") == pg.count("%s"), name  # the same parameters, in the same order
        assert _tables(lite) - {"sqlite_sequence"} <= _tables(pg), name


def test_the_statements_of_stored_paths_are_each_engines_own_and_a_checkouts_own():
    assert len(SQLITE.path_columns) == len(POSTGRES.path_columns) == len(PATHS) >= 12
    for lite, pg in zip(SQLITE.path_columns, POSTGRES.path_columns):
        assert (lite.table, lite.column, lite.kind, lite.key) == (pg.table, pg.column, pg.kind, pg.key)
        for a, b in ((lite.select, pg.select), (lite.update, pg.update), (lite.taken, pg.taken), (lite.drop, pg.drop)):
            if a is None:
                assert b is None and lite.column not in lite.key
                continue
            assert "%s" not in a and "?" not in b and a.count("?") == b.count("%s")
            assert _tables(a) == _tables(b) == {lite.table}
            if lite.table in PER_CHECKOUT:
                assert MINE in b, b
    # Every column a uri or a document of uris is written to is among them (roots.py names them).
    named = {(t, c) for t, c, _, _ in PATHS}
    assert {c for _, c in named} == URI_COLUMNS | DOC_COLUMNS
    for statements in schema.MIGRATIONS:
        for sql in statements:
            if m := re.match(r"CREATE TABLE (\w+) \((.*)\)$", sql, re.S):
                for line in m[2].split(",\n"):
                    column = line.split()[0]
                    if column in URI_COLUMNS | DOC_COLUMNS and m[1] != "roots":
                        assert (m[1], column) in named, (m[1], column)


def test_every_postgresql_statement_on_a_checkouts_own_rows_names_the_checkout():
    scoped = []
    for name in FIELDS:
        sql = getattr(POSTGRES, name)
        if sql is None or name in EVERY_CHECKOUT:
            continue
        if _tables(sql) & set(PER_CHECKOUT):
            assert MINE in sql, f"{name}: {sql}"  # written out: `checkout = {MINE}`, or the value inserted
            scoped.append(name)
    # (the test sees them: a renamed table would make it pass vacuously)
    assert {"open_effects", "effects_done_after", "pending_effect", "settle_saved_effects", "stamps"} <= set(scoped)
    assert {"set_effect", "set_effect_owner", "add_effect", "put_stamps", "put_in_file", "hunks_since"} <= set(scoped)
    assert {"told", "put_told", "drop_told"} <= set(scoped)


def test_postgresql_schema_has_the_tables_and_columns_of_sqlites():
    def columns(migrations: list[list[str]]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for statements in migrations:
            for sql in statements:
                if m := re.match(r"CREATE TABLE (\w+) \((.*)\)$", sql, re.S):
                    out[m[1]] = {
                        line.split()[0] for line in m[2].split(",\n") if not line.strip().startswith("PRIMARY")
                    }
                elif m := re.match(r"ALTER TABLE (\w+) ADD COLUMN (\w+)", sql):
                    out[m[1]].add(m[2])
        return {t: {c.strip() for c in cs} for t, cs in out.items()}

    assert len(pg_schema.MIGRATIONS) == len(schema.MIGRATIONS) == schema.SCHEMA_VERSION
    lite, pg = columns(schema.MIGRATIONS), columns(pg_schema.MIGRATIONS)
    assert lite == pg
    assert not any("AUTOINCREMENT" in s for m in pg_schema.MIGRATIONS for s in m)
