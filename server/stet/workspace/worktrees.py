"""The git worktree `stet run --worktree` makes for an agent: made, checked after the agent,
removed.

The agent works in it as the developer, so it can rewrite the worktree's `.git` file to name
a git folder of its own (whose config would have git run its programs, whose objects could
tell another story). So what git made is recorded when it is made, and after the agent,
before any git call in it, it must still be that: the same folder, a `.git` file naming the
same git folder (in the repository's `.git/worktrees/`), which names the same repository.
From then on git is told that git folder (`git.run(gitdir=...)`) and never reads `.git` again.
A worktree that fails the check is removed without running git in it.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from ..errors import StetError
from . import git, safe

_SMALL = 4096  # a `.git` file or a `commondir` file is one line


@dataclass(frozen=True)
class Made:
    path: str  # the worktree's folder (a real path)
    folder: tuple[int, int]  # its device and inode
    link: bytes  # its `.git` file, as git wrote it
    gitdir: str  # the git folder that file names, in the repository's .git/worktrees/ (a real path)
    gitdir_id: tuple[int, int]
    common: bytes  # that git folder's `commondir` file: which repository it belongs to


def make(top: str, path: str, rev: str) -> Made:
    """Add a worktree of the repository at `top` at `path` (at `rev`) and record what it is."""
    git.add_worktree(top, path, rev)
    path = os.path.realpath(path)
    link = safe.read_file(os.path.join(path, ".git"), _SMALL)
    named = _named(link)
    if named is None:
        raise git.GitError(f"git made a worktree at {path} without a .git file naming its git folder")
    gitdir = os.path.realpath(os.path.join(path, named))
    if not gitdir.startswith(os.path.join(git.common_dir(top), "worktrees") + "/"):
        raise git.GitError(f"git made the worktree's git folder outside the repository's: {gitdir}")
    folder, gitdir_id = _ident(path), _ident(gitdir)
    assert folder is not None and gitdir_id is not None  # just made
    common = safe.read_file(os.path.join(gitdir, "commondir"), _SMALL) or b""
    return Made(path, folder, link or b"", gitdir, gitdir_id, common)


def check(made: Made) -> str | None:
    """Why the worktree is no longer the one Stet made; None when it still is."""
    if _ident(made.path) != made.folder:
        return "its folder was replaced or removed"
    lost = f"its .git no longer names the git folder Stet made ({made.gitdir})"
    try:
        link = safe.read_file(os.path.join(made.path, ".git"), _SMALL)
    except (StetError, OSError) as exc:
        return f"{lost}: {exc.message if isinstance(exc, StetError) else exc}"
    if link != made.link:
        named = _named(link) if link is not None else None
        what = "it is gone" if link is None else f"it names {named}" if named else "it holds something else"
        return f"{lost}: {what}"
    if _ident(made.gitdir) != made.gitdir_id:
        return f"the git folder Stet made for it ({made.gitdir}) was replaced or removed"
    try:
        common = safe.read_file(os.path.join(made.gitdir, "commondir"), _SMALL) or b""
    except (StetError, OSError):
        common = None
    if common != made.common:
        return f"the git folder Stet made for it ({made.gitdir}) names another repository in its commondir file"
    return None


def discard(top: str, made: Made) -> None:
    """Remove a worktree that failed `check`, without running git in it: its folder and its
    git folder (each only while it is still the one made: a folder put in its place is not
    Stet's), then git's record of it in the repository at `top`, and the temporary folder."""
    # rmtree does not follow symlinks inside what it removes (shutil.rmtree.avoids_symlink_attacks).
    for where, ident in ((made.path, made.folder), (made.gitdir, made.gitdir_id)):
        if _ident(where) == ident:
            shutil.rmtree(where, ignore_errors=True)
    git.run(top, "worktree", "prune", ok=range(0, 256))
    parent = os.path.dirname(made.path)
    if os.path.basename(parent).startswith("stet-run-"):
        try:
            os.rmdir(parent)
        except OSError:
            pass


def _named(link: bytes | None) -> str | None:
    """The git folder a `.git` file names (`gitdir: PATH`), None when it names none."""
    if not link or not link.startswith(b"gitdir: "):
        return None
    return link[len(b"gitdir: ") :].rstrip(b"\r\n").decode("utf-8", "surrogateescape") or None


def _ident(path: str) -> tuple[int, int] | None:
    """The device and inode of the folder `path`, reached without following a symlink."""
    try:
        with safe.folder(path) as fd:
            st = os.fstat(fd)
    except (OSError, StetError):
        return None
    return st.st_dev, st.st_ino
