"""Workspace roots and uris: which paths Stet may touch at all.

Every path the review touches goes through `Workspace.resolve`, which refuses anything
outside the roots (symlinks resolved) and any uri that is not a local `file:` uri.
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

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
    from pathlib import Path  # here, not at the top: a glance at the store (`stet status`) needs none

    return Path(path).as_uri()


class Workspace:
    def __init__(self, roots: list[str]):
        self.roots = [os.path.realpath(r) for r in roots if r]

    def set_roots(self, roots: list[str]) -> None:
        self.roots = [os.path.realpath(r) for r in roots if r]

    def resolve(self, uri: str) -> str:
        """The real path behind `uri`, refused when outside every root."""
        real = os.path.realpath(uri_to_path(uri))
        for root in self.roots:
            if real == root or real.startswith(root.rstrip("/") + "/"):
                return real
        raise OutsideWorkspace(f"refused {uri}: outside the workspace ({', '.join(self.roots) or 'no root'})")

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
