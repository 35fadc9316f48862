"""PostgreSQL under the store's transaction code (link.py): `PgRaw` over psycopg 3's
synchronous connection, run on the store's own thread as aiosqlite runs sqlite3 (`PgLink`),
each hop sent in pipeline mode: one round trip to the server for BEGIN, the queued writes and
the read that ends the hop. Its statements are pg_sql.POSTGRES. Why psycopg 3 and this way:
README, "Dependencies" (benchmarks/pg_drivers.py measures it).

What PostgreSQL does its own way, each said once here:
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
- Paths cross the store's boundary here: stored relative to the roots, read at this checkout's
  (roots.py), as SQLite's do (sqlite_link.py).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import psycopg
import psycopg.pq

from ..errors import StoreUnavailable
from . import pg_sql as sql
from . import relocation
from .errors import ConstraintError, StoreError
from .link import Params, Raw, Row
from .pg_schema import MIGRATIONS, POSTGRES_MIGRATIONS
from .pg_sql import COMMIT_WRITE, LOCK, POSTGRES
from .pgurl import mask, shown
from .roots import DOC_COLUMNS, FIRST, URI_COLUMNS, Roots, prefix_of
from .schema import PATHS_RELATIVE, SCHEMA_VERSION

T = TypeVar("T")


def one_line(text: str) -> str:
    """libpq's messages span lines (a hint on the next, tab-indented): one line, for a message
    shown in an editor or logged."""
    return " ".join(text.split())


def store_error(exc: psycopg.Error, url: str) -> StoreError:
    """A psycopg error as the store's own (masked: no password)."""
    text = one_line(mask(str(exc), url)) or type(exc).__name__
    if isinstance(exc, psycopg.IntegrityError):
        return ConstraintError(text)
    return StoreError(f"PostgreSQL: {text}")


class _Cursor:
    """Rows with this checkout's uris (roots.py); the reader is known once the rows came (in
    pipeline mode the columns are described only then)."""

    def __init__(self, cur: psycopg.Cursor[Any], raw: PgRaw, roots: Roots | None):
        self._cur, self._raw, self._roots = cur, raw, roots

    def _rows(self, rows: list[Row]) -> list[Row]:
        read = None if self._roots is None else self._roots.reader(self._cur.description)
        return rows if read is None else list(map(read, rows))

    def fetchall(self) -> list[Row]:
        with self._raw.errors():
            rows = self._cur.fetchall()
        return self._rows(rows)

    def fetchone(self) -> Row | None:
        with self._raw.errors():
            r = self._cur.fetchone()
        return None if r is None else self._rows([r])[0]

    def fetchmany(self, size: int) -> list[Row]:
        with self._raw.errors():
            rows = self._cur.fetchmany(size)
        return self._rows(rows)

    def close(self) -> None:
        self._cur.close()

    def __iter__(self) -> Iterator[Row]:
        return iter(self.fetchall())


class PgRaw:
    """The store's Raw over psycopg (autocommit: the store sends BEGIN and COMMIT itself).
    Used on the store's one thread only. `checkout`: this checkout's id ("host:root"); `roots`:
    where paths are read and written (None until the open settled them: nothing translated)."""

    def __init__(self, url: str, checkout: str):
        self.url = url
        self.checkout = checkout
        self.roots: Roots | None = None
        self.conn: psycopg.Connection[Any] | None = None

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
            conn.execute(sql.SET_CHECKOUT, (self.checkout,))
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

    def execute(self, sql: str, args: Params = ()) -> _Cursor:
        conn = self._live()
        roots = self.roots
        values = tuple(args) if roots is None else roots.params(args)
        with self.errors():
            return _Cursor(conn.execute(sql, values), self, roots)

    def executemany(self, sql: str, rows: Iterable[Params]) -> None:
        conn = self._live()
        roots = self.roots
        values = [tuple(r) if roots is None else roots.params(r) for r in rows]
        with self.errors():
            conn.cursor().executemany(sql, values)

    def begin(self, write: bool, derived: bool) -> None:
        """A write takes the writers' lock at once (the next ids are known then); a derived
        record is committed without waiting for the disk. A read is one snapshot."""
        conn = self._live()
        with self.errors():
            if not write:
                conn.execute(sql.BEGIN_READ)
                return
            conn.execute(sql.BEGIN_WRITE)
            conn.execute(LOCK)
            if derived:
                conn.execute(sql.DERIVED)

    def commit(self, write: bool, derived: bool) -> None:
        conn = self._live()
        with self.errors():
            if write:
                conn.execute(COMMIT_WRITE)
            conn.execute(sql.COMMIT)

    def rollback(self, derived: bool) -> None:
        if not self.in_transaction:
            return
        with self.errors():
            self._live().execute(sql.ROLLBACK)


class _Errors:
    """Raise a psycopg error as the store's own (see store_error)."""

    def __init__(self, url: str):
        self.url = url

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> None:
        if isinstance(exc, psycopg.Error):
            raise store_error(exc, self.url) from None


class PgLink:
    """Every call runs on the store's one thread, as aiosqlite's do for SQLite: a hop is one
    pipeline (one round trip for all its statements)."""

    def __init__(self, url: str, checkout: str):
        self.raw = PgRaw(url, checkout)
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="stet-pg")

    def set_roots(self, roots: Roots) -> None:
        self.raw.roots = roots

    async def hop(self, fn: Callable[[Raw], T]) -> T:
        return await self.call(fn)

    async def call(self, fn: Callable[[PgRaw], T]) -> T:
        raw = self.raw

        def hop() -> T:
            if not raw.in_transaction:
                raw.connect()  # again, when PostgreSQL restarted or the network came back
            conn = raw._live()
            with raw.errors(), conn.pipeline():
                return fn(raw)

        return await asyncio.get_running_loop().run_in_executor(self._pool, hop)

    def _close_now(self) -> None:
        if self.raw.conn is not None:
            self.raw.conn.close()

    async def close(self) -> None:
        try:
            await asyncio.get_running_loop().run_in_executor(self._pool, self._close_now)
        finally:
            self._pool.shutdown(wait=False)

    def stop(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)


def migrate(raw: PgRaw, where: str, uris: list[str]) -> None:
    """Bring the schema to SCHEMA_VERSION in one transaction, under the writers' lock (two
    processes opening a new store at once: one migrates, the other finds it done). `uris`: the
    roots of the checkout that migrates (schema.PATHS_RELATIVE relocates to them)."""
    conn = raw._live()
    with raw.errors():
        conn.execute(sql.BEGIN_WRITE)
        try:
            conn.execute(LOCK)
            ours = conn.execute(sql.HAS_VERSION).fetchone()
            if not (ours and ours[0]):
                others = conn.execute(sql.SOME_TABLES).fetchall()
                if others:
                    names = ", ".join(str(r[0]) for r in others)
                    raise StoreUnavailable(
                        f"{where} holds tables of something else ({names}), not a Stet review store; it was left "
                        "as it is. Point --db / STET_DB at an empty database (or schema) for Stet."
                    )
                for statement in sql.MAKE_VERSION:
                    conn.execute(statement)
            row = conn.execute(sql.VERSION).fetchone()
            version, pg_version = (int(row[0]), int(row[1])) if row else (0, 0)
            if version > SCHEMA_VERSION or pg_version > len(POSTGRES_MIGRATIONS):
                raise StoreUnavailable(
                    f"the review store {where} was written by a newer Stet (schema {version}, this one knows "
                    f"{SCHEMA_VERSION}). Upgrade Stet (pip install -U stet-lsp); the store was left as it is."
                )
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    conn.execute(statement)
            for number in range(pg_version, len(POSTGRES_MIGRATIONS)):
                for statement in POSTGRES_MIGRATIONS[number]:
                    conn.execute(statement)
            if version < PATHS_RELATIVE <= SCHEMA_VERSION and uris:
                # After PostgreSQL's own migrations: a checkout's rows are told apart by then.
                first = prefix_of(uris[0])
                _texts_as_read_before(raw, first)
                relocation.first(raw, POSTGRES, uris, lambda kind, value: _as_read_before(kind, value, first))
            if (version, pg_version) != (SCHEMA_VERSION, len(POSTGRES_MIGRATIONS)):
                conn.execute(sql.SET_VERSION, (SCHEMA_VERSION, len(POSTGRES_MIGRATIONS)))
            conn.execute(sql.COMMIT)
        except BaseException:
            if not conn.closed:
                conn.execute(sql.ROLLBACK)
            raise


def _as_read_before(kind: str, value: str, prefix: str) -> str:
    """A value as schema 8 read it at this checkout (`prefix`: its first root's): it translated
    a text that started with `stet-repo:///`, and in a JSON-like text every quoted one."""
    if value.startswith(FIRST):
        return prefix + value[len(FIRST) :]
    if value[:1] in "{[":
        return value.replace('"' + FIRST, '"' + prefix)
    return value


def _texts_as_read_before(raw: PgRaw, prefix: str) -> None:
    """Before paths were tagged (schema 8), every text was translated like a path: one starting
    with the checkout's root uri, or holding it quoted in a JSON-like text (a hunk's context), was
    stored with `stet-repo:///` and read back at the reader's root. Paths keep that form
    (relocation.py brings them to this version's); other texts are put back as this checkout
    read them, and are never translated again."""
    columns = raw.execute(sql.TEXT_COLUMNS).fetchall()
    for table, column in columns:
        if column in URI_COLUMNS or column in DOC_COLUMNS or table in ("roots", "stet_checkouts", "stet_repository"):
            continue
        rows = raw.execute(sql.TEXTS_LIKE.format(table=table, column=column), ("%" + FIRST + "%",)).fetchall()
        for ctid, value in rows:
            new = _as_read_before("text", value, prefix)
            if new != value:
                raw.execute(sql.SET_TEXT.format(table=table, column=column), (new, ctid))


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
                    await conn.execute(sql.LISTEN)
                    schema = (await (await conn.execute(sql.SCHEMA)).fetchone() or ("",))[0]
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
