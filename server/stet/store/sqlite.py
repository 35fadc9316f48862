"""The store: one SQLite database per workspace, shared by every Stet process.

Writes happen in `async with store.write() as tx:` blocks: BEGIN IMMEDIATE ... COMMIT,
one transaction per decision, committed (WAL, synchronous=FULL) before anything is
acknowledged. Every change is stamped with the lsn of its operation-log entry, so any
process can follow what changed since the last lsn it saw.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import stat
import time

import aiosqlite

from ..errors import StoreLost, StoreUnavailable
from . import dbfiles, relocation
from . import sqlite_sql as sql
from .base import OpenResult, SqlStore
from .errors import StoreError
from .identity import Identity
from .roots import Roots
from .schema import MIGRATIONS, PATHS_RELATIVE, SCHEMA_VERSION
from .sqlite_link import SqliteLink, SqliteRaw
from .sqlite_sql import SQLITE
from .tx import unavailable

__all__ = ["OpenResult", "Store", "prepare_folder", "prepare_home", "quarantine_store"]

BUSY_TIMEOUT_MS = int(os.environ.get("STET_BUSY_TIMEOUT_MS", "10000"))
_CORRUPT = {"SQLITE_CORRUPT", "SQLITE_NOTADB"}
CHANGE_POLL = 0.2  # seconds between two reads of data_version while someone waits for a change


def _is_corrupt(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.DatabaseError) and getattr(exc, "sqlite_errorname", "") in _CORRUPT


def _kind_of(path: str) -> str:
    """ "missing", "empty", "sqlite" (the SQLite header is there) or "other"; read without
    following a symlink or blocking on a FIFO."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return "missing"
    except OSError:
        return "other"  # a symlink, a folder...: prepare_folder / dbfiles say which
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "other"
        head = os.read(fd, 16)
    finally:
        os.close(fd)
    if not head:
        return "empty"
    return "sqlite" if head == b"SQLite format 3\x00" else "other"


def quarantine_store(path: str) -> str:
    """Move a damaged database (and its -wal/-shm) aside, never deleting it; returns the folder."""
    parent = os.path.join(os.path.dirname(path), "quarantine")
    _refuse(dbfiles.folder_problem(parent))  # the database never leaves for wherever a link points
    folder = os.path.join(parent, time.strftime("%Y%m%dT%H%M%S", time.gmtime()))
    base = folder
    n = 1
    while os.path.lexists(folder):
        n += 1
        folder = f"{base}-{n}"
    os.makedirs(folder, mode=0o700)
    for suffix in ("", "-wal", "-shm"):
        if os.path.lexists(path + suffix):
            shutil.move(path + suffix, os.path.join(folder, os.path.basename(path) + suffix))
    return folder


def prepare_home(folder: str) -> None:
    """A checkout's `.stet/` (or another folder given for the store), made if missing: 0700,
    never through a symlink, never another user's, and for `.stet/` a `.gitignore` of `*` so
    that git (and an agent's `git add -A`) leaves Stet's own files alone."""
    if os.path.basename(folder) != ".stet":
        os.makedirs(folder, mode=0o700, exist_ok=True)
        return
    _refuse(dbfiles.home_problem(folder))
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    _refuse(dbfiles.home_problem(folder))
    st = os.stat(folder)
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(folder, 0o700)
    ignore = os.path.join(folder, ".gitignore")
    if not os.path.lexists(ignore):
        try:
            fd = os.open(ignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            return  # another process made it meanwhile
        with os.fdopen(fd, "w") as f:
            f.write("*\n")


def prepare_folder(db_path: str) -> None:
    """The store's folder and an empty database file, made if missing.

    `.stet/` is Stet's own: made 0700 (narrowed if an older Stet made it wider), and never a
    symlink (a symlinked `.stet/` would have Stet write its store, its inbox and its lock
    wherever the link points) nor another user's. The database and its -wal and -shm are never
    symlinks, hard links or another user's files either (see dbfiles.py)."""
    prepare_home(os.path.dirname(db_path))
    _refuse(dbfiles.files_problem(db_path))
    if not os.path.lexists(db_path):
        try:
            os.close(os.open(db_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))
        except FileExistsError:
            pass  # another process made it meanwhile


def _fsync_path(path: str) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _refuse(problem: str | None) -> None:
    if problem is not None:
        raise StoreUnavailable(problem)


def _refuse_symlink(path: str, what: str) -> None:
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(st.st_mode):
        raise StoreUnavailable(
            f"{what} {path} is a symlink: Stet keeps its store in a real folder and file, so that nothing it "
            f"writes lands elsewhere. Replace the symlink with the real folder, or point --db / STET_DB at it."
        )


class Store(SqlStore):
    """The SQLite engine's store: a file of the workspace's (or --db's), checked to be the one
    this process opened before anything is acknowledged (identity.py)."""

    engine = "sqlite"

    def __init__(self, conn: aiosqlite.Connection, path: str, roots: Roots):
        super().__init__(SqliteLink(conn, roots), SQLITE, path, os.path.dirname(path), roots)
        self.conn = conn
        self.identity = Identity(path)

    # --- is it still the store? ------------------------------------------------------------
    async def check(self) -> None:
        """Raise StoreLost when the database or its WAL is no longer the one this process
        opened (deleted, replaced, moved). The first time, what can be saved is saved: a lost
        WAL is copied into the database; a lost database is copied beside its old place."""
        if self.lost is None and self.identity.change() is not None:
            async with self._lock:
                await self._lose()
        if self.lost is not None:
            raise self.lost

    async def _check_held(self) -> None:
        """`check`, for a caller that holds the store's lock (no transaction open)."""
        if self.lost is None and self.identity.change() is not None:
            await self._lose()
        if self.lost is not None:
            raise self.lost

    async def _lose(self) -> None:
        what = self.identity.change()
        if self.lost is not None or what is None:
            return
        path = self.path
        if what in ("deleted", "replaced"):
            saved = await self._rescue_copy()
            happened = "was deleted or moved" if what == "deleted" else "was replaced by another file"
            message = (
                f"Stet's review store {path} {happened} while Stet was running (by `git clean -fdx`, `rm`, a "
                f"checkout?). Stet acknowledges nothing more, so that no decision is answered and then lost. "
                + (
                    f"It saved the review it held to {saved}: to go on with it, close every editor window and "
                    f"stop every `stet` command on this workspace, move that file to {path}, and start again "
                    f"(or start again without it, for a new, empty review)."
                    if saved.startswith("/")
                    else f"It could not save a copy ({saved}). Restart Stet (reload the editor window)."
                )
            )
        elif what == "wal-deleted":
            failed = await self._rescue_wal()
            message = (
                f"Stet's review store {path} lost its write-ahead log {path}-wal while Stet was running (deleted by "
                f"`git clean -fdx`, `rm` or a cleanup tool?). "
                + (
                    f"Stet copied everything it had stored into {path}. "
                    if failed is None
                    else f"Stet could not copy what was only in the log into {path} ({failed}): decisions since "
                    f"its last checkpoint may be lost. "
                )
                + "It acknowledges nothing more: restart Stet (reload the editor window) to go on."
            )
        else:
            message = (
                f"Stet's review store {path} had its write-ahead log {path}-wal replaced while Stet was running. "
                f"Stet acknowledges nothing more: restart Stet (reload the editor window) to go on."
            )
        self.lost = StoreLost(message, {"store": path, "what": what})
        if self.on_lost is not None:
            try:
                self.on_lost(self.lost)
            except Exception:  # telling is best effort; refusing is what matters
                pass

    async def _rescue_copy(self) -> str:
        """A copy of everything this process can still read (its open, nameless database and
        WAL) beside the store's old place; returns its path, or why there is none."""
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        target = f"{self.path}.rescued-{stamp}"
        n = 1
        while os.path.lexists(target):
            n += 1
            target = f"{self.path}.rescued-{stamp}-{n}"
        try:
            os.makedirs(os.path.dirname(self.path), mode=0o700, exist_ok=True)
            _refuse_symlink(os.path.dirname(self.path), "the folder")
            # Made under another name and renamed whole: what appears under the rescued name is
            # the complete copy (whoever moves it back as the message says gets all of it).
            folder, name = os.path.split(target)
            partial = os.path.join(folder, f".{name}.partial")
            await self._link.hop(lambda raw: raw.execute(sql.COPY_INTO, (partial,)))
            os.chmod(partial, 0o600)
            _fsync_path(partial)
            os.replace(partial, target)
            _fsync_path(folder)
        except (StoreError, OSError, StoreUnavailable) as exc:
            return str(exc)
        return target

    async def _rescue_wal(self) -> str | None:
        """Copy every commit still only in the (deleted, still open) WAL into the database file,
        which is still the one at the store's path; None when done, else why not."""
        try:
            row = await self._link.hop(lambda raw: raw.execute(sql.CHECKPOINT).fetchone())
        except StoreError as exc:
            return str(exc)
        return None if row is not None and row[0] == 0 else "another process kept the database busy"

    # --- opening ---------------------------------------------------------------------
    @classmethod
    async def open(
        cls, path: str, *, roots: list[str] | None = None, create: bool = True, quarantine: bool = True
    ) -> OpenResult:
        """Open (with `create`, make) the store at `path`; raises StoreUnavailable. `roots`: the
        workspace's roots' uris, first first, that paths are stored relative to (default: the
        folder holding `.stet/` for a store there, else none: paths are kept as they are).

        A file that is not a Stet store is refused and left as it is: one that is not an
        SQLite database (unless it is where Stet keeps its own, `.stet/stet.db`: then it is a
        damaged store), and an SQLite database holding other tables. With `quarantine`, a
        damaged store is moved aside (never deleted) and a fresh one started; without it (a
        command that only reads), the damage is reported and nothing is moved or made."""
        notice = None
        own_place = os.path.basename(os.path.dirname(os.path.abspath(path))) == ".stet"
        if roots is None:
            roots = [_uri(os.path.dirname(os.path.dirname(os.path.abspath(path))))] if own_place else []
        _refuse(dbfiles.problem(path))  # before anything reads or writes through a link
        kind = _kind_of(path)
        if kind in ("missing", "empty") and not create:
            raise StoreUnavailable(
                f"there is no review store at {path}" + (" (an empty file)" if kind == "empty" else "")
            )
        if kind == "other" and not own_place:
            raise StoreUnavailable(
                f"{path} is not a Stet review store (not an SQLite database); it was left as it is. "
                "Point --db / STET_DB at a Stet store, or leave them out to use the workspace's .stet/stet.db."
            )
        try:
            if create:
                prepare_folder(path)
        except OSError as exc:
            raise unavailable(path, exc) from None
        try:
            conn, settled = await cls._connect(path, roots)
        except sqlite3.DatabaseError as exc:
            if not _is_corrupt(exc):
                raise unavailable(path, exc) from None
            if not quarantine:
                raise StoreUnavailable(
                    f"the review store {path} is damaged ({exc}); nothing was changed. Start the editor (or "
                    "`stet serve`) or run `stet doctor --fix`: Stet moves it aside, never deleting it, and starts "
                    "a fresh one."
                ) from None
            folder = quarantine_store(path)
            notice = (
                f"Stet found its review database damaged ({exc}) and moved it to {folder}; "
                f"nothing was deleted. A fresh review store was started."
            )
            try:
                prepare_folder(path)
                conn, settled = await cls._connect(path, roots)
            except (OSError, sqlite3.DatabaseError) as exc2:
                raise unavailable(path, exc2) from None
        except OSError as exc:
            raise unavailable(path, exc) from None
        except StoreError as exc:
            raise unavailable(path, exc) from None
        return OpenResult(cls(conn, path, settled), notice)

    @staticmethod
    async def _connect(path: str, roots: list[str]) -> tuple[aiosqlite.Connection, Roots]:
        conn = await aiosqlite.connect(path, isolation_level=None)
        try:
            await conn.execute(sql.BUSY_TIMEOUT.format(ms=BUSY_TIMEOUT_MS))
            rows = await conn.execute_fetchall(sql.QUICK_CHECK)
            verdict = [r[0] for r in rows]
            if verdict != ["ok"]:
                err = sqlite3.DatabaseError("; ".join(map(str, verdict[:3])))
                err.sqlite_errorname = "SQLITE_CORRUPT"
                raise err
            await Store._check_version(conn, path)  # before anything writes to a newer Stet's file
            await Store._check_ours(conn, path)  # never migrate someone else's database
            await conn.execute(sql.WAL)
            await conn.execute(sql.SYNC_FULL)
            await conn.execute(sql.FOREIGN_KEYS)
            settled = await Store._migrate(conn, roots)
        except BaseException:
            await conn.close()
            raise
        return conn, settled

    @staticmethod
    async def _check_version(conn: aiosqlite.Connection, path: str) -> None:
        version = await _int(conn, sql.USER_VERSION)
        if version > SCHEMA_VERSION:
            raise StoreUnavailable(
                f"the review store {path} was written by a newer Stet (schema {version}, this one "
                f"knows {SCHEMA_VERSION}). Upgrade Stet (pip install -U stet-lsp); the store was left as it is."
            )

    @staticmethod
    async def _check_ours(conn: aiosqlite.Connection, path: str) -> None:
        if await _int(conn, sql.USER_VERSION) != 0:
            return
        rows = list(await conn.execute_fetchall(sql.SOME_TABLES))
        if rows:
            names = ", ".join(str(r[0]) for r in rows)
            raise StoreUnavailable(
                f"{path} is an SQLite database of something else (tables {names}), not a Stet review store; it was "
                "left as it is. Point --db / STET_DB at a Stet store."
            )

    @staticmethod
    async def _migrate(conn: aiosqlite.Connection, roots: list[str]) -> Roots:
        """Bring the schema up to date in one transaction (its paths made relative to `roots`
        with it, at PATHS_RELATIVE), then settle where this process's roots are (relocation.py).
        Returns the roots the store reads and writes paths at."""
        raw = SqliteRaw(conn._conn)  # translates nothing: the values as they are stored

        def run() -> Roots:
            if _version(raw) != SCHEMA_VERSION:
                raw.begin(True, False)
                try:
                    # Another process may have migrated while we waited for the write lock.
                    version = _version(raw)
                    for number in range(version, SCHEMA_VERSION):
                        for statement in MIGRATIONS[number]:
                            raw.execute(statement)
                        if number + 1 == PATHS_RELATIVE:
                            relocation.first(raw, SQLITE, roots, relocation.as_written)
                    raw.execute(sql.SET_USER_VERSION.format(version=SCHEMA_VERSION))
                    raw.commit(True, False)
                except BaseException:
                    raw.rollback(False)
                    raise
            return relocation.settle(raw, SQLITE, roots)

        settled: Roots = await conn._execute(run)  # type: ignore[no-untyped-call]
        return settled

    async def close(self) -> None:
        async with self._lock:
            await self.conn.close()

    def stop_thread(self) -> None:
        """Stop the connection's worker thread now, without waiting for the event loop.

        aiosqlite's thread is not a daemon: a process whose loop ended without `close()`
        (the client went away, an exception) would never exit."""
        self.conn.stop()

    async def data_version(self) -> int:
        return int((await self._read(sql.DATA_VERSION))[0][0])

    async def next_change(self, version: int, timeout: float) -> int:
        """`data_version` once it is no longer `version` (another connection committed), or as it
        is after `timeout` seconds. SQLite sends no notification: it is read every CHANGE_POLL
        seconds, one cheap read however many wait behind the caller."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while True:
            now = await self.data_version()
            left = end - loop.time()
            if now != version or left <= 0:
                return now
            await asyncio.sleep(min(CHANGE_POLL, left))

    async def integrity(self) -> list[str]:
        return [r[0] for r in await self._read(sql.INTEGRITY_CHECK)]


def _version(raw: SqliteRaw) -> int:
    row = raw.execute(sql.USER_VERSION).fetchone()
    return int(row[0]) if row else 0


def _uri(path: str) -> str:
    from pathlib import Path

    return Path(os.path.realpath(path)).as_uri()


async def _int(conn: aiosqlite.Connection, statement: str) -> int:
    rows = list(await conn.execute_fetchall(statement))
    return int(rows[0][0])
