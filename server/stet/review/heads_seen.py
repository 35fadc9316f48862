"""The HEAD of each root's git work tree when Stet last looked for what a commit keeps
(review/commit_keeps.py), kept in `heads-seen` in Stet's folder: per root, its work tree's top,
git folders, HEAD and a stamp of the files HEAD is read from (git.head_stamp). A hint only: what
a commit decides is logged once by its op id whatever this says. It spares the look when HEAD did
not move, without running git: the resident before each call, `stet status`'s glance. Light:
`stet status` reads it without the review."""

from __future__ import annotations

import os
from collections.abc import Mapping

from ..errors import StetError
from ..workspace import git, own

NAME = "heads-seen"
LIMIT = 64 * 1024
OFF = frozenset({"off", "0", "false", "no"})  # STET_COMMIT_KEEPS, and git config stet.commitKeeps
FIELDS = 6  # root, top, git folder, common folder, HEAD, stamp ("" for a root outside git)


def home_of(roots: list[str]) -> str:
    """Stet's folder in the workspace, as session.open_review names it."""
    return os.path.join(roots[0], own.STORE_DIR)


def read(home: str) -> dict[str, tuple[str, ...]]:
    """root -> (top, git folder, common folder, HEAD, stamp)."""
    try:
        with own.folder(home, create=False) as fd:
            data = own.read_file(fd, NAME, os.path.join(home, NAME), LIMIT)
    except (StetError, OSError):
        return {}
    out: dict[str, tuple[str, ...]] = {}
    for line in (data or b"").decode("utf-8", "surrogateescape").splitlines():
        fields = line.split("\0")
        if len(fields) == FIELDS:
            out[fields[0]] = tuple(fields[1:])
    return out


def write(home: str, seen: Mapping[str, tuple[str, ...]]) -> None:
    """Best effort: a hint that cannot be written is looked for again."""
    lines = [
        "\0".join((root, *rest)) + "\n"
        for root, rest in sorted(seen.items())
        if len(rest) == FIELDS - 1 and not any("\n" in f or "\0" in f for f in (root, *rest))
    ]
    try:
        with own.folder(home, create=False) as fd:
            own.place(fd, NAME, "".join(lines).encode("utf-8", "surrogateescape"))
    except (StetError, OSError):
        pass


def unchanged(entry: tuple[str, ...] | None) -> bool:
    """Is the root's HEAD where it was when recorded (by its stamp alone)?"""
    if entry is None:
        return False
    top, gitdir, common, _head, stamp = entry
    return not top or git.head_stamp(gitdir, common) == stamp


def moved(roots: list[str], env: Mapping[str, str]) -> bool:
    """May HEAD have moved in a root's work tree since Stet last looked (and may a commit keep:
    not STET_COMMIT_KEEPS=off)? Without running git."""
    if env.get("STET_COMMIT_KEEPS", "").strip().lower() in OFF:
        return False
    from ..workspace.paths import Workspace

    seen = read(home_of(roots))
    return not all(unchanged(seen.get(root)) for root in Workspace(roots).roots)
