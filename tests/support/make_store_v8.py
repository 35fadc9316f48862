"""Makes tests/support/fixtures/store-v8.tar.gz: a workspace and its review store written by Stet
at schema 8 (commit 93189a1, the last version that stored absolute paths), for the migration
tests (tests/e2e/test_store_schema8_migration.py, tests/crash/test_migration_crash.py).

    git archive 93189a1 server | tar -x -C /tmp/stet-v8
    python tests/support/make_store_v8.py --source /tmp/stet-v8/server
    python tests/support/make_store_v8.py --source /tmp/stet-v8/server --pg URL   # store-v8-pg.tar.gz

With `--pg URL` (a PostgreSQL cluster, as .ci/pg-cluster prints it) the review is in a fresh
database of that cluster instead, and the archive holds its dump (`dump.sql`, plain INSERTs) and
the host name that version named its checkout with (`host`).

It runs that version's own `stet` (PYTHONPATH=SOURCE) in ROOT, a fixed folder (its paths are in
the store, absolute), through tests/support/scenario.py (what the review holds), and last an
accept killed after its commit (accepted, its edit journaled and not made). `expected.json` in
the archive holds what that version answered, at ROOT; the proposals (a.diff, files.json,
d.diff) are kept beside it, to be sent again."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from support.scenario import Run, build, kill_an_accept  # noqa: E402

ROOT = Path("/tmp/stet-store-v8/app")
HERE = Path(__file__).resolve().parent
OUT = HERE / "fixtures" / "store-v8.tar.gz"


def runner(source: str, db: str | None) -> Run:
    """That version's `stet`, in ROOT (its store: `db`, else the workspace's own)."""

    def run(*args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
        full = {k: v for k, v in os.environ.items() if not k.startswith("STET_")}
        full.update({"PYTHONPATH": source, "STET_RESIDENT": "off", "NO_COLOR": "1", **(env or {})})
        if db is not None:
            full["STET_DB"] = db
        p = subprocess.run([sys.executable, "-m", "stet", *args], cwd=ROOT, env=full, capture_output=True, text=True)
        if check and p.returncode != 0:
            raise SystemExit(f"stet {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
        return p

    return run


def _database(admin: str) -> str:
    """A fresh database of the cluster, for the review."""
    import psycopg

    from support.engines import with_database

    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP DATABASE IF EXISTS stet_v8_fixture WITH (FORCE)")
        conn.execute("CREATE DATABASE stet_v8_fixture")
    return with_database(admin, "stet_v8_fixture")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--source", required=True, help="the `server` folder of Stet at 93189a1")
    ap.add_argument("--pg", help="a PostgreSQL cluster's url: the review in a database of it")
    args = ap.parse_args()
    db = None if args.pg is None else _database(args.pg)
    run = runner(os.path.abspath(args.source), db)
    if ROOT.parent.exists():
        shutil.rmtree(ROOT.parent)
    expected = build(ROOT, run)
    kill_an_accept(run, expected)
    names = ["expected.json", "a.diff", "files.json", "d.diff", "links.diff"]  # (the proposals, to send again)
    if db is None:
        import sqlite3

        conn = sqlite3.connect(ROOT / ".stet" / "stet.db")  # the WAL into the file: one file to keep
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.close()
        out = OUT
    else:
        dump = subprocess.run(
            ["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--dbname", db],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        (ROOT.parent / "dump.sql").write_text(dump)
        (ROOT.parent / "host").write_text(socket.gethostname())
        names += ["dump.sql", "host"]
        out = OUT.with_name("store-v8-pg.tar.gz")
    (ROOT.parent / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True))
    out.parent.mkdir(exist_ok=True)
    with tarfile.open(out, "w:gz") as tar:
        tar.add(ROOT, arcname="app")
        for name in names:
            tar.add(ROOT.parent / name, arcname=name)
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
