"""The HEAD of each git work tree of a workspace when Stet last looked for what a commit keeps
(review/commit_keeps.py): `heads-seen` in Stet's folder, `top\\0head` lines. A hint only: what a
commit decides is logged once by its op id whatever this says; it spares a process (and `stet
status`'s glance) the look when HEAD did not move. Light: `stet status` reads it without the
review."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import StetError
from ..workspace import git, own

NAME = "heads-seen"
OFF = frozenset({"off", "0", "false", "no"})  # STET_COMMIT_KEEPS, and git config stet.commitKeeps
LIMIT = 64 * 1024


def home_of(roots: list[str]) -> str:
    """Stet's folder in the workspace, as session.open_review names it."""
    return os.path.join(roots[0], own.STORE_DIR)


def read(home: str) -> dict[str, str]:
    try:
        with own.folder(home, create=False) as fd:
            data = own.read_file(fd, NAME, os.path.join(home, NAME), LIMIT)
    except (StetError, OSError):
        return {}
    out: dict[str, str] = {}
    for line in (data or b"").decode("utf-8", "surrogateescape").splitlines():
        top, _, head = line.partition("\0")
        if head:
            out[top] = head
    return out


def write(home: str, seen: dict[str, str]) -> None:
    """Best effort: a hint that cannot be written is looked for again."""
    text = "".join(f"{top}\0{head}\n" for top, head in sorted(seen.items()) if "\n" not in top)
    try:
        with own.folder(home, create=False) as fd:
            own.place(fd, NAME, text.encode("utf-8", "surrogateescape"))
    except (StetError, OSError):
        pass


def heads(roots: list[str]) -> dict[str, str | None]:
    """The git work tree's top of each root (not in git: left out), and its HEAD (None: no commit)."""
    out: dict[str, str | None] = {}
    for root in roots:
        top = git.toplevel(root)
        if top is not None and top not in out:
            try:
                out[top] = git.head(top)
            except git.GitError:
                out[top] = None
    return out


def moved(roots: list[str], env: Mapping[str, str]) -> bool:
    """Did HEAD move in a work tree of these roots since Stet last looked (and may a commit keep:
    not STET_COMMIT_KEEPS=off)?"""
    if env.get("STET_COMMIT_KEEPS", "").strip().lower() in OFF:
        return False
    now = heads(roots)
    if not now:
        return False
    seen = read(home_of(roots))
    return any(head is not None and seen.get(top) != head for top, head in now.items())
