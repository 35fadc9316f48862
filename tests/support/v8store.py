"""The review store Stet wrote at schema 8 (absolute paths), as the migration tests use it:
tests/support/fixtures/store-v8.tar.gz, made by tests/support/make_store_v8.py with that
version's own code (see there for what it holds), in MADE_AT.

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
MADE_AT = Path("/tmp/stet-store-v8/app")  # make_store_v8.ROOT
_LOCK = Path("/tmp/stet-store-v8.lock")


def unpack(folder: Path) -> tuple[Path, dict]:
    """(the workspace at `folder/app`, what Stet 8 answered in it, at MADE_AT)."""
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(folder, filter="tar")
    return folder / "app", json.loads((folder / "expected.json").read_text())


@contextlib.contextmanager
def made_here(deadline: float = 600.0) -> Iterator[tuple[Path, dict]]:
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
            yield unpack(MADE_AT.parent)
        finally:
            shutil.rmtree(MADE_AT.parent, ignore_errors=True)


def stored_absolute(db: Path) -> list[tuple[str, str, str]]:
    """(table, column, value) of every stored text holding an absolute `file:` uri (the table of
    where the roots are aside)."""
    conn = sqlite3.connect(db)
    out = []
    try:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            if table == "roots":
                continue
            for column in [r[1] for r in conn.execute(f'PRAGMA table_info("{table}")')]:
                rows = conn.execute(f'SELECT "{column}" FROM "{table}" WHERE "{column}" LIKE ?', ("%file:%",))
                out += [(table, column, v) for (v,) in rows]
    finally:
        conn.close()
    return out


def user_version(db: Path) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()
