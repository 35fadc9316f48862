"""PostgreSQL under the store's Tx: a connection of the shape the Tx code was written for.

The transaction code (Tx: one hop per read, writes queued and sent with the next read or the
COMMIT) is the SQLite engine's, unchanged: it talks to a connection of the shape of Python's
sqlite3 one. Here that shape is `PgRaw`, over psycopg 3's synchronous connection, run on the
store's own thread exactly as aiosqlite runs sqlite3 (`PgConn`), each hop sent in pipeline
mode: one round trip to the server for BEGIN, the queued writes and the read that ends the
hop. Why psycopg 3 and this way: README, "Dependencies" (benchmarks/pg_drivers.py measures it).

What differs from SQLite, each said once here:
- A write transaction takes a transaction-level advisory lock for the repository right after
  BEGIN: writers are serialised, so lsns commit in their order and a follower reading
  "lsn > N" never misses a lower lsn committed later. Reads see a REPEATABLE READ snapshot.
- lsns and effect ids come from sequences (stet_lsn, stet_effect_id), advanced at COMMIT.
- Live sync: every write transaction NOTIFYs before it commits (delivered only if it
  commits); `data_version` counts the notifications a LISTEN connection received.
- The connection is made again when it was lost (PostgreSQL restarted, the network gone):
  the hop that found it lost fails with StoreUnavailable (nothing unknown is acknowledged),
  the next one reconnects.
- Credentials come only from the url, PGPASSFILE or the environment (libpq's own rules) and
  never appear in a message: `mask` is applied to every text that could carry the url.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import re
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
import psycopg.pq

from ..errors import StoreUnavailable
from .checkout import Checkout
from .rows import HUNK_COLUMNS, Row
from .schema import MIGRATIONS, POSTGRES_MIGRATIONS, SCHEMA_VERSION, for_postgres
from .tx import _NEXT_IDS, _AsRaised

CHANNEL = "stet"
# pg_advisory_xact_lock(key1, key2): key1 says "Stet's writers", key2 the repository (the schema).
_LOCK = "SELECT pg_advisory_xact_lock(1937007988, hashtext(current_schema()))"
# A sequence's last value is read with pg_sequence_last_value (NULL until first set), which the
# USAGE right allows, not as `SELECT last_value FROM stet_lsn`, which needs SELECT on it: the
# README's least-rights role has USAGE and UPDATE only.
_NEXT_IDS_PG = (
    "SELECT GREATEST((SELECT COALESCE(MAX(lsn), 0) FROM oplog), "
    "COALESCE(pg_sequence_last_value('stet_lsn'), 0)), "
    "GREATEST((SELECT COALESCE(MAX(id), 0) FROM effects), "
    "COALESCE(pg_sequence_last_value('stet_effect_id'), 0))"
)
# Sent with the COMMIT of a write: the sequences past every id this transaction used (the
# writers' lock is held, so nobody else moved them), and the notification to followers.
_COMMIT_WRITE = (
    "SELECT setval('stet_lsn', GREATEST(ids.l, 1), ids.l > 0), setval('stet_effect_id', GREATEST(ids.e, 1), ids.e > 0), "
    f"pg_notify('{CHANNEL}', current_schema()) FROM ({_NEXT_IDS_PG}) AS ids(l, e)"
)
MINE = "current_setting('stet.checkout')"  # this connection's checkout (set at connect)
# Statements whose PostgreSQL text is not a mechanical translation: what is each checkout's own
# (its file stamps; its effects: see also `translate`) is read and written for this one only.
_EXACT = {
    "INSERT OR REPLACE INTO file_stamps (uri, size, mtime_ns, hash) VALUES (?, ?, ?, ?)": (
        "INSERT INTO file_stamps (uri, size, mtime_ns, hash) VALUES (%s, %s, %s, %s) ON CONFLICT (checkout, uri) "
        "DO UPDATE SET size = EXCLUDED.size, mtime_ns = EXCLUDED.mtime_ns, hash = EXCLUDED.hash"
    ),
    "SELECT uri, size, mtime_ns, hash FROM file_stamps": (
        f"SELECT uri, size, mtime_ns, hash FROM file_stamps WHERE checkout = {MINE}"
    ),
}
# (Not scoped: "DELETE FROM file_stamps WHERE uri = ?" - a hunk of the file changed, so no
# checkout's stamp says any more when its hunks there were last judged: each judges again.)
# Whether an applied hunk is in the files is judged in each checkout: read from hunk_in_file.
_HUNK_COLUMNS_PG = HUNK_COLUMNS.replace(
    ", in_file, ",
    f", (SELECT f.in_file FROM hunk_in_file f WHERE f.hunk_id = hunks.id AND f.checkout = {MINE}), ",
)
_SAVE_HUNKS = (
    "UPDATE hunks SET status = ?, line = ?, applied_text = ?, feedback = ?, version = ?, "
    "decided_at = ?, lsn = ?, in_file = ?, problem = ?, kept = ? WHERE id = ?"
)
_ADD_HUNKS = f"INSERT INTO hunks ({HUNK_COLUMNS}) VALUES"
_PUT_IN_FILE = (
    f"INSERT INTO hunk_in_file (checkout, hunk_id, in_file) VALUES ({MINE}, %s, %s) "
    "ON CONFLICT (checkout, hunk_id) DO UPDATE SET in_file = EXCLUDED.in_file"
)


def mask(text: str, url: str | None = None) -> str:
    """`text` with every password it could carry replaced by ***: the url's (user:password@),
    a `password=` parameter, and the literal password wherever else it appears."""
    secrets = set()
    for u in [url] if url else []:
        parts = urlsplit(u)
        if parts.password:
            secrets.add(parts.password)
        secrets.update(m for m in re.findall(r"password=([^&\s]+)", parts.query))
    out = re.sub(r"(postgres(?:ql)?://[^:/@\s]*:)[^@\s]*@", r"\1***@", text)
    out = re.sub(r"(password=)[^&\s]+", r"\1***", out)
    for s in secrets:
        out = out.replace(s, "***")
    return out


def shown(url: str) -> str:
    """The url as Stet shows it: without its password."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    return mask(urlunsplit(parts._replace(netloc=netloc)), url)


@functools.lru_cache(maxsize=512)
def translate(sql: str) -> str:
    """SQLite's text of a store statement as PostgreSQL runs it."""
    done = _EXACT.get(sql)
    if done is not None:
        return done
    if sql == _NEXT_IDS:
        return _NEXT_IDS_PG
    out = sql
    if out.startswith("SELECT ") and HUNK_COLUMNS in out:
        out = out.replace(HUNK_COLUMNS, _HUNK_COLUMNS_PG)
    out = out.replace(" FROM effects WHERE ", f" FROM effects WHERE checkout = {MINE} AND ")
    out = out.replace(
        "UPDATE effects SET state = 'done' WHERE ", f"UPDATE effects SET state = 'done' WHERE checkout = {MINE} AND "
    )
    ignore = out.startswith("INSERT OR IGNORE INTO ")
    if ignore:
        out = "INSERT INTO " + out[len("INSERT OR IGNORE INTO ") :] + " ON CONFLICT DO NOTHING"
    return out.replace("%", "%%").replace("?", "%s")


def one_line(text: str) -> str:
    """libpq's messages span lines (a hint on the next, tab-indented): one line, for a message
    shown in an editor or logged."""
    return " ".join(text.split())


def _as_sqlite(exc: psycopg.Error, url: str) -> sqlite3.Error:
    """A psycopg error as the sqlite3 error the Tx code handles (masked: no password)."""
    text = one_line(mask(str(exc), url)) or type(exc).__name__
    if isinstance(exc, psycopg.IntegrityError):
        return sqlite3.IntegrityError(text)
    if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)):
        return sqlite3.OperationalError(f"PostgreSQL: {text}")
    return sqlite3.DatabaseError(f"PostgreSQL: {text}")


class _Cursor:
    """Rows with this checkout's uris (see checkout.py)."""

    def __init__(self, cur: psycopg.Cursor[Any], raw: PgRaw):
        self._cur, self._raw = cur, raw

    def fetchall(self) -> list[Row]:
        row = self._raw.checkout.row
        with self._raw.errors():
            return [row(r) for r in self._cur.fetchall()]

    def fetchone(self) -> Row | None:
        with self._raw.errors():
            r = self._cur.fetchone()
        return None if r is None else self._raw.checkout.row(r)

    def fetchmany(self, size: int) -> list[Row]:
        row = self._raw.checkout.row
        with self._raw.errors():
            return [row(r) for r in self._cur.fetchmany(size)]

    def close(self) -> None:
        self._cur.close()

    def __iter__(self) -> Iterator[Row]:
        return iter(self.fetchall())


class PgRaw:
    """The few calls of Python's sqlite3.Connection the store makes, over psycopg (autocommit:
    the store sends BEGIN and COMMIT itself, as it does to SQLite). Used on one thread only."""

    def __init__(self, url: str, checkout: Checkout):
        self.url = url
        self.checkout = checkout
        self.conn: psycopg.Connection[Any] | None = None
        self._derived = False
        self._writing = False

    def connect(self) -> None:
        if self.conn is not None and not self.conn.closed and not self.conn.broken:
            return
        if self.conn is not None:
            self.conn.close()
        kwargs: dict[str, Any] = {"autocommit": True}
        if "connect_timeout" not in self.url:
            kwargs["connect_timeout"] = 10
        with self.errors():
            conn = psycopg.connect(self.url, **kwargs)
            conn.execute("SELECT set_config('stet.checkout', %s, false)", (self.checkout.id,))
            self.conn = conn

    def backend_pid(self) -> int | None:
        conn = self.conn
        return None if conn is None or conn.closed else conn.info.backend_pid

    def _live(self) -> psycopg.Connection[Any]:
        self.connect()
        assert self.conn is not None
        return self.conn

    @property
    def in_transaction(self) -> bool:
        conn = self.conn
        if conn is None or conn.closed:
            return False
        return conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def errors(self) -> _Errors:
        return _Errors(self.url)

    def execute(self, sql: str, args: Iterable[Any] = ()) -> _Cursor:
        conn = self._live()
        with self.errors():
            if sql == "BEGIN IMMEDIATE":
                conn.execute("BEGIN")
                self._writing = True
                conn.execute(_LOCK)
                if self._derived:  # committed without waiting for the disk (see Store.write)
                    conn.execute("SET LOCAL synchronous_commit = off")
                return _Cursor(conn.cursor(), self)
            if sql == "BEGIN":
                self._writing = False
                return _Cursor(conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"), self)
            if sql == "COMMIT":
                if self._writing:
                    conn.execute(_COMMIT_WRITE)
                self._writing = False
                return _Cursor(conn.execute("COMMIT"), self)
            if sql == "ROLLBACK":
                self._writing = False
                return _Cursor(conn.execute("ROLLBACK"), self)
            if sql.startswith("PRAGMA synchronous="):
                self._derived = sql.endswith("NORMAL")
                return _Cursor(conn.cursor(), self)
            return _Cursor(conn.execute(translate(sql), self.checkout.params(args)), self)

    def executemany(self, sql: str, rows: Iterable[Iterable[Any]]) -> None:
        conn = self._live()
        params = self.checkout.params
        values = [params(r) for r in rows]
        with self.errors():
            cur = conn.cursor()
            cur.executemany(translate(sql), values)
            # hunks.in_file is written as SQLite writes it, but read from this checkout's row
            if sql == _SAVE_HUNKS:
                cur.executemany(_PUT_IN_FILE, [(r[10], r[7]) for r in values])
            elif sql.startswith(_ADD_HUNKS):
                cur.executemany(_PUT_IN_FILE, [(r[0], r[19]) for r in values if r[19] is not None])


class _Errors:
    """Raise a psycopg error as sqlite3's (see _as_sqlite)."""

    def __init__(self, url: str):
        self.url = url

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, psycopg.IntegrityError):
            # A unique key met (an op id, a hunk id used twice): raised as it is, as SQLite's
            # is by the statement that met it. In a pipeline it surfaces only at the hop's end.
            raise _AsRaised(sqlite3.IntegrityError(one_line(mask(str(exc), self.url)))) from None
        if isinstance(exc, psycopg.Error):
            raise _as_sqlite(exc, self.url) from None


class PgConn:
    """aiosqlite.Connection's shape over PgRaw: every call runs on the store's one thread, so
    the Tx code's hops (`on_thread`) work as they do with SQLite. A hop is one pipeline."""

    def __init__(self, url: str, checkout: Checkout):
        self._conn = PgRaw(url, checkout)
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="stet-pg")
        self._closing = threading.Event()

    async def _execute(self, fn: Callable[[PgRaw], Any], raw: PgRaw) -> Any:
        def hop() -> Any:
            if not raw.in_transaction:
                raw.connect()  # again, when PostgreSQL restarted or the network came back
            conn = raw._live()
            with raw.errors(), conn.pipeline():
                return fn(raw)

        return await asyncio.get_running_loop().run_in_executor(self._pool, hop)

    async def execute_fetchall(self, sql: str, args: Iterable[Any] = ()) -> list[Row]:
        values = tuple(args)
        rows: list[Row] = await self._execute(lambda raw: raw.execute(sql, values).fetchall(), self._conn)
        return rows

    async def execute(self, sql: str, args: Iterable[Any] = ()) -> None:
        values = tuple(args)
        await self._execute(lambda raw: raw.execute(sql, values), self._conn)

    def _close_now(self) -> None:
        if self._conn.conn is not None:
            self._conn.conn.close()

    async def close(self) -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(self._pool, self._close_now)
        finally:
            self._pool.shutdown(wait=False)

    def stop(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def migrate(raw: PgRaw, where: str) -> None:
    """Bring the schema to SCHEMA_VERSION in one transaction, under the writers' lock (two
    processes opening a new store at once: one migrates, the other finds it done)."""
    conn = raw._live()
    with raw.errors():
        conn.execute("BEGIN")
        try:
            conn.execute(_LOCK)
            ours = conn.execute("SELECT to_regclass('stet_schema') IS NOT NULL").fetchone()
            if not (ours and ours[0]):
                others = conn.execute(
                    "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() LIMIT 3"
                ).fetchall()
                if others:
                    names = ", ".join(str(r[0]) for r in others)
                    raise StoreUnavailable(
                        f"{where} holds tables of something else ({names}), not a Stet review store; it was left "
                        "as it is. Point --db / STET_DB at an empty database (or schema) for Stet."
                    )
                conn.execute("CREATE TABLE stet_schema (version BIGINT NOT NULL, pg_version BIGINT NOT NULL)")
                conn.execute("INSERT INTO stet_schema VALUES (0, 0)")
            row = conn.execute("SELECT version, pg_version FROM stet_schema").fetchone()
            version, pg_version = (int(row[0]), int(row[1])) if row else (0, 0)
            if version > SCHEMA_VERSION or pg_version > len(POSTGRES_MIGRATIONS):
                raise StoreUnavailable(
                    f"the review store {where} was written by a newer Stet (schema {version}, this one knows "
                    f"{SCHEMA_VERSION}). Upgrade Stet (pip install -U stet-lsp); the store was left as it is."
                )
            for number in range(version, SCHEMA_VERSION):
                for index, statement in enumerate(MIGRATIONS[number]):
                    conn.execute(for_postgres(number + 1, index, statement))
            for number in range(pg_version, len(POSTGRES_MIGRATIONS)):
                for statement in POSTGRES_MIGRATIONS[number]:
                    conn.execute(statement)
            if (version, pg_version) != (SCHEMA_VERSION, len(POSTGRES_MIGRATIONS)):
                conn.execute(
                    "UPDATE stet_schema SET version = %s, pg_version = %s",
                    (SCHEMA_VERSION, len(POSTGRES_MIGRATIONS)),
                )
            conn.execute("COMMIT")
        except BaseException:
            if not conn.closed:
                conn.execute("ROLLBACK")
            raise


class Listener:
    """LISTEN on its own connection: `version` grows with every commit of a write transaction
    to this repository, by any process (and once more each time it connects again, since
    notifications sent while it was away are lost). Like SQLite's data_version, it does not
    count this process's own commits."""

    def __init__(self, url: str, own: Callable[[], int | None] = lambda: None):
        self.url = url
        self.own = own  # the backend pid of this process's own writes: not news to it
        self.version = 0
        self.error: str | None = None
        self._task: asyncio.Task[None] | None = None
        self.changed = asyncio.Event()

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            try:
                await task
            except (asyncio.CancelledError, Exception):
                pass

    def _bump(self) -> None:
        self.version += 1
        self.changed.set()

    async def _run(self) -> None:
        delay = 0.2
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True, connect_timeout=10)
                try:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    schema = (await (await conn.execute("SELECT current_schema()")).fetchone() or ("",))[0]
                    self.error = None
                    self._bump()  # whatever was committed while nobody listened
                    delay = 0.2
                    async for note in conn.notifies():
                        if note.payload == schema and note.pid != self.own():
                            self._bump()
                finally:
                    await conn.close()
            except asyncio.CancelledError:
                raise
            except psycopg.Error as exc:
                self.error = one_line(mask(str(exc), self.url))
            await asyncio.sleep(delay)
            delay = min(delay * 2, 5.0)


def unreachable(url: str, exc: BaseException) -> StoreUnavailable:
    return StoreUnavailable(
        f"the review store {shown(url)} cannot be used: {one_line(mask(str(exc), url))}. Check that PostgreSQL is running "
        f"and reachable and that the url's user may use the database; Stet connects again by itself."
    )
