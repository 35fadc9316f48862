"""The store's own errors, the same whichever engine raised them: the engines turn sqlite3's and
psycopg's errors into these at their boundary (sqlite.py, pgconn.py), so nothing above the raw
connection knows either library. Each carries the engine's message, without credentials."""

from __future__ import annotations


class StoreError(Exception):
    """A statement failed (the store is unreachable, full, damaged...)."""


class ConstraintError(StoreError):
    """A constraint met: a unique key (an op id, a hunk id used twice), a foreign key, NOT NULL."""


class Busy(StoreError):
    """Other processes hold the write lock (SQLite, after busy_timeout): worth trying again."""
