"""A PostgreSQL cluster of one test's own (.ci/pg-cluster in a folder of its own), for what the
shared cluster (STET_TEST_PG) must not be put through: down when a server starts, roles and
grants that exist cluster-wide. It listens on a Unix socket in its folder only; initdb takes
a second or two. Needs what the shared cluster needs (its binaries), so it skips or fails
as the engine fixture does when STET_TEST_PG is unset."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from .engines import cluster

SCRIPT = Path(__file__).resolve().parents[2] / ".ci" / "pg-cluster"


class PrivateCluster:
    def __init__(self) -> None:
        cluster()  # skip (or fail under STET_REQUIRE_PG=1) where PostgreSQL is not set up
        # Under /tmp, not pytest's tmp_path: the cluster may run as `nobody` (as root), who
        # cannot enter pytest's 0700 folders; and a socket path must stay short.
        self.folder = Path(tempfile.mkdtemp(prefix="stet-pg-"))
        self.admin = ""

    def _run(self, action: str) -> str:
        done = subprocess.run(
            [str(SCRIPT), action, str(self.folder)], check=True, capture_output=True, text=True, timeout=180
        )
        return done.stdout.strip()

    def start(self) -> str:
        """Start it (made on first use); returns the superuser's url to its `postgres` database."""
        self.admin = self._run("start")
        return self.admin

    def stop(self) -> None:
        self._run("stop")

    def url(self, database: str, user: str | None = None) -> str:
        """The url of `database` in this cluster, as `user` (default: the superuser)."""
        parts = urlsplit(self.admin)
        netloc = parts.netloc if user is None else f"{user}@"
        return urlunsplit(parts._replace(netloc=netloc, path="/" + database))

    def remove(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
