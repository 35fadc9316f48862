"""Where the review store is, and which folders are the workspace: --db, STET_DB, or walking up."""

from __future__ import annotations

import argparse
import os

from ..errors import StetError
from ..review.where import engine_of
from .call import Call

STORE_DIR = ".stet"
STORE_FILE = "stet.db"


class Usage(StetError):
    """Bad usage: exit 2."""

    name = "Usage"


def _up(start: str) -> list[str]:
    """`start` (symlinks resolved) and every folder above it."""
    folder = os.path.realpath(start)
    out = [folder]
    while (parent := os.path.dirname(folder)) != folder:
        out.append(parent)
        folder = parent
    return out


def find_store(start: str) -> str | None:
    """The nearest `.stet/stet.db` at or above `start`, like git finds `.git`."""
    for folder in _up(start):
        candidate = os.path.join(folder, STORE_DIR, STORE_FILE)
        if os.path.isfile(candidate):
            return candidate
    return None


def _project_root(start: str) -> str:
    """Where a new store goes: the enclosing git work tree, else the current folder."""
    folders = _up(start)
    for folder in folders:
        if os.path.exists(os.path.join(folder, ".git")):
            return folder
    return folders[0]


def locate(args: argparse.Namespace, create: bool, call: Call) -> tuple[str, list[str]]:
    """(database path, workspace roots) from --db / STET_DB / walking up; --root sets the roots.

    The first root is the one patch paths are relative to; more `--root`s are the other
    folders of a multi-root workspace (the store lives in the first one's .stet/). Without
    --root: the folder holding the store's `.stet/`, else (a store elsewhere, a PostgreSQL
    url) the enclosing git work tree, else the current folder.
    """
    db = getattr(args, "db", None) or call.env.get("STET_DB")
    roots = [call.path(r) for r in getattr(args, "root", None) or []]
    cwd = call.cwd
    if db and engine_of(db).shared:
        pass  # the shared store, named by its url; the workspace is --root, else the project
    elif db:
        db = call.path(db)
        if not create and not os.path.isfile(db):
            raise Usage(f"no review store at {db}")
    else:
        db = find_store(cwd)
        if db is None:
            if not create:
                raise Usage(
                    f"no Stet store found in {cwd} or above (looked for {STORE_DIR}/{STORE_FILE}). "
                    "Run this inside a workspace Stet has seen, or pass --db PATH (or set STET_DB)."
                )
            db = os.path.join(roots[0] if roots else _project_root(cwd), STORE_DIR, STORE_FILE)
    if not roots and engine_of(db).shared:
        roots = [_project_root(cwd)]
    elif not roots:
        # A store kept elsewhere (--db) holds paths relative to the root it is opened with: the
        # project's (the enclosing git work tree), as for PostgreSQL, whichever folder of it the
        # command runs in - not that folder, which would read them relative to itself.
        folder = os.path.dirname(db)
        roots = [os.path.dirname(folder) if os.path.basename(folder) == STORE_DIR else _project_root(cwd)]
    for root in roots:
        if not os.path.isdir(root):
            raise Usage(f"the workspace root {root} is not a folder")
    return db, [os.path.realpath(r) for r in roots]
