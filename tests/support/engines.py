"""Both store engines for the contract tests: SQLite (a file in the test's folder) and
PostgreSQL (a fresh database per test in the cluster STET_TEST_PG names; .ci/run starts one).

Without STET_TEST_PG the PostgreSQL cases skip, saying so; with STET_REQUIRE_PG=1 (CI) a
missing cluster fails them instead."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ENGINES = ["sqlite", "postgresql"]


def cluster() -> str:
    url = os.environ.get("STET_TEST_PG")
    if not url:
        if os.environ.get("STET_REQUIRE_PG") == "1":
            pytest.fail("STET_REQUIRE_PG=1 but STET_TEST_PG names no PostgreSQL cluster (.ci/run starts one)")
        pytest.skip("PostgreSQL case: set STET_TEST_PG=postgresql://... (see .ci/pg-cluster) to run it")
    return url


def with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


class Databases:
    """Databases made for one test, dropped after it."""

    def __init__(self, admin: str):
        self.admin = admin
        self.made: list[str] = []

    def new(self) -> str:
        name = "stet_t_" + uuid.uuid4().hex[:12]
        self._admin(f'CREATE DATABASE "{name}"')
        self.made.append(name)
        return with_database(self.admin, name)

    def drop(self) -> None:
        for name in self.made:
            self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def _admin(self, sql: str, deadline: float = 60.0) -> None:
        """Run one statement on the cluster, again on a new connection while it restarts: the
        fault tests restart it for real, and another run on the same cluster may too."""
        import psycopg

        give_up = time.monotonic() + deadline
        while True:
            try:
                with psycopg.connect(self.admin, autocommit=True, connect_timeout=10) as conn:
                    conn.execute(sql)
                return
            except psycopg.OperationalError:
                if time.monotonic() > give_up:
                    raise
                time.sleep(0.5)


class Engine:
    """`db(root)`: where a test's store is, for this engine (each call in a PostgreSQL test
    gives the same database: one review shared by every checkout of the test)."""

    def __init__(self, name: str, databases: Databases | None):
        self.name = name
        self._databases = databases
        self._url: str | None = None

    @property
    def pg(self) -> bool:
        return self.name == "postgresql"

    def db(self, root: Path) -> str:
        if self._databases is None:
            return str(root / ".stet" / "stet.db")
        if self._url is None:
            self._url = self._databases.new()
        return self._url
