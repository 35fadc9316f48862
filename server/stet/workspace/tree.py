"""Which files a workspace holds, by path relative to its root: git's view when the root is in
a git work tree (ignored files and untracked build output left out), else every regular file
but build output (Python's bytecode: `__pycache__/`, `*.pyc`, `*.pyo`). Stet's own folders and
git's are never content: `.stet`, `.git`, and any git folder (one holding HEAD, objects/ and
refs/, as git recognises a repository), whatever its name."""

from __future__ import annotations

import os

from . import git

OWN = (".git", ".stet")


def is_own(rel: str) -> bool:
    """Is this path (relative, with / separators) inside `.git` or `.stet`?"""
    return any(part in OWN for part in rel.split("/"))


def is_git_folder(path: str) -> bool:
    """Does the folder `path` hold a repository, as git tells one (HEAD, objects/, refs/)?"""
    return (
        os.path.lexists(os.path.join(path, "HEAD"))
        and os.path.isdir(os.path.join(path, "objects"))
        and os.path.isdir(os.path.join(path, "refs"))
    )


def in_git_folder(root: str, rel: str, seen: dict[str, bool] | None = None) -> bool:
    """Is `rel` (relative to `root`) a git folder, or inside one? `seen` caches the answers
    for folders across calls."""
    seen = {} if seen is None else seen
    parts = rel.split("/")
    for n in range(1, len(parts) + 1):
        folder = "/".join(parts[:n])
        if folder not in seen:
            seen[folder] = is_git_folder(os.path.join(root, folder))
        if seen[folder]:
            return True
    return False


def is_text_name(rel: str) -> bool:
    """Is the name UTF-8? (Other bytes come in as surrogates: see `shown`.)"""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(rel: str) -> str:
    """A name as it can be printed: bytes that are not UTF-8 as \\xNN."""
    return rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def under(rel: str, prefixes: list[str]) -> bool:
    """Is `rel` one of `prefixes` or inside one of them ("" : everything)?"""
    return any(p == "" or rel == p or rel.startswith(p.rstrip("/") + "/") for p in prefixes)


def is_build_output(rel: str) -> bool:
    """Is this path Python's bytecode (git.BUILD_OUTPUT, without git)?"""
    parts = rel.split("/")
    return "__pycache__" in parts[:-1] or parts[-1].endswith((".pyc", ".pyo"))


def files(root: str) -> list[str]:
    """Every file of the workspace rooted at `root` (relative paths, sorted)."""
    top = git.toplevel(root)
    if top is not None:
        inside = os.path.relpath(root, top)
        names = git.listed(top)
        if inside != ".":
            prefix = inside.replace(os.sep, "/") + "/"
            names = [n[len(prefix) :] for n in names if n.startswith(prefix)]
        seen: dict[str, bool] = {}
        return sorted(n for n in names if not is_own(n) and not in_git_folder(root, n, seen))
    out = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [
            d
            for d in dirs
            if d not in OWN
            and d != "__pycache__"
            and not os.path.islink(os.path.join(folder, d))
            and not is_git_folder(os.path.join(folder, d))
        ]
        for name in names:
            rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
            if not is_build_output(rel):
                out.append(rel)
    return sorted(out)
