"""The review store Stet wrote at schema 8 (absolute paths), as the migration tests use it:
tests/support/fixtures/store-v8.tar.gz (SQLite) and store-v8-pg.tar.gz (PostgreSQL: a dump),
made by tests/support/make_store_v8.py with that version's own code (see there for what they
hold), in MADE_AT.

`made_here()` unpacks it where it was made, so that it is opened exactly as that version left
it (its paths, and the hashes of its proposals, name that folder); the folder is Stet's tests'
alone, taken under a lock for one test at a time and removed after. `unpack(folder)` puts it
somewhere else: a store whose folder moved before this version first opened it."""

from __future__ import annotations

import contextlib
import fcntl
import json
import shutil
import sqlite3
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ARCHIVE = Path(__file__).resolve().parent / "fixtures" / "store-v8.tar.gz"
PG_ARCHIVE = ARCHIVE.with_name("store-v8-pg.tar.gz")
MADE_AT = Path("/tmp/stet-store-v8/app")  # make_store_v8.ROOT
_LOCK = Path("/tmp/stet-store-v8.lock")


def unpack(folder: Path, archive: Path = ARCHIVE) -> tuple[Path, dict]:
    """(the workspace at `folder/app`, what Stet 8 answered in it, at MADE_AT)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive) as tar:
        tar.extractall(folder, filter="tar")
    return folder / "app", json.loads((folder / "expected.json").read_text())


@contextlib.contextmanager
def made_here(archive: Path = ARCHIVE, deadline: float = 600.0) -> Iterator[tuple[Path, dict]]:
    """The store unpacked at MADE_AT, for the block (one test at a time, on this machine)."""
    try:
        fd = _LOCK.open("a")
    except OSError as exc:
        pytest.skip(f"cannot use {_LOCK.parent} for the schema-8 store's own folder: {exc}")
    with fd:
        end = time.monotonic() + deadline
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > end:
                    raise AssertionError(f"{_LOCK} stayed locked for {deadline:.0f} s") from None
                time.sleep(0.2)
        shutil.rmtree(MADE_AT.parent, ignore_errors=True)  # left by a killed run
        try:
            yield unpack(MADE_AT.parent, archive)
        finally:
            shutil.rmtree(MADE_AT.parent, ignore_errors=True)


def load_dump(folder: Path, url: str) -> None:
    """The PostgreSQL review of the archive unpacked in `folder`, into the (empty) database at
    `url`; its checkout named by this host (a checkout is "host:folder": the same one, here)."""
    import socket

    import psycopg

    # (psql's own commands, such as pg_dump's \restrict, are not SQL)
    dump = "".join(line for line in (folder / "dump.sql").read_text().splitlines(True) if not line.startswith("\\"))
    host = (folder / "host").read_text().strip()
    dump = dump.replace(f"'{host}:{MADE_AT}'", f"'{socket.gethostname()}:{MADE_AT}'")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(dump)


def stored_absolute(db: str) -> list[tuple[str, str, str]]:
    """(table, column, value) of every stored path still absolute (statements.PATHS)."""
    from stet.store.statements import PATHS

    wanted = {(t, c) for t, c, _, _ in PATHS}
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as conn:
            return [
                (t, c, v)
                for t, c in sorted(wanted)
                for (v,) in conn.execute(f'SELECT "{c}" FROM "{t}" WHERE "{c}" LIKE %s', ("%file:%",))
            ]
    conn = sqlite3.connect(db)
    try:
        return [
            (t, c, v)
            for t, c in sorted(wanted)
            for (v,) in conn.execute(f'SELECT "{c}" FROM "{t}" WHERE "{c}" LIKE ?', ("%file:%",))
        ]
    finally:
        conn.close()


def schema_version(db: str) -> int:
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as conn:
            row = conn.execute("SELECT version FROM stet_schema").fetchone()
            return int(row[0]) if row else 0
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()
