"""Where the review store is, and which folders are the workspace: --db, STET_DB, or walking up."""

from __future__ import annotations

import argparse
import os

from ..errors import StetError
from ..review.where import STORE_DIR, STORE_FILE, engine_of, find_store, root_of
from ..review.where import project_root as _project_root
from .call import Call


class Usage(StetError):
    """Bad usage: exit 2."""

    name = "Usage"


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
        roots = [root_of(db, cwd)]
    for root in roots:
        if not os.path.isdir(root):
            raise Usage(f"the workspace root {root} is not a folder")
    return db, [os.path.realpath(r) for r in roots]
