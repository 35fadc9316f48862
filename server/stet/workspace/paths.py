"""Workspace roots and uris: which paths Stet may touch at all.

A uri coming in (from an editor, an agent, a patch) goes through `Workspace.resolve`, which
resolves symlinks and refuses anything outside the roots, any uri that is not a local
`file:` uri, and Stet's and git's own folders (a component `.git` or `.stet`, and the store's
own files wherever they are): they are not content. A uri Stet already keeps (normalised
when it came in) is turned back into its path with `Workspace.path_of`, which resolves
nothing: the file is then opened without following symlinks (`safe`), so a symlink planted
on the way since is refused, never followed.
"""

from __future__ import annotations

import os
from urllib.parse import quote_from_bytes, unquote, urlsplit

from ..errors import InvalidParams, OutsideWorkspace


def uri_to_path(uri: str) -> str:
    if not isinstance(uri, str) or not uri:
        raise InvalidParams("a uri must be a non-empty string")
    if "\x00" in uri:
        raise OutsideWorkspace(f"refused {uri!r}: NUL in uri")
    parts = urlsplit(uri)
    if parts.scheme.lower() != "file":
        raise OutsideWorkspace(f"refused {uri}: only file: uris are accepted")
    if parts.netloc not in ("", "localhost"):
        raise OutsideWorkspace(f"refused {uri}: a file uri with a host ({parts.netloc}) is not local")
    path = unquote(parts.path)
    if not path.startswith("/") or "\x00" in path:
        raise OutsideWorkspace(f"refused {uri}: not an absolute path")
    return path


def path_to_uri(path: str) -> str:
    """`Path(path).as_uri()`: for an absolute, normal POSIX path (a real path: every root) the
    same words without pathlib, which a glance at the store (`stet status`) then never loads."""
    if os.sep == "/" and path[:1] == "/" and path[:2] != "//" and os.path.normpath(path) == path:
        return "file://" + quote_from_bytes(os.fsencode(path))  # as pathlib makes it
    from pathlib import Path

    return Path(path).as_uri()


# Folders that are never content, wherever they are in a workspace (compared case-insensitively:
# on a case-insensitive file system `.GIT` is `.git`).
PRIVATE_NAMES = frozenset({".git", ".stet"})


class Workspace:
    def __init__(self, roots: list[str]):
        self.roots = [os.path.realpath(r) for r in roots if r]
        self.private: set[str] = set()  # the store's own files and folders, when not in a .stet/
        self.private_prefixes: set[str] = set()  # the database's own files: stet.db, -wal, -shm...
        # path_of's answers: a review looks up every file with hunks before each command. Only
        # the roots and the private paths change them (set_roots, keep_out*: emptied there).
        self._paths: dict[str, str] = {}

    def set_roots(self, roots: list[str]) -> None:
        self.roots = [os.path.realpath(r) for r in roots if r]
        self._paths.clear()

    def keep_out(self, *paths: str) -> None:
        """Never treat these paths (files or folders, and what is inside them) as content."""
        self.private.update(os.path.realpath(p) for p in paths)
        self._paths.clear()

    def keep_out_store(self, db_path: str) -> None:
        """The store's files are not content, wherever it lives: the database and every file
        named after it (-wal, -shm, a rescued copy), its lock, its inbox and its quarantine."""
        db = os.path.realpath(db_path)
        folder = os.path.dirname(db)
        self.private_prefixes.add(db)
        self._paths.clear()
        self.keep_out(*(os.path.join(folder, n) for n in ("files.lock", "inbox", "quarantine")))

    def resolve(self, uri: str) -> str:
        """The real path behind `uri`, refused when outside every root or in Stet's or git's folders."""
        return self._inside(uri, os.path.realpath(uri_to_path(uri)))

    def path_of(self, uri: str) -> str:
        """The path of a uri Stet keeps (already normalised): nothing is resolved, the same
        checks as `resolve` are made on the path as it stands."""
        path = self._paths.get(uri)
        if path is None:
            path = self._inside(uri, os.path.normpath(uri_to_path(uri)))
            if len(self._paths) >= 100_000:  # bounded: uris come from agents too
                self._paths.clear()
            self._paths[uri] = path
        return path

    def _inside(self, uri: str, path: str) -> str:
        for root in self.roots:
            if path == root or path.startswith(root.rstrip("/") + "/"):
                rel = path[len(root) :].split("/")
                own = next((p for p in rel if p.casefold() in PRIVATE_NAMES), None)
                if own is not None:
                    raise OutsideWorkspace(
                        f"refused {uri}: {own}/ is {'git' if own.casefold() == '.git' else 'Stet'}'s own folder, not content"
                    )
                for private in self.private:
                    if path == private or path.startswith(private + "/"):
                        raise OutsideWorkspace(f"refused {uri}: {private} belongs to Stet's store, not content")
                for prefix in self.private_prefixes:
                    if path.startswith(prefix):
                        raise OutsideWorkspace(f"refused {uri}: it belongs to Stet's store {prefix}, not content")
                return path
        raise OutsideWorkspace(f"refused {uri}: outside the workspace ({', '.join(self.roots) or 'no root'})")

    def holds(self, uri: str) -> bool:
        """Is `uri` a file uri inside one of the roots? A uri the store kept that no root holds
        (an older store's absolute path, opened from another folder; another root's file, seen
        from a process opened without that root) is one this process cannot judge: it is left
        as it is, never found stale for it."""
        try:
            path = os.path.normpath(uri_to_path(uri))
        except (InvalidParams, OutsideWorkspace):
            return False
        return any(path == root or path.startswith(root.rstrip("/") + "/") for root in self.roots)

    def normalize(self, uri: str) -> str:
        """The canonical uri (file:///real/path) of a uri inside the workspace."""
        return path_to_uri(self.resolve(uri))

    def uri_for(self, path_or_uri: str) -> str:
        """The canonical uri of a path (relative to the first root, or absolute) or a file: uri."""
        if not isinstance(path_or_uri, str) or not path_or_uri:
            raise InvalidParams("a file path must be a non-empty string")
        if path_or_uri.startswith("file:"):
            return self.normalize(path_or_uri)
        root = self.roots[0] if self.roots else os.getcwd()
        path = path_or_uri if os.path.isabs(path_or_uri) else os.path.join(root, path_or_uri)
        return self.normalize(path_to_uri(os.path.abspath(path)))

    def rel(self, uri: str) -> str:
        """The path a person would type: relative to the root holding it, else absolute."""
        try:
            path = uri_to_path(uri)
        except (InvalidParams, OutsideWorkspace):
            return uri
        for root in self.roots:
            if path == root or path.startswith(root.rstrip("/") + "/"):
                return os.path.relpath(path, root)
        return path
