"""Shared pieces of the capture tests: a git repository an agent works in, the scripted agent,
and reading the store's state."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

from support.clitools import commit_all, make_repo, stet_json
from support.scripted_agent import A_BASE, CHECK, R_BASE

AGENT = [sys.executable, str(Path(__file__).parent / "scripted_agent.py")]
B_BASE = "alpha\nbeta\ngamma\n"
OLD = "to be deleted\n"


def agent_repo(root: Path) -> Path:
    """A git repository with the files the scripted agent works on, committed."""
    make_repo(root)
    for name, text in (("a.py", A_BASE), ("b.txt", B_BASE), ("old.txt", OLD), ("r.txt", R_BASE), ("check.py", CHECK)):
        with open(root / name, "w", newline="") as f:
            f.write(text)
    commit_all(root)
    return root


def hunks(root: Path, *args: str) -> list[dict]:
    return stet_json("status", "--all", *args, cwd=root)["hunks"]


def kinds(hs: list[dict]) -> list[tuple[str, str, str]]:
    """(kind, file name, status) of each hunk, sorted."""
    return sorted((h["kind"], Path(h["uri"]).name, h["status"]) for h in hs)


def captures(db: Path) -> list[tuple[str, str]]:
    """(id, state) of every capture journal in the store."""
    if not db.exists():
        return []
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT id, state FROM captures ORDER BY lsn").fetchall()
    except sqlite3.OperationalError:
        return []
    finally:
        conn.close()


def duplicates(hs: list[dict]) -> list[tuple]:
    """Changes that more than one live hunk (not superseded) stands for."""
    seen: dict[tuple, int] = {}
    for h in hs:
        if h["status"] == "superseded":
            continue
        key = (h["uri"], h["kind"], h["newUri"], h["oldText"], h["newText"])
        seen[key] = seen.get(key, 0) + 1
    return [k for k, n in seen.items() if n > 1]


def review_summary(db: Path) -> tuple:
    """What a capture may add: proposals, hunks (id, status, version, kept) and capture journals.
    Derived marks (a hunk's inFile, positions) are left out: opening the store may record them."""
    if not db.exists():
        return (None,)
    conn = sqlite3.connect(db)
    try:
        return (
            conn.execute("SELECT COUNT(*) FROM proposals").fetchone()[0],
            tuple(conn.execute("SELECT id, status, version, kept FROM hunks ORDER BY id").fetchall()),
            conn.execute("SELECT COUNT(*) FROM captures").fetchone()[0],
        )
    finally:
        conn.close()


def kept_contents(root: Path) -> list[str]:
    """The hashes of the contents kept under .stet/snapshots/: one file each, or in a pack (its
    index, read as the format says: the contents, an index line, that line's offset in hex)."""
    folder = root / ".stet" / "snapshots"
    out: list[str] = []
    for path in sorted(folder.rglob("*")) if folder.exists() else []:
        if path.is_file() and path.parent.name == "packs" and path.name.endswith(".pack"):
            data = path.read_bytes()
            out += list(json.loads(data[int(data[-16:], 16) : -16]))
        elif path.is_file():
            out.append(path.name)
    return out
