"""What the engine-neutral transaction code (tx.py) needs of an engine: a raw connection used on
the store's own thread, and a link that runs a function there in one hop. SQLite's are in
sqlite_link.py, PostgreSQL's in pgconn.py; both raise only the store's errors (errors.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

from .roots import Roots

Row = tuple[Any, ...]
Params = Iterable[Any]
T = TypeVar("T")


class Cursor(Protocol):
    def fetchall(self) -> list[Row]: ...
    def fetchone(self) -> Row | None: ...
    def fetchmany(self, size: int) -> list[Row]: ...
    def close(self) -> None: ...
    def __iter__(self) -> Iterator[Row]: ...


class Raw(Protocol):
    """One connection, used on one thread. `begin`, `commit` and `rollback` are the engine's own
    (SQLite: BEGIN IMMEDIATE and synchronous=NORMAL for a derived record; PostgreSQL: the
    writers' lock, the sequences and the notification)."""

    @property
    def in_transaction(self) -> bool: ...
    def execute(self, sql: str, args: Params = ()) -> Cursor: ...
    def executemany(self, sql: str, rows: Iterable[Params]) -> None: ...
    def begin(self, write: bool, derived: bool) -> None: ...
    def commit(self, write: bool, derived: bool) -> None: ...
    def rollback(self, derived: bool) -> None: ...


class Link(Protocol):
    def set_roots(self, roots: Roots) -> None:
        """The roots paths are read and written at from now on (roots.py)."""
        ...

    async def hop(self, fn: Callable[[Raw], T]) -> T:
        """Run `fn` on the connection's thread (one hop, however many statements it sends)."""
        ...
